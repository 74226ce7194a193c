"""``gputui scale``: did more GPUs help? (``docs/analysis.md``)

- ``--from RUN...`` compares existing runs; each size's diagnosis says where an inefficient size lost
  its time and names the run's verdicts (:func:`gputui.monitor.verdicts.scale_diagnosis`);
- ``--gpus 1,2,4 [--nodes ...] [run options] -- CMD`` submits the same training at each size through
  ``gputui run``'s batch script (with ``gputui --log`` on every node, for the utilisation per size), waits
  for the jobs and compares them; ``--local`` runs each size here instead, one after another (no Slurm).
  ``{gpus}`` and ``{nodes}`` in CMD are replaced by each size's numbers (a weak-scaling dataset size, a
  per-size output folder). Ctrl-C stops waiting, not the jobs, and says how to compare them later.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from dataclasses import dataclass

from gputui.cli import CommandError
from gputui.commands.report import (
    JudgedRun,
    check_plot,
    draw_plot,
    judge,
    output_format,
    print_scale,
    read_reports,
    settings,
)
from gputui.commands.run import command_of, script_options
from gputui.slurm.batch_script import LaunchSpec, render, submit, write_script
from gputui.slurm.commands import SlurmError
from gputui.sources.inputs import RunError

POLL_S = 5.0  # seconds between two looks at the sweep's jobs (one scontrol call per job still running)


@dataclass
class SweepRun:
    """One size of a sweep: what was asked, and the RUN it became (a job id or a record file)."""

    gpus: int
    nodes: int
    spec: LaunchSpec
    run: str = ""
    state: str = "not submitted"

    @property
    def label(self) -> str:
        nodes = "1 node" if self.nodes == 1 else f"{self.nodes} nodes"
        unit = "GPU" if self.spec.gpus_per_node else "rank"
        return f"{self.gpus} {unit}{'s' if self.gpus != 1 else ''}, {nodes}"


def sweep_runs(args: argparse.Namespace) -> list[SweepRun]:
    """One launch spec per size of ``--gpus`` (validated: whole GPUs per node, a command)."""
    cmd = command_of(args, "gputui scale --gpus 1,2,4 [options] -- CMD ARGS...")
    sizes: list[int] = args.gpus
    nodes: list[int] = args.nodes or [1]
    if len(nodes) == 1:
        nodes = nodes * len(sizes)
    if len(nodes) != len(sizes):
        raise CommandError(f"--nodes gives {len(nodes)} values for {len(sizes)} sizes of --gpus")
    runs = []
    for gpus, count in zip(sizes, nodes, strict=True):
        if gpus % count:
            raise CommandError(f"{gpus} GPUs do not divide over {count} nodes")
        per_node = gpus // count
        spec = LaunchSpec(
            cmd=[arg.replace("{gpus}", str(gpus)).replace("{nodes}", str(count)) for arg in cmd],
            nodes=count,
            gpus_per_node=0 if args.cpu else per_node,
            ntasks_per_node=per_node if args.cpu else None,
            gpu_log=not (args.no_gpu_log or args.cpu) or args.probe_backend is not None,
            **script_options(args),
        )
        spec.job_name = f"{args.job_name or spec.name}-scale{gpus}"
        try:
            render(spec)  # every size checked before anything is submitted
        except SlurmError as exc:
            raise CommandError(str(exc)) from None
        runs.append(SweepRun(gpus, count, spec))
    return runs


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _job_state(job_id: str) -> str:
    from gputui.slurm.jobs import JobNotFound
    from gputui.slurm.scontrol import job_detail

    try:
        return job_detail(job_id).state or "UNKNOWN"
    except JobNotFound:
        return "ENDED"  # finished and forgotten by slurmctld


def wait_for(runs: list[SweepRun], poll_s: float) -> None:
    """Poll the runs' jobs until none is active; say each state change on stderr."""
    from gputui.slurm.jobs import ACTIVE_STATES

    active = [r for r in runs if r.run]
    while active:
        for run in list(active):
            state = _job_state(run.run)
            if state != run.state:
                run.state = state
                _say(f"job {run.run} ({run.label}): {state}")
            if state not in ACTIVE_STATES:
                active.remove(run)
        if active:
            time.sleep(poll_s)


def submit_sweep(runs: list[SweepRun], *, sequential: bool, poll_s: float) -> None:
    """Write and sbatch each size's script (all at once, or each after the previous one ended)."""
    for run in runs:
        try:
            run.run, path = submit(write_script(run.spec))
        except (SlurmError, OSError) as exc:
            raise CommandError(f"{run.label}: {exc}") from None
        run.state = "SUBMITTED"
        _say(f"submitted job {run.run} ({run.label}): {path}")
        if sequential:
            wait_for([run], poll_s)
    wait_for(runs, poll_s)


