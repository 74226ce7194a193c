"""The file follower: missing file, partial lines, truncation, rotation, a concurrent writer, big files.
Waits are polls with deadlines, never sleeps used as synchronisation."""

from __future__ import annotations

import os
import threading
import time

from gputui.logs.follower import FileFollower, LogFollower

DEADLINE = 10.0


def _drain(follower: FileFollower) -> tuple[bytes, list[str]]:
    data, resets = b"", []
    while True:
        change = follower.poll()
        data += change.data
        if change.reset:
            resets.append(change.reset)
        if not change.more:
            return data, resets


def test_missing_file_then_created(tmp_path) -> None:
    path = tmp_path / "slurm-1.out"
    follower = FileFollower(path)
    assert follower.poll().data == b"" and not follower.exists
    path.write_bytes(b"hello\n")
    assert _drain(follower)[0] == b"hello\n"
    follower.close()


def test_only_new_bytes_are_read_and_partial_line_is_held(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"Epoch 1/2\n")
    follower = LogFollower(path)
    assert follower.poll() == []
    with open(path, "ab") as f:
        f.write(b"5/5 [====] - 2s - loss: 0.51")
    assert follower.poll() == []  # unfinished frame: nothing yet
    with open(path, "ab") as f:
        f.write(b"23 - acc: 0.9\n")
    values = {r["name"]: r["value"] for r in follower.poll() if r.kind == "metric"}
    assert values == {"loss": 0.5123, "accuracy": 0.9, "epoch_time_s": 2.0}
    assert follower.file.offset == path.stat().st_size


def test_truncation(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"a" * 100 + b"\n")
    follower = FileFollower(path)
    assert len(_drain(follower)[0]) == 101
    path.write_bytes(b"new\n")  # truncated to a smaller size
    data, resets = _drain(follower)
    assert data == b"new\n" and resets == ["truncated"]


def test_rotation_drains_the_old_file_first(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"one\n")
    follower = FileFollower(path)
    assert _drain(follower)[0] == b"one\n"
    with open(path, "ab") as f:
        f.write(b"two\n")
    os.rename(path, tmp_path / "log.1")
    path.write_bytes(b"three\n")
    data, resets = _drain(follower)
    data2, resets2 = _drain(follower)
    assert data + data2 == b"two\nthree\n"
    assert "rotated" in resets + resets2


def test_removed_file_is_waited_for(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"x\n")
    follower = FileFollower(path)
    _drain(follower)
    path.unlink()
    assert _drain(follower)[0] == b""
    path.write_bytes(b"y\n")
    assert _drain(follower)[0] == b"y\n"


def test_start_on_a_big_file_reads_in_bounded_pieces(tmp_path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"0123456789\n" * 50_000)
    follower = FileFollower(path, max_bytes=64 * 1024)
    sizes = []
    while True:
        change = follower.poll()
        sizes.append(len(change.data))
        if not change.more:
            break
    assert max(sizes) <= 64 * 1024 and sum(sizes) == path.stat().st_size


def test_from_end_skips_existing_content(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"old\n")
    follower = FileFollower(path, from_end=True)
    assert _drain(follower)[0] == b""
    with open(path, "ab") as f:
        f.write(b"new\n")
    assert _drain(follower)[0] == b"new\n"


def test_concurrent_writer(tmp_path) -> None:
    path = tmp_path / "log"
    lines = [f"epoch {i} , loss = {i / 1000:.4f}\n".encode() for i in range(3000)]
    done = threading.Event()

    def writer() -> None:
        with open(path, "ab", buffering=0) as f:
            for i, line in enumerate(lines):
                cut = i % len(line)
                f.write(line[:cut])  # partial writes: the follower may see half a line
                f.write(line[cut:])
        done.set()

    follower = LogFollower(path)
    thread = threading.Thread(target=writer)
    thread.start()
    records = []
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        finished = done.is_set()
        records += follower.poll()
        if finished:
            records += follower.poll()
            break
    thread.join(DEADLINE)
    losses = [r for r in records if r.kind == "metric" and r["name"] == "loss"]
    assert [r["epoch"] for r in losses] == list(range(3000))
    assert [r["value"] for r in losses] == [i / 1000 for i in range(3000)]


def test_follow_latency_under_a_second(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"")
    follower = LogFollower(path)
    with open(path, "ab", buffering=0) as f:
        f.write(b"epoch 1 , loss = 0.5\n")
        start = time.monotonic()
        got = []
        while not got and time.monotonic() - start < DEADLINE:
            got = follower.poll()
    assert got and time.monotonic() - start < 1.0
