"""SL-06: the model's own loading code never writes a parameter with ``.data.copy_``.

vLLM's online quantization hooks live in each parameter's ``weight_loader``: a model that copies
checkpoint bytes straight into ``param.data`` skips them, so an fp8 linear keeps its BF16 weights
(or worse, half-converted ones). The checkpoint layout must be transformed first and then handed
to ``weight_loader(param, ...)``.

Scope: the source files of the pipeline class and of each component vLLM-Omni builds itself (as
the serving environment resolved them, recorded by the runtime parameter dump), plus the file a
load mapping says its component mirrors. Shared layers (vLLM's own ``default_weight_loader``,
which *is* the loader and copies into ``.data`` by design) are out of scope: the rule is about
models bypassing their loaders. In each file the load paths are every ``load_weights`` function
and the functions of the same file it reaches by name (a helper it calls), transitively. A
finding is a call ``X.data.copy_(...)`` or ``X.data[...].copy_(...)`` on such a path, parsed with
:mod:`ast` (comments and strings never match). Two writes are left alone: through a name that
says it is a buffer (buffers carry no quant method), and inside a weight loader of the model's
own (a function named ``weight_loader`` or ``*_weight_loader``, which a parameter is given as its
loader: online quantization wraps the parameter's loader, so the write in it is the hooked path;
the bypass is a load path writing ``.data`` instead of calling it).
"""

import ast
from collections.abc import Iterator, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, JsonValue

from omniqual.checks.base import ArtifactSink
from omniqual.checks.strict_load.case_run import CaseRun, absent, outcome_of
from omniqual.deploy.runtime_params import RuntimeParamList
from omniqual.domain.evidence import CaseResult
from omniqual.domain.load_mapping import LoadMappingSpec

PACKAGE = "vllm_omni"
WEIGHT_LOADER = "weight_loader"
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


class DataCopy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int
    function: str
    code: str

    def describe(self) -> str:
        return (
            f"{self.file}:{self.line}: {self.function} writes a parameter with `{self.code}`:"
            " `.data.copy_` bypasses the parameter's weight_loader and the online-quantization"
            " hooks it carries; transform the layout, then call weight_loader(param, ...)"
        )


class SourceScan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    files: tuple[str, ...]
    load_paths: dict[str, list[str]]
    """Per file scanned, the functions on a load path (qualified names)."""
    findings: tuple[DataCopy, ...]
    problems: tuple[str, ...]
    """Files that could not be read or parsed: the scan of them proves nothing."""
    notes: tuple[str, ...] = ()


def _display(path: Path) -> str:
    """``vllm_omni/...`` when the file is inside the package (stable across hosts)."""
    parts = path.parts
    return str(Path(*parts[parts.index(PACKAGE) :])) if PACKAGE in parts else str(path)


def _package_root(files: Sequence[Path]) -> Path | None:
    """The directory holding the ``vllm_omni`` package (site-packages), from any file in it."""
    for path in files:
        if PACKAGE in path.parts:
            return Path(*path.parts[: path.parts.index(PACKAGE)])
    return None


def model_files(runtime: RuntimeParamList, spec: LoadMappingSpec) -> tuple[list[Path], list[str]]:
    """The model's own source files and notes on mapped files that are not there."""
    files = [Path(f) for f in dict.fromkeys(runtime.source_files.values())]
    root = _package_root(files)
    notes: list[str] = []
    for name, component in spec.components.items():
        named = next((w for w in component.mirrors.split() if w.endswith(".py")), None)
        if component.loader != "vllm-omni" or named is None:
            continue
        path = root / named if root is not None else None
        if path is not None and path.is_file():
            if path not in files:
                files.append(path)
        else:
            notes.append(f"{name}: mapping {spec.id} mirrors {named}, not found in the package")
    return files, notes


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _qualified(tree: ast.Module) -> Iterator[tuple[str, Function]]:
    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, Function]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEFS):
                yield f"{prefix}{child.name}", child
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of functions or classes defined inside it
    (those are on a load path only when reached by name themselves)."""
    for child in ast.iter_child_nodes(function):
        if isinstance(child, (*_DEFS, ast.ClassDef)):
            continue
        yield child
        yield from _own_nodes(child)


def _names(function: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in _own_nodes(function):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return found


def _data_copy(node: ast.AST) -> ast.expr | None:
    """The receiver of ``X.data.copy_(...)`` / ``X.data[...].copy_(...)``, else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    if node.func.attr != "copy_":
        return None
    target = node.func.value
    if isinstance(target, ast.Subscript):
        target = target.value
    if isinstance(target, ast.Attribute) and target.attr == "data":
        return target.value
    return None


