"""Readiness probes over plain HTTP with the standard library (only omniqual.client uses httpx)."""

import http.client
import urllib.error
import urllib.request


def probe(url: str, timeout_s: float = 2.0) -> int | None:
    """The HTTP status of GET ``url``, or None when nothing answered (refused, reset, timeout)."""
    request = urllib.request.Request(url, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            status: int = response.status
            return status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError):
        return None


def is_ready(url: str, timeout_s: float = 2.0) -> bool:
    return probe(url, timeout_s) == 200
