"""Prompts, payloads and secrets never reach a report."""

import pytest

from omniqual.report.redact import REDACTED, masked_key, safe_command, safe_text, safe_value


@pytest.mark.parametrize(
    "key", ["prompt", "negative_prompt", "b64_json", "input_image", "api_key", "--api-key",
            "hf_token", "messages", "Authorization"],
)  # fmt: skip
def test_payload_and_secret_keys_are_masked(key: str) -> None:
    assert masked_key(key)


@pytest.mark.parametrize(
    "key", ["image_size", "num_images", "max_tokens", "data_parallel_size", "seed", "width"]
)
def test_ordinary_parameters_stay_visible(key: str) -> None:
    assert not masked_key(key)


def test_nested_values_are_masked_by_key() -> None:
    shown = safe_value({"prompt": "a secret cat", "w": 3, "refs": [{"image": "xyz"}]})
    assert "secret cat" not in shown and "xyz" not in shown
    assert shown.count(REDACTED) == 2 and '"w": 3' in shown


def test_base64_payloads_are_replaced_by_their_length() -> None:
    payload = "iVBORw0KGgo" + "A" * 500
    assert payload not in safe_text(payload)
    assert "511 char" in safe_text(payload)
    assert "300 char" in safe_text("Q" * 300)  # one-letter runs too, not only mixed-case base64
    assert "A" * 120 not in safe_text(f"error near {payload} here")


def test_long_text_is_cut() -> None:
    text = "word " * 100
    assert len(safe_text(text)) < len(text)
    assert safe_text(text).startswith("word word")


def test_secrets_are_masked_as_the_domain_does() -> None:
    assert safe_text("token hf_abcdefghijklmnopqrstuvwxyz used") == "token *** used"
    assert masked_key("HF_TOKEN")


def test_command_masks_prompt_flag_values() -> None:
    line = safe_command(("x", "--prompt", "a fox", "--api-key=k", "--steps", "4"))
    assert line == f"x --prompt {REDACTED} --api-key={REDACTED} --steps 4"
