"""The header line (job, state, time, GPUs, epoch or step, ETA and whether it ends before the job's time
limit) and the one-line alert banner, as text. A replayed log that prints no times or durations has no
elapsed time: the header says ``no clock in the log`` and the replay cursor is a share of its records.

The job's title and name, states and the alerts' evidence (log lines) come from outside: shown through
:func:`gputui.textsafe.printable`, so no escape sequence in them reaches the terminal.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

from rich.text import Text

from gputui.analysis.energy import joules_text
from gputui.analysis.steps import progress_text
from gputui.monitor.state import ENDED_STATES, DashboardState
from gputui.textsafe import printable
from gputui.tui.format import duration

STATE_STYLE = {
    "RUNNING": "bold green",
    "COMPLETED": "bold cyan",
    "PENDING": "bold yellow",
    "FAILED": "bold red",
    "CANCELLED": "bold red",
    "TIMEOUT": "bold red",
    "NODE_FAIL": "bold red",
}


def header_text(state: DashboardState) -> Text:
    job, training = state.job, state.training
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" gputui ", style="bold reverse")
    text.append(f" {printable(job.title)}", style="bold")
    text.append("  ")
    text.append(printable(job.state), style=STATE_STYLE.get(job.state, "bold"))
    elapsed = state.elapsed_s()
    if elapsed is not None:
        limit = f"/{duration(job.time_limit_s)}" if job.time_limit_s else ""
        text.append(f" {duration(elapsed)}{limit}")
    elif state.clockless:  # a replayed log without times or durations: no elapsed time can be known
        text.append(" · no clock in the log", style="dim")
    if state.board.simulated or job.simulated:
        text.append("  SIMULATED", style="bold yellow")
    cursor = state.cursor
    if cursor:
        start, at, end = cursor.get("start", 0), cursor.get("at") or 0, cursor.get("end", 0)
        mark = "▶" if cursor.get("playing") else "⏸"
        where = f"{duration(at - start)}/{duration(end - start)}"
        if state.clockless:  # the records' order only: how far through them
            where = f"{100 * (at - start) / max(end - start, 1e-9):.0f} %"
        text.append(f"  {mark} {where} {cursor.get('speed', 1):g}×")
        if cursor.get("live"):
            text.append(" live", style="green")
    if state.catch_up is not None:
        done, size = state.catch_up
        text.append(f"  reading history {100 * done // max(1, size)} %", style="bold yellow")
    epoch, total = training.current_epoch(), training.epochs_total
    if epoch is not None:
        text.append(f"  epoch {epoch}" + (f"/{total}" if total else ""))
    steps = training.step_summary()
    if steps is not None:  # a run without epochs: its step counter
        text.append(f"  {progress_text(steps)}")
    eta = training.eta_s()
    if eta is not None and not training.ended and job.state not in ("COMPLETED", "FAILED", "CANCELLED"):
        text.append(f"  ETA {duration(eta)}")
        if state.eta_beyond_limit():
            text.append(" > time limit ⚠", style="bold red")
        elif steps is not None and job.time_limit_s and state.elapsed_s() is not None:
            text.append(" < time limit", style="green")
    energy = state.analysis.energy_j()
    if energy is not None:
        text.append(f"  {joules_text(energy)}")
    final = state.final_outcome()
    if final is not None and not job.running:
        text.append(f"  outcome {printable(final[0])}", style="bold")
    placement = placement_text(state)
    if placement:
        text.append(f"  {placement}")
    if job.name:
        text.append(f"  {printable(job.name)[:30]}")
    return text


def placement_text(state: DashboardState) -> str | None:
    """``2 nodes × 4 GPU``, ``1 node, 3 GPUs``, ``1 node · no GPUs seen``: the GPUs sampled, else the
    ones Slurm allocated; None when no node is known (a replayed log)."""
    job = state.job
    nodes = len(state.board.nodes) or len(job.nodes)
    gpus = len(state.board.gpus) or job.gpus_expected or 0
    if not nodes:
        return None
    where = f"{nodes} node{'s' if nodes != 1 else ''}"
    if not gpus:
        return f"{where} · no GPUs seen"
    if gpus % nodes == 0:
        return f"{where} × {gpus // nodes} GPU"
    return f"{where}, {gpus} GPU{'s' if gpus != 1 else ''}"


def banner_text(state: DashboardState) -> Text | None:
    """The newest active alert, or the source's latest error/notice; None when all is well."""
    alert = state.alerts.latest()
    if alert is not None:
        style = "bold white on red" if alert.severity == "error" else "bold black on yellow"
        count = len(state.alerts.active)
        more = f"  (+{count - 1} more: a)" if count > 1 else ""
        when = time.strftime("%H:%M:%S", time.localtime(alert.time))
        return Text(
            printable(f" ⚠ {when} {alert.message} — {alert.evidence}{more}"),
            style=style,
            no_wrap=True,
            overflow="ellipsis",
        )
    note = state.status
    if note is not None and note.level in ("error", "warning"):
        style = "bold white on red" if note.level == "error" else "bold black on yellow"
        return Text(printable(f" {note.message}"), style=style, no_wrap=True, overflow="ellipsis")
    after = next_steps(state)
    if after is not None:
        return Text(printable(f" {after}"), style="bold black on cyan", no_wrap=True, overflow="ellipsis")
    return None


def next_steps(state: DashboardState) -> str | None:
    """What to do once a local run (the demo) has ended: the keys, the command that replays its output
    (its first rank's, a path 140 columns show whole) and, after the demo, the one that launches on Slurm;
    None before the end and for other sources."""
    job = state.job
    if job.kind != "local" or job.state not in ENDED_STATES:
        return None
    demo = job.simulated
    words = [f"{'demo' if demo else 'run'} {job.state.lower()}", "q quit", "R report"]
    logs = sorted(state.logs)
    if logs:
        home, first = str(Path.home()) + "/", logs[0]
        inside = first.startswith(home)
        shown = "~/" + shlex.quote(first[len(home) :]) if inside else shlex.quote(first)
        words.append(f"again: gputui replay {shown}")
    if demo:
        words.append("on Slurm: gputui run CMD")
    return " · ".join(words)
