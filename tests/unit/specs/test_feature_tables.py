"""The feature-table mapping: the shipped file loads, and every mistake is named with its line."""

from pathlib import Path

import pytest

from omniqual.specs.feature_tables import load_feature_tables
from omniqual.specs.source import SpecError

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "matrices" / "vllm-omni-features.yaml"


def test_the_shipped_mapping_loads_in_the_documents_column_order() -> None:
    mapping = load_feature_tables(SHIPPED)
    assert [s.name for s in mapping.sections] == ["ImageGen", "VideoGen", "AudioGen"]
    assert len(mapping.columns) == 11 and mapping.columns[1].label == "⚡Cache-DiT"
    assert mapping.columns[-2].label == "🔄Step Execution"
    lora = mapping.columns[-1]
    assert (lora.label, lora.axis) == ("🔧LoRA Inference", "adapter")
    assert lora.values == ("request-lora",)
    assert len(mapping.pairs) == 14
    assert mapping.matrix_model("Stable-Diffusion-3") == "sd3-tiny"
    assert mapping.matrix_model("Bagel") is None
    assert mapping.doc_name("sd3-tiny") == "Stable-Diffusion-3"


def write(tmp_path: Path, body: str) -> Path:
    (tmp_path / "axes.yaml").write_text((ROOT / "matrices" / "axes.yaml").read_text())
    path = tmp_path / "features.yaml"
    path.write_text(body)
    return path


def problems(tmp_path: Path, body: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_feature_tables(write(tmp_path, body))
    return [str(p) for p in caught.value.problems]


SECTIONS = "sections:\n  - {name: ImageGen, tasks: [t2i]}\n"


def test_unknown_axis_and_value_are_located(tmp_path: Path) -> None:
    found = problems(tmp_path, SECTIONS + (
        "columns:\n"
        "  - {label: A, axis: colour, values: [red]}\n"
        "  - {label: B, axis: dtype, values: [bf16, nope]}\n"
    ))  # fmt: skip
    assert len(found) == 2
    assert ":4: columns.0.axis: unknown axis 'colour' (model, task," in found[0]
    assert ":5: columns.1.values.1: unknown value 'nope' for axis 'dtype'" in found[1]


def test_values_without_axis_duplicate_labels_and_shared_tasks(tmp_path: Path) -> None:
    found = problems(tmp_path, (
        "sections:\n  - {name: ImageGen, tasks: [t2i]}\n  - {name: Other, tasks: [t2i]}\n"
        "columns:\n"
        "  - {label: \"⚡Cache-DiT\", values: [cache_dit]}\n"
        "  - {label: cache dit, axis: cache_policy, values: [cache_dit]}\n"
    ))  # fmt: skip
    text = "\n".join(found)
    assert ":3: sections.1.tasks.0: task 't2i' is in section 'ImageGen' already" in text
    assert ":5: columns.0.values: values need an axis" in text
    assert ":6: columns.1.label: 'cache dit' names columns[0] too" in text


def test_schema_errors_name_the_field(tmp_path: Path) -> None:
    found = problems(tmp_path, SECTIONS + "columns:\n  - {label: A, axs: offload}\n")
    assert any(":4: columns.0.axs: Extra inputs are not permitted" in f for f in found)
    missing = problems(tmp_path, "columns: []\n")
    assert any("sections: Field required" in f for f in missing)


def test_a_column_is_an_axis_or_a_gate_not_both(tmp_path: Path) -> None:
    both = "columns:\n  - {label: LoRA, gate: lora, axis: offload, values: [layerwise]}\n"
    found = problems(tmp_path, SECTIONS + both)
    assert any(":4: columns.0.gate" in p and "not both" in p for p in found)
    bad = problems(tmp_path, SECTIONS + "columns:\n  - {label: Bad, gate: Not A Gate}\n")
    assert any(":4: columns.0.gate" in p for p in bad)
