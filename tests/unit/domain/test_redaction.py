"""Secret redaction: what must be masked, and what must survive untouched."""

import base64

import pytest

from omniqual.domain.redaction import (
    MASK,
    is_secret_name,
    redact_command,
    redact_env,
    scrub_text,
)


@pytest.mark.parametrize(
    "name",
    [
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "--api-key",
        "api_key",
        "--token",
        "OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "client_secret",
        "DB_PASSWORD",
        "--password",
        "Authorization",
        "Proxy-Authorization",
        "X-Api-Key",
        "Cookie",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "--max-tokens",
        "--max-num-batched-tokens",
        "--tokenizer",
        "--ssl-keyfile",
        "--kv-cache-dtype",
        "PWD",
        "PATH",
        "--port",
        "--seed",
        "--pass-through",
        "Content-Type",
        "",
    ],
)
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_flag_values_are_masked_in_both_forms() -> None:
    argv = ["vllm", "serve", "m", "--api-key", "abc123", "--hf-token=hf_x", "--seed", "7"]
    assert redact_command(argv) == (
        "vllm", "serve", "m", "--api-key", MASK, "--hf-token=***", "--seed", "7",
    )  # fmt: skip


def test_a_secret_flag_followed_by_another_flag_masks_nothing_else() -> None:
    assert redact_command(["serve", "--token", "--port", "8000"]) == (
        "serve", "--token", "--port", "8000",
    )  # fmt: skip


def test_headers_bearer_and_assignments_are_masked() -> None:
    argv = [
        "curl",
        "-H",
        "Authorization: Bearer sk-live-abcdefghijklmnop",
        "--header",
        "X-Api-Key: 12345",
        "-H",
        "Content-Type: application/json",
        "env",
        "HF_TOKEN=hf_abc",
        "OTHER=visible",
    ]
    assert redact_command(argv) == (
        "curl",
        "-H",
        f"Authorization: {MASK}",
        "--header",
        f"X-Api-Key: {MASK}",
        "-H",
        "Content-Type: application/json",
        "env",
        f"HF_TOKEN={MASK}",
        "OTHER=visible",
    )


def test_url_credentials_and_secret_query_parameters_are_masked() -> None:
    (url,) = redact_command(["https://alice:pa55@example.com:8443/v1?api_key=zz&model=m"])
    assert url == f"https://alice:{MASK}@example.com:8443/v1?api_key={MASK}&model=m"


def test_known_token_shapes_are_masked_without_a_name() -> None:
    token = "hf_" + "A1b2C3d4E5f6G7h8I9j0K1l2"
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"
    assert redact_command(["login", token, jwt, "sk-" + "x" * 24]) == ("login", MASK, MASK, MASK)


def test_ordinary_commands_pass_through_untouched() -> None:
    argv = (
        "vllm", "serve", "Qwen/Qwen-Image", "--omni", "--port", "8091",
        "--max-tokens=5", "--tokenizer", "tok", "--ssl-keyfile", "/etc/key.pem",
        "--dtype", "bfloat16", "-5", "http://127.0.0.1:8091/v1/images/generations",
        "--prompt-file", "/home/u/prompts.txt", "--enable-prefix-caching",
        "/home/user/.cache/huggingface/hub/models/Qwen/snapshots/0123456789abcdef0123456789",
        "a" * 64,
    )  # fmt: skip
    assert redact_command(argv) == argv


def test_redaction_is_idempotent() -> None:
    argv = ["--api-key", "x", "-H", "Authorization: Bearer abcdefghijk", "https://u:p@h/?token=t"]
    once = redact_command(argv)
    assert redact_command(once) == once
    text = scrub_text("Authorization: Basic dXNlcjpwYXNz\npassword=hunter2")
    assert scrub_text(text) == text


def test_env_masks_secret_names_and_scrubs_other_values() -> None:
    env = {
        "HF_TOKEN": "hf_abc",
        "VLLM_API_KEY": "k",
        "HTTPS_PROXY": "http://user:pw@proxy:3128",
        "PWD": "/work/main",
        "CUDA_VISIBLE_DEVICES": "0,1",
    }
    assert redact_env(env) == {
        "HF_TOKEN": MASK,
        "VLLM_API_KEY": MASK,
        "HTTPS_PROXY": f"http://user:{MASK}@proxy:3128",
        "PWD": "/work/main",
        "CUDA_VISIBLE_DEVICES": "0,1",
    }


def test_scrub_text_elides_data_urls_and_base64_payloads() -> None:
    payload = base64.b64encode(bytes(range(256)) * 4).decode()
    text = f'{{"b64_json": "{payload}"}} and <img src="data:image/png;base64,{payload}">'
    scrubbed = scrub_text(text)
    assert payload[:40] not in scrubbed
    assert f"<base64: {len(payload)} chars elided>" in scrubbed
    assert "data:image/png;base64,<" in scrubbed and "chars elided>" in scrubbed


def test_scrub_text_masks_secrets_in_log_lines() -> None:
    log = (
        "INFO request with Authorization: Bearer abcdefghijklmnop\n"
        'DEBUG config {"api_key": "k-123", "model": "m"}\n'
        "INFO connecting to redis://default:hunter2@127.0.0.1:6379\n"
        "INFO sent header Bearer zyxwvutsrqponm to upstream\n"
    )
    scrubbed = scrub_text(log)
    for secret in ("abcdefghijklmnop", "k-123", "hunter2", "zyxwvutsrqponm"):
        assert secret not in scrubbed
    assert '"model": "m"' in scrubbed and "127.0.0.1:6379" in scrubbed
    assert scrubbed.count("\n") == 4


def test_scrub_text_leaves_ordinary_log_text_alone() -> None:
    log = (
        "INFO 12:30:45 Started server process [1234]\n"
        "INFO max_tokens=512 seed=7 model=Qwen/Qwen-Image\n"
        "INFO checkpoint sha256 " + "0123456789abcdef" * 4 + "\n"
        "INFO loading /home/user/.cache/huggingface/hub/models--Qwen--Qwen-Image/snapshots/abc\n"
        "INFO Uvicorn running on http://127.0.0.1:8091 (Press CTRL+C to quit)\n"
        "WARNING the tokenizer has 151643 tokens; bearer of bad news\n"
    )
    assert scrub_text(log) == log
