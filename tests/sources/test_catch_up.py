"""A large log is shown tail first: the log pane gets the end of the file before its history is parsed,
a replay hands over a preview (latest epoch, last screen) and then the full state, progress is told."""

from __future__ import annotations

from pathlib import Path

from gputui.logs import parse_bytes
from gputui.logs.catchup import PREVIEW_MIN_BYTES, TAIL_BYTES, read_tail
from gputui.logs.epochs import EpochTable
from gputui.logs.follower import LogFollower
from gputui.sources.base import Feed
from gputui.sources.replay import ReplaySource


def _epoch_block(epoch: int) -> bytes:
    """One epoch of a tqdm-style log: many bar redraws, then a summary line (about 40 KB)."""
    bars = "".join(
        f"\rEpoch {epoch}: {n // 5:3d}%|##| {n}/500 [00:{n % 60:02d}<00:30, 9.9it/s, loss={1 / (n + 1):.4f}]"
        for n in range(0, 501)
    )
    return (
        bars + f"\nepoch {epoch} done: val_loss={1 / (epoch + 2):.5f} val_acc={epoch / 1000:.4f}\n"
    ).encode()


def _big_log(path: Path, size: int) -> bytes:
    blocks, epoch, total = [], 0, 0
    while total < size:
        block = _epoch_block(epoch)
        blocks.append(block)
        total += len(block)
        epoch += 1
    data = b"".join(blocks) + b"LAST LINE OF THE LOG\n"
    path.write_bytes(data)
    return data


def _table(records) -> list[tuple]:
    table = EpochTable()
    table.add_all(records)
    return [(r.epoch, sorted(r.values.items())) for r in table.rows()]


def test_follower_shows_the_tail_first_and_reports_progress(tmp_path: Path) -> None:
    path = tmp_path / "slurm-1.out"
    data = _big_log(path, 12 << 20)
    shown: list[bytes] = []
    progress: list[tuple[int, int]] = []
    follower = LogFollower(path, on_data=shown.append, on_progress=lambda d, s: progress.append((d, s)))
    records = follower.poll(max_rounds=1)
    assert shown[0] == read_tail(path, len(data))  # the last screen first
    assert len(shown[0]) <= TAIL_BYTES and shown[0].endswith(b"LAST LINE OF THE LOG\n")
    assert len(shown) == 1  # the history before the tail is parsed, not shown
    while progress[-1][0] < len(data):
        records += follower.poll(max_rounds=1)
    assert len(shown) == 1
    assert [d for d, _ in progress] == sorted(d for d, _ in progress)
    assert progress[-1] == (len(data), len(data))
    assert _table(records) == _table(parse_bytes(data))
    with open(path, "ab") as f:  # caught up: new output is shown and parsed as it comes
        f.write(b"epoch 9999 done: val_loss=0.5 val_acc=0.9\n")
    new = follower.poll()
    assert shown[-1] == b"epoch 9999 done: val_loss=0.5 val_acc=0.9\n"
    assert any(r.get("epoch") == 9999 for r in new)


def test_small_logs_are_shown_whole(tmp_path: Path) -> None:
    path = tmp_path / "slurm-2.out"
    data = b"".join(_epoch_block(e) for e in range(3))
    path.write_bytes(data)
    shown: list[bytes] = []
    LogFollower(path, on_data=shown.append).poll()
    assert b"".join(shown) == data


def test_replay_hands_over_a_preview_then_the_whole_history(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    data = _big_log(path, PREVIEW_MIN_BYTES + (1 << 20))
    feed = Feed()
    ReplaySource([str(path)], follow=False).run(feed)
    items = feed.drain()
    states = [item[1] for item in items if item[0] == "state"]
    assert len(states) == 2
    preview, whole = states
    table = _table(parse_bytes(data))
    last_epoch = table[-1][0]
    assert preview.catch_up == (0, len(data))
    assert preview.training.current_epoch() is not None
    assert preview.training.current_epoch() >= last_epoch - 1  # the tail's epochs: the latest ones
    assert "LAST LINE OF THE LOG" in "\n".join(preview.logs[str(path)].view())
    progress = [item[1:] for item in items if item[0] == "catchup"]
    assert progress and progress[-1] == (len(data), len(data))
    assert whole.catch_up is None
    assert len(whole.training.epochs.rows()) == len(table)
