"""NCCL Inspector's JSON output: per-rank bandwidth and time of each collective (``docs/log-formats.md``).

The Inspector is NCCL's profiler plugin (``plugins/profiler/inspector/`` in NVIDIA/nccl, formerly
``ext-profiler/inspector``; ``NCCL_PROFILER_PLUGIN=…/libnccl-profiler-inspector.so``,
``NCCL_INSPECTOR_ENABLE=1``). Each process appends to ``<dir>/<hostname>-pid<pid>.log``
(``inspector.cc``), where ``<dir>`` is ``NCCL_INSPECTOR_DUMP_DIR``, else ``nccl-inspector-<SLURM_JOBID>``
(``nccl-inspector-unknown-jobid`` outside Slurm) in the working directory. One compact JSON object per
line and per completed operation (``inspector_json.cc``)::

    {"header":{"id":"0x7f8c496ae9f661","comm_name":"DP Group 0","rank":2,"n_ranks":8,"nnodes":1},
     "metadata":{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":"nccl_profiler_interface",
                 "dump_timestamp_us":1748030377748202,"hostname":"node1","pid":1639453},
     "coll_perf":{"coll":"AllReduce","coll_sn":1407,"coll_msg_size_bytes":17179869184,"coll_exec_time_us":61974,
                  "coll_timing_source":"kernel_gpu","coll_algobw_gbs":277.210914,"coll_busbw_gbs":485.119099}}

(``p2p_perf`` with ``p2p``, ``p2p_peer``, ``p2p_msg_size_bytes``, ``p2p_exec_time_us``, ``p2p_algobw_gbs``,
``p2p_busbw_gbs`` for Send/Recv; with ``NCCL_INSPECTOR_DUMP_VERBOSE=1`` also ``event_trace_ts`` with the
operation's ``coll_stop_ts``/``p2p_stop_ts`` in µs; a NaN bandwidth is written as the string ``"nan"``.)

A busy job completes thousands of collectives a second, so the operations of one communicator, rank,
operation and message size are averaged over :data:`WINDOW_S` seconds: per window three metric records,
``nccl_busbw_gbps``, ``nccl_algbw_gbps`` and ``nccl_time_us`` (means), with ``rank`` (the rank **in that
communicator**, ``header.rank``), ``comm``, ``comm_name``, ``comm_ranks``, ``nnodes``, ``collective``,
``msg_bytes``, ``peer`` (P2P), ``host``, ``pid`` and ``count`` (operations averaged). The time of an
operation is its ``*_stop_ts`` where written, else the dump's ``dump_timestamp_us`` (``time_source:
"emitted"``). A window is given once an operation two windows later is read, once the clock is a window
past it (:meth:`NcclInspectorParser.idle`), or at the end. A line that is not JSON, or not an
operation, is counted (:attr:`stats`) and skipped; lines are bounded in length and nesting as every
record reader's (:mod:`gputui.stream.io`).
"""

from __future__ import annotations

import math
import os
import re
import time as _time
from dataclasses import dataclass, field
from typing import Any

from gputui.logs.base import Context, metric
from gputui.stream.io import DEFAULT_MAX_LINE_BYTES, ReadStats, loads_json
from gputui.stream.records import Record, event

NAME = "nccl_inspector"
FOLDER_PREFIX = "nccl-inspector-"
FILE_NAME = re.compile(r".-pid\d+\.log$")
HEAD = b'{"header":'
WINDOW_S = 10.0
MAX_OPEN = 4096  # open averages (communicator × rank × operation × size × window) before all are given
PERF = (("coll_perf", "coll"), ("p2p_perf", "p2p"))
VALUES = (
    ("busbw_gbs", "nccl_busbw_gbps"),
    ("algobw_gbs", "nccl_algbw_gbps"),
    ("exec_time_us", "nccl_time_us"),
)


def is_inspector_file(path: str) -> bool:
    """A ``<host>-pid<pid>.log`` in an ``nccl-inspector-*`` folder, or one that starts as the Inspector's
    lines do (a ``NCCL_INSPECTOR_DUMP_DIR`` of another name)."""
    if FILE_NAME.search(os.path.basename(path)) is None:
        return False
    if os.path.basename(os.path.dirname(os.path.abspath(path))).startswith(FOLDER_PREFIX):
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(len(HEAD)) == HEAD
    except OSError:
        return False


