"""The fake vLLM-Omni server as its own process, for the pytest-plugin tests: serves on
127.0.0.1:<ephemeral>, prints its base URL, and stops when its stdin closes.

    python -m tests.integration.pytest_plugin.fake_omni_process TEMP_DIR
"""

import sys
from pathlib import Path

from tests.fakes import FakeConfig, FakeOmni, serve_fake


def main() -> int:
    config = FakeConfig(max_upload_bytes=65536, max_side=512, temp_dir=Path(sys.argv[1]),
                        video_queue_s=0.0, video_run_s=0.01)  # fmt: skip
    with serve_fake(FakeOmni(config)) as url:
        print(url, flush=True)
        sys.stdin.read()  # until the test closes the pipe (or dies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