def load_paths(tree: ast.Module) -> dict[str, Function]:
    """Every ``load_weights`` and the same-file functions it reaches by name, transitively,
    short of the model's own weight loaders (they are the loaders, not a way around them)."""
    defs = list(_qualified(tree))
    by_name: dict[str, list[tuple[str, Function]]] = {}
    for qualified, node in defs:
        if node.name.endswith(WEIGHT_LOADER):
            continue
        by_name.setdefault(node.name, []).append((qualified, node))
    reached = dict(by_name.get("load_weights", []))
    pending = list(reached.values())
    while pending:
        for name in _names(pending.pop()):
            for qualified, node in by_name.get(name, []):
                if qualified not in reached:
                    reached[qualified] = node
                    pending.append(node)
    return reached


def scan_source(text: str, shown: str) -> tuple[list[str], list[DataCopy]]:
    """Functions on load paths and the ``.data.copy_`` writes in them; SyntaxError propagates."""
    tree = ast.parse(text)
    lines = text.splitlines()
    paths = load_paths(tree)
    findings: dict[tuple[int, int], DataCopy] = {}
    for qualified, function in paths.items():
        for node in _own_nodes(function):
            receiver = _data_copy(node)
            if receiver is None or "buffer" in ast.unparse(receiver).lower():
                continue
            assert isinstance(node, ast.Call)
            code = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
            findings[(node.lineno, node.col_offset)] = DataCopy(
                file=shown, line=node.lineno, function=qualified, code=code
            )
    return sorted(paths), [findings[k] for k in sorted(findings)]


def scan_files(files: Sequence[Path], notes: Sequence[str] = ()) -> SourceScan:
    shown_files: list[str] = []
    paths: dict[str, list[str]] = {}
    findings: list[DataCopy] = []
    problems: list[str] = []
    for path in files:
        shown = _display(path)
        shown_files.append(shown)
        try:
            functions, found = scan_source(path.read_text(encoding="utf-8"), shown)
        except OSError as exc:
            problems.append(f"{shown} cannot be read ({exc.strerror or exc}): not scanned")
            continue
        except (SyntaxError, ValueError) as exc:
            problems.append(f"{shown} cannot be parsed ({exc}): not scanned")
            continue
        paths[shown] = functions
        findings += found
    return SourceScan(files=tuple(shown_files), load_paths=paths, findings=tuple(findings),
                      problems=tuple(problems), notes=tuple(notes))  # fmt: skip


SCAN_CASE = "load-weights-scan"
_EXPECTED = "no .data.copy_ into a parameter on a load_weights path"


def scan_case(sink: ArtifactSink, runtime: RuntimeParamList, spec: LoadMappingSpec) -> CaseRun:
    """SL-06 as a case of the gate: absent without source files, invalid when a file cannot be
    read, failed naming file:line for each write that bypasses a loader."""
    if not runtime.source_files:
        why = (f"the runtime parameter list (source {runtime.source}) names no source files:"
               " the model's load_weights is not scanned")  # fmt: skip
        return absent(SCAN_CASE, "model source", _EXPECTED, why)
    files, notes = model_files(runtime, spec)
    scan = scan_files(files, notes)
    failures = [finding.describe() for finding in scan.findings]
    stored = sink.put_artifact(scan.model_dump_json(indent=1).encode("utf-8"),
                               media_type="application/json", role=SCAN_CASE,
                               name=f"{SCAN_CASE}.json")  # fmt: skip
    outcome = outcome_of(failures, list(scan.problems))
    functions = sum(len(found) for found in scan.load_paths.values())
    observed = (f"{len(scan.findings)} write(s) in {functions} load-path function(s) of"
                f" {len(scan.files)} file(s)")  # fmt: skip
    case = CaseResult(id=SCAN_CASE, endpoint="model source", expected_status=_EXPECTED,
                      observed_status=observed, outcome=outcome,
                      note="; ".join([*failures, *scan.problems])[:1000])  # fmt: skip
    summary: dict[str, JsonValue] = {"run": True, "files": list(scan.files),
                                     "findings": len(scan.findings)}  # fmt: skip
    return CaseRun(case, tuple(failures), scan.problems, artifacts=(stored,), summary=summary)
