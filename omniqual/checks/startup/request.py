"""The row's known-good request and its timing: the contract's probe for the row's API mode (the
request api-contract sends first and field-effect holds every field against), sent through
api-contract's exchange (an async video job is polled to its content), timed on the running
loop's clock and cut at a deadline. What came back is data, never an exception; an error answer
is named by its shape only (status, type, code), as the server's message can quote the request."""

import asyncio
from dataclasses import dataclass

from omniqual.checks.api_contract.cases import Case, probe_files
from omniqual.checks.api_contract.exchange import Timeouts, run_case
from omniqual.client import ApiError, ClientError, OmniClient
from omniqual.domain.axes import RowKey
from omniqual.domain.contract import EndpointContract, ModelContract


@dataclass(frozen=True, slots=True)
class Sent:
    """One known-good request: how long it took and, when it was not served, why."""

    elapsed_s: float
    problem: str | None = None
    """None: answered 2xx with its output."""
    timed_out: bool = False
    """No answer came before the deadline."""

    @property
    def served(self) -> bool:
        return self.problem is None


def row_endpoint(contract: ModelContract, row: RowKey) -> EndpointContract | None:
    """The contract's endpoint of the row's API mode (and task, where the row names one)."""
    mode, task = row.get("api_mode"), row.get("task")
    return next((e for e in contract.endpoints
                 if e.api_mode == mode and task in (None, e.task)), None)  # fmt: skip


def known_good(endpoint: EndpointContract) -> Case:
    return Case(f"{endpoint.api_mode}/startup-probe", endpoint.api_mode, None, "probe",
                dict(endpoint.probe), "accepted", probe_files(endpoint),
                "the probe request")  # fmt: skip


async def send(client: OmniClient, case: Case, timeouts: Timeouts, within_s: float) -> Sent:
    """``case`` sent once, given ``within_s`` to be answered with its output."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        exchange = await asyncio.wait_for(run_case(client, case, timeouts), within_s)
    except TimeoutError:
        return Sent(loop.time() - started, f"no answer within {within_s:g} s", timed_out=True)
    except ClientError as exc:
        return Sent(loop.time() - started, f"no answer ({type(exc).__name__})")
    elapsed = loop.time() - started
    if not exchange.response.ok:
        return Sent(elapsed, f"an error answer ({ApiError(exchange.response)})")
    if exchange.problem is not None or not exchange.media:
        why = "no output in it" if exchange.problem is None else "no output: " + exchange.problem
        return Sent(elapsed, f"HTTP {exchange.response.status} with {why}"[:200])
    return Sent(elapsed)
