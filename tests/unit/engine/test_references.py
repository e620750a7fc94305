"""The parity reference pool: the baseline row's recipe is served once and shared by every
candidate naming that row, another row replaces it, everything stops when the pool closes; a
row without a serving recipe is unavailable (the check records invalid)."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from omniqual.checks.base import TargetInfo
from omniqual.domain.axes import RowKey
from omniqual.domain.provenance import Provenance
from omniqual.domain.recipe import LaunchRecipe
from omniqual.engine.targets import references
from omniqual.engine.targets.references import ReferenceBook, ReferencePool, ReferenceUnavailable
from omniqual.engine.targets.targets import PreparedModel, ServedTarget
from omniqual.specs.recipes import LoadedRecipe

SD3 = RowKey((("model", "sd3-tiny"), ("dtype", "bf16")))
QWEN = RowKey((("model", "qwen-image-tiny"), ("dtype", "bf16")))
REFUSED = RowKey((("model", "sd3-tiny"), ("execution", "step/1")))


def _recipe(recipe_id: str, **extra: object) -> LoadedRecipe:
    recipe = LaunchRecipe.model_validate(
        {"id": recipe_id, "description": "d", "kind": "embedded", "pipeline": "sd3-tiny", **extra}
    )
    return LoadedRecipe(recipe, Path("runners") / f"{recipe_id}.yaml", 1)


BOOK = ReferenceBook({
    str(SD3): _recipe("sd3-tiny"),
    str(QWEN): _recipe("qwen-image-tiny"),
    str(REFUSED): _recipe("sd3-tiny-step", expect="rejects", expected_error="requires"),
})  # fmt: skip


def _fake_launches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``up``/``down`` per reference launch, in order; a start-up takes a few loop turns."""
    events: list[str] = []

    @asynccontextmanager
    async def fake_served(
        loaded: LoadedRecipe, prepared: PreparedModel, writer: object, url: str | None,
        role: str = "", tag: str = "",
    ) -> AsyncIterator[ServedTarget]:  # fmt: skip
        events.append(f"up {loaded.recipe.id} as {role}")
        for _ in range(3):
            await asyncio.sleep(0)
        try:
            yield ServedTarget(TargetInfo(url="http://127.0.0.1:1", pid=42), Provenance())
        finally:
            events.append(f"down {loaded.recipe.id}")

    monkeypatch.setattr(references, "served", fake_served)

    def prepared(recipe: LaunchRecipe, base: Provenance, directory: Path) -> PreparedModel:
        return PreparedModel(None, None, base)

    monkeypatch.setattr(references, "prepare_model", prepared)
    return events


def test_a_reference_is_launched_once_per_row_and_stopped_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events = _fake_launches(monkeypatch)

    async def scenario() -> list[str]:
        seen = []
        async with ReferencePool(BOOK, writer=None, base=Provenance()) as pool:  # type: ignore[arg-type]
            for row in (QWEN, SD3, SD3, SD3):
                async with pool.serve(row) as served:
                    seen.append(f"{served.recipe_id} pid {served.target.pid}")
        return seen

    seen = asyncio.run(scenario())
    assert seen == ["qwen-image-tiny pid 42", *["sd3-tiny pid 42"] * 3]
    # Each launched reference comes with a second launch (the baseline's spread against itself).
    assert events == [
        "up qwen-image-tiny as reference", "up qwen-image-tiny as reference-again",
        "down qwen-image-tiny", "down qwen-image-tiny",
        "up sd3-tiny as reference", "up sd3-tiny as reference-again",
        "down sd3-tiny", "down sd3-tiny",
    ]  # fmt: skip


def test_checks_running_at_once_share_one_launch_and_another_row_waits_for_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Launch groups beside each other (--jobs) share the pool: two checks asking for the same
    row while it starts get that one launch; a third asking for another row replaces it only
    after both are done with it."""
    events = _fake_launches(monkeypatch)

    async def scenario() -> None:
        async with ReferencePool(BOOK, writer=None, base=Provenance()) as pool:  # type: ignore[arg-type]

            async def use(row: RowKey, name: str, turns: int) -> None:
                async with pool.serve(row) as served:
                    events.append(f"{name} uses {served.recipe_id}")
                    for _ in range(turns):
                        await asyncio.sleep(0)
                    events.append(f"{name} done")

            await asyncio.gather(use(SD3, "a", 5), use(SD3, "b", 9), use(QWEN, "c", 1))

    asyncio.run(scenario())
    assert events.count("up sd3-tiny as reference") == 1
    assert events.count("up sd3-tiny as reference-again") == 1
    assert events.index("down sd3-tiny") > max(events.index("a done"), events.index("b done"))
    assert events.index("up qwen-image-tiny as reference") > events.index("down sd3-tiny")
    assert events[-3:] == ["c done", "down qwen-image-tiny", "down qwen-image-tiny"]


def test_a_row_without_a_serving_recipe_is_unavailable() -> None:
    with pytest.raises(ReferenceUnavailable, match="expected to be refused"):
        BOOK.recipe_for(REFUSED)
    with pytest.raises(ReferenceUnavailable, match="no matrix row"):
        BOOK.recipe_for(RowKey((("model", "wan-t2v-tiny"),)))
