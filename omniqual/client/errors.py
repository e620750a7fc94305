"""Typed failures of talking to a vLLM-Omni target, and the mapping from httpx's exceptions.

A transport failure (nothing usable came back) is a `ClientError` subclass naming the URL and a
hint; an HTTP error answer is data in `send_raw` and an `ApiError` (in `raw`) only from the
typed calls.
"""

from __future__ import annotations

import socket

import httpx


class ClientError(Exception):
    """Base of every failure raised by `omniqual.client`."""


class TargetUnreachable(ClientError):
    """No connection could be made: refused, DNS failure, connect timeout, unusable URL."""

    def __init__(self, url: str, reason: str, hint: str) -> None:
        super().__init__(f"cannot reach {url}: {reason} (hint: {hint})")
        self.url = url
        self.reason = reason
        self.hint = hint


class TargetTimeout(ClientError):
    """Connected, but the answer did not arrive within the configured time."""

    def __init__(self, url: str, phase: str, timeout_s: float | None) -> None:
        limit = "" if timeout_s is None else f" after {timeout_s:g}s"
        super().__init__(f"{url}: timed out while {phase}{limit}")
        self.url = url
        self.phase = phase
        self.timeout_s = timeout_s


class TargetProtocolError(ClientError):
    """The target answered with something unusable: a dropped connection, broken HTTP,
    a non-JSON body where JSON is required, or JSON that does not fit the expected shape."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: protocol error: {reason}")
        self.url = url
        self.reason = reason


def map_transport_error(exc: httpx.RequestError, url: str, timeout_s: float | None) -> ClientError:
    """Translate one httpx request exception into the matching `ClientError`."""
    if isinstance(exc, httpx.ConnectTimeout):
        return TargetUnreachable(
            url, "connect timed out", "is the host up and is no firewall dropping packets?"
        )
    if isinstance(exc, httpx.ConnectError):
        return _connect_failure(exc, url)
    if isinstance(exc, httpx.UnsupportedProtocol):
        return TargetUnreachable(url, str(exc), "the base URL must start with http:// or https://")
    if isinstance(exc, httpx.ReadTimeout):
        return TargetTimeout(url, "waiting for the response", timeout_s)
    if isinstance(exc, httpx.WriteTimeout):
        return TargetTimeout(url, "sending the request", timeout_s)
    if isinstance(exc, httpx.PoolTimeout):
        return TargetTimeout(url, "waiting for a free connection", timeout_s)
    if isinstance(exc, httpx.TimeoutException):
        return TargetTimeout(url, "talking to the target", timeout_s)
    # RemoteProtocolError (dropped / broken HTTP), ReadError, WriteError, DecodingError, ...
    return TargetProtocolError(url, f"{type(exc).__name__}: {exc or 'no detail'}")


def _connect_failure(exc: httpx.ConnectError, url: str) -> TargetUnreachable:
    """Name the root cause (refused, DNS, ...) buried under httpx's and anyio's wrappers."""
    root: BaseException | None = exc
    seen = 0
    while root is not None and seen < 10:
        if isinstance(root, ConnectionRefusedError):
            return TargetUnreachable(
                url, "connection refused", "is the server running and listening on that port?"
            )
        if isinstance(root, socket.gaierror):
            return TargetUnreachable(
                url, f"DNS lookup failed ({root})", "check the host name in the base URL"
            )
        root = root.__cause__ or root.__context__
        seen += 1
    return TargetUnreachable(
        url,
        f"connection failed ({exc or type(exc).__name__})",
        "is the server running and reachable from this machine?",
    )
