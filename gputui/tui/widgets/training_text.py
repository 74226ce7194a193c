"""The training pane's text under the chart: unread lines, epoch progress and epoch-time bars, images/s
and the latest values (for a run that counts steps and no epochs: step progress, the loss and its trend,
step time, throughput, MFU)."""

from __future__ import annotations

from rich.text import Text

from gputui.analysis.energy import RunEnergy, joules_text
from gputui.analysis.steps import StepSummary, progress_text, trend_text
from gputui.monitor.training import TrainingState
from gputui.tui.format import SPARK, bar, duration, number


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.3g} s"


def step_lines(steps: StepSummary, text: Text, ended: bool = False) -> None:
    """A step run: steps done/planned with a bar and ETA, loss first → last and its trend, step time,
    tokens/s or samples/s and MFU (the fields of :class:`~gputui.analysis.steps.StepSummary`)."""
    text.append(progress_text(steps), style="bold")
    if steps.eta_s is not None and not ended:
        text.append(f"  ETA {duration(steps.eta_s)}")
    if steps.planned:
        text.append("  " + bar(100 * min(steps.done, steps.planned) / steps.planned, 12), style="magenta")
    text.append("\n")
    if steps.loss_first is not None and steps.loss_last is not None:
        text.append(f"{steps.loss_name} {number(steps.loss_first)} → {number(steps.loss_last)}")
        trend = trend_text(steps)
        if trend:
            style = {"falling": "green", "rising": "bold red"}.get(steps.trend or "", "")
            text.append(f"  {trend}", style=style)
        text.append("\n")
    figures = []
    if steps.step_time_recent_s is not None and steps.step_time_s is not None:
        recent, mean = _ms(steps.step_time_recent_s), _ms(steps.step_time_s)
        figures.append(f"{recent}/step" + (f" (mean {mean})" if mean != recent else ""))
    if steps.throughput is not None:
        unit = "tok/s" if steps.throughput_unit == "tokens/s" else steps.throughput_unit
        figures.append(f"{number(steps.throughput, 3)} {unit}")
    if steps.mfu_pct is not None:
        figures.append(f"MFU {steps.mfu_pct:.1f} %")
    if figures:
        text.append("  ".join(figures) + "\n")


def unread_text(training: TrainingState) -> str | None:
    """``3,000 lines in 1 shape not read: T to teach`` (:mod:`gputui.logs.unread`), first: a miss is seen."""
    lines, shapes = training.unread_total()
    if not shapes:
        return None
    return f"{lines:,} line{'s' * (lines != 1)} in {shapes} shape{'s' * (shapes != 1)} not read: T to teach"


def energy_text(energy: RunEnergy, steps: bool, width: int = 80) -> str | None:
    """``energy 0.12 kWh · last epoch 120 kJ`` (a step run: ``· 1.0 kJ/step``; under 40 columns
    ``0.12 kWh · 120 kJ/epoch``); None where no power was sampled (unknown is not shown as 0)."""
    if energy.total_j is None:
        return None
    narrow = width < 40
    parts = [joules_text(energy.total_j) if narrow else f"energy {joules_text(energy.total_j)}"]
    last = energy.epochs[-1].joules if energy.epochs else None
    if not steps and last is not None:
        parts.append(f"{joules_text(last)}/epoch" if narrow else f"last epoch {joules_text(last)}")
    if steps and energy.per_step_j is not None:
        parts.append(f"{joules_text(energy.per_step_j)}/step")
    return " · ".join(parts)


def epoch_lines(training: TrainingState, width: int, energy: RunEnergy | None = None) -> Text:
    """The logs' unread lines, epoch progress, epoch-time bars (newest right), images/s and the latest
    values (a run without epochs: :func:`step_lines` and the latest values other than the loss); the
    energy (:meth:`gputui.analysis.run.RunAnalysis.energy`) where given and known."""
    text = Text(no_wrap=True, overflow="ellipsis")
    unread = unread_text(training)
    if unread:
        text.append(unread + "\n", style="yellow")
    steps = training.step_summary()
    if steps is not None:
        step_lines(steps, text, training.ended)
    epoch, total = training.current_epoch(), training.epochs_total
    if epoch is not None:
        done = len(training.rows())
        label = f"epoch {epoch}" + (f"/{total}" if total else "") + f" ({done} done)"
        text.append(label, style="bold")
        if total:
            text.append("  " + bar(100 * min(done, total) / total, 12), style="magenta")
        eta = training.eta_s()
        if eta is not None and not training.ended:
            text.append(f"  ETA {duration(eta)}")
        text.append("\n")
    times = training.epoch_times()
    if times:
        top = max(times)
        shown = times[-max(1, (width - 22) // 2) :]
        text.append("epoch s ")
        text.append(" ".join(SPARK[min(7, int(t / top * 7.999))] for t in shown), style="cyan")
        text.append(f"  last {times[-1]:.1f}s")
        if len(times) > 1:
            text.append(f" (1st {times[0]:.1f}s)", style="dim")
        text.append("\n")
    said = energy_text(energy, steps is not None, width) if energy is not None else None
    if said:
        text.append(said + "\n")
    rate = training.images_per_s()
    if rate is not None:
        text.append(f"images/s {number(rate, 3)}  ")
    for name in ("loss", "accuracy", "val_loss", "val_accuracy"):
        if steps is not None and name == steps.loss_name:
            continue  # shown with its trend above
        series = training.metrics.get(name)
        if series is not None and series.last is not None:
            text.append(f"{name} {number(series.last)}  ")
    if not text.plain:
        text.append("waiting for training metrics…", style="dim")
    return text
