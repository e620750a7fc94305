"""Which CI step runs which gates: the matrix's work grouped by launch recipe and hardware queue.

Each step runs ``omniqual gate run GATE --target RECIPE`` once per gate of the chosen tracks, on
the agents of one queue, into its own evidence directory; a final step merges the evidence and
renders the report. The queue comes from the rows' ``hardware`` axis (the recipe declares it,
so one recipe's rows share it): a CPU host (``cpu-…``) runs on the ``cpu`` queue, any other
hardware on a queue named after it, unless ``queues`` maps it elsewhere. Everything is sorted,
so the same matrix gives the same pipeline byte for byte.
"""

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.axes import Selector
from omniqual.domain.gate import TRACK_CI_LEVELS, CiLevel, Track
from omniqual.engine.matrix_service import load_project_matrix
from omniqual.engine.run.plan import make_plan
from omniqual.specs.recipes import load_recipes

WORK_DIR = "omniqual-ci"
"""Where steps write (not a dot-directory: CI artifact uploads skip hidden paths)."""
STEPS_DIR = f"{WORK_DIR}/steps"
MERGED_DIR = f"{WORK_DIR}/merged"
REPORT_DIR = f"{WORK_DIR}/report"
CPU_QUEUE = "cpu"
HARDWARE_AXIS = "hardware"
_TRACK_ORDER = {track: index for index, track in enumerate(Track)}
_UNSAFE = re.compile(r"[^a-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class GateRun:
    gate_id: str
    track: Track | None
    rows: tuple[str, ...]
    argv: tuple[str, ...]

    @property
    def command(self) -> str:
        return shlex.join(self.argv)


@dataclass(frozen=True, slots=True)
class CiStep:
    key: str
    """Valid as a Buildkite step key and a GitHub Actions job id."""
    recipe_id: str
    queue: str
    hardware: tuple[str, ...]
    runs: tuple[GateRun, ...]

    @property
    def evidence_dir(self) -> str:
        return f"{STEPS_DIR}/{self.key}"

    @property
    def label(self) -> str:
        tracks = sorted({r.track for r in self.runs if r.track}, key=_TRACK_ORDER.__getitem__)
        what = ", ".join(t.value for t in tracks) or "gates"
        return f"omniqual {self.recipe_id} on {self.queue} ({what})"


@dataclass(frozen=True, slots=True)
class CiPlan:
    matrix: str
    """The matrix path as the pipeline names it (relative to the project root)."""
    steps: tuple[CiStep, ...]
    tracks: tuple[Track, ...]
    """The tracks chosen; empty: every gate, tracked or not."""
    row_selector: str
    unplanned_rows: tuple[str, ...]
    """Rows the selection picked that have gates to run but no recipe: they stay `not tested`."""

    @property
    def command(self) -> str:
        """The ``omniqual ci plan`` options that choose this work (for the pipeline's header)."""
        argv = ["omniqual", "ci", "plan", self.matrix]
        if self.tracks:
            argv += ["--tracks", ",".join(t.value for t in self.tracks)]
        if self.row_selector:
            argv += ["--row", self.row_selector]
        return shlex.join(argv)

    @property
    def report_commands(self) -> tuple[str, ...]:
        """Merge every step's evidence, check it, render the report."""
        merged, matrix = MERGED_DIR, self.matrix
        return (
            shlex.join(["omniqual", "evidence", "merge", STEPS_DIR, "-o", merged]),
            shlex.join(["omniqual", "evidence", "verify", merged]),
            *(
                shlex.join(["omniqual", "report", matrix, "--evidence", merged,
                            "--format", fmt, "-o", f"{REPORT_DIR}/report.{fmt}"])
                for fmt in ("md", "html")
            ),
        )  # fmt: skip


def parse_tracks(values: Sequence[str]) -> tuple[Track, ...]:
    """``["function,accuracy", "reliability"]`` -> those tracks in track order; none = all."""
    names = [n.strip() for value in values for n in value.split(",") if n.strip()]
    known = {t.value: t for t in Track}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(
            f"unknown track(s) {', '.join(map(repr, unknown))}: use {', '.join(known)}"
        )
    chosen = {known[n] for n in names} or set(Track)
    return tuple(sorted(chosen, key=_TRACK_ORDER.__getitem__))


def tracks_at_level(level: str, tracks: Sequence[Track] = ()) -> tuple[Track, ...]:
    """The tracks (of ``tracks``, default all) that vLLM-Omni's CI runs at ``level`` (L1-L5)."""
    known = {lv.value: lv for lv in CiLevel}
    if level.upper() not in known:
        raise ValueError(f"unknown CI level {level!r}: use {', '.join(known)}")
    at = [t for t in (tracks or Track) if known[level.upper()] in TRACK_CI_LEVELS[t]]
    if not at:
        names = ", ".join(t.value for t in tracks)
        raise ValueError(f"no track of {names} runs at CI level {level.upper()}")
    return tuple(at)


def parse_queues(values: Sequence[str]) -> dict[str, str]:
    """``["1x-h200-141gb=h200"]`` -> ``{"1x-h200-141gb": "h200"}``."""
    queues: dict[str, str] = {}
    for value in values:
        hardware, sep, queue = value.partition("=")
        if not sep or not hardware.strip() or not queue.strip():
            raise ValueError(f"--queue {value!r} is not HARDWARE=QUEUE")
        queues[hardware.strip()] = queue.strip()
    return queues


def queue_for(hardware: str, queues: Mapping[str, str]) -> str:
    if hardware in queues:
        return queues[hardware]
    return CPU_QUEUE if hardware.startswith("cpu-") or hardware == "cpu" else hardware


def plan_ci(
    matrix: Path,
    *,
    tracks: Sequence[Track] = (),
    row_selector: str = "",
    queues: Mapping[str, str] | None = None,
) -> CiPlan:
    """The CI steps for the rows ``row_selector`` picks and the gates of ``tracks`` (every
    gate, tracked or not, when empty)."""
    loaded = load_project_matrix(matrix)
    selector = Selector.parse(row_selector)
    for axis in selector.axes():
        if loaded.matrix.catalog.axis(axis) is None:
            raise ValueError(f"unknown axis {axis!r} in --row")
    chosen = sorted(
        g for g, gate in loaded.gates.items() if not tracks or gate.spec.track in tracks
    )
    if not chosen:  # make_plan reads an empty gate list as "every gate"
        names = ", ".join(t.value for t in tracks)
        raise ValueError(f"no gate of {loaded.project.gates} is in track(s) {names}")
    plan = make_plan(loaded, load_recipes(loaded.project.runners), selector, chosen)
    root = loaded.project.root.resolve()
    where = matrix.resolve()
    matrix_arg = where.relative_to(root).as_posix() if where.is_relative_to(root) else str(matrix)
    groups: dict[tuple[str, str], dict[str, list[str]]] = {}
    hardware_of: dict[tuple[str, str], set[str]] = {}
    for work in plan.work:  # a recipe declares its hardware, so its rows share one queue
        for item in work.items:
            hardware = item.row.get(HARDWARE_AXIS) or "unknown"
            group = (work.recipe_id, queue_for(hardware, queues or {}))
            groups.setdefault(group, {}).setdefault(item.gate.spec.id, []).append(str(item.row))
            hardware_of.setdefault(group, set()).add(hardware)
    steps: list[CiStep] = []
    taken: set[str] = set()
    for (recipe_id, queue), by_gate in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        key = _unique(_key(f"gates-{recipe_id}-on-{queue}"), taken)
        served = tuple(sorted(hardware_of[(recipe_id, queue)]))
        runs = tuple(
            _gate_run(loaded.gates[g].spec.track, g, tuple(by_gate[g]), recipe_id, row_selector,
                      matrix_arg, key)
            for g in sorted(by_gate, key=lambda g: (_order(loaded.gates[g].spec.track), g))
        )  # fmt: skip
        steps.append(CiStep(key, recipe_id, queue, served, runs))
    return CiPlan(matrix_arg, tuple(steps), tuple(tracks), row_selector, plan.unplanned_rows)


def _order(track: Track | None) -> int:
    return _TRACK_ORDER[track] if track is not None else len(_TRACK_ORDER)


def _gate_run(
    track: Track | None,
    gate_id: str,
    rows: tuple[str, ...],
    recipe_id: str,
    row_selector: str,
    matrix: str,
    key: str,
) -> GateRun:
    step_dir = f"{STEPS_DIR}/{key}"
    argv = ["omniqual", "gate", "run", gate_id, "--target", recipe_id, "--matrix", matrix,
            "--evidence", f"{step_dir}/runs",
            "--junit", f"{step_dir}/junit/{gate_id}.xml"]  # fmt: skip
    if row_selector:
        argv += ["--row", row_selector]
    return GateRun(gate_id, track, tuple(sorted(rows)), tuple(argv))


def _key(text: str) -> str:
    return _UNSAFE.sub("-", text.lower()).strip("-")[:100]


def _unique(key: str, taken: set[str]) -> str:
    candidate, n = key, 2
    while candidate in taken:
        candidate, n = f"{key}-{n}", n + 1
    taken.add(candidate)
    return candidate
