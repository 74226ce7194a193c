"""Running Slurm's commands: argv lists only, timeouts, one-line errors, and environment hygiene.

Every Slurm command gputui runs goes through :func:`run_slurm` (or :func:`slurm_env` for long-lived
processes such as the attach step). Nothing is ever passed through a shell. Failures become
:class:`SlurmError` with one line a user can act on: ``Slurm command 'squeue' not found (is Slurm on
PATH?)``, ``squeue timed out after 10 s``, or the command's own last stderr line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence

DEFAULT_TIMEOUT_S = 15.0

#: Variables a job exports to its processes. When gputui runs inside one job (an interactive allocation,
#: a batch script) and targets another, these would silently redirect srun/scancel to the current job
#: (``SLURM_JOB_ID``), change its layout (``SLURM_NTASKS``) or its CPU binding: strip them.
JOB_ENV_PREFIXES = ("SLURM_", "SRUN_", "SBATCH_", "SALLOC_")
#: Client configuration, kept: they say which cluster to talk to, not which job we are in.
KEEP_VARIABLES = ("SLURM_CONF", "SLURM_CLUSTERS", "SLURM_TIME_FORMAT")


class SlurmError(RuntimeError):
    """A Slurm command failed; ``str()`` is one line for the user."""


class SlurmNotFound(SlurmError):
    """A Slurm command is not installed (or not on PATH)."""


def slurm_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """``base`` (default ``os.environ``) without inherited job variables, plus ``extra``.

    ``SLURM_TIME_FORMAT`` is pinned to ``standard`` so times parse the same on every site.
    """
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if not k.startswith(JOB_ENV_PREFIXES) or k in KEEP_VARIABLES
    }
    env["SLURM_TIME_FORMAT"] = "standard"
    env.update(extra)
    return env


def which(command: str, env: Mapping[str, str] | None = None) -> str:
    """The full path of a Slurm command, or :class:`SlurmNotFound` naming it."""
    path = shutil.which(command, path=(env or os.environ).get("PATH"))
    if path is None:
        raise SlurmNotFound(f"Slurm command {command!r} not found (is Slurm installed and on PATH?)")
    return path


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def run_slurm(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    check: bool = True,
    input_text: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run one Slurm command (argv list) with captured text output.

    ``check`` raises :class:`SlurmError` with the command's last stderr line on a non-zero exit.
    """
    argv = list(argv)
    run_env = slurm_env(env)
    exe = which(argv[0], run_env)
    try:
        res = subprocess.run(
            [exe, *argv[1:]],
            env=run_env,
            input=input_text,
            stdin=None if input_text is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{argv[0]} did not answer within {timeout:g} s (is slurmctld reachable?)") from None
    except OSError as exc:
        raise SlurmError(f"cannot run {argv[0]}: {exc.strerror}") from None
    if check and res.returncode != 0:
        why = last_line(res.stderr) or last_line(res.stdout) or f"exit status {res.returncode}"
        prefix = f"{argv[0]}: "
        raise SlurmError(why if why.startswith(prefix) else prefix + why)  # Slurm's own lines name it
    return res
