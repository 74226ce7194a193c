"""``gputui report RUN...`` and ``gputui scale --from RUN...``: what a run used and how fast it went, and
whether more GPUs helped (``docs/analysis.md``).

RUN is a record file, a training log, a metric file or run directory, or a Slurm job id, resolved to its
files by :mod:`gputui.sources.inputs` (a store of several runs is one RUN per run:
:func:`gputui.logs.files.metric_files.runs_of`).
Rich tables on a terminal; ``--json`` and ``--csv`` for scripts. A run that counts steps and no epochs
gets its step summary (``steps`` in ``--json``; steps, loss, step time and ETA columns in ``--csv``).
After the tables, the run's verdict: why it was slow or stuck, one line per finding
(:mod:`gputui.monitor.verdicts`, ``docs/verdicts.md``; ``verdict`` in ``--json`` and ``--csv``).
The run's energy in ``--csv`` as in the text report: ``energy_j``, ``energy_kwh``, ``energy_j_per_epoch``,
``energy_j_per_step`` (an empty cell where unknown: :mod:`gputui.analysis.energy`).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from dataclasses import dataclass, field
from typing import IO

from gputui.analysis import RunAnalysis, RunReport, ScalePoint
from gputui.config import Config, load_config_or_defaults
from gputui.logs.files.metric_files import runs_of
from gputui.monitor.verdicts import HEALTHY, Finding, VerdictEngine
from gputui.sources.inputs import RunError, run_records
from gputui.textsafe import printable


@dataclass
class JudgedRun:
    """A run's report and its verdict's findings."""

    report: RunReport
    findings: list[Finding] = field(default_factory=list)


def analyse(run: str, batch_size: int | None = None, config: Config | None = None) -> RunReport:
    """One RUN's report (:mod:`gputui.sources.inputs` finds and reads its files); RunError: one line."""
    idle_pct = (config or Config()).alerts.idle_util_pct
    return RunAnalysis(run, batch_size=batch_size, idle_pct=idle_pct).add_all(run_records(run)).report()


def judge(run: str, batch_size: int | None = None, config: Config | None = None) -> JudgedRun:
    """One RUN's report and verdict from one read of its records; RunError: one line."""
    config = config or Config()
    analysis = RunAnalysis(run, batch_size=batch_size, idle_pct=config.alerts.idle_util_pct)
    engine = VerdictEngine(config.alerts, config.verdict)
    for rec in run_records(run):
        analysis.add(rec)
        engine.add(rec)
    return JudgedRun(analysis.report(), engine.findings())


def verdict_lines(findings: list[Finding]) -> list[str]:
    """One printable line per finding (names from the records are made safe), or the healthy line."""
    return [printable(f.line()) for f in findings] or [HEALTHY]


def report_dict(report: RunReport) -> dict:
    return {
        "run": report.name,
        "gpus": report.gpu_count,
        "world_size_source": report.world_size_source,
        "simulated": report.simulated,
        "epochs": len(report.epochs),
        "epoch_time_s": report.epoch_time_s,
        "first_epoch_left_out": report.first_epoch_left_out,
        "throughput": report.throughput,
        "throughput_unit": report.throughput_unit,
        "throughput_note": report.throughput_note,
        "util_mean_pct": report.util_mean,
        "energy_j": report.energy_j,
        **report.usage_dict(),  # gpus_seen, nodes_seen, ranks, energy (kWh, J per epoch and per step)
        "final": report.final,
        "outcome": report.outcome,
        "outcome_evidence": report.outcome_evidence,
        "per_gpu": [
            {
                "host": g.host,
                "gpu_id": g.gpu_id,
                "name": g.name,
                "util_mean_pct": g.util_mean,
                "util_peak_pct": g.util_peak,
                "idle_share": g.idle_share,
                "mem_peak_bytes": g.mem_peak_bytes,
                "energy_j": g.energy_j,
            }
            for g in report.gpus
        ],
        "epoch_rows": [r.to_json_dict() for r in report.epochs],
        "steps": report.steps.to_json_dict() if report.steps is not None else None,
    }


def csv_row(report: RunReport) -> dict:
    """One CSV row: the report's scalars, the energy figures the text report shows (None: an empty cell,
    unknown), and a step run's steps, loss and timing."""
    energy = report.energy
    row = report_dict(report) | {
        "energy_kwh": energy.kwh,
        "energy_j_per_epoch": energy.per_epoch_j,
        "energy_j_per_step": energy.per_step_j,
    }
    steps = report.steps
    if steps is not None:
        row |= {
            "steps_done": steps.done,
            "steps_planned": steps.planned,
            "loss_first": steps.loss_first,
            "loss_last": steps.loss_last,
            "loss_trend": steps.trend,
            "step_time_s": steps.step_time_recent_s,
            "eta_s": steps.eta_s,
        }
    return row


