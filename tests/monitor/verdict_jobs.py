"""Recorded jobs of known shapes for the verdict rules: healthy 1-node and 2-node runs, and one job per
unhealthy case (a straggler node, GPU or rank, input-bound, communication-bound, a hang, idle GPUs,
memory creep, throttling).

A job is the records a probe on each node and the training's metrics would leave: GPU samples every
:data:`EVERY` seconds from :data:`T0`, host samples, and a step metric every 10 s. Each shape is a
function of (host, GPU index, seconds since T0) overriding the healthy values; values wobble a little
(deterministically), as real samples do.
"""

from __future__ import annotations

from collections.abc import Callable

from gputui.stream.records import Record, gpu_sample, host_sample, metric

T0 = 1_795_240_800.0  # a round minute
EVERY = 2.0  # seconds between samples
GIB = 1 << 30
HEALTHY = {"util": 94.0, "power": 300.0, "clock": 1410.0, "temp": 62.0, "mem": 30.0}
LIMIT_W, TOTAL_GIB = 400.0, 80.0

Shape = Callable[[str, int, float], dict]


def wobble(i: int, size: float = 2.0) -> float:
    """A deterministic jitter in [-size, size]."""
    return ((i * 7919) % 11 - 5) / 5 * size


def hosts_of(nodes: int) -> list[str]:
    return [f"node{n + 1}" for n in range(nodes)]


def gpu_records(nodes: int, gpus: int, seconds: float, shape: Shape | None = None) -> list[Record]:
    out = []
    for i in range(int(seconds / EVERY)):
        t = i * EVERY
        for host in hosts_of(nodes):
            for index in range(gpus):
                v = HEALTHY | {"mem": min(30.0, 2 + t)} | (shape(host, index, t) if shape else {})
                util = min(100.0, max(0.0, v["util"] + (wobble(i + index) if 5 < v["util"] < 95 else 0)))
                out.append(
                    gpu_sample(
                        host=host,
                        gpu_id=f"GPU-{host}-{index}",
                        vendor="nvidia",
                        source="nvml",
                        time=T0 + t,
                        index=index,
                        util_gpu_pct=util,
                        power_w=v["power"] + wobble(i, 5),
                        power_limit_w=LIMIT_W,
                        clock_sm_mhz=v["clock"],
                        temp_c=v["temp"],
                        mem_used_bytes=int(v["mem"] * GIB),
                        mem_total_bytes=int(TOTAL_GIB * GIB),
                    )
                )
    return out


def host_records(
    nodes: int, seconds: float, cpu: Callable[[str, float], float] | None = None
) -> list[Record]:
    return [
        host_sample(host=host, time=T0 + t, cpu_pct=cpu(host, t) if cpu else 40.0 + wobble(int(t)))
        for t in (i * EVERY for i in range(int(seconds / EVERY)))
        for host in hosts_of(nodes)
    ]


