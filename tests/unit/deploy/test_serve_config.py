"""The normalized serve configuration: same configuration, same hash; changed flag, new hash."""

import json
from pathlib import Path

import pytest

from omniqual.deploy.serve_config import parse_serve_argv, serve_config, serve_config_sha256

# Checkpoint locations differ between hosts: only the directory name may reach the hash.
BASE = ["vllm", "serve", "/host-a/checkpoints/sd3-tiny-0123456789ab", "--omni"]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (["--max-num-seqs", "2"], ["--max_num_seqs=2"]),
        (["--tensor-parallel-size", "2"], ["-tp", "2"]),
        (["--ulysses-degree", "2"], ["--usp=2"]),
        (["--quantization", "fp8"], ["-q", "fp8"]),
        (["--request-batch-max-wait-ms", "50"], ["--request-batch-max-wait-ms", "50.0"]),
        (
            ["--diffusion-offload-config", '{"mode":"layer","components":["dit"]}'],
            ["--diffusion-offload-config", '{"components": ["dit"], "mode": "layer"}'],
        ),
        (
            ["--step-execution", "--enable-cpu-offload"],
            ["--enable_cpu_offload", "--step_execution"],
        ),
        (["--dlo-no-use-allgather"], ["--no-dlo-use-allgather"]),
        # Defaults configure nothing: written out or left out, the configuration is the same.
        (["--cache-backend", "none", "--max-num-seqs", "1", "--dtype", "auto"], []),
        (["--request-batch-max-wait-ms", "0", "--cfg-parallel-size", "1"], []),
        # Where it listens is not how it serves.
        (["--host", "127.0.0.1", "--port", "8000"], ["--port", "9", "--host", "0.0.0.0"]),
    ],
)  # fmt: skip
def test_the_same_configuration_written_differently_hashes_the_same(
    one: list[str], other: list[str]
) -> None:
    assert serve_config_sha256([*BASE, *one]) == serve_config_sha256([*BASE, *other])


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (["--max-num-seqs", "2"], ["--max-num-seqs", "4"]),
        ([], ["--step-execution"]),
        ([], ["--dlo-no-use-allgather"]),
        (["--cache-backend", "cache_dit"], ["--cache-backend", "tea_cache"]),
        (["--diffusion-offload-config", '{"pin_memory":false}'],
         ["--diffusion-offload-config", '{"pin_memory":true}']),
        (["--dtype", "float32"], ["--dtype", "bfloat16"]),
        (["--flow-shift", "5"], ["--flow-shift", "12"]),
        (["--some-future-flag", "1"], []),  # unknown flags are never dropped as defaults
    ],
)  # fmt: skip
def test_a_changed_flag_changes_the_hash(one: list[str], other: list[str]) -> None:
    assert serve_config_sha256([*BASE, *one]) != serve_config_sha256([*BASE, *other])


def test_the_model_is_its_checkpoint_directory_not_where_this_machine_keeps_it() -> None:
    here = serve_config(BASE)
    there = serve_config(["vllm", "serve", "/host-b/ckpt/sd3-tiny-0123456789ab/", "--omni"])
    assert here.model == "sd3-tiny-0123456789ab" and here.sha256 == there.sha256
    other = serve_config(["vllm", "serve", "/host-b/ckpt/wan-t2v-tiny-0123456789ab", "--omni"])
    assert other.sha256 != here.sha256
    hub = parse_serve_argv(["vllm", "serve", "--model", "Qwen/Qwen-Image", "--omni"])
    assert hub.model == "Qwen/Qwen-Image"


def test_values_are_canonical_and_the_form_is_readable() -> None:
    parsed = parse_serve_argv(
        [*BASE, "--boundary-ratio", "0.875", "--max-num-seqs=2", "--enforce_eager",
         "--diffusion-quantization-config", '{"b": 1.0, "a": [true]}', "--hsdp-shard-size", "-1"]
    )  # fmt: skip
    assert dict(parsed.flags) == {
        "omni": True,
        "boundary-ratio": 0.875,
        "max-num-seqs": 2,
        "enforce-eager": True,
        "diffusion-quantization-config": {"a": [True], "b": 1},
    }
    assert json.loads(serve_config(BASE).canonical_json())["flags"] == {"omni": True}


def test_a_deploy_config_counts_by_its_content(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "dp2.yaml", tmp_path / "b" / "dp2.yaml"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text("data_parallel_size: 2\n")
    same = [serve_config_sha256([*BASE, "--deploy-config", str(p)]) for p in (first, second)]
    assert same[0] == same[1]
    second.write_text("data_parallel_size: 4\n")
    assert serve_config_sha256([*BASE, "--deploy-config", str(second)]) != same[0]


def test_recipe_environment_counts_but_the_harness_own_does_not() -> None:
    plain = serve_config_sha256(BASE, {"OMNIQUAL_CPU_PLATFORM": "1"})
    assert serve_config_sha256(BASE, {"OMNIQUAL_CPU_PLATFORM": "1", "TMPDIR": "scratch/x"}) == plain
    changed = {"OMNIQUAL_CPU_PLATFORM": "1", "DIFFUSION_ATTENTION_BACKEND": "FLASH_ATTN"}
    assert serve_config_sha256(BASE, changed) != plain
