"""The fault injector that runs inside a served process tree (the ``fault-injection`` gate).

Standard library only: it is imported into every Python process of a vLLM-Omni server by the
``boot/sitecustomize.py`` bootstrap, and only when both ``OMNIQUAL_FAULT_CONTROL`` and
``OMNIQUAL_FAULT_RECORD`` are set; without them nothing here is imported and nothing is patched.
``core`` decides whether a hook call fires (control file, firing count across processes, record
lines) and does the fault; ``hooks`` patches the vLLM-Omni functions where the stages run, lazily,
as their modules are imported. The harness's view of the same shapes is
:mod:`omniqual.domain.fault_injection`.
"""
