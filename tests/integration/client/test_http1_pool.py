"""`Http1Pool` (the bench's issue path) against scripted HTTP/1.1 servers on 127.0.0.1: keep-alive
reuse, every answer framing, a server that drops idle connections, silence, garbage, refusal and
cancellation. Each test runs on both event loops the bench may use."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import uvloop

from omniqual.client.http1_pool import Http1Error, Http1Pool

pytestmark = pytest.mark.integration
LOOPS = {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}
Answer = Callable[[int], bytes | None]  # request number on the connection -> raw answer
BODY = b'{"data":[{"b64_json":"AA=="}]}'


def sized(body: bytes = BODY, extra: bytes = b"") -> bytes:
    return (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
            + str(len(body)).encode() + b"\r\n" + extra + b"\r\n" + body)  # fmt: skip


class Scripted:
    """Answers each request by ``answer``; ``None`` closes the connection without answering."""

    def __init__(self, answer: Answer, *, close_after: int | None = None) -> None:
        self.answer, self.close_after = answer, close_after
        self.connections = 0
        self.requests: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length")), 0)  # fmt: skip
                self.requests.append(head + await reader.readexactly(length))
                raw = self.answer(served)
                served += 1
                if raw is None:
                    break
                writer.write(raw)
                await writer.drain()
                if self.close_after is not None and served >= self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


def run(loop: str, server: Scripted | None, scenario: Callable[[Http1Pool], Awaitable[Any]],
        timeout_s: float = 5.0) -> Any:  # fmt: skip
    async def main() -> Any:
        if server is None:  # a port nobody listens on
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            pool = Http1Pool(f"http://127.0.0.1:{port}", timeout_s=timeout_s)
            return await scenario(pool)
        listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        pool = Http1Pool(f"http://127.0.0.1:{port}/", timeout_s=timeout_s)
        try:
            return await scenario(pool)
        finally:
            await pool.aclose()
            listener.close()

    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        return runner.run(main())


async def post(pool: Http1Pool, body: bytes = b'{"prompt":"x"}') -> Any:
    return await pool.request("POST", "/v1/images/generations", "application/json", body)


@pytest.fixture(params=sorted(LOOPS))
def loop(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_keep_alive_reuses_one_connection_and_sends_a_valid_request(loop: str) -> None:
    server = Scripted(lambda _n: sized())

    async def three(pool: Http1Pool) -> list[Any]:
        return [await post(pool) for _ in range(3)]

    answers = run(loop, server, three)
    assert [(a.status, a.content_type, a.body) for a in answers] == [
        (200, "application/json", BODY)] * 3  # fmt: skip
    assert server.connections == 1
    head, _, body = server.requests[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/images/generations HTTP/1.1\r\n")
    assert b"\r\nContent-Length: 14" in head and body == b'{"prompt":"x"}'


def test_concurrent_requests_each_get_their_own_connection_and_answer(loop: str) -> None:
    server = Scripted(lambda n: sized(b'{"n":%d}' % n))

    async def many(pool: Http1Pool) -> list[Any]:
        return list(await asyncio.gather(*(post(pool) for _ in range(5))))

    answers = run(loop, server, many)
    assert [a.body for a in answers] == [b'{"n":0}'] * 5 and server.connections == 5


def test_chunked_and_close_delimited_answers_are_read_whole(loop: str) -> None:
    chunked = (b"HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ntransfer-encoding: chunked\r\n\r\n"
               b"3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n")  # fmt: skip
    close_delimited = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: audio/wav\r\n\r\nRIFF"
    answers = iter([chunked, close_delimited])
    server = Scripted(lambda _n: next(answers), close_after=2)

    async def two(pool: Http1Pool) -> list[Any]:
        return [await post(pool), await post(pool)]

    first, second = run(loop, server, two)
    assert (first.content_type, first.body) == ("image/png", b"abcdefg")
    assert (second.status, second.content_type, second.body) == (200, "audio/wav", b"RIFF")


def test_a_reused_connection_the_server_dropped_is_retried_once_on_a_fresh_one(loop: str) -> None:
    server = Scripted(lambda _n: sized(), close_after=1)  # closes every idle connection

    async def two(pool: Http1Pool) -> list[Any]:
        first = await post(pool)
        await asyncio.sleep(0.05)  # the close reaches us while the connection is idle ...
        return [first, await post(pool)]

    answers = run(loop, server, two)
    assert [a.status for a in answers] == [200, 200] and server.connections == 2


def test_an_answer_cut_mid_body_is_an_error_not_a_short_body(loop: str) -> None:
    server = Scripted(lambda _n: sized()[:-5], close_after=1)
    with pytest.raises(Http1Error) as error:
        run(loop, server, post)
    assert error.value.kind in {"disconnected", "protocol_error"}


def test_garbage_silence_and_refusal_have_their_own_errors(loop: str) -> None:
    with pytest.raises(Http1Error) as garbage:
        run(loop, Scripted(lambda _n: b"SSH-2.0-OpenSSH\r\n\r\n"), post)
    assert garbage.value.kind == "protocol_error"
    with pytest.raises(TimeoutError):
        run(loop, Scripted(lambda _n: b""), post, timeout_s=0.3)
    with pytest.raises(Http1Error) as refused:
        run(loop, None, post)
    assert refused.value.kind == "connect_error"


def test_a_cancelled_request_does_not_leave_its_connection_for_reuse(loop: str) -> None:
    answers = iter([b"", sized()])  # the first request is never answered
    server = Scripted(lambda _n: next(answers))

    async def cancel_then_send(pool: Http1Pool) -> Any:
        pending = asyncio.ensure_future(post(pool))
        await asyncio.sleep(0.1)
        pending.cancel()
        await asyncio.gather(pending, return_exceptions=True)
        return await post(pool)

    second = run(loop, server, cancel_then_send)
    assert second.status == 200 and server.connections == 2


def test_only_plain_http_origins_are_accepted() -> None:
    with pytest.raises(ValueError, match="http://host"):
        Http1Pool("https://example.invalid")
