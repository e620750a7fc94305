"""The harness side of ``omniqual agent``: where it is (:class:`AgentAccess`) and a client for
its routes (:class:`AgentClient`, httpx, synchronous: observers sample from their own threads).

Every answer is validated into its wire model; an agent that cannot be reached, refuses the
token or answers something else raises :class:`AgentError`, whose message never holds the token.
"""

from dataclasses import dataclass, field
from types import TracebackType
from typing import TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from omniqual.domain.agent import (
    AgentIdentity,
    AgentProblem,
    AgentReadings,
    CpuReading,
    FaultAnswer,
    FaultRecords,
)
from omniqual.domain.fault_injection import FaultArm

Model = TypeVar("Model", bound=BaseModel)


class AgentError(RuntimeError):
    """The agent could not be asked, or refused (``status``: its HTTP status, when it answered)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class AgentAccess:
    """An agent's base URL and the bearer token it wants (kept out of ``repr``)."""

    url: str
    token: str = field(repr=False)

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"--agent {self.url!r}: an agent is an http:// or https:// URL")


class AgentClient:
    """``with AgentClient(access) as agent: agent.readings()``; ``transport`` is for tests."""

    def __init__(self, access: AgentAccess, *, timeout_s: float = 5.0,
                 transport: httpx.BaseTransport | None = None) -> None:  # fmt: skip
        self.access = access
        self._http = httpx.Client(
            base_url=access.url.rstrip("/"), timeout=timeout_s, transport=transport,
            headers={"Authorization": f"Bearer {access.token}"}, trust_env=False,
        )  # fmt: skip

    def readings(self) -> AgentReadings:
        return self._ask("GET", "/v1/readings", AgentReadings)

    def cpu(self) -> CpuReading:
        return self._ask("GET", "/v1/cpu", CpuReading)

    def identity(self) -> AgentIdentity:
        return self._ask("GET", "/v1/identity", AgentIdentity)

    def arm(self, fault: FaultArm) -> FaultAnswer:
        return self._ask("POST", "/v1/fault/arm", FaultAnswer, body=fault.model_dump_json())

    def disarm(self) -> FaultAnswer:
        return self._ask("POST", "/v1/fault/disarm", FaultAnswer)

    def records(self, after: int = 0) -> FaultRecords:
        return self._ask("GET", f"/v1/fault/records?after={after}", FaultRecords)

    def _ask(self, method: str, path: str, model: type[Model], body: str | None = None) -> Model:
        where = f"agent {self.access.url} {method} {path.split('?')[0]}"
        try:
            answer = self._http.request(
                method, path, content=body,
                headers={"Content-Type": "application/json"} if body is not None else None,
            )  # fmt: skip
        except httpx.HTTPError as exc:
            raise AgentError(f"{where}: {type(exc).__name__}: {exc}") from exc
        if answer.status_code != 200:
            raise AgentError(f"{where}: HTTP {answer.status_code}: {_why(answer)}",
                             answer.status_code)  # fmt: skip
        try:
            return model.model_validate_json(answer.content)
        except ValidationError as exc:
            raise AgentError(f"{where}: not a {model.__name__}: {exc.error_count()} "
                             "error(s)") from exc  # fmt: skip

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "AgentClient":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.close()


def _why(answer: httpx.Response) -> str:
    try:
        return AgentProblem.model_validate_json(answer.content).error
    except ValidationError:
        return answer.text[:200] or "no reason given"
