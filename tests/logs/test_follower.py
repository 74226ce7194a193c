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


def test_truncate_and_rewrite_longer_between_polls_restarts_at_zero(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"".join(b"old run line %d\n" % i for i in range(20)))
    follower = FileFollower(path)
    assert _drain(follower)[0] == path.read_bytes()
    new = b"".join(b"new run, other line %d\n" % i for i in range(40))  # longer than the old offset
    path.write_bytes(new)  # O_TRUNC: same inode, and size >= offset by the next poll
    data, resets = _drain(follower)
    assert data == new and resets == ["truncated"]
    follower.close()


def _keras(values: list[tuple[int, float, float]]) -> bytes:
    return b"".join(
        b"Epoch %d/3\n10/10 - 1s - loss: %.2f - accuracy: %.2f\n" % (epoch, loss, acc)
        for epoch, loss, acc in values
    )


def test_log_follower_rewrite_gives_only_the_new_run(tmp_path) -> None:
    path = tmp_path / "slurm-7.out"
    path.write_bytes(_keras([(1, 0.5, 0.8), (2, 0.4, 0.85)]))
    resets: list[str] = []
    follower = LogFollower(path, on_reset=resets.append)
    before = [(r["epoch"], r["name"], r["value"]) for r in follower.poll() if r.kind == "metric"]
    before = [x for x in before if x[1] != "epoch_time_s"]
    assert before == [(1, "loss", 0.5), (1, "accuracy", 0.8), (2, "loss", 0.4), (2, "accuracy", 0.85)]
    path.write_bytes(_keras([(1, 0.9, 0.3), (2, 0.7, 0.4), (3, 0.6, 0.5)]))  # requeued, truncate mode
    records = follower.poll() + follower.finish()
    after = [(r["epoch"], r["name"], r["value"]) for r in records if r.kind == "metric"]
    assert resets == ["truncated"]
    assert [x for x in after if x[1] != "epoch_time_s"] == [
        (1, "loss", 0.9),
        (1, "accuracy", 0.3),
        (2, "loss", 0.7),
        (2, "accuracy", 0.4),
        (3, "loss", 0.6),
        (3, "accuracy", 0.5),
    ]


def test_appends_over_many_polls_never_reset(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"")
    followers = [FileFollower(path), FileFollower(path, max_bytes=7)]  # pieces below the fingerprint too
    got, resets = [b"", b""], [[], []]
    with open(path, "ab", buffering=0) as f:
        for i in range(300):
            line = b"step %d loss %.4f " % (i, 1 / (i + 1)) + b"x" * (i % 90) + b"\n"
            cut = (i * 7) % len(line)
            for part in (line[:cut], line[cut:]):  # partial lines
                f.write(part)
                if i % 10 == 0:  # same size, new mtime: a check that must pass
                    st = os.fstat(f.fileno())
                    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
                for k, follower in enumerate(followers):
                    data, r = _drain(follower)
                    got[k] += data
                    resets[k] += r
                    assert follower.poll().data == b""  # idle poll
    assert resets == [[], []] and got == [path.read_bytes()] * 2
    for follower in followers:
        follower.close()


def test_rewrite_changing_only_the_bytes_before_the_offset_is_detected(tmp_path) -> None:
    path = tmp_path / "log"
    old = b"header line\n" * 100 + b"epoch 1 , loss = 0.5\n"
    path.write_bytes(old)
    follower = FileFollower(path)
    assert _drain(follower)[0] == old
    new = old[:-10] + b"0.7 (rerun)\n" + b"epoch 2 , loss = 0.4\n" * 5  # same first part, new tail
    path.write_bytes(new)
    data, resets = _drain(follower)
    assert data == new and resets == ["truncated"]
    follower.close()


def test_from_end_rewrite_before_first_read_is_detected(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"previous run\n" * 10)
    follower = FileFollower(path, from_end=True)
    assert _drain(follower) == (b"", [])
    new = b"requeued run, longer\n" * 10
    path.write_bytes(new)
    assert _drain(follower) == (new, ["truncated"])
    follower.close()


def test_same_size_rewrite_with_a_new_tail_is_detected(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"epoch 1 , loss = 0.5\n")
    follower = FileFollower(path)
    mtime = path.stat().st_mtime_ns
    _drain(follower)
    path.write_bytes(b"epoch 1 , loss = 0.9\n")
    os.utime(path, ns=(mtime, mtime + 1_000_000_000))  # a later write: mtime moves on
    assert _drain(follower) == (b"epoch 1 , loss = 0.9\n", ["truncated"])
    follower.close()


def test_a_rewritten_log_starts_a_new_run_in_the_epoch_table(tmp_path) -> None:
    """A requeued job with ``--open-mode=truncate``: the old output ended mid-line (a bar of epoch 2);
    the new run's epoch 1 is epoch 1 of a new run, the old epoch 1 keeps its value, nothing is merged."""
    from gputui.logs.epochs import EpochTable
    from gputui.monitor.state import DashboardState, JobInfo

    path = tmp_path / "slurm-7.out"
    path.write_bytes(b"Epoch 1/3\n50/50 [====] - 1s - loss: 0.5000\nEpoch 2/3\n10/50 [=>...] - ETA: 3s")
    follower = LogFollower(path)
    records = follower.poll()
    with open(path, "r+b") as f:
        f.truncate(0)
        f.write(
            b"Epoch 1/3\n50/50 [==============================] - 1s - loss: 0.9000\n"
            b"Epoch 2/3\n50/50 [==============================] - 1s - loss: 0.8000\n"
        )
    new = follower.poll()
    assert [r.get("reset") for r in new if r.kind == "event"] == ["truncated"]
    table = EpochTable()
    table.add_all(records + new)
    rows = [(r.run, r.epoch, r.values["loss"]) for r in table.rows()]
    assert rows == [(0, 1, 0.5), (1, 1, 0.9), (1, 2, 0.8)]
    state = DashboardState(JobInfo(kind="attach", title="job 7"))
    state.ingest(records + new)
    assert [(r.run, r.epoch) for r in state.training.rows()] == [(0, 1), (1, 1), (1, 2)]
