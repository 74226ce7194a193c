"""W&B runs on disk (``wandb/offline-run-<time>-<id>/run-<id>.wandb``; online runs keep the same file in
``wandb/run-<time>-<id>/``), read with W&B's own record definitions: the optional extra
``gputui[wandb]`` (the ``wandb`` package).

The file is a LevelDB log, as W&B's ``datastore`` writes it: a 7-byte header (``:W&B``, magic 0xBEE1,
a version byte), then 32 KiB blocks counted from the start of the file, each a sequence of chunks
``crc32 (uint32) | length (uint16) | type (1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST) | data``; a block's last
< 7 bytes are zero padding. The CRC is zlib's CRC-32 of the data, seeded with the CRC of the type byte.
A record (FULL, or FIRST…LAST joined) is a ``wandb_internal_pb2.Record``. Read here: ``history`` rows
(``wandb.log``: ``_step``, ``_timestamp``, ``_runtime``, and the values; an ``epoch`` value labels the
row and is no metric itself), ``run`` (its id and start time) and ``exit`` (the exit code: the outcome).
A partial trailing chunk is kept until the rest arrives (safe for following); a chunk whose CRC does not
match is skipped and counted.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from gputui.logs.base import Context
from gputui.logs.files.structured import EPOCH, as_epoch, end_event, logged_value
from gputui.stream.records import Record

NAME = "wandb"
NEEDS = "reading W&B offline runs needs: pip install 'gputui[wandb]'"
HEADER = struct.Struct("<4sHB")
CHUNK = struct.Struct("<IHB")
IDENT, MAGIC = b":W&B", 0xBEE1
BLOCK = 32768
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
TYPE_CRC = {t: zlib.crc32(bytes([t])) for t in (FULL, FIRST, MIDDLE, LAST)}


class MissingExtra(ValueError):
    """The ``wandb`` package is not installed: its message is the one line to show."""


def record_class() -> Any:
    """W&B's ``Record`` protobuf class, or :class:`MissingExtra`."""
    try:
        from wandb.proto import wandb_internal_pb2
    except ImportError as exc:
        raise MissingExtra(NEEDS) from exc
    return wandb_internal_pb2.Record


def item_value(item: Any) -> float | None:
    """A history item's number (typed or JSON), None for text, media, tables and the like."""
    try:
        kind = item.WhichOneof("value")
    except ValueError:  # wandb before the typed values: value_json only
        kind = None
    if kind in ("integer", "number"):
        return float(getattr(item, kind))
    text = item.json if kind == "json" else item.value_json if kind is None else ""
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class WandbRunParser:
    """Incremental reader of one ``.wandb`` file: ``feed`` bytes, get metric records, and the outcome
    when the exit record comes (its exit code: 0 ``completed``, else ``crashed``)."""

    def __init__(self) -> None:
        self._record = record_class()
        self._buf = b""
        self._offset = 0  # file offset of self._buf[0]
        self._parts: list[bytes] = []  # chunks of a record not yet complete
        self._ctx = Context()
        self.skipped = 0
        self.bad_header = False
        self._run_id, self._start, self._last_time = "", 0.0, 0.0
        self._told = False  # the outcome was given (the exit record, or finish)

    def feed(self, data: bytes, now: float | None = None) -> list[Record]:
        buf, pos, out = self._buf + data, 0, []
        if self._offset == 0 and not self.bad_header:
            if len(buf) < HEADER.size:
                self._buf = buf
                return []
            ident, magic, _version = HEADER.unpack_from(buf)
            if ident != IDENT or magic != MAGIC:
                self.bad_header = True
            pos = HEADER.size
        while not self.bad_header:
            left = BLOCK - (self._offset + pos) % BLOCK
            if left < CHUNK.size:  # the block's zero trailer
                if len(buf) - pos < left:
                    break
                pos += left
                continue
            if len(buf) - pos < CHUNK.size:
                break
            crc, length, kind = CHUNK.unpack_from(buf, pos)
            if kind not in TYPE_CRC:  # zeros (a preallocated or cut block): go on at the next block
                if len(buf) - pos < left:
                    break
                pos += left
                continue
            end = pos + CHUNK.size + length
            if end > len(buf):
                break
            chunk = buf[pos + CHUNK.size : end]
            pos = end
            if zlib.crc32(chunk, TYPE_CRC[kind]) != crc:
                self.skipped, self._parts = self.skipped + 1, []
                continue
            out += self._chunk(kind, chunk)
        self._buf = buf[pos:] if not self.bad_header else b""
        self._offset += pos if not self.bad_header else len(buf)
        return out

    def finish(self, now: float | None = None) -> list[Record]:
        """The outcome, when the exit record did not give it: ``unknown``."""
        self._buf = b""
        if self._told:
            return []
        self._told = True
        if self.bad_header:
            return [end_event("unknown", "not a W&B run file (no :W&B header)", now or 0.0)]
        evidence = f"W&B run {self._run_id}: no exit record (still running, or ended without finishing)"
        return [end_event("unknown", evidence, self._last_time)]

    def _chunk(self, kind: int, chunk: bytes) -> list[Record]:
        if kind == FULL:
            self._parts = []
            return self._decode(chunk)
        if kind == FIRST:
            self._parts = [chunk]
        elif self._parts:
            self._parts.append(chunk)
            if kind == LAST:
                data, self._parts = b"".join(self._parts), []
                return self._decode(data)
        return []

    def _decode(self, data: bytes) -> list[Record]:
        record = self._record()
        try:
            record.ParseFromString(data)
        except Exception:  # protobuf's DecodeError: a record this version cannot read
            self.skipped += 1
            return []
        kind = record.WhichOneof("record_type")
        if kind == "history":
            return self._history(record.history)
        if kind == "run":
            self._run_id = record.run.run_id
            self._start = record.run.start_time.seconds + record.run.start_time.nanos / 1e9
        elif kind == "exit" and not self._told:
            self._told = True
            code, when = record.exit.exit_code, max(self._start + record.exit.runtime, self._last_time)
            outcome = "completed" if code == 0 else "crashed"
            return [end_event(outcome, f"W&B run {self._run_id} exited with code {code}", when)]
        return []

    def _history(self, history: Any) -> list[Record]:
        row: dict[str, float] = {}
        for item in history.item:
            value = item_value(item)
            if value is not None:
                row[".".join(item.nested_key) if item.nested_key else item.key] = value
        step = int(row["_step"]) if "_step" in row else history.step.num
        when = row.get("_timestamp") or self._start + row.get("_runtime", 0.0)
        self._last_time = max(self._last_time, when)
        epoch = as_epoch(row.get(EPOCH))
        out = []
        for name, value in row.items():
            if name.startswith("_") or name == EPOCH:
                continue
            rec = logged_value(name, value, source=NAME, when=when, step=step, epoch=epoch, ctx=self._ctx)
            if rec is not None:
                out.append(rec)
        return out
