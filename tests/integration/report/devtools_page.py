"""Load one local HTML file in headless Chromium and record what the page did.

Chromium comes from the system's packages (``.ci/install-browser.sh``) and is driven over the
DevTools protocol on a pipe (``--remote-debugging-pipe``: commands on fd 3, replies on fd 4,
each message JSON ended by a NUL byte), so no browser-automation package is needed.

Requests are recorded per page session, including every frame and worker the page starts
(auto-attached and paused until their network events are enabled). The browser's own
background traffic (clock sync, sign-in probes) belongs to no page and is not counted: a
browser-wide network log would mix it in with what the report did.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

# Debian and Fedora name the package's binary chromium, older Ubuntu chromium-browser.
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)
TIMEOUT_S = 60.0
MAX_SCREENSHOT_HEIGHT = 12_000


def find_browser() -> str | None:
    """OMNIQUAL_BROWSER if set, else the first known Chromium name on PATH."""
    configured = os.environ.get("OMNIQUAL_BROWSER")
    names = (configured,) if configured else BROWSER_NAMES
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass(frozen=True)
class PageVisit:
    """What one page load left behind."""

    url: str
    probe: Any
    """The value of the probe expression, evaluated in the page once the network went idle."""
    requests: tuple[str, ...]
    """URLs the page or its frames and workers asked for, except its own document and data:."""
    screenshot: bytes


class DevToolsPipe:
    """The browser end of --remote-debugging-pipe: send commands, collect replies and events."""

    def __init__(self, to_browser: BinaryIO, from_browser: BinaryIO) -> None:
        self._out = to_browser
        self._in = from_browser
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._out.write(json.dumps(message).encode() + b"\0")
        self._out.flush()
        return self._next_id

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str = ""
    ) -> dict[str, Any]:
        wanted = self.send(method, params, session)
        while True:
            message = self.receive()
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def wait_for(self, method: str, match: dict[str, Any]) -> dict[str, Any]:
        """The first event (already received or still to come) with these params."""
        for event in self.events:
            if _matches(event, method, match):
                return event
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            message = self.receive()
            if _matches(message, method, match):
                return message
        raise TimeoutError(f"no {method} {match} within {TIMEOUT_S:.0f} s")

    def receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._in], [], [], max(left, 0.0))
            if not ready:
                raise TimeoutError(f"no DevTools message within {TIMEOUT_S:.0f} s")
            chunk = os.read(self._in.fileno(), 1 << 20)
            if not chunk:
                raise EOFError("the browser closed its DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        if "method" in message:
            self.events.append(message)
            self._on_event(message)
        return message

    def _on_event(self, event: dict[str, Any]) -> None:
        # A frame or worker the page starts waits for us: see its requests, then let it run.
        if event["method"] == "Target.attachedToTarget":
            child = event["params"]["sessionId"]
            self.send("Network.enable", session=child)
            self.send("Target.setAutoAttach", _AUTO_ATTACH, session=child)
            self.send("Runtime.runIfWaitingForDebugger", session=child)


_AUTO_ATTACH = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}


def _matches(message: dict[str, Any], method: str, match: dict[str, Any]) -> bool:
    params = message.get("params", {})
    return message.get("method") == method and all(params.get(k) == v for k, v in match.items())


def visit(
    browser: str, page: Path, probe: str, profile: Path, width: int = 1280, height: int = 900
) -> PageVisit:
    """Load ``page`` in a fresh profile, wait until its network is idle, evaluate ``probe`` and
    take a full-page screenshot."""
    url = page.resolve().as_uri()
    commands_r, commands_w = os.pipe()
    replies_r, replies_w = os.pipe()
    # The browser's ends must not sit on fds 3 or 4, or mapping one onto 3 clobbers the other.
    commands_r, replies_w = (_above_four(fd) for fd in (commands_r, replies_w))
    log = (profile.parent / f"{profile.name}-stderr.log").open("wb")

    def onto_three_and_four() -> None:  # in the child, before exec: Chromium reads fd 3, writes 4
        os.dup2(commands_r, 3)
        os.dup2(replies_w, 4)

    proc = subprocess.Popen(
        [browser, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        # Python's own fds are not inheritable (PEP 446): only 0-2 and the mapped 3, 4 pass.
        close_fds=False,
        preexec_fn=onto_three_and_four,
        start_new_session=True,
    )
    os.close(commands_r)
    os.close(replies_w)
    with os.fdopen(commands_w, "wb") as to_browser, os.fdopen(replies_r, "rb") as from_browser:
        try:
            pipe = DevToolsPipe(to_browser, from_browser)
            return _drive(pipe, url, probe, width, height)
        finally:
            _close(proc, to_browser)
            log.close()


def _above_four(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


def _drive(pipe: DevToolsPipe, url: str, probe: str, width: int, height: int) -> PageVisit:
    target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    attached = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})
    session: str = attached["sessionId"]
    for method, params in (
        ("Page.enable", {}),
        ("Network.enable", {}),
        ("Page.setLifecycleEventsEnabled", {"enabled": True}),
        ("Target.setAutoAttach", _AUTO_ATTACH),
        (
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        ),
    ):
        pipe.call(method, params, session)
    navigated = pipe.call("Page.navigate", {"url": url}, session)
    if navigated.get("errorText"):
        raise RuntimeError(f"navigation to {url} failed: {navigated['errorText']}")
    # The loader id tells this document's lifecycle apart from the about:blank it replaced.
    this_load = {"frameId": navigated["frameId"], "loaderId": navigated["loaderId"]}
    pipe.wait_for("Page.lifecycleEvent", {**this_load, "name": "load"})
    pipe.wait_for("Page.lifecycleEvent", {**this_load, "name": "networkIdle"})
    evaluated = pipe.call("Runtime.evaluate", {"expression": probe, "returnByValue": True}, session)
    if "exceptionDetails" in evaluated:
        raise RuntimeError(f"probe failed: {evaluated['exceptionDetails']}")
    content = pipe.call("Page.getLayoutMetrics", {}, session)["cssContentSize"]
    clip = {
        "x": 0,
        "y": 0,
        "width": max(width, int(content["width"])),
        "height": min(int(content["height"]), MAX_SCREENSHOT_HEIGHT),
        "scale": 1,
    }
    shot = pipe.call(
        "Page.captureScreenshot",
        {"format": "png", "captureBeyondViewport": True, "clip": clip},
        session,
    )
    requests = tuple(
        event["params"]["request"]["url"]
        for event in pipe.events
        if event["method"] == "Network.requestWillBeSent"
        and event["params"]["request"]["url"] != url
        and not event["params"]["request"]["url"].startswith("data:")
    )
    return PageVisit(
        url=url,
        probe=evaluated["result"].get("value"),
        requests=requests,
        screenshot=base64.b64decode(shot["data"]),
    )


def _close(proc: subprocess.Popen[bytes], to_browser: BinaryIO) -> None:
    try:
        message = {"id": 0, "method": "Browser.close", "params": {}}
        to_browser.write(json.dumps(message).encode() + b"\0")
        to_browser.flush()
    except OSError:
        pass  # already gone
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        # The browser's helpers (zygote, renderers) share the session it was started in.
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=15)
