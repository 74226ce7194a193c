"""How many slurmctld RPCs the jobs screen may spend, and backing off when slurmctld says "too many".

Measured with ``sdiag`` (RPCs by message type, 5 calls each, on 22.05.8 and 26.05.5; 24.11.5 gave the
same counts under other tests' noise):

========================================  ==========================================  ====
call                                      RPCs                                        cost
========================================  ==========================================  ====
``squeue --me --array -t all -O …``       REQUEST_JOB_INFO + REQUEST_PARTITION_INFO   2
``squeue --json --me -t all``             REQUEST_JOB_INFO                            1
``sinfo -N -O …``                         REQUEST_NODE_INFO + REQUEST_PARTITION_INFO  2
``scontrol show job -o -d J`` (or all)    REQUEST_FED_INFO + REQUEST_JOB_INFO_SINGLE  2
``scontrol show config``                  REQUEST_PING + REQUEST_BUILD_INFO           2
``sacct``                                 none: slurmdbd answers (or the jobcomp file) 0
========================================  ==========================================  ====

At the default 5 s refresh that is 2/5 (squeue) + 2/60 (sinfo) = 0.43 RPC/s, plus 2 per job that starts
running. :class:`RpcBudget` keeps the poller under :data:`RPC_PER_S` in steady state whatever
``refresh_s`` says: a token bucket of :data:`BURST` RPCs refilled at 0.5/s; a refresh finding it short
skips squeue (the last table stays) and sinfo waits. slurmctld's own rate limiter (23.02+, ``rl_enable``:
30 tokens, 2/s per user by default) answers ``SLURMCTLD_COMMUNICATIONS_BACKOFF`` (1804); Slurm's client
library sleeps 1 s, 2 s, … and retries by itself, and a command that gives up prints
``slurm_strerror(1804)``, :data:`RATE_LIMITED` (both from Slurm's source). On that line every call pauses,
10 s doubling to 5 min while it repeats, and starts again at the next answer.
"""

from __future__ import annotations

from collections.abc import Callable

RPC_PER_S = 0.5  # steady state, per user (issue 23.3)
BURST = 20.0  # the first refresh: config, squeue, sinfo and a few scontrol calls at once
RATE_LIMITED = "Rate limit exceeded, please retry momentarily"
BACKOFF_FIRST_S = 10.0
BACKOFF_MAX_S = 300.0
#: slurmctld RPCs per call (table above), by the command's first word; squeue --json costs 1.
COSTS = {"squeue": 2.0, "sinfo": 2.0, "scontrol": 2.0, "sacct": 0.0}


def cost(argv: list[str]) -> float:
    if argv[0] == "squeue" and any(a.startswith("--json") for a in argv):
        return 1.0
    return COSTS.get(argv[0], 1.0)


class RpcBudget:
    """A token bucket of slurmctld RPCs, and the back-off slurmctld's rate limiter asks for."""

    def __init__(self, clock: Callable[[], float], rate: float = RPC_PER_S, burst: float = BURST) -> None:
        self.clock, self.rate, self.burst = clock, rate, burst
        self.tokens = burst
        self.stamp = clock()
        self.spent = 0.0  # every RPC charged since the start (for measuring)
        self.backoff_s = 0.0
        self.paused_until = 0.0

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def affords(self, argv: list[str]) -> bool:
        """True when the call fits the budget now (a forced refresh asks nothing: it is charged anyway)."""
        self._refill()
        return self.tokens >= cost(argv)

    def charge(self, argv: list[str]) -> None:
        self._refill()
        self.tokens -= cost(argv)
        self.spent += cost(argv)

    def paused(self) -> float:
        """Seconds left of a back-off (0: calls may go)."""
        return max(0.0, self.paused_until - self.clock())

    def rate_limited(self) -> float:
        """slurmctld said "too many": pause, twice as long as last time; returns the pause."""
        self.backoff_s = min(BACKOFF_MAX_S, self.backoff_s * 2 if self.backoff_s else BACKOFF_FIRST_S)
        self.paused_until = self.clock() + self.backoff_s
        return self.backoff_s

    def answered(self) -> None:
        self.backoff_s = 0.0
