"""What the readers of structured run stores (:mod:`gputui.logs.files.mlflow_store`,
:mod:`gputui.logs.files.wandb_offline`) share: one metric record per logged value, the Lightning-like scope
rule, and the run's end state as the ``outcome`` event (``docs/log-formats.md``, *Structured sources*).

These stores log values by name at a step, with the time each was logged: the records carry that
``step``, that ``time`` (``time_source: "emitted"``) and the ``epoch`` logged at the same step (a value
named ``epoch``, which is no metric itself). As in Lightning's ``metrics.csv``, ``val*``, ``test*`` and
``*_epoch`` values of a step with an epoch are ``epoch`` values; the rest are ``step`` values.
"""

from __future__ import annotations

from gputui.logs.base import Context, metric
from gputui.stream.records import Record, event

EPOCH = "epoch"


def scope_of(name: str, epoch: float | None) -> str:
    lower = name.lower()
    epochal = lower.startswith(("val", "test")) or lower.endswith("_epoch")
    return "epoch" if epochal and epoch is not None else "step"


def as_epoch(value: float | None) -> float | None:
    """An epoch as logged (a float in these stores): a whole number becomes an int."""
    if value is None or value != value:
        return None
    return int(value) if float(value).is_integer() else value


def logged_value(
    name: str, value: float, *, source: str, when: float, step: int | None, epoch: float | None, ctx: Context
) -> Record | None:
    """The metric record of one logged value (None when the name cannot be made a metric name)."""
    rec = metric(
        name, value, source=source, scope=scope_of(name, epoch), ctx=ctx, now=when, epoch=epoch, step=step
    )
    if rec is not None:
        rec.fields["time_source"] = "emitted"
    return rec


def end_event(outcome: str, evidence: str, when: float) -> Record:
    """The ``outcome`` event a store's own end state gives (``evidence`` quotes it)."""
    return event(
        "outcome", message=f"{outcome}: {evidence}"[:300], time=when, outcome=outcome, evidence=evidence
    )
