"""A count of what makes the live suite slow: every vLLM start-up and every checkpoint build.

Start-ups are seen where they happen, whoever starts them (the launcher, the engine, the
tests, the shared pool): a ``subprocess.Popen`` of ``vllm serve ... --omni``,
caught by an audit hook, so a start-up nobody thought to count is counted anyway. Builds are the
catalog's own ``built checkpoint`` log line (a reused checkpoint logs nothing). Each event is
one JSON line (kind, what, test) in a file per session under the checkpoint cache's parent
(``.omniqual/cache/live-census/`` in CI), and the session ends with a one-line summary.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CATALOG_LOGGER = "omniqual.deploy.embedded.catalog"
BUILT = "built checkpoint %s at %s"


def vllm_serve_label(argv: Sequence[str]) -> str | None:
    """``<checkpoint dir name> <flags>`` for a ``vllm serve <model> --omni`` argv, else None."""
    if len(argv) < 3 or Path(str(argv[0])).name != "vllm" or str(argv[1]) != "serve":
        return None
    if "--omni" not in argv:
        return None
    skip = {"--host", "--port"}
    flags: list[str] = []
    rest = [str(a) for a in argv[3:]]
    index = 0
    while index < len(rest):
        if rest[index] in skip:
            index += 2
            continue
        if rest[index] != "--omni":
            flags.append(rest[index])
        index += 1
    return " ".join([Path(str(argv[2])).name, *flags])


@dataclass
class LiveCensus:
    """The events of one pytest session, appended to ``path`` as they happen."""

    path: Path
    events: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def record(self, kind: str, what: str) -> None:
        event = {"kind": kind, "what": what, "test": _CURRENT_TEST[0], "by": _ORIGIN[0],
                 "t": round(time.monotonic() - self.started, 1)}  # fmt: skip
        self.events.append(event)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(event) + "\n")
        except OSError:
            pass  # a census that cannot write must never fail a test

    def summary(self) -> str:
        kinds = Counter(e["kind"] for e in self.events)
        shared = sum(1 for e in self.events if e["kind"] == "startup" and e["by"] == SHARED)
        return (f"live census: {kinds['startup']} vLLM start-up(s) ({shared} by the shared pool), "
                f"{kinds['build']} checkpoint build(s); events in {self.path}")  # fmt: skip

    def install(self) -> LiveCensus | None:
        """Count from now on, in this process, instead of the census it returns (if any)."""
        replaced = _ACTIVE
        restore(self)
        if not _HOOKED:
            _hook_once()
        return replaced


_ACTIVE: LiveCensus | None = None
_HOOKED = False
_CURRENT_TEST = [""]
_ORIGIN = ["test"]
SHARED = "shared pool"


@contextmanager
def charged_to(origin: str) -> Iterator[None]:
    """Events inside the block are marked as ``origin``'s (the shared pool's start-ups)."""
    before = _ORIGIN[0]
    _ORIGIN[0] = origin
    try:
        yield
    finally:
        _ORIGIN[0] = before


def set_current_test(nodeid: str) -> None:
    """The test whose set-up, call or teardown runs now (events are charged to it)."""
    _CURRENT_TEST[0] = nodeid


def active() -> LiveCensus | None:
    return _ACTIVE


def restore(census: LiveCensus | None) -> None:
    """Make ``census`` the one that counts (None: nothing counts)."""
    global _ACTIVE
    _ACTIVE = census


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "subprocess.Popen" or _ACTIVE is None:
        return
    try:  # an audit hook that raises would fail the Popen it watches: never let it
        argv = args[1]
        if isinstance(argv, (list, tuple)):
            label = vllm_serve_label([_text(a) for a in argv])
            if label is not None:
                _ACTIVE.record("startup", label)
    except Exception:  # the census is best effort
        return


def _text(arg: object) -> str:
    if isinstance(arg, (bytes, os.PathLike)):
        return os.fsdecode(arg)
    return str(arg)


class _BuildHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        if _ACTIVE is not None and record.msg == BUILT and isinstance(record.args, tuple):
            _ACTIVE.record("build", str(record.args[0]))


def _hook_once() -> None:
    global _HOOKED
    _HOOKED = True
    sys.addaudithook(_audit)
    catalog = logging.getLogger(CATALOG_LOGGER)
    handler = _BuildHandler(logging.INFO)
    catalog.addHandler(handler)
    if catalog.getEffectiveLevel() > logging.INFO:
        catalog.setLevel(logging.INFO)
