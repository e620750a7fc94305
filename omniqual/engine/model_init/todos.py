"""The TODOs left in a matrix and in the files it leans on: the contract of each of its models
and the recipe each of its rows names. ``matrix validate`` reports them all at once, before any
of the three is loaded, so a half-filled draft gives one list, not one file at a time."""

from collections.abc import Iterator
from pathlib import Path

import yaml

from omniqual.specs.project import find_project
from omniqual.specs.recipes import recipe_files
from omniqual.specs.source import (
    TODO_MARK,
    SpecError,
    SpecProblem,
    YamlDocument,
    load_yaml,
    todo_problems,
)


def draft_todos(matrix_path: Path) -> list[SpecProblem]:
    """Every ``TODO`` value in ``matrix_path``, its models' contracts and its rows' recipes (files
    that do not parse are left to their loaders, which say why)."""
    matrix = _parsed(matrix_path)
    if matrix is None or not isinstance(matrix.data, dict):
        return []
    found = todo_problems(matrix)
    try:
        project = find_project(matrix_path.resolve().parent)
    except SpecError:
        return found
    models, recipes = _named(matrix.data)
    for model in sorted(models):
        contract = _parsed(project.gates / "contracts" / f"{model}.yaml")
        if contract is not None:
            found += todo_problems(contract)
    if recipes and project.runners.is_dir():
        for doc in _recipe_docs(project.runners):
            if isinstance(doc.data, dict) and doc.data.get("id") in recipes:
                found += todo_problems(doc)
    return found


def _parsed(path: Path) -> YamlDocument | None:
    if not path.is_file():
        return None
    here = Path.cwd().resolve()
    if path.resolve().is_relative_to(here):  # shown as the matrix is: relative to where one stands
        path = path.resolve().relative_to(here)
    try:
        return load_yaml(path)
    except SpecError:
        return None


def _named(data: dict[object, object]) -> tuple[set[str], set[str]]:
    """The model values and recipe ids a raw (not yet valid) matrix mentions."""
    defaults = data.get("defaults")
    default_model = defaults.get("model") if isinstance(defaults, dict) else None
    models: set[str] = set()
    recipes: set[str] = set()
    for group in ("rows", "products"):
        entries = data.get(group)
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, dict):
                continue
            for place in ("key", "base"):
                named = entry.get(place)
                if isinstance(named, dict) and isinstance(named.get("model"), str):
                    models.add(named["model"])
            axes = entry.get("axes")
            if isinstance(axes, dict) and isinstance(axes.get("model"), list):
                models.update(m for m in axes["model"] if isinstance(m, str))
            if isinstance(entry.get("recipe"), str):
                recipes.add(entry["recipe"])
    if isinstance(default_model, str):
        models.add(default_model)
    return models, recipes


def _recipe_docs(root: Path) -> Iterator[YamlDocument]:
    for path in recipe_files(root):
        doc = _parsed(path)
        if doc is not None:
            yield doc


def count_todos(text: str) -> int:
    """How many values of one YAML text are still TODO."""

    def walk(node: object) -> int:
        if isinstance(node, str):
            return int(node.lstrip().startswith(TODO_MARK))
        if isinstance(node, dict):
            return sum(walk(v) for v in node.values())
        if isinstance(node, list):
            return sum(walk(v) for v in node)
        return 0

    return walk(yaml.safe_load(text))
