"""The skill rules and the campaign scope behind the report golden files: a few rules of two
groups traced to the fixture's gates, one of each status, so the "Skill rules covered" block
shows a rule decided by a passed and by a failed result, one left undecided by an errored result
and one by a gate without a result, one the compile decides, and the two nothing decides; and a
campaign that ran some rows in full and sampled one. Built in code, like the rest of the fixture,
so the golden files do not move with the shipped catalogue (``gates/rules/``)."""

from omniqual.domain.skill_rules import CaseRegistry, RuleCatalogue, RuleGroupFile
from omniqual.report.campaign_scope_view import CampaignScope
from tests.golden.fixture_matrix import FP8, HSDP, WAN, row_key


def _rule(id_: str, statement: str, status: str, **fields: object) -> dict[str, object]:
    return {"id": id_, "statement": statement, "mode": "automatic", "source": "S4 Workflow",
            "status": status, **fields}  # fmt: skip


def _case(gate: str, case: str) -> list[dict[str, str]]:
    return [{"gate": gate, "case": case}]


def catalogue() -> RuleCatalogue:
    gate_1 = RuleGroupFile.model_validate({
        "group": "G1", "title": "Gate 1: correctness under production shapes", "rules": [
            _rule("G1-01", "The dense BF16 row stays the oracle until fast paths have parity.",
                  "decided", decided_by=_case("bf16-parity", "tolerance")),
            _rule("G1-02", "Quantized paths hold PSNR >= 30 dB & SSIM >= 0.90 <per case>.",
                  "partial", decided_by=_case("fp8-parity", "tolerance"),
                  missing="LPIPS is not computed"),
            _rule("G1-03", "Cached paths hold the lossy tolerance.", "decided",
                  decided_by=_case("cache-parity", "tolerance")),
            _rule("G1-04", "Partial process groups are tested.", "missing",
                  reason="no count of process groups across requests"),
        ],
    })  # fmt: skip
    abort = RuleGroupFile.model_validate({
        "group": "AB", "title": "Aborts and load", "rules": [
            _rule("AB-01", "A cut request stops at its boundary.", "decided",
                  decided_by=_case("abort-mid-denoise", "queued")),
            _rule("AB-02", "Load percentiles hold their SLO.", "human",
                  decided_by=_case("load-poisson", "slo"), missing="a reviewer reads the plot"),
            _rule("AB-03", "Every state is derived from recorded evidence.", "decided",
                  decided_by=[{"compile_rule": "omniqual.compile.matrix:compile_matrix"}]),
            _rule("AB-04", "The skill's own tooling is exercised.", "out_of_scope",
                  reason="the skill's tooling is not omniqual's"),
        ],
    })  # fmt: skip
    return RuleCatalogue((gate_1, abort), CaseRegistry(kinds={}))


def campaign() -> CampaignScope:
    """The baseline, the refusal and the Wan row in full; the FP8 row without the parity over
    every size."""
    return CampaignScope(
        campaign="flux-day0-tour",
        in_full=(row_key({}), row_key(HSDP), row_key(WAN)),
        sampled=((row_key(FP8), ("fp8-parity-sizes",)),),
        full_campaign="flux-day0.yaml",
    )
