"""The journal on disk: line format, torn tails, corruption, schema versions and migrations."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from omniqual.domain.result import GateResult
from omniqual.evidence import migrations
from omniqual.evidence.journal import JournalReader, encode_record
from omniqual.evidence.store import RunWriter, StoreError, read_run

MakeResult = Callable[..., GateResult]


@pytest.fixture
def run_dir(writer: RunWriter, make_result: MakeResult) -> Path:
    """A closed run: run-started, two results."""
    writer.record(make_result("r1", "res-1"))
    writer.record(make_result("r1", "res-2"))
    writer.close()
    return writer.run_dir


def lines(run_dir: Path) -> list[bytes]:
    return (run_dir / "journal.jsonl").read_bytes().splitlines(keepends=True)


def rewrite(run_dir: Path, new_lines: list[bytes]) -> None:
    (run_dir / "journal.jsonl").write_bytes(b"".join(new_lines))


def result_line(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(lines(run_dir)[1])
    return data


def test_records_are_compact_sorted_json_lines(run_dir: Path) -> None:
    for raw in lines(run_dir):
        assert raw.endswith(b"\n") and raw.count(b"\n") == 1
        record = json.loads(raw)
        assert list(record) == sorted(record)
        assert record["schema_version"] == 1
    contents = read_run(run_dir)
    assert encode_record(contents.starts[0]) == lines(run_dir)[0]


def test_reading_back_gives_every_record_in_order(run_dir: Path) -> None:
    contents = read_run(run_dir)
    assert contents.run_id == "r1"
    assert [r.result_id for r in contents.results] == ["res-1", "res-2"]
    assert contents.finished is None and not contents.torn_tail and contents.problems == ()


@pytest.mark.parametrize(
    "tail",
    [
        b'{"kind":"result","resu',  # cut mid-line, no newline
        b'{"kind":"result","resu\n',  # garbage ending in a newline
        b"\x00" * 40,  # zero-filled tail after a power loss
        b"\x00" * 40 + b"\n",
    ],
)
def test_a_torn_final_line_is_reported_not_fatal(run_dir: Path, tail: bytes) -> None:
    rewrite(run_dir, [*lines(run_dir), tail])
    contents = read_run(run_dir)
    assert contents.torn_tail
    assert [r.result_id for r in contents.results] == ["res-1", "res-2"]
    (problem,) = contents.problems
    assert "journal.jsonl:4: torn final line" in problem


def test_a_complete_final_line_without_its_newline_was_never_acknowledged(run_dir: Path) -> None:
    *head, last = lines(run_dir)
    rewrite(run_dir, [*head, last.rstrip(b"\n")])
    contents = read_run(run_dir)
    assert contents.torn_tail and [r.result_id for r in contents.results] == ["res-1"]


def test_a_corrupt_line_in_the_middle_is_an_error_naming_file_and_line(run_dir: Path) -> None:
    first, second, third = lines(run_dir)
    rewrite(run_dir, [first, second[:20] + b"\n", third])
    with pytest.raises(StoreError, match=r"journal\.jsonl:2: corrupt journal record"):
        read_run(run_dir)


def test_a_valid_json_line_of_the_wrong_shape_in_the_middle_is_an_error(run_dir: Path) -> None:
    first, _, third = lines(run_dir)
    rewrite(run_dir, [first, b'{"kind":"result","schema_version":1,"result":{}}\n', third])
    with pytest.raises(StoreError, match=r"journal\.jsonl:2: .*result\.result_id: Field required"):
        read_run(run_dir)


def test_a_record_newer_than_this_omniqual_is_refused(run_dir: Path) -> None:
    record = result_line(run_dir)
    record["schema_version"] = 2
    record["new_field"] = "from the future"
    first, _, third = lines(run_dir)
    rewrite(run_dir, [first, (json.dumps(record) + "\n").encode(), third])
    with pytest.raises(StoreError, match=r"journal\.jsonl:2: .*schema_version 2.*upgrade omniqual"):
        read_run(run_dir)


def test_a_result_newer_than_this_omniqual_is_refused_even_on_the_last_line(
    run_dir: Path,
) -> None:
    record = result_line(run_dir)
    record["result"]["schema_version"] = 9
    rewrite(run_dir, [*lines(run_dir), (json.dumps(record) + "\n").encode()])
    with pytest.raises(StoreError, match=r"journal\.jsonl:4: gate result has schema_version 9"):
        read_run(run_dir)


def test_older_records_are_upgraded_by_the_registered_migrations(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = result_line(run_dir)
    old["schema_version"] = 0
    old["payload"] = old.pop("result")  # version 0 called it "payload"
    old["payload"]["schema_version"] = 0
    old["payload"]["verdict"] = old["payload"].pop("outcome")
    first, *_ = lines(run_dir)
    rewrite(run_dir, [first, (json.dumps(old) + "\n").encode()])

    def journal_v0(data: dict[str, Any]) -> dict[str, Any]:
        data["result"] = data.pop("payload")
        return data

    def result_v0(data: dict[str, Any]) -> dict[str, Any]:
        data["outcome"] = data.pop("verdict")
        return data

    monkeypatch.setitem(migrations.JOURNAL_MIGRATIONS, 0, journal_v0)
    monkeypatch.setitem(migrations.RESULT_MIGRATIONS, 0, result_v0)
    (result,) = read_run(run_dir).results
    assert result.result_id == "res-1" and result.outcome == "passed"
    assert result.schema_version == 1


def test_an_older_record_without_a_migration_is_refused(run_dir: Path) -> None:
    old = result_line(run_dir)
    old["schema_version"] = 0
    first, _, third = lines(run_dir)
    rewrite(run_dir, [first, (json.dumps(old) + "\n").encode(), third])
    with pytest.raises(StoreError, match=r"journal\.jsonl:2: .*no migration from it"):
        read_run(run_dir)


def test_a_journal_must_begin_with_the_run_start(run_dir: Path, tmp_path: Path) -> None:
    _, second, third = lines(run_dir)
    rewrite(run_dir, [second, third])
    with pytest.raises(StoreError, match="does not begin with a run-started record"):
        read_run(run_dir)
    with pytest.raises(StoreError, match="no journal here"):
        read_run(tmp_path / "nowhere")
    rewrite(run_dir, [])
    with pytest.raises(StoreError, match="holds no run-started record"):
        read_run(run_dir)


def test_the_reader_reports_the_valid_length_for_repair(run_dir: Path) -> None:
    good = b"".join(lines(run_dir))
    rewrite(run_dir, [good, b'{"torn'])
    reader = JournalReader(run_dir / "journal.jsonl")
    assert len(list(reader)) == 3
    assert reader.valid_size == len(good)
    assert reader.torn_tail is not None and reader.torn_tail.size == 6
