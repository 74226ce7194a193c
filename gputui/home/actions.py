"""What the job keys of the home screen run (no Textual): view and edit the batch script, open a shell
inside the job, the files an ended job is replayed from.

Every command is an argv list; job ids are validated before they reach one.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import time
from pathlib import Path

from gputui.slurm.batch_script import scripts_dir
from gputui.slurm.commands import SlurmError, run_slurm
from gputui.slurm.jobid import validate_jobid
from gputui.slurm.jobs import Job, format_duration

SIGNALS = ("USR1", "USR2", "TERM", "INT")


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


def replay_files(job: Job) -> list[str]:
    """An ended job's output (stdout, stderr when separate) and the record files gputui wrote beside it."""
    files = [p for p in dict.fromkeys([job.stdout, job.stderr]) if p and os.path.isfile(p)]
    folder = job.work_dir or (os.path.dirname(job.stdout) if job.stdout else "")
    if folder and not job.stdout:
        default = os.path.join(folder, f"slurm-{job.job_id}.out")  # sacct does not say where output went
        if os.path.isfile(default):
            files.append(default)
    if folder:
        ids = dict.fromkeys([job.job_id, str(job.raw_job_id or "")])  # an array task's own id: %j
        for jid in (i for i in ids if i):
            files += sorted(
                glob.glob(os.path.join(glob.escape(folder), f"gputui-{glob.escape(jid)}-*.jsonl"))
            )
    return files
