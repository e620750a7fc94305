"""The harness's side of the in-server fault injector: the environment that loads it into a
launched process tree, arming and disarming it, and reading what it recorded.

A launch gets ``OMNIQUAL_FAULT_CONTROL`` and ``OMNIQUAL_FAULT_RECORD`` (paths in a directory of
the harness's choosing) and the injector's bootstrap directory first on ``PYTHONPATH``. The
control file is replaced atomically, so the injector's mtime cache sees every arming.
"""

import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from omniqual.domain.fault_injection import (
    CONTROL_ENV,
    RECORD_ENV,
    FaultArm,
    FaultEvent,
    FaultMode,
    FaultRecord,
    FaultStage,
)

BOOT_DIR = Path(__file__).resolve().parent / "fault_injector" / "boot"


def injector_env(control: Path, record: Path, environ: Mapping[str, str] | None = None,
                 ) -> dict[str, str]:  # fmt: skip
    """The variables that load the injector into every Python process of a launch."""
    env = os.environ if environ is None else environ
    path = os.pathsep.join(p for p in (str(BOOT_DIR), env.get("PYTHONPATH", "")) if p)
    return {CONTROL_ENV: str(control), RECORD_ENV: str(record), "PYTHONPATH": path}


@dataclass(frozen=True, slots=True)
class FaultChannel:
    """One injector's control and record files."""

    control: Path
    record: Path

    @classmethod
    def in_dir(cls, directory: Path) -> "FaultChannel":
        directory.mkdir(parents=True, exist_ok=True)
        return cls(directory / "fault-control.json", directory / "fault-record.jsonl")

    def env(self) -> dict[str, str]:
        return injector_env(self.control, self.record)

    def arm(self, case_id: str, stage: FaultStage, mode: FaultMode, *, step: int | None = None,
            hang_s: float = 0.0, times: int = 1,
            request_seed: int | None = None) -> FaultArm:  # fmt: skip
        arm = FaultArm(arm_id=f"{case_id}-{uuid.uuid4().hex[:8]}", case_id=case_id, stage=stage,
                       mode=mode, step=step, hang_s=hang_s, times=times,
                       request_seed=request_seed)  # fmt: skip
        self.write_arm(arm)
        return arm

    def write_arm(self, arm: FaultArm) -> None:
        self._write(arm.model_dump_json())

    def disarm(self) -> None:
        self._write("")

    def _write(self, text: str) -> None:
        tmp = self.control.with_name(f".{self.control.name}.{uuid.uuid4().hex[:6]}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self.control)

    def records(self) -> list[FaultRecord]:
        """Every record line so far (a torn or foreign line is skipped)."""
        try:
            lines = self.record.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        found = []
        for line in lines:
            try:
                found.append(FaultRecord.model_validate(json.loads(line)))
            except (ValueError, ValidationError):
                continue
        return found

    def of_arm(self, arm_id: str) -> list[FaultRecord]:
        return [r for r in self.records() if r.arm_id == arm_id]

    def loaded_pids(self) -> set[int]:
        return {r.pid for r in self.records() if r.event is FaultEvent.LOADED}
