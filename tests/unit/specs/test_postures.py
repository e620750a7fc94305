"""A matrix row that combines features is held to the combination's default posture at load
time, at its file and line: refused-only combinations, extra gates a candidate combination
needs, and step/N only after its step/1 row (SX-10, SX-12, CD-15, G4-14, DL-06, DL-10)."""

from pathlib import Path

import pytest
import yaml

from omniqual.specs.gates import load_gates
from omniqual.specs.matrix import load_catalog, load_matrix
from omniqual.specs.source import SpecError

ROOT = Path(__file__).resolve().parents[3]
AXES = ROOT / "matrices" / "axes.yaml"
BASE = {"model": "m", "task": "t2i", "api_mode": "images-generations",
        "output_transport": "b64-json"}  # fmt: skip
FLOOR = ["api-contract", "strict-load", "reference-parity", "isolation", "abort", "fault-injection"]
"""A baseline's floor and the gates the DLO posture adds (some parents here offload with DLO)."""


def _load(tmp_path: Path, rows: list[dict[str, object]], base: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    (tmp_path / "axes.yaml").write_text(AXES.read_text(encoding="utf-8"), encoding="utf-8")
    parent = {**BASE, **(base or {})}
    doc = {"name": "p", "defaults": {"execution": "serial/1", "shape_schedule": "default",
           "attention_backend": "sdpa", "packed_layout": "padded", "cache_policy": "none",
           "quantization": "none", "offload": "resident", "topology": "1-device",
           "hardware": "cpu-x86_64-2core-avx2", "dtype": "bf16"},
           "rows": [{"key": parent, "requires": FLOOR}, *rows]}  # fmt: skip
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return load_matrix(path)


def _row(
    change: dict[str, str], parent: dict[str, str] | None = None, **spec: object
) -> dict[str, object]:
    return {"key": {**BASE, **change}, "parent_row": {**BASE, **(parent or {})}, **spec}


def _problems(
    tmp_path: Path, rows: list[dict[str, object]], base: dict[str, str] | None = None
) -> str:
    with pytest.raises(SpecError) as caught:
        _load(tmp_path, rows, base)
    return "\n".join(str(p) for p in caught.value.problems)


STEP1 = _row({"execution": "step/1"}, requires=["parity"])


def test_cache_dit_with_step_execution_may_only_be_refused(tmp_path: Path) -> None:
    both = {"execution": "step/1", "cache_policy": "cache_dit"}
    text = _problems(tmp_path, [STEP1, _row(both, {"execution": "step/1"}, requires=["parity"])])
    assert "p.yaml:" in text and "rows.2.unsupported_by" in text
    assert "Cache-DiT + step execution" in text
    assert _load(tmp_path, [STEP1, _row(both, {"execution": "step/1"},
                                        unsupported_by=["fails-fast"])])  # fmt: skip


def test_hsdp_with_dlo_allgather_may_only_be_refused(tmp_path: Path) -> None:
    hsdp = {"topology": "hsdp"}
    row = _row({**hsdp, "offload": "dlo-allgather"}, hsdp, requires=["parity"],
               unsupported_by=["fails-fast"])  # fmt: skip
    text = _problems(tmp_path, [row], hsdp)
    assert "HSDP + DLO AllGather" in text and "rows.1.unsupported_by" in text
    refused = _row({**hsdp, "offload": "dlo-allgather"}, hsdp, unsupported_by=["fails-fast"])
    assert _load(tmp_path, [refused], hsdp)


def test_dlo_allgather_refuses_online_quantizers_but_fp8(tmp_path: Path) -> None:
    dlo = {"offload": "dlo-allgather"}
    int8 = _row({**dlo, "quantization": "int8"}, dlo, requires=["parity"])
    text = _problems(tmp_path, [int8], dlo)
    assert "other than per-tensor FP8" in text
    held = ["parity", "isolation", "abort", "fault-injection"]
    fp8 = _row({**dlo, "quantization": "fp8-online-dit"}, dlo, requires=held)
    assert _load(tmp_path, [fp8], dlo)


def test_direct_mmap_beyond_one_device_may_only_be_refused(tmp_path: Path) -> None:
    tp2 = {"topology": "tp2"}
    row = _row({**tp2, "offload": "direct-mmap"}, tp2, requires=["parity"])
    assert "direct checkpoint mmap" in _problems(tmp_path, [row], tp2)


def test_cache_dit_with_online_fp8_needs_the_cache_tiers_too(tmp_path: Path) -> None:
    fp8 = {"quantization": "fp8-online-dit"}
    row = _row({**fp8, "cache_policy": "cache_dit"}, fp8, requires=["parity"])
    text = _problems(tmp_path, [row], fp8)
    assert "rows.1.requires" in text and "Cache-DiT + online FP8" in text
    assert "requires cache-tiers too" in text
    ok = _row(
        {**fp8, "cache_policy": "cache_dit"},
        fp8,
        requires=["parity", "cache-tiers", "fault-injection", "isolation"],
    )
    assert _load(tmp_path, [ok], fp8)


def test_cache_dit_with_dlo_needs_cache_tiers_and_abort(tmp_path: Path) -> None:
    dlo = {"offload": "dlo-no-allgather"}
    limited = {"limitation": "x", "requires": ["parity"], "rejection": ["fails-fast"]}
    gates = ["parity", "cache-tiers", "abort", "isolation", "fault-injection"]
    row = _row({**dlo, "cache_policy": "cache_dit"}, dlo, requires=gates, limited=limited)
    text = _problems(tmp_path, [row], dlo)
    assert "rows.1.limited.requires" in text and "Cache-DiT + DLO" in text
    assert "cache-tiers, abort too" in text
    assert "rows.1.requires:" not in text


def test_step_n_comes_after_its_step_1_row(tmp_path: Path) -> None:
    direct = _row({"execution": "step/2"}, requires=["parity", "isolation"])
    text = _problems(tmp_path, [direct])
    assert "rows.1.parent_row" in text and "execution=step/1" in text
    no_isolation = _row({"execution": "step/2"}, {"execution": "step/1"}, requires=["parity"])
    assert "requires isolation too" in _problems(tmp_path, [STEP1, no_isolation])
    after = _row({"execution": "step/2"}, {"execution": "step/1"},
                 requires=["parity", "isolation"])  # fmt: skip
    assert _load(tmp_path, [STEP1, after])


def test_the_shipped_matrix_keeps_every_posture() -> None:
    gates = load_gates(ROOT / "gates", load_catalog(AXES), ROOT)
    assert load_matrix(ROOT / "matrices" / "embedded-cpu.yaml", dict(gates)).rows


def test_a_cache_dit_row_is_held_to_fault_injection_and_isolation(tmp_path: Path) -> None:
    # CD-03, CD-05, CD-12: after a fault or a cancel the next request has its own policy;
    # CD-11: interleaved and concurrent requests each get their own output.
    cache = {"cache_policy": "cache_dit"}
    text = _problems(tmp_path, [_row(cache, requires=["parity", "cache-tiers"])])
    assert "rows.1.requires" in text and "Cache-DiT" in text
    assert "requires fault-injection, isolation too" in text
    gates = ["parity", "cache-tiers", "fault-injection", "isolation"]
    assert _load(tmp_path, [_row(cache, requires=gates)])


def test_a_dlo_row_is_held_to_isolation_abort_and_faults(tmp_path: Path) -> None:
    # DL-03: concurrent DLO requests match their solo output; incompatible ones are refused.
    dlo = {"offload": "dlo-no-allgather"}
    text = _problems(tmp_path, [_row(dlo, requires=["parity"])])
    assert "requires isolation, abort, fault-injection too" in text
    held = _row(dlo, requires=["parity", "isolation", "abort", "fault-injection"])
    assert _load(tmp_path, [held])


def test_a_data_parallel_row_is_held_to_isolation_and_a_soak(tmp_path: Path) -> None:
    # G4-13: concurrent replicas under load must not hang (an accidental WORLD rendezvous).
    dp = {"topology": "dp2"}
    text = _problems(tmp_path, [_row(dp, requires=["parity"])])
    assert "data parallel" in text and "requires isolation, soak too" in text
    assert _load(tmp_path, [_row(dp, requires=["parity", "isolation", "soak"])])
