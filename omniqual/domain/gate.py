"""Gate specs: a configured instance of a check kind (``gates/*.yaml``), and its CI track.

A gate's ``track`` is one of the four independent readiness tracks of the production-validation
guide (function, accuracy, performance, reliability), so a failure answers one question. The
tracks are not vLLM-Omni's numbered CI levels; :data:`TRACK_CI_LEVELS` places each track on them:

* function: L1 unit/logic and L2 basic online/offline E2E (real-model scenarios in L3/L4);
* accuracy: L3 real-model gates for the important cases, deeper nightly coverage in L4;
* performance: important thresholds in L3 where they fit its time budget, baselines in L4;
* reliability: long stability, fault injection and reliability suites in weekly L5.
"""

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class Track(StrEnum):
    """The readiness track a gate belongs to."""

    FUNCTION = "function"
    ACCURACY = "accuracy"
    PERFORMANCE = "performance"
    RELIABILITY = "reliability"


class CiLevel(StrEnum):
    """vLLM-Omni's numbered CI levels."""

    L1 = "L1"
    """Unit and logic tests."""
    L2 = "L2"
    """Basic online/offline end-to-end tests."""
    L3 = "L3"
    """Real-model gates for important cases (pre-merge time budget)."""
    L4 = "L4"
    """Nightly: deeper and broader real-model, accuracy and performance coverage."""
    L5 = "L5"
    """Weekly: long stability, fault injection and reliability suites."""


TRACK_CI_LEVELS: dict[Track, tuple[CiLevel, ...]] = {
    Track.FUNCTION: (CiLevel.L1, CiLevel.L2, CiLevel.L3, CiLevel.L4),
    Track.ACCURACY: (CiLevel.L3, CiLevel.L4),
    Track.PERFORMANCE: (CiLevel.L3, CiLevel.L4),
    Track.RELIABILITY: (CiLevel.L5,),
}
"""Where each track runs in vLLM-Omni's CI, earliest level first (the guide's placement:
cheap rejection and recovery assertions of the reliability track may run earlier, but its
suites belong to L5)."""


class GateSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="Kebab-case gate id.")
    kind: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="The check kind that runs it.")
    version: int = Field(
        ge=1,
        description="Bump when the gate's meaning changes; old is stale. Edits to this file or "
        "to the contracts and load mappings its params name make old results stale anyway.",
    )
    track: Track | None = Field(
        default=None,
        description="The readiness track (function, accuracy, performance, reliability); it "
        "decides which CI level runs the gate (TRACK_CI_LEVELS). Unset: in no track, so "
        "`omniqual ci plan --tracks` never selects it.",
    )
    title: str = ""
    description: str = ""
    applies_to: str = Field(default="", description="Row selector; empty = every row.")
    budget_s: float | None = Field(
        default=None,
        gt=0,
        description="Wall-clock budget of one run on one row: a check that calibrates its "
        "workload stops early when it cannot fit, and a run past it stops; either is `invalid: "
        "host too slow for this workload`. Unset: no budget.",
    )
    params: dict[str, JsonValue] = Field(default_factory=dict)
    decides_rows: bool = Field(
        default=True,
        description="False: a comparison run on request (`omniqual gate run`) on any row its "
        "applies_to matches. Its results are recorded and reported, but no matrix row may list "
        "it and none of its results decides a row's state.",
    )

    @property
    def ci_levels(self) -> tuple[CiLevel, ...]:
        """The vLLM-Omni CI levels this gate's track runs in (none without a track)."""
        return TRACK_CI_LEVELS[self.track] if self.track is not None else ()
