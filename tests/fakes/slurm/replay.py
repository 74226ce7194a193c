"""The fake Slurm commands of the unit tests: replay what a scenario file says, log every call.

``GPUTUI_FAKE_SLURM`` names a JSON scenario (written by ``tests/slurm/fake_slurm.py``)::

    {"log": "calls.jsonl", "state": "state.json", "jobid": "3",
     "responses": {"scontrol show job": [RESPONSE, ...], "srun": [STEP, ...], ...}}

Each call has a key (``srun --version``, ``srun`` for a step, ``scontrol show job``, ``sacct``, ...) and
takes the next response of its list; the last one repeats. A RESPONSE is ``{"stdout", "stderr", "exit",
"sleep", "then"}``; ``sleep`` seconds pass before it answers (a slow or hung slurmctld: the caller's
timeout, or its kill, ends the fake); ``then`` replaces other keys' lists (``scancel`` ending the job:
``scontrol show job`` says CANCELLED from then on). Every call appends ``{"cmd", "key", "argv", "env"}``
to the log; a step also logs what happened to it (``sigterm``, ``end``). A STEP is run by :mod:`step`.

``"rate_limit": {"tokens": N}`` plays slurmctld's RPC rate limiter (23.02+ ``rl_enable``): each call of a
command that asks slurmctld (not ``sacct``: slurmdbd answers it) takes a token, and once they are spent
the command prints ``slurm_strerror(SLURMCTLD_COMMUNICATIONS_BACKOFF)`` the way that command prints a
load error (``slurm_load_jobs error: Rate limit exceeded, please retry momentarily``) and exits 1; such a
call is logged with ``"limited": true``. Standard library only.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from typing import Any

SCENARIO_VAR = "GPUTUI_FAKE_SLURM"
#: ``scontrol`` verbs that take a job list: their key is the verb alone (``scontrol hold``).
JOB_VERBS = ("hold", "release", "requeue", "uhold")


def load_scenario() -> dict[str, Any]:
    path = os.environ.get(SCENARIO_VAR)
    if not path:
        sys.stderr.write(f"fake Slurm: {SCENARIO_VAR} is not set\n")
        sys.exit(99)
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def log(scenario: dict[str, Any], **entry: Any) -> None:
    """Append one JSON line to the call log (one ``write`` on an O_APPEND descriptor)."""
    entry.setdefault("pid", os.getpid())
    entry.setdefault("t", time.time())
    line = (json.dumps(entry) + "\n").encode()
    fd = os.open(scenario["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def call_key(cmd: str, argv: list[str]) -> str:
    if cmd == "srun":
        return "srun --version" if "--version" in argv else "srun"
    if cmd == "scontrol":
        words = [a for a in argv if not a.startswith("-")]
        if words and words[0] in JOB_VERBS:  # `scontrol hold 3` → "scontrol hold": the id is in argv
            return f"scontrol {words[0]}"
        return " ".join(["scontrol", *words[:2]])
    return cmd


def next_response(scenario: dict[str, Any], key: str) -> Any:
    """The next response for ``key`` (the last one repeats); applies its ``then`` under a file lock."""
    with open(scenario["state"], "a+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        text = fh.read()
        queues = json.loads(text) if text.strip() else dict(scenario["responses"])
        queue = list(queues.get(key) or [])
        if not queue:
            return None
        response = queue.pop(0) if len(queue) > 1 else queue[0]
        queues[key] = queue
        if isinstance(response, dict):
            queues.update(response.get("then") or {})
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps(queues))
        return response


RATE_LIMITED = "Rate limit exceeded, please retry momentarily"  # slurm_strerror(1804), Slurm's source
#: How each command prints a failed slurmctld call (the rate limiter's answer among them).
LOAD_ERROR = {
    "squeue": "slurm_load_jobs error: {}",
    "sinfo": "slurm_load_partitions: {}",
    "scontrol": "slurm_load_jobs error: {}",
    "srun": "srun: error: Unable to confirm allocation for job: {}",
    "sbatch": "sbatch: error: Batch job submission failed: {}",
    "scancel": "scancel: error: Kill job error on job id: {}",
}


def rate_limited(scenario: dict[str, Any], cmd: str) -> bool:
    """True when slurmctld's rate limiter refuses this call (its token bucket, kept in the state file)."""
    limit = scenario.get("rate_limit")
    if not limit or cmd not in LOAD_ERROR:
        return False
    with open(scenario["state"] + ".tokens", "a+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        text = fh.read().strip()
        tokens = int(text) if text else int(limit["tokens"])
        fh.seek(0)
        fh.truncate()
        fh.write(str(max(tokens - 1, 0)))
        return tokens <= 0


def reply(response: dict[str, Any]) -> int:
    if response.get("sleep"):
        time.sleep(response["sleep"])
    sys.stdout.write(response.get("stdout", ""))
    sys.stdout.flush()
    sys.stderr.write(response.get("stderr", ""))
    sys.stderr.flush()
    return int(response.get("exit", 0))


def main(cmd: str, argv: list[str]) -> int:
    scenario = load_scenario()
    key = call_key(cmd, argv)
    env = {k: v for k, v in os.environ.items() if k.startswith("SLURM")}
    if rate_limited(scenario, cmd):
        log(scenario, cmd=cmd, key=key, argv=argv, env=env, limited=True)
        sys.stderr.write(LOAD_ERROR[cmd].format(RATE_LIMITED) + "\n")
        return 1
    log(scenario, cmd=cmd, key=key, argv=argv, env=env)
    response = next_response(scenario, key)
    if response is None:
        sys.stderr.write(f"fake {cmd}: the scenario has no response for {key!r}\n")
        return 99
    if key == "srun":
        from step import run_step

        return run_step(scenario, response, argv)
    return reply(response)
