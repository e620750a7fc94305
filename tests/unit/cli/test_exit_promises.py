"""Exit codes keep the README's promise: a skipped gate is a spec error,
specs are checked before any target is contacted, one error per chain, errors that say where."""

from pathlib import Path
from typing import ClassVar, Literal

import pytest
from typer.testing import CliRunner

from omniqual.checks import registry
from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams
from omniqual.cli.exits import first_of_chains
from omniqual.cli.main import app
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import UNKNOWN
from omniqual.engine.targets.served_identity import ServedIdentity
from omniqual.specs.source import SpecProblem
from tests.fakes.projects import make_project

runner = CliRunner()
URL = "http://127.0.0.1:9"
CONTRACT = """schema_version: 1
model: m
official: diffusers==0.40.0 pipeline
checkpoint: omniqual bundled m
target_release: "0.30.0"
endpoints:
  - api_mode: images-generations
    task: t2i
    probe: {prompt: a cube}
    fields:
      - {name: prompt, type: str, requird: true}
    output: {kind: image}
"""
TYPO_LINE = 11


class SkippingCheck:
    """A check that finds nothing to run on (as api-contract does for a model it has no
    contract for): it never touches the target."""

    kind: ClassVar[str] = "skipping"
    params_model: ClassVar[type[CheckParams]] = CheckParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        return CheckOutcome(GateOutcome.SKIPPED, ("no contract for model 'm': planted",))


class ContractParams(CheckParams):
    contracts_dir: str = "gates/contracts"


class ContractReadingCheck(SkippingCheck):
    """Any check kind whose params name a contracts directory (the parity checks do)."""

    kind: ClassVar[str] = "reads_contract"
    params_model: ClassVar[type[CheckParams]] = ContractParams


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.chdir(root)
    monkeypatch.setattr("omniqual.deploy.reaper.install_signal_handlers", lambda: None)
    monkeypatch.setitem(registry.BUILTIN, "skipping", f"{__name__}:SkippingCheck")
    monkeypatch.setitem(registry.BUILTIN, "reads_contract", f"{__name__}:ContractReadingCheck")
    return root


@pytest.fixture
def contacted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every URL the harness reached for (reachability probe or identity query)."""
    seen: list[str] = []

    async def reachable(url: str) -> None:
        seen.append(f"reachable {url}")

    async def identify(url: str) -> ServedIdentity:
        seen.append(f"identify {url}")
        return ServedIdentity(url, ("m",), (), {}, UNKNOWN, UNKNOWN, UNKNOWN)

    monkeypatch.setattr("omniqual.engine.targets.targets.check_reachable", reachable)
    monkeypatch.setattr("omniqual.engine.single_gate.check_reachable", reachable)
    monkeypatch.setattr("omniqual.engine.targets.served_identity.identify_deployment", identify)
    return seen


def only_gate(root: Path, gate_file: str, gate_id: str) -> None:
    """Make the matrix's first row require ``gate_id`` alone, and drop the other rows."""
    (root / "gates" / gate_file).write_text(gate_file_text(gate_id))
    (root / "matrices" / "m.yaml").write_text(
        "name: m\ndefaults: {hardware: cpu, model: m}\nrows:\n"
        f"  - key: {{task: t2i, quantization: none}}\n    recipe: live\n    requires: [{gate_id}]\n"
    )


def gate_file_text(gate_id: str) -> str:
    kinds = {"api": "api_contract", "skip": "skipping", "parity": "reads_contract"}
    params = "params: {contracts_dir: gates/contracts}\n" if gate_id == "api" else ""
    return f"id: {gate_id}\nkind: {kinds[gate_id]}\nversion: 1\n{params}"


def write_contract(root: Path, text: str = CONTRACT) -> Path:
    path = root / "gates" / "contracts" / "m.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def gate_run(*args: str) -> list[str]:
    return ["gate", "run", *args, "--matrix", "matrices/m.yaml"]


def no_runs(root: Path) -> bool:
    runs = root / "runs"
    return not runs.exists() or not any(runs.iterdir())


# --- a skipped gate is a spec error (exit 2), never "all passed" --------------------------------


def test_gate_run_where_the_gate_was_skipped_exits_2(project: Path) -> None:
    only_gate(project, "skip.yaml", "skip")
    result = runner.invoke(app, gate_run("skip", "--target", URL))
    assert result.exit_code == 2, result.output
    assert "skipped" in result.stderr and "no contract for model 'm': planted" in result.stderr


def test_campaign_where_a_required_gate_was_skipped_exits_2(project: Path) -> None:
    only_gate(project, "skip.yaml", "skip")
    (project / "c.yaml").write_text(
        "name: c\nmatrix: matrices/m.yaml\nevidence: runs\nexit_policy: report\n"
    )
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out"])
    assert result.exit_code == 2, result.output
    assert "skip on model=m;task=t2i" in result.stderr
    assert (project / "out" / "report.md").is_file()  # the evidence is still rendered


def test_a_missing_contract_exits_2_before_the_target_is_contacted(
    project: Path, contacted: list[str]
) -> None:
    only_gate(project, "api.yaml", "api")
    result = runner.invoke(app, gate_run("api", "--target", URL))
    assert result.exit_code == 2, result.output
    assert "matrices/m.yaml:" in result.stderr
    assert "gates/contracts/m.yaml" in result.stderr and "model 'm'" in result.stderr
    assert contacted == []
    assert no_runs(project)


