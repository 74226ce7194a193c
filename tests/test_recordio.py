"""Writing and reading record streams (gputui.stream.io): round trips, garbage, truncation, kills."""

from __future__ import annotations

import io
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gputui.stream import records
from gputui.stream.io import (
    ReadStats,
    RecordWriteError,
    RecordWriter,
    encode_record,
    format_prefixed,
    parse_prefixed,
    read_file,
    read_records,
)

names = st.from_regex(r"[A-Za-z0-9_./ -]{1,40}", fullmatch=True).filter(lambda s: s.strip(" _") != "")
finite = st.floats(allow_nan=False, allow_infinity=False)
metrics = st.builds(
    lambda n, v, step, epoch, t: records.metric(n, v, step=step, epoch=epoch, time=t),
    names,
    st.one_of(finite, st.sampled_from([math.inf, -math.inf])),
    st.none() | st.integers(0, 2**62),
    st.none() | st.integers(0, 10**6),
    st.floats(0, 4e9, allow_nan=False),
)
gpus = st.builds(
    lambda host, uuid, util, mem, name: records.gpu_sample(
        host=host,
        gpu_id=uuid,
        vendor="nvidia",
        source="nvml",
        time=1.0,
        util_gpu_pct=util,
        mem_used_bytes=mem,
        name=name,
        missing={"power_w": "not_supported"},
    ),
    st.text(min_size=1, max_size=20),
    st.text(min_size=1, max_size=40),
    st.none() | st.integers(0, 100),
    st.integers(0, 2**50),
    st.text(max_size=30),
)
any_record = st.one_of(metrics, gpus)


def _read_all(data: bytes, **kwargs: int) -> tuple[list[records.Record], ReadStats]:
    stats = ReadStats()
    return list(read_records(io.BytesIO(data), stats, **kwargs)), stats


@given(st.lists(any_record, max_size=20))
def test_round_trip(recs: list[records.Record]) -> None:
    data = b"".join(encode_record(r) for r in recs)
    back, stats = _read_all(data)
    assert [r.to_json_dict() for r in back] == [r.to_json_dict() for r in recs]
    assert stats.records == len(recs) and stats.skipped == 0


@given(st.binary(max_size=2000))
def test_garbage_never_crashes_and_every_line_is_accounted_for(blob: bytes) -> None:
    _, stats = _read_all(blob)
    lines = [ln for ln in blob.split(b"\n")[:-1] if ln.strip()]
    tail = blob.split(b"\n")[-1]
    assert stats.records + stats.malformed + stats.invalid == len(lines) - sum(
        1 for ln in lines if _explodes(ln)
    )
    assert stats.truncated == (1 if tail.strip() else 0)


def _explodes(line: bytes) -> bool:
    """A valid wide 'metrics' line yields several records; garbage almost never is one."""
    try:
        return json.loads(line).get("kind") == "metrics"
    except Exception:
        return False


@given(st.lists(any_record, min_size=1, max_size=8), st.data())
def test_a_stream_cut_at_any_byte_yields_a_prefix_and_counts_the_cut_line(recs, data) -> None:
    blob = b"".join(encode_record(r) for r in recs)
    cut = data.draw(st.integers(0, len(blob)))
    back, stats = _read_all(blob[:cut])
    full = [r.to_json_dict() for r in recs]
    assert [r.to_json_dict() for r in back] == full[: len(back)]
    assert stats.truncated == (0 if cut == 0 or blob[cut - 1 : cut] == b"\n" else 1)


@given(st.lists(any_record, min_size=1, max_size=5), st.binary(min_size=1, max_size=30))
def test_invalid_utf8_lines_are_skipped_and_counted(recs, junk) -> None:
    bad = b"\xff\xfe" + junk.replace(b"\n", b"") + b"\n"
    blob = bad + b"".join(encode_record(r) for r in recs) + bad
    back, stats = _read_all(blob)
    assert len(back) == len(recs) and stats.malformed == 2


def test_overlong_lines_are_dropped_in_constant_memory() -> None:
    ok = encode_record(records.metric("loss", 1.0, time=1.0))
    blob = ok + b"x" * 300_000 + b"\n" + ok + b"y" * 300_000
    back, stats = _read_all(blob, max_line_bytes=1000)
    assert len(back) == 2 and stats.too_long == 2
    assert "too long" in stats.summary()


def test_wide_metrics_form_is_exploded() -> None:
    line = b'{"v":1,"kind":"metrics","time":5,"step":3,"epoch":1,"metrics":{"loss":0.5,"acc":0.9}}\n'
    back, _ = _read_all(line)
    assert [(r["name"], r["value"], r["step"]) for r in back] == [("loss", 0.5, 3), ("accuracy", 0.9, 3)]


