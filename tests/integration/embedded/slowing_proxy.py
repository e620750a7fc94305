"""A reverse proxy that makes a live server slower by a known share: every generation answer
(a POST) is held back by ``factor`` times the time the server took for it, so a server behind
it looks ``1 + factor`` times as slow to any client while doing exactly the same work. Reads
and health checks pass straight through. Given field names (``drops``), it also removes them
from every JSON request body on the way in: a served path that loses a parameter (the
offline-parity gate's fault).

Used as the perf gate's regression fault: ``omniqual gate run perf --target PROXY_URL
--server-pid PID`` judges the slowed server by URL, with its process tree still read on the
host. Run alone::

    python -m tests.integration.embedded.slowing_proxy --upstream http://127.0.0.1:8000 \
        --factor 0.3    # prints the loopback URL it listens on
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import ClientSession, ClientTimeout, web

# Headers the proxy must not copy: hop-by-hop ones and the ones aiohttp sets from the body.
_DROPPED = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length",
                      "content-encoding", "host", "upgrade"})  # fmt: skip


def _copied(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in _DROPPED}


@dataclass
class Held:
    """What the proxy held back, summed over every answer (seconds)."""

    seconds: float = 0.0


HELD = web.AppKey("held", Held)
_SESSION = web.AppKey("session", ClientSession)


def _dropped(body: bytes, drops: frozenset[str]) -> bytes:
    """``body`` without the top-level ``drops`` fields when it is a JSON object, else as it is."""
    if not drops or not body:
        return body
    try:
        doc = json.loads(body)
    except ValueError:
        return body
    if not isinstance(doc, dict):
        return body
    return json.dumps({k: v for k, v in doc.items() if k not in drops}).encode("utf-8")


def proxy_app(upstream: str, factor: float, drops: frozenset[str] = frozenset()) -> web.Application:
    """The proxy as an aiohttp application; ``app[HELD]`` sums every hold."""
    app = web.Application(client_max_size=1 << 30)
    app[HELD] = Held()  # set before start-up: holds add to it, never replace it

    async def session_ctx(app: web.Application) -> AsyncIterator[None]:
        async with ClientSession(timeout=ClientTimeout(total=None)) as session:
            app[_SESSION] = session
            yield

    async def forward(request: web.Request) -> web.Response:
        session = request.app[_SESSION]
        body = _dropped(await request.read(), drops)
        started = time.perf_counter()
        async with session.request(request.method, upstream + request.rel_url.raw_path_qs,
                                   data=body or None, headers=_copied(request.headers),
                                   allow_redirects=False) as answer:  # fmt: skip
            payload = await answer.read()
            status, headers = answer.status, _copied(answer.headers)
        took = time.perf_counter() - started
        if request.method == "POST" and factor > 0:
            request.app[HELD].seconds += factor * took
            await asyncio.sleep(factor * took)
        return web.Response(status=status, body=payload, headers=headers)

    app.cleanup_ctx.append(session_ctx)
    app.router.add_route("*", "/{tail:.*}", forward)
    return app


@asynccontextmanager
async def slowing_proxy(
    upstream: str, factor: float, drops: frozenset[str] = frozenset()
) -> AsyncIterator[str]:
    """The proxy on an ephemeral loopback port for the block; yields its URL."""
    runner = web.AppRunner(proxy_app(upstream.rstrip("/"), factor, drops), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def _serve_until_killed(upstream: str, factor: float) -> None:
    async with slowing_proxy(upstream, factor) as url:
        print(url, flush=True)
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="The server's base URL.")
    parser.add_argument("--factor", type=float, default=0.3,
                        help="Hold each answer back by this times its own time.")  # fmt: skip
    args = parser.parse_args()
    asyncio.run(_serve_until_killed(args.upstream, args.factor))


if __name__ == "__main__":
    main()
