"""Whether a hook call fires, and the fault it does (standard library only).

At each hook call the armed fault is read from the control file (parsed again only when the
file's mtime, size or inode changed: the harness replaces it atomically). A fault fires when it
is armed for the hook's stage (and, in denoise, step), the call serves the request it targets
(``request_seed``, where the hook knows its requests: see ``frames``), and fewer than ``times``
firings of its arm id happened across the whole process tree: each firing claims an ``O_EXCL``
marker file next to the record file, so two processes never fire the same one. Every event is
one JSON line appended to the record file with a single ``write`` (shapes:
:mod:`omniqual.domain.fault_injection`), naming the writer's pid namespace, without which its
pid means nothing to a reader elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from omniqual.deploy.fault_injector.frames import Request

SCHEMA_VERSION = 1
CONTROL_ENV = "OMNIQUAL_FAULT_CONTROL"
RECORD_ENV = "OMNIQUAL_FAULT_RECORD"
STAGES = ("encode", "encoded", "denoise", "decode", "output", "result")
MODES = ("raise", "oom", "hang", "exit", "late", "hold")
_SAFE_ID = re.compile(r"[^A-Za-z0-9._-]")


class InjectedFault(RuntimeError):
    """The exception a RAISE or LATE fault raises (a plain RuntimeError to the server)."""


@dataclass(frozen=True, slots=True)
class Arm:
    arm_id: str
    case_id: str
    stage: str
    mode: str
    step: int | None = None
    hang_s: float = 0.0
    times: int = 1
    request_seed: int | None = None


def parse_arm(text: str) -> Arm | None:
    """The armed fault in a control file's text; None when disarmed or unreadable."""
    try:
        doc = json.loads(text) if text.strip() else None
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
        return None
    stage, mode, arm_id = doc.get("stage"), doc.get("mode"), doc.get("arm_id")
    if stage not in STAGES or mode not in MODES or not isinstance(arm_id, str) or not arm_id:
        return None
    step, seed = doc.get("step"), doc.get("request_seed")
    return Arm(arm_id=arm_id, case_id=str(doc.get("case_id", "")), stage=stage, mode=mode,
               step=step if isinstance(step, int) else None,
               hang_s=float(doc.get("hang_s") or 0.0), times=max(1, int(doc.get("times") or 1)),
               request_seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None)


def pid_namespace() -> str:
    """This process's pid namespace (``pid:[4026531836]``); "" where /proc cannot tell."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def target_in(arm: Arm, stage: str, requests: Sequence[Request] | None) -> str | None:
    """The id of the request a hook call fires ``arm`` in ("" where unknown); None: not here.

    An arm aimed at a request fires only in a call that serves it. A call whose requests cannot
    be told fires it outside denoise (the API server's output encoding serves one HTTP request
    and names none), never in denoise: there a step tied to no request may be any request's."""
    if arm.request_seed is None:
        return requests[0].request_id if requests is not None and len(requests) == 1 else ""
    if requests is None:
        return None if stage == "denoise" else ""
    return next((r.request_id for r in requests if r.seed == arm.request_seed), None)


class ControlReader:
    """The control file's arm, parsed again only when the file changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._key: tuple[int, int, int] | None = None
        self._arm: Arm | None = None
        self.parses = 0

    def current(self) -> Arm | None:
        try:
            st = os.stat(self.path)
        except OSError:
            self._key, self._arm = None, None
            return None
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        if key != self._key:
            try:
                text = self.path.read_text(encoding="utf-8")
            except OSError:
                return None
            self._key, self._arm = key, parse_arm(text)
            self.parses += 1
        return self._arm


class Injector:
    """Decides and does faults for one process. ``sleep``/``exit``/``clock`` are injectable so
    the decision logic is tested without a server (and without waiting)."""

    def __init__(self, control: Path, record: Path, *, sleep: Callable[[float], None] = time.sleep,
                 exit: Callable[[int], None] = os._exit,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        self.reader = ControlReader(control)
        self.record_path = record
        self._sleep, self._exit, self._clock = sleep, exit, clock

    def marker(self, arm: Arm, index: int) -> Path:
        name = f"{self.record_path.name}.fired.{_SAFE_ID.sub('_', arm.arm_id)}.{index}"
        return self.record_path.with_name(name)

    def claim(self, arm: Arm) -> bool:
        """Take one of the arm's ``times`` firings; False when all are taken (by any process)."""
        for index in range(arm.times):
            try:
                fd = os.open(self.marker(arm, index), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                continue
            except OSError:
                return False
            os.close(fd)
            return True
        return False

    def write(self, event: str, where: str, arm: Arm | None = None, step: int | None = None,
              request_id: str = "") -> None:  # fmt: skip
        line: dict[str, object] = {"schema_version": SCHEMA_VERSION, "event": event,
                                   "pid": os.getpid(), "pid_ns": pid_namespace(),
                                   "at_unix": self._clock(), "where": where}  # fmt: skip
        if arm is not None:
            line.update(arm_id=arm.arm_id, case_id=arm.case_id, stage=arm.stage, mode=arm.mode,
                        step=step, request_id=request_id)  # fmt: skip
        data = (json.dumps(line, separators=(",", ":")) + "\n").encode()
        try:
            fd = os.open(self.record_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError:
            return
        try:
            os.write(fd, data)  # one write per line: lines of several processes never interleave
        finally:
            os.close(fd)

    def loaded(self) -> None:
        self.write("loaded", " ".join(sys.argv[:2])[:120] or "python")

    def at(self, stage: str, where: str, step: int | None = None,
           requests: Sequence[Request] | None = None) -> None:  # fmt: skip
        """A hook call serving ``requests`` (None: unknown): fire the armed fault here, or
        return having done nothing."""
        arm = self.reader.current()
        if arm is None or arm.stage != stage:
            return
        if stage == "denoise" and arm.step is not None and step != arm.step:
            return
        request_id = target_in(arm, stage, requests)
        if request_id is None or not self.claim(arm):
            return
        self.write("fired", where, arm, step, request_id)
        self.act(arm, where, step, request_id)

    def act(self, arm: Arm, where: str, step: int | None, request_id: str = "") -> None:
        label = f"omniqual injected fault: {arm.case_id or arm.arm_id}"
        if arm.mode == "raise":
            raise InjectedFault(label)
        if arm.mode == "oom":
            raise oom_error()(f"{label} (simulated out of memory)")
        if arm.mode == "exit":
            self._exit(1)
            return
        self._sleep(arm.hang_s)
        self.write("hang-ended", where, arm, step, request_id)
        if arm.mode == "late":
            raise InjectedFault(f"{label} (late, after {arm.hang_s:g} s)")


def oom_error() -> type[BaseException]:
    """torch's out-of-memory error when torch is loaded (never imported here), else MemoryError."""
    torch = sys.modules.get("torch")
    found = getattr(torch, "OutOfMemoryError", None) if torch is not None else None
    if found is None and torch is not None:
        found = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else MemoryError
