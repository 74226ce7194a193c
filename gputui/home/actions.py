"""What the job keys of the home screen run (no Textual): view and edit the batch script, open a shell
inside the job, the files an ended job is replayed from.

Every command is an argv list; job ids are validated before they reach one.
"""

from __future__ import annotations

import glob
import os
import shlex
import time
from pathlib import Path

from gputui.slurm.batch_script import scripts_dir
from gputui.slurm.commands import SlurmError, run_slurm
from gputui.slurm.jobid import validate_jobid
from gputui.slurm.jobs import Job

SIGNALS = ("USR1", "USR2", "TERM", "INT")


def gputui_script(job_id: str) -> Path | None:
    """The batch script ``gputui run`` (or the launch form) wrote for this job, if it is still there."""
    jid = validate_jobid(job_id)
    matches = sorted(scripts_dir().glob(f"*-{jid}.sh"))
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


def editable_copy(job: Job, text: str) -> Path:
    """A copy of the script in gputui's scripts folder, to edit and resubmit (the original is kept)."""
    folder = scripts_dir()
    folder.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "._+-" else "_" for c in job.name)[:40] or "job"
    path = folder / f"{safe}-edit-of-{validate_jobid(job.job_id)}-{time.strftime('%Y%m%d-%H%M%S')}.sh"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def editor_argv(path: Path, env: dict[str, str] | None = None) -> list[str]:
    """``$VISUAL``/``$EDITOR`` (words split as a shell would, never run by one) plus the file, else vi."""
    env = os.environ if env is None else env
    words = shlex.split(env.get("VISUAL") or env.get("EDITOR") or "vi")
    return [*words, str(path)]


def shell_argv(job_id: str, node: str) -> list[str]:
    """The course recipe for a shell inside a running job, on one of its nodes."""
    jid = validate_jobid(job_id)
    if not node or not all(c.isalnum() or c in "._-" for c in node):
        raise SlurmError(f"{node!r} is not a node name")
    return ["srun", f"--jobid={jid}", "--overlap", "--pty", "-N1", "-n1", f"--nodelist={node}", "bash", "-l"]


def replay_files(job: Job) -> list[str]:
    """An ended job's output (stdout, stderr when separate) and the record files gputui wrote beside it."""
    files = [p for p in dict.fromkeys([job.stdout, job.stderr]) if p and os.path.isfile(p)]
    folder = job.work_dir or (os.path.dirname(job.stdout) if job.stdout else "")
    if folder:
        jid = job.job_id
        files += sorted(glob.glob(os.path.join(glob.escape(folder), f"gputui-{glob.escape(jid)}-*.jsonl")))
    if not files and folder:
        default = os.path.join(folder, f"slurm-{job.job_id}.out")  # sacct does not say where output went
        if os.path.isfile(default):
            files.append(default)
    return files
