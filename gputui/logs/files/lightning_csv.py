"""Lightning ``CSVLogger`` files (``lightning_logs/version_N/metrics.csv``, ``docs/log-formats.md`` §3.3).

Rows are sparse (empty cell = not logged), columns are sorted in new Lightning and unsorted in old, and
the whole file is rewritten with a new header when a new metric appears. :class:`CsvMetricsParser`
takes bytes like the text parser; after a rewrite (the follower reports a reset) call :meth:`reset`:
the header is read again and rows already seen, keyed on (step, epoch, column), are not repeated.

Scope: ``*_step`` columns are per step; ``*_epoch``, ``val*`` and ``test*`` columns are epoch values of
the row's ``epoch`` (0-based); other columns are per step.
"""

from __future__ import annotations

import csv
import io
import math
import time as _time

from gputui.logs.base import Context, metric, to_float
from gputui.stream.records import Record

NAME = "lightning_csv"
MAX_SEEN = 1 << 20


class CsvMetricsParser:
    def __init__(self) -> None:
        self._header: list[str] | None = None
        self._pending = b""
        self._seen: set[tuple[str, str, str]] = set()
        self._ctx = Context(epoch_base=0)

    def reset(self) -> None:
        """The file was rewritten: read its header again; keep the de-duplication keys."""
        self._header, self._pending = None, b""

    def feed(self, data: bytes, now: float | None = None) -> list[Record]:
        now = _time.time() if now is None else now
        data = self._pending + data
        cut = data.rfind(b"\n")
        if cut < 0:
            self._pending = data
            return []
        self._pending = data[cut + 1 :]
        return self._lines(data[: cut + 1].decode("utf-8", "replace"), now)

    def finish(self, now: float | None = None) -> list[Record]:
        rest, self._pending = self._pending, b""
        return self._lines(rest.decode("utf-8", "replace") + "\n", _time.time() if now is None else now)

    def _lines(self, text: str, now: float) -> list[Record]:
        out: list[Record] = []
        for row in _rows(text):
            if not row:
                continue
            if self._header is None or row == self._header:
                self._header = [c.strip() for c in row]
                continue
            out.extend(self._row(dict(zip(self._header, row, strict=False)), now))
        return out

    def _row(self, row: dict[str, str], now: float) -> list[Record]:
        step_text, epoch_text = (row.get("step") or "").strip(), (row.get("epoch") or "").strip()
        step_value, epoch_value = (
            to_float(step_text) if step_text else None,
            to_float(epoch_text) if epoch_text else None,
        )
        step_value = step_value if step_value is not None and math.isfinite(step_value) else None
        epoch_value = epoch_value if epoch_value is not None and math.isfinite(epoch_value) else None
        step = int(step_value) if step_value is not None and step_value >= 0 else None
        epoch = int(epoch_value) if epoch_value is not None and epoch_value.is_integer() else epoch_value
        out = []
        for column, cell in row.items():
            if column in ("step", "epoch") or column is None or not cell or not cell.strip():
                continue
            value = to_float(cell.strip())
            if value is None:
                continue
            key = (step_text, epoch_text, column)
            if key in self._seen:
                continue
            if len(self._seen) < MAX_SEEN:
                self._seen.add(key)
            lower = column.lower()
            epochal = lower.endswith("_epoch") or lower.startswith(("val", "test"))
            scope = "epoch" if epochal and epoch is not None else "step"
            rec = metric(
                column, value, source=NAME, scope=scope, ctx=self._ctx, now=now, epoch=epoch, step=step
            )
            if rec is not None:
                out.append(rec)
        return out


def _rows(text: str) -> list[list[str]]:
    """The CSV rows of ``text``; a row the csv module refuses (a field over its size limit, a NUL) is
    skipped and the rows after it are read."""
    reader, rows = csv.reader(io.StringIO(text)), []
    while True:
        try:
            rows.append(next(reader))
        except StopIteration:
            return rows
        except csv.Error:
            continue
