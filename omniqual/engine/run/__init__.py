"""Run orchestration: a campaign from plan to recorded results.

Owns expanding a campaign into planned work (:mod:`.plan`, :mod:`.planned`, :mod:`.campaign_scope`),
checking its specs before any contact (:mod:`.preflight`), scheduling launch groups on a shared
host (:mod:`.scheduler`, :mod:`.host_share`, :mod:`.resources`), running and recording each gate
(:mod:`.campaign`, :mod:`.gate_runner`), and reporting where a run stands (:mod:`.events`,
:mod:`.run_progress`, :mod:`.eta`, :mod:`.timing`). Bringing targets up is
:mod:`omniqual.engine.targets`'s. Import the submodules directly; this package re-exports nothing.
"""