def step_metrics(seconds: float, until: float | None = None) -> list[Record]:
    """A loss every 10 s (until ``until`` seconds, the end by default)."""
    end = seconds if until is None else until
    return [
        metric("loss", 2.0 / (1 + step), step=step, time=T0 + 10 * step + 1, source="gputui")
        for step in range(int(end // 10))
    ]


def job(
    nodes: int = 1, gpus: int = 4, minutes: float = 10, shape: Shape | None = None, **extra
) -> list[Record]:
    """A whole job's records, time-ordered: GPUs, hosts, steps, plus ``extra`` lists of records."""
    seconds = minutes * 60
    records = gpu_records(nodes, gpus, seconds, shape)
    records += host_records(nodes, seconds, extra.pop("cpu", None))
    records += step_metrics(seconds, extra.pop("steps_until", None))
    for more in extra.values():
        records += more
    return sorted(records, key=lambda r: r.time)


def healthy_one_node() -> list[Record]:
    return job(1, 4, 10)


def per_rank_step_times(ranks: int, seconds: float, slow: dict[int, float] | None = None) -> list[Record]:
    return [
        metric(
            "step_time_s",
            (slow or {}).get(rank, 0.5) + wobble(step + rank, 0.01),
            step=step,
            rank=rank,
            time=T0 + 10 * step + 2,
        )
        for step in range(int(seconds // 10))
        for rank in range(ranks)
    ]


def healthy_two_nodes() -> list[Record]:
    return job(2, 4, 10, ranks=per_rank_step_times(8, 600))


def straggler_node() -> list[Record]:
    """node2's four GPUs at 30 % while node1's run at 95 %, from minute 2 to minute 5."""

    def shape(host: str, index: int, t: float) -> dict:
        return {"util": 30.0, "power": 150.0} if host == "node2" and 120 <= t < 300 else {}

    return job(2, 4, 10, shape)


def straggler_gpu() -> list[Record]:
    """GPU 2 of one node at 40 % from minute 3 to minute 7."""
    return job(1, 4, 10, lambda h, i, t: {"util": 40.0} if i == 2 and 180 <= t < 420 else {})


def idle_gpu() -> list[Record]:
    """GPU 3 of one node idle all along (the job holds it, nothing runs on it)."""
    return job(1, 4, 10, lambda h, i, t: {"util": 0.0, "power": 60.0, "mem": 0.5} if i == 3 else {})


def megatron_straggler(steps: int = 40, slow_rank: int = 5) -> list[Record]:
    """Megatron ``--log-straggler`` min/max pairs: ``slow_rank`` is always the slowest."""
    out = []
    for step in range(steps):
        t = T0 + 10 * step + 3
        fast = (step % 7) + (step % 7 >= slow_rank)
        for rank, value, extreme in ((slow_rank, 410.0, "max"), (fast, 300.0, "min")):
            out.append(
                metric(
                    "rank_step_time_ms",
                    value + wobble(step, 3),
                    step=step,
                    rank=rank,
                    time=t,
                    extreme=extreme,
                    source="megatron_straggler",
                )
            )
    return out


def straggler_rank_megatron() -> list[Record]:
    return job(2, 4, 10, megatron=megatron_straggler())


def straggler_rank_means() -> list[Record]:
    """Rank 3's steps take 0.8 s, the others' 0.5 s."""
    return job(2, 4, 10, ranks=per_rank_step_times(8, 600, {3: 0.8}))


def nccl_times(
    ranks: int, seconds: float, per_rank_us: Callable[[int], float], ops: int = 100
) -> list[Record]:
    """NCCL Inspector's records as gputui reads them: per rank of one communicator and 10 s window, the
    mean time of its ``ops`` all-reduces (``count``), with the process's host and pid."""
    return [
        metric(
            "nccl_time_us",
            per_rank_us(rank),
            rank=rank,
            time=T0 + 10 * step + 4,
            collective="AllReduce",
            comm="0x7f8c496ae9f661",
            comm_name="DP Group 0",
            msg_bytes=1 << 26,
            count=ops,
            host=f"node{rank // 4 + 1}",
            pid=1000 + rank,
            source="nccl_inspector",
        )
        for step in range(int(seconds // 10))
        for rank in range(ranks)
    ]


def straggler_rank_nccl() -> list[Record]:
    """Rank 6 arrives late at every all-reduce: its collectives are short, the others wait in theirs."""
    return job(2, 4, 10, nccl=nccl_times(8, 600, lambda rank: 1500.0 if rank == 6 else 9000.0))


def input_bound_bursts() -> list[Record]:
    """GPUs idle every other sample while the host CPU is saturated (data loading on the CPU)."""
    return job(1, 4, 10, lambda h, i, t: {"util": 0.0 if int(t / EVERY) % 2 else 98.0}, cpu=lambda h, t: 98.0)


def input_bound_data_time() -> list[Record]:
    """The data-loading time is 45 % of the step time."""
    data = [metric("data_time_s", 0.18, step=s, time=T0 + 10 * s + 1) for s in range(60)]
    steps = [metric("step_time_s", 0.4, step=s, time=T0 + 10 * s + 1) for s in range(60)]
    return job(1, 4, 10, data=data, steps=steps)


def comm_bound() -> list[Record]:
    """Two nodes' GPUs 85 % busy at 30 % of their power limit: waiting in collectives."""
    return job(2, 4, 10, lambda h, i, t: {"util": 85.0, "power": 120.0})


def comm_bound_nccl() -> list[Record]:
    """Every rank in NCCL collectives 6 s of every 10 s (100 all-reduces of 60 ms)."""
    return job(2, 4, 10, nccl=nccl_times(8, 600, lambda rank: 60_000.0))


def hang(util: float) -> list[Record]:
    """Steps stop at minute 5; the job runs on for 15 minutes, its GPUs at ``util``."""
    return job(1, 4, 20, lambda h, i, t: {"util": util} if t >= 300 else {}, steps_until=300)


def memory_creep() -> list[Record]:
    """Memory used grows from 20 to 70 GiB over 20 minutes (a leak)."""
    return job(1, 2, 20, lambda h, i, t: {"mem": 20 + 50 * t / 1200})


def throttled_clock() -> list[Record]:
    """GPU 1's SM clock falls to 900 MHz at full utilisation from minute 3 to minute 8."""
    return job(1, 4, 10, lambda h, i, t: {"clock": 900.0} if i == 1 and 180 <= t < 480 else {})


def hot_gpu() -> list[Record]:
    """GPU 0 at 88 °C from minute 4 to minute 8."""
    return job(1, 4, 10, lambda h, i, t: {"temp": 88.0} if i == 0 and 240 <= t < 480 else {})


def power_capped() -> list[Record]:
    """Every GPU at its 400 W limit."""
    return job(1, 2, 10, lambda h, i, t: {"power": 400.0})