def inspector_files(folder: str) -> list[str]:
    """The Inspector's files in ``folder`` (sorted; [] when there are none)."""
    try:
        names = sorted(n for n in os.listdir(folder) if FILE_NAME.search(n))
    except OSError:
        return []
    return [p for p in (os.path.join(folder, n) for n in names) if is_inspector_file(p)]


def inspector_folder(folder: str, *, job_id: str | None = None, since: float | None = None) -> str | None:
    """The ``nccl-inspector-*`` folder in ``folder``: ``nccl-inspector-<job_id>`` when it exists, else the
    newest changed at ``since`` (a Unix time) or later; None when there is none."""
    if job_id and os.path.isdir(os.path.join(folder, FOLDER_PREFIX + job_id)):
        return os.path.join(folder, FOLDER_PREFIX + job_id)
    try:
        found = [e.path for e in os.scandir(folder) if e.name.startswith(FOLDER_PREFIX) and e.is_dir()]
        changed = {p: os.path.getmtime(p) for p in found}
    except OSError:
        return None
    fresh = [p for p in found if since is None or changed[p] >= since]
    return max(fresh, key=changed.__getitem__) if fresh else None


@dataclass
class _Mean:
    """The operations of one (communicator, rank, operation, size) in one window."""

    fields: dict[str, Any]
    count: int = 0
    last: float = 0.0
    sums: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


