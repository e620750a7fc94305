"""``model init --probe`` against the fake server (no sockets): the contract gate runs once on the
draft (TODO limits left out), and every contradiction becomes a proposal; nothing is written."""

import asyncio
from pathlib import Path

import pytest
import yaml

from omniqual.domain.outcomes import GateOutcome
from omniqual.engine.model_init.draft import InitRequest, init_model
from omniqual.engine.model_init.probe import probe_contract, provisional
from omniqual.specs.contracts import load_contract
from tests.fakes import FakeConfig, FakeOmni
from tests.fakes.fake_config import FakeFaults
from tests.unit.engine.test_model_init_draft import URL, project, with_version


def test_todo_limits_are_left_out_of_the_probe_and_stated_ones_kept() -> None:
    data = {
        "model": "m", "official": "TODO: x", "endpoints": [{
            "probe": {"prompt": "p", "size": "TODO: pick"},
            "fields": [
                {"name": "size", "type": "size", "min": "TODO: a", "max": "TODO: b",
                 "multiple_of": "TODO: c", "source": "TODO: d"},
                {"name": "n", "type": "int", "min": 1, "max": 10, "source": "schema"},
            ],
        }],
    }  # fmt: skip
    relaxed = provisional(data)
    endpoint = relaxed["endpoints"][0]
    assert endpoint["probe"] == {"prompt": "p"}
    size, n = endpoint["fields"]
    assert "min" not in size and "max" not in size and "multiple_of" not in size
    assert size["unbounded"].startswith("probe") and not size["source"].startswith("TODO")
    assert n == {"name": "n", "type": "int", "min": 1, "max": 10, "source": "schema"}
    assert not relaxed["official"].startswith("TODO")


def probed(tmp_path: Path, faults: FakeFaults) -> tuple[Path, FakeOmni, object]:
    paths = project(tmp_path)
    fake = FakeOmni(FakeConfig(model_name="org/sd3-new", faults=faults))
    transport = with_version(fake, {"version": "0.30.0"})
    request = InitRequest(name="sd3-new", url=URL)
    result, report = asyncio.run(init_model(request, paths, probe=True, transport=transport))
    assert result.written and report is not None
    return result.files.contract, fake, report


def test_the_probe_finds_the_enum_value_the_server_refuses(tmp_path: Path) -> None:
    contract, fake, report = probed(tmp_path, FakeFaults())
    changes = {p.case_id: p for p in report.proposals}  # type: ignore[attr-defined]
    url = changes["images-generations/response_format/enum=url"]
    assert url.expected == "2xx" and url.observed == "400"
    assert "drop 'url'" in url.change
    assert "images-generations/n/above-max" not in changes  # the fake enforces n: no proposal
    assert fake.state.posts_total > 10  # the gate ran for real against the server
    assert "TODO" in contract.read_text()  # the draft was not touched by the probe


def test_accepted_invalid_values_become_deviation_proposals(tmp_path: Path) -> None:
    contract, _, report = probed(tmp_path, FakeFaults(accepts_out_of_range=True))
    assert report.outcome is GateOutcome.FAILED  # type: ignore[attr-defined]
    changes = {p.case_id: p for p in report.proposals}  # type: ignore[attr-defined]
    above = changes["images-generations/n/above-max"]
    assert (above.expected, above.observed) == ("400", "200")
    blocks = report.deviations  # type: ignore[attr-defined]
    block = next(b for b in blocks if "images-generations/n/above-max" in b["cases"])
    assert all(c.startswith("images-generations/n/") for c in block["cases"])  # one per field
    assert block["release"] == "0.30.*" and block["observed_status"] == 200
    assert "/v1/images/generations answers 200, not 400" in block["reason"]
    # Pasted into the (filled-in) contract, the blocks load as declared deviations.
    data = yaml.safe_load(contract.read_text())
    data["deviations"] = list(report.deviations)  # type: ignore[attr-defined]
    data["checkpoint"] = "org/sd3-new@" + "0" * 40
    data["official"] = "omniqual-fakes==0.0.0 the fake's FakeConfig"
    endpoint = data["endpoints"][0]
    endpoint["probe"]["size"] = "64x64"
    for field in endpoint["fields"]:
        if field["name"] == "size":
            field.update(default="64x64", min=16, max=2048, multiple_of=16, misaligned="reject",
                         source="the fake's FakeConfig")  # fmt: skip
        if str(field.get("default", "")).startswith("TODO"):
            del field["default"]  # documentary only: no official pipeline to read it from
    contract.write_text(yaml.safe_dump(data, sort_keys=False))
    assert len(load_contract(contract).deviations) == len(blocks)


def test_a_probe_of_existing_files_rechecks_them_without_writing(tmp_path: Path) -> None:
    contract, fake, _ = probed(tmp_path, FakeFaults())
    before = contract.read_text()
    paths = project(tmp_path / "again")
    paths.gates.joinpath("contracts").mkdir()
    for path in (paths.matrices / "sd3-new.yaml", paths.runners / "sd3-new.yaml"):
        path.write_text("kept: true\n")
    (paths.gates / "contracts" / "sd3-new.yaml").write_text(before)
    request = InitRequest(name="sd3-new", url=URL)
    result, report = asyncio.run(
        init_model(request, paths, probe=True, transport=with_version(fake, None))
    )
    assert not result.written and report is not None
    assert (paths.matrices / "sd3-new.yaml").read_text() == "kept: true\n"
    assert (paths.gates / "contracts" / "sd3-new.yaml").read_text() == before


def test_a_probe_without_a_contract_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="file not found"):
        asyncio.run(probe_contract(URL, tmp_path / "none.yaml", "images-generations"))


def test_an_upload_with_todo_counts_is_not_sent_by_the_probe() -> None:
    endpoint = {
        "probe": {"prompt": "p"},
        "fields": [],
        "inputs": [
            {"field": "image", "min_count": "TODO: a", "max_count": "TODO: b"},
            {"field": "mask", "min_count": 0, "max_count": 1, "probe_count": 0,
             "source": "TODO: c"},
        ],
    }  # fmt: skip
    (kept,) = provisional({"model": "m", "endpoints": [endpoint]})["endpoints"][0]["inputs"]
    assert kept == {"field": "mask", "min_count": 0, "max_count": 1, "probe_count": 0,
                    "source": "probe: TODO"}  # fmt: skip
