"""Send one case and collect what came back: the answer, the media it produced (for the async
video path: poll the job, fetch its content, then delete it) and a record of every HTTP exchange
for the raw-responses artifact (status, content type, size, time; never the bytes)."""

from dataclasses import dataclass, field

from omniqual.checks.api_contract.cases import Case
from omniqual.checks.api_contract.outputs import extract_images
from omniqual.checks.api_contract.wire import build_request
from omniqual.client import ClientError, OmniClient, RawResponse


@dataclass(frozen=True, slots=True)
class ExchangeRecord:
    case_id: str
    method: str
    path: str
    status: int
    content_type: str
    size: int
    elapsed_s: float

    @classmethod
    def of(cls, case_id: str, raw: RawResponse) -> "ExchangeRecord":
        path = raw.path if raw.path.count("/") <= 3 else raw.path.rsplit("/", 1)[0] + "/…"
        return cls(
            case_id,
            raw.method,
            path,
            raw.status,
            raw.content_type,
            len(raw.body),
            round(raw.elapsed_s, 4),
        )


@dataclass(slots=True)
class Exchange:
    response: RawResponse
    media: list[bytes] = field(default_factory=list)
    media_type: str = ""
    problem: str | None = None
    """Why no media could be had from a 2xx answer (job failed, content missing, bad body)."""
    records: list[ExchangeRecord] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Timeouts:
    request_s: float
    job_s: float
    poll_interval_s: float


async def run_case(client: OmniClient, case: Case, timeouts: Timeouts) -> Exchange:
    """Raises only ``ClientError`` (transport); every HTTP answer is data."""
    wire = build_request(case)
    if wire.uses_json:
        raw = await client.send_raw(
            wire.method, wire.path, json=wire.json, timeout_s=timeouts.request_s
        )
    else:
        raw = await client.send_raw(
            wire.method,
            wire.path,
            data=wire.data,
            files=list(wire.files) or None,
            timeout_s=timeouts.request_s,
        )
    exchange = Exchange(raw, records=[ExchangeRecord.of(case.id, raw)])
    if raw.ok:
        await _collect_media(client, case, exchange, timeouts)
    return exchange


async def _collect_media(
    client: OmniClient, case: Case, exchange: Exchange, timeouts: Timeouts
) -> None:
    raw = exchange.response
    exchange.media_type = raw.content_type
    if case.api_mode in ("images-generations", "images-edits", "chat-completions"):
        exchange.media, exchange.problem = extract_images(raw.body, raw.content_type)
    elif case.api_mode == "videos-async":
        await _async_video(client, case, exchange, timeouts)
    else:
        exchange.media = [raw.body]


def job_id(raw: RawResponse) -> str | None:
    try:
        doc = raw.json()
    except ClientError:
        return None
    value = doc.get("id") if isinstance(doc, dict) else None
    return value if isinstance(value, str) and value else None


async def _async_video(
    client: OmniClient, case: Case, exchange: Exchange, timeouts: Timeouts
) -> None:
    video_id = job_id(exchange.response)
    if video_id is None:
        exchange.problem = "the job answer carries no id"
        return
    try:
        polled = await client.wait_video(
            video_id, interval_s=timeouts.poll_interval_s, timeout_s=timeouts.job_s
        )
        if polled.final.status != "completed":
            message = polled.final.error.message if polled.final.error else ""
            exchange.problem = f"job ended {polled.final.status}: {(message or '')[:160]}"
            return
        content = await client.send_raw(
            "GET", f"/v1/videos/{video_id}/content", timeout_s=timeouts.request_s
        )
        exchange.records.append(ExchangeRecord.of(case.id, content))
        if not content.ok:
            exchange.problem = f"GET content answered HTTP {content.status}"
            return
        exchange.media, exchange.media_type = [content.body], content.content_type
    except ClientError as exc:
        exchange.problem = f"job {video_id}: {type(exc).__name__}: {str(exc)[:160]}"
    finally:
        await _delete_quietly(client, case, exchange, video_id)


async def _delete_quietly(
    client: OmniClient, case: Case, exchange: Exchange, video_id: str
) -> None:
    try:
        deleted = await client.send_raw("DELETE", f"/v1/videos/{video_id}", timeout_s=30)
        exchange.records.append(ExchangeRecord.of(case.id, deleted))
    except ClientError:
        pass  # cleanup is best effort; a job left behind shows up in the job-list check
