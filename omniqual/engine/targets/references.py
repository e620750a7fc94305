"""Reference deployments for parity checks: the matrix row a check names as its baseline,
served by that row's recipe (or the campaign's URL for it) while a run needs it.

One reference is live at a time and is shared by every candidate that names the same row, so a
campaign that qualifies several fast paths of one model launches its baseline once, plus once
more: a launched reference comes with a second launch of the same recipe, on which the checks
measure the baseline's spread against itself. Asking for
another row stops the live one first (two tiny servers plus a candidate would crowd a small
host), once no check still uses it: launch groups running at once (``--jobs``) share the pool,
and one that asks for the row being started waits for that launch instead of making another.
The pool stops whatever is live when the run's plan ends."""

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from omniqual.checks.base import ServedReference, TargetInfo
from omniqual.client.client import OmniClient
from omniqual.domain.axes import RowKey
from omniqual.domain.provenance import Provenance
from omniqual.domain.recipe import Expectation, RecipeKind
from omniqual.engine.matrix_service import ProjectMatrix
from omniqual.engine.targets.targets import prepare_model, served
from omniqual.evidence.store import RunWriter
from omniqual.specs.recipes import LoadedRecipe, RecipeBook


class ReferenceUnavailable(RuntimeError):
    """The named baseline row has no recipe that serves (the check records it as invalid)."""


@dataclass(frozen=True, slots=True)
class ReferenceBook:
    """Which recipe realizes each matrix row, by the row key's string form."""

    recipes: Mapping[str, LoadedRecipe]

    @classmethod
    def of(cls, loaded: ProjectMatrix, recipes: RecipeBook) -> "ReferenceBook":
        return cls({
            str(row.key): recipes[row.spec.recipe]
            for row in loaded.matrix.rows
            if row.spec.recipe is not None and row.spec.recipe in recipes
        })  # fmt: skip

    def recipe_for(self, row: RowKey) -> LoadedRecipe:
        found = self.recipes.get(str(row))
        if found is None:
            raise ReferenceUnavailable(f"no matrix row {row} with a recipe to serve the reference")
        if found.recipe.expect is Expectation.REJECTS:
            raise ReferenceUnavailable(
                f"the reference row {row} names recipe {found.recipe.id!r}, which is expected to "
                "be refused at startup"
            )
        return found


def _client_of(info: TargetInfo) -> Callable[[], OmniClient]:
    def make_client() -> OmniClient:
        assert info.url is not None  # served() always yields a URL
        return OmniClient(info.url, api_key=info.api_key)

    return make_client


class ReferencePool:
    """``async with ReferencePool(...) as pool:`` then ``pool.serve(row)`` per check."""

    def __init__(
        self,
        book: ReferenceBook,
        writer: RunWriter,
        base: Provenance,
        urls: Mapping[str, str] | None = None,
        tag: str = "",
    ) -> None:
        """``tag`` (a launch group's) keeps this pool's launches apart from another pool's."""
        self._tag = tag
        self._book = book
        self._writer = writer
        self._base = base
        self._urls = dict(urls or {})
        self._stack: AsyncExitStack | None = None
        self._live: ServedReference | None = None
        self._users = 0
        self._changed = asyncio.Condition()

    async def __aenter__(self) -> "ReferencePool":
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self._release()

    def serve(self, row: RowKey) -> AbstractAsyncContextManager[ServedReference]:
        return self._serving(row)

    @asynccontextmanager
    async def _serving(self, row: RowKey) -> AsyncIterator[ServedReference]:
        async with self._changed:
            # Another row's reference is stopped only once no check uses it; a launch under
            # way holds the lock, so a second check for the same row waits and shares it.
            await self._changed.wait_for(
                lambda: self._live is None or self._live.row == row or not self._users
            )
            if self._live is None or self._live.row != row:
                await self._release()
                self._live = await self._start(row)
            live = self._live
            self._users += 1
        try:
            yield live
        finally:
            async with self._changed:
                self._users -= 1
                self._changed.notify_all()

    async def _start(self, row: RowKey) -> ServedReference:
        loaded = self._book.recipe_for(row)
        recipe = loaded.recipe
        prepared = prepare_model(recipe, self._base, loaded.directory)
        stack = AsyncExitStack()
        url = self._urls.get(recipe.id)
        try:
            target = await stack.enter_async_context(
                served(loaded, prepared, self._writer, url, role="reference", tag=self._tag)
            )
            # A second launch of the same baseline answers each parity case again: the spread
            # of the baseline against itself, launch to launch. A URL is not ours to relaunch.
            again = None
            if url is None and recipe.kind is not RecipeKind.URL:
                again = await stack.enter_async_context(
                    served(loaded, prepared, self._writer, None, role="reference-again",
                           tag=self._tag)
                )
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        provenance = target.provenance.model_dump(mode="json", exclude_none=True)
        again_client = _client_of(again.info) if again is not None else None
        return ServedReference(row, recipe.id, target.info, _client_of(target.info), provenance,
                               again_client)  # fmt: skip

    async def _release(self) -> None:
        stack, self._stack, self._live = self._stack, None, None
        if stack is not None:
            await stack.aclose()
