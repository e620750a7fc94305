"""A required gate that ends ``skipped`` fails its pytest item with the reason, as ``gate run``
exits 2 for it: a skip there would leave a model repository's CI green with its row untested.
pytester runs the plugin in-process against a scripted project (no socket, no server)."""

from pathlib import Path
from typing import ClassVar, Literal

import pytest

from omniqual.checks import registry
from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.projects import make_project

pytest_plugins = ["pytester"]
URL = "http://127.0.0.1:9"


class SkippingCheck:
    """Finds nothing to run on, as api-contract does for a model it has no contract for."""

    kind: ClassVar[str] = "skipping"
    params_model: ClassVar[type[CheckParams]] = CheckParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        return CheckOutcome(GateOutcome.SKIPPED, ("no contract for model 'm': planted",))


@pytest.fixture
def matrix(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(pytester.path, monkeypatch)
    monkeypatch.setitem(registry.BUILTIN, "skipping", f"{__name__}:SkippingCheck")
    (root / "gates" / "absent.yaml").write_text("id: absent\nkind: skipping\nversion: 1\n")
    path = root / "matrices" / "one.yaml"
    path.write_text("name: one\ndefaults: {hardware: cpu, model: m}\nrows:\n"
                    "  - key: {task: t2i, quantization: none}\n    recipe: live\n"
                    "    requires: [good, absent]\n")  # fmt: skip
    return path


def test_a_skipped_required_gate_fails_its_item_with_the_reason(
    pytester: pytest.Pytester, matrix: Path
) -> None:
    run = pytester.runpytest("--omniqual-matrix", str(matrix), "--omniqual-target", URL,
                             "--omniqual-evidence", str(pytester.path / "runs"),
                             "-rA", "-p", "no:cacheprovider")  # fmt: skip
    run.assert_outcomes(passed=1, failed=1)
    run.stdout.fnmatch_lines([
        "*omniqual absent on*",
        "required gate skipped, so its row stays `not tested` (a missing contract or spec): "
        "no contract for model 'm': planted",
    ])  # fmt: skip
    assert "Traceback" not in run.stdout.str()
