"""The Slurm version, detected once per process, and the features it gates.

``srun --version`` prints ``slurm 23.11.4`` (or ``slurm-wlm 22.05.8`` on Debian). Gates:

===============================  ========  =====================================================
feature                          since     why
===============================  ========  =====================================================
``srun --overlap``               20.11     before it, steps could not share a job's resources
overlap steps see the job's GPUs 22.05     on 20.11–21.08 an overlap step gets no GPUs (attach
                                           still works for host data; a warning says so)
``squeue --json``                21.08     optional path; filters ignored up to 22.05
``scontrol --json``              23.11     documented from 23.11
===============================  ========  =====================================================
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from gputui.slurm.commands import SlurmError, run_slurm

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True, order=True, slots=True)
class SlurmVersion:
    major: int
    minor: int
    micro: int = 0

    def __str__(self) -> str:
        return f"{self.major}.{self.minor:02d}.{self.micro}"

    @property
    def has_overlap(self) -> bool:
        return self >= SlurmVersion(20, 11)

    @property
    def overlap_shares_gpus(self) -> bool:
        return self >= SlurmVersion(22, 5)

    @property
    def has_squeue_json(self) -> bool:
        return self >= SlurmVersion(21, 8)

    @property
    def json_filters_work(self) -> bool:
        """``squeue --json -j/-u`` were observed ignored on 22.05.8; trust them only from 23.02."""
        return self >= SlurmVersion(23, 2)

    @property
    def has_scontrol_json(self) -> bool:
        return self >= SlurmVersion(23, 11)


def parse_version(text: str) -> SlurmVersion:
    """``slurm-wlm 22.05.8`` → ``SlurmVersion(22, 5, 8)``; :class:`SlurmError` if there is no version."""
    match = _VERSION.search(text)
    if match is None:
        raise SlurmError(f"cannot read a Slurm version from {text.strip()[:60]!r}")
    return SlurmVersion(int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))


_CACHE: dict[tuple[str | None, str | None], SlurmVersion] = {}


def detect_version(env: Mapping[str, str] | None = None) -> SlurmVersion:
    """The version of the ``srun`` on PATH, asked once per process (per PATH and ``SLURM_CONF``)."""
    source = os.environ if env is None else env
    key = (source.get("PATH"), source.get("SLURM_CONF"))
    if key not in _CACHE:
        _CACHE[key] = parse_version(run_slurm(["srun", "--version"], env=env, timeout=10).stdout)
    return _CACHE[key]


def overlap_problem(version: SlurmVersion) -> str | None:
    """Why attach cannot work on ``version`` (None when it can)."""
    if not version.has_overlap:
        return (
            f"Slurm {version} has no 'srun --overlap' (added in 20.11): attach cannot run a probe "
            "inside a running job; use ssh to the node (pam_slurm_adopt) instead"
        )
    return None


def overlap_warning(version: SlurmVersion) -> str | None:
    """A warning for versions where the overlap step runs but sees no GPUs."""
    if not version.overlap_shares_gpus:
        return f"Slurm {version}: overlap steps get no GPUs before 22.05; GPU data may be missing"
    return None
