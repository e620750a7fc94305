"""The agent's routes, asked directly (no sockets): the token first, then readings of a real
process tree (this test process), the fault control file and the record lines."""

import json
import os
from pathlib import Path

import psutil
import pytest

from omniqual.deploy.agent.service import AgentConfig, AgentService
from omniqual.domain.agent import AgentIdentity, AgentReadings, FaultAnswer, FaultRecords
from omniqual.domain.fault_injection import FaultArm, FaultEvent, FaultMode, FaultStage

TOKEN = "t0ken-t0ken-t0ken-t0ken"
AUTH = f"Bearer {TOKEN}"


def _service(tmp_path: Path, pid: int | None = None, faults: bool = True) -> AgentService:
    watched = tmp_path / "tmpdir"
    watched.mkdir(exist_ok=True)
    (watched / "a").write_text("x")
    return AgentService(AgentConfig(
        pid=os.getpid() if pid is None else pid, token=TOKEN, watch_dirs=(watched,),
        fault_control=tmp_path / "control.json" if faults else None,
        fault_record=tmp_path / "record.jsonl" if faults else None, gpu=False,
    ))  # fmt: skip


@pytest.mark.parametrize("header", [None, "", "Bearer wrong-wrong-wrong-wrong", f"Basic {TOKEN}"])
@pytest.mark.parametrize("route", [("GET", "/v1/readings"), ("GET", "/v1/identity"),
                                   ("POST", "/v1/fault/disarm"), ("GET", "/nowhere")])
def test_every_route_wants_the_token(tmp_path: Path, header: str | None,
                                     route: tuple[str, str]) -> None:  # fmt: skip
    answer = _service(tmp_path).handle(*route, header)
    assert answer.status == 401
    assert TOKEN not in answer.body.decode()
    assert not (tmp_path / "control.json").exists()  # a refused disarm wrote nothing


def test_readings_of_a_running_tree(tmp_path: Path) -> None:
    answer = _service(tmp_path).handle("GET", "/v1/readings", AUTH)
    assert answer.status == 200
    readings = AgentReadings.model_validate_json(answer.body)
    assert readings.state == "running" and readings.pid == os.getpid()
    assert readings.processes >= 1 and readings.rss_bytes > 10 * 2**20
    assert readings.open_fds is not None and readings.open_fds >= 3
    assert readings.cpu_s is not None and readings.cpu_s > 0
    assert [(d.path, d.files) for d in readings.dir_files] == [(str(tmp_path / "tmpdir"), 1)]
    assert readings.nvml is False and readings.gpus == ()


def test_a_process_that_is_gone_is_a_state_not_an_error(tmp_path: Path) -> None:
    gone = max(psutil.pids()) + 100_000
    service = _service(tmp_path, pid=gone)
    readings = AgentReadings.model_validate_json(service.handle("GET", "/v1/readings", AUTH).body)
    assert readings.state == "gone" and readings.processes == 0
    assert readings.cpu_s is None and readings.pss_bytes is None and readings.open_fds is None
    cpu = json.loads(service.handle("GET", "/v1/cpu", AUTH).body)
    assert cpu == {"schema_version": 1, "state": "gone", "cpu_s": None}
    identity = AgentIdentity.model_validate_json(service.handle("GET", "/v1/identity", AUTH).body)
    assert identity.state == "gone" and identity.process_name is None


def test_identity_names_the_watched_process(tmp_path: Path) -> None:
    answer = _service(tmp_path).handle("GET", "/v1/identity", AUTH)
    identity = AgentIdentity.model_validate_json(answer.body)
    assert identity.pid == os.getpid() and identity.state == "running"
    assert identity.process_name == psutil.Process().name()
    assert identity.host and identity.omniqual_version and identity.fault_control
    assert identity.watch_dirs == (str(tmp_path / "tmpdir"),)


def test_arming_writes_the_control_file_and_disarming_empties_it(tmp_path: Path) -> None:
    service = _service(tmp_path)
    fault = FaultArm(arm_id="a1", case_id="cut-3", stage=FaultStage.DENOISE,
                     mode=FaultMode.HANG, step=2, hang_s=5.0)  # fmt: skip
    answer = service.handle("POST", "/v1/fault/arm", AUTH, fault.model_dump_json().encode())
    assert answer.status == 200
    assert FaultAnswer.model_validate_json(answer.body).armed == "a1"
    control = tmp_path / "control.json"
    assert FaultArm.model_validate_json(control.read_text()) == fault
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left
    answer = service.handle("POST", "/v1/fault/disarm", AUTH)
    assert FaultAnswer.model_validate_json(answer.body).armed is None
    assert control.read_bytes() == b""


def test_a_body_that_is_no_arm_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    answer = _service(tmp_path).handle("POST", "/v1/fault/arm", AUTH, b'{"mode": "explode"}')
    assert answer.status == 422
    assert not (tmp_path / "control.json").exists()


def test_records_are_read_from_a_line_offset_without_a_half_written_line(tmp_path: Path) -> None:
    lines = [
        {"event": "loaded", "pid": 11, "at_unix": 1.0},
        {"event": "fired", "pid": 11, "at_unix": 2.0, "arm_id": "a1", "stage": "denoise"},
        "not json",
    ]
    text = "".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines)
    (tmp_path / "record.jsonl").write_text(text + '{"event": "hang-en')  # still being written
    service = _service(tmp_path)

    def page(after: int) -> FaultRecords:
        answer = service.handle("GET", f"/v1/fault/records?after={after}", AUTH)
        assert answer.status == 200
        return FaultRecords.model_validate_json(answer.body)

    first = page(0)
    assert [r.event for r in first.records] == [FaultEvent.LOADED, FaultEvent.FIRED]
    assert first.next == 3 and first.unreadable == 1
    later = page(1)
    assert [r.arm_id for r in later.records] == ["a1"] and later.next == 3
    assert page(3).records == () and page(3).next == 3
    bad = service.handle("GET", "/v1/fault/records?after=-1", AUTH)
    assert bad.status == 422


def test_fault_routes_without_fault_files_and_unknown_routes(tmp_path: Path) -> None:
    service = _service(tmp_path, faults=False)
    assert service.handle("POST", "/v1/fault/disarm", AUTH).status == 404
    assert service.handle("GET", "/v1/fault/records", AUTH).status == 404
    assert service.handle("GET", "/v2/readings", AUTH).status == 404
    assert service.handle("POST", "/v1/readings", AUTH).status == 405
