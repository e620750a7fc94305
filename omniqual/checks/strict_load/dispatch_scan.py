"""G2-04: the model's own code calls its layers as modules, so vLLM's ``CustomOp`` dispatch picks
the platform's kernel; it never calls ``forward_cuda()`` (or another platform's forward)
directly.

A direct ``layer.forward_cuda(x)`` runs the CUDA path on every platform (a CPU or ROCm build
then fails or computes through the wrong kernel) and skips whatever dispatch wraps around it
(compilation, quantized overrides). The files scanned are those of the load-weights scan
(:func:`omniqual.checks.strict_load.source_scan.model_files`: the pipeline and each component
vLLM-Omni builds itself). A finding is a call ``X.forward_<platform>(...)`` parsed with
:mod:`ast`, except the op's own dispatch: inside a ``forward_*`` method, a call on ``self`` or
``super()`` (``forward_hip`` returning ``self.forward_native(x)``, a subclass deferring to
``super().forward_cuda``) is how a ``CustomOp`` implements a platform, not a way around it.
"""

import ast
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, JsonValue

from omniqual.checks.base import ArtifactSink
from omniqual.checks.strict_load.case_run import CaseRun, absent, outcome_of
from omniqual.checks.strict_load.source_scan import model_files
from omniqual.deploy.runtime_params import RuntimeParamList
from omniqual.domain.evidence import CaseResult
from omniqual.domain.load_mapping import LoadMappingSpec

PLATFORM_FORWARDS = frozenset({"forward_cuda", "forward_hip", "forward_xpu", "forward_cpu",
                               "forward_tpu", "forward_native", "forward_oot"})  # fmt: skip
"""``CustomOp``'s per-platform implementations: ``forward()`` dispatches to one of them."""
DISPATCH_CASE = "custom-op-dispatch"
_EXPECTED = "no direct forward_<platform>() call outside a CustomOp's own dispatch"


class DirectCall(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int
    code: str

    def describe(self) -> str:
        return (f"{self.file}:{self.line}: `{self.code}` calls a platform's forward directly: "
                "call the module (`layer(x)`) so CustomOp dispatch picks the platform's kernel")


def _own_dispatch(call: ast.Call, enclosing: str | None) -> bool:
    """A CustomOp implementing one platform through another (``self.``/``super().`` inside its
    own ``forward_*`` method)."""
    if enclosing is None or not enclosing.startswith("forward_"):
        return False
    assert isinstance(call.func, ast.Attribute)
    receiver = call.func.value
    if isinstance(receiver, ast.Name) and receiver.id == "self":
        return True
    return (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name)
            and receiver.func.id == "super")  # fmt: skip


def _calls(node: ast.AST, enclosing: str | None) -> Iterator[tuple[ast.Call, str | None]]:
    for child in ast.iter_child_nodes(node):
        inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else None
        if isinstance(child, ast.Call):
            yield child, enclosing
        yield from _calls(child, inner or enclosing)


def scan_text(text: str, shown: str) -> list[DirectCall]:
    """The direct platform-forward calls in one file; SyntaxError propagates."""
    lines = text.splitlines()
    found: list[DirectCall] = []
    for call, enclosing in _calls(ast.parse(text), None):
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in PLATFORM_FORWARDS):
            continue
        if _own_dispatch(call, enclosing):
            continue
        code = lines[call.lineno - 1].strip() if call.lineno <= len(lines) else func.attr
        found.append(DirectCall(file=shown, line=call.lineno, code=code))
    return sorted(found, key=lambda x: x.line)


def _display(path: Path) -> str:
    parts = path.parts
    return str(Path(*parts[parts.index("vllm_omni"):])) if "vllm_omni" in parts else str(path)


def scan_paths(files: Sequence[Path]) -> tuple[list[DirectCall], list[str]]:
    findings: list[DirectCall] = []
    problems: list[str] = []
    for path in files:
        shown = _display(path)
        try:
            findings += scan_text(path.read_text(encoding="utf-8"), shown)
        except OSError as exc:
            problems.append(f"{shown} cannot be read ({exc.strerror or exc}): not scanned")
        except (SyntaxError, ValueError) as exc:
            problems.append(f"{shown} cannot be parsed ({exc}): not scanned")
    return findings, problems


def dispatch_case(sink: ArtifactSink, runtime: RuntimeParamList, spec: LoadMappingSpec) -> CaseRun:
    """G2-04 as a case of the strict-load gate: absent without source files, invalid when a file
    cannot be read, failed naming file:line for each direct platform-forward call."""
    if not runtime.source_files:
        why = (f"the runtime parameter list (source {runtime.source}) names no source files:"
               " the model's calls are not scanned")  # fmt: skip
        return absent(DISPATCH_CASE, "model source", _EXPECTED, why)
    files, _ = model_files(runtime, spec)
    findings, problems = scan_paths(files)
    failures = [f.describe() for f in findings]
    document: dict[str, JsonValue] = {
        "files": [_display(p) for p in files], "problems": list(problems),
        "findings": [f.model_dump(mode="json") for f in findings]}  # fmt: skip
    stored = sink.put_artifact(json.dumps(document, indent=1).encode("utf-8"),
                               media_type="application/json", role=DISPATCH_CASE,
                               name=f"{DISPATCH_CASE}.json")  # fmt: skip
    case = CaseResult(id=DISPATCH_CASE, endpoint="model source", expected_status=_EXPECTED,
                      observed_status=f"{len(findings)} direct call(s) in {len(files)} file(s)",
                      outcome=outcome_of(failures, problems),
                      note="; ".join([*failures, *problems])[:1000])  # fmt: skip
    return CaseRun(case, tuple(failures), tuple(problems), artifacts=(stored,),
                   summary={"run": True, "files": len(files), "findings": len(findings)})

