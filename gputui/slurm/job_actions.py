"""Hold and release a pending job (``scontrol hold J`` / ``scontrol release J``), then confirm it.

A user's hold sets the job's priority to 0 and its reason to ``JobHeldUser``; an operator's hold shows
``JobHeldAdmin`` (which only an operator may release). The job is looked up first (unknown or someone
else's → one-line error; a job that is not pending is never passed to scontrol), and afterwards
``scontrol show job`` must say the job is held (hold) or no longer held (release) for the action to be
confirmed. Every command is an argv list with a validated job id.

The cancel and signal actions live in :mod:`gputui.slurm.cancel`; the table that names every job action
(key, label, which jobs qualify, confirmation) is :data:`gputui.home.actions.ACTIONS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gputui.slurm.commands import SlurmError, run_slurm
from gputui.slurm.jobid import validate_jobid
from gputui.slurm.jobs import Job, JobNotFound, check_mine
from gputui.slurm.scontrol import job_detail

#: The pending reasons of a held job (``scontrol hold`` by its user, or by an operator).
HELD_REASONS = ("JobHeldUser", "JobHeldAdmin")


@dataclass
class ActionResult:
    """What a job action did: ``confirmed`` once Slurm's own answer shows it; ``message`` is one line."""

    job_id: str
    action: str  # "held" or "released"
    state: str
    confirmed: bool
    message: str


def is_held(job: Job) -> bool:
    """A pending job that waits for a release, not for resources."""
    return job.state == "PENDING" and job.reason in HELD_REASONS


def _pending_job(job_id: str, env: dict[str, str] | None, verb: str) -> tuple[str, Job]:
    jid = validate_jobid(job_id)
    try:
        job = job_detail(jid, env=env)
    except JobNotFound:
        raise SlurmError(f"job {jid} is not known to Slurm (nothing to {verb})") from None
    check_mine(job)
    if job.state != "PENDING":
        done = {"hold": "held", "release": "released"}[verb]
        raise SlurmError(f"job {jid} is {job.state}: only a pending job can be {done}")
    return jid, job


def _scontrol(verb: str, jid: str, env: dict[str, str] | None) -> None:
    """``scontrol hold|release J``; its own last line as a one-line :class:`SlurmError` when it fails."""
    res = run_slurm(["scontrol", verb, jid], env=env, check=False)
    text = (res.stderr + res.stdout).strip()
    if res.returncode != 0 or re.search(r"\berror\b", text, re.IGNORECASE):
        why = text.splitlines()[-1] if text else f"exited {res.returncode}"
        raise SlurmError(f"scontrol {verb}: {why}")


def _after(jid: str, env: dict[str, str] | None) -> Job | None:
    try:
        return job_detail(jid, env=env)
    except JobNotFound:
        return None


def hold_job(job_id: str, *, env: dict[str, str] | None = None) -> ActionResult:
    """Hold one of my pending jobs (it will not start until released); :class:`SlurmError` with one line."""
    jid, before = _pending_job(job_id, env, "hold")
    if is_held(before):
        raise SlurmError(f"job {jid} is already held ({before.reason})")
    _scontrol("hold", jid, env)
    after = _after(jid, env)
    state = after.state if after else "GONE"
    if after is not None and is_held(after):
        return ActionResult(
            jid, "held", state, True, f"held job {jid} ({after.reason}): it starts only once released"
        )
    why = f"{state}, {after.reason}" if after is not None and after.reason else state
    return ActionResult(jid, "held", state, False, f"asked Slurm to hold job {jid}, but it is {why}")


def release_job(job_id: str, *, env: dict[str, str] | None = None) -> ActionResult:
    """Release one of my held jobs (it may start again); :class:`SlurmError` with one line."""
    jid, before = _pending_job(job_id, env, "release")
    if not is_held(before):
        raise SlurmError(f"job {jid} is not held ({before.reason or 'no reason given'}): nothing to release")
    _scontrol("release", jid, env)
    after = _after(jid, env)
    state = after.state if after else "GONE"
    if after is not None and not is_held(after):
        why = after.reason or "no reason given"
        return ActionResult(jid, "released", state, True, f"released job {jid} ({state}, {why})")
    return ActionResult(
        jid,
        "released",
        state,
        False,
        f"asked Slurm to release job {jid}, but it is {state}"
        + (f" ({after.reason})" if after is not None else ""),
    )
