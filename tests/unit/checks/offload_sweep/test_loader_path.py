"""Each DLO point's loader path, read from its server log: the host-weight plan accepted (direct
checkpoint mmap) or the ordinary loader with the fallback reason; neither is a silent fallback,
and direct mmap on TP>1, HSDP or online quantization is a path the release must not take
(G4-05, G4-06, DL-07). The path is recorded per point in the sweep block."""

from pathlib import Path
from typing import Any

from omniqual.checks.offload_sweep.loader_path import judge_loader, read_loader_path, uses_dlo
from omniqual.domain.outcomes import GateOutcome
from tests.unit.checks.offload_sweep.test_offload_sweep import params, run

PLAN = ("INFO diffusers_loader.py:793] DLO host-weight plan active (AllGather, checkpoint-mmap): "
        "skipping ordinary materialization for ['transformer.']\n")  # fmt: skip
FALLBACK = ("INFO diffusers_loader.py:817] DLO direct checkpoint mmap unavailable; using "
            "ordinary loader: tensor parallel size 2 is not supported\n")  # fmt: skip
DLO = {"enable-distributed-layerwise-offload": True}


def test_dlo_is_read_from_the_flag_or_the_offload_config() -> None:
    assert uses_dlo(DLO)
    config = '{"mode": "layer", "layer_options": {"dit": {"weight_transfer": "allgather"}}}'
    assert uses_dlo({"diffusion-offload-config": config})
    rank_local = '{"mode": "layer", "layer_options": {"dit": {"resident_layers": 8}}}'
    assert uses_dlo({"diffusion-offload-config": rank_local})
    assert not uses_dlo({"diffusion-offload-config": '{"mode": "layer", "pin_memory": false}'})
    assert not uses_dlo({"enable-layerwise-offload": True})


def test_the_plan_and_the_fallback_are_read_with_their_detail() -> None:
    plan = read_loader_path("noise\n" + PLAN)
    assert (plan.path, plan.detail) == ("mmap", "AllGather, checkpoint-mmap")
    fallback = read_loader_path(FALLBACK)
    assert fallback.path == "ordinary" and "tensor parallel size 2" in fallback.detail


def test_a_dlo_start_with_neither_line_is_a_silent_fallback() -> None:
    silent = judge_loader(DLO, read_loader_path("INFO Layer-wise offloading enabled\n"))
    assert silent.path == "silent"
    assert silent.failure is not None and "neither" in silent.failure


def test_direct_mmap_on_tp2_hsdp_or_online_quant_fails() -> None:
    for extra in ({"tensor-parallel-size": 2}, {"use-hsdp": True}, {"quantization": "fp8"}):
        judged = judge_loader({**DLO, **extra}, read_loader_path(PLAN))
        assert judged.failure is not None and "direct checkpoint mmap" in judged.failure, extra
    tp2 = {**DLO, "tensor-parallel-size": 2}
    assert judge_loader(tp2, read_loader_path(FALLBACK)).failure is None
    assert judge_loader(DLO, read_loader_path(PLAN)).failure is None


def _dlo_params() -> Any:
    return params(repetitions=3, points=[{"name": "resident"},
                  {"name": "dlo", "flags": DLO}], rows={})  # fmt: skip


def test_a_sweep_point_that_fell_back_silently_fails_the_gate(tmp_path: Path) -> None:
    outcome, _, points = run({}, _dlo_params(), logs={"dlo": "INFO ready\n"}, log_dir=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("point 'dlo'" in r and "silent" in r for r in outcome.reasons), outcome.reasons
    assert points["dlo"]["loader_path"]["path"] == "silent"
    assert points["resident"]["loader_path"] is None


def test_a_sweep_point_records_its_loader_path(tmp_path: Path) -> None:
    outcome, _, points = run({}, _dlo_params(), logs={"dlo": FALLBACK}, log_dir=tmp_path)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert points["dlo"]["loader_path"]["path"] == "ordinary"


def test_a_dlo_point_whose_log_cannot_be_read_is_invalid() -> None:
    outcome, _, _ = run({}, _dlo_params())
    assert outcome.outcome is GateOutcome.INVALID
    assert any("point 'dlo'" in r and "log" in r for r in outcome.reasons), outcome.reasons


def test_after_a_dlo_point_the_resident_reference_is_launched_again(tmp_path: Path) -> None:
    # DL-02: DLO output equals resident output, and again after DLO is off and the server restarted.
    outcome, fake, _ = run({}, _dlo_params(), logs={"dlo": FALLBACK}, log_dir=tmp_path)
    assert [r.id.split("--", 1)[1] for r in fake.launched] == ["resident", "dlo", "resident-again"]
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    again = outcome.effective["reference_again"]
    assert isinstance(again, dict) and again["outcome"] == "passed"


def test_a_relaunched_reference_that_answers_otherwise_fails(tmp_path: Path) -> None:
    outcome, _, _ = run({"resident-again": "mutate"}, _dlo_params(), logs={"dlo": FALLBACK},
                        log_dir=tmp_path)  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED
    assert any("relaunched" in r and "resident" in r for r in outcome.reasons), outcome.reasons


def test_a_sweep_without_a_served_dlo_point_launches_no_reference_again() -> None:
    outcome, fake, _ = run({"layerwise-default": "refuse", "layer-nopin-r1": "refuse",
                            "layer-nopin-r2": "refuse"})  # fmt: skip
    assert not any(r.id.endswith("-again") for r in fake.launched)
    assert outcome.effective["reference_again"] is None
