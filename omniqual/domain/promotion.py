"""The order the production skill promotes matrix rows in. A candidate counts only beside its
parent's correctness (:mod:`omniqual.compile.parents`); some rows ask more of the row they
descend from, and some features may enter a chain of parents only at one place:

* online FP8 enters as ``fp8-online-dit`` on a baseline row (on a resident baseline: the
  resident DiT-only row); an FP8 combination or FP8 of more components descends from that row
  and counts only once every gate it requires has passed (G3-04);
* a step/N row (N > 1) counts only once its step/1 parent passed every gate it requires and the
  step-boundary abort (G7-02; the step/1 parent itself is the posture table's,
  :mod:`omniqual.domain.postures`);
* an attention backend other than dense SDPA enters as a candidate of an SDPA row, so its
  parity is against dense SDPA, and is keyed by the shape it was measured at (G2-07, G2-09);
* no value of a row key is a wildcard (G2-09).

Pure: the loader (:mod:`omniqual.specs.promotion`) places each problem in the file, compile
asks :func:`parent_must_pass`.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Values = Mapping[str, str]

FP8_PREFIX = "fp8-online"
FP8_ENTRY = "fp8-online-dit"
"""Online FP8 of the DiT alone: the lane FP8 is validated on first."""
DENSE_ATTENTION = "sdpa"
PLATFORM_ATTENTION = "platform-default"
"""The backend ``vllm serve --omni`` picks without a flag: what a baseline row serves, never a
candidate backend of its own."""
DEFAULT_SHAPE = "default"
STEP_ABORT_GATE = "abort"
WILDCARDS = ("*", "?")
_STEP = re.compile(r"^step/(\d+)")


@dataclass(frozen=True, slots=True)
class ParentDemand:
    """What a row's parent must show beyond its correctness before the row counts."""

    why: str
    gates: tuple[str, ...]


def _step(values: Values) -> int | None:
    found = _STEP.match(values.get("execution", ""))
    return int(found.group(1)) if found else None


def _fp8(values: Values) -> bool:
    return values.get("quantization", "").startswith(FP8_PREFIX)


def parent_must_pass(
    values: Values, parent: Values, parent_requires: Sequence[str]
) -> ParentDemand | None:
    """The gates ``parent`` must have passed before the row of ``values`` counts, or None when
    its correctness is enough."""
    if (_step(values) or 0) > 1 and _step(parent) == 1:
        gates = (*parent_requires, *(() if STEP_ABORT_GATE in parent_requires
                                     else (STEP_ABORT_GATE,)))  # fmt: skip
        return ParentDemand("a step/N row counts only once its step/1 row is validated, with "
                            "its step-boundary abort (SKILL G7-02)", tuple(gates))  # fmt: skip
    if _fp8(values) and _fp8(parent):
        return ParentDemand("an FP8 combination counts only once the FP8 row it descends from "
                            "is validated (SKILL G3-04)", tuple(parent_requires))  # fmt: skip
    return None


def introduces(axis: str, prefix: str, values: Values, parent: Values | None) -> bool:
    """Whether the row brings a value of ``axis`` starting with ``prefix`` into its chain."""
    if not values.get(axis, "").startswith(prefix):
        return False
    return parent is None or not parent.get(axis, "").startswith(prefix)


def entry_problems(
    values: Values, parent: Values | None, parent_is_baseline: bool
) -> list[tuple[str, str]]:
    """(field, message) for every place the row of ``values`` brings a feature into its chain
    where the skill does not let it enter. ``field`` is ``key.<axis>``, ``key`` or
    ``parent_row``."""
    found = [(f"key.{axis}", f"{value!r} is a wildcard: a row is one exact combination "
              "(SKILL G2-09)")
             for axis, value in values.items() if any(w in value for w in WILDCARDS)]  # fmt: skip
    if introduces("quantization", FP8_PREFIX, values, parent):
        if values["quantization"] != FP8_ENTRY:
            found.append(("parent_row" if parent else "key.quantization", f"online FP8 enters "
                          f"a chain of rows as {FP8_ENTRY} (the DiT alone), not "
                          f"{values['quantization']}: make the {FP8_ENTRY} row this one's "
                          "parent (SKILL G3-04)"))  # fmt: skip
        if parent is not None and not parent_is_baseline:
            found.append(("parent_row", "online FP8 enters a chain of rows on its baseline "
                          "row (the resident DiT-only FP8 row), before any FP8 combination: "
                          "this row adds FP8 to a candidate; make the baseline's FP8 row its "
                          "parent (SKILL G3-04)"))  # fmt: skip
    found += _attention(values, parent)
    return found


def _attention(values: Values, parent: Values | None) -> list[tuple[str, str]]:
    backend = values.get("attention_backend")
    if backend is None or backend in (DENSE_ATTENTION, PLATFORM_ATTENTION):
        return []
    found: list[tuple[str, str]] = []
    if values.get("shape_schedule") == DEFAULT_SHAPE:
        found.append(("key.shape_schedule", f"attention backend {backend!r} is keyed by the "
                      f"shape it was measured at, not the {DEFAULT_SHAPE!r} bucket: a backend "
                      "faster at one shape is no default for others (SKILL G2-09)"))  # fmt: skip
    if parent is None:
        found.append(("key", f"attention backend {backend!r} as a baseline has no dense "
                      f"reference: make it a candidate of the {DENSE_ATTENTION} row "
                      "(SKILL G2-07)"))  # fmt: skip
    elif parent.get("attention_backend") not in (backend, DENSE_ATTENTION):
        found.append(("parent_row", f"attention backend {backend!r} is compared with dense "
                      f"{DENSE_ATTENTION}, not {parent.get('attention_backend')!r} "
                      "(SKILL G2-07)"))  # fmt: skip
    return found
