"""A lean HTTP/1.1 keep-alive connection pool for the bench's issue path.

Why not aiohttp here: ``omniqual bench`` is measured against a benchmark client built on aiohttp
(tests/bench/bench_peer.py), and its goal is a fifth of that client's CPU per request. aiohttp's
per-request machinery (request/response objects, header multidicts, timers, stream readers) is
most of that cost; here a request is one pre-built bytes write and the answer is parsed by
httptools (the C parser uvicorn uses), with one future per request and nothing else.

Scope, deliberately small: one origin, ``http://`` only, Content-Length request bodies, answers
in Content-Length, chunked or close-delimited framing. A request sent on a reused connection the
server had already closed (no answer byte seen) is retried once on a fresh one, as every pooled
client does. A cancelled or timed-out request closes its connection: its answer may still come.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import cast
from urllib.parse import urlsplit

import httptools


@dataclass(frozen=True, slots=True)
class Http1Answer:
    status: int
    content_type: str
    body: bytes


class Http1Error(Exception):
    """The connection failed or the answer was not valid HTTP/1.1; ``kind`` names which."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


Settle = Callable[["Http1Answer | Http1Error"], None]
"""Told once how a request ended: its whole answer, or the error that ended it."""


class Http1Connection(asyncio.Protocol):
    """One keep-alive connection; at most one request in flight (no pipelining). A request's
    end is reported to the ``settle`` callback it was sent with, exactly once, and nothing else
    is allocated for it: callers choose whether that wakes a future or just records."""

    def __init__(self, pool: Http1Pool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.settle: Settle | None = None
        self.chunks: list[bytes] = []
        self.content_type = ""
        self.answered_bytes = False
        self.headers_done = False
        self.framed = False  # Content-Length or chunked: else the body ends with the connection
        self.closed = False
        self.reused = False

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's TCP transport is not an asyncio.Transport subclass, but it has write()
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.answered_bytes = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(Http1Error("protocol_error", "unexpected upgrade"))
        except httptools.HttpParserError as exc:
            self._fail(Http1Error("protocol_error", str(exc)))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool._forget(self)
        settle, self.settle = self.settle, None
        if settle is None:
            return
        if self.headers_done and not self.framed:  # a close-delimited body ends here, whole
            settle(Http1Answer(self.parser.get_status_code(), self.content_type,
                               b"".join(self.chunks)))  # fmt: skip
            return
        kind = "stale_connection" if self.reused and not self.answered_bytes else "disconnected"
        settle(Http1Error(kind, type(exc).__name__ if exc else ""))

    # -- httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"content-type":
            self.content_type = value.decode("latin-1")
        elif name in (b"content-length", b"transfer-encoding"):
            self.framed = True

    def on_headers_complete(self) -> None:
        self.headers_done = True

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        settle = self.settle
        answer = Http1Answer(self.parser.get_status_code(), self.content_type,
                             b"".join(self.chunks))  # fmt: skip
        keep = self.parser.should_keep_alive()
        self.settle, self.chunks, self.content_type = None, [], ""
        self.headers_done = self.framed = False
        # Idle again before the caller hears of it, so its next request can reuse this one.
        if keep and not self.closed:
            self.pool._release(self)
        else:
            self.close()
        if settle is not None:
            settle(answer)

    def send(self, payload: bytes, settle: Settle) -> None:
        """Write one prepared request; ``settle`` hears how it ended."""
        assert self.transport is not None
        self.settle, self.answered_bytes = settle, False
        self.transport.write(payload)

    def _fail(self, error: Http1Error) -> None:
        settle, self.settle = self.settle, None
        self.close()
        if settle is not None:
            settle(error)

    def close(self) -> None:
        """Drop the connection; a request still on it is settled as ``disconnected`` once the
        transport reports the loss (its answer may still come: it is not reusable)."""
        self.closed = True
        self.pool._forget(self)
        if self.transport is not None:
            self.transport.abort()


class Http1Pool:
    """Keep-alive connections to one ``http://host:port`` origin."""

    def __init__(self, base_url: str, *, timeout_s: float = 600.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"Http1Pool needs an http://host[:port] URL, got {base_url!r}")
        self.host, self.port = parts.hostname, parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.timeout_s = timeout_s
        self._authority = f"{self.host}:{self.port}".encode("ascii")
        self._idle: collections.deque[Http1Connection] = collections.deque()
        self._open: set[Http1Connection] = set()

    def head(self, method: str, path: str, content_type: str, length: int) -> bytes:
        """The request head for a body of ``length`` bytes (callers may cache it per shape)."""
        target = (self.prefix + path).encode("ascii")
        return (method.encode("ascii") + b" " + target + b" HTTP/1.1\r\nHost: " + self._authority
                + b"\r\nContent-Type: " + content_type.encode("latin-1")
                + b"\r\nContent-Length: " + str(length).encode("ascii")
                + b"\r\nAccept: */*\r\n\r\n")  # fmt: skip

    def prepare(self, method: str, path: str, content_type: str, body: bytes) -> bytes:
        """The whole request as sent: a caller that repeats a request can keep these bytes."""
        return self.head(method, path, content_type, len(body)) + body

    async def request(self, method: str, path: str, content_type: str, body: bytes) -> Http1Answer:
        """Send one request and wait for its whole answer (raises Http1Error, TimeoutError)."""
        return await self.send(self.prepare(method, path, content_type, body))

    async def send(self, payload: bytes) -> Http1Answer:
        """Send prepared request bytes (see :meth:`prepare`) and wait for the answer."""
        try:
            return await self._exchange(payload)
        except Http1Error as error:
            if error.kind != "stale_connection":
                raise
            return await self._exchange(payload, fresh=True)

    async def _exchange(self, payload: bytes, *, fresh: bool = False) -> Http1Answer:
        connection = None if fresh else self.idle_connection()
        if connection is None:
            connection = await self.connect()
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Http1Answer] = loop.create_future()
        timer = loop.call_later(self.timeout_s, _expire, waiter)
        connection.send(payload, partial(_resolve, waiter))
        try:
            return await waiter
        except BaseException:
            connection.close()  # its answer may still arrive: the connection is not reusable
            raise
        finally:
            timer.cancel()

    def idle_connection(self) -> Http1Connection | None:
        """A kept-alive connection to reuse now, or None (then :meth:`connect`)."""
        while self._idle:
            connection = self._idle.pop()  # the most recently used is the likeliest still open
            if not connection.closed:
                connection.reused = True
                return connection
        return None

    async def connect(self) -> Http1Connection:
        """A new connection (raises Http1Error ``connect_error``, bounded by the timeout)."""
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout_s):  # a black-holed host is a connect_error
                transport, protocol = await loop.create_connection(
                    lambda: Http1Connection(self), self.host, self.port)  # fmt: skip
        except OSError as exc:
            raise Http1Error("connect_error", type(exc).__name__) from exc
        if protocol.transport is None:  # uvloop may call connection_made later
            protocol.connection_made(transport)
        self._open.add(protocol)
        return protocol

    def _release(self, connection: Http1Connection) -> None:
        self._idle.append(connection)

    def _forget(self, connection: Http1Connection) -> None:
        self._open.discard(connection)

    async def aclose(self) -> None:
        for connection in tuple(self._open):
            connection.close()
        self._idle.clear()
        await asyncio.sleep(0)  # let the transports run their connection_lost


def _expire(waiter: asyncio.Future[Http1Answer]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


def _resolve(waiter: asyncio.Future[Http1Answer], result: Http1Answer | Http1Error) -> None:
    if waiter.done():
        return
    if isinstance(result, Http1Error):
        waiter.set_exception(result)
    else:
        waiter.set_result(result)


__all__ = ["Http1Answer", "Http1Connection", "Http1Error", "Http1Pool", "Settle"]
