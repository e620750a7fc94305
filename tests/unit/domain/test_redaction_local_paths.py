"""Local paths in text a report may publish: a checkpoint by its name and sha256, any other
local path by its last component; routes, URLs and relative paths stay as they are."""

import pytest

from omniqual.domain.redaction import LocalPaths, checkpoint_label

SHA = "ab12" * 16
CHECKPOINT = "/home/alice/.cache/omniqual/checkpoints/9f3e/sd3-tiny"
PATHS = LocalPaths.of(["/nonstandard/bob", "/", "relative/dir"],
                      [(CHECKPOINT + "/", checkpoint_label(CHECKPOINT, SHA))])  # fmt: skip


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"vllm serve {CHECKPOINT} --omni", "vllm serve sd3-tiny@sha256:ab12ab12ab12 --omni"),
        (f"read {CHECKPOINT}/vae/config.json", "read sd3-tiny@sha256:ab12ab12ab12/vae/config.json"),
        (f"{CHECKPOINT}-old/x.bin", "x.bin"),  # a sibling with the same prefix is not inside it
        ("--model=/models/flux", "--model=flux"),
        ("HF_HOME=/data/hf", "HF_HOME=hf"),
        ("PATH=/usr/bin:/home/u/bin", "PATH=bin:bin"),
        ("evidence in /tmp/pytest-1/run-a/", "evidence in run-a"),
        ("cache ~/.cache/omniqual/x", "cache x"),
        ("open file:///srv/models/q.safetensors", "open q.safetensors"),
        ("see '/nonstandard/bob/notes.txt'", "see 'notes.txt'"),
        ("(/Users/carol/w.yaml)", "(w.yaml)"),
    ],
)
def test_local_paths_are_named_not_shown(text: str, shown: str) -> None:
    assert PATHS.redact(text) == shown
    assert PATHS.redact(shown) == shown  # idempotent


@pytest.mark.parametrize(
    "text",
    [
        "POST /v1/images/generations answered 400",
        "http://127.0.0.1:8091/v1/images/generations",
        "https://huggingface.co/root/tmp/resolve/main",
        "runs/run-1/journal.jsonl#r-1",
        "../../tmp/evidence/run-1/artifacts/abc",
        "execution=serial/1;topology=1-device",
        "~1.5 s at 3/4 load",
        "</var></data>",
        "data:image/jpeg;base64,/tmp9j/4AAQSkZJRgABAQ",
        "/nonstandardx/bob/notes.txt",
    ],
)
def test_routes_urls_and_relative_paths_are_left_alone(text: str) -> None:
    assert PATHS.redact(text) == text


def test_only_absolute_roots_other_than_slash_count() -> None:
    assert PATHS.roots == ("/nonstandard/bob",)
    assert LocalPaths().redact("/nonstandard/bob/x") == "/nonstandard/bob/x"
