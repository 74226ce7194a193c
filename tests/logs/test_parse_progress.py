"""``gputui parse`` on a terminal: a progress line on stderr for a large file, cleared at the end; nothing
when stderr is not a terminal or the file is small. The table is the catch-up read's, exact."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gputui.commands import parse as parse_command
from gputui.commands.parse import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _bar_log(path: Path, size: int) -> None:
    with open(path, "wb") as f:
        written, epoch = 0, 0
        while written < size:
            bars = "".join(
                f"\rEpoch {epoch}: {n}%|#| {n}/100 [00:{n % 60:02d}<00:10, loss={1 / (n + 1):.4f}]"
                for n in range(101)
            )
            block = (bars + f"\nepoch {epoch} done: val_loss={1 / (epoch + 2):.5f}\n").encode()
            f.write(block)
            written += len(block)
            epoch += 1


def test_progress_is_drawn_on_a_terminal_and_cleared() -> None:
    err = Terminal()
    progress = Progress("slurm-1.out", 100 << 20, err)
    progress.update(50 << 20)
    progress.close()
    assert err.getvalue() == "\rparsing slurm-1.out: 50 % (50 of 100 MB)\r\x1b[K"


@pytest.mark.parametrize(("err", "size"), [(io.StringIO(), 100 << 20), (Terminal(), 1 << 20)])
def test_no_progress_off_a_terminal_or_for_a_small_file(err: io.StringIO, size: int) -> None:
    progress = Progress("slurm-1.out", size, err)
    progress.update(size // 2)
    progress.close()
    assert err.getvalue() == ""


def test_parse_of_a_large_file_shows_progress_and_the_exact_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "slurm-2.out"
    _bar_log(path, Progress.MIN_BYTES + (4 << 20))
    err, out = Terminal(), io.StringIO()
    monkeypatch.setattr(parse_command.sys, "stderr", err)
    monkeypatch.setattr(Progress, "update", _every_call(Progress.update))
    assert parse_command.run([str(path)], out=out) == 0
    assert f"parsing {path}: " in err.getvalue() and err.getvalue().endswith("\r\x1b[K")
    table = out.getvalue().splitlines()
    epochs = sum(1 for line in table[2:] if line.strip() and line.split()[0].isdigit())
    assert epochs == path.read_bytes().count(b" done: val_loss=")


def _every_call(update):
    """Progress.update without its 0.25 s rate limit (the parse is faster than that in a test)."""

    def unthrottled(self, done: int) -> None:
        self._last = 0.0
        update(self, done)

    return unthrottled
