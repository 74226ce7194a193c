"""Text is never silently lost (issue 21 part 6), on the models the dashboard draws from: a huge unfinished
progress line shows its latest frame and the lines before it, a deleted output file is said and what is
still written to it is shown, and the epoch in progress follows the epoch the log prints."""

from __future__ import annotations

from pathlib import Path

from gputui.logs.catchup import TAIL_BYTES, read_tail
from gputui.logs.follower import DEFAULT_MAX_BYTES, FileFollower, LogFollower
from gputui.logs.parser import LogParser
from gputui.monitor.logtext import LogText
from gputui.monitor.state import DashboardState, JobInfo
from gputui.sources.base import Feed
from gputui.sources.replay import ReplaySource
from gputui.stream.records import metric


def frame(n: int) -> str:
    return f" 40%|####      | {n}/99999 [01:{n % 60:02d}<02:00, 9.9it/s, loss={1 / (n + 1):.5f}]"


def long_bar_log(path: Path, lines: int = 150_000, frames: int = 6000) -> tuple[bytes, str]:
    """A log over 4 MiB whose last line is an unfinished bar longer than the tail shown first:
    (its bytes, the latest frame)."""
    head = "".join(f"worker {i}: data shard {i % 97} loaded\n" for i in range(lines))
    head += "".join(f"Train Epoch: 7 [{640 * i}/60000 ({i}%)]\tLoss: 0.{i:04d}\n" for i in range(1, 4))
    bar = "".join("\r" + frame(n) for n in range(frames))
    data = (head + bar).encode()
    assert len(data) > DEFAULT_MAX_BYTES and len(bar) > TAIL_BYTES
    path.write_bytes(data)
    return data, frame(frames - 1)


def test_the_tail_of_a_log_ending_in_a_huge_bar_has_the_bar_and_the_lines_before_it(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    data, latest = long_bar_log(path)
    text = LogText(str(path))
    text.feed(read_tail(path, len(data)), 0.0)
    view = text.view()
    assert view[-1] == latest
    assert view[-2] == "Train Epoch: 7 [1920/60000 (3%)]\tLoss: 0.0003"
    assert view[-5] == "worker 149999: data shard 37 loaded"
    assert len(view) > 1000  # a screenful and more of the lines before the bar


def test_following_a_big_log_ending_in_a_huge_bar_shows_it_and_then_its_new_frames(tmp_path: Path) -> None:
    """Attaching to a job whose output is already large: tail first, then what is appended."""
    path = tmp_path / "slurm-3.out"
    data, latest = long_bar_log(path)
    text = LogText(str(path))
    follower = LogFollower(path, on_data=lambda d: text.feed(d, 0.0))
    while follower.file.offset < len(data):
        follower.poll(max_rounds=1)
    assert text.view()[-2:] == ["Train Epoch: 7 [1920/60000 (3%)]\tLoss: 0.0003", latest]
    with open(path, "ab") as f:
        f.write(("\r" + frame(123456)).encode())
    follower.poll()
    assert text.view()[-2:] == ["Train Epoch: 7 [1920/60000 (3%)]\tLoss: 0.0003", frame(123456)]


def test_a_replay_of_a_big_log_ending_in_a_huge_bar_shows_it_and_the_lines_before(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    _data, latest = long_bar_log(path)
    feed = Feed()
    source = ReplaySource([str(path)], follow=False)
    source.run(feed)
    state = feed.apply(source.new_state())
    assert state.logs[str(path)].view()[-2:] == ["Train Epoch: 7 [1920/60000 (3%)]\tLoss: 0.0003", latest]


def _drain(follower: FileFollower) -> tuple[bytes, list[str], list[str]]:
    data, resets, notices = b"", [], []
    while True:
        change = follower.poll()
        data += change.data
        resets += [change.reset] if change.reset else []
        notices += [change.notice] if change.notice else []
        if not change.more:
            return data, resets, notices


def test_a_deleted_file_is_told_once_read_on_and_followed_again_when_created(tmp_path: Path) -> None:
    path = tmp_path / "slurm-3.out"
    with open(path, "wb", buffering=0) as job:  # the job's stdout stays open when the file is deleted
        job.write(b"epoch 1\n")
        follower = FileFollower(path)
        assert _drain(follower) == (b"epoch 1\n", [], [])
        path.unlink()
        job.write(b"epoch 2\n")
        assert _drain(follower) == (b"epoch 2\n", [], ["deleted"])
        job.write(b"epoch 3\n")
        assert _drain(follower) == (b"epoch 3\n", [], [])  # told once
    path.write_bytes(b"a new run\n")
    assert _drain(follower) == (b"a new run\n", ["created"], [])
    follower.close()


def test_a_deleted_output_file_is_said_in_the_log_text_and_as_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "slurm-3.out"
    state = DashboardState(JobInfo("attach", "job 3"))
    follower = LogFollower(
        path,
        on_data=lambda d: state.text(str(path), d, 0.0),
        on_reset=lambda why: state.text_reset(str(path), why),
    )
    with open(path, "wb", buffering=0) as job:
        job.write(b"Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.3\n\r 10%|#")
        state.ingest(follower.poll())
        path.unlink()
        job.write(b"\r 20%|##")
        state.ingest(follower.poll())
    assert state.logs[str(path)].view() == [
        "Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.3",
        f"── {path} was deleted: showing what is still written to it ──",
        " 20%|##",
    ]
    (alert,) = state.alerts.active.values()
    assert alert.message == (
        "slurm-3.out was deleted: showing what is still written to it, and a new slurm-3.out if one appears"
    )


def test_the_epoch_in_progress_follows_the_printed_epoch_of_pytorch_example_lines() -> None:
    state = DashboardState(JobInfo("attach", "job 3"))
    parser = LogParser("auto")
    lines = "".join(
        f"Train Epoch: {e} [{640 * i}/60000 ({i}%)]\tLoss: 0.5\n" for e in range(1, 8) for i in range(3)
    )
    state.ingest(parser.feed(lines.encode()))
    assert state.training.current_epoch() == 7
    state.ingest(parser.feed(b"Test set: Average loss: 0.0479, Accuracy: 9845/10000 (98%)\n"))
    state.ingest(parser.feed(b"Train Epoch: 8 [0/60000 (0%)]\tLoss: 0.4\n"))
    assert state.training.current_epoch() == 8


def test_the_printed_epoch_is_capped_by_the_planned_total() -> None:
    state = DashboardState(JobInfo("attach", "job 3"))
    state.training.epochs_total = 5
    state.ingest([metric("loss", 0.4, step=20, epoch=9, epoch_base=1, time=2.0)])
    assert state.training.current_epoch() == 5
    state.ingest([metric("loss", 0.3, step=30, epoch=3, epoch_base=0, time=3.0)])  # numbered from 0
    assert state.training.current_epoch() == 4
