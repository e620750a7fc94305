"""The heartbeat of a run's plain progress: when ``interval_s`` pass without a line, ``beat`` is
called to say what is under way. A daemon thread polls for it; :meth:`Heartbeat.check` is the
whole decision, so a test drives it with a fake clock and no thread."""

import threading
import time
from collections.abc import Callable

HEARTBEAT_S = 60.0


class Heartbeat:
    def __init__(self, beat: Callable[[float], None], *, interval_s: float = HEARTBEAT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.beat = beat
        self.interval_s = interval_s
        self.clock = clock
        self._last = clock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def said(self, now: float) -> None:
        """A line was written at ``now``."""
        with self._lock:
            self._last = now

    def check(self) -> bool:
        """Beat when the interval passed since the last line; whether it did."""
        now = self.clock()
        with self._lock:
            if now - self._last < self.interval_s:
                return False
            self._last = now
        self.beat(now)
        return True

    def start(self) -> None:
        if self._thread is not None:
            return
        poll_s = min(1.0, self.interval_s / 4)
        self._stop.clear()

        def run() -> None:
            while not self._stop.wait(poll_s):
                try:
                    self.check()
                except (OSError, ValueError):  # the stream is gone (a closed pipe): stay quiet
                    return

        self._thread = threading.Thread(target=run, name="omniqual-heartbeat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
