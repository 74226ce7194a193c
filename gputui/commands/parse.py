"""``gputui parse FILE... [--format auto|keras|...|tensorboard] [--json] [--batch-size N]``

Prints the per-epoch table of each training log (or, with ``--json``, every record as a JSON line),
then how the job ended. A run that counts steps and no epochs gets its step summary instead (steps done
and planned, loss first → last and its trend, step time, throughput, MFU, ETA:
:mod:`gputui.analysis.steps`). The table is read in catch-up mode (:mod:`gputui.logs.thinning`: redraws of a
progress bar and runs of same-shape step lines are sampled, epoch rows and the outcome are exact);
``--json`` reads every frame. On a terminal a progress line on stderr shows how far a large file is.
``--batch-size``: the global batch of one printed step (all ranks together),
for images/s where the log counts steps but not samples. Lightning ``metrics.csv``, TensorBoard
``events.out.tfevents.*``, MLflow runs (``meta.yaml``), W&B ``.wandb`` files and gputui JSONL record files
are recognised by name/content; a directory gives its runs' metric files
(:mod:`gputui.logs.files.metric_files`).
Errors are one line each; exit status 1 if any file could not be read.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator
from typing import IO

from gputui.analysis.steps import StepSummary, StepTracker, step_rows
from gputui.commands.unread import listing, note
from gputui.logs.epochs import EpochRow, EpochTable
from gputui.logs.files.lightning_csv import CsvMetricsParser
from gputui.logs.files.metric_files import metric_file_kind, metric_file_parser, metric_paths
from gputui.logs.files.tensorboard import EventFileParser
from gputui.logs.outcome import has_ended
from gputui.logs.parser import FAMILIES, LogParser
from gputui.logs.per_rank import PerRankSummary
from gputui.logs.unread import Unread
from gputui.stream.io import encode_record, read_records
from gputui.stream.records import Record
from gputui.textsafe import printable

FORMATS = ("auto", *FAMILIES, "csv", "tensorboard", "jsonl")
READ_SIZE = 1 << 20


def _kind(path: str, fmt: str, head: bytes) -> str:
    if fmt in ("csv", "tensorboard", "jsonl"):
        return fmt
    if fmt != "auto":
        return "text"
    kind = metric_file_kind(path)
    if kind is not None:
        return kind
    base = os.path.basename(path)
    if head.lstrip().startswith(b'{"v":') and base.endswith((".jsonl", ".json")):
        return "jsonl"
    return "text"


class Progress:
    """``parsing FILE: 34 % (340 of 1000 MB)`` on stderr, redrawn at most 4 times a second; only on a
    terminal and for files large enough to wait for."""

    MIN_BYTES = 32 << 20

    def __init__(self, path: str, total: int, err: IO[str] | None = None) -> None:
        self.err = err or sys.stderr
        self.path, self.total = path, total
        self.shown = total >= self.MIN_BYTES and self.err.isatty()
        self._last = 0.0

    def update(self, done: int) -> None:
        now = time.monotonic()
        if not self.shown or now - self._last < 0.25:
            return
        self._last = now
        pct = 100 * done // max(1, self.total)
        self.err.write(f"\rparsing {self.path}: {pct} % ({done >> 20} of {self.total >> 20} MB)")
        self.err.flush()

    def close(self) -> None:
        if self.shown and self._last:
            self.err.write("\r\x1b[K")
            self.err.flush()


def _records(
    path: str,
    fmt: str,
    stream: IO[bytes],
    *,
    thin: bool = False,
    progress: Progress | None = None,
    unread: list[tuple[str, Unread]] | None = None,
) -> Iterator[Record]:
    """The records of one file; ``unread`` gets a text log's lines not read (:mod:`gputui.logs.unread`)."""
    head = stream.read(4096)
    kind = _kind(path, fmt, head)
    if kind == "jsonl":
        stream.seek(0)
        yield from read_records(stream)
        return
    parser: CsvMetricsParser | EventFileParser | LogParser | None = metric_file_parser(path, kind)
    if parser is None:
        parser = LogParser(fmt, path=path)
        parser.thin = thin
    chunk, done = head, 0
    while chunk:
        yield from parser.feed(chunk)
        done += len(chunk)
        if progress is not None:
            progress.update(done)
        chunk = stream.read(READ_SIZE)
    yield from parser.finish()
    if unread is not None and isinstance(parser, LogParser):
        unread.append((path, parser.unread))


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if value == int(value) and abs(value) < 1e12:
        return str(int(value))
    return f"{value:.6g}"


