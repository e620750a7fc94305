"""What a deployment given by URL is, as it reports itself, and which matrix rows it can be.

A URL says nothing about the rows it realizes. The server is asked, without creating any work:
``GET /v1/models`` (the served model id and the path it was loaded from), ``GET /version`` (vLLM's
release; vLLM-Omni's only where a build reports it), ``OPTIONS`` on each API mode's endpoint
(404: no such route) and what tells its process from another (:mod:`.served_instance`). A row is
consistent with the deployment when its recipe could be serving that model id, its API mode's
endpoint exists, and its recipe is not one expected to be refused. Rows realized by one recipe
are one deployment; a result may land only when exactly one deployment remains.

A server that names no model cannot be bound to any row: identifying it fails, and nothing is
recorded. What it did show is recorded with every result as its served identity, and results
combine in a row only when theirs agree (:data:`omniqual.domain.provenance.IDENTITY_FIELDS`).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

import httpx

from omniqual.client.client import OmniClient
from omniqual.client.errors import ClientError
from omniqual.domain.axes import RowKey
from omniqual.domain.contract import ENDPOINT_PATHS
from omniqual.domain.provenance import UNKNOWN, Provenance, ServedDeployment, ServedModel
from omniqual.domain.recipe import Expectation, LaunchRecipe, RecipeKind
from omniqual.engine.targets import served_instance

REQUEST_AXES: frozenset[str] = frozenset(
    {"task", "api_mode", "output_transport", "shape_schedule", "adapter"}
)
"""Axes a request chooses (the task is the request's ``extra_params.task``, the adapter its
``lora`` field); every other axis is a property of the deployment, which its recipe must
declare."""

_OMNI_VERSION_KEYS = ("vllm_omni_version", "omni_version")
_OMNI_COMMIT_KEYS = ("vllm_omni_commit", "omni_commit", "commit")


class DeploymentUnidentified(ClientError):
    """A deployment given by URL did not name the model it serves: no row can be bound to it."""


@dataclass(frozen=True, slots=True)
class ServedIdentity:
    url: str
    model_ids: tuple[str, ...]
    """``id`` of every card in ``GET /v1/models``; empty when it did not answer."""
    model_roots: tuple[str, ...]
    endpoints: Mapping[str, bool | None]
    """API mode -> whether its endpoint exists (None: the server would not say)."""
    vllm_version: str
    vllm_omni_version: str
    vllm_omni_commit: str
    cards: tuple[ServedModel, ...] = ()
    """Every card as recorded (empty: one bare card per ``model_ids`` entry)."""
    version_body: tuple[tuple[str, str], ...] = ()
    """``GET /version`` as answered, sorted (empty: no answer)."""
    openapi_sha256: str | None = None
    started_at: datetime | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.model_ids, *self.model_roots)))

    def describe(self) -> str:
        served = ", ".join(self.model_ids) or "no model id (GET /v1/models did not answer)"
        return f"{self.url} serves {served}"

    def deployment(self) -> ServedDeployment:
        """What the deployment showed of itself, as recorded with each result."""
        if not self.model_ids:
            raise DeploymentUnidentified(_unidentified(self.url, "named no model"))
        return ServedDeployment(
            base_url=self.url.rstrip("/"),
            models=self.cards or tuple(ServedModel(id=i) for i in self.model_ids),
            version=dict(self.version_body),
            openapi_sha256=self.openapi_sha256,
            started_at=self.started_at,
        )

    def provenance(self, base: Provenance) -> Provenance:
        """What the evidence can say about this deployment: only what it reported, and the
        served identity that keeps its results apart from every other server's."""
        served = self.deployment()
        return base.model_copy(
            update={
                "model": self.model_ids[0] if self.model_ids else UNKNOWN,
                "model_revision": UNKNOWN,
                "checkpoint_sha256": UNKNOWN,
                "vllm_omni_version": self.vllm_omni_version,
                "vllm_omni_commit": self.vllm_omni_commit,
                "vllm_version": self.vllm_version,
                "serve_config_sha256": UNKNOWN,
                "serve_argv": (),
                "source": "reported",
                "target_host": "not-visible",
                "served": served,
                "served_identity_sha256": served.sha256(),
            }
        )


def _unidentified(url: str, what: str) -> str:
    return (f"{url}: GET /v1/models {what}, so the deployment cannot be identified: a result "
            "could land on another model's row, and nothing was recorded")  # fmt: skip