CSV_FIELDS = ("run", "gpus", "epochs", "epoch_time_s", "throughput", "throughput_unit", "util_mean_pct")
CSV_FIELDS += ("energy_j", "outcome", "steps_done", "steps_planned", "loss_first", "loss_last", "loss_trend")
CSV_FIELDS += ("step_time_s", "eta_s", "verdict")
# added columns go at the end: the earlier ones keep their place for the scripts that read them
CSV_FIELDS += ("energy_kwh", "energy_j_per_epoch", "energy_j_per_step")


def print_reports(runs: list[JudgedRun], fmt: str, out: IO[str]) -> None:
    if fmt == "json":
        for run in runs:
            verdict = [f.to_json_dict() for f in run.findings]
            out.write(json.dumps(report_dict(run.report) | {"verdict": verdict}) + "\n")
        return
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for run in runs:
            writer.writerow(csv_row(run.report) | {"verdict": "; ".join(f.line() for f in run.findings)})
        return
    from gputui.analysis.tables import report_tables, table_console

    console = table_console(out)
    for run in runs:
        for table in report_tables(run.report):
            console.print(table)
        out.write("verdict\n" + "".join(f"  {line}\n" for line in verdict_lines(run.findings)))
        out.flush()


def print_scale(points: list[ScalePoint], scaling: str, fmt: str, out: IO[str]) -> None:
    rows = [vars(p) | {"scaling": scaling} for p in points]
    if fmt == "json":
        out.write(json.dumps({"scaling": scaling, "points": rows}) + "\n")
        return
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["run"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return
    from gputui.analysis.tables import scale_table, table_console

    table_console(out).print(scale_table(points, scaling))


def draw_plot(args: argparse.Namespace, draw, terminal) -> None:
    """``--plot FILE``: the figure with matplotlib, or a terminal chart on stdout and one line saying why."""
    from gputui.analysis.plots import PlotUnavailable

    path = getattr(args, "plot", None)
    if not path:
        return
    try:
        draw(path)
    except OSError as exc:  # a full disk: named, one line (gputui.cli prints it)
        from gputui.output import WriteFailed

        raise WriteFailed(path, exc) from None
    except PlotUnavailable as exc:
        print(f"gputui: {exc}: a terminal chart instead; {path} not written", file=sys.stderr)
        if output_format(args) == "table":
            from plotext import uncolorize

            chart = terminal()
            print(chart if sys.stdout.isatty() else uncolorize(chart))


def check_plot(args: argparse.Namespace) -> str | None:
    from gputui.analysis.plots import check_path

    path = getattr(args, "plot", None)
    if path:
        try:
            check_path(path)
        except ValueError as exc:
            return str(exc)
    return None


def output_format(args: argparse.Namespace) -> str:
    return "json" if getattr(args, "json", False) else "csv" if getattr(args, "csv", False) else "table"


def settings(warn: bool = False) -> Config:
    """The settings (the verdict's thresholds); a broken file: the defaults, and with ``warn`` one line
    on stderr (``gputui report`` has it said by :mod:`gputui.cli` already)."""
    config, problem = load_config_or_defaults()
    if problem and warn:
        print(f"gputui: warning: {problem}", file=sys.stderr)
    return config


def read_reports(args: argparse.Namespace) -> list[JudgedRun] | int:
    """The RUNs' reports and verdicts, or the exit status after a one-line error (a bad --plot file, an
    unreadable RUN)."""
    problem = check_plot(args)
    if problem:
        print(f"gputui: error: {problem}", file=sys.stderr)
        return 2
    config, batch = settings(getattr(args, "command", None) == "scale"), getattr(args, "batch_size", None)
    try:
        return [judge(r, batch, config) for run in args.runs for r in runs_of(run)]
    except RunError as exc:
        print(f"gputui: error: {exc}", file=sys.stderr)
        return 1


def main(args: argparse.Namespace) -> int:
    from gputui.analysis.plots import report_figure, terminal_report_chart

    reports = read_reports(args)
    if isinstance(reports, int):
        return reports
    print_reports(reports, output_format(args), sys.stdout)
    first = reports[0].report
    draw_plot(args, lambda path: report_figure(first, path), lambda: terminal_report_chart(first))
    return 0
