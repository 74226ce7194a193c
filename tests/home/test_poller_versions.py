"""The poller on newer Slurm (issue 23.2/23.3): the JSON path and the RPC budget.

``squeue-24.11-array-pending.json`` and ``squeue-22.05-array-pending.json`` are real ``squeue --json -t
all`` answers (24.11.5 with ``--json=v0.0.42``; 22.05.8), trimmed to three jobs: an ended job, the
running task 0 of an array and the record of its pending tasks 1-3 (``-a 0-3%1``; 24.11 printed that
record's output path as ``…_4294967294.out``). The RPC budget is counted with the costs measured by
``sdiag`` (gputui.home.budget); slurmctld's rate limiter: tests/slurm/test_fake_slurm_rate_limit.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_poller import SACCT_DISABLED, Clock, Replay, answer

from gputui.home.budget import RPC_PER_S, cost
from gputui.home.poller import SlurmPoller
from gputui.home.rows import build_rows
from gputui.slurm import jsonshape
from gputui.slurm.cluster import sinfo_argv
from gputui.slurm.jobs import squeue_argv

DATA = Path(__file__).parent / "data"
CONFIG_22_05 = (DATA / "scontrol-22.05-config.txt").read_text()
CAPTURES = {
    "24.11.5": (DATA / "squeue-24.11-array-pending.json", 16, "/tmp/h23v-16_{}.out"),
    "22.05.8": (DATA / "squeue-22.05-array-pending.json", 216, "/tmp/h23-216_{}.out"),
}


def config_of(release: str) -> tuple[str, str, int]:
    return answer(CONFIG_22_05.replace("SLURM_VERSION           = 22.05.8", f"SLURM_VERSION = {release}"))


@pytest.mark.parametrize("release", sorted(CAPTURES))
def test_json_path_pins_the_parser_keeps_ended_jobs_and_splits_a_pending_array(release: str) -> None:
    path, array, out = CAPTURES[release]
    replay = Replay(squeue=answer(path.read_text()), sacct=SACCT_DISABLED, config=config_of(release))
    poller = SlurmPoller(replay, user="root", use_json=True, clock=Clock())
    snap = poller.poll()
    (argv,) = [argv for argv, _ in replay.calls if argv[0] == "squeue"]
    pinned = "--json=v0.0.42" if release.startswith("24.11") else "--json"  # 22.05 takes no argument
    assert argv == ["squeue", pinned, "--me", "-t", "all"]  # -t all: 24.11 drops ended jobs without it
    jobs = {j.job_id: j for j in snap.jobs}
    assert set(jobs) == {str(array + 1), f"{array}_0", *(f"{array}_{t}" for t in (1, 2, 3))}
    for task in (1, 2, 3):
        pending = jobs[f"{array}_{task}"]
        assert pending.state == "PENDING" and pending.raw_job_id == array and pending.array_task_id == task
        assert pending.stdout == out.format(task) and pending.time_used_s == 0
    assert not any("4294967294" in j.stdout or "4294967294" in j.job_id for j in snap.jobs)
    ended = jobs[str(array + 1)]
    assert ended.state == "COMPLETED" and ended.time_used_s is not None
    assert jobs[f"{array}_0"].time_used_s is not None and jobs[f"{array}_0"].time_used_s > 0  # TIME shown
    cells = {row.cells[0]: row.cells for row in build_rows(snap.jobs)}
    assert f"{array}_[1-3]" in " ".join(cells)  # folded like squeue --array's rows


def test_time_used_as_squeue_computes_it() -> None:
    doc = json.loads(CAPTURES["24.11.5"][0].read_text())
    running = next(j for j in doc["jobs"] if j["job_id"] == 18)
    start = running["start_time"]["number"]
    assert jsonshape.time_used(running, now=start + 65) == 65
    ended = {"job_state": ["COMPLETED"], "start_time": 100, "end_time": 400, "suspend_time": 0}
    assert jsonshape.time_used(ended) == 300
    resumed = {"job_state": "RUNNING", "start_time": 100, "suspend_time": 500, "pre_sus_time": 50}
    assert jsonshape.time_used(resumed, now=600) == 150  # ran 50 s, suspended, running again for 100 s
    assert jsonshape.time_used({"job_state": "SUSPENDED", "start_time": 1, "pre_sus_time": 7}) == 7


@pytest.mark.parametrize(
    ("release", "parser"),
    [
        *[("22.05.8", None), ("23.02.7", "v0.0.39"), ("23.11.4", "v0.0.40"), ("24.05.8", "v0.0.41")],
        *[("24.11.5", "v0.0.42"), ("25.05.1", "v0.0.43"), ("25.11.0", "v0.0.44"), ("26.05.5", "v0.0.45")],
        *[("27.05.0", "v0.0.45"), ("", None), ("garbage", None)],
    ],
)
def test_data_parser_per_release(release: str, parser: str | None) -> None:
    assert jsonshape.data_parser(release) == parser


def test_a_refused_data_parser_is_dropped_for_plain_json() -> None:
    refused = answer("", "squeue: error: load_plugins: unable to find plugin: data_parser/v0.0.45\n", 1)
    replay = Replay(squeue=refused, sacct=SACCT_DISABLED, config=config_of("26.05.5"))
    poller = SlurmPoller(replay, user="root", use_json=True, clock=Clock())
    assert "data_parser/v0.0.45" in poller.poll().errors[0]
    poller.clock.now += 5
    poller.poll()
    squeues = [argv[1] for argv, _ in replay.calls if argv[0] == "squeue"]
    assert squeues == ["--json=v0.0.45", "--json"]


def test_array_task_strings() -> None:
    assert jsonshape.task_ids("1-3%1") == [1, 2, 3]
    assert jsonshape.task_ids("1,4,7-11:2") == [1, 4, 7, 9, 11]
    assert jsonshape.task_ids("x-3") == [] and jsonshape.task_ids("0-999999999") == []


# --------------------------------------------------------------------------- the RPC budget


def rpcs_per_second(refresh_s: float, seconds: float = 3600.0) -> tuple[float, int]:
    """Slurm RPCs per second over ``seconds`` of polling every ``refresh_s`` (the first minute left out),
    and how many squeue calls there were."""
    replay = Replay()
    clock = Clock()
    poller = SlurmPoller(replay, user="root", clock=clock)
    start = clock.now
    while clock.now - start < seconds:
        poller.poll()
        clock.now += refresh_s
    steady = [argv for argv, _ in replay.calls[len(replay.calls) // 60 :]]  # past the first burst
    window = seconds * (1 - 1 / 60)
    return sum(cost(argv) for argv in steady) / window, sum(argv[0] == "squeue" for argv, _ in replay.calls)


def test_default_refresh_stays_under_half_an_rpc_per_second() -> None:
    rate, squeues = rpcs_per_second(5.0)
    assert rate < RPC_PER_S
    assert squeues == 720  # one squeue per 5 s refresh: the budget holds without skipping any


@pytest.mark.parametrize("refresh_s", [0.5, 1.0, 2.0])
def test_a_fast_refresh_is_paced_to_the_budget(refresh_s: float) -> None:
    rate, squeues = rpcs_per_second(refresh_s)
    assert rate <= RPC_PER_S + 0.01
    assert squeues < 3600 / refresh_s and squeues >= 3600 * 0.2  # paced, still about every 4-5 s


def test_costs_are_the_measured_rpcs() -> None:
    assert cost(squeue_argv(all_states=True)) == 2 and cost(jsonshape.squeue_argv("24.11.5")) == 1
    assert cost(sinfo_argv()) == 2 and cost(["scontrol", "show", "job", "-o", "-d", "3"]) == 2
    assert cost(["sacct", "-X"]) == 0
