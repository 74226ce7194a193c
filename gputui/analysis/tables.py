"""Rich tables of a run report and of a scaling comparison (the terminal view of ``gputui report`` and
``gputui scale``; the TUI's report view shows the same tables)."""

from __future__ import annotations

import math
from typing import IO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gputui.analysis.energy import RunEnergy, joules_text
from gputui.analysis.run import RunReport
from gputui.analysis.scaling import ScalePoint
from gputui.analysis.steps import step_rows
from gputui.logs.outcome import has_ended
from gputui.textsafe import printable

EPOCH_ROWS_SHOWN = 12
#: Tables are drawn at least this wide: a terminal that says 0 or 5 columns (``COLUMNS=0``) still gets
#: every number (its lines wrap) rather than an empty frame.
MIN_WIDTH = 60


def table_console(out: IO[str]) -> Console:
    """The console that prints report and scale tables to ``out``, its width clamped to MIN_WIDTH."""
    console = Console(file=out, highlight=False)
    if console.width < MIN_WIDTH:
        console.width = MIN_WIDTH
    return console


def _plain(text: str) -> str:
    """Text from a log or a file name for a cell: its ``[`` never read as markup, no escape sequence."""
    return escape(printable(text))


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def value_text(value: float | None, digits: int = 4) -> str:
    """A metric's value for a cell: ``-`` when missing, ``NaN``/``inf`` when the run produced one, a whole
    number with thousands separators (``10,000``, never ``1e+04``), else ``digits`` significant digits."""
    if value is None:
        return "-"
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 10**digits:
        return f"{value:,.1f}"
    return f"{value:.{digits}g}"


def _gib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**30:.1f} GiB"


def gpus_text(report: RunReport) -> str:
    """``8 seen on 2 nodes · ranks 8 (train_started)``; ranks ``unknown`` where no trainer said its world
    size and the log labels no rank above 0."""
    seen = len(report.gpus)
    if seen:
        nodes = report.nodes_seen
        gpus = f"{seen} seen on {nodes} node{'s' * (nodes != 1)}"
    else:
        gpus = "none sampled"
    ranks = f"{report.ranks} ({report.ranks_source})" if report.ranks else "unknown"
    return f"{gpus} · ranks {ranks}"


def energy_rows(energy: RunEnergy) -> list[tuple[str, str]]:
    """(what, value): the run's energy and its source, J per epoch and per step where known."""
    if energy.total_j is None:
        return [("energy", "unknown (no power sampled)")]
    gaps = f"; {energy.gaps} gap{'s' * (energy.gaps != 1)} over 60 s not counted" if energy.gaps else ""
    rows = [("energy", f"{joules_text(energy.total_j)} ({energy.source}{gaps})")]
    if energy.per_epoch_j is not None:
        known = sum(e.joules is not None for e in energy.epochs)
        rows.append(("energy per epoch", f"{joules_text(energy.per_epoch_j)} (mean of {known})"))
    if energy.per_step_j is not None:
        rows.append(("energy per step", f"{joules_text(energy.per_step_j)} (recent)"))
    return rows


