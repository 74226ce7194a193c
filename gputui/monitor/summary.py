"""A few lines that say what a dashboard state holds (``demo --headless``, the end of a run)."""

from __future__ import annotations

from gputui.analysis.steps import span, step_rows
from gputui.analysis.tables import energy_rows
from gputui.monitor.state import DashboardState
from gputui.monitor.training import MetricSeries


def summary_lines(state: DashboardState) -> list[str]:
    job, board, training = state.job, state.board, state.training
    s = board.summary()
    fmt = lambda v, d=0: "-" if v is None else f"{v:.{d}f}"  # noqa: E731
    lines = [f"{job.title}: {job.state}" + (" (SIMULATED GPUs)" if board.simulated else "")]
    lines.append(_gpu_line(s, len(board.util_line)))
    rows = training.rows()
    loss = training.loss()
    first_loss = loss.by_time.values[0] if loss and len(loss.by_time) else None
    steps = training.step_summary()
    if steps is not None:  # a run without epochs: its steps
        lines.append("training: steps (no epochs)")
        lines += [f"  {what}: {value}" for what, value in step_rows(steps)]
        limit = _against_limit(state)
        if limit:
            lines.append(f"  time limit: {limit}")
    else:
        lines.append(
            f"training: {len(rows)} epoch(s)"
            + (f" of {training.epochs_total}" if training.epochs_total else "")
            + _loss_words(loss, first_loss)
            + (f"; images/s {fmt(training.images_per_s(), 1)}" if training.images_per_s() else "")
        )
    times = training.epoch_times()
    if times:
        lines.append("epoch times s: " + " ".join(f"{t:.2f}" for t in times))
    lines.append("; ".join(f"{what}: {value}" for what, value in energy_rows(state.analysis.energy())))
    final = state.final_outcome()
    if final is not None:
        lines.append((f"outcome: {final[0]}" + (f": {final[1]}" if final[1] else ""))[:300])
    lines.append(f"records: {state.records}; alerts: {len(state.alerts.history)}")
    for alert in state.alerts.history[-5:]:
        lines.append(f"  alert {alert.kind}: {alert.message}")
    if state.status is not None and state.status.level == "error":
        lines.append(f"error: {state.status.message}")
    return lines


def _loss_words(loss: MetricSeries | None, first: float | None) -> str:
    if loss is None:
        return "; no loss seen"
    if loss.last is None or first is None:
        return f"; loss only {loss.nonfinite or 'not finite'} seen"
    return f"; loss {first:.4f} → {loss.last:.4f}"


def _gpu_line(s: dict, points: int) -> str:
    """``GPUs: 2 on 1 node(s); util min/median/max 31/40/52 %; …`` (a value not sampled: ``-``);
    ``GPUs: none sampled`` without GPU samples."""
    if not s["gpus"]:
        return "GPUs: none sampled"
    util = "/".join("-" if s[k] is None else f"{s[k]:.0f}" for k in ("util_min", "util_median", "util_max"))
    where = f"GPUs: {s['gpus']} on {s['nodes']} node(s)"
    return f"{where}; util min/median/max {util} %; {points} points of job utilisation"


def _against_limit(state: DashboardState) -> str | None:
    """Which ends first, the planned steps or the job's time limit (where both are known)."""
    eta, elapsed, limit = state.training.eta_s(), state.elapsed_s(), state.job.time_limit_s
    if eta is None or elapsed is None or not limit:
        return None
    left = limit - elapsed
    if eta <= left:
        return f"the planned steps end first ({span(left - eta)} before the limit)"
    return f"the time limit ends first ({span(eta - left)} before the planned steps)"


def job_figures(state: DashboardState) -> tuple[float | None, float | None]:
    """(mean GPU utilisation % over reporting GPUs, current loss): what the jobs list shows for a job."""
    utils = state.board.utils()
    loss = state.training.loss()
    return (sum(utils) / len(utils) if utils else None), (loss.last if loss is not None else None)
