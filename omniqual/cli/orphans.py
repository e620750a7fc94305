"""Before any command: reap the servers of runs whose omniqual was killed outright, and say so.

The library (:func:`omniqual.deploy.reaper.reap_orphans`) stops them and returns what it did;
this module only words it, on standard error so that ``--json`` output stays clean.
"""

import logging

from omniqual.cli.exits import err_console

log = logging.getLogger(__name__)


def reap_and_report() -> None:
    from omniqual.deploy.reaper import reap_orphans

    try:
        reaped = reap_orphans()
    except Exception:  # never let housekeeping stop the command the user asked for
        log.warning("could not check for orphaned servers", exc_info=True)
        return
    for item in reaped:
        owner = f"omniqual pid {item.owner_pid}" if item.owner_pid else "its omniqual"
        if item.was_running:
            err_console.print(
                f"stopped orphaned server {item.name} (pid {item.pid}, {item.url}): {owner},"
                " which launched it, is gone", markup=False, highlight=False,
            )  # fmt: skip
        else:
            err_console.print(
                f"removed the record of {item.name} (pid {item.pid}): {owner} is gone and its"
                " server had already stopped", markup=False, highlight=False,
            )  # fmt: skip
