"""Child process of the kill test: creates or resumes a run, then writes until it is killed.

Usage: python journal_writer_child.py ROOT RUN_ID SEED

Prints ``ready`` once imported, then ``A <sha256>`` after each artifact and ``R <result_id>``
after each result, each only once the store call returned (so the record is durable).
"""

import os
import random
import sys
from datetime import UTC, datetime
from pathlib import Path

from omniqual.domain.evidence import Artifact
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.domain.run import EnvironmentFingerprint
from omniqual.evidence.store import RunWriter

ENVIRONMENT = EnvironmentFingerprint(
    hostname_hash="0" * 64,
    os="Linux",
    kernel="test",
    machine="x86_64",
    cpu_model="test",
    cpu_count=2,
    memory_total_bytes=1 << 30,
    python="CPython",
    omniqual_version="0.1.0",
)


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def next_artifact(writer: RunWriter, rng: random.Random, pool: list[bytes], i: int) -> Artifact:
    roll = rng.random()
    if roll < 0.4:  # content already stored: exercises deduplication
        return writer.put_artifact(rng.choice(pool), media_type="image/png", role="out", name="d")
    size = rng.randint(1 << 20, 3 << 20) if roll > 0.97 else rng.randint(0, 64 << 10)
    if roll < 0.7:
        return writer.put_artifact(rng.randbytes(size), media_type="x/y", role="raw", name="b")
    scratch = writer.run_dir.parent / f"scratch-{os.getpid()}-{i}.bin"
    scratch.write_bytes(rng.randbytes(size))
    try:
        return writer.put_artifact(scratch, media_type="x/y", role="log", name="f")
    finally:
        scratch.unlink()


def main() -> None:
    root, run_id, seed = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    pool = [random.Random(n).randbytes(n * 1000) for n in range(4)]
    say("ready")
    run_dir = root / run_id
    if (run_dir / "journal.jsonl").is_file():
        writer = RunWriter.resume(run_dir)
    else:
        writer = RunWriter.create(
            root, command=("omniqual", "run", "--token", "t0p"), environment=ENVIRONMENT,
            run_id=run_id,
        )  # fmt: skip
    i = 0
    while True:
        i += 1
        artifacts: tuple[Artifact, ...] = ()
        if rng.random() < 0.5:
            artifact = next_artifact(writer, rng, pool, i)
            say(f"A {artifact.sha256}")
            artifacts = (artifact,)
        at = datetime.now(UTC)
        long_reason = "x" * rng.randint(100_000, 400_000) if rng.random() < 0.02 else "ok"
        result_id = f"{seed}-{i}"
        writer.record(
            GateResult(
                result_id=result_id,
                run_id=run_id,
                gate_id="g",
                gate_version=1,
                gate_kind="kill-test",
                row="task=t2i",
                outcome=GateOutcome.PASSED,
                reasons=(long_reason,),
                target="none",
                artifacts=artifacts,
                started_at=at,
                finished_at=at,
            )
        )
        say(f"R {result_id}")


if __name__ == "__main__":
    main()
