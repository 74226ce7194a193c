"""A progress bar without metrics is no miss (issue 22.5): its frames are read by the tqdm parser and give
no record, and are not counted as lines that were not read (the dashboard would say "T to teach")."""

from __future__ import annotations

from pathlib import Path

from test_taught import STEPS, write_log

from gputui.logs.parser import LogParser


def test_bar_frames_without_metrics_are_not_counted_as_unread(tmp_path: Path) -> None:
    log = write_log(tmp_path / "train.log")
    bars = "".join(f"\r 40%|####      | {n}/99999 [01:{n % 60:02d}<02:00, 9.9it/s]" for n in range(500))
    named = "".join(f"\rEval: {n}%|##  | {n}/100 [00:0{n % 10}<00:01, 3.{n % 10}it/s]" for n in range(100))
    with log.open("a") as f:
        f.write(bars + "\n" + named + "\n")
    parser = LogParser()
    parser.feed(log.read_bytes())
    parser.finish()
    assert parser.unread.summary() == (STEPS, 1)
