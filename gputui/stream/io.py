"""Writing and reading record streams (JSON lines).

The writer appends one whole line per record with a single ``write(2)`` on an ``O_APPEND`` descriptor,
so nothing is buffered in the process and a record already written survives SIGKILL, SIGHUP or a later
full disk. A record cut by a kill mid-write has no trailing newline: readers count it as truncated,
never as data, and the next writer starts on a fresh line.

The reader streams any size in constant memory, keeps unknown fields, and skips and counts every line
it cannot use (:class:`ReadStats`), so nothing is rejected silently. A line is bounded in length
(``max_line_bytes``) and in nesting (:data:`MAX_JSON_DEPTH`): beyond either it is a bad line, never a crash.
"""

from __future__ import annotations

import json
import math
import os
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from gputui.output import write_reason
from gputui.stream.records import SCHEMA_VERSION, Record, RecordError, record_from_json_dict

#: A training script prints records between its normal output as ``@gputui {json}`` on a line of its own.
STDOUT_PREFIX = "@gputui "
DEFAULT_MAX_LINE_BYTES = 1 << 20
_CHUNK = 1 << 16
_DECODER = json.JSONDecoder()
#: Records are flat (a metric, a GPU sample, a list of processes): deeper JSON is a bad line, not data.
MAX_JSON_DEPTH = 32


class RecordWriteError(OSError):
    """Writing a record failed (disk full, file gone, pipe closed); the message is one line."""


def encode_record(record: Record) -> bytes:
    """One record as a compact JSON line ending in ``\\n``. Non-finite floats outside metrics → null."""
    obj = record.to_json_dict()
    try:
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite_only(obj), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8", errors="surrogateescape") + b"\n"


