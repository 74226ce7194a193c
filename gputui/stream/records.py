"""The record stream: one versioned JSON-lines schema for GPU, host, metric and event records.

Every part of gputui (probes, log parsers, trainers, the TUI, replay and reports) reads and writes these
records. The schema is documented in ``docs/records.md``; this module is its single implementation of
record construction and validation. Reading and writing files lives in :mod:`gputui.stream.io`.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field
from typing import Any

from gputui.stream.names import canonical_metric_name, is_valid_metric_name

SCHEMA_VERSION = 1
KINDS = ("gpu", "host", "metric", "event")

#: Why a field of a GPU sample has no value (``missing`` maps field name → one of these).
MISSING_REASONS = (
    "not_supported",  # the device or driver does not offer it (permanent)
    "no_permission",  # the user may not read it
    "function_missing",  # the library lacks the call (old driver / bindings)
    "secondary_die",  # reported once per package on the primary die (MI250X power)
    "error",  # a transient error; retried next tick
    "not_sampled",  # not read on this tick (e.g. processes are read every few seconds)
)

#: Where a metric record's ``time`` came from.
TIME_SOURCES = ("emitted", "printed", "read", "estimated")

#: Event vocabulary. Probe and job lifecycle plus the job outcomes a log can show.
EVENT_TYPES = (
    "probe_started",
    "probe_stopped",
    "node_lost",
    "job_state",
    "error",
    "warning",
    "outcome",
    "train_started",
    "train_finished",
)
OUTCOMES = (
    "completed",
    "cancelled",
    "time_limit",
    "oom",
    "nccl_error",
    "crashed",
    "crashed_traceback",
    "interrupted",
    "early_stopped",
    "truncated",
    "unknown",
)

# Fields every record carries, by kind, with the accepted JSON types.
_NUM = (int, float)
_REQUIRED: dict[str, dict[str, tuple[type, ...]]] = {
    "gpu": {"host": (str,), "gpu_id": (str,)},
    "host": {"host": (str,)},
    "metric": {"name": (str,), "value": (*_NUM, type(None))},
    "event": {"event": (str,)},
}
_OPTIONAL_TYPES: dict[str, tuple[type, ...]] = {
    "step": (int,),
    "epoch": _NUM,
    "epoch_base": (int,),
    "rank": (int,),
    "index": (int,),
    "job": (str,),
    "message": (str,),
}


class RecordError(ValueError):
    """A JSON object that is not a valid record; the message says which field is wrong."""


@dataclass(slots=True)
class Record:
    """One record: its kind, the time in Unix seconds, and its fields (units in the field names)."""

    kind: str
    time: float
    fields: dict[str, Any] = field(default_factory=dict)
    v: int = SCHEMA_VERSION

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    def to_json_dict(self) -> dict[str, Any]:
        """The object as written: envelope first, non-finite metric values as ``null`` + ``nonfinite``."""
        out: dict[str, Any] = {"v": self.v, "kind": self.kind, "time": round(self.time, 6)}
        out.update(self.fields)
        value = out.get("value")
        if self.kind == "metric" and isinstance(value, float) and not math.isfinite(value):
            out["value"] = None
            out["nonfinite"] = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return out


def _nonfinite_value(obj: dict[str, Any]) -> float | None:
    tag = obj.get("nonfinite")
    return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(tag) if isinstance(tag, str) else None


def record_from_json_dict(obj: Any, *, read_time: float | None = None) -> Record:
    """Validate a decoded JSON object and return it as a :class:`Record`.

    Unknown fields are kept (a newer writer may add them); records of a newer schema version are accepted
    when their required fields are valid. A metric record without ``time`` gets the read time and
    ``time_source = "read"``. Raises :class:`RecordError` naming the first problem.
    """
    if not isinstance(obj, dict):
        raise RecordError("not a JSON object")
    version = obj.get("v")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RecordError("missing or invalid schema version 'v'")
    kind = obj.get("kind")
    if kind not in _REQUIRED:
        raise RecordError(f"unknown kind {kind!r}")
    fields = {k: val for k, val in obj.items() if k not in ("v", "kind", "time")}
    stamp = obj.get("time")
    if stamp is None and kind == "metric":
        stamp = read_time if read_time is not None else _time.time()
        fields["time_source"] = "read"
    if not isinstance(stamp, _NUM) or isinstance(stamp, bool) or not math.isfinite(stamp):
        raise RecordError("missing or invalid 'time' (Unix seconds)")
    for name, types in _REQUIRED[kind].items():
        if name not in fields:
            raise RecordError(f"{kind} record without required field {name!r}")
        if not isinstance(fields[name], types) or isinstance(fields[name], bool):
            raise RecordError(f"{kind} record field {name!r} has the wrong type")
    for name, types in _OPTIONAL_TYPES.items():
        val = fields.get(name)
        if val is not None and (not isinstance(val, types) or isinstance(val, bool)):
            raise RecordError(f"field {name!r} has the wrong type")
    if kind == "metric":
        _check_metric(fields)
    return Record(kind=kind, time=float(stamp), fields=fields, v=version)


def _check_metric(fields: dict[str, Any]) -> None:
    name = fields["name"]
    if not is_valid_metric_name(name):
        raise RecordError(f"invalid metric name {name!r}")
    canonical = canonical_metric_name(name)
    if canonical != name:
        fields["name"], fields["raw_name"] = canonical, name
    if fields["value"] is None:
        restored = _nonfinite_value(fields)
        if restored is None:
            raise RecordError("metric value is null without 'nonfinite'")
        fields["value"] = restored
        fields.pop("nonfinite", None)
    step = fields.get("step")
    if step is not None and step < 0:
        raise RecordError("metric step must be >= 0")


def _stamp(when: float | None) -> float:
    return _time.time() if when is None else float(when)


def _drop_none(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def metric(
    name: str,
    value: float,
    *,
    step: int | None = None,
    epoch: float | None = None,
    epoch_base: int | None = None,
    rank: int | None = None,
    job: str | None = None,
    source: str = "gputui",
    time: float | None = None,
    time_source: str = "emitted",
    **extra: Any,
) -> Record:
    """A metric record. ``name`` goes through the alias table (``acc`` → ``accuracy``)."""
    if time_source not in TIME_SOURCES:
        raise RecordError(f"time_source must be one of {TIME_SOURCES}")
    canonical = canonical_metric_name(name)
    fields = _drop_none(
        {
            "name": canonical,
            "value": float(value),
            "step": step,
            "epoch": epoch,
            "epoch_base": epoch_base,
            "rank": rank,
            "job": job,
            "source": source,
            "time_source": time_source,
        }
    )
    fields.update(_drop_none(extra))
    return record_from_json_dict({"v": SCHEMA_VERSION, "kind": "metric", "time": _stamp(time), **fields})


def event(event_type: str, *, message: str = "", time: float | None = None, **detail: Any) -> Record:
    """An event record (``probe_started``, ``node_lost``, ``outcome`` ...) with a human-readable message."""
    if event_type not in EVENT_TYPES:
        raise RecordError(f"unknown event type {event_type!r}; known: {', '.join(EVENT_TYPES)}")
    if event_type == "outcome" and detail.get("outcome") not in OUTCOMES:
        raise RecordError(f"outcome must be one of {', '.join(OUTCOMES)}")
    fields = {"event": event_type, "message": message, **_drop_none(detail)}
    return Record(kind="event", time=_stamp(time), fields=fields)


def gpu_sample(
    *, host: str, gpu_id: str, vendor: str, source: str, time: float | None = None, **values: Any
) -> Record:
    """A GPU sample. ``gpu_id`` is the UUID (or PCI bus id when no UUID exists), never the index.

    Values the device could not give are ``None`` and named with their reason in ``missing``.
    """
    missing = dict(values.pop("missing", None) or {})
    for key, reason in missing.items():
        if reason not in MISSING_REASONS:
            raise RecordError(f"missing reason {reason!r} for {key!r} is not one of {MISSING_REASONS}")
        values.setdefault(key, None)
    fields = {"host": host, "gpu_id": gpu_id, "vendor": vendor, "source": source, **values}
    if missing:
        fields["missing"] = missing
    return Record(kind="gpu", time=_stamp(time), fields=fields)


def host_sample(*, host: str, time: float | None = None, **values: Any) -> Record:
    """A host sample: CPU %, memory, load and the probe's own cost."""
    return Record(kind="host", time=_stamp(time), fields={"host": host, **values})