def _table(rows: list[EpochRow]) -> list[str]:
    names: list[str] = []
    for row in rows:
        names.extend(n for n in row.values if n not in names)
    show_rank = any(r.rank is not None for r in rows)
    show_run = any(r.run for r in rows)
    header = (["rank"] if show_rank else []) + (["run"] if show_run else []) + ["epoch", "time_s", "img/s"]
    header += names
    body = []
    for row in rows:
        time_text = _number(row.epoch_time_s)
        if row.epoch_time_source == "measured":
            time_text += "(m)"
        cells = ([str(row.rank)] if show_rank else []) + ([str(row.run)] if show_run else [])
        cells += [_number(row.epoch), time_text, _number(row.images_per_s)]
        cells += [_number(row.values.get(n)) for n in names]
        if row.streams > 1:
            cells.append(f"({row.streams} streams)")
        body.append(cells)
    widths = [max(len(c[i]) for c in [header, *body] if i < len(c)) for i in range(len(header))]
    return ["  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=False)) for cells in [header, *body]]


def _step_lines(steps: StepSummary, count: int, *, ended: bool) -> list[str]:
    """A step-based run (steps, no epochs): what it did and how fast (:mod:`gputui.analysis.steps`)."""
    lines = [f"steps (no epochs); {count} metric records (progress redraws sampled)"]
    rows = step_rows(steps, ended=ended)
    width = max(len(what) for what, _ in rows)
    return lines + [f"  {what.ljust(width)}  {value}" for what, value in rows]


def _summary(
    path: str,
    events: list[Record],
    count: int,
    last: Record | None,
    rows: list[EpochRow],
    out: IO[str],
    steps: StepSummary | None = None,
) -> None:
    print(f"== {printable(path)}", file=out)
    if rows:
        for line in _table(rows):
            print(printable(line), file=out)
        if any(r.epoch_time_source == "measured" for r in rows):
            print("(m) = measured between epoch ends, not printed by the script", file=out)
    elif steps is not None:
        ended = any(r.get("event") == "outcome" and has_ended(r.get("outcome")) for r in events)
        for line in _step_lines(steps, count, ended=ended):
            print(printable(line), file=out)
    else:
        print(f"no completed epochs; {count} metric records (progress redraws sampled)", file=out, end="")
        if last is not None:
            where = f" step {last.get('step')}" if last.get("step") is not None else ""
            print(printable(f" (last:{where} {last['name']}={_number(last['value'])})"), file=out, end="")
        print(file=out)
    for record in events:
        if record.get("event") == "outcome":
            line = f" (line {record.get('line')})" if record.get("line") else ""
            secondary = record.get("secondary")
            extra = f"; then {', '.join(secondary)}" if secondary else ""
            evidence = record.get("evidence") or ""
            print(printable(f"outcome: {record['outcome']}{line}{extra}: {evidence[:160]}"), file=out)


def run(
    files: list[str],
    fmt: str = "auto",
    as_json: bool = False,
    out: IO[str] | None = None,
    batch_size: int | None = None,
    unread: bool = False,
) -> int:
    """Print each file's table (or records); ``batch_size``: samples per printed step, for images/s.
    ``unread``: list the lines that look like metrics but were not read, instead of the tables."""
    out = out or sys.stdout
    status = 0
    missed: list[tuple[str, Unread]] = []  # each text log's unread lines, said at the end
    for path in metric_paths(files):  # a run directory or store: its runs' metric files
        try:
            with open(path, "rb") as stream:
                if as_json and not unread:
                    for record in _records(path, fmt, stream, unread=missed):
                        out.write(encode_record(record).decode("utf-8", "replace"))
                    continue
                table = EpochTable(batch_size=batch_size)
                tracker = StepTracker()
                per_rank = PerRankSummary()  # Megatron straggler lines, NCCL Inspector files
                events: list[Record] = []
                count, last = 0, None
                progress = Progress(path, os.fstat(stream.fileno()).st_size)
                try:
                    records = _records(path, fmt, stream, thin=True, progress=progress, unread=missed)
                    if unread:
                        for _ in records:
                            pass
                        continue
                    for record in records:
                        table.add(record)
                        tracker.add(record)
                        per_rank.add(record)
                        if record.kind == "metric":
                            count, last = count + 1, record
                        else:
                            events.append(record)
                finally:
                    progress.close()
                _summary(path, events, count, last, table.rows(), out, tracker.summary())
                for line in per_rank.lines():
                    print(printable(line), file=out)
        except BrokenPipeError:
            raise
        except OSError as exc:
            print(f"gputui: error: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
            status = 1
        except ValueError as exc:
            print(f"gputui: error: {path}: {exc}", file=sys.stderr)
            status = 1
    if unread:
        for path, lines in missed:
            listing(path, lines, out)
    else:
        for path, lines in missed:
            said = note(path, lines)
            if said:
                print(said, file=sys.stderr if as_json else out)
    return status


def main(args: argparse.Namespace) -> int:
    return run(
        list(args.files),
        getattr(args, "format", "auto") or "auto",
        bool(getattr(args, "json", False)),
        batch_size=getattr(args, "batch_size", None),
        unread=bool(getattr(args, "unread", False)),
    )
