"""SIGKILL a writer at random points, many times; nothing acknowledged may ever be lost.

Each round starts a child that creates (first round) or resumes the run and writes results and
artifacts in a loop, printing each one only after the store call returned. The round kills it
after a random delay, then checks: every acknowledged record is in the journal, at most the
final line is torn (read_run raises otherwise), the hash chain holds up to it (each resume
continued it from the last line on disk), every journaled artifact is intact, and no file
under an artifact's final name has the wrong content. The next round's resume must succeed, also
after some rounds tear off a partial final line, as a write cut short by a power loss would.
"""

import hashlib
import logging
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from omniqual.evidence.artifacts import ARTIFACTS_DIR
from omniqual.evidence.chain import check_chain
from omniqual.evidence.store import RunWriter, read_run, verify_artifacts

CHILD = Path(__file__).with_name("journal_writer_child.py")
ROUNDS = 40
SEED = 20250417

pytestmark = pytest.mark.integration
logger = logging.getLogger(__name__)


def kill_after(root: Path, run_id: str, round_no: int, delay: float) -> tuple[list[str], str]:
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(root), run_id, str(SEED + round_no)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL, f"the writer died on its own:\n{err}"
    # Only complete lines were acknowledged; a line cut by the kill was not.
    return [line for line in out.splitlines(keepends=True) if line.endswith("\n")], err


def tear_off_a_partial_line(run_dir: Path, rng: random.Random) -> None:
    """Simulate a write cut short (as by a power loss): a prefix of an unacknowledged line."""
    journal = run_dir / "journal.jsonl"
    with journal.open("rb") as handle:
        last = handle.readlines()[-1]
    with journal.open("ab") as handle:
        handle.write(last[: rng.randint(1, len(last) - 2)])


def assert_artifact_files_hold_their_hash(run_dir: Path) -> None:
    for path in (run_dir / ARTIFACTS_DIR).iterdir():
        if len(path.name) == 64:
            assert hashlib.sha256(path.read_bytes()).hexdigest() == path.name


def test_no_acknowledged_record_is_lost_across_random_kills(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    run_id = "kill-test"
    run_dir = tmp_path / run_id
    acked_results: set[str] = set()
    acked_artifacts: set[str] = set()
    torn = 0
    began = time.monotonic()
    for round_no in range(ROUNDS):
        lines, _ = kill_after(tmp_path, run_id, round_no, rng.uniform(0.0, 0.35))
        acked_results |= {line.split()[1] for line in lines if line.startswith("R ")}
        acked_artifacts |= {line.split()[1] for line in lines if line.startswith("A ")}
        if not run_dir.exists():
            assert not acked_results, "records acknowledged for a run that does not exist"
            continue
        if rng.random() < 0.25:
            tear_off_a_partial_line(run_dir, rng)
        contents = read_run(run_dir)  # raises if any line but the last is damaged
        torn += contents.torn_tail
        result_ids = [r.result_id for r in contents.results]
        assert len(result_ids) == len(set(result_ids))
        assert acked_results <= set(result_ids), f"round {round_no}: acknowledged result lost"
        assert acked_artifacts <= {a.sha256 for a in contents.artifacts}
        chain = check_chain(run_dir / "journal.jsonl")
        assert chain.state == "chained", f"round {round_no}: {chain.broken}"
        assert verify_artifacts(run_dir) == [], f"round {round_no}"
        assert_artifact_files_hold_their_hash(run_dir)

    writer = RunWriter.resume(run_dir)
    summary = writer.finish("completed")
    contents = read_run(run_dir)
    assert contents.finished is not None and contents.finished.status == "completed"
    assert not contents.torn_tail and contents.problems == ()
    assert acked_results <= {r.result_id for r in summary.results}
    assert len(summary.results) == len(contents.results)
    assert len(contents.starts) >= 2 and contents.starts[0].command[-1] == "***"
    assert verify_artifacts(run_dir) == []
    records = len(contents.starts) + len(contents.results) + len(contents.artifacts) + 1
    assert check_chain(run_dir / "journal.jsonl").records == records  # every record, linked
    assert not [p for p in run_dir.rglob(".tmp-*")]
    logger.warning(
        "kill test: %d kills, %d results (%d acknowledged), %d artifacts, %d torn tails, %.1f s",
        ROUNDS, len(contents.results), len(acked_results), len(acked_artifacts), torn,
        time.monotonic() - began,
    )  # fmt: skip
