"""Record streams and the distributed environment: behaviour mutation testing found unchecked.

Each test here kills mutants that survived ``benchmarks/mutation.py`` (docs/testing.md, "Mutation
testing"): exact file contents written, the documented 1 MiB line limit, line numbers in the skip
reasons a user sees, records whose newline falls on a 64 KiB read boundary, and the local world size
torch is given.
"""

from __future__ import annotations

import io
import json

import pytest

from gputui.distenv import from_environ
from gputui.stream import records
from gputui.stream.io import ReadStats, RecordWriter, encode_record, read_file, read_records

A = records.metric("loss", 1.5, step=1, time=1000.0)
B = records.metric("loss", 1.25, step=2, time=1001.0)
C = records.metric("acc", 0.5, step=2, time=1002.0)


def _line(**fields: object) -> bytes:
    return json.dumps(
        {"v": 1, "kind": "metric", "time": 1.0, "name": "loss", "value": 1.0, **fields}
    ).encode()


def _read(data: bytes, **kw: int) -> tuple[list[records.Record], ReadStats]:
    stats = ReadStats()
    return list(read_records(io.BytesIO(data), stats, **kw)), stats


# --------------------------------------------------------------------------- writer


def test_writers_append_one_line_per_record_and_no_blank_lines(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    with RecordWriter(path) as writer:
        writer.write(A)
        writer.write(B)
    with RecordWriter(path) as writer:  # a second writer on a file that ends with a newline
        writer.write(C)
    assert path.read_bytes() == encode_record(A) + encode_record(B) + encode_record(C)

    empty = tmp_path / "empty.jsonl"
    empty.touch()
    with RecordWriter(empty) as writer:
        writer.write(A)
    assert empty.read_bytes() == encode_record(A)


@pytest.mark.parametrize("fragment", [b"{", b'{"v":1,"kind":"met'])
def test_a_writer_after_a_cut_record_starts_a_new_line(tmp_path, fragment: bytes) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(fragment)
    with RecordWriter(path) as writer:
        writer.write(A)
    assert path.read_bytes() == fragment + b"\n" + encode_record(A)
    stats = ReadStats()
    assert [r.to_json_dict() for r in read_file(path, stats)] == [A.to_json_dict()]
    assert (stats.records, stats.malformed) == (1, 1)


def test_dash_writes_to_stdout_and_creates_no_file(tmp_path, monkeypatch, capfd) -> None:
    monkeypatch.chdir(tmp_path)
    with RecordWriter("-") as writer:
        writer.write(A)
    assert capfd.readouterr().out == encode_record(A).decode()
    assert list(tmp_path.iterdir()) == []


def test_closing_a_writer_twice_is_harmless(tmp_path) -> None:
    writer = RecordWriter(tmp_path / "run.jsonl")
    writer.write(A)
    writer.close()
    writer.close()
    with writer:  # __exit__ closes once more
        pass
    assert (tmp_path / "run.jsonl").read_bytes() == encode_record(A)


# --------------------------------------------------------------------------- reader


def test_lines_over_one_mib_are_dropped_and_counted() -> None:
    """docs/records.md: lines over 1 MiB are dropped (the check runs per 64 KiB read, so a line is
    dropped once what is held of it passes 1 MiB: 1.5 MiB always is)."""
    small = _line(note="x" * ((1 << 20) - 200))
    big = _line(note="x" * (3 << 19))
    assert len(small) < 1 << 20 < (3 << 19) < len(big)
    got, stats = _read(small + b"\n" + big + b"\n" + small + b"\n")
    assert len(got) == 2 and stats.too_long == 1
    assert stats.examples == ["line 2: longer than 1048576 bytes"]


@pytest.mark.parametrize("chunk_end", [0, 1])
def test_a_newline_on_a_64_kib_read_boundary_ends_its_line(chunk_end: int) -> None:
    """The first line is exactly 64 KiB (+ chunk_end bytes): its newline opens (or follows) the next read."""
    bare = _line(note="")
    first = _line(note="x" * ((1 << 16) + chunk_end - len(bare)))
    assert len(first) == (1 << 16) + chunk_end
    got, stats = _read(first + b"\n" + _line(step=2) + b"\n")
    assert [r.get("step") for r in got] == [None, 2]
    assert stats.skipped == 0


def test_skipped_lines_are_reported_with_their_line_numbers() -> None:
    data = b"\n" + b"not json\n" + _line() + b"\n" + b'{"v": 1, "kind": "metric"}\n' + b'{"v": 1, "ki'
    got, stats = _read(data)
    assert len(got) == 1
    assert stats.examples == [
        "line 2: not JSON (JSONDecodeError)",
        "line 4: metric record without required field 'name'",
        "line 5: last line has no newline (writer stopped mid-record)",
    ]


def test_an_overlong_last_line_without_newline_has_its_own_line_number() -> None:
    got, stats = _read(_line() + b"\n" + _line() + b"\n" + b"y" * 500, max_line_bytes=100)
    assert len(got) == 2
    assert (stats.too_long, stats.truncated) == (1, 0)
    assert stats.examples == ["line 3: longer than 100 bytes"]


def test_summary_adds_up_every_cause() -> None:
    data = (
        b"not json\n"  # malformed
        + b'{"v": 1, "kind": "nope", "time": 1}\n{"v": 0, "kind": "event", "time": 1}\n'  # 2 invalid
        + b"z" * 70_000
        + b"\n"  # too long: held past the limit after a 64 KiB read
        + b"z" * 70_000
        + b"\n"
        + b"z" * 70_000
        + b"\n"
        + _line()
        + b"\n"
        + b'{"v"'  # truncated
    )
    _, stats = _read(data, max_line_bytes=100)
    assert (stats.malformed, stats.invalid, stats.truncated, stats.too_long) == (1, 2, 1, 3)
    assert stats.skipped == 7
    expected = "read 1 records; skipped 7 lines (1 malformed, 2 invalid, 1 truncated, 3 too long)"
    assert stats.summary() == expected


def test_only_the_first_five_skip_reasons_are_kept() -> None:
    _, stats = _read(b"".join(b"bad %d\n" % i for i in range(8)))
    assert stats.malformed == 8
    assert stats.examples == [f"line {i}: not JSON (JSONDecodeError)" for i in range(1, 6)]


def test_records_of_a_newer_schema_are_read_and_counted() -> None:
    got, stats = _read(_line(v=2) + b"\n" + _line() + b"\n")
    assert len(got) == 2 and stats.newer_version == 1
    assert stats.summary() == "read 2 records; 1 from a newer schema"
    _, current = _read(_line() + b"\n")
    assert current.newer_version == 0 and current.summary() == "read 1 records"


@pytest.mark.parametrize("stamp", ["true", "false", "Infinity", "-Infinity", "NaN", '"1000"'])
def test_time_must_be_a_finite_number(stamp: str) -> None:
    line = b'{"v": 1, "kind": "metric", "name": "loss", "value": 1.0, "time": %s}\n' % stamp.encode()
    got, stats = _read(line)
    assert got == [] and stats.invalid == 1
    assert stats.examples == ["line 1: missing or invalid 'time' (Unix seconds)"]


# --------------------------------------------------------------------------- distributed environment


def test_one_process_is_not_distributed_and_a_slurm_step_of_four_is() -> None:
    assert from_environ({}).is_distributed is False
    env = {"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_JOB_NODELIST": "node1"}
    assert from_environ(env).is_distributed is True


def test_local_world_size_without_tasks_per_node_is_a_whole_number() -> None:
    env = from_environ(
        {"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_NODEID": "1", "SLURM_JOB_NODELIST": "n[1-2]"}
    )
    assert env.local_world_size == 4
    assert env.torch_environ()["LOCAL_WORLD_SIZE"] == "4"


def test_torchrun_in_a_slurm_step_takes_the_local_world_size_from_slurm() -> None:
    step = {"SLURM_JOB_ID": "77", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_NTASKS_PER_NODE": "4"}
    assert from_environ({**step, "RANK": "5", "WORLD_SIZE": "8"}).local_world_size == 4
    assert from_environ({**step, "RANK": "0", "WORLD_SIZE": "1"}).local_world_size == 1


def test_defaults_when_the_launcher_sets_only_rank_and_world_size() -> None:
    env = from_environ({"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1"})
    assert (env.source, env.local_rank, env.node_rank) == ("torchrun", 0, 0)


def test_a_slurm_step_with_fewer_tasks_than_nodes_has_one_task_here() -> None:
    env = from_environ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_JOB_NODELIST": "n[1-2]"})
    assert env.local_world_size == 1 and env.torch_environ()["LOCAL_WORLD_SIZE"] == "1"
