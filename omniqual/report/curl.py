"""One ``curl`` per task that reproduces a request against a served row.

Built from the row's ``api_mode`` (the endpoint and its encoding) and the served model; the
prompt is always a placeholder and media inputs are local file names the reader supplies: a
report never carries a recorded prompt or payload. The base URL comes from the serve command's
``--host``/``--port`` when it was launched, else from the target URL, else a placeholder.
"""

import json
import shlex
from collections.abc import Mapping, Sequence

PROMPT = "<your prompt>"
"""Never a recorded prompt: the request's shape is the evidence, not its text."""
BASE_PLACEHOLDER = "http://<host>:<port>"


def base_url(argv: Sequence[str], target: str) -> str:
    """Where the server listened: ``--host``/``--port`` of the serve command, else the target's
    URL (``recipe @ http://…`` or a bare URL), else a placeholder."""
    flags: dict[str, str] = {}
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name in ("--host", "--port"):
            flags[name] = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
    if "--port" in flags:
        host = flags.get("--host") or "127.0.0.1"
        host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        return f"http://{host}:{flags['--port']}"
    url = target.rsplit(" @ ", 1)[-1].strip()
    if url.startswith(("http://", "https://")):
        return url.rstrip("/")
    return BASE_PLACEHOLDER


def _json_call(url: str, body: Mapping[str, object]) -> str:
    payload = json.dumps(body, ensure_ascii=False)
    return (
        f"curl -sS -X POST {shlex.quote(url)} \\\n"
        f"  -H 'Content-Type: application/json' \\\n"
        f"  -d {shlex.quote(payload)}"
    )


def _form_call(url: str, fields: Sequence[tuple[str, str]], tail: str = "") -> str:
    parts = [f"curl -sS -X POST {shlex.quote(url)}"]
    parts += [f"-F {shlex.quote(f'{k}={v}')}" for k, v in fields]
    return " \\\n  ".join(parts) + tail


def task_curl(api_mode: str, task: str, model: str, base: str) -> str | None:
    """The request for one (task, api_mode), or None for a mode that has no HTTP request."""
    m: dict[str, str] = {"model": model} if model else {}
    if api_mode == "images-generations":
        return _json_call(f"{base}/v1/images/generations", {**m, "prompt": PROMPT, "n": 1,
                                                            "seed": 0})  # fmt: skip
    if api_mode == "chat-completions":
        content: list[dict[str, object]] = [{"type": "text", "text": PROMPT}]
        if task not in ("t2i", "t2v", "t2a"):
            content.append({"type": "image_url", "image_url": {"url": "<data URL of input.png>"}})
        body = {**m, "messages": [{"role": "user", "content": content}]}
        return _json_call(f"{base}/v1/chat/completions", body)
    if api_mode == "images-edits":
        fields = [*m.items(), ("prompt", PROMPT), ("image", "@input.png")]
        return _form_call(f"{base}/v1/images/edits", fields)
    if api_mode in ("videos-async", "videos-sync"):
        fields = [*m.items(), ("prompt", PROMPT)]
        if task in ("i2v", "ti2v", "v2v"):
            fields.append(("input_reference", "@input.png" if task != "v2v" else "@input.mp4"))
        if api_mode == "videos-sync":
            return _form_call(f"{base}/v1/videos/sync", fields, " \\\n  -o output.mp4")
        poll = (
            "\n# then poll until status is completed, fetch the file and delete the job:\n"
            f'curl -sS {shlex.quote(base + "/v1/videos/")}"$VIDEO_ID"\n'
            f'curl -sS {shlex.quote(base + "/v1/videos/")}"$VIDEO_ID/content" -o output.mp4\n'
            f'curl -sS -X DELETE {shlex.quote(base + "/v1/videos/")}"$VIDEO_ID"'
        )
        return _form_call(f"{base}/v1/videos", fields) + poll
    if api_mode == "audio-generate":
        return _json_call(f"{base}/v1/audio/generate", {**m, "input": PROMPT,
                                                        "response_format": "wav"})  # fmt: skip
    return None
