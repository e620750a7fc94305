"""Load ``gates/contracts/<model>.yaml`` (the frozen API contract of one model) with ``file:line``
errors: the schema first, then the cross-field rules a schema cannot say (limits in order, probe
values inside the contract, every numeric field bounded with its source or explicitly unbounded
by one, video outputs checked for shape and frames, parity pairs that exist, out-of-scope paths
declared once and owned by no endpoint), and the Gate 0 policy of
:mod:`omniqual.specs.contract_policy` (pinned identifiers, aggregate caps, upload endpoints)."""

import math
from pathlib import Path

from omniqual.domain.contract import (
    EndpointContract,
    FieldContract,
    InputContract,
    ModelContract,
    path_template,
)
from omniqual.specs.contract_policy import policy_problems
from omniqual.specs.source import Loc, SpecError, SpecProblem, YamlDocument, load_spec


def contract_path(directory: Path, model: str) -> Path:
    return directory / f"{model}.yaml"


def load_contract(path: Path) -> ModelContract:
    """One contract file; every problem at once, each with its line."""
    contract, doc = load_spec(path, ModelContract)
    problems: list[SpecProblem] = []
    if contract.model != path.stem:
        problems.append(doc.problem(("model",), f"must match the file name {path.stem!r}"))
    seen: set[str] = set()
    for index, endpoint in enumerate(contract.endpoints):
        loc: Loc = ("endpoints", index)
        if endpoint.api_mode in seen:
            problems.append(doc.problem((*loc, "api_mode"), "endpoint declared twice"))
        seen.add(endpoint.api_mode)
        problems.extend(_endpoint_problems(doc, loc, endpoint))
    problems.extend(_scope_problems(doc, contract))
    problems.extend(doc.problem(loc, message) for loc, message in policy_problems(contract))
    for index, pair in enumerate(contract.parity):
        for side in ("a", "b"):
            if getattr(pair, side) not in seen:
                message = f"parity names {getattr(pair, side)!r}, which has no endpoint here"
                problems.append(doc.problem(("parity", index, side), message))
    if problems:
        raise SpecError(problems)
    return contract


def _scope_problems(doc: YamlDocument, contract: ModelContract) -> list[SpecProblem]:
    """An out-of-scope path is declared once and is no path the contract's endpoints own."""
    problems: list[SpecProblem] = []
    owned = {path_template(p) for p in contract.covered_paths()}
    seen: set[str] = set()
    for index, entry in enumerate(contract.out_of_scope_endpoints):
        where: Loc = ("out_of_scope_endpoints", index, "path")
        key = path_template(entry.path)
        if key in owned:
            problems.append(doc.problem(where, f"{entry.path} is an endpoint of this contract"))
        elif key in seen:
            problems.append(doc.problem(where, f"{entry.path} declared out of scope twice"))
        seen.add(key)
    return problems


def _endpoint_problems(
    doc: YamlDocument, loc: Loc, endpoint: EndpointContract
) -> list[SpecProblem]:
    problems: list[SpecProblem] = []
    names = [f.name for f in endpoint.fields]
    for index, spec in enumerate(endpoint.fields):
        where: Loc = (*loc, "fields", index)
        if names.count(spec.name) > 1:
            problems.append(doc.problem((*where, "name"), f"field {spec.name!r} declared twice"))
        problems.extend(doc.problem((*where, key), msg) for key, msg in _field_problems(spec))
        if spec.required and spec.name not in endpoint.probe:
            problems.append(doc.problem((*loc, "probe"), f"required field {spec.name!r} missing"))
    for key in endpoint.probe:
        if key not in names:
            problems.append(doc.problem((*loc, "probe", key), "not a declared field"))
    for index, spec_input in enumerate(endpoint.inputs):
        where = (*loc, "inputs", index)
        if spec_input.min_count > spec_input.max_count:
            problems.append(doc.problem((*where, "min_count"), "greater than max_count"))
        if not spec_input.min_count <= spec_input.probe_count <= spec_input.max_count:
            problems.append(doc.problem((*where, "probe_count"), "outside min_count..max_count"))
        problems.extend(doc.problem((*where, k), m) for k, m in _cap_problems(spec_input))
    output = endpoint.output
    if output.kind == "video":
        for key in ("size_field", "frames_field"):
            named = getattr(output, key)
            if named is None:
                message = "a video output names the field that sets it (always checked)"
                problems.append(doc.problem((*loc, "output", key), message))
            elif named not in endpoint.probe:
                message = f"the probe sets {named!r}, so every video's {key[:-6]} is checked"
                problems.append(doc.problem((*loc, "probe"), message))
    video_only = ("codec", "fps_field", "default_fps")
    for key in video_only if output.kind != "video" else ():
        if getattr(output, key) is not None:
            problems.append(doc.problem((*loc, "output", key), "only a video output has one"))
    for key in (
        "count_field",
        "size_field",
        "format_field",
        "frames_field",
        "length_field",
        "speed_field",
        "fps_field",
    ):
        named = getattr(output, key)
        if named is not None and named not in names:
            problems.append(doc.problem((*loc, "output", key), f"{named!r} is not a field"))
    return problems


