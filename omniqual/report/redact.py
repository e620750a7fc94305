"""What a report may show of free-form record values: prompts, payloads, secrets and local
paths never appear.

Secrets are handled by ``omniqual.domain.redaction`` (applied again here: a report may be
published). On top of that a report hides what is not secret but must not be reproduced either:
prompts and media payloads in the free-form ``requested``/``effective`` blobs and in commands,
base64 runs of any shape, overly long free text, and the paths of the machine it was made on
(``report_paths``: checkpoints by name and sha256, anything else by its last component).
"""

import dataclasses
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar, cast

from pydantic import JsonValue

from omniqual.domain.provenance import Provenance
from omniqual.domain.redaction import (
    MASK,
    LocalPaths,
    checkpoint_label,
    is_secret_name,
    redact_command,
    scrub_text,
)

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
        # A cut must not leave half a path that no later pass recognizes: paths go first (by
        # their last component; a text short enough to be shown whole keeps its paths for the
        # report's pass, which names a checkpoint by its sha256 too).
        cleaned = without_local_paths(cleaned)
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


_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_ROOT_VARIABLES = ("OMNIQUAL_HOME", "HF_HOME", "XDG_CACHE_HOME")
"""Environment variables naming local directories a record may mention (beyond home and temp)."""
CHECKOUT = Path(__file__).resolve().parents[2]
"""The checkout (or install prefix) omniqual runs from: its absolute path is local too."""


def _local_roots() -> list[str]:
    """The user's home, the temp and working directories, the checkout and omniqual's caches."""
    roots = [str(CHECKOUT)] + [os.environ.get(name, "") for name in _ROOT_VARIABLES]
    where: Callable[[], object]
    for where in (Path.home, tempfile.gettempdir, Path.cwd):
        try:
            roots.append(str(where()))
        except (OSError, RuntimeError, KeyError):  # no home entry, a working dir deleted
            continue
    # A symlinked home or temp dir (/tmp -> /private/tmp) may be recorded either way.
    return roots + [os.path.realpath(r) for r in roots if r]


def report_paths(provenances: Iterable[Provenance] = ()) -> LocalPaths:
    """The local paths a report made on this host hides, with the local checkpoints the records
    name (``Provenance.model`` with a known ``checkpoint_sha256``) shown by name and sha256.

    A directory recorded with two different checkpoint hashes (rebuilt between runs) shows its
    name alone: a text mentioning it cannot say which build it meant, and the revisions table
    lists each hash beside its results."""
    labels: dict[str, set[str]] = {}
    for p in provenances:
        sha = p.checkpoint_sha256 or ""
        if p.model and p.model.startswith(("/", "~/")) and _SHA256.match(sha):
            labels.setdefault(p.model.rstrip("/"), set()).add(sha)
    checkpoints = [(path, checkpoint_label(path, shas.pop()))
                   for path, shas in labels.items() if len(shas) == 1]  # fmt: skip
    return LocalPaths.of(_local_roots(), checkpoints)


def without_local_paths(text: str, paths: LocalPaths | None = None) -> str:
    """Rendered report text with no local path left (the last net under every renderer)."""
    return (paths or report_paths()).redact(text)


View = TypeVar("View")


def view_without_local_paths(view: View, paths: LocalPaths) -> View:
    """A frozen view-model (dataclasses, tuples, dicts of strings) with every string redacted:
    each format drawn from it (Markdown, HTML, JSON, CSV) shows the same redacted text."""
    return cast(View, _redacted(view, paths))


def _redacted(value: object, paths: LocalPaths) -> object:
    if isinstance(value, str):
        return paths.redact(value)
    if isinstance(value, tuple):
        return tuple(_redacted(v, paths) for v in value)
    if isinstance(value, dict):
        return {_redacted(k, paths): _redacted(v, paths) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _redacted(getattr(value, f.name), paths)
                   for f in dataclasses.fields(value) if f.init}  # fmt: skip
        return dataclasses.replace(value, **changes)
    return value