class NcclInspectorParser:
    """One Inspector file read as it grows: ``feed`` bytes, ``finish`` at the end (the metric-file reader
    interface of :mod:`gputui.logs.files.metric_files`)."""

    def __init__(self, window_s: float = WINDOW_S, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.window_s, self.max_line_bytes = window_s, max_line_bytes
        self.stats = ReadStats()  # operations read (``records``) and lines skipped, by cause
        self._pending, self._dropping, self._number = b"", False, 0
        self._open: dict[tuple, _Mean] = {}
        self._latest = -math.inf  # the latest window seen
        self._ctx = Context()

    @property
    def skipped(self) -> int:
        return self.stats.skipped

    def feed(self, data: bytes, now: float | None = None) -> list[Record]:
        out: list[Record] = []
        for number, line in self._lines(data):
            self._operation(number, line)
        self._give(out, lambda key: key[-1] < self._latest - 1 or len(self._open) > MAX_OPEN)
        return out

    def idle(self, now: float) -> list[Record]:
        """The averages of the windows over by ``now`` (wall clock), one window of grace: a file that
        stopped growing (an ended run replayed, a long dump interval) gives them without waiting for
        later operations."""
        out: list[Record] = []
        self._give(out, lambda key: (key[-1] + 2) * self.window_s <= now)
        return out

    def finish(self, now: float | None = None) -> list[Record]:
        """The rest: every open average, and a ``warning`` event when lines were skipped."""
        if self._dropping:
            self.stats.note("too_long", self._number + 1, f"longer than {self.max_line_bytes} bytes")
        elif self._pending.strip():
            self.stats.note("truncated", self._number + 1, "last line has no newline (writer stopped)")
        self._pending, self._dropping = b"", False
        out: list[Record] = []
        self._give(out, lambda key: True)
        if self.stats.skipped:
            when = _time.time() if now is None else now
            said = self.stats.summary().replace("records", "operations", 1)
            out.append(event("warning", time=when, message=f"NCCL Inspector file: {said}"))
        return out

    def _lines(self, data: bytes) -> list[tuple[int, bytes]]:
        """The complete lines of ``data`` after what was pending, numbered; one over the limit is counted,
        not held."""
        lines: list[tuple[int, bytes]] = []
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            self._number += 1
            if self._dropping or len(self._pending) + end - start > self.max_line_bytes:
                self.stats.note("too_long", self._number, f"longer than {self.max_line_bytes} bytes")
            else:
                lines.append((self._number, self._pending + data[start:end]))
            self._pending, self._dropping, start = b"", False, end + 1
        if not self._dropping:
            self._pending += data[start:]
            if len(self._pending) > self.max_line_bytes:
                self._pending, self._dropping = b"", True
        return lines

    def _operation(self, number: int, line: bytes) -> None:
        if not line.strip():
            return
        try:
            obj = loads_json(line.decode("utf-8"))
        except ValueError as exc:  # not JSON, not UTF-8, or nested too deep
            self.stats.note("malformed", number, f"not JSON ({type(exc).__name__})")
            return
        found = _read(obj)
        if found is None:
            self.stats.note("invalid", number, "not an NCCL Inspector operation")
            return
        fields, values, when = found
        self.stats.records += 1
        window = math.floor(when / self.window_s)
        self._latest = max(self._latest, window)
        key = (*fields.values(), window)
        mean = self._open.get(key)
        if mean is None:
            mean = self._open[key] = _Mean(fields)
        mean.count += 1
        mean.last = max(mean.last, when)
        for name, value in values.items():
            mean.sums[name] = mean.sums.get(name, 0.0) + value
            mean.counts[name] = mean.counts.get(name, 0) + 1

    def _give(self, out: list[Record], due: Any) -> None:
        """Records of the open averages whose key ``due`` says are complete, oldest first."""
        done = sorted((key for key in self._open if due(key)), key=lambda k: self._open[k].last)
        for key in done:
            mean = self._open.pop(key)
            for name, total in mean.sums.items():
                rec = metric(
                    name,
                    total / mean.counts[name],
                    source=NAME,
                    scope="step",
                    ctx=self._ctx,
                    now=mean.last,
                    time=mean.last,
                    count=mean.count,
                    window_s=self.window_s,
                    **mean.fields,
                )
                if rec is not None:
                    rec.fields["time_source"] = "emitted"
                    out.append(rec)


def _read(obj: object) -> tuple[dict[str, Any], dict[str, float], float] | None:
    """(fields, values, time in s) of one operation line; None when it is not one."""
    if not isinstance(obj, dict):
        return None
    header, meta = obj.get("header"), obj.get("metadata")
    if not isinstance(header, dict) or not isinstance(meta, dict) or not _int(header.get("rank")):
        return None
    for key, prefix in PERF:
        perf = obj.get(key)
        if isinstance(perf, dict) and isinstance(perf.get(prefix), str):
            break
    else:
        return None
    fields: dict[str, Any] = {"rank": header["rank"], "comm": _str(header.get("id"))}
    fields["comm_name"] = _str(header.get("comm_name"))
    fields["comm_ranks"] = header.get("n_ranks") if _int(header.get("n_ranks")) else None
    fields["nnodes"] = header.get("nnodes") if _int(header.get("nnodes")) else None
    fields["collective"] = perf[prefix][:64]
    size = perf.get(f"{prefix}_msg_size_bytes")
    fields["msg_bytes"] = size if _int(size) else None
    fields["peer"] = perf.get("p2p_peer") if prefix == "p2p" and _int(perf.get("p2p_peer")) else None
    fields["host"] = _str(meta.get("hostname"))
    fields["pid"] = meta.get("pid") if _int(meta.get("pid")) else None
    values = {
        name: float(perf[f"{prefix}_{src}"]) for src, name in VALUES if _number(perf.get(f"{prefix}_{src}"))
    }
    trace = perf.get("event_trace_ts")
    stop = trace.get(f"{prefix}_stop_ts") if isinstance(trace, dict) else None
    when = stop if _number(stop) and stop > 0 else meta.get("dump_timestamp_us")
    if not values or not _number(when) or when <= 0:
        return None
    return fields, values, when / 1e6


def _int(value: object) -> bool:
    """A count, rank or size as NCCL writes them (``%d``, ``%lu``): an int in 0 ≤ v < 2**64."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 64


def _number(value: object) -> bool:
    """A finite number a float holds (a JSON integer of 400 digits is not one)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1 << 64


def _str(value: object) -> str | None:
    return value[:128] if isinstance(value, str) and value else None