def _cap_problems(spec: InputContract) -> list[tuple[str, str]]:
    """An aggregate cap only several files within every other limit can pass; a pixel cap needs
    an input that takes files at all."""
    found: list[tuple[str, str]] = []
    total = spec.max_total_bytes
    if total is not None and spec.max_count < 2:
        found.append(("max_total_bytes", "an aggregate cap is passed only by several files: "
                      "max_count must be 2 or more"))  # fmt: skip
    elif (
        total is not None
        and spec.max_bytes is not None
        and (total >= spec.max_count * spec.max_bytes)
    ):
        message = (f"no {spec.max_count} files under max_bytes ({spec.max_bytes}) together "
                   f"exceed {total}: the cap cannot be passed")  # fmt: skip
        found.append(("max_total_bytes", message))
    if spec.max_pixels is not None and spec.max_count == 0:
        found.append(("max_pixels", "the input takes no file"))
    return found


def _shown(limit: float) -> str:
    # str() for ints: `:g` rounds a 64-bit limit and overflows past a float's range.
    return f"{limit:g}" if isinstance(limit, float) else str(limit)


def _infinite(limit: float | None) -> bool:
    return isinstance(limit, float) and not math.isfinite(limit)


def _field_problems(spec: FieldContract) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    infinite = [b for b in ("min", "max") if _infinite(getattr(spec, b))]
    for bound in infinite:
        message = f"{bound} must be a finite number (no limit: leave it out, with `unbounded`)"
        found.append((bound, message))
    if spec.min is not None and spec.max is not None and spec.min > spec.max:
        found.append(("min", f"min {_shown(spec.min)} is greater than max {_shown(spec.max)}"))
    if spec.enum is not None and spec.type != "str":
        found.append(("enum", "only str fields take an enum"))
    if spec.min_length is not None and spec.type != "str":
        found.append(("min_length", "only str fields take min_length"))
    # An exemption from the field-effect gate is a claim a reviewer must be able to read.
    if spec.effect == "none" and not spec.effect_reason.strip():
        found.append(("effect_reason", "`effect: none` needs its reason in effect_reason"))
    if spec.effect_reason and spec.effect != "none":
        found.append(("effect_reason", "only a field with `effect: none` takes an effect_reason"))
    if spec.multiple_of is not None and spec.type not in ("int", "size"):
        found.append(("multiple_of", "only int and size fields are aligned"))
    if spec.type in ("str", "bool") and (spec.min is not None or spec.max is not None):
        found.append(("min", f"a {spec.type} field has no numeric limits"))
    found.extend(_range_problems(spec))
    for bound in ("min", "max"):
        value = getattr(spec, bound)
        if bound in infinite or value is None:
            continue
        if spec.type in ("int", "size") and value != int(value):
            found.append((bound, f"{spec.type} limits must be whole numbers"))
    return found


NUMERIC = ("int", "float", "size")


def _range_problems(spec: FieldContract) -> list[tuple[str, str]]:
    """Every numeric field has a declared range with its source; a limit left out is a spec
    error unless a source says the field is unbounded there (``unbounded``)."""
    if spec.type not in NUMERIC:
        if spec.unbounded:
            return [("unbounded", f"a {spec.type} field has no numeric range")]
        return []
    found: list[tuple[str, str]] = []
    if not spec.source.strip():
        found.append(("source", "a numeric field names the source of its range"))
    missing = [bound for bound in ("min", "max") if getattr(spec, bound) is None]
    if missing and not spec.unbounded.strip():
        found.append(
            (
                missing[0],
                f"no {' or '.join(missing)}: declare the range, or name the source that says "
                "the field is unbounded in `unbounded`",
            )
        )
    if not missing and spec.unbounded:
        found.append(("unbounded", "the field declares both limits; it is not unbounded"))
    return found
