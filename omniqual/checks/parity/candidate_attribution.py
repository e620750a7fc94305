"""Whether a difference between the candidate and its reference is the candidate's fast path.

Only when both deployments are the same thing but for the candidate's own flags: the same model,
checkpoint (by hash), vLLM-Omni and vLLM releases, and a serve configuration that differs in no
flag outside those the row's features own. A fact either side could not establish never agrees
(an unknown checkpoint is no proof it is the same one)."""

from collections.abc import Iterable, Mapping

from pydantic import JsonValue

from omniqual.deploy.serve_config import serve_config
from omniqual.domain.provenance import Provenance
from omniqual.domain.rules import UNKNOWN_VALUES

MUST_KNOW = ("checkpoint_sha256", "vllm_omni_version", "vllm_version")
"""Known and equal on both sides, or nothing ties the comparison to one checkpoint and release."""
MUST_AGREE = ("model", "model_revision", "vllm_omni_commit")
"""Equal where either side knows them (a release without a commit id reports none on both)."""


def _known(value: JsonValue) -> str | None:
    if value is None or (isinstance(value, str) and value in UNKNOWN_VALUES):
        return None
    return str(value)


def _argv(value: JsonValue) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def attribution_problems(
    candidate: Provenance | None, reference: Mapping[str, JsonValue], owned: Iterable[str]
) -> list[str]:
    """Why the comparison cannot be attributed to the fast path; empty when it can."""
    if candidate is None:
        return ["the candidate's provenance is not recorded, so no difference can be attributed "
                "to its fast path"]  # fmt: skip
    mine: dict[str, JsonValue] = candidate.model_dump(mode="json")
    problems: list[str] = []
    for name in (*MUST_KNOW, *MUST_AGREE):
        c, r = _known(mine.get(name)), _known(reference.get(name))
        if name in MUST_KNOW and (c is None or r is None):
            side = "candidate" if c is None else "reference"
            problems.append(f"{name} is unknown on the {side}")
        elif c != r:
            problems.append(
                f"{name} differs: candidate {c or 'unknown'}, reference {r or 'unknown'}"
            )
    cand_argv, ref_argv = tuple(candidate.serve_argv), _argv(reference.get("serve_argv"))
    if not cand_argv or not ref_argv:
        side = "candidate" if not cand_argv else "reference"
        problems.append(f"the serve command of the {side} is not known")
        return problems
    cand, ref = serve_config(cand_argv), serve_config(ref_argv)
    if cand.model != ref.model:
        problems.append(f"served model differs: candidate {cand.model}, reference {ref.model}")
    c_flags, r_flags, allowed = dict(cand.flags), dict(ref.flags), set(owned)
    stray = sorted(
        name
        for name in c_flags.keys() | r_flags.keys()
        if c_flags.get(name) != r_flags.get(name) and name not in allowed
    )
    if stray:
        problems.append("the serve configurations differ in flags no feature of the row owns: "
                        + ", ".join(f"--{n}" for n in stray))  # fmt: skip
    return problems
