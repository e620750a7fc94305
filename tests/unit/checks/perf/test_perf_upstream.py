"""vLLM-Omni perf configs as input: a case becomes the gate's work, and the result carries the
runner's result-template fields."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from omniqual.checks.perf import PerfCheck, PerfParams
from omniqual.checks.perf.upstream import params_from_case
from omniqual.domain.axes import RowKey
from omniqual.specs.source import SpecError
from omniqual.specs.vllm_omni_perf import load_perf_config, select_case, template_fields
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_omni import FakeOmni
from tests.unit.checks.perf.test_perf_gate import TEST_CPU
from tests.unit.loadgen.conftest import _run_virtual

DATA = Path(__file__).parents[3] / "data" / "vllm-omni-perf"
CONFIG = DATA / "test_sd3_tiny_vllm_omni.json"


def test_a_case_becomes_the_gates_work() -> None:
    test, case = select_case(load_perf_config(CONFIG), "test_sd3_tiny_cpu/96x96_steps3")
    params = params_from_case(PerfParams(), case)
    shape = params.shapes[0]
    assert (shape.width, shape.height, shape.steps) == (96, 96, 3)
    assert (params.requests, params.concurrency, params.arrival_rps) == (6, 2, None)
    fields = template_fields(test, case, hardware="cpu-x86_64-2core-avx2", commit_sha="abc",
                             build_url=None)  # fmt: skip
    assert fields["Hardware"] == "cpu-x86_64-2core-avx2" and fields["compile"] == "false"
    assert fields["resolution"] == "96x96" and fields["upstream_baseline"] == {"latency_mean": 0.5}


def test_an_unknown_case_names_the_known_ones() -> None:
    with pytest.raises(SpecError, match="test_sd3_tiny_cpu/64x64_steps2"):
        select_case(load_perf_config(CONFIG), "nope/none")


def test_a_malformed_config_names_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            [
                {
                    "test_name": "t",
                    "server_params": {"model": "m"},
                    "benchmark_params": [{"name": "x", "num-prompts": 0}],
                }
            ]
        )
    )
    with pytest.raises(SpecError, match=r"0\.benchmark_params\.0\.num-prompts"):
        load_perf_config(bad)


def test_the_gate_runs_the_configs_case_and_writes_its_template(tmp_path: Path) -> None:
    fake = FakeOmni(FakeConfig(image_work_s=0.1))
    ctx, harness = context("perf", "images-generations", fake=fake, root=DATA.parents[2])
    ctx = replace(ctx, row=RowKey((*ctx.row.items, ("hardware", "cpu-x86_64-2core-avx2"))))
    params = PerfParams(vllm_omni_config=str(CONFIG.relative_to(DATA.parents[2])),
                        baselines_dir=str(tmp_path), max_repetitions=3)  # fmt: skip
    outcome = _run_virtual(
        PerfCheck(cpu_class=lambda: TEST_CPU, fingerprint=lambda: {"host": "t"}).run(ctx, params)
    )
    doc = json.loads(harness.sink.blobs["perf-result.json"])
    assert doc["test_name"] == "test_sd3_tiny_cpu" and doc["Cache"] == "none"
    assert doc["benchmark_params"]["num-prompts"] == 4
    assert doc["result"]["completed_requests"] == 12  # 3 measured repetitions of 4
    assert doc["environment"] == {"host": "t"}
    assert "no baseline" in outcome.reasons[0]
