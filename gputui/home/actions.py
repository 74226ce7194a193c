"""What the job keys of the home screen run (no Textual): the table of Slurm job actions (cancel, signal,
hold, release), view and edit the batch script, open a shell inside the job (an ended job's files
are :func:`gputui.sources.inputs.job_files`).

Every command is an argv list; job ids are validated before they reach one. A Slurm action is declared
once, in :data:`ACTIONS`: its key, label, which jobs qualify, what is asked first, and the function in
:mod:`gputui.slurm` that does it. The jobs screen binds the keys and runs every entry through one worker;
the CLI (``gputui cancel|hold|release JOBID``) runs the same entries through :func:`run_on_job_id`.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from gputui.slurm import cancel, job_actions
from gputui.slurm.batch_script import scripts_dir, submit
from gputui.slurm.commands import SlurmError, run_slurm, slurm_env
from gputui.slurm.jobid import JobIdError, validate_jobid
from gputui.slurm.jobs import Job, JobNotFound, check_mine, format_duration
from gputui.slurm.scontrol import job_detail

#: What a job action may raise: one line each, shown as such (never a traceback).
ACTION_ERRORS: tuple[type[Exception], ...] = (SlurmError, JobIdError, OSError)
SIGNALS = ("USR1", "USR2", "TERM", "INT")


class Outcome(Protocol):
    """What a Slurm action function returns (:class:`~gputui.slurm.cancel.CancelResult` and the like)."""

    message: str
    confirmed: bool


def _active(job: Job) -> str | None:
    return None if job.active else f"job {job.job_id} has already ended ({job.state})"


def _holdable(job: Job) -> str | None:
    if job.state != "PENDING":
        return f"job {job.job_id} is {job.state}: only a pending job can be held"
    return f"job {job.job_id} is already held ({job.reason})" if job_actions.is_held(job) else None


def _held(job: Job) -> str | None:
    return None if job_actions.is_held(job) else f"job {job.job_id} is not held: nothing to release"


@dataclass(frozen=True)
class JobAction:
    """One Slurm action on one job, as the jobs screen and the CLI know it."""

    name: str
    key: str  # the jobs screen's key
    label: str  # the footer's word
    run: Callable[[str, str | None], Outcome]  # (job id, the choice or None) → Slurm's confirmed answer
    qualifies: Callable[[Job], str | None] = _active  # None when the job qualifies, else why not
    confirm: str = ""  # asked first (y confirms); fields: {job_id} {name} {state}
    choose: str = ""  # else a question whose answer is passed to run, one of ``choices`` (value, label)
    choices: tuple[tuple[str, str], ...] = ()
    doing: str = ""  # said while it runs
    footer: bool = True  # shown in the footer (every key is in the help)

    def question(self, template: str, job: Job) -> str:
        return template.format(job_id=job.job_id, name=job.name, state=job.state)


#: Every Slurm job action. The functions are looked up when called (``cancel.cancel_job``), so a test's
#: stand-in for one is the one that runs.
ACTIONS: tuple[JobAction, ...] = (
    JobAction(
        "cancel",
        "c",
        "cancel",
        lambda jid, _: cancel.cancel_job(jid),
        confirm="Cancel job {job_id} ({name}, {state})?",
        doing="cancelling job {job_id}…",
    ),
    JobAction(
        "signal",
        "s",
        "signal",
        lambda jid, sig: cancel.cancel_job(jid, signal=sig),
        choose="Signal to send to job {job_id} (every step and the batch shell)",
        choices=tuple((s, f"SIG{s}") for s in SIGNALS),
    ),
    JobAction(
        "hold",
        "H",
        "hold",
        lambda jid, _: job_actions.hold_job(jid),
        qualifies=_holdable,
        confirm="Hold job {job_id} ({name})? It will not start until released (U).",
        footer=False,
    ),
    JobAction(
        "release", "U", "release", lambda jid, _: job_actions.release_job(jid), qualifies=_held, footer=False
    ),
)


def action(name: str) -> JobAction:
    """The entry of :data:`ACTIONS` called ``name``."""
    return next(a for a in ACTIONS if a.name == name)


def run_on_job_id(name: str, job_id: str, choice: str | None = None) -> Outcome:
    """The entry ``name`` of :data:`ACTIONS` on a job known only by its id (the CLI): the job is looked up,
    someone else's is refused, the entry's qualifying rule says why not as the jobs screen says it, then
    the entry runs. One of :data:`ACTION_ERRORS` (one line) when it cannot run."""
    entry = action(name)
    jid = validate_jobid(job_id)
    try:
        job = job_detail(jid)
    except JobNotFound:
        return entry.run(jid, choice)  # the action itself says, in its words, that Slurm does not know it
    check_mine(job)
    why_not = entry.qualifies(job)
    if why_not:
        raise SlurmError(why_not)
    return entry.run(jid, choice)


def submit_edited(path: str) -> str:
    """sbatch an edited copy of a script; the line that says what was submitted."""
    job_id, final = submit(Path(path))
    return f"submitted job {job_id} ({final})"


def shell_command(job: Job, node: str) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of a shell inside ``job`` on ``node`` (:func:`shell_argv`)."""
    return shell_argv(job, node), slurm_env()


