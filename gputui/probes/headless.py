"""Headless ``--log FILE`` pieces: Slurm-style file name patterns, size rotation and the final summary."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from gputui.probes.base import host_name
from gputui.stream.io import RecordWriteError, RecordWriter
from gputui.stream.records import Record, event

_PATTERN = re.compile(r"%(%|j|N|n|h)")


def expand_log_path(template: str, env: Mapping[str, str] | None = None) -> str:
    """Expand Slurm's patterns: ``%j`` job id, ``%N`` short node name, ``%n`` node index, ``%%``.

    Outside a job ``%j`` becomes ``nojob`` and ``%n`` becomes ``0``. (``%h`` is accepted as ``%N``.)
    """
    env = os.environ if env is None else env

    def repl(match: re.Match[str]) -> str:
        code = match.group(1)
        if code == "%":
            return "%"
        if code == "j":
            return env.get("SLURM_JOB_ID") or "nojob"
        if code == "n":
            return env.get("SLURM_NODEID") or "0"
        return host_name(env).split(".")[0]

    return _PATTERN.sub(repl, template)


class RotatingWriter:
    """A :class:`RecordWriter` that moves FILE to FILE.1 (FILE.1 to FILE.2 ...) once it reaches a size.

    Every file is self-describing: a file started by rotation begins with a copy of the run's
    ``probe_started`` event (version, Python, backend, host, pid ...), stamped with the time of the
    rotation and ``rotation: n`` (the n-th file of this run), before the record that did not fit.
    """

    def __init__(self, path: str, *, max_bytes: int | None = None, keep: int = 5) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.keep = max(1, keep)
        self.rotations = 0
        self.written = 0
        self._writer = RecordWriter(path)
        self._size = self._current_size()
        self._started: Record | None = None

    def _current_size(self) -> int:
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def write(self, record: Record) -> None:
        starts = record.kind == "event" and record.get("event") == "probe_started"
        if starts and self._started is None:
            self._started = record
        if self.max_bytes and self._size >= self.max_bytes:
            self.rotate()
            if self._started is not None and not starts:
                self._write(self._header(self._started))
        self._write(record)

    def _header(self, started: Record) -> Record:
        fields = {k: v for k, v in started.fields.items() if k not in ("event", "message")}
        fields["rotation"] = self.rotations
        message = f"{started.get('message') or 'probe started'} (continued: rotation {self.rotations})"
        return event("probe_started", message=message, time=time.time(), **fields)

    def _write(self, record: Record) -> None:
        before = self._writer.written
        self._writer.write(record)
        if self._writer.written > before:
            self.written += 1
        if self.max_bytes:
            self._size = self._current_size()

    def rotate(self) -> None:
        """Move the files one number up and start FILE afresh; a failed move is a RecordWriteError."""
        self._writer.close()
        try:
            for i in range(self.keep - 1, 0, -1):
                src = f"{self.path}.{i}"
                if os.path.exists(src):
                    os.replace(src, f"{self.path}.{i + 1}")
            os.replace(self.path, f"{self.path}.1")
        except OSError as exc:
            self._writer = RecordWriter(self.path)  # still appending to FILE, as before the rotation
            raise RecordWriteError(exc.errno, f"cannot rotate {self.path}: {exc.strerror}") from None
        self.rotations += 1
        self._writer = RecordWriter(self.path)
        self._size = 0

    def close(self) -> None:
        self._writer.close()


@dataclass
class _GpuStats:
    label: str
    n: int = 0
    util_sum: float = 0.0
    util_n: int = 0
    util_max: float | None = None
    mem_peak: int | None = None
    mem_total: int | None = None
    energy_first: float | None = None
    energy_last: float | None = None
    power_integral_j: float = 0.0
    last_time: float | None = None


class Summary:
    """Per-GPU mean/max utilisation, memory peak and energy, for the paragraph printed at the end."""

    def __init__(self) -> None:
        self.gpus: dict[str, _GpuStats] = {}
        self.host_cpu_s: float | None = None
        self.first_time: float | None = None
        self.last_time: float | None = None

    def add(self, record: Record) -> None:
        if record.kind == "host":
            self.host_cpu_s = record.get("probe_cpu_s", self.host_cpu_s)
            return
        if record.kind != "gpu":
            return
        f = record.fields
        key = f["gpu_id"]
        st = self.gpus.get(key)
        if st is None:
            label = f"{f['host']}:{f.get('index', '?')}"
            st = self.gpus[key] = _GpuStats(label=label)
        st.n += 1
        self.first_time = record.time if self.first_time is None else self.first_time
        self.last_time = record.time
        util = f.get("util_gpu_pct")
        if isinstance(util, int | float):
            st.util_sum += util
            st.util_n += 1
            st.util_max = util if st.util_max is None else max(st.util_max, util)
        mem = f.get("mem_used_bytes")
        if isinstance(mem, int):
            st.mem_peak = mem if st.mem_peak is None else max(st.mem_peak, mem)
        if isinstance(f.get("mem_total_bytes"), int):
            st.mem_total = f["mem_total_bytes"]
        energy = f.get("energy_j")
        if isinstance(energy, int | float):
            st.energy_first = energy if st.energy_first is None else st.energy_first
            st.energy_last = energy
        power = f.get("power_w")
        if isinstance(power, int | float) and st.last_time is not None:
            st.power_integral_j += power * (record.time - st.last_time)
        st.last_time = record.time

    def paragraph(self, reason: str, samples: int) -> str:
        span = (self.last_time - self.first_time) if self.first_time and self.last_time else 0.0
        head = f"gputui: stopped ({reason}) after {samples} samples over {span:.0f} s"
        if not self.gpus:
            return head + "; no GPU samples."
        parts = []
        for st in self.gpus.values():
            util = (
                f"util mean {st.util_sum / st.util_n:.0f}% max {st.util_max:.0f}%"
                if st.util_n
                else "util n/a"
            )
            mem = f"mem peak {st.mem_peak / 2**30:.1f} GiB" if st.mem_peak is not None else "mem n/a"
            if st.mem_peak is not None and st.mem_total:
                mem += f" of {st.mem_total / 2**30:.0f}"
            if st.energy_first is not None and st.energy_last is not None and st.n > 1:
                energy = f"energy {(st.energy_last - st.energy_first) / 3600:.2f} Wh"
            elif st.power_integral_j:
                energy = f"energy ~{st.power_integral_j / 3600:.2f} Wh (from power)"
            else:
                energy = "energy n/a"
            parts.append(f"{st.label} {util}, {mem}, {energy}")
        cpu = f"; probe CPU {self.host_cpu_s:.2f} s" if self.host_cpu_s is not None else ""
        return head + ": " + "; ".join(parts) + cpu + "."