def run_local_sweep(runs: list[SweepRun], backend: str, interval: float) -> None:
    """Each size as local processes, one after another; its record stream kept in the current folder."""
    from gputui.commands.dashboard import run_headless
    from gputui.slurm.launch_local import local_dir
    from gputui.sources.local import LocalRunSource

    stamp = time.strftime("%Y%m%d-%H%M%S")
    for run in runs:
        folder = local_dir() / f"scale-{stamp}-{run.gpus}"
        folder.mkdir(parents=True, exist_ok=True)
        run.run = f"gputui-scale-{stamp}-{run.gpus}.jsonl"  # here, beside a Slurm sweep's files
        _say(f"running {run.label} locally: records in {run.run}, output in {folder}")
        source = LocalRunSource(
            run.spec, simulated=backend == "sim", backend=backend, interval=interval, folder=folder
        )
        state = run_headless(source, record_to=run.run, out=io.StringIO())
        run.state = state.job.state
        _say(f"{run.label}: {run.state}")
        if run.state == "CANCELLED":  # Ctrl-C stopped the run (run_headless takes the interrupt)
            raise KeyboardInterrupt


def _sweep_reports(runs: list[SweepRun], batch_size: int | None) -> list[JudgedRun]:
    reports = []
    config = settings(warn=True)
    for run in runs:
        try:
            judged = judge(run.run, batch_size, config)
        except RunError as exc:
            _say(f"gputui: {run.label} left out: {exc}")
            continue
        report = judged.report
        if not report.world_size:  # nothing in the output said it: the size the sweep asked for
            report.world_size, report.world_size_source = run.gpus, "requested (gputui scale --gpus)"
        reports.append(judged)
    return reports


def main(args: argparse.Namespace) -> int:
    if bool(args.runs) == bool(args.gpus):
        print(
            "gputui: error: give existing runs (--from RUN...) or sizes to submit (--gpus 1,2,4 -- CMD)",
            file=sys.stderr,
        )
        return 2
    reports = read_reports(args) if args.runs else _sweep(args)
    if isinstance(reports, int):
        return reports
    from gputui.analysis import compare
    from gputui.analysis.plots import scale_figure, terminal_scale_chart
    from gputui.monitor.verdicts import scale_diagnosis

    verdict = settings().verdict  # read_reports or the sweep said what was wrong with the file
    findings = {id(run.report): run.findings for run in reports}

    def diagnose(report, inefficient: bool) -> str | None:
        return scale_diagnosis(inefficient, report.util_mean, verdict, findings[id(report)])

    points, scaling = compare([run.report for run in reports], args.scaling, diagnose), args.scaling
    print_scale(points, scaling, output_format(args), sys.stdout)
    draw_plot(args, lambda path: scale_figure(points, scaling, path), lambda: terminal_scale_chart(points))
    return 0


def _sweep(args: argparse.Namespace):
    problem = check_plot(args)
    if problem:
        print(f"gputui: error: {problem}", file=sys.stderr)
        return 2
    try:
        runs = sweep_runs(args)
    except CommandError as exc:  # a usage error: nothing was submitted
        print(f"gputui: error: {exc}", file=sys.stderr)
        return 2
    if args.local:
        backend = "none" if args.no_gpu_log else args.probe_backend or ("none" if args.cpu else "auto")
        try:
            run_local_sweep(runs, backend, args.probe_interval or 1.0)
        except KeyboardInterrupt:
            done = " ".join(r.run for r in runs if r.state == "COMPLETED")
            later = f"; compare what ran: gputui scale --from {done}" if done else ""
            _say(f"gputui: sweep stopped{later}")
            return 130
    else:
        try:
            submit_sweep(runs, sequential=args.sequential, poll_s=POLL_S)
        except KeyboardInterrupt:
            ids = " ".join(r.run for r in runs if r.run)
            _say(f"gputui: stopped waiting; the jobs go on. Compare them later: gputui scale --from {ids}")
            return 130
        except SlurmError as exc:  # scontrol failed while watching (slurmctld down): the jobs may go on
            ids = " ".join(r.run for r in runs if r.run)
            _say(f"gputui: error: cannot watch the jobs: {exc}; compare later: gputui scale --from {ids}")
            return 1
    reports = _sweep_reports(runs, args.batch_size)
    if not reports:
        raise CommandError("no size of the sweep left a run to compare")
    return reports
