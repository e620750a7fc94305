"""What tells one running server from another beyond the model it serves.

Two servers of one model at one release still differ in their API (the sha256 of the
``GET /openapi.json`` body FastAPI serves, the same bytes for the life of a process) and, where
``/metrics`` exposes the standard ``process_start_time_seconds``, in when their process started:
a restart is another deployment. Both are asked without creating work; an unanswered question
is None, and the rest of the identity still stands.
"""

import hashlib
from datetime import UTC, datetime

from omniqual.client.client import OmniClient
from omniqual.client.errors import ClientError

START_TIME_METRIC = "process_start_time_seconds"


async def openapi_sha256(client: OmniClient) -> str | None:
    """sha256 of the OpenAPI document exactly as served (None: not answered)."""
    try:
        raw = await client.send_raw("GET", "/openapi.json")
    except ClientError:
        return None
    return hashlib.sha256(raw.body).hexdigest() if raw.ok and raw.body else None


async def started_at(client: OmniClient) -> datetime | None:
    """When the server process started, as its ``/metrics`` says (None: not exposed)."""
    try:
        text = await client.metrics_text()
    except ClientError:
        return None
    return start_time_of(text)


def start_time_of(metrics: str) -> datetime | None:
    """``process_start_time_seconds`` from Prometheus text, as a UTC time."""
    for line in metrics.splitlines():
        if not line.startswith((f"{START_TIME_METRIC} ", f"{START_TIME_METRIC}{{")):
            continue
        # The sample is the first token after the labels (a timestamp may follow it).
        sample = line.rsplit("}", 1)[1] if "{" in line else line[len(START_TIME_METRIC) :]
        try:
            return datetime.fromtimestamp(float(sample.split()[0]), UTC)
        except (ValueError, IndexError, OverflowError, OSError):
            return None
    return None
