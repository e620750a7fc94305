"""A vLLM-Omni perf config is held to what the harness at the target revision accepts: its task
names, the endpoint each task family resolves to, real media for an image-conditioned task and
a pre-serialized ``extra_params`` in a video case's ``--extra-body`` (BS-02, BS-03, G8-14)."""

import json
from pathlib import Path

import pytest

from omniqual.specs.source import SpecError
from omniqual.specs.vllm_omni_perf import load_perf_config

SHIPPED = Path(__file__).parents[2] / "data" / "vllm-omni-perf" / "test_sd3_tiny_vllm_omni.json"


def _config(tmp_path: Path, case: dict[str, object], **test: object) -> Path:
    path = tmp_path / "test_model_vllm_omni.json"
    entry = {"test_name": "t", "server_params": {"model": "m"},
             "benchmark_params": [{"name": "c", **case}], **test}  # fmt: skip
    path.write_text(json.dumps([entry]), encoding="utf-8")
    return path


def _problems(path: Path) -> str:
    with pytest.raises(SpecError) as caught:
        load_perf_config(path)
    return "\n".join(str(p) for p in caught.value.problems)


def test_the_shipped_config_loads() -> None:
    assert load_perf_config(SHIPPED)[0].benchmark_params[0].task == "t2i"


def test_a_task_the_harness_does_not_resolve_is_refused(tmp_path: Path) -> None:
    text = _problems(_config(tmp_path, {"task": "v2v", "dataset-path": "clips/"}))
    assert "0.benchmark_params.0.task" in text and "'v2v'" in text
    assert "t2v" in text  # the accepted set is named


def test_an_endpoint_of_another_task_family_is_refused(tmp_path: Path) -> None:
    text = _problems(
        _config(tmp_path, {"task": "t2v"}, benchmark_endpoint="/v1/images/generations")
    )
    assert "0.benchmark_endpoint" in text and "t2v" in text and "/v1/videos" in text


@pytest.mark.parametrize(("endpoint", "task"), [
    ("v1/images/generations", "t2i"), ("openai", "t2i"), ("vllm-omni", "t2i"),
    ("/v1/chat/completions", "t2i"), ("/v1/videos", "t2v"), (None, "t2v"), (None, "t2i"),
])  # fmt: skip
def test_an_endpoint_of_the_tasks_family_loads(
    tmp_path: Path, endpoint: str | None, task: str
) -> None:
    extra = {} if endpoint is None else {"benchmark_endpoint": endpoint}
    assert load_perf_config(_config(tmp_path, {"task": task}, **extra))


def test_the_legacy_backend_key_is_read_too(tmp_path: Path) -> None:
    text = _problems(_config(tmp_path, {"task": "t2i"}, benchmark_backend="/v1/videos"))
    assert "0.benchmark_backend" in text


@pytest.mark.parametrize("task", ["i2v", "i2i", "ti2v", "ti2i"])
def test_an_image_conditioned_task_without_media_is_refused(tmp_path: Path, task: str) -> None:
    text = _problems(_config(tmp_path, {"task": task, "dataset": "random"}))
    assert "0.benchmark_params.0.dataset" in text and "placeholder" in text


@pytest.mark.parametrize("media", [
    {"dataset": "vbench"}, {"dataset": "trace", "dataset-path": "t.jsonl"},
    {"dataset-path": "images/"}, {"num-input-images": 1},
])  # fmt: skip
def test_an_image_conditioned_task_with_media_loads(
    tmp_path: Path, media: dict[str, object]
) -> None:
    assert load_perf_config(_config(tmp_path, {"task": "i2v", **media}))


def test_a_nested_extra_params_in_a_video_extra_body_is_refused(tmp_path: Path) -> None:
    body = json.dumps({"extra_params": {"task": "t2v"}})
    text = _problems(_config(tmp_path, {"task": "t2v", "extra-body": body}))
    assert "0.benchmark_params.0.extra-body" in text and "pre-serialize" in text


def test_a_dict_extra_body_is_read_as_its_json(tmp_path: Path) -> None:
    text = _problems(_config(tmp_path, {"task": "t2v", "extra-body": {"extra_params": ["x"]}}))
    assert "0.benchmark_params.0.extra-body" in text


def test_a_pre_serialized_extra_params_loads(tmp_path: Path) -> None:
    body = json.dumps({"extra_params": json.dumps({"task": "t2v"})})
    assert load_perf_config(_config(tmp_path, {"task": "t2v", "extra-body": body}))


def test_an_image_task_may_nest_its_json_extra_body(tmp_path: Path) -> None:
    # The chat-completions backend sends JSON: a nested object is what it expects.
    body = json.dumps({"extra_params": {"true_cfg_scale": 4.0}})
    assert load_perf_config(_config(tmp_path, {"task": "t2i", "extra-body": body}))


def test_an_extra_body_that_is_not_a_json_object_is_refused(tmp_path: Path) -> None:
    text = _problems(_config(tmp_path, {"task": "t2v", "extra-body": "{not json"}))
    assert "0.benchmark_params.0.extra-body" in text and "JSON object" in text
