"""Running gate × row items: one launch per recipe, as a campaign does.

The first item of a launch-recipe target to be set up runs every item of that target still
pending in the session in one journalled run (:func:`omniqual.engine.single_gate.run_gate_batch`),
so the recipe is launched once, not once per item; the other items then only report their
recorded result. A URL target is never launched, so its items run one by one (each its own run,
as ``gate run``). Under pytest-xdist a worker runs only its share, so batching is off there.
"""

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import pytest

from omniqual.domain.axes import RowKey
from omniqual.domain.result import GateResult
from omniqual.evidence.errors import StoreError
from omniqual.specs.recipes import RecipeNotFound
from omniqual.specs.source import SpecError

Pair = tuple[str, str]
"""(gate id, exact row selector)."""


class Pending(Protocol):
    """What batching needs of an item (``items.GateItem``)."""

    gate_id: str
    row: RowKey
    target: str
    path: Path
    """The matrix file the item was collected from."""
    result: GateResult | None
    problem: str | None
    config: pytest.Config


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


def exact(row: RowKey) -> str:
    """A selector matching exactly ``row`` (every axis named)."""
    return ",".join(f"{axis}={value}" for axis, value in row.items)


def run_items(first: Pending, pending: Sequence[Pending]) -> None:
    """Give ``first`` (and, for a recipe target, every other item of ``pending`` on the same
    target) its ``result``, or its ``problem`` when the run could not be made."""
    config = first.config
    together = not is_url(first.target) and not hasattr(config, "workerinput")
    batch = [first]
    if together:
        batch += [i for i in pending if i is not first and i.target == first.target
                  and i.result is None and i.problem is None]  # fmt: skip
    evidence = Path(str(config.getoption("omniqual_evidence")))
    command = ("pytest", *config.invocation_params.args)
    try:
        results, refused = asyncio.run(_run(batch, together, first.path, evidence, command))
    except _caught() as exc:
        for item in batch:
            item.problem = message(exc)
        return
    for item in batch:
        if (why := refused.get((item.gate_id, exact(item.row)))) is not None:
            item.problem = message(why)
            continue
        mine = [r for r in results if r.gate_id == item.gate_id and r.row == str(item.row)]
        if len(mine) == 1:
            item.result = mine[0]
        else:
            item.problem = f"expected one {item.gate_id} result on {item.row}, got {len(mine)}"


async def _run(
    batch: Sequence[Pending], together: bool, matrix: Path, evidence: Path, command: Sequence[str]
) -> tuple[list[GateResult], Mapping[Pair, Exception]]:
    from omniqual.engine.single_gate import run_gate_batch, run_single_gate

    first = batch[0]
    if together:
        pairs = [(item.gate_id, exact(item.row)) for item in batch]
        done = await run_gate_batch(pairs, first.target, matrix=matrix, evidence_root=evidence,
                                    command=command)  # fmt: skip
        return done.results, done.refused
    results = await run_single_gate(first.gate_id, first.target, exact(first.row),
                                    matrix=matrix, evidence_root=evidence,
                                    command=command)  # fmt: skip
    return results, {}


def _caught() -> tuple[type[Exception], ...]:
    from omniqual.client.errors import ClientError
    from omniqual.deploy.launcher import LaunchError

    return (SpecError, ValueError, RecipeNotFound, StoreError, ClientError, LaunchError)


def message(exc: BaseException) -> str:
    if isinstance(exc, SpecError):
        return "\n".join(str(p) for p in exc.problems)
    if isinstance(exc, RecipeNotFound):
        return exc.message
    return str(exc) or type(exc).__name__