def test_a_campaign_with_a_missing_contract_exits_2_before_the_target_is_contacted(
    project: Path, contacted: list[str]
) -> None:
    only_gate(project, "api.yaml", "api")
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out"])
    assert result.exit_code == 2, result.output
    assert "gates/contracts/m.yaml" in result.stderr
    assert contacted == []


def test_any_check_reading_the_contract_gets_it_checked_first(
    project: Path, contacted: list[str]
) -> None:
    only_gate(project, "parity.yaml", "parity")
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out"])
    assert result.exit_code == 2, result.output
    assert "gate 'parity' needs the contract of model 'm'" in result.stderr
    assert contacted == []
    write_contract(project, CONTRACT.replace("requird", "required"))
    assert runner.invoke(app, ["run", "c.yaml", "-o", "out"]).exit_code == 2  # it skips
    assert contacted  # now the spec is sound, so the target is used


# --- a contract typo: exit 2, file:line: field:, nothing contacted, one error per chain --------


def test_a_contract_typo_exits_2_with_its_line_and_no_contact(
    project: Path, contacted: list[str]
) -> None:
    only_gate(project, "api.yaml", "api")
    path = write_contract(project)
    result = runner.invoke(app, gate_run("api", "--target", URL))
    assert result.exit_code == 2, result.output
    assert f"{path}:{TYPO_LINE}: endpoints.0.fields.0.requird: Extra inputs" in result.stderr
    assert contacted == []
    assert "starting target" not in result.output and "errored" not in result.output
    assert no_runs(project)


def test_a_contract_typo_reports_only_the_first_error_of_its_chain(
    project: Path, contacted: list[str]
) -> None:
    only_gate(project, "api.yaml", "api")
    write_contract(project)
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out"])
    assert result.exit_code == 2, result.output
    assert "requird" in result.stderr
    # pydantic's knock-on complaint (the endpoint list is empty once its only item failed)
    assert "at least 1 item" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert contacted == []


def test_a_drafted_contract_with_todos_left_exits_2_before_contact(
    project: Path, contacted: list[str]
) -> None:
    only_gate(project, "api.yaml", "api")
    size = "{name: size, type: size, min: TODO smallest side, max: 1024, source: schema}"
    drafted = CONTRACT.replace("requird: true}", f"required: true}}\n      - {size}")
    path = write_contract(project, drafted)
    result = runner.invoke(app, gate_run("api", "--target", URL))
    assert result.exit_code == 2, result.output
    assert f"{path}:12: endpoints.0.fields.1.min: TODO smallest side" in result.stderr
    assert contacted == []


def test_a_load_mapping_typo_exits_2_before_anything_runs(
    project: Path, contacted: list[str]
) -> None:
    (project / "gates" / "load.yaml").write_text(
        "id: load\nkind: strict_load\nversion: 1\nparams: {mapping: gates/load-mappings/m.yaml}\n"
    )
    (project / "gates" / "load-mappings").mkdir()
    mapping = project / "gates" / "load-mappings" / "m.yaml"
    mapping.write_text("id: m\npipeline_classes: [P]\ncomponentz: {}\n")
    (project / "matrices" / "m.yaml").write_text(
        "name: m\ndefaults: {hardware: cpu, model: m}\nrows:\n"
        "  - key: {task: t2i, quantization: none}\n    recipe: live\n    requires: [load, good]\n"
    )
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out"])
    assert result.exit_code == 2, result.output
    assert f"{mapping}:3: componentz:" in result.stderr
    assert contacted == []
    assert no_runs(project)


# --- errors that say where; URL runs that do not pretend to start anything ---------------------


def test_a_row_selector_matching_nothing_names_the_matrix_searched(project: Path) -> None:
    result = runner.invoke(app, gate_run("good", "--target", "live", "--row", "task=t3"))
    assert result.exit_code == 2, result.output
    assert "no matrix row matches" in result.stderr
    assert "in matrices/m.yaml;" in result.stderr


def test_a_gate_run_against_a_url_does_not_print_starting_target(project: Path) -> None:
    result = runner.invoke(app, gate_run("good", "--target", URL, "--row", "task=t2i"))
    assert result.exit_code == 0, result.output
    assert "starting target" not in result.output and ": starting" not in result.output
    # Stdout is not a terminal here: the plain progress lines are on it, naming the URL.
    assert f"answering at {URL}" in result.stdout


def test_a_campaign_of_url_recipes_does_not_print_starting_target(project: Path) -> None:
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out"])
    assert result.exit_code == 1, result.output  # the planted `bad` gate fails
    assert "starting target" not in result.output and ": starting" not in result.output


def test_only_knock_on_problems_are_dropped() -> None:
    cause = SpecProblem("c.yaml", 11, "endpoints.0.fields.0.requird", "Extra inputs")
    knock_on = SpecProblem("c.yaml", 6, "endpoints", "Tuple should have at least 1 item")
    enclosing_first = SpecProblem("c.yaml", 8, "endpoints.0.probe", "required field missing")
    inner_after = SpecProblem("c.yaml", 9, "endpoints.0.probe.x", "not a declared field")
    other_file = SpecProblem("d.yaml", 2, "endpoints", "Field required")
    document = SpecProblem("c.yaml", None, "", "expected a mapping")
    problems = [cause, knock_on, enclosing_first, inner_after, other_file, document]
    assert first_of_chains(problems) == [cause, enclosing_first, inner_after, other_file, document]
