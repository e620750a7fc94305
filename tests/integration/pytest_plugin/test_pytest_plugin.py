"""``pytest --omniqual-matrix … --omniqual-target URL``: gate × row items against the fake server
(a real process on an ephemeral port), outcomes mapped to pytest's, results journalled."""

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from omniqual.checks import registry
from omniqual.domain.outcomes import GateOutcome
from omniqual.evidence.run_reader import iter_results

pytestmark = pytest.mark.integration
pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "data" / "mini-project"
CONTRACT = ROOT / "tests" / "unit" / "checks" / "api_contract" / "contracts" / "fake-omni.yaml"
ROW = "model=fake-omni;task=t2i;quantization=none;hardware=cpu"
GATES = {  # id: (track, kind, params)
    "ok": ("accuracy", "outcome", "{outcome: passed}"),
    "bad": ("performance", "outcome", "{outcome: failed, reason: p90 over its bound}"),
    "shaky": ("reliability", "outcome", "{outcome: invalid, reason: too few samples}"),
    "absent": ("accuracy", "outcome", "{outcome: skipped, reason: no baseline row}"),
    "broken": ("reliability", "outcome", "{outcome: raise, reason: disk full}"),
}


def make_project(root: Path, url: str, temp_dir: Path) -> None:
    for sub in ("matrices", "gates/contracts", "runners"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    shutil.copy(MINI / "matrices" / "axes.yaml", root / "matrices" / "axes.yaml")
    shutil.copy(CONTRACT, root / "gates" / "contracts" / "fake-omni.yaml")
    (root / "gates" / "api-contract.yaml").write_text(
        "id: api-contract\nkind: api_contract\nversion: 1\ntrack: function\nparams:\n"
        "  contracts_dir: gates/contracts\n  api_modes: [images-generations]\n"
        f"  release: '0.30.0'\n  poll_interval_s: 0.02\n  temp_dirs: ['{temp_dir}']\n"
    )
    for gate, (track, kind, params) in GATES.items():
        (root / "gates" / f"{gate}.yaml").write_text(
            f"id: {gate}\nkind: {kind}\nversion: 1\ntrack: {track}\nparams: {params}\n"
        )
    (root / "runners" / "fake.yaml").write_text(
        f"id: fake\ndescription: the fake server\nkind: url\nurl: {url}\nmodel: fake/omni-tiny\n"
        "row: {model: fake-omni, quantization: none, hardware: cpu}\n"
    )
    (root / "matrices" / "x.yaml").write_text(
        "name: x\ndefaults: {hardware: cpu, quantization: none}\nrows:\n"
        "  - key: {model: fake-omni, task: t2i}\n    recipe: fake\n"
        "    requires: [api-contract, ok, bad, shaky, absent, broken]\n"
    )


@pytest.fixture
def project(
    pytester: pytest.Pytester, fake_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> str:
    monkeypatch.setitem(
        registry.BUILTIN, "outcome", "tests.integration.pytest_plugin.outcome_check:OutcomeCheck"
    )
    url, temp_dir = fake_server
    make_project(pytester.path, url, temp_dir)
    return url


def test_gate_by_row_items_map_every_outcome(pytester: pytest.Pytester, project: str) -> None:
    run = pytester.runpytest("--omniqual-matrix", "matrices/x.yaml", "--omniqual-target", project,
                             "-rA", "-p", "no:cacheprovider", "--junitxml=j.xml")  # fmt: skip
    run.assert_outcomes(passed=2, failed=3, errors=1)
    text = run.stdout.str()
    run.stdout.fnmatch_lines([
        "*ERROR at setup of omniqual broken on*",
        "errored (harness or infrastructure fault): RuntimeError: disk full",
        "*omniqual bad on*", "p90 over its bound",
        "*omniqual shaky on*", "invalid: too few samples",
        "*omniqual absent on*",  # a required gate skipped: a failure, as `gate run` exits 2
        "required gate skipped, so its row stays `not tested` (a missing contract or spec): "
        "no baseline row",
        f"PASSED matrices/x.yaml::api-contract[[]{ROW}[]]",
        f"PASSED matrices/x.yaml::ok[[]{ROW}[]]",
        # the reason follows only when the terminal is wide enough
        f"ERROR matrices/x.yaml::broken[[]{ROW}[]]*",
        f"FAILED matrices/x.yaml::bad[[]{ROW}[]]*",
        f"FAILED matrices/x.yaml::shaky[[]{ROW}[]]*",
        f"FAILED matrices/x.yaml::absent[[]{ROW}[]]*",
    ])  # fmt: skip
    assert "Traceback" not in text
    results = {r.gate_id: r for r in iter_results([pytester.path / ".omniqual" / "runs"])}
    assert {g: r.outcome for g, r in results.items()} == {
        "api-contract": GateOutcome.PASSED, "ok": GateOutcome.PASSED,
        "bad": GateOutcome.FAILED, "shaky": GateOutcome.INVALID,
        "absent": GateOutcome.SKIPPED, "broken": GateOutcome.ERRORED,
    }  # fmt: skip
    assert all(r.row == ROW and r.target == project for r in results.values())
    assert len(results["api-contract"].cases) > 1  # the real contract ran against the fake
    junit = ET.parse(pytester.path / "j.xml").getroot()
    bad = next(c for c in junit.iter("testcase") if c.get("name", "").startswith("bad["))
    properties = {p.get("name"): p.get("value") for p in bad.iter("property")}
    assert properties["evidence"] == f".omniqual/runs/{results['bad'].run_id}"
    assert properties["result_id"] == results["bad"].result_id


def test_a_recipe_target_runs_all_its_items_in_one_run(
    pytester: pytest.Pytester, project: str
) -> None:
    """Named by recipe, the target's items are one journalled run (one launch for a launched
    recipe, as a campaign), each item still reporting its own outcome and evidence."""
    run = pytester.runpytest("--omniqual-matrix", "matrices/x.yaml", "--omniqual-target", "fake",
                             "-p", "no:cacheprovider", "--junitxml=j.xml")  # fmt: skip
    run.assert_outcomes(passed=2, failed=3, errors=1)
    results = list(iter_results([pytester.path / ".omniqual" / "runs"]))
    assert sorted(r.gate_id for r in results) == sorted([*GATES, "api-contract"])
    assert len({r.run_id for r in results}) == 1
    junit = ET.parse(pytester.path / "j.xml").getroot()
    evidence = {p.get("value") for p in junit.iter("property") if p.get("name") == "evidence"}
    assert evidence == {f".omniqual/runs/{results[0].run_id}"}
    assert "errored (harness or infrastructure fault): RuntimeError: disk full" in run.stdout.str()


def test_an_item_with_a_usage_error_fails_alone_in_a_recipe_batch(
    pytester: pytest.Pytester, project: str
) -> None:
    (pytester.path / "gates" / "garbled.yaml").write_text(
        "id: garbled\nkind: outcome\nversion: 1\ntrack: accuracy\nparams: {outcome: nonsense}\n"
    )
    matrix = pytester.path / "matrices" / "x.yaml"
    matrix.write_text(matrix.read_text().replace("requires: [api-contract, ok,",
                                                 "requires: [api-contract, garbled, ok,"))
    run = pytester.runpytest("--omniqual-matrix", "matrices/x.yaml", "--omniqual-target", "fake",
                             "-p", "no:cacheprovider")  # fmt: skip
    run.assert_outcomes(passed=2, failed=3, errors=2)
    text = run.stdout.str()
    assert "garbled.yaml:5: params.outcome" in text and "Traceback" not in text
    results = list(iter_results([pytester.path / ".omniqual" / "runs"]))
    assert "garbled" not in {r.gate_id for r in results} and len(results) == 6


def test_track_markers_select_and_rows_narrow(pytester: pytest.Pytester, project: str) -> None:
    base = ("--omniqual-matrix", "matrices/x.yaml", "--omniqual-target", project,
            "-p", "no:cacheprovider")  # fmt: skip
    run = pytester.runpytest(*base, "-m", "omniqual_accuracy", "--collect-only", "-q")
    run.stdout.fnmatch_lines([f"*::ok[[]{ROW}[]]", f"*::absent[[]{ROW}[]]"])  # matrix order
    assert "2/6 tests collected (4 deselected)" in run.stdout.str()
    run = pytester.runpytest(*base, "-m", "omniqual_function")
    run.assert_outcomes(passed=1, deselected=5)
    run = pytester.runpytest(*base, "--omniqual-row", "model=other", "--collect-only")
    assert run.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_usage_errors_are_collection_errors_without_traceback(
    pytester: pytest.Pytester, project: str
) -> None:
    run = pytester.runpytest("--omniqual-matrix", "matrices/x.yaml", "--omniqual-target", "nope",
                             "-p", "no:cacheprovider")  # fmt: skip
    assert run.ret == pytest.ExitCode.INTERRUPTED
    run.stdout.fnmatch_lines(["*no launch recipe 'nope'*"])
    run = pytester.runpytest("--omniqual-matrix", "matrices/x.yaml", "-p", "no:cacheprovider")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines(["*--omniqual-matrix needs --omniqual-target*"])
    run = pytester.runpytest("--omniqual-target", project, "-p", "no:cacheprovider")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines(["*--omniqual-target needs --omniqual-matrix*"])


def test_without_the_options_the_plugin_collects_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    run = pytester.runpytest("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)
    assert "collected 1 item" in run.stdout.str()
    assert not (pytester.path / ".omniqual").exists()  # nothing journalled, nothing contacted
