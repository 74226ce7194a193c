"""The texts of the jobs screen (:mod:`gputui.tui.screens.jobs`): its help, and its one-line header,
job detail and status lines, made from the last poll's snapshot (pure functions: the screen draws them
only when they change)."""

from __future__ import annotations

import time

from rich.text import Text

from gputui.home.poller import JobsSnapshot
from gputui.home.rows import JobRow, gpu_total
from gputui.textsafe import printable

HOME_HELP = """\
[b]gputui[/b] — my jobs on this cluster, and where GPUs are free

[b]jobs list[/b]
  enter   open the job's dashboard (running: attach a probe; ended: replay its output)
  l       launch a job from a form (live batch-script preview)
  c       cancel the job (asks; y confirms)       s   send a signal (USR1, USR2, TERM, INT)
  v       view its batch script                   e   edit a copy in $EDITOR and resubmit
  H       hold a pending job (asks)               U   release a held job
  o       open a shell inside the job (srun --overlap --pty, on the node you pick)
  /       filter (words matched in any column)    r   refresh now
  h       my GPU-hours: ended jobs, GPUs, mean use, idle GPU-hours (p: 1d/7d/30d)
  S       settings in effect and the file they come from
  d       demo: a real local training run with simulated GPUs (no Slurm needed)
  p       replay a record file or training log
  q       quit (your jobs keep running)            ?   this help
[b]in a dashboard[/b]
  q / esc back to this list (stops only gputui's probe of that job)

UTIL and LOSS are the last values seen in the job's dashboard.
"""


def header_line(snap: JobsSnapshot | None, filter_text: str, refresh_s: float) -> Text:
    """``gputui  filter: x  cluster C · Slurm V · my jobs: 2 running, 1 ended · 09:12 every 10 s``."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" gputui ", style="bold reverse")
    if filter_text:
        text.append(f"  filter: {filter_text}", style="bold cyan")
    if snap is None:
        text.append("  asking Slurm for your jobs…")
    elif not snap.slurm_found:
        text.append("  no Slurm here", style="bold yellow")
    else:
        if snap.cluster_name:
            text.append(f"  cluster {snap.cluster_name}", style="bold")
        if snap.version:
            text.append(f" · Slurm {snap.version}")
        counts: dict[str, int] = {}
        for job in snap.jobs:
            key = job.state.lower() if job.active else "ended"
            counts[key] = counts.get(key, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "no jobs"
        if not snap.taken_at and not snap.jobs:
            summary = "not known yet"
        text.append(f" · my jobs: {summary}")
        if snap.taken_at:
            text.append(f" · {time.strftime('%H:%M', time.localtime(snap.taken_at))}", style="dim")
            text.append(f" every {refresh_s:g} s", style="dim")
    return text


def detail_line(row: JobRow | None, snap: JobsSnapshot | None) -> Text | str:
    """The selected job's id, GPUs by node, output file and exit code (a group row: its summary)."""
    job = row.job if row else None
    if job is None:
        empty = snap is not None and not snap.jobs and snap.slurm_found and bool(snap.taken_at)
        return "no jobs: l launches one, d runs the demo" if empty else (row.cells[3] if row else "")
    parts = [f"job {job.job_id}"]
    if job.gpus:  # scontrol -d listed the nodes: their GPUs, or none (a CPU job)
        total = gpu_total(job)
        placement = "  ".join(
            f"{node}: GPU {','.join(map(str, ids)) or '-'}" for node, ids in job.gpus.items()
        )
        parts.append(f"{total} GPUs · {placement}" if total else "no GPUs")
    if job.stdout:  # a path may hold the job's name (%x): shown printable, opened as Slurm gave it
        parts.append(f"out {printable(job.stdout)}")
    elif job.work_dir:
        parts.append(f"in {printable(job.work_dir)}")
    if job.exit_code and not job.active:
        parts.append(f"exit {job.exit_code}")
    return Text(" · ".join(parts), no_wrap=True, overflow="ellipsis")


def status_lines(status: tuple[str, str] | None, snap: JobsSnapshot | None, ended_hours: float) -> list[Text]:
    """The status bar's lines, most urgent first: the last action's, then what the poll says."""
    lines: list[Text] = []
    if status is not None:
        style = {"error": "bold red", "warning": "yellow"}.get(status[1], "")
        lines.append(Text(status[0], style=style))
    if snap is not None and not snap.slurm_found:
        lines.append(
            Text(f"{snap.errors[0]} — d: demo · l: launch locally · p: replay a file", style="yellow")
        )
    elif snap is not None and snap.errors and not snap.taken_at:
        hint = " — d: demo · p: replay a file · l: launch locally"
        lines.append(Text(snap.errors[0] + hint, style="bold red"))
    elif snap is not None and snap.errors:
        more = f" (+{len(snap.errors) - 1} more)" if len(snap.errors) > 1 else ""
        lines.append(Text(snap.errors[0] + more, style="bold red"))
    elif snap is not None and snap.accounting is False and ended_hours > 0:
        note = "accounting disabled: ended jobs are listed only while Slurm remembers them"
        lines.append(Text(note, style="dim"))
    return lines
