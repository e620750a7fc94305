"""The ``lora`` gate's requests in order, each compared with the server's own same-seed spread.

1. The probe twice without an adapter: the spread (a server that does not reproduce decides
   nothing: ``invalid``).
2. Adapter A: beyond the spread from the base output (else it was silently ignored), and A
   again: within it (else A's output is not reproducible: ``invalid``).
3. A at scale 0: the base output (LoRA's delta times zero).
4. Adapter B: beyond the spread from the base output and from A's (two adapters that give one
   output: the second served the first's weights).
5. A after B (B took A's slot where the server caches one adapter): A's first output; then
   ``churn_rounds`` more turns of B and A, each still its first output, while the server's
   memory (PSS or RSS of its process tree, else its /metrics gauge) grows by at most
   ``max_churn_memory_growth_mib`` from before the turns to after them (an unknown figure
   decides nothing: ``invalid``).
6. The probe without an adapter after them: the base output (nothing left applied).
7. A, B and no adapter sent together: each its own output alone.
8. Bad adapters, each refused with a 4xx: a path that does not exist, an adapter with no name,
   one whose target modules match no layer (served, it would be a silent fallback) and one
   whose weights are not safetensors (these two where the server's host has them: bundled, or
   given), a scale that is not a number and an ``int_id`` below 1; then the server is healthy
   and the base output is still the base output.

A refusal the served release declares to answer otherwise (a contract deviation naming the case,
``<api_mode>/lora/<case>``) is the row's limitation instead of a failure."""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pydantic import JsonValue

from omniqual.checks.api_contract.exchange import Timeouts
from omniqual.checks.api_contract.judge import covering
from omniqual.checks.api_contract.side_effects import health_status
from omniqual.checks.base import ArtifactSink
from omniqual.checks.field_effect.answers import Answer, Pair, ask, compare
from omniqual.checks.field_effect.judge import Spread, baseline_spread, beyond
from omniqual.checks.lora.cases import BROKEN, REFUSALS, lora_case_id
from omniqual.checks.lora.params import AdapterRef, LoraParams
from omniqual.client import OmniClient
from omniqual.domain.contract import Deviation, EndpointContract
from omniqual.domain.evidence import CaseResult, Measurement
from omniqual.domain.outcomes import GateOutcome

OUTPUT_ROLE = "lora-output"
SAME = "the same output within the same-seed spread"
OTHER = "another output, beyond the same-seed spread"
REFUSED = "4xx"
MIB = 1024 * 1024


@dataclass(slots=True)
class LoraRun:
    client: OmniClient
    endpoint: EndpointContract
    adapters: tuple[AdapterRef, ...]
    params: LoraParams
    timeouts: Timeouts
    sink: ArtifactSink
    deviations: tuple[Deviation, ...]
    release: str | None
    progress: Callable[[str], None]
    memory_bytes: Callable[[], Awaitable[int | None]]
    """The server's memory now (None: no figure can be read)."""
    broken: dict[str, str] = field(default_factory=dict)
    """Broken adapters on the server's host, by refusal case (``no-layer``, ``malformed``)."""
    failures: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)
    cases: list[CaseResult] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)
    pairs: list[JsonValue] = field(default_factory=list)
    requests: int = 0

    async def ask(self, lora: dict[str, JsonValue] | None, label: str) -> Answer:
        self.requests += 1
        self.progress(f"lora: {label}")
        values: dict[str, JsonValue] = dict(self.endpoint.probe)
        if lora is not None:
            values["lora"] = lora
        return await ask(self.client, self.endpoint, values, label, self.timeouts, self.sink,
                         OUTPUT_ROLE)

    def compare(self, label: str, a: Answer, b: Answer) -> Pair:
        pair = compare(self.endpoint.output.kind, label, a, b)
        self.pairs.append({"label": label, "a": list(a.sha256), "b": list(b.sha256),
                           "identical": pair.identical, "distance_db": pair.distance_db,
                           "structural": pair.structural, "problem": pair.problem})  # fmt: skip
        if pair.distance_db is not None and pair.distance_db != float("inf"):
            self.measurements.append(Measurement(name=f"{label}: psnr",
                                                 value=pair.distance_db, unit="dB"))  # fmt: skip
        return pair

    def case(self, name: str, sent: str, expected: str, observed: str, outcome: GateOutcome,
             note: str = "", deviation: bool = False) -> None:  # fmt: skip
        self.cases.append(CaseResult(
            id=lora_case_id(self.endpoint.api_mode, name), endpoint=self.endpoint.api_mode,
            field="lora", sent=sent[:200], expected_status=expected,
            observed_status=observed[:200], outcome=outcome, note=note, deviation=deviation,
        ))  # fmt: skip


def _lora(adapter: AdapterRef, scale: float | None = None) -> dict[str, JsonValue]:
    body: dict[str, JsonValue] = {"name": adapter.name, "path": adapter.path}
    if scale is not None:
        body["scale"] = scale
    return body


