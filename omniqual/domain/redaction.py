"""Secret redaction for commands, environments and log text (pure functions).

What counts as secret is decided by name: a flag, variable, header, query or JSON field whose
name ends in ``TOKEN``/``KEY`` (``HF_TOKEN``, ``--api-key``, ``X-Api-Key``), contains ``SECRET``
or ``PASSWORD``, or is an auth header (``Authorization``, ``Cookie``). Values are also caught by
shape where no name is present: ``Bearer <token>``, URL credentials ``user:pw@``, and well-known
token formats (Hugging Face ``hf_…``, ``sk-…`` keys, JWTs). Redacted values become ``***``.

Redaction is idempotent and errs on the side of hiding: a false positive costs a readable value,
a false negative leaks a credential into evidence that may be published.

Local filesystem paths are not secret, but a published report must not show them either: they
name the user, their home and the layout of the machine. :class:`LocalPaths` turns each into
what a reader can use: a checkpoint directory into the checkpoint's name and sha256
(``sd3-tiny@sha256:0123456789ab``), any other local path into its last component.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

MASK = "***"

_SECRET_LAST_WORDS = frozenset(
    {"TOKEN", "KEY", "APIKEY", "AUTH", "AUTHORIZATION", "COOKIE", "PASS", "PASSWD"}
)
_SECRET_ANY_WORDS = frozenset({"CREDENTIAL", "CREDENTIALS", "PASSPHRASE", "PRIVATEKEY"})
_SECRET_FRAGMENTS = ("SECRET", "PASSWORD")


def is_secret_name(name: str) -> bool:
    """Whether a flag, variable, header or field with this name holds a secret."""
    normalized = re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")
    if not normalized:
        return False
    if any(fragment in normalized for fragment in _SECRET_FRAGMENTS):
        return True
    words = normalized.split("_")
    return words[-1] in _SECRET_LAST_WORDS or any(w in _SECRET_ANY_WORDS for w in words)


_URL_CREDENTIALS = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]*):[^\s@/]*@")
_JSON_FIELD = re.compile(r'"(?P<name>[^"\\]{1,100})"(?P<sep>\s*:\s*)"(?:[^"\\]|\\.)*"')
_HEADER_NAME = re.compile(r"\b(?P<name>[A-Za-z][A-Za-z0-9_-]*)[ \t]*:[ \t]*(?=[^\s])")
_BEARER = re.compile(r"(?i)\b(?P<scheme>bearer)(?P<sep>\s+)[A-Za-z0-9._~+/=-]{8,}")
_ASSIGNMENT = re.compile(r"(?P<name>\b[A-Za-z_][A-Za-z0-9_.-]*)=(?P<value>[^\s&;,'\"]+)")
_KNOWN_TOKENS = re.compile(
    r"\bhf_[A-Za-z0-9]{20,}"
    r"|\bsk-[A-Za-z0-9_-]{20,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
)
_DATA_URL = re.compile(
    r"\bdata:(?P<media>[\w.+-]+/[\w.+-]+)?(?:;[\w=.-]+)*;base64,[A-Za-z0-9+/=_-]+"
)
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{64,}={0,2}")


def _mask_headers(text: str) -> str:
    """``Name: value`` with a secret name (``Authorization: Basic …``): mask to end of line."""
    parts: list[str] = []
    pos = 0
    for match in _HEADER_NAME.finditer(text):
        if match.start() < pos or not is_secret_name(match["name"]):
            continue
        end = text.find("\n", match.end())
        end = len(text) if end < 0 else end
        if text[end - 1 : end] == "\r":
            end -= 1
        parts += [text[pos : match.end()], MASK]
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def _mask_json(match: re.Match[str]) -> str:
    if not is_secret_name(match["name"]):
        return match[0]
    return f'"{match["name"]}"{match["sep"]}"{MASK}"'


def _mask_assignment(match: re.Match[str]) -> str:
    return f"{match['name']}={MASK}" if is_secret_name(match["name"]) else match[0]


def _elide_data_url(match: re.Match[str]) -> str:
    media = match["media"] or "data"
    return f"data:{media};base64,<{len(match[0])} chars elided>"


def _elide_base64(match: re.Match[str]) -> str:
    run = match[0]
    # Base64 of binary data mixes cases and digits and has few slashes; file paths, hex digests
    # and long identifiers do not, and must survive.
    mixed = (
        any(c.isupper() for c in run)
        and any(c.islower() for c in run)
        and any(c.isdigit() for c in run)
    )
    if not mixed or run.count("/") * 12 > len(run):
        return run
    return f"<base64: {len(run)} chars elided>"


def _redact_inline(text: str) -> str:
    """Mask every secret this module recognizes inside one string (without elisions)."""
    text = _URL_CREDENTIALS.sub(rf"\g<head>:{MASK}@", text)
    text = _JSON_FIELD.sub(_mask_json, text)
    text = _mask_headers(text)
    text = _BEARER.sub(rf"\g<scheme>\g<sep>{MASK}", text)
    text = _ASSIGNMENT.sub(_mask_assignment, text)
    return _KNOWN_TOKENS.sub(MASK, text)


def scrub_text(text: str) -> str:
    """Make log text safe to keep: mask secrets, elide data: URLs and long base64 payloads."""
    text = _DATA_URL.sub(_elide_data_url, text)
    text = _redact_inline(text)
    return _BASE64_RUN.sub(_elide_base64, text)


def _flag_name(arg: str) -> str | None:
    if arg.startswith("-") and len(arg) > 1 and not arg[1:2].isdigit():
        return arg.lstrip("-")
    return None


def redact_command(argv: Sequence[str]) -> tuple[str, ...]:
    """argv with secret values masked: ``--api-key X``, ``--token=X``, ``HF_TOKEN=X``,
    ``-H 'Authorization: Bearer X'``, URLs with credentials, and inline payloads elided."""
    redacted: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            mask_next = False
            if not arg.startswith("--"):
                redacted.append(MASK)
                continue
        name = _flag_name(arg)
        if name is not None and "=" in name:
            flag, _, _ = arg.partition("=")
            if is_secret_name(flag.lstrip("-")):
                redacted.append(f"{flag}={MASK}")
                continue
        elif name is not None and is_secret_name(name):
            redacted.append(arg)
            mask_next = True  # the value is the next argument (unless that is another flag)
            continue
        redacted.append(scrub_text(arg))
    return tuple(redacted)


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """Environment variables with secret-named values masked and other values scrubbed."""
    return {
        name: MASK if is_secret_name(name) else scrub_text(value) for name, value in env.items()
    }


# Directories that begin local filesystem paths (never an HTTP route: vLLM's are /v1/..., /health,
# /metrics, /version...). A path under none of them or of the caller's roots is left as it is:
# an API path shown as its last component would read as something else, so the fixed list
# names the usual places of homes, caches, scratch space, mounts and installs instead.
LOCAL_ROOTS = frozenset({
    "home", "root", "Users", "tmp", "var", "private", "opt", "mnt", "media", "srv", "data",
    "scratch", "workspace", "work", "nfs", "lustre", "gpfs", "fsx", "efs", "shared", "storage",
    "models", "checkpoints", "weights", "datasets", "cache", "app", "usr", "etc", "dev", "run",
    "proc", "sys", "snap", "nix", "Volumes", "export", "net", "projects", "workdir", "content",
})  # fmt: skip
_PATH_STOP = r"""\s/\\'"`<>|()\[\]{},;:&"""
_LOCAL_PATH = re.compile(
    # Not the tail of a relative path, a URL, a word or a closing tag; not base64 right after its
    # data: header.
    rf"(?<![\w./~+<-])(?<!;base64,)(?P<path>(?:file://)?(?:~(?=/)|/[^{_PATH_STOP}]+)"
    rf"(?:/[^{_PATH_STOP}]*)*)"
)