async def identify_deployment(
    url: str, *, transport: httpx.AsyncBaseTransport | None = None
) -> ServedIdentity:
    """Ask ``url`` what it serves; a question it does not answer stays unknown, except the
    served model, without which the deployment is not identified (DeploymentUnidentified)."""
    async with OmniClient(url, transport=transport) as client:
        try:
            cards = (await client.models()).data
        except ClientError as exc:
            raise DeploymentUnidentified(_unidentified(url, f"failed ({exc})")) from exc
        if not cards:
            raise DeploymentUnidentified(_unidentified(url, "listed no model"))
        try:
            reported = (await client.version()).model_dump()
        except ClientError:
            reported = {}
        endpoints: dict[str, bool | None] = {}
        for mode, path in ENDPOINT_PATHS.items():
            try:
                endpoints[mode] = await client.route_exists(path)
            except ClientError:
                endpoints[mode] = None
        openapi = await served_instance.openapi_sha256(client)
        started = await served_instance.started_at(client)
    return ServedIdentity(
        url=url,
        model_ids=tuple(card.id for card in cards),
        model_roots=tuple(card.root for card in cards if card.root),
        endpoints=endpoints,
        vllm_version=_first(reported, ("version",)),
        vllm_omni_version=_first(reported, _OMNI_VERSION_KEYS),
        vllm_omni_commit=_first(reported, _OMNI_COMMIT_KEYS),
        cards=tuple(
            ServedModel(id=c.id, root=c.root, parent=c.parent, max_model_len=c.max_model_len)
            for c in cards
        ),
        version_body=tuple(sorted((k, str(v)) for k, v in reported.items() if v is not None)),
        openapi_sha256=openapi,
        started_at=started,
    )


def _first(reported: Mapping[str, object], keys: Sequence[str]) -> str:
    for key in keys:
        value = reported.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return UNKNOWN


def _last_part(name: str) -> str:
    return PurePosixPath(name.rstrip("/")).name


@dataclass(frozen=True, slots=True)
class ExpectedModel:
    """The ids a server realizing a row answers to, and checkpoint directory names it may have
    been loaded from (wherever this or another machine keeps them)."""

    ids: tuple[str, ...]
    directories: tuple[str, ...] = ()

    def matches(self, served: Sequence[str]) -> bool:
        """A served id equals an expected id, or a served path ends in an expected directory,
        or in the last part of an expected path or hub id (``/models/Qwen-Image`` for
        ``Qwen/Qwen-Image``)."""
        wanted = {i for i in self.ids if i}
        dirs = set(self.directories) | {_last_part(i) for i in wanted if "/" in i}
        return any(s in wanted or ("/" in s and _last_part(s) in dirs) for s in served)

    def describe(self) -> str:
        return ", ".join(sorted({*self.ids, *self.directories}))


@dataclass(frozen=True, slots=True)
class RowVerdict:
    row: RowKey
    deployment: str
    """The recipe id that realizes the row, else the row's deployment axes."""
    reason: str | None
    """Why the row is not this deployment; None when it is consistent."""


def deployment_of(row: RowKey, recipe_id: str | None) -> str:
    if recipe_id is not None:
        return f"recipe {recipe_id}"
    return ",".join(f"{k}={v}" for k, v in row.items if k not in REQUEST_AXES)


def judge_row(
    identity: ServedIdentity,
    row: RowKey,
    recipe_id: str | None,
    recipe: LaunchRecipe | None,
    expected: ExpectedModel,
) -> RowVerdict:
    """Is ``row`` (realized by ``recipe``) consistent with the deployment that answered?"""
    deployment = deployment_of(row, recipe_id)
    if recipe is not None and recipe.expect is Expectation.REJECTS:
        why = f"its recipe {recipe.id!r} is expected to be refused at startup, yet this serves"
        return RowVerdict(row, deployment, why)
    if not identity.names:
        return RowVerdict(row, deployment, "the server named no model in GET /v1/models")
    if not expected.matches(identity.names):
        why = f"it serves {expected.describe()}, not {identity.names[0]}"
        return RowVerdict(row, deployment, why)
    mode = row.get("api_mode")
    if mode is not None and identity.endpoints.get(mode) is False:
        why = f"its endpoint {ENDPOINT_PATHS[mode]} does not exist there (404)"
        return RowVerdict(row, deployment, why)
    return RowVerdict(row, deployment, None)


def expected_model(recipe: LaunchRecipe | None, row: RowKey) -> ExpectedModel:
    """What a server realizing ``row`` with ``recipe`` answers to in ``GET /v1/models``: its
    ``--served-model-name``, else the model it was given (for an embedded recipe, the bundled
    checkpoint's directory); the row's own ``model`` value always counts."""
    ids = [v for v in (row.get("model"),) if v]
    if recipe is None:
        return ExpectedModel(tuple(ids))
    served = recipe.flags.get("served-model-name")
    if isinstance(served, str) and served.strip():
        return ExpectedModel((*ids, *served.split()))
    if recipe.model:
        ids.append(recipe.model)
    if recipe.kind is RecipeKind.EMBEDDED and recipe.pipeline:
        return ExpectedModel(tuple(ids), (bundled_checkpoint_name(recipe.pipeline),))
    return ExpectedModel(tuple(ids))


def bundled_checkpoint_name(pipeline: str) -> str:
    """The directory an embedded pipeline's checkpoint is built into (computed, never built)."""
    from omniqual.deploy.embedded.catalog import PIPELINES, checkpoint_dir

    entry = PIPELINES.get(pipeline)
    if entry is None:
        return pipeline
    return checkpoint_dir(Path("/"), entry.builder).name
