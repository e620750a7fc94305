"""Recording the abort gate's figures as an ``AbortCleanup`` (for the report; judges nothing)."""

from collections.abc import Mapping, Sequence

from omniqual.checks.abort.params import AbortParams
from omniqual.checks.abort.work import WorkBaseline
from omniqual.checks.soak.watch import ResourcePoint
from omniqual.domain.abort_cleanup import (
    AbortCleanup,
    CleanupBounds,
    CutWork,
    JobCleanup,
    ResourceFigures,
)


def _figures(point: ResourcePoint) -> ResourceFigures:
    return ResourceFigures(memory_bytes=point.memory_bytes, open_fds=point.open_fds,
                           temp_files=point.temp_files,
                           gpu_tree_bytes=point.gpu_tree_bytes)  # fmt: skip


def _cut(entry: Mapping[str, object]) -> CutWork:
    """One ``work_log`` entry (``AbortDriver.judge_work``): its window is ``seconds``."""
    return CutWork.model_validate({**entry, "window_s": entry.get("seconds")})


def abort_cleanup(
    *, boundary: str, signals: Sequence[str], base: WorkBaseline | None,
    work_log: Sequence[Mapping[str, object]], source: str, baseline: ResourcePoint,
    job_log: Sequence[Mapping[str, object]] = (),
    after: ResourcePoint, settle_s: float, params: AbortParams,
) -> AbortCleanup:  # fmt: skip
    return AbortCleanup(
        boundary=boundary, signals=list(signals),
        solo_s=None if base is None else base.solo_s,
        idle_cpu_rate=None if base is None else base.idle_cpu_rate,
        busy_cpu_rate=None if base is None else base.busy_cpu_rate,
        cuts=[_cut(entry) for entry in work_log],
        jobs=[JobCleanup.model_validate(entry) for entry in job_log], resource_source=source,
        baseline=_figures(baseline), after=_figures(after), settle_s=settle_s,
        settle_max_s=params.settle_max_s,
        bounds=CleanupBounds(memory_growth_mib=params.max_memory_growth_mib,
                             fd_growth=params.max_fd_growth,
                             temp_file_growth=params.max_temp_file_growth,
                             gpu_memory_growth_mib=params.max_gpu_memory_growth_mib),
    )  # fmt: skip
