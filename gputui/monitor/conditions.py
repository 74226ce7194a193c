"""One classifier of GPU, node and output conditions: the only place that compares a value to a threshold.

:func:`classify` reads a :class:`~gputui.monitor.gpus.GpuBoard` (latest values, idle-since times, node
means), the followed logs and the ``[alerts]`` thresholds of the settings, and returns every condition
found, each with a :class:`Level`, a short label for the screen and a sentence with its numbers. The
alerts raise an alert for each condition at :attr:`Level.WARNING` or above; the GPU pane maps levels to
styles. Both read the same :class:`Conditions`, so they cannot disagree about a GPU.

Rules (``th`` = the thresholds; *busy*: the median reporting GPU at or above ``th.busy_util_pct``):

- ``lost`` (critical): the GPU or its node was lost; its last values count in nothing else.
- ``gpu_idle``: under ``th.idle_util_pct`` while the job runs and is busy; a notice from
  :data:`IDLE_NOTICE_S`, a warning from ``th.gpu_idle_minutes``.
- ``mem_high`` (warning): memory at or above ``th.mem_high_pct``.
- ``hot`` (warning): temperature at or above ``th.hot_temp_c``.
- ``straggler`` (warning, a node): the job is busy on more than one node and the node's mean is
  ``th.straggler_gap_pct`` points or more below the median (the samples say the job ran, so a recorded
  run's straggler counts too).
- ``no_output`` (warning, a log): no new bytes for ``th.no_output_minutes`` while the job runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum

from gputui.config import AlertThresholds
from gputui.monitor.gpus import GpuBoard, GpuState, NodeState
from gputui.monitor.logtext import LogText

IDLE_NOTICE_S = 30.0  # an idle GPU is worth a (quiet) mention before it is worth an alert
UTIL_GOOD_PCT = 60.0  # utilisation bars: OK from here, a notice from UTIL_LOW_PCT, a warning below it
UTIL_LOW_PCT = 20.0


class Level(IntEnum):
    """How much a condition needs a person: ``OK`` < ``NOTICE`` < ``WARNING`` < ``CRITICAL``."""

    OK = 0
    NOTICE = 1
    WARNING = 2
    CRITICAL = 3


@dataclass(frozen=True, slots=True)
class Condition:
    """One finding about one GPU, node or log."""

    kind: str  # lost | gpu_idle | mem_high | hot | straggler | no_output
    level: Level
    subject: str  # "host:gpu_id", "host" or a log's path: what it is about
    label: str  # the flag on screen: "idle 4m", "mem", "hot", "straggler", "LOST"
    reason: str  # one sentence with the numbers: "node2 GPU 1 memory 98% full"
    evidence: str  # the values behind it

    @property
    def key(self) -> str:
        """Stable while the condition lasts (the alert's key)."""
        return f"{self.kind}:{self.subject}"


@dataclass
class Conditions:
    """Everything :func:`classify` found in one state, by GPU, by node and for the logs."""

    median: float | None  # the job's median utilisation over reporting GPUs
    busy: bool  # the median GPU is at or above busy_util_pct
    gpus: dict[tuple[str, str], tuple[Condition, ...]] = field(default_factory=dict)
    nodes: dict[str, tuple[Condition, ...]] = field(default_factory=dict)
    logs: tuple[Condition, ...] = ()

    def of_gpu(self, gpu: GpuState) -> tuple[Condition, ...]:
        return self.gpus.get((gpu.host, gpu.gpu_id), ())

    def of_node(self, node: NodeState) -> tuple[Condition, ...]:
        return self.nodes.get(node.host, ())

    def __iter__(self) -> Iterator[Condition]:
        for found in self.gpus.values():
            yield from found
        for found in self.nodes.values():
            yield from found
        yield from self.logs


def worst(conditions: Iterable[Condition]) -> Level:
    """The highest level among ``conditions`` (``OK`` for none)."""
    return max((c.level for c in conditions), default=Level.OK)


# The comparisons shared with the verdict rules (:mod:`gputui.monitor.verdicts`): written once, here.


def is_busy(util: float | None, th: AlertThresholds) -> bool:
    """Utilisation (a GPU's, or the job's median) at or above ``busy_util_pct``."""
    return util is not None and util >= th.busy_util_pct


def is_idle(util: float | None, th: AlertThresholds) -> bool:
    """Utilisation under ``idle_util_pct``."""
    return util is not None and util < th.idle_util_pct


def is_hot(temp: float | None, th: AlertThresholds) -> bool:
    """Temperature at or above ``hot_temp_c``."""
    return temp is not None and temp >= th.hot_temp_c


def lags(value: float, peers: float, th: AlertThresholds) -> bool:
    """A node's (or GPU's) utilisation ``straggler_gap_pct`` points or more below its peers'."""
    return peers - value >= th.straggler_gap_pct


def quiet_too_long(seconds: float, th: AlertThresholds) -> bool:
    """No new output (or progress) for ``no_output_minutes``."""
    return seconds >= th.no_output_minutes * 60


def util_level(util: float | None) -> Level:
    """How well a GPU (or a node, on average) is used, for its bar: unknown counts as low."""
    if util is not None and util >= UTIL_GOOD_PCT:
        return Level.OK
    if util is not None and util >= UTIL_LOW_PCT:
        return Level.NOTICE
    return Level.WARNING


def classify(
    board: GpuBoard,
    th: AlertThresholds,
    now: float,
    running: bool,
    logs: Iterable[LogText] = (),
) -> Conditions:
    """Every condition of ``board`` and ``logs`` at record time ``now`` (``running``: the job runs)."""
    median = board.median_util()
    found = Conditions(median, is_busy(median, th))
    for gpu in board.gpus.values():
        if conditions := gpu_conditions(board, gpu, th, now, running, found):
            found.gpus[(gpu.host, gpu.gpu_id)] = conditions
    for node in board.nodes.values():
        if conditions := node_conditions(board, node, th, found):
            found.nodes[node.host] = conditions
    found.logs = tuple(c for log in logs if (c := log_condition(log, th, now, running)) is not None)
    return found


def gpu_name(gpu: GpuState) -> str:
    return f"{gpu.host} GPU {gpu.index if gpu.index is not None else gpu.gpu_id}"


def gpu_conditions(
    board: GpuBoard, gpu: GpuState, th: AlertThresholds, now: float, running: bool, job: Conditions
) -> tuple[Condition, ...]:
    """The conditions of one GPU (``job``: the job-wide median and busy flag)."""
    subject, name = f"{gpu.host}:{gpu.gpu_id}", gpu_name(gpu)
    if not board.reporting(gpu):
        why = board.nodes[gpu.host].lost or "no longer reported"
        return (Condition("lost", Level.CRITICAL, subject, "LOST", f"{name} lost", why),)
    found: list[Condition] = []
    if running and job.busy and gpu.idle_since is not None:
        idle = now - gpu.idle_since
        level = (
            Level.WARNING
            if idle >= th.gpu_idle_minutes * 60
            else Level.NOTICE
            if idle >= IDLE_NOTICE_S
            else Level.OK
        )
        if level is not Level.OK:
            util = "?" if gpu.util is None else f"{gpu.util:.0f}"  # a sample may lack it
            found.append(
                Condition(
                    "gpu_idle",
                    level,
                    subject,
                    f"idle {idle / 60:.0f}m" if idle >= 60 else f"idle {idle:.0f}s",
                    f"{name} idle for {idle / 60:.0f} min while the job runs",
                    f"util {util}% since {idle:.0f} s; job median {job.median:.0f}%",
                )
            )
    pct = gpu.mem_pct
    if pct is not None and pct >= th.mem_high_pct:
        found.append(
            Condition(
                "mem_high",
                Level.WARNING,
                subject,
                "mem",
                f"{name} memory {pct:.0f}% full",
                f"{gpu.mem_used} of {gpu.mem_total} bytes",
            )
        )
    if is_hot(gpu.temp, th):
        found.append(
            Condition(
                "hot",
                Level.WARNING,
                subject,
                "hot",
                f"{name} at {gpu.temp:.0f}°C (may throttle)",
                f"temperature {gpu.temp:.0f}°C ≥ {th.hot_temp_c:.0f}°C",
            )
        )
    return tuple(found)


def node_conditions(
    board: GpuBoard, node: NodeState, th: AlertThresholds, job: Conditions
) -> tuple[Condition, ...]:
    """The conditions of one node as a whole: lost, or a straggler."""
    if node.lost:
        return (Condition("lost", Level.CRITICAL, node.host, "LOST", f"node {node.host} lost", node.lost),)
    mean, median = node.mean_util(), job.median
    if not job.busy or len(board.nodes) < 2 or mean is None or median is None:
        return ()
    if not lags(mean, median, th):
        return ()
    return (
        Condition(
            "straggler",
            Level.WARNING,
            node.host,
            "straggler",
            f"node {node.host} lags: util {mean:.0f}%",
            f"node mean {mean:.0f}% vs job median {median:.0f}%",
        ),
    )


def log_condition(log: LogText, th: AlertThresholds, now: float, running: bool) -> Condition | None:
    """``no_output`` when a followed file has been quiet for ``no_output_minutes`` while the job runs."""
    if not running or log.last_data_time is None:
        return None
    quiet = now - log.last_data_time
    if not quiet_too_long(quiet, th):
        return None
    return Condition(
        "no_output",
        Level.WARNING,
        log.path,
        "no output",
        f"no new output for {quiet / 60:.0f} min (hang?)",
        f"{log.path}: last data {quiet:.0f} s ago",
    )
