"""A tiny stand-in server for launcher tests: serves /health on the given port in several modes.

Modes:
  healthy       ready after --delay seconds; /health 200
  die           prints a message and exits with code 7 after --delay seconds
  never-ready   listens, but /health answers 503 forever
  ignore-term   like healthy, but ignores SIGTERM (needs SIGKILL)
  with-child    like healthy, and spawns a child process that sleeps (tree / group cleanup)
  grow          like healthy, and every 0.1 s allocates 1 MiB and writes a file into --grow-dir
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mode", default="healthy")
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--grow-dir", default=None)
    args = parser.parse_args()

    print(f"fake server starting in mode {args.mode}", flush=True)
    if args.mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(args.delay)
    if args.mode == "die":
        for i in range(30):
            print(f"loading line {i}", flush=True)
        print("ValueError: --bogus-flag is not supported on this platform", file=sys.stderr)
        return 7
    if args.mode == "with-child":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    if args.mode == "grow":
        threading.Thread(target=grow, args=(Path(args.grow_dir),), daemon=True).start()

    status = 503 if args.mode == "never-ready" else 200

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            code = status if self.path == "/health" else 404
            body = b'{"status":"healthy"}' if code == 200 else b"{}"
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            print("request", self.path, flush=True)

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"listening on {args.host}:{args.port} pid {os.getpid()}", flush=True)
    server.serve_forever()
    return 0


def grow(directory: Path) -> None:
    hoard = []
    for i in range(200):
        hoard.append(bytearray(os.urandom(1 << 20)))
        (directory / f"chunk-{i}.tmp").write_bytes(b"x")
        time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())