def gputui_script(job_id: str) -> Path | None:
    """The batch script ``gputui run`` (or the launch form) wrote for this job, if it is still there."""
    jid = validate_jobid(job_id)
    unsubmitted = re.compile(r"-\d{8}-\d{6}-\d+\.sh$")  # write_script()'s name until sbatch gives an id
    matches = sorted(p for p in scripts_dir().glob(f"*-{jid}.sh") if not unsubmitted.search(p.name))
    return matches[-1] if matches else None


def batch_script(job_id: str, *, env: dict[str, str] | None = None) -> tuple[str, str]:
    """(script text, where it came from): gputui's own copy, else ``scontrol write batch_script J -``."""
    jid = validate_jobid(job_id)
    own = gputui_script(jid)
    if own is not None:
        try:
            return own.read_text(encoding="utf-8", errors="replace"), str(own)
        except OSError:
            pass
    res = run_slurm(["scontrol", "write", "batch_script", jid, "-"], env=env, check=False)
    if res.returncode != 0 or not res.stdout.strip():
        why = (res.stderr.strip().splitlines() or ["no script"])[-1]
        raise SlurmError(f"no batch script for job {jid}: {why} (jobs started with srun or salloc have none)")
    return res.stdout, f"scontrol write batch_script {jid}"


def job_options(job: Job) -> list[str]:
    """``#SBATCH`` lines for the job's own resources (for a script whose options were on sbatch's
    command line: ``--wrap``, ``sbatch -N 2 ... script.sh``)."""
    lines = []
    if job.name:
        lines.append(f"#SBATCH --job-name={_safe(job.name)}")
    if job.num_nodes:
        lines.append(f"#SBATCH --nodes={job.num_nodes}")
    if job.num_tasks:
        lines.append(f"#SBATCH --ntasks={job.num_tasks}")
    gres = job.tres_per_node.replace("gres:", "").replace("gres/", "")
    if gres and all(c.isalnum() or c in ":,._-" for c in gres):
        lines.append(f"#SBATCH --gres={gres}")
    if job.time_limit_s:
        lines.append(f"#SBATCH --time={format_duration(job.time_limit_s)}")
    if job.partition and all(c.isalnum() or c in "._+-" for c in job.partition):
        lines.append(f"#SBATCH --partition={job.partition}")
    return lines


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._+-" else "_" for c in name)[:40] or "job"


def editable_copy(job: Job, text: str) -> Path:
    """A copy of the script in gputui's scripts folder, to edit and resubmit (the original is kept).

    A script with no ``#SBATCH`` line got its options on sbatch's command line; the copy gets the job's
    resources as ``#SBATCH`` lines after the ``#!`` line, so the resubmitted job asks for the same."""
    folder = scripts_dir()
    folder.mkdir(parents=True, exist_ok=True)
    if "#SBATCH" not in text:
        first, _, rest = text.partition("\n") if text.startswith("#!") else ("#!/bin/bash", "", text)
        note = "# gputui: the original job's resources (it had them on sbatch's command line)"
        text = "\n".join([first, note, *job_options(job), rest])
    stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"  # submit() renames it <name>-<new id>.sh
    path = folder / f"{_safe(job.name)}-edit-of-{validate_jobid(job.job_id)}-{stamp}.sh"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def editor_argv(path: Path, env: dict[str, str] | None = None) -> list[str]:
    """``$VISUAL``/``$EDITOR`` (words split as a shell would, never run by one) plus the file, else vi."""
    env = os.environ if env is None else env
    words = shlex.split(env.get("VISUAL") or env.get("EDITOR") or "vi")
    return [*words, str(path)]


def shell_argv(job: Job | str, node: str) -> list[str]:
    """The course recipe for a shell inside a running job, on one of its nodes.

    Given the :class:`Job`, an array task (or het component) is named by its own numeric job id, as
    attach names it: ``--jobid=A_T`` is refused by Slurm 22.05 ("Invalid numeric value") and by 24.11
    while any task of the array is pending ("Unable to confirm allocation ... Job is pending execution")."""
    if isinstance(job, Job):
        jid = str(job.raw_job_id) if job.raw_job_id else validate_jobid(job.job_id)
    else:
        jid = validate_jobid(job)
    if not node or not all(c.isalnum() or c in "._-" for c in node):
        raise SlurmError(f"{node!r} is not a node name")
    return ["srun", f"--jobid={jid}", "--overlap", "--pty", "-N1", "-n1", f"--nodelist={node}", "bash", "-l"]
