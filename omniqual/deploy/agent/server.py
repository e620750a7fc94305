"""Serving an :class:`AgentService` over HTTP with the standard library's threaded server.

Each request is read whole (a body only with ``Content-Length``, bounded), handed to the
service and answered with its JSON. The access log names method, path and status only: never a
header, so never the token.
"""

import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from omniqual.deploy.agent.service import MAX_BODY_BYTES, AgentService, Answer

logger = logging.getLogger(__name__)


class _Handler(BaseHTTPRequestHandler):
    server_version = "omniqual-agent"
    protocol_version = "HTTP/1.1"
    service: AgentService  # set on the per-server subclass

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._answer(Answer(413, b'{"schema_version":1,"error":"body too large"}'))
            self.close_connection = True
            return
        body = self.rfile.read(length) if length > 0 else b""
        try:
            answer = self.service.handle(method, self.path, self.headers.get("Authorization"),
                                         body)  # fmt: skip
        except Exception:
            logger.exception("agent request %s %s failed", method, self.path.split("?")[0])
            answer = Answer(500, b'{"schema_version":1,"error":"the agent failed to answer"}')
        self._answer(answer)

    def _answer(self, answer: Answer) -> None:
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        if answer.status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="omniqual-agent"')
        self.end_headers()
        self.wfile.write(answer.body)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        logger.info("%s %s -> %s", self.command, self.path.split("?")[0], code)

    def log_message(self, format: str, *args: object) -> None:
        logger.debug("agent: " + format, *args)


class _Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class AgentServer:
    """The service listening on ``host:port`` (port 0: an ephemeral one) until ``close``."""

    def __init__(self, service: AgentService, host: str = "127.0.0.1", port: int = 0) -> None:
        handler = type("AgentHandler", (_Handler,), {"service": service})
        server = _Server6 if ":" in host else ThreadingHTTPServer
        self._http = server((host, port), handler)
        self._http.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._http.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{f'[{host}]' if ':' in host else host}:{port}"

    def serve_forever(self) -> None:
        self._http.serve_forever(poll_interval=0.2)

    def start(self) -> "AgentServer":
        self._thread = threading.Thread(target=self.serve_forever, name="agent", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving (from any thread but the one in ``serve_forever``) and free the port."""
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join()
        self._http.server_close()
