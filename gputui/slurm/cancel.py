"""Cancel a job or send it a signal, then confirm it happened.

``scancel`` exits 0 even for unknown job ids, so the job is looked up first (unknown / someone else's →
one-line error) and its state is checked afterwards: a cancel is confirmed when the job leaves the active
states within :data:`CONFIRM_TIMEOUT_S`; a signal is confirmed by the line ``scancel -v`` prints once
slurmctld accepted it (22.05: ``scancel: Signal 10 to full job 928`` on stderr; ``batch job`` for
``--batch``, ``job`` without either; a refused signal prints ``Kill job error ...`` instead) and the job
still being known.

Signals go to every step **and the batch shell** (``scancel --full``): a ``python train.py`` started
directly in the batch script has no step of its own and would otherwise never see e.g. ``USR1``.
"""

from __future__ import annotations

import re
import signal as _signal
import time
from dataclasses import dataclass

from gputui.slurm.commands import SlurmError, run_slurm
from gputui.slurm.jobid import validate_jobid
from gputui.slurm.jobs import Job, JobNotFound, check_mine
from gputui.slurm.scontrol import job_detail

CONFIRM_TIMEOUT_S = 15.0  # read at call time: how long a cancel may take to be confirmed
# scancel's "Signal %u to %sjob %s" (22.05 format string; %s is "", "full " or "batch ").
_SIGNAL_SENT = re.compile(r"Signal (\d+) to (?:\w+ )?job (\S+)")


@dataclass
class CancelResult:
    job_id: str
    action: str  # "cancelled" or "signalled"
    signal: str | None
    state: str
    confirmed: bool
    message: str


def normalize_signal(text: str) -> str:
    """``usr1``, ``SIGUSR1``, ``10`` → ``USR1``; :class:`SlurmError` for an unknown signal."""
    raw = text.strip().upper().removeprefix("SIG")
    if raw.isdigit():
        try:
            return _signal.Signals(int(raw)).name.removeprefix("SIG")
        except ValueError:
            raise SlurmError(f"{text!r} is not a signal number") from None
    if f"SIG{raw}" not in _signal.Signals.__members__:
        raise SlurmError(f"{text!r} is not a signal name (e.g. USR1, TERM, INT)")
    return raw


def cancel_argv(job_id: str, signal: str | None) -> list[str]:
    if signal is None:
        return ["scancel", "-v", job_id]
    return ["scancel", "-v", "--full", f"--signal={signal}", job_id]


def _wait_ended(job_id: str, env: dict[str, str] | None, timeout: float) -> Job | None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            job = job_detail(job_id, env=env)
        except JobNotFound:
            return None
        if not job.active or time.monotonic() >= deadline:
            return job
        time.sleep(0.2)


def _signal_sent(stderr: str, sig: str, jid: str) -> bool:
    """Whether ``scancel -v`` said it sent ``sig`` to ``jid`` (it says so only once slurmctld accepted)."""
    number = _signal.Signals[f"SIG{sig}"].value
    return any(int(m.group(1)) == number and m.group(2) == jid for m in _SIGNAL_SENT.finditer(stderr))


def cancel_job(
    job_id: str,
    *,
    signal: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> CancelResult:
    """Cancel (or signal) one of my jobs and confirm (a cancel within ``timeout``, default
    :data:`CONFIRM_TIMEOUT_S`). Raises :class:`SlurmError` with one line."""
    timeout = CONFIRM_TIMEOUT_S if timeout is None else timeout
    jid = validate_jobid(job_id)
    sig = normalize_signal(signal) if signal else None
    try:
        before = job_detail(jid, env=env)
    except JobNotFound:
        raise SlurmError(f"job {jid} is not known to Slurm (nothing to cancel)") from None
    check_mine(before)
    if not before.active:
        raise SlurmError(f"job {jid} has already ended ({before.state})")
    res = run_slurm(cancel_argv(jid, sig), env=env, check=False)
    text = res.stderr + res.stdout
    failure = re.search(r"(?:error|Kill job error)[^\n]*", text, re.IGNORECASE)
    if res.returncode != 0 or (failure and "Invalid job id" in failure.group(0)):
        why = failure.group(0) if failure else f"scancel exited {res.returncode}"
        raise SlurmError(f"scancel: {why.strip()}")
    if sig is not None:
        try:
            after = job_detail(jid, env=env)
        except JobNotFound:
            after = None
        state = after.state if after else "UNKNOWN"
        sent = _signal_sent(res.stderr, sig, jid)
        confirmed = sent and after is not None and not failure
        if sent:
            msg = f"sent SIG{sig} to job {jid} (all steps and the batch shell); job is {state}"
        else:
            msg = f"asked Slurm to send SIG{sig} to job {jid}, but scancel did not confirm it; job is {state}"
        return CancelResult(jid, "signalled", sig, state, confirmed, msg)
    after = _wait_ended(jid, env, timeout)
    state = after.state if after else "GONE"
    confirmed = after is None or not after.active
    if confirmed:
        msg = f"cancelled job {jid} (state {state})"
    else:
        msg = f"asked Slurm to cancel job {jid}, but after {timeout:g} s it is still {state}"
    return CancelResult(jid, "cancelled", None, state, confirmed, msg)