def summary_table(report: RunReport) -> Table:
    title = report.name + ("  (SIMULATED GPUs)" if report.simulated else "")
    table = Table(title=_plain(title), show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row("GPUs", gpus_text(report))
    table.add_row("GPU util mean", "-" if report.util_mean is None else f"{_num(report.util_mean)} %")
    for what, value in energy_rows(report.energy):
        table.add_row(what, value)
    if report.steps is not None:  # a run with steps and no epochs
        for what, value in step_rows(report.steps, ended=has_ended(report.outcome)):
            table.add_row(_plain(what), _plain(value))
    else:
        table.add_row("epochs", str(len(report.epochs)))
        left_out = " (first epoch left out)" if report.first_epoch_left_out else ""
        epoch_time = f"{_num(report.epoch_time_s, 2)} s{left_out}" if report.epoch_time_s else "-"
        table.add_row("epoch time", epoch_time)
    if report.throughput is not None:
        note = f" ({report.throughput_note})" if report.throughput_note else ""
        table.add_row("throughput", f"{_num(report.throughput)} {report.throughput_unit}{note}")
    for name, value in sorted(report.final.items()):
        table.add_row(_plain(f"final {name}"), value_text(value, 6))
    if report.outcome:
        table.add_row("outcome", _plain(f"{report.outcome}: {(report.outcome_evidence or '')[:100]}"))
    return table


def gpu_table(report: RunReport) -> Table | None:
    if not report.gpus:
        return None
    table = Table(title="per GPU", title_justify="left")
    for column in ("host", "GPU", "util mean %", "util peak %", "idle", "mem peak", "energy"):
        table.add_column(column, justify="left" if column in ("host", "GPU") else "right")
    for g in report.gpus:
        idle = "-" if g.idle_share is None else f"{100 * g.idle_share:.0f} %"
        gpu = g.gpu_id if len(g.gpu_id) <= 16 else g.gpu_id[:13] + "…"
        peak = _num(g.util_peak, 0)
        cells = (
            _num(g.util_mean),
            peak,
            idle,
            _gib(g.mem_peak_bytes),
            "-" if g.energy_j is None else joules_text(g.energy_j),
        )
        table.add_row(_plain(g.host), _plain(gpu), *cells)
    return table


def epoch_table(report: RunReport) -> Table | None:
    rows = report.epochs[-EPOCH_ROWS_SHOWN:]
    if not rows:
        return None
    names: list[str] = []
    for row in rows:
        names += [n for n in row.values if n not in names and n != "epoch_time_s"]
    shown = f"last {len(rows)} of {len(report.epochs)} epochs" if len(report.epochs) > len(rows) else "epochs"
    table = Table(title=shown, title_justify="left")
    energy = {e.epoch: e.joules for e in report.energy.epochs if e.joules is not None}
    columns = ("epoch", "time s", "img/s") + (("energy",) if energy else ())
    for column in (*columns, *names[:8]):
        table.add_column(_plain(column), justify="right")
    for row in rows:
        cells = [str(row.epoch), _num(row.epoch_time_s, 2), _num(row.images_per_s)]
        if energy:
            cells.append(joules_text(energy[row.epoch]) if row.epoch in energy else "-")
        cells += [value_text(row.values.get(n)) for n in names[:8]]
        table.add_row(*cells)
    return table


def report_tables(report: RunReport) -> list[Table]:
    return [t for t in (summary_table(report), gpu_table(report), epoch_table(report)) if t is not None]


def scale_table(points: list[ScalePoint], scaling: str) -> Table:
    """One row per size; the throughput unit in its header when the runs share it; why a run scaled
    poorly under the table (a column of prose would wrap on an 80-column terminal)."""
    basis = "epoch time" if scaling == "strong" else "throughput per GPU"
    title = f"{scaling} scaling (efficiency from {basis}; first epoch left out)"
    why = [_plain(f"{p.run}: {p.diagnosis}") for p in points if p.diagnosis]
    table = Table(title=title, title_justify="left", caption="\n".join(why) or None, caption_justify="left")
    units = {p.throughput_unit for p in points if p.throughput is not None}
    shared = units.pop() if len(units) == 1 else None
    for column in ("run", "GPUs", "epoch s", shared or "throughput", "speedup", "efficiency", "accuracy"):
        table.add_column(column, justify="left" if column == "run" else "right")
    table.add_column("util %", justify="right")
    for p in points:
        rate = "-" if p.throughput is None else _num(p.throughput)
        if p.throughput is not None and not shared:
            rate += f" {p.throughput_unit}"
        efficiency = "-" if p.efficiency is None else f"{100 * p.efficiency:.0f} %"
        speedup = "-" if p.speedup is None else f"{p.speedup:.2f}×"
        accuracy = value_text(p.accuracy)
        row = (str(p.gpus or "-"), _num(p.epoch_time_s, 2), rate, speedup, efficiency, accuracy)
        table.add_row(_plain(p.run), *row, _num(p.util_mean))
    return table
