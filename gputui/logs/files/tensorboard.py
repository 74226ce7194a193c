"""TensorBoard event files (``events.out.tfevents.*``) read in pure Python: no TensorFlow, no protobuf.

TFRecord framing ``uint64 length | uint32 crc(length) | data | uint32 crc(data)``; a partial trailing
record is kept until the rest arrives (safe for following). The ``Event`` protobuf is walked for
``wall_time`` (1), ``step`` (2) and ``summary`` (5) → ``value`` (1) → ``tag`` (1), ``simple_value`` (2)
(PyTorch ``SummaryWriter``, tensorboardX) or ``tensor`` (8) with ``float_val``/``double_val``/
``tensor_content`` (TF2 / Keras ``tf.summary.scalar``). CRCs are not checked; a record that does not
decode is skipped.

Keras writes ``epoch_loss``, ``epoch_accuracy`` with the epoch as step: those become scope ``epoch``
(``loss``, 0-based epoch); ``prefix`` (e.g. ``val_`` for a ``validation/`` run directory) is prepended.

Lightning's ``TensorBoardLogger`` writes an ``epoch`` scalar (0-based) after the metrics of each logged
step: it labels them (``epoch``, ``epoch_base`` 0) and is not a metric itself; its ``val_*``, ``test_*``
and ``*_epoch`` values become scope ``epoch`` (as in its ``metrics.csv``), the others stay per step. The
records of a step are held until its ``epoch`` tag or the end of the bytes fed.
"""

from __future__ import annotations

import struct

from gputui.logs.base import Context, metric
from gputui.stream.records import Record

NAME = "tensorboard"
MAX_RECORD = 64 << 20
DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16 = 1, 2, 19, 14


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("bad varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes):
    """Yield (field number, wire type, value) of a protobuf message."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + length], pos + length
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError("unsupported wire type")
        if pos > len(buf):
            raise ValueError("truncated field")
        yield number, wire, value


def _tensor_value(buf: bytes) -> float | None:
    dtype, content, floats, doubles = DT_FLOAT, b"", [], []
    for number, wire, value in _fields(buf):
        if number == 1 and wire == 0:
            dtype = value
        elif number == 4 and wire == 2:
            content = value
        elif number == 5:
            floats += (
                struct.unpack(f"<{len(value) // 4}f", value) if wire == 2 else struct.unpack("<f", value)
            )
        elif number == 6:
            doubles += (
                struct.unpack(f"<{len(value) // 8}d", value) if wire == 2 else struct.unpack("<d", value)
            )
    if doubles:
        return doubles[0]
    if floats:
        return floats[0]
    if content:
        if dtype == DT_FLOAT and len(content) >= 4:
            return struct.unpack("<f", content[:4])[0]
        if dtype == DT_DOUBLE and len(content) >= 8:
            return struct.unpack("<d", content[:8])[0]
    return None


def decode_event(data: bytes) -> tuple[float | None, int, list[tuple[str, float]]]:
    wall_time, step, values = None, 0, []
    for number, wire, value in _fields(data):
        if number == 1 and wire == 1:
            wall_time = struct.unpack("<d", value)[0]
        elif number == 2 and wire == 0:
            step = value
        elif number == 5 and wire == 2:
            for vnum, vwire, vbuf in _fields(value):
                if vnum != 1 or vwire != 2:
                    continue
                tag, scalar = None, None
                for fnum, fwire, fval in _fields(vbuf):
                    if fnum == 1 and fwire == 2:
                        tag = fval.decode("utf-8", "replace")
                    elif fnum == 2 and fwire == 5:
                        scalar = struct.unpack("<f", fval)[0]
                    elif fnum == 8 and fwire == 2 and scalar is None:
                        scalar = _tensor_value(fval)
                if tag is not None and scalar is not None:
                    values.append((tag, scalar))
    return wall_time, step, values


class EventFileParser:
    """Incremental reader of one event file: ``feed`` bytes, get metric records."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self._buf = b""
        self._ctx = Context()
        self.skipped = 0
        self._pending: list[Record] = []  # the current step's per-step records, until its epoch tag

    def feed(self, data: bytes, now: float | None = None) -> list[Record]:
        buf = self._buf + data
        out: list[Record] = []
        pos = 0
        while len(buf) - pos >= 12:
            (length,) = struct.unpack_from("<Q", buf, pos)
            if length > MAX_RECORD:
                self.skipped += 1
                pos = len(buf)  # not an event file, or corrupt: stop reading it
                break
            end = pos + 12 + length + 4
            if end > len(buf):
                break
            out.extend(self._event(buf[pos + 12 : pos + 12 + length], now))
            pos = end
        self._buf = buf[pos:]
        return out + self._flush()

    def finish(self, now: float | None = None) -> list[Record]:
        self._buf = b""
        return self._flush()

    def _flush(self) -> list[Record]:
        out, self._pending = self._pending, []
        for rec in out:
            rec.fields.pop("tag", None)
        return out

    def _event(self, data: bytes, now: float | None) -> list[Record]:
        try:
            wall_time, step, values = decode_event(data)
        except (ValueError, struct.error):
            self.skipped += 1
            return []
        out = []
        if self._pending and self._pending[0].fields.get("step") != step:
            out = self._flush()  # another step: the last one had no epoch tag
        when = wall_time if wall_time is not None else now
        for tag, value in values:
            if tag == "epoch" and step is not None:  # Lightning: the epoch of this step's metrics
                self._label(int(value))
                continue
            name, scope, epoch, step_field = tag, "step", None, step
            if tag.startswith("epoch_"):
                name, scope, epoch, step_field = tag[len("epoch_") :], "epoch", step, None
            rec = metric(
                self.prefix + name,
                value,
                source=NAME,
                scope=scope,
                ctx=self._ctx,
                now=when if when is not None else 0.0,
                epoch=epoch,
                step=step_field,
            )
            if rec is not None:
                rec.fields["time_source"] = "emitted"
                if scope == "step":
                    rec.fields["tag"] = tag
                    self._pending.append(rec)
                else:
                    out.append(rec)
        return out

    def _label(self, epoch: int) -> None:
        for rec in self._pending:
            tag = rec.fields.pop("tag", "")
            rec.fields["epoch"], rec.fields["epoch_base"] = epoch, 0
            if tag.startswith(("val_", "val/", "test_")) or tag.endswith("_epoch"):
                rec.fields["scope"] = "epoch"
