"""Finished jobs from ``sacct`` (one batched call), or :class:`AccountingDisabled` in one line.

``sacct -p --delimiter=END``: every field is followed by :data:`gputui.slurm.fields.FIELD_END`, so no job
name breaks a row; the name is made :func:`~gputui.textsafe.printable` here.
"""

from __future__ import annotations

from gputui.slurm.commands import SlurmError, run_slurm
from gputui.slurm.fields import FIELD_END, split_rows
from gputui.slurm.jobid import parse_jobid
from gputui.slurm.jobs import (
    AccountingDisabled,
    Job,
    JobNotFound,
    _clean,
    _expand,
    _int,
    parse_duration,
)
from gputui.textsafe import printable

SACCT_FIELDS = ("JobID", "JobName", "User", "State", "Partition", "Account", "NNodes", "NodeList")
SACCT_FIELDS += ("Elapsed", "Timelimit", "Submit", "Start", "End", "WorkDir", "ExitCode")


def parse_sacct(text: str) -> list[Job]:
    """Allocations (not steps) from ``sacct -p`` output ended by FIELD_END (or old ``-P`` lines)."""
    jobs = []
    for parts in split_rows(text, len(SACCT_FIELDS), old_lines_ended=False):
        if "." in parts[0]:
            continue
        r = dict(zip(SACCT_FIELDS, parts, strict=True))
        job = Job(
            job_id=r["JobID"],
            name=printable(r["JobName"]),
            user=r["User"],
            state=(r["State"].split() or ["UNKNOWN"])[0],
            partition=r["Partition"],
            account=r["Account"],
            nodelist=_clean(r["NodeList"]),
            num_nodes=_int(r["NNodes"]),
            time_used_s=parse_duration(r["Elapsed"]),
            time_limit_s=parse_duration(r["Timelimit"]),
            submit_time=_clean(r["Submit"]),
            start_time=_clean(r["Start"]),
            work_dir=_clean(r["WorkDir"]),
            exit_code=r["ExitCode"],
        )
        job.nodes = _expand(job.nodelist)
        jobs.append(job)
    return jobs


def finished_job(job_id: str, *, env: dict[str, str] | None = None) -> Job:
    """A finished job from accounting; :class:`AccountingDisabled` or :class:`JobNotFound` otherwise."""
    jid = str(parse_jobid(job_id))
    argv = ["sacct", "-X", "-p", "-n", f"--delimiter={FIELD_END}", "-j", jid, "-o", ",".join(SACCT_FIELDS)]
    res = run_slurm(argv, env=env, check=False)
    if "accounting storage is disabled" in (res.stderr + res.stdout).lower():
        raise AccountingDisabled("Slurm accounting is disabled on this cluster: finished jobs are not kept")
    if res.returncode != 0:
        raise SlurmError(
            f"sacct: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else res.returncode}"
        )
    for job in parse_sacct(res.stdout):
        if job.job_id == jid:
            return job
    raise JobNotFound(f"job {jid} is not known to Slurm accounting")


#: Final states of ``sacct -s`` (what "ended" means for the jobs list).
ENDED_STATES = "BF,CA,CD,DL,F,NF,OOM,PR,RV,TO"


def recent_argv(user: str, since: str = "now-1days") -> list[str]:
    """One ``sacct`` call: the user's jobs (allocations only, ``-X``) that ended since ``since``."""
    return [
        "sacct",
        "-X",
        "-p",
        "-n",
        f"--delimiter={FIELD_END}",
        f"--user={user}",
        "-S",
        since,
        "-E",
        "now",
        "-s",
        ENDED_STATES,
        "-o",
        ",".join(SACCT_FIELDS),
    ]


def ended_argv(user: str, hours: float) -> list[str]:
    """The jobs screen's (and ``gputui jobs --all``'s) one sacct call: jobs that ended in ``hours``."""
    return recent_argv(user, f"now-{int(hours * 3600)}seconds")


def merge_ended(active: list[Job], ended: list[Job]) -> list[Job]:
    """squeue's jobs, then sacct's ended jobs that squeue no longer shows: one row per job id (a requeued
    or recently ended job keeps squeue's row). The one rule of the jobs screen and ``gputui jobs``."""
    seen = {job.job_id for job in active}
    return [*active, *(job for job in ended if job.job_id not in seen)]


def parse_recent(stdout: str, stderr: str = "", returncode: int = 0) -> list[Job]:
    """Ended jobs from :func:`recent_argv`'s output; :class:`AccountingDisabled` or :class:`SlurmError`."""
    if "accounting storage is disabled" in (stderr + stdout).lower():
        raise AccountingDisabled(
            "Slurm accounting is disabled: ended jobs are listed only while Slurm remembers them"
        )
    if returncode != 0:
        raise SlurmError(f"sacct: {stderr.strip().splitlines()[-1] if stderr.strip() else returncode}")
    return parse_sacct(stdout)