async def run_steps(run: LoraRun) -> None:
    a, b = run.adapters[0], run.adapters[1]
    base = await run.ask(None, "no adapter")
    again = await run.ask(None, "no adapter, again")
    pair = run.compare("no adapter, twice", base, again)
    spread = baseline_spread(pair, run.params.reproducible_db)
    if isinstance(spread, str):
        run.invalid.append(f"not_reproducible: {run.endpoint.api_mode}: {spread}")
        run.case("baseline", "the probe twice", SAME, pair.describe(), GateOutcome.INVALID)
        return
    run.case("baseline", "the probe twice", SAME, pair.describe(), GateOutcome.PASSED)
    first_a = await run.ask(_lora(a), a.name)
    if not _differs(run, "active", base, first_a, spread, f"{a.name} vs no adapter",
                    "lora_ignored", f"adapter {a.name} changed nothing"):  # fmt: skip
        return  # an adapter that does nothing makes every later step trivially pass
    _same(run, "reproducible", first_a, await run.ask(_lora(a), f"{a.name}, again"), spread,
          f"{a.name} twice", None, f"adapter {a.name} does not give one output")  # fmt: skip
    zero = await run.ask(_lora(a, 0.0), f"{a.name} at scale 0")
    _same(run, "scale-0", base, zero, spread, f"{a.name} at scale 0 vs no adapter",
          "lora_scale_zero", f"adapter {a.name} at scale 0 still acts")  # fmt: skip
    first_b = await run.ask(_lora(b), b.name)
    _differs(run, "active-b", base, first_b, spread, f"{b.name} vs no adapter",
             "lora_ignored", f"adapter {b.name} changed nothing")  # fmt: skip
    _differs(run, "distinct", first_a, first_b, spread, f"{b.name} vs {a.name}",
             "lora_indistinct", f"adapters {a.name} and {b.name} give one output")  # fmt: skip
    a_after_b = await run.ask(_lora(a), f"{a.name} after {b.name}")
    _same(run, "churn", first_a, a_after_b, spread, f"{a.name} after {b.name} vs first",
          "lora_churn", f"adapter {a.name}, sent after {b.name}, gives another output")  # fmt: skip
    # B first: A holds the slot now, so every request of the turns is a load.
    await _churn(run, (b, a), (first_b, first_a), spread)
    _same(run, "base-after", base, await run.ask(None, "no adapter, after"), spread,
          "no adapter after adapters vs before", "lora_left_applied",
          "a request without an adapter after adapter requests gets another output")  # fmt: skip
    await _together(run, a, b, base, first_a, first_b, spread)
    await _bad_inputs(run, a, base, spread)


async def _churn(run: LoraRun, adapters: tuple[AdapterRef, AdapterRef],
                 firsts: tuple[Answer, Answer], spread: Spread) -> None:  # fmt: skip
    """Turns of the two adapters, each a load where the server caches one: every output still
    the adapter's first, the memory bounded (each adapter was loaded before the first figure,
    so what a load keeps adds up across the turns)."""
    rounds = run.params.churn_rounds
    if rounds == 0:
        return
    before = await run.memory_bytes()
    for turn in range(1, rounds + 1):
        for adapter, first in zip(adapters, firsts, strict=True):
            answer = await run.ask(_lora(adapter), f"{adapter.name}, churn turn {turn}")
            _same(run, f"churn-{turn}/{adapter.name}", first, answer, spread,
                  f"{adapter.name} at churn turn {turn} vs first", "lora_churn",
                  f"adapter {adapter.name}, loaded again at churn turn {turn}, gives another "
                  "output")  # fmt: skip
    after = await run.memory_bytes()
    loads = 2 * rounds
    sent = f"{loads} adapter loads in {rounds} turns of {adapters[0].name} and {adapters[1].name}"
    bound = run.params.max_churn_memory_growth_mib
    expected = f"memory growth <= {bound:g} MiB"
    if before is None or after is None:
        run.invalid.append(f"churn_memory_unknown: no memory figure for the server over {sent}: "
                           "its growth is unknown, never zero")  # fmt: skip
        run.case("churn-memory", sent, expected, "no memory figure", GateOutcome.INVALID)
        return
    grew = (after - before) / MIB
    run.measurements += [Measurement(name="churn_memory_growth", value=grew, unit="MiB"),
                         Measurement(name="churn_adapter_loads", value=loads, unit="count")]
    observed = f"{grew:+.1f} MiB ({before / MIB:.0f} -> {after / MIB:.0f} MiB)"
    if grew <= bound:
        run.case("churn-memory", sent, expected, observed, GateOutcome.PASSED)
        return
    run.failures.append(f"lora_churn_memory: the server's memory grew {observed} over {sent}, "
                        f"beyond {bound:g} MiB: each load keeps what it loaded")  # fmt: skip
    run.case("churn-memory", sent, expected, observed, GateOutcome.FAILED)


