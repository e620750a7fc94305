"""Where a project's spec directories are: the nearest ancestor holding ``matrices/axes.yaml``."""

from dataclasses import dataclass
from pathlib import Path

from omniqual.specs.source import SpecError, SpecProblem


@dataclass(frozen=True, slots=True)
class ProjectPaths:
    root: Path

    @property
    def matrices(self) -> Path:
        return self.root / "matrices"

    @property
    def gates(self) -> Path:
        return self.root / "gates"

    @property
    def runners(self) -> Path:
        return self.root / "runners"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def axes_file(self) -> Path:
        return self.matrices / "axes.yaml"


def find_project(start: Path | None = None) -> ProjectPaths:
    """Search upward from ``start`` (default: cwd), then the checkout omniqual runs from."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents, Path(__file__).resolve().parents[2]):
        if (candidate / "matrices" / "axes.yaml").is_file():
            return ProjectPaths(candidate)
    raise SpecError(
        [SpecProblem(str(here), None, "", "no matrices/axes.yaml here or above; pass --root")]
    )
