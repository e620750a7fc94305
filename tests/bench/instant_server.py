"""A minimal keep-alive HTTP/1.1 server that answers every request at once (raw asyncio).

Run: python tests/bench/instant_server.py  -> prints its ephemeral 127.0.0.1 port, then serves.

It stands in for a diffusion server whose inference costs nothing, so a load client's own cost
and pacing are all that is measured. Every request gets the same small JSON body shaped like an
``/v1/images/generations`` answer (one data item); ``/health`` and every other path get it too.
Only Content-Length bodies are understood (the benchmark clients send nothing else).
"""

from __future__ import annotations

import asyncio

_BODY = b'{"created":0,"data":[{"b64_json":"AA=="}]}'
_RESPONSE = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
    + str(len(_BODY)).encode()
    + b"\r\n\r\n"
    + _BODY
)


class _InstantHttp(asyncio.Protocol):
    def __init__(self) -> None:
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            length = 0
            for line in self.buffer[:end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            total = end + 4 + length
            if len(self.buffer) < total:
                return
            self.buffer = self.buffer[total:]
            assert self.transport is not None
            self.transport.write(_RESPONSE)


async def serve() -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(_InstantHttp, "127.0.0.1", 0, backlog=2048)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve())
