"""The fake server on a real socket: a stdlib threading HTTP/1.1 server on 127.0.0.1:<ephemeral>
that executes `FakeOmni.plan` outcomes, including closing a connection without an answer and
noticing a client that disconnects during simulated work.

stdlib `http.server` rather than an ASGI server because dropping a connection unanswered is
impossible through ASGI (uvicorn then sends a 500 itself).
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_core import Drop, Hang, Reply
from tests.fakes.fake_omni import FakeOmni

_POLL_S = 0.01


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOmni
    connections: set[socket.socket]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes: avoid 40 ms stalls
    server: _Server
    timeout = 30  # an idle keep-alive connection ends its thread eventually

    def setup(self) -> None:
        super().setup()
        self.server.connections.add(self.connection)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.connections.discard(self.connection)

    def log_message(self, format: str, *args: object) -> None:
        """Silent: tests must not print request lines."""

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_DELETE = do_PUT = do_PATCH = do_GET

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _serve(self) -> None:
        fake = self.server.fake
        host, port = self.server.server_address[:2]
        try:
            request = httpx.Request(
                self.command,
                f"http://{host!s}:{port}{self.path}",
                headers=list(self.headers.items()),
                content=self._read_body(),
            )
            outcome = fake.plan(request)
        except Exception as exc:  # a bug or an unparsable request must still get an answer
            with fake.lock:
                fake.state.internal_errors.append(f"{self.command} {self.path}: {exc!r}")
            body = {
                "error": {
                    "message": f"fake internal error: {exc!r}",
                    "type": "Internal Server Error",
                    "param": None,
                    "code": 500,
                }
            }
            self._write(httpx.Response(500, json=body))
            return
        if isinstance(outcome, Drop):
            self.close_connection = True
            return
        if isinstance(outcome, Hang):
            fake.stopped.wait(outcome.seconds)
            self._write(outcome.response)
            return
        self._run(fake, outcome)

    def _run(self, fake: FakeOmni, reply: Reply) -> None:
        started = fake.begin()
        deadline = time.monotonic() + reply.work_s
        while time.monotonic() < deadline and not fake.stopped.is_set():
            if self._client_gone():
                fake.end(reply, started, aborted=True)
                self.close_connection = True
                return
        fake.end(reply, started, aborted=False)
        self._write(reply.response)

    def _client_gone(self) -> bool:
        """Wait one poll tick; True when the peer closed its side (EOF or reset)."""
        readable, _, _ = select.select([self.connection], [], [], _POLL_S)
        if not readable:
            return False
        try:
            gone: bool = self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True
        if not gone:  # bytes of a pipelined request: not a disconnect; do not spin on them
            time.sleep(_POLL_S)
        return gone

    def _write(self, response: httpx.Response) -> None:
        body = response.content
        try:
            self.send_response(response.status_code)
            for name, value in response.headers.items():
                if name.lower() not in {"content-length", "transfer-encoding", "connection"}:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            self.close_connection = True


@contextlib.contextmanager
def serve_fake(fake: FakeOmni | FakeConfig | None = None) -> Iterator[str]:
    """Serve a fake on 127.0.0.1 with an ephemeral port; yields the base URL, e.g.
    `http://127.0.0.1:40123`. Pass a `FakeOmni` to inspect its state afterwards."""
    omni = fake if isinstance(fake, FakeOmni) else FakeOmni(fake)
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = omni
    server.connections = set()
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-omni", daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        omni.stop()
        server.shutdown()
        for conn in list(server.connections):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        thread.join(timeout=5)