def test_bare_nan_tokens_from_pythons_json_are_accepted() -> None:
    back, stats = _read_all(b'{"v":1,"kind":"metric","time":1,"name":"loss","value":NaN}\n')
    assert stats.records == 1 and math.isnan(back[0]["value"])


def test_summary_names_every_cause() -> None:
    blob = b'not json\n{"v":1,"kind":"nope","time":1}\n' + encode_record(records.metric("loss", 1, time=1))
    _, stats = _read_all(blob + b'{"v":1')
    assert stats.summary() == "read 1 records; skipped 3 lines (1 malformed, 1 invalid, 1 truncated)"
    assert stats.examples[0].startswith("line 1:")


def test_writer_appends_and_starts_a_fresh_line_after_a_cut_record(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with RecordWriter(path) as writer:
        writer.write(records.metric("loss", 1.0, time=1.0))
    with open(path, "ab") as f:
        f.write(b'{"v":1,"kind":"metric","ti')  # a record cut by a kill
    with RecordWriter(path) as writer:
        writer.write(records.metric("loss", 0.5, time=2.0))
    stats = ReadStats()
    assert [r["value"] for r in read_file(path, stats)] == [1.0, 0.5]
    assert stats.malformed == 1 and stats.truncated == 0


def test_full_disk_is_a_one_line_error_and_nothing_earlier_is_lost(tmp_path: Path) -> None:
    with pytest.raises(RecordWriteError, match="disk full") as info:
        RecordWriter("/dev/full").write(records.metric("loss", 1.0, time=1.0))
    assert "\n" not in str(info.value)


def test_unwritable_path_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(RecordWriteError, match="cannot open"):
        RecordWriter(tmp_path / "missing-dir" / "x.jsonl")


WRITER = """
import sys
from gputui.stream import records
from gputui.stream.io import RecordWriter
w = RecordWriter(sys.argv[1])
i = 0
while True:
    w.write(records.metric("loss", float(i), step=i, message="x" * 3000))
    i += 1
"""


def test_sigkill_mid_stream_leaves_only_whole_records(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)])
    deadline = time.monotonic() + 30
    while (not path.exists() or path.stat().st_size < 2_000_000) and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    stats = ReadStats()
    steps = [r["step"] for r in read_file(path, stats)]
    assert len(steps) > 100 and steps == list(range(len(steps)))
    assert stats.malformed == stats.invalid == 0 and stats.truncated <= 1


@settings(max_examples=50)
@given(metrics, st.sampled_from(["", "0: ", "13: ", "  "]))
def test_stdout_prefix_round_trip(rec: records.Record, label: str) -> None:
    [back] = parse_prefixed(label + format_prefixed(rec))
    assert back.to_json_dict() == rec.to_json_dict()


def test_lines_without_the_prefix_carry_no_record() -> None:
    assert parse_prefixed("Epoch 1/10 - loss: 0.3") is None
    assert parse_prefixed("user says @gputui {}") is None
    with pytest.raises(ValueError):
        parse_prefixed('@gputui {"v":1,"kind":"metric"')


def test_records_glued_onto_one_line_by_interleaved_ranks_are_all_read() -> None:
    a = format_prefixed(records.metric("loss", 1.0, rank=0, time=1.0))
    b = format_prefixed(records.metric("loss", 2.0, rank=1, time=1.0))
    assert [r["rank"] for r in parse_prefixed(f"{a}{b}")] == [0, 1]
    assert [r["rank"] for r in parse_prefixed(f"3: {a} {b}")] == [0, 1]
    with pytest.raises(ValueError, match="unexpected text"):
        parse_prefixed(a + "Epoch 3/10")


def test_a_line_just_over_the_limit_ending_inside_a_read_is_dropped(tmp_path):
    """The 1 MiB line limit holds even when the line's end falls inside the read that passes it (the
    check once per 64 KiB read let lines up to 1 MiB + 64 KiB through)."""
    from gputui.stream.io import DEFAULT_MAX_LINE_BYTES, ReadStats, read_file
    from gputui.stream.records import metric

    good = json.dumps(metric("loss", 0.5, time=1.0).to_json_dict())
    big = json.dumps({**metric("loss", 0.7, time=2.0).to_json_dict(), "pad": "x" * DEFAULT_MAX_LINE_BYTES})
    assert DEFAULT_MAX_LINE_BYTES < len(big) < DEFAULT_MAX_LINE_BYTES + 1000
    path = tmp_path / "r.jsonl"
    path.write_text(f"{good}\n{big}\n{good}\n")
    stats = ReadStats()
    assert [r["value"] for r in read_file(path, stats)] == [0.5, 0.5]
    assert stats.too_long == 1 and stats.examples == [f"line 2: longer than {DEFAULT_MAX_LINE_BYTES} bytes"]
