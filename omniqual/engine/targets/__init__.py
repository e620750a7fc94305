"""Targets: the deployments a run qualifies and compares against.

Owns launching and taking down a recipe's target (:mod:`.targets`), identifying a deployment given
by URL and the server instance behind it (:mod:`.served_identity`, :mod:`.served_instance`), the
agents that read remote process trees (:mod:`.agents`), and parity references, served
(:mod:`.references`) or built once as a directory (:mod:`.reference_build`).
Import the submodules directly; this package re-exports nothing.
"""
