"""Loading launch recipes from ``runners/**/*.yaml`` with ``file:line`` errors, and lookup by id.

Every YAML file under the runners directory is one recipe, except files below a directory named
``deploy-configs`` (those are vLLM-Omni deploy YAMLs that recipes point at). Ids are unique
across the whole tree.
"""

import difflib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.recipe import LaunchRecipe
from omniqual.domain.serve_flags import recipe_flag_problems
from omniqual.specs.deploy_configs import deploy_config_problems
from omniqual.specs.source import SpecError, SpecProblem, load_spec

RUNNERS_ENV = "OMNIQUAL_RUNNERS"
SKIPPED_DIRS = frozenset({"deploy-configs"})


@dataclass(frozen=True, slots=True)
class LoadedRecipe:
    recipe: LaunchRecipe
    path: Path
    line: int | None

    @property
    def directory(self) -> Path:
        return self.path.parent


class RecipeNotFound(KeyError):
    def __init__(self, recipe_id: str, known: tuple[str, ...]) -> None:
        self.recipe_id = recipe_id
        close = difflib.get_close_matches(recipe_id, known, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        self.message = f"no launch recipe {recipe_id!r}{hint}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class RecipeBook(Mapping[str, LoadedRecipe]):
    root: Path
    entries: tuple[LoadedRecipe, ...]

    def __getitem__(self, recipe_id: str) -> LoadedRecipe:
        for entry in self.entries:
            if entry.recipe.id == recipe_id:
                return entry
        raise RecipeNotFound(recipe_id, tuple(self))

    def __iter__(self) -> Iterator[str]:
        return (entry.recipe.id for entry in self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def find(self, recipe_id: str) -> LaunchRecipe:
        return self[recipe_id].recipe


def default_runners_dir() -> Path:
    """``$OMNIQUAL_RUNNERS``, else ``./runners``, else the checkout's ``runners/``."""
    configured = os.environ.get(RUNNERS_ENV)
    if configured:
        return Path(configured)
    here = Path.cwd() / "runners"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[2] / "runners"


def recipe_files(root: Path) -> list[Path]:
    found = [
        path
        for pattern in ("*.yaml", "*.yml")
        for path in root.rglob(pattern)
        if not SKIPPED_DIRS.intersection(path.relative_to(root).parts[:-1])
    ]
    return sorted(found)


def load_recipe(path: Path) -> LoadedRecipe:
    recipe, doc = load_spec(path, LaunchRecipe)
    # What the schema allows but the target release lacks, refuses or silently ignores.
    found = recipe_flag_problems(recipe) + deploy_config_problems(recipe, path.parent)
    problems = [doc.problem(where, message) for where, message in found]
    if problems:
        raise SpecError(problems)
    return LoadedRecipe(recipe, path, doc.line_of(("id",)))


def load_recipes(root: Path | None = None) -> RecipeBook:
    """Every recipe under ``root``; all problems of all files are raised together."""
    root = root if root is not None else default_runners_dir()
    if not root.is_dir():
        raise SpecError([SpecProblem(str(root), None, "", "runners directory not found")])
    problems: list[SpecProblem] = []
    entries: list[LoadedRecipe] = []
    seen: dict[str, LoadedRecipe] = {}
    for path in recipe_files(root):
        try:
            entry = load_recipe(path)
        except SpecError as exc:
            problems.extend(exc.problems)
            continue
        first = seen.get(entry.recipe.id)
        if first is not None:
            where = f"{first.path}:{first.line}" if first.line else str(first.path)
            problems.append(
                SpecProblem(str(path), entry.line, "id", f"duplicate recipe id (first at {where})")
            )
            continue
        seen[entry.recipe.id] = entry
        entries.append(entry)
    if problems:
        raise SpecError(problems)
    return RecipeBook(root, tuple(entries))


def find_recipe(recipe_id: str, root: Path | None = None) -> LoadedRecipe:
    return load_recipes(root)[recipe_id]
