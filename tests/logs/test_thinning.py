"""Catch-up (thin) reading gives the same epoch table, outcome and events as a plain parse, for
every golden log, cut anywhere and read in any sizes; and it does skip most progress frames."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from log_testdata import NAMES, log_bytes

from gputui.logs import LogParser, parse_bytes, parse_stream
from gputui.logs.epochs import EpochTable


def _table(records) -> list[tuple]:
    table = EpochTable()
    table.add_all(records)
    return [(r.run, r.epoch, sorted(r.values.items()), r.epoch_time_s) for r in table.rows()]


def _outcome(records) -> dict:
    events = [r.fields for r in records if r.kind == "event" and r.get("event") == "outcome"]
    assert events, "no outcome"
    return {k: v for k, v in events[-1].items() if k != "time"}


def _events(records) -> list[tuple]:
    return [
        tuple(sorted((k, repr(v)) for k, v in r.fields.items() if k != "time"))
        for r in records
        if r.kind == "event"
    ]


def _thin(data: bytes, read_size: int = 1 << 20) -> list:
    return list(parse_stream(io.BytesIO(data), read_size=read_size, thin=True))


@pytest.mark.parametrize("name", NAMES)
def test_thin_gives_the_same_epochs_and_outcome(name: str) -> None:
    data = log_bytes(name)
    plain, thin = parse_bytes(data), _thin(data)
    assert _table(thin) == _table(plain)
    assert _outcome(thin) == _outcome(plain)
    assert _events(thin) == _events(plain)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("cut", [0.2, 0.5, 0.8])
def test_thin_on_a_cut_log(name: str, cut: float) -> None:
    data = log_bytes(name)
    data = data[: int(len(data) * cut)]
    plain, thin = parse_bytes(data), _thin(data, read_size=4096)
    assert _table(thin) == _table(plain)
    assert _outcome(thin) == _outcome(plain)


BIG = [n for n in NAMES if len(log_bytes(n)) > 100_000]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(BIG), st.lists(st.integers(1, 200_000), min_size=1, max_size=12))
def test_thin_does_not_depend_on_read_sizes(name: str, sizes: list[int]) -> None:
    data = log_bytes(name)
    parser = LogParser()
    parser.thin = True
    records, pos = [], 0
    for size in sizes:
        records += parser.feed(data[pos : pos + size])
        pos += size
    records += parser.feed(data[pos:])
    records += parser.finish()
    plain = parse_bytes(data)
    assert _table(records) == _table(plain)
    assert _outcome(records) == _outcome(plain)


def _parsed_frames(data: bytes, thin: bool) -> tuple[int, int]:
    parser = LogParser()
    parser.thin = thin
    parser.feed(data)
    parser.finish()
    return sum(c.frames for c in parser.contexts.values()), parser.frames


@pytest.mark.parametrize(
    ("name", "share"),
    [
        ("keras1_cifar10_samples_bs", 0.1),
        ("cesga_lightning1_tqdm_4rank", 0.15),
        ("custom_tqdm_psnr_summary", 0.15),
    ],
)
def test_thin_skips_most_progress_frames(name: str, share: float) -> None:
    data = log_bytes(name)
    parsed_plain, total_plain = _parsed_frames(data, False)
    parsed_thin, total_thin = _parsed_frames(data, True)
    assert total_thin == total_plain  # skipped frames are still counted
    assert parsed_plain == total_plain
    assert parsed_thin < share * parsed_plain


def test_epoch_change_inside_a_run_of_redraws_is_found() -> None:
    """One physical line of bar redraws across three epochs (Lightning's main bar): each epoch's last
    100 % frame is read, whatever the sampling."""
    frames = []
    for epoch in range(3):
        for n in range(0, 201):
            clock = f"00:{n % 60:02d}<00:10, 9.9it/s"
            frames.append(f"Epoch {epoch}: {n // 2:3d}%|####| {n}/200 [{clock}, loss={1 / (n + 1):.4f}]")
    data = ("\r".join(frames) + "\n").encode()
    plain, thin = parse_bytes(data), parse_bytes(data, thin=True)
    assert _table(thin) == _table(plain)
    assert [row[1] for row in _table(thin)] == [0, 1, 2]
    parsed_thin, _ = _parsed_frames(data, True)
    assert parsed_thin < 40


def test_alternating_step_lines_are_skipped_in_whole_periods() -> None:
    """A step line and its companion line, repeated (period 2): the dict keeps the bar's step before it."""
    lines = []
    for step in range(1, 1000):
        lines.append(f"  1%|#| {step}/2000 [00:{step % 60:02d}<10:00,  1.50it/s]\n")
        lines.append(f"{{'loss': {step / 1000:.4f}, 'learning_rate': 1e-05, 'epoch': {step / 1000:.3f}}}\n")
    data = "".join(lines).encode()
    plain, thin = parse_bytes(data), parse_bytes(data, thin=True)
    steps_plain = {r["value"]: r.get("step") for r in plain if r.kind == "metric" and r["name"] == "loss"}
    thin_metrics = [r for r in thin if r.kind == "metric" and r["name"] == "loss"]
    assert 5 < len(thin_metrics) < len(steps_plain) / 4
    for r in thin_metrics:
        assert steps_plain[r["value"]] == r.get("step")


def test_a_labelled_line_of_redraws_keeps_its_rank() -> None:
    """``srun --label`` prefixes only a line's first frame: catch-up mode keeps that frame even inside a
    run of one shape (three lines of one rank's bar), so the redraws after it keep their rank."""
    lines = []
    for rank in (0, 1):
        for part in range(3):
            frames = [
                f"Epoch 0: {n}%|#| {n}/100 [00:{n % 60:02d}<00:10, loss={(rank + 1) / (n + part + 1):.4f}]"
                for n in range(101)
            ]
            lines.append(f"{rank}: " + "\r".join(frames))
    data = ("\n".join(lines) + "\n").encode()
    plain, thin = parse_bytes(data), parse_bytes(data, thin=True)
    assert _table(thin) == _table(plain)
    assert {r.get("rank") for r in thin if r.kind == "metric"} == {0, 1}
    assert _parsed_frames(data, True)[0] < 60


def test_timm_train_lines_without_validation_keep_each_epochs_last_line() -> None:
    """timm's ``Train: N [i/M]`` lines name the epoch without the word: its change is still found."""
    lines = []
    for epoch in range(5):
        for i in range(0, 1251, 50):
            at = min(i, 1250)
            pct = 100 * at // 1250
            loss = 7 - epoch - at / 2000
            lines.append(
                f"Train: {epoch} [{at:4d}/1251 ({pct:3d}%)]  Loss: {loss:.3f} ({loss + 0.01:.3f})  "
                f"Time: 0.512s, 2000.00/s  (0.500s, 2048.00/s)  LR: 1.000e-03  Data: 0.010 (0.020)"
            )
    data = ("\n".join(lines) + "\n").encode()
    plain, thin = parse_bytes(data), parse_bytes(data, thin=True)
    assert len(_table(plain)) == 5
    assert _table(thin) == _table(plain)
