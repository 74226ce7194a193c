"""Per-rank diagnostics as their writers print them, with known values (tests and the example files).

- :func:`straggler_line`: Megatron Core's ``StragglerDetector.report`` line (``megatron/core/utils.py``:
  ``f"{now} | MnRtt/Rnk: {o_dt.min_elapsed} | …"``, each value ``_ValueWithRank.__str__``, i.e.
  ``f"{value:.2f}{unit}/{rank}"``), logged by ``megatron.core.utils``'s logger under Python logging's
  default format (``INFO:megatron.core.utils:``); :func:`rank_list_lines` its ``^^^^ Bottom/Top`` lines.
- :func:`iteration_line`: ``training_log``'s line (``megatron/training/training.py``).
- :func:`inspector_line`: one NCCL Inspector operation (``plugins/profiler/inspector/inspector_json.cc``:
  compact JSON, doubles as ``%lf``), algorithm bandwidth = bytes / time, bus bandwidth as nccl-tests
  defines it (AllReduce ×2(n-1)/n, AllGather/ReduceScatter ×(n-1)/n).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

#: (Megatron's abbreviation, unit printed, our metric name)
QUANTITIES = (
    ("Rtt", "ms", "rank_step_time_ms"),
    ("Pwr", "W", "rank_power_w"),
    ("Tmp", "C", "rank_temp_c"),
    ("Utl", "%", "rank_util_pct"),
    ("Clk", "MHz", "rank_clock_mhz"),
    ("DRtt", "ms", "rank_data_time_ms"),
    ("Etpt", "TF", "rank_tflops"),
)
BUS_FACTOR = {"AllReduce": lambda n: 2 * (n - 1) / n, "AllGather": lambda n: (n - 1) / n}


@dataclass
class Report:
    """One straggler report: per quantity ((min value, rank), (max value, rank)), as printed (2 decimals;
    power in the unit printed)."""

    stamp: str
    values: dict[str, tuple[tuple[float, int], tuple[float, int]]]


def random_report(rng: random.Random, world: int, stamp: str, *, milliwatts: bool = True) -> Report:
    ranges = {
        "Rtt": (500.0, 4000.0),
        "Pwr": (300_000.0, 700_000.0) if milliwatts else (300.0, 700.0),
        "Tmp": (40.0, 80.0),
        "Utl": (50.0, 100.0),
        "Clk": (1200.0, 1980.0),
        "DRtt": (0.5, 40.0),
        "Etpt": (100.0, 400.0),
    }
    values = {}
    for what, (low, high) in ranges.items():
        a, b = sorted(round(rng.uniform(low, high), 2) for _ in range(2))
        values[what] = ((a, rng.randrange(world)), (b, rng.randrange(world)))
    return Report(stamp, values)


def straggler_line(report: Report, prefix: str = "INFO:megatron.core.utils:") -> str:
    parts = []
    for what, unit, _name in QUANTITIES:
        (low, low_rank), (high, high_rank) = report.values[what]
        parts.append(f"Mn{what}/Rnk: {low:.2f}{unit}/{low_rank}")
        parts.append(f"Mx{what}/Rnk: {high:.2f}{unit}/{high_rank}")
    return f"{prefix}[{report.stamp}] | " + " | ".join(parts)


def rank_list_lines(
    etpt: list[tuple[float, int]], count: int, prefix: str = "INFO:megatron.core.utils:"
) -> list[str]:
    """The ``--straggler-minmax-count`` lines: ``etpt`` is every rank's (value, rank), sorted."""
    bottom = "".join(f" {v:.2f}/{r}," for v, r in etpt[:count])
    top = "".join(f" {v:.2f}/{r}," for v, r in etpt[len(etpt) - count :])
    return [
        f"{prefix}^^^^ Bottom {count} Ranks with lowest  Etpt(TF):{bottom}",
        f"{prefix}^^^^ Top    {count} Ranks with highest Etpt(TF):{top}",
    ]


def iteration_line(stamp: str, iteration: int, total: int, ms: float, loss: float) -> str:
    return (
        f" [{stamp}.123456] iteration {iteration:8d}/{total:8d} | consumed samples: {iteration * 64:12d} | "
        f"elapsed time per iteration (ms): {ms:.1f} | learning rate: {1e-4:.6E} | global batch size:    64 | "
        f"lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 | "
        "number of nan iterations:   0 |"
    )


@dataclass
class Operation:
    comm: str
    comm_name: str
    rank: int
    n_ranks: int
    nnodes: int
    host: str
    pid: int
    coll: str
    sn: int
    msg_bytes: int
    time_us: int
    dump_us: int
    stop_us: int | None = None  # written with NCCL_INSPECTOR_DUMP_VERBOSE=1

    @property
    def algbw(self) -> float:
        return round(self.msg_bytes / self.time_us / 1e3, 6)

    @property
    def busbw(self) -> float:
        return round(self.algbw * BUS_FACTOR[self.coll](self.n_ranks), 6)


def inspector_line(op: Operation) -> str:
    header = {
        "id": op.comm,
        "comm_name": op.comm_name,
        "rank": op.rank,
        "n_ranks": op.n_ranks,
        "nnodes": op.nnodes,
    }
    metadata = {
        "inspector_output_format_version": "v4.0",
        "git_rev": "",
        "rec_mechanism": "nccl_profiler_interface",
        "dump_timestamp_us": op.dump_us,
        "hostname": op.host,
        "pid": op.pid,
    }
    perf = {
        "coll": op.coll,
        "coll_sn": op.sn,
        "coll_msg_size_bytes": op.msg_bytes,
        "coll_exec_time_us": op.time_us,
        "coll_timing_source": "kernel_gpu",
        "coll_algobw_gbs": op.algbw,
        "coll_busbw_gbs": op.busbw,
    }
    if op.stop_us is not None:
        perf["event_trace_sn"] = {"coll_start_sn": 1, "coll_stop_sn": 2, "kernel_events": []}
        perf["event_trace_ts"] = {"coll_start_ts": op.stop_us - op.time_us - 5, "coll_stop_ts": op.stop_us}
    text = json.dumps({"header": header, "metadata": metadata, "coll_perf": perf}, separators=(",", ":"))
    for key in ("coll_algobw_gbs", "coll_busbw_gbs"):  # %lf: six decimals always
        value = perf[key]
        text = text.replace(f'"{key}":{json.dumps(value)}', f'"{key}":{value:.6f}')
    return text