def _finite_only(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite_only(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite_only(v) for v in value]
    return value


def format_prefixed(record: Record) -> str:
    """The line a training script prints to emit ``record`` on stdout (without the newline)."""
    return STDOUT_PREFIX + encode_record(record).decode("utf-8").rstrip("\n")


class RecordWriter:
    """Appends records to a file path, ``"-"`` (stdout) or an open file descriptor."""

    def __init__(self, target: str | os.PathLike[str] | int) -> None:
        self._owns_fd = not isinstance(target, int)
        if isinstance(target, int):
            self._fd, self.name = target, f"<fd {target}>"
        elif str(target) == "-":
            self._fd, self.name, self._owns_fd = 1, "standard output", False
        else:
            self.name = os.fspath(target)
            try:
                self._fd = os.open(self.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            except OSError as exc:
                raise RecordWriteError(exc.errno, f"cannot open {self.name}: {exc.strerror}") from None
        self._needs_newline = self._ends_mid_line()
        self.written = 0

    def _ends_mid_line(self) -> bool:
        """True if an existing file ends without a newline (a record cut by a kill or a full disk)."""
        if not self._owns_fd:
            return False
        try:
            with open(self.name, "rb") as existing:
                if existing.seek(0, os.SEEK_END) == 0:
                    return False
                existing.seek(-1, os.SEEK_END)
                return existing.read(1) != b"\n"
        except OSError:
            return False

    def write(self, record: Record) -> None:
        """Write one record as one line. Raises :class:`RecordWriteError` (or BrokenPipeError).

        A write that fails part-way (a full disk takes what fits, then refuses the rest) is cut back
        to the last whole record, so the file never ends in a partial line that this run wrote."""
        data = encode_record(record)
        if self._needs_newline:
            data = b"\n" + data
        start = self._file_size()
        view = memoryview(data)
        while view:
            try:
                done = os.write(self._fd, view)
            except BrokenPipeError:
                raise
            except OSError as exc:
                self._undo_partial(start, len(data) - len(view))
                reason = write_reason(exc)
                raise RecordWriteError(exc.errno, f"cannot write to {self.name}: {reason}") from None
            view = view[done:]
        self._needs_newline = False
        self.written += 1

    def _file_size(self) -> int | None:
        """The size of the file written to, or None when it is not a regular file (a pipe, a tty)."""
        try:
            info = os.fstat(self._fd)
        except OSError:
            return None
        return info.st_size if stat.S_ISREG(info.st_mode) else None

    def _undo_partial(self, start: int | None, done: int) -> None:
        """After a failed write of which ``done`` bytes landed: truncate them away when nobody else
        appended meanwhile; otherwise the next record starts on a fresh line."""
        if not done:
            return
        if start is not None and self._file_size() == start + done:
            try:
                os.ftruncate(self._fd, start)
                return
            except OSError:
                pass
        self._needs_newline = True

    def write_all(self, records: Iterable[Record]) -> None:
        for record in records:
            self.write(record)

    def close(self) -> None:
        if self._owns_fd and self._fd >= 0:
            os.close(self._fd)
        self._fd = -1

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class ReadStats:
    """What a reader did with its input: records returned and lines skipped, by cause."""

    records: int = 0
    malformed: int = 0  # not JSON, or invalid UTF-8
    invalid: int = 0  # JSON, but not a valid record
    truncated: int = 0  # last line without a newline (a writer killed mid-record)
    too_long: int = 0  # longer than the line limit
    newer_version: int = 0  # records of a newer schema, read as far as understood
    examples: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> int:
        return self.malformed + self.invalid + self.truncated + self.too_long

    def note(self, cause: str, line_number: int, detail: str) -> None:
        setattr(self, cause, getattr(self, cause) + 1)
        if len(self.examples) < 5:
            self.examples.append(f"line {line_number}: {detail}")

    def summary(self) -> str:
        """One line such as ``read 120 records; skipped 3 lines (2 malformed, 1 truncated)``."""
        text = f"read {self.records} records"
        if self.skipped:
            causes = ("malformed", "invalid", "truncated", "too_long")
            parts = [f"{getattr(self, c)} {c.replace('_', ' ')}" for c in causes if getattr(self, c)]
            text += f"; skipped {self.skipped} lines ({', '.join(parts)})"
        if self.newer_version:
            text += f"; {self.newer_version} from a newer schema"
        return text


def records_from_json_dict(obj: Any, *, read_time: float | None = None) -> list[Record]:
    """Like :func:`record_from_json_dict`, also exploding the wide ``"kind": "metrics"`` form."""
    if isinstance(obj, dict) and obj.get("kind") == "metrics":
        values = obj.get("metrics")
        if not isinstance(values, dict) or not values:
            raise RecordError("metrics record without a 'metrics' object")
        common = {k: v for k, v in obj.items() if k not in ("v", "kind", "metrics")}
        return [
            record_from_json_dict(
                {"v": obj.get("v"), "kind": "metric", **common, "name": n, "value": v}, read_time=read_time
            )
            for n, v in values.items()
        ]
    return [record_from_json_dict(obj, read_time=read_time)]


def decode_json(text: str, start: int = 0) -> tuple[Any, int]:
    """One JSON value of ``text`` from ``start`` and where it ends, nested at most :data:`MAX_JSON_DEPTH`
    deep. Raises ValueError for anything else, a line nested a thousand deep included (the decoder's
    RecursionError), so every caller's "not JSON" path covers it."""
    try:
        obj, end = _DECODER.raw_decode(text, start)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    if text.count("[", start, end) + text.count("{", start, end) > MAX_JSON_DEPTH and _too_deep(obj):
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
    return obj, end


def loads_json(text: str) -> Any:
    """``json.loads`` bounded as :func:`decode_json` (one value, only whitespace around it)."""
    stripped = text.strip(" \t\n\r")  # JSON's whitespace, as json.loads takes it
    obj, end = decode_json(stripped)
    if end != len(stripped):
        raise ValueError(f"extra data after the JSON value (at {end})")
    return obj


def _too_deep(obj: Any) -> bool:
    """Whether ``obj`` nests lists/objects deeper than :data:`MAX_JSON_DEPTH` (no recursion)."""
    stack = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        if depth > MAX_JSON_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_line(raw: bytes, *, read_time: float | None = None) -> list[Record]:
    """Decode one JSON line into records. Raises ValueError (malformed) or RecordError (invalid)."""
    obj = loads_json(raw.decode("utf-8"))
    return records_from_json_dict(obj, read_time=read_time)


def iter_lines(stream: IO[bytes], stats: ReadStats, max_line_bytes: int) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, line)`` for complete lines, in constant memory; count the rest in ``stats``."""
    pending, dropping, number = bytearray(), False, 0
    while chunk := stream.read(_CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            number += 1
            if not dropping:
                pending += chunk[start:end]
            if dropping or len(pending) > max_line_bytes:  # the limit holds within one read too
                stats.note("too_long", number, f"longer than {max_line_bytes} bytes")
            else:
                yield number, bytes(pending)
            pending.clear()
            dropping, start = False, end + 1
        if not dropping:
            pending += chunk[start:]
            if len(pending) > max_line_bytes:
                pending.clear()
                dropping = True
    if dropping:
        stats.note("too_long", number + 1, f"longer than {max_line_bytes} bytes")
    elif pending.strip():
        stats.note("truncated", number + 1, "last line has no newline (writer stopped mid-record)")


def records_of_line(raw: bytes, number: int, stats: ReadStats) -> list[Record]:
    """The records of one complete line; a line that is not records is counted in ``stats`` (and
    gives ``[]``), as every gputui reader counts it."""
    if not raw.strip():
        return []
    try:
        records = parse_line(raw, read_time=time.time())
    except RecordError as exc:
        stats.note("invalid", number, str(exc))
        return []
    except ValueError as exc:
        why = str(exc) if str(exc).startswith("nested deeper") else type(exc).__name__
        stats.note("malformed", number, f"not JSON ({why})")
        return []
    for record in records:
        if record.v > SCHEMA_VERSION:
            stats.newer_version += 1
    stats.records += len(records)
    return records


def read_records(
    stream: IO[bytes], stats: ReadStats | None = None, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[Record]:
    """Stream the records of a binary JSON-lines stream; skipped lines are counted in ``stats``."""
    stats = stats if stats is not None else ReadStats()
    for number, raw in iter_lines(stream, stats, max_line_bytes):
        yield from records_of_line(raw, number, stats)


def read_file(path: str | os.PathLike[str], stats: ReadStats | None = None) -> Iterator[Record]:
    """Stream the records of a file (see :func:`read_records`)."""
    with open(path, "rb") as stream:
        yield from read_records(stream, stats)


def parse_prefixed(line: str) -> list[Record] | None:
    """Records from a stdout line ``[N: ]@gputui {json}``; None if the line carries no record.

    Several records glued onto one line (``@gputui {a}@gputui {b}``, which happens when ranks write
    through ``print`` — text and newline as two writes — into one ``srun -u`` stream) are all returned.
    Raises ValueError/RecordError when the line has the prefix but a broken payload.
    """
    at = line.find(STDOUT_PREFIX)
    if at < 0 or (at and not _is_label(line[:at])):
        return None
    found: list[Record] = []
    rest = line[at:]
    while rest.startswith(STDOUT_PREFIX):
        obj, end = decode_json(rest, len(STDOUT_PREFIX))
        found.extend(records_from_json_dict(obj))
        rest = rest[end:].lstrip()
        if rest and not rest.startswith(STDOUT_PREFIX):
            raise ValueError(f"unexpected text after a record: {rest[:40]!r}")
    return found


def _is_label(text: str) -> bool:
    """An ``srun --label`` prefix such as ``3: `` (or only whitespace)."""
    stripped = text.strip()
    return not stripped or (stripped.endswith(":") and stripped[:-1].strip().isdigit())


__all__ = [
    "MAX_JSON_DEPTH",
    "STDOUT_PREFIX",
    "ReadStats",
    "RecordWriteError",
    "RecordWriter",
    "decode_json",
    "encode_record",
    "format_prefixed",
    "loads_json",
    "parse_line",
    "parse_prefixed",
    "read_file",
    "read_records",
    "records_from_json_dict",
]
