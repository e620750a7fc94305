"""G0-20: a prompt carrying a unique canary token, and an image whose base64 carries one, never
reach the server's log. A canary in the log fails the gate naming which canary it was and
nothing of the request around it; no captured log leaves the check absent (said so), and a log
that cannot be read makes the gate invalid."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import GateRun, run_gate
from served_fake import ServedFake, ServedScript

from omniqual.domain.outcomes import GateOutcome
from tests.fakes import FakeConfig

CASE = "side-effects/log-canaries"
_CHAT_WITH_IMAGE = """\
schema_version: 1
model: fake-omni
official: omniqual-fakes==0.0.0 tests/fakes FakeConfig defaults
checkpoint: omniqual bundled fake-omni (a fake server, no checkpoint)
target_release: "0.30.0"
endpoints:
  - api_mode: chat-completions
    task: ti2i
    probe: {prompt: a red cube, size: 64x64, num_inference_steps: 2, seed: 7}
    fields:
      - {name: prompt, type: str, required: true}
      - {name: size, type: size, min: 16, max: 512, multiple_of: 16, source: FakeConfig sides}
      - {name: num_inference_steps, type: int, min: 1, max: 200, source: FakeConfig steps}
      - {name: seed, type: int, source: fake routes, unbounded: the fake takes any integer seed}
    inputs:
      - {field: image, min_count: 0, max_count: 1, probe_count: 1, media_types: [image/png]}
    output: {kind: image, size_field: size}
out_of_scope_endpoints:
  - {path: /v1/images/generations, why: this test holds chat alone}
"""


def _case(run: GateRun) -> object:
    return {c.id: c for c in run.outcome.cases}[CASE]


def _reasons(run: GateRun) -> str:
    return "\n".join(run.outcome.reasons)


def _run(fake_config: FakeConfig, log: Path | None, modes: list[str], **script: bool) -> GateRun:
    fake = ServedFake(fake_config, ServedScript(log_path=log, **script))
    return run_gate(fake, api_modes=modes, temp_dirs=[str(fake_config.temp_dir)], log_path=log)


def test_clean_log_passes_and_the_canary_requests_are_recorded(
    fake_config: FakeConfig, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    run = _run(fake_config, log, ["images-generations", "audio-generate"])
    assert run.outcome.outcome is GateOutcome.PASSED, _reasons(run)
    assert _case(run).outcome is GateOutcome.PASSED  # type: ignore[attr-defined]
    ids = {c.id for c in run.outcome.cases}
    assert {"images-generations/canary", "audio-generate/canary"} <= ids
    # The canary reached the server (its access line is in the log), never the log itself.
    assert "POST /v1/images/generations" in log.read_text()


def test_prompt_in_the_log_fails_naming_the_canary_not_the_prompt(
    fake_config: FakeConfig, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    run = _run(fake_config, log, ["images-generations"], logs_prompts=True)
    assert run.outcome.outcome is GateOutcome.FAILED
    text = _reasons(run)
    token = re.search(r"omniqual-canary-[0-9a-f]{16}", text)
    assert token is not None and "prompt" in text, text
    assert token.group(0) in log.read_text()
    # Nothing of the request beyond the token: not the probe's prompt words, not the log line.
    assert "a red cube" not in text and "INFO request" not in text
    case = _case(run)
    assert case.outcome is GateOutcome.FAILED  # type: ignore[attr-defined]
    assert "a red cube" not in case.note  # type: ignore[attr-defined]


def test_base64_of_an_image_in_the_log_fails(fake_config: FakeConfig, tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "fake-omni.yaml").write_text(_CHAT_WITH_IMAGE)
    log = tmp_path / "server.log"
    fake = ServedFake(fake_config, ServedScript(log_path=log, logs_image_urls=True))
    run = run_gate(
        fake,
        contracts_dir=tmp_path / "contracts",
        temp_dirs=[str(fake_config.temp_dir)],
        log_path=log,
    )
    assert run.outcome.outcome is GateOutcome.FAILED
    text = _reasons(run)
    assert "base64" in text and "chat-completions/canary" in text, text
    assert "data:image/png;base64," not in text and "iVBOR" not in text


def test_raw_upload_bytes_in_the_log_fail(fake_config: FakeConfig, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    run = _run(fake_config, log, ["images-edits"], logs_uploads=True)
    assert run.outcome.outcome is GateOutcome.FAILED
    assert "images-edits/canary" in _reasons(run) and "upload" in _reasons(run)


def test_without_a_captured_log_the_check_is_absent_and_says_so(fake_config: FakeConfig) -> None:
    run = _run(fake_config, None, ["images-generations"])
    case = _case(run)
    assert case.outcome is GateOutcome.SKIPPED  # type: ignore[attr-defined]
    assert "no captured server log" in case.note  # type: ignore[attr-defined]
    assert run.outcome.outcome is GateOutcome.PASSED, _reasons(run)
    assert not any(c.id.endswith("/canary") for c in run.outcome.cases)


def test_a_log_that_cannot_be_read_is_invalid(fake_config: FakeConfig, tmp_path: Path) -> None:
    log = tmp_path / "gone" / "server.log"
    run = run_gate(
        ServedFake(fake_config),
        api_modes=["images-generations"],
        temp_dirs=[str(fake_config.temp_dir)],
        log_path=log,
    )
    assert run.outcome.outcome is GateOutcome.INVALID
    assert f"{CASE} not checked" in _reasons(run) and str(log) in _reasons(run)
