"""Running Slurm's commands: argv lists only, timeouts, one-line errors, and environment hygiene.

Every Slurm command gputui runs goes through :func:`run_slurm` (or :func:`slurm_env` for long-lived
processes such as the attach step). Nothing is ever passed through a shell. Failures become
:class:`SlurmError` with one line a user can act on: ``Slurm command 'squeue' not found (is Slurm on
PATH?)``, ``squeue did not answer within 10 s``, or the command's own last stderr line. A
:class:`CallGroup` ends the calls of one user of Slurm together (the jobs screen's poller: quitting kills
a hung ``squeue`` instead of waiting for its timeout).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
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


class CallGroup:
    """Slurm commands that end together: :meth:`stop` kills those running and refuses new ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[str]] = set()
        self.stopped = False

    def _started(self, proc: subprocess.Popen[str]) -> None:
        with self._lock:
            self._running.add(proc)
            if not self.stopped:
                return
        proc.kill()  # stopped while it was starting

    def _ended(self, proc: subprocess.Popen[str]) -> None:
        with self._lock:
            self._running.discard(proc)

    def stop(self) -> None:
        """Kill every call of the group still running (each is reaped by its own caller)."""
        with self._lock:
            self.stopped = True
            running = list(self._running)
        for proc in running:
            with contextlib.suppress(OSError):  # it ended meanwhile
                proc.kill()


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
    group: CallGroup | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run one Slurm command (argv list) with captured text output.

    ``group``: the call ends when the group is stopped (then :class:`SlurmError`). ``check`` raises
    :class:`SlurmError` with the command's last stderr line on a non-zero exit.
    """
    argv = list(argv)
    run_env = slurm_env(env)
    exe = which(argv[0], run_env)
    if group is not None and group.stopped:
        raise SlurmError(f"{argv[0]} not run: gputui is quitting")
    try:
        proc = subprocess.Popen(
            [exe, *argv[1:]],
            env=run_env,
            stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
        )
    except OSError as exc:
        raise SlurmError(f"cannot run {argv[0]}: {exc.strerror}") from None
    res = _communicate(proc, argv, input_text, timeout, group)
    if check and res.returncode != 0:
        why = last_line(res.stderr) or last_line(res.stdout) or f"exit status {res.returncode}"
        prefix = f"{argv[0]}: "
        raise SlurmError(why if why.startswith(prefix) else prefix + why)  # Slurm's own lines name it
    return res


def _communicate(
    proc: subprocess.Popen[str],
    argv: list[str],
    input_text: str | None,
    timeout: float,
    group: CallGroup | None,
) -> subprocess.CompletedProcess[str]:
    """Wait for ``proc`` as :func:`subprocess.run` does (killed and reaped on a timeout or an error),
    registered in ``group`` meanwhile."""
    if group is not None:
        group._started(proc)
    try:
        with proc:
            try:
                stdout, stderr = proc.communicate(input_text, timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise SlurmError(
                    f"{argv[0]} did not answer within {timeout:g} s (is slurmctld reachable?)"
                ) from None
            except BaseException:
                proc.kill()
                raise
    finally:
        if group is not None:
            group._ended(proc)
    if group is not None and group.stopped and proc.returncode < 0:
        raise SlurmError(f"{argv[0]} stopped: gputui is quitting")
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
