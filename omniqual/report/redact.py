"""What a report may show of free-form record values: prompts, payloads and secrets never appear.

Secrets are handled by ``omniqual.domain.redaction`` (applied again here: a report may be
published). On top of that a report hides what is not secret but must not be reproduced either:
prompts and media payloads in the free-form ``requested``/``effective`` blobs and in commands,
base64 runs of any shape, and overly long free text.
"""

import json
import re

from pydantic import JsonValue

from omniqual.domain.redaction import MASK, is_secret_name, redact_command, scrub_text

REDACTED = MASK
TEXT_LIMIT = 200
"""Longer free text is cut: a report quotes records, it does not reproduce payloads."""

_MASKED_WORD = re.compile(
    r"prompt|b64|base64|payload|secret|passw|credential|cookie|authorization|api_?key|"
    r"(^|_)token$",
)
_MEDIA_KEY = re.compile(
    r"^(input_|reference_|ref_|init_|source_|mask_)?"
    r"(image|images|video|videos|audio|mask|media|file|content|data|messages)(_url|_urls|_b64)?$"
)
_BASE64ISH = re.compile(r"^(data:[^,]*,)?[A-Za-z0-9+/_=-]{64,}$")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{120,}")


def masked_key(key: str) -> bool:
    """Keys whose values a report never shows (prompts, media payloads, credentials)."""
    normal = key.strip().lstrip("-").lower().replace("-", "_")
    return is_secret_name(key) or bool(_MASKED_WORD.search(normal) or _MEDIA_KEY.match(normal))


def safe_text(text: str, limit: int = TEXT_LIMIT) -> str:
    """Free text from a record with secrets masked, base64 runs removed and the length bounded."""
    text = scrub_text(text)
    if _BASE64ISH.match(text.strip()):
        return f"[{len(text)} characters of encoded data omitted]"
    cleaned = _BASE64_RUN.sub(lambda m: f"[{len(m.group(0))} characters omitted]", text)
    if len(cleaned) > limit:
        return cleaned[:limit] + f"… [{len(cleaned) - limit} more characters]"
    return cleaned


def safe_value(value: JsonValue, key: str = "") -> str:
    """One parameter value as short display text (JSON for nested values), masked where needed."""
    if key and masked_key(key):
        return REDACTED
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        inner = {k: _masked_tree(v, k) for k, v in sorted(value.items())}
        return safe_text(json.dumps(inner, sort_keys=True, ensure_ascii=False))
    if isinstance(value, list):
        return safe_text(json.dumps([_masked_tree(v, "") for v in value], ensure_ascii=False))
    return json.dumps(value)


def _masked_tree(value: JsonValue, key: str) -> JsonValue:
    if key and masked_key(key):
        return REDACTED
    if isinstance(value, dict):
        return {k: _masked_tree(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_masked_tree(v, "") for v in value]
    if isinstance(value, str) and _BASE64ISH.match(value.strip()):
        return f"[{len(value)} characters of encoded data omitted]"
    return value


def safe_command(argv: tuple[str, ...]) -> str:
    """A recorded argv as one shell-like line, with the values of prompt/secret flags masked."""
    parts: list[str] = []
    mask_next = False
    for arg in redact_command(argv):
        flag, eq, _ = arg.partition("=")
        if mask_next:
            shown = REDACTED
        elif arg.startswith("-") and eq and masked_key(flag) and not arg.endswith(MASK):
            shown = f"{flag}={REDACTED}"
        else:
            shown = safe_text(arg)
        mask_next = arg.startswith("-") and not eq and masked_key(arg)
        parts.append(json.dumps(shown, ensure_ascii=False) if re.search(r"\s", shown) else shown)
    return " ".join(parts)
