"""The order the skill promotes rows in, held at load time at each row's file and line: online
FP8 enters a chain of parents as the DiT-only row on its baseline (G3-04), an attention backend
as a candidate of the dense SDPA row at a named shape (G2-07, G2-09), and no row key holds a
wildcard (G2-09). What a parent must have passed first is compile's (tests/unit/compile)."""

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
FLOOR = ["api-contract", "strict-load", "reference-parity"]
FP8 = {"quantization": "fp8-online-dit"}


def _load(tmp_path: Path, rows: list[dict[str, object]], base: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    (tmp_path / "axes.yaml").write_text(AXES.read_text(encoding="utf-8"), encoding="utf-8")
    doc = {"name": "p", "defaults": {"execution": "serial/1", "shape_schedule": "default",
           "attention_backend": "sdpa", "packed_layout": "padded", "cache_policy": "none",
           "quantization": "none", "offload": "resident", "topology": "1-device",
           "hardware": "cpu-x86_64-2core-avx2", "dtype": "bf16"},
           "rows": [{"key": {**BASE, **(base or {})}, "requires": FLOOR}, *rows]}  # fmt: skip
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


def test_fp8_enters_as_the_resident_dit_only_row(tmp_path: Path) -> None:
    offload = {"offload": "layerwise"}
    off = _row(offload, requires=["parity"])
    # FP8 added to an offload row: the combination came before the resident FP8 row.
    combo = _row({**offload, **FP8}, offload, requires=["parity"])
    text = _problems(tmp_path, [off, combo])
    assert "p.yaml:" in text and "rows.2.parent_row" in text
    assert "resident DiT-only FP8" in text and "G3-04" in text
    # The same combination as a candidate of the resident FP8 row loads.
    resident = _row(FP8, requires=["parity"])
    assert _load(tmp_path, [off, resident, _row({**offload, **FP8}, FP8, requires=["parity"])])


def test_fp8_of_every_component_comes_after_the_dit_only_row(tmp_path: Path) -> None:
    everything = _row({"quantization": "fp8-online-all"}, requires=["parity"])
    assert "as fp8-online-dit" in _problems(tmp_path, [everything])
    after = _row({"quantization": "fp8-online-all"}, FP8, requires=["parity"])
    assert _load(tmp_path, [_row(FP8, requires=["parity"]), after])
    text = _problems(tmp_path, [], {"quantization": "fp8-online-all"})
    assert "rows.0.key.quantization" in text


def test_an_attention_backend_is_a_candidate_of_dense_sdpa_at_a_named_shape(
    tmp_path: Path,
) -> None:
    shape = {"shape_schedule": "1024x1024/28"}
    flash = {"attention_backend": "flash-attn", **shape}
    default_shape = _row({"attention_backend": "flash-attn"}, requires=["parity"])
    text = _problems(tmp_path, [default_shape])
    assert "rows.1.key" in text and "shape_schedule" in text
    at_shape = _row(flash, shape, requires=["parity"])
    assert _load(tmp_path, [at_shape], shape)
    # A backend as a baseline has no dense reference to be compared with.
    text = _problems(tmp_path, [], flash)
    assert "rows.0" in text and "sdpa" in text


def test_a_wildcard_in_a_row_key_is_refused(tmp_path: Path) -> None:
    text = _problems(tmp_path, [], {"shape_schedule": "*"})
    assert "rows.0.key.shape_schedule" in text and "wildcard" in text


def test_the_shipped_matrix_keeps_the_promotion_order() -> None:
    gates = load_gates(ROOT / "gates", load_catalog(AXES), ROOT)
    assert load_matrix(ROOT / "matrices" / "embedded-cpu.yaml", dict(gates)).rows


def test_a_producer_row_is_in_process_and_a_served_row_has_a_transport(tmp_path: Path) -> None:
    producer = {"api_mode": "offline", "output_transport": "raw-float-local"}
    assert _load(tmp_path, [], producer)
    served_producer = {"output_transport": "raw-float-local"}
    text = _problems(tmp_path, [], served_producer)
    assert "rows.0.key.output_transport" in text and "producer" in text
    offline_bytes = {"api_mode": "offline"}
    assert "rows.0.key.api_mode" in _problems(tmp_path, [], offline_bytes)


def test_public_streaming_is_its_own_claim(tmp_path: Path) -> None:
    buffered = {"api_mode": "streaming"}
    text = _problems(tmp_path, [], buffered)
    assert "rows.0.key" in text and "streaming" in text and "b64-json" in text
    assert _load(tmp_path, [], {"api_mode": "streaming", "output_transport": "ws-chunks"})


def test_fp8_of_the_text_encoder_or_the_vae_is_a_row_of_its_own(tmp_path: Path) -> None:
    dit = _row(FP8, requires=["parity"])
    te = _row({"quantization": "fp8-online-te"}, FP8, requires=["parity"])
    vae = _row({"quantization": "fp8-online-vae"}, FP8, requires=["parity"])
    assert len(_load(tmp_path, [dit, te, vae]).rows) == 4
    unscoped = _row({"quantization": "fp8-online"}, FP8, requires=["parity"])
    text = _problems(tmp_path, [dit, unscoped])
    assert "rows.2.key.quantization" in text and "component" in text


def test_a_prequantized_checkpoint_is_its_own_lane_not_an_ablation(tmp_path: Path) -> None:
    swapped = _row({"quantization": "fp8-prequantized"}, requires=["parity"])
    text = _problems(tmp_path, [swapped])
    assert "rows.1.parent_row" in text and "own" in text and "G3-08" in text
    lane = {"key": {**BASE, "quantization": "fp8-prequantized"}, "requires": FLOOR}
    assert _load(tmp_path, [lane])
    worded = {**lane, "note": "an FP8 ablation of the dense checkpoint"}
    text = _problems(tmp_path, [worded])
    assert "rows.1.note" in text and "ablation" in text


def test_the_backend_a_server_picks_without_a_flag_is_a_baseline(tmp_path: Path) -> None:
    # `vllm serve --omni` without an attention flag: what `model init` drafts for a new model.
    assert _load(tmp_path, [], {"attention_backend": "platform-default"})


@pytest.mark.parametrize("words", ["Production-ready on CPU.", "ready for production",
                                   "day-0 ready", "production ready once fp8 lands"])
def test_a_row_that_calls_itself_production_ready_is_refused(tmp_path: Path, words: str) -> None:
    text = _problems(tmp_path, [_row({"dtype": "fp32"}, requires=["parity"], note=words)])
    assert "rows.1.note" in text and "G8-16" in text and "derived" in text


def test_a_row_that_says_what_was_measured_loads(tmp_path: Path) -> None:
    note = "Served at 64x64 on CPU; production use needs the GPU rows."
    assert _load(tmp_path, [_row({"dtype": "fp32"}, requires=["parity"], note=note)])