async def _together(run: LoraRun, a: AdapterRef, b: AdapterRef, base: Answer, first_a: Answer,
                    first_b: Answer, spread: Spread) -> None:  # fmt: skip
    sent = await asyncio.gather(run.ask(_lora(a), f"{a.name}, together"),
                                run.ask(_lora(b), f"{b.name}, together"),
                                run.ask(None, "no adapter, together"))  # fmt: skip
    for name, solo, answer in zip((a.name, b.name, "no adapter"), (first_a, first_b, base), sent,
                                  strict=True):  # fmt: skip
        _same(run, f"together/{name}", solo, answer, spread, f"{name} together vs alone",
              "lora_crossed", f"{name}, sent together with the others, gives another output")


async def _bad_inputs(run: LoraRun, a: AdapterRef, base: Answer, spread: Spread) -> None:
    sent: dict[str, tuple[str, dict[str, JsonValue]]] = {
        "missing-path": ("an adapter path that does not exist",
                         {"name": "omniqual-missing-adapter", "path": run.params.missing_path}),
        "no-name": ("an adapter with a path and no name", {"path": a.path}),
        "bad-scale": ("a scale that is not a number", {**_lora(a), "scale": "not-a-number"}),
        "bad-int-id": ("an int_id below 1", {**_lora(a), "int_id": -1}),
        # The body of these two is the broken adapter the server's host has (below).
        "no-layer": ("an adapter whose target modules match no layer", {}),
        "malformed": ("an adapter whose weights are not safetensors", {}),
    }  # fmt: skip
    for name in REFUSALS:
        what, body = sent[name]
        if name in BROKEN:
            path = run.broken.get(name)
            if path is None:
                continue
            body = {"name": f"omniqual-{name}", "path": path}
        _refused(run, name, what, await run.ask(body, what))
    status = await health_status(run.client)
    if status != 200:
        run.failures.append(f"unhealthy_after_bad_adapter: /health answered {status}")
    _same(run, "base-after-refusals", base, await run.ask(None, "no adapter, after refusals"),
          spread, "no adapter after the refused adapters vs before", "lora_left_applied",
          "a request without an adapter after the refused ones gets another output")


def _same(run: LoraRun, name: str, x: Answer, y: Answer, spread: Spread, sent: str,
          code: str | None, why: str) -> bool:  # fmt: skip
    """``code`` None: a difference is the server's noise (invalid), else a failure."""
    pair = run.compare(sent, x, y)
    if _undecided(run, name, sent, SAME, pair):
        return False
    if not beyond(pair, spread, run.params.margin_db):
        run.case(name, sent, SAME, pair.describe(), GateOutcome.PASSED)
        return True
    if code is None:
        run.invalid.append(f"not_reproducible: {why}: {pair.describe()}")
        run.case(name, sent, SAME, pair.describe(), GateOutcome.INVALID)
        return False
    run.failures.append(f"{code}: {why} ({pair.describe()}, spread {spread.describe()})")
    run.case(name, sent, SAME, pair.describe(), GateOutcome.FAILED, why)
    return False


def _differs(run: LoraRun, name: str, x: Answer, y: Answer, spread: Spread, sent: str,
             code: str, why: str) -> bool:  # fmt: skip
    pair = run.compare(sent, x, y)
    if _undecided(run, name, sent, OTHER, pair):
        return False
    if beyond(pair, spread, run.params.margin_db):
        run.case(name, sent, OTHER, pair.describe(), GateOutcome.PASSED)
        return True
    run.failures.append(f"{code}: {why} ({pair.describe()}, spread {spread.describe()}): "
                        "a silent fallback to the base weights")  # fmt: skip
    run.case(name, sent, OTHER, pair.describe(), GateOutcome.FAILED, why)
    return False


def _undecided(run: LoraRun, name: str, sent: str, expected: str, pair: Pair) -> bool:
    if pair.problem is None:
        return False
    run.invalid.append(f"undecided: {sent}: {pair.problem}")
    run.case(name, sent, expected, pair.describe(), GateOutcome.INVALID)
    return True


def _refused(run: LoraRun, name: str, sent: str, answer: Answer) -> None:
    case_id = lora_case_id(run.endpoint.api_mode, name)
    status = answer.status
    observed = answer.problem or f"HTTP {status}"
    declared = [d for d in covering(run.deviations, run.release, case_id)
                if status is not None and d.observes(status, answer.problem or "", "")]  # fmt: skip
    if status is not None and 400 <= status < 500:
        run.case(name, sent, REFUSED, observed, GateOutcome.PASSED)
        if covering(run.deviations, run.release, case_id):
            run.failures.append(f"stale deviation: upstream fixed it? {case_id} is refused with "
                                f"{status} where {run.release} was declared to answer otherwise; "
                                "remove the declaration")  # fmt: skip
        return
    if declared:
        reason = declared[0].reason
        run.limitations.append(f"declared deviation: {case_id}: {reason}")
        run.case(name, sent, REFUSED, observed, GateOutcome.FAILED,
                 f"declared deviation of {run.release}: {reason}", deviation=True)  # fmt: skip
        return
    what = "served it" if status is not None and status < 400 else f"answered {observed}"
    run.failures.append(f"lora_bad_adapter_not_refused: {sent}: the server {what}, not a 4xx")
    run.case(name, sent, REFUSED, observed, GateOutcome.FAILED)