def checkpoint_label(path: str, sha256: str) -> str:
    """How a report names a local checkpoint: its directory's name and its sha256's first 12."""
    return f"{PurePosixPath(path.rstrip('/')).name}@sha256:{sha256[:12]}"


@dataclass(frozen=True, slots=True)
class LocalPaths:
    """What a published text may show of the local paths in it (see the module docstring)."""

    roots: tuple[str, ...] = ()
    """Absolute directories beyond :data:`LOCAL_ROOTS` whose paths are local (the user's home,
    the temp directory, the checkout): anything under them is never shown."""
    checkpoints: tuple[tuple[str, str], ...] = ()
    """(checkpoint directory, its label): the directory and paths inside it show the label."""

    @classmethod
    def of(cls, roots: Iterable[str], checkpoints: Iterable[tuple[str, str]]) -> "LocalPaths":
        """Only absolute roots other than ``/`` count; longest checkpoint directories first, so a
        nested one wins over its parent."""
        kept = {r.rstrip("/") for r in roots if r.startswith("/") and r.rstrip("/")}
        ordered = sorted({(p.rstrip("/"), label) for p, label in checkpoints if p.rstrip("/")},
                         key=lambda item: (-len(item[0]), item))  # fmt: skip
        return cls(tuple(sorted(kept)), tuple(ordered))

    def is_local(self, path: str) -> bool:
        """Whether ``path`` (absolute or ``~/``) names a place on a local filesystem."""
        if path.startswith(("~", "file://")):
            return True
        if not path.startswith("/"):
            return False
        if path.split("/", 2)[1] in LOCAL_ROOTS:
            return True
        return any(path == root or path.startswith(root + "/") for root in self.roots)

    def shown(self, path: str) -> str:
        """``path`` as a report shows it (unchanged when it is not local)."""
        bare = path.removeprefix("file://")
        if bare == path and not self.is_local(bare):  # a file: URI is local wherever it points
            return path
        for directory, label in self.checkpoints:
            if bare == directory or bare.startswith(directory + "/"):
                return label + bare[len(directory) :].rstrip("/")
        return PurePosixPath(bare).name or bare.strip("/") or "~"

    def redact(self, text: str) -> str:
        """``text`` with every local path in it shown as :meth:`shown` says."""
        if "/" not in text:
            return text
        return _LOCAL_PATH.sub(lambda m: self.shown(m["path"]), text)
