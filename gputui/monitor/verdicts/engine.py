"""The verdict engine: fed records one at a time, it says why a job is slow or stuck.

:class:`VerdictEngine` keeps bounded sums (:mod:`.windows`, :mod:`.metrics`), so the dashboard can feed
it for the whole of a long job and ``gputui report`` over a whole record file; :meth:`findings` runs
every rule (one function each, thresholds from the settings) and returns their findings, worst first.
A healthy run gets none.
"""

from __future__ import annotations

from collections.abc import Iterable

from gputui.config import AlertThresholds, VerdictSettings
from gputui.monitor.verdicts import device, job, peers, ranks
from gputui.monitor.verdicts.context import Context
from gputui.monitor.verdicts.findings import Finding, ordered
from gputui.monitor.verdicts.metrics import MetricSums
from gputui.monitor.verdicts.windows import Windows
from gputui.stream.records import Record


class VerdictEngine:
    def __init__(
        self, thresholds: AlertThresholds | None = None, settings: VerdictSettings | None = None
    ) -> None:
        self.thresholds = thresholds or AlertThresholds()
        self.settings = settings or VerdictSettings()
        self.windows = Windows(self.settings.window_s, self.thresholds.idle_util_pct)
        self.metrics = MetricSums()
        self.last_output: float | None = None
        self.last_time: float | None = None
        self.revision = 0  # bumps on every record: a caller may keep findings until it moves

    def add(self, rec: Record) -> None:
        kind = rec.kind
        if kind == "gpu":
            self.windows.add_gpu(rec)
        elif kind == "host":
            self.windows.add_host(rec)
        elif kind == "metric":
            self.metrics.add(rec)
        else:
            return
        self.last_time = rec.time if self.last_time is None else max(self.last_time, rec.time)
        self.revision += 1

    def add_all(self, records: Iterable[Record]) -> VerdictEngine:
        for rec in records:
            self.add(rec)
        return self

    def output_grew(self, when: float) -> None:
        """The job's output grew at ``when`` (live: the dashboard's followed logs)."""
        self.last_output = when if self.last_output is None else max(self.last_output, when)
        self.revision += 1

    def forget_metrics(self) -> None:
        """The logs are read again from the start: the metric side starts empty (the GPUs stay)."""
        self.metrics.forget()
        self.revision += 1

    def findings(self, now: float | None = None, running: bool | None = None) -> list[Finding]:
        """Every finding at record time ``now`` (default: the last record) while the job runs or not
        (default: it ran until its last record, as a record file says)."""
        when = now if now is not None else self.last_time
        if when is None:
            return []
        ctx = Context(
            self.windows,
            self.metrics,
            self.thresholds,
            self.settings,
            when,
            running if running is not None else True,
            self.last_output,
        )
        nodes = peers.straggler_nodes(ctx)
        found = nodes + peers.straggler_gpus(ctx, nodes) + peers.idle_gpus(ctx)
        found += ranks.straggler_ranks(ctx) + job.input_bound(ctx) + job.comm_bound(ctx) + job.hang(ctx)
        found += device.throttling(ctx) + device.memory_creep(ctx)
        return ordered(found)


def judge(
    records: Iterable[Record],
    thresholds: AlertThresholds | None = None,
    settings: VerdictSettings | None = None,
) -> list[Finding]:
    """The findings of a whole recorded run."""
    return VerdictEngine(thresholds, settings).add_all(records).findings()
