"""gputui.home.poller.SlurmPoller with an injected runner replaying recorded Slurm outputs.

Recorded on the local Slurm 22.05 cluster (``data/``): ``squeue-22.05-array.txt`` (array job 253: task 0
FAILED, tasks 1-2 RUNNING, 3-5 PENDING), ``scontrol-22.05-array-task-{1,2}.txt`` (``scontrol show job -o -d``
of the running tasks), ``scontrol-22.05-config.txt``; from ``tests/slurm/data``: the sinfo outputs, the
``--json`` documents of 22.05 and 23.11 and sacct's real "accounting storage is disabled" answer (exit 1,
stderr). ``sacct-ended-synthetic.txt`` is written by hand in sacct's ``-P --delimiter=\\x1f`` format (the
test cluster has no accounting), including a step line that must be skipped."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gputui.home import poller as poller_mod
from gputui.home.poller import (
    CLUSTER_EVERY_S,
    DETAILS_PER_POLL,
    ENDED_EVERY_S,
    SQUEUE_TIMEOUT_S,
    SlurmPoller,
    clock_time,
)
from gputui.home.rows import build_rows
from gputui.slurm import sacct
from gputui.slurm.cluster import sinfo_argv
from gputui.slurm.commands import SlurmError, SlurmNotFound
from gputui.slurm.jobs import SEP, squeue_argv

DATA = Path(__file__).parent / "data"
SLURM_DATA = Path(__file__).parent.parent / "slurm" / "data"

SQUEUE_ARRAY = (DATA / "squeue-22.05-array.txt").read_text()
SACCT_ENDED = (DATA / "sacct-ended-synthetic.txt").read_text()
SACCT_DISABLED = ("", (SLURM_DATA / "sacct-22.05-disabled.txt").read_text(), 1)  # as the real sacct exits
NOT_FOUND = "Slurm command {!r} not found (is Slurm installed and on PATH?)"


def answer(stdout: str = "", stderr: str = "", rc: int = 0) -> tuple[str, str, int]:
    return stdout, stderr, rc


class Replay:
    """The runner: answers by command (``squeue``, ``sacct``, ``sinfo``, ``config``, ``job:<id>``) with a
    (stdout, stderr, returncode) triple or an exception to raise; records every call."""

    def __init__(self, **answers) -> None:
        self.answers: dict[str, object] = {
            "config": answer((DATA / "scontrol-22.05-config.txt").read_text()),
            "squeue": answer(SQUEUE_ARRAY),
            "sacct": answer(SACCT_ENDED),
            "sinfo": answer((SLURM_DATA / "sinfo-22.05-busy.txt").read_text()),
            "job:253_1": answer((DATA / "scontrol-22.05-array-task-1.txt").read_text()),
            "job:253_2": answer((DATA / "scontrol-22.05-array-task-2.txt").read_text()),
        }
        self.answers.update(answers)
        self.calls: list[tuple[list[str], float]] = []

    @staticmethod
    def key(argv: list[str]) -> str:
        if argv[0] == "scontrol" and argv[1:3] == ["show", "config"]:
            return "config"
        if argv[0] == "scontrol" and argv[1:3] == ["show", "job"]:
            return "jobs:all" if argv[-1] == "-d" else f"job:{argv[-1]}"
        return argv[0]

    def __call__(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        self.calls.append((list(argv), timeout))
        reply = self.answers.get(self.key(argv), answer("", f"{argv[0]}: error: nothing recorded", 1))
        if isinstance(reply, BaseException):
            raise reply
        stdout, stderr, rc = reply  # type: ignore[misc]
        return subprocess.CompletedProcess(argv, rc, stdout, stderr)

    def called(self) -> list[str]:
        return [self.key(argv) for argv, _ in self.calls]

    def take(self) -> list[str]:
        """The keys called since the last take()."""
        keys = self.called()[getattr(self, "_taken", 0) :]
        self._taken = len(self.calls)
        return keys


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(replay: Replay, **kw) -> tuple[SlurmPoller, Clock]:
    clock = Clock()
    return SlurmPoller(replay, user="root", clock=clock, **kw), clock


# --------------------------------------------------------------------------- call counts


def test_first_poll_calls_and_snapshot() -> None:
    replay = Replay()
    poller, _ = make(replay)
    snap = poller.poll()
    argvs = [argv for argv, _ in replay.calls]
    assert replay.called().count("squeue") == 1
    assert argvs[replay.called().index("squeue")] == squeue_argv(all_states=True)
    assert argvs[replay.called().index("sacct")] == sacct.recent_argv("root", "now-86400seconds")
    assert argvs[replay.called().index("sinfo")] == sinfo_argv()
    assert ["scontrol", "show", "job", "-o", "-d", "253_1"] in argvs
    assert sorted(replay.called()) == sorted(["config", "squeue", "sacct", "sinfo", "job:253_1", "job:253_2"])
    assert all(timeout > 0 for _, timeout in replay.calls)
    squeue_timeout = replay.calls[replay.called().index("squeue")][1]
    assert squeue_timeout == SQUEUE_TIMEOUT_S
    assert snap.errors == []
    assert snap.slurm_found is True
    assert snap.cluster_name == "ci" and snap.version == "22.05.8"
    assert snap.accounting is True
    assert [p.name for p in snap.partitions] == ["debug"]
    assert (snap.partitions[0].free_gpus, snap.partitions[0].total_gpus) == (3, 8)
    assert snap.taken_at > 0


def test_exactly_one_squeue_per_poll_and_scontrol_once_per_running_job() -> None:
    replay = Replay()
    poller, clock = make(replay)
    first = poller.poll()
    assert sorted(k for k in replay.take() if k.startswith("job:")) == ["job:253_1", "job:253_2"]
    gpus = {j.job_id: j.gpus for j in first.jobs}
    assert gpus["253_1"] == {"node2": [3]} and gpus["253_2"] == {"node1": [3]}
    assert gpus["253_0"] == {} and gpus["253_3"] == {}  # ended / pending: never asked
    for step in range(1, 6):
        clock.now += 5
        snap = poller.poll()
        assert replay.take() == ["squeue"], f"poll {step}"
        assert {j.job_id: j.gpus for j in snap.jobs}["253_1"] == {"node2": [3]}
    assert replay.called().count("config") == 1


def test_newly_running_job_is_asked_about_once() -> None:
    replay = Replay()
    poller, clock = make(replay)
    poller.poll()
    replay.take()
    # task 3 starts: the same line with RUNNING on node2 and its own job id
    line = next(ln for ln in SQUEUE_ARRAY.splitlines() if ln.split(SEP)[2] == "3")
    parts = line.split(SEP)
    parts[0], parts[7], parts[8], parts[13] = "257", "RUNNING", "None", "node2"
    started = SQUEUE_ARRAY.replace(line, SEP.join(parts))
    replay.answers["squeue"] = answer(started)
    replay.answers["job:253_3"] = answer(
        (DATA / "scontrol-22.05-array-task-1.txt")
        .read_text()
        .replace("GRES=gpu:1(IDX:3)", "GRES=gpu:1(IDX:1)")
    )
    clock.now += 5
    snap = poller.poll()
    assert replay.take() == ["squeue", "job:253_3"]
    assert {j.job_id: j.gpus for j in snap.jobs}["253_3"] == {"node2": [1]}
    clock.now += 5
    poller.poll()
    assert replay.take() == ["squeue"]


def test_many_new_jobs_are_asked_about_in_one_scontrol_call() -> None:
    template = next(ln for ln in SQUEUE_ARRAY.splitlines() if ln.split(SEP)[2] == "1")
    task = (DATA / "scontrol-22.05-array-task-1.txt").read_text().strip()
    lines, details = [], []
    for n in range(DETAILS_PER_POLL + 3):
        parts = template.split(SEP)
        parts[0], parts[1], parts[2] = str(400 + n), str(400 + n), "N/A"
        lines.append(SEP.join(parts))
        detail = task.replace("JobId=255 ", f"JobId={400 + n} ").replace("ArrayJobId=253 ArrayTaskId=1 ", "")
        details.append(detail)
    replay = Replay(squeue=answer("\n".join(lines) + "\n"))
    replay.answers["jobs:all"] = answer("\n".join(details) + "\n")
    poller, clock = make(replay)
    snap = poller.poll()
    keys = replay.take()
    assert keys.count("jobs:all") == 1 and not any(k.startswith("job:") for k in keys)
    assert all(job.gpus for job in snap.jobs if job.state == "RUNNING")
    clock.now += 5
    poller.poll()
    assert replay.take() == ["squeue"]


def test_scontrol_timeout_is_an_error_and_asked_again() -> None:
    replay = Replay(
        **{"job:253_1": SlurmError("scontrol did not answer within 10 s (is slurmctld reachable?)")}
    )
    replay.answers.pop("job:253_2")
    replay.answers["squeue"] = answer(
        "\n".join(ln for ln in SQUEUE_ARRAY.splitlines() if ln.split(SEP)[2] != "2") + "\n"
    )
    poller, clock = make(replay)
    snap = poller.poll()
    assert snap.errors == ["scontrol did not answer within 10 s (is slurmctld reachable?)"]
    replay.take()
    replay.answers["job:253_1"] = answer((DATA / "scontrol-22.05-array-task-1.txt").read_text())
    clock.now += 5
    snap = poller.poll()
    assert replay.take() == ["squeue", "job:253_1"]
    assert snap.errors == []
    assert {j.job_id: j.gpus for j in snap.jobs}["253_1"] == {"node2": [3]}


# --------------------------------------------------------------------------- sacct / sinfo cadence


def test_sacct_and_sinfo_only_every_interval_or_on_force() -> None:
    replay = Replay()
    poller, clock = make(replay)
    start = clock.now
    assert ENDED_EVERY_S == CLUSTER_EVERY_S == 60.0
    expected = [
        (0.0, False, ["squeue", "sacct", "sinfo"]),
        (5.0, False, ["squeue"]),
        (ENDED_EVERY_S - 0.1, False, ["squeue"]),
        (ENDED_EVERY_S, False, ["squeue", "sacct", "sinfo"]),
        (ENDED_EVERY_S + 1, True, ["squeue", "sacct", "sinfo"]),
        (ENDED_EVERY_S + 2, False, ["squeue"]),
        (ENDED_EVERY_S + 1 + CLUSTER_EVERY_S, False, ["squeue", "sacct", "sinfo"]),
    ]
    for offset, force, keys in expected:
        clock.now = start + offset
        poller.poll(force=force)
        called = [k for k in replay.take() if k not in ("config",) and not k.startswith("job:")]
        assert called == keys, f"t+{offset} force={force}"


def test_ended_hours_sets_sacct_window_and_zero_means_no_sacct() -> None:
    replay = Replay()
    poller, _ = make(replay, ended_hours=2)
    poller.poll()
    argvs = [argv for argv, _ in replay.calls if argv[0] == "sacct"]
    assert argvs == [sacct.recent_argv("root", "now-7200seconds")]

    replay = Replay()
    poller, clock = make(replay, ended_hours=0)
    snap = poller.poll(force=True)
    clock.now += ENDED_EVERY_S
    poller.poll(force=True)
    assert "sacct" not in replay.called()
    assert snap.accounting is None


def test_accounting_disabled_never_asked_again() -> None:
    replay = Replay(sacct=SACCT_DISABLED)
    poller, clock = make(replay)
    snap = poller.poll()
    assert snap.accounting is False
    assert snap.errors == []
    for _ in range(3):
        clock.now += ENDED_EVERY_S
        snap = poller.poll(force=True)
        assert snap.accounting is False
    assert replay.called().count("sacct") == 1
    assert replay.called().count("squeue") == 4
    assert sorted(j.job_id for j in snap.jobs) == ["253_0", "253_1", "253_2", "253_3", "253_4", "253_5"]


def test_sacct_failure_is_an_error_and_keeps_the_last_ended_jobs() -> None:
    replay = Replay()
    poller, clock = make(replay)
    poller.poll()
    replay.answers["sacct"] = answer("", "sacct: error: slurmdbd: Connection refused\n", 1)
    clock.now += ENDED_EVERY_S
    snap = poller.poll()
    assert snap.errors == ["sacct: sacct: error: slurmdbd: Connection refused"]
    assert {"240", "241", "242"} <= {j.job_id for j in snap.jobs}
    replay.answers["sacct"] = SlurmError("sacct did not answer within 10 s (is slurmctld reachable?)")
    clock.now += ENDED_EVERY_S
    snap = poller.poll()
    assert snap.errors == ["sacct did not answer within 10 s (is slurmctld reachable?)"]
    assert {"240", "241", "242"} <= {j.job_id for j in snap.jobs}


def test_sinfo_failure_keeps_last_partitions() -> None:
    replay = Replay()
    poller, clock = make(replay)
    poller.poll()
    replay.answers["sinfo"] = answer("", "sinfo: error: Unable to contact slurm controller\n", 1)
    clock.now += CLUSTER_EVERY_S
    snap = poller.poll()
    why = "sinfo: sinfo: error: Unable to contact slurm controller"
    assert snap.errors == [f"{why}; free GPUs as of {clock_time(poller.partitions_at)}"]
    assert [(p.name, p.free_gpus) for p in snap.partitions] == [("debug", 3)]


# --------------------------------------------------------------------------- squeue failures


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (
            answer("", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n", 1),
            "squeue: slurm_load_jobs error: Unable to contact slurm controller (connect failure)",
        ),
        (answer("", "", 1), "squeue: exit status 1"),
        (
            SlurmError("squeue did not answer within 10 s (is slurmctld reachable?)"),
            "squeue did not answer within 10 s (is slurmctld reachable?)",
        ),
        (
            answer("<html>proxy error</html>\nsecond line\n"),
            "squeue output unreadable (no job row in 2 lines; first: '<html>proxy error</html>')",
        ),
    ],
    ids=["exit-1", "exit-1-silent", "timeout", "garbage"],
)
def test_squeue_failure_keeps_last_good_jobs(reply, error: str) -> None:
    replay = Replay()
    poller, clock = make(replay)
    good = poller.poll()
    good_ids = [j.job_id for j in good.jobs]
    replay.answers["squeue"] = reply
    clock.now += 5
    snap = poller.poll()
    assert snap.errors == [f"{error}; showing the table from {clock_time(good.taken_at)}"]
    assert all("\n" not in e for e in snap.errors)
    assert [j.job_id for j in snap.jobs] == good_ids
    assert snap.taken_at == good.taken_at
    assert {j.job_id: j.gpus for j in snap.jobs}["253_1"] == {"node2": [3]}
    # and it recovers on the next good answer
    replay.answers["squeue"] = answer(SQUEUE_ARRAY)
    clock.now += 5
    assert poller.poll().errors == []


def test_squeue_empty_answer_means_no_jobs() -> None:
    replay = Replay(sacct=SACCT_DISABLED)
    poller, clock = make(replay)
    poller.poll()
    replay.answers["squeue"] = answer("")
    clock.now += 5
    snap = poller.poll()
    assert snap.errors == [] and snap.jobs == []


def test_slurm_not_found() -> None:
    def missing(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        raise SlurmNotFound(NOT_FOUND.format(argv[0]))

    poller = SlurmPoller(missing, user="root", clock=Clock())
    snap = poller.poll()
    assert snap.slurm_found is False
    assert len(snap.errors) == 1
    assert snap.errors[0] in (NOT_FOUND.format("scontrol"), NOT_FOUND.format("squeue"))
    assert snap.jobs == []
    calls: list[list[str]] = []

    def found(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        calls.append(argv)
        return subprocess.CompletedProcess(
            argv, 0, "ClusterName = later\n" if argv[0] == "scontrol" else "", ""
        )

    poller.run = found  # Slurm appears (a module loaded): the cluster name is asked then
    snap = poller.poll()
    assert snap.slurm_found is True and snap.cluster_name == "later"
    assert calls[0] == ["scontrol", "show", "config"]


def test_sacct_not_installed_means_no_accounting() -> None:
    replay = Replay(sacct=SlurmNotFound(NOT_FOUND.format("sacct")))
    poller, clock = make(replay)
    snap = poller.poll()
    assert snap.slurm_found is True and snap.accounting is False and snap.errors == []
    clock.now += ENDED_EVERY_S
    poller.poll(force=True)
    assert replay.called().count("sacct") == 1


# --------------------------------------------------------------------------- merged with sacct


def test_merged_squeue_then_sacct_one_entry_per_id() -> None:
    replay = Replay()
    poller, _ = make(replay)
    snap = poller.poll()
    ids = [j.job_id for j in snap.jobs]
    assert ids[:6] == ["253_0", "253_3", "253_4", "253_5", "253_2", "253_1"]  # squeue's, in its order
    assert ids[6:] == ["240", "241", "242"]  # sacct's, without 253_0 (squeue lists it) nor the step
    from_squeue = snap.jobs[0]
    assert from_squeue.raw_job_id == 254 and from_squeue.exit_code == ""
    ended = {j.job_id: j for j in snap.jobs[6:]}
    assert (ended["241"].state, ended["241"].exit_code) == ("FAILED", "1:0")
    assert ended["242"].state == "CANCELLED"
    rows = build_rows(snap.jobs)
    assert [r.key for r in rows] == [
        "array:253",
        "253_1",
        "253_2",
        "253_0",
        "pending:253",
        "242",
        "241",
        "240",
    ]
    assert [r.cells[3] for r in rows[5:]] == ["CANCELLED (0:15)", "FAILED (1:0)", "COMPLETED"]


def test_job_leaving_squeue_is_shown_from_sacct() -> None:
    replay = Replay()
    poller, clock = make(replay)
    poller.poll()
    replay.answers["squeue"] = answer(
        "\n".join(ln for ln in SQUEUE_ARRAY.splitlines() if ln.split(SEP)[2] != "0") + "\n"
    )
    clock.now += 5
    snap = poller.poll()
    tasks = [j for j in snap.jobs if j.job_id == "253_0"]
    assert len(tasks) == 1 and tasks[0].exit_code == "3:0"  # now sacct's record


# --------------------------------------------------------------------------- --json


def test_json_22_05() -> None:
    replay = Replay(squeue=answer((SLURM_DATA / "squeue-22.05.json").read_text()), sacct=SACCT_DISABLED)
    poller, clock = make(replay, use_json=True)
    snap = poller.poll()
    squeue = ["squeue", "--json", "--me", "-t", "all"]  # 22.05: --json takes no data_parser
    assert [argv for argv, _ in replay.calls if argv[0] == "squeue"] == [squeue]
    assert snap.errors == []
    jobs = {j.job_id: j for j in snap.jobs}
    assert jobs["3"].gpus == {"node1": [0, 1], "node2": [0, 1]}
    clock.now += 5
    poller.poll()
    assert replay.take().count("squeue") == 2


def test_json_mode_asks_no_scontrol() -> None:
    """--json carries gres_detail for every running job; a running job with none has no GPUs, so
    ``scontrol -d`` is never needed in this mode (the 22.05 file has such a job: 4_0, no GPUs)."""
    replay = Replay(squeue=answer((SLURM_DATA / "squeue-22.05.json").read_text()), sacct=SACCT_DISABLED)
    poller, _ = make(replay, use_json=True)
    poller.poll()
    assert [k for k in replay.called() if k.startswith("job:")] == []


def test_json_23_11_filtered_by_user_gpus_from_gres_detail() -> None:
    replay = Replay(squeue=answer((SLURM_DATA / "squeue-23.11.json").read_text()), sacct=SACCT_DISABLED)
    poller = SlurmPoller(replay, user="alice", use_json=True, clock=Clock())
    snap = poller.poll()
    assert snap.errors == []
    jobs = {j.job_id: j for j in snap.jobs}
    assert set(jobs) == {"812345", "812300_7"}  # bob's jobs are not mine
    assert jobs["812345"].gpus == {"gpu07": [0, 1, 2, 3], "gpu08": [0, 1, 2, 3]}
    assert jobs["812300_7"].state == "PENDING"
    assert [k for k in replay.called() if k.startswith("job:")] == []
    rows = build_rows(snap.jobs)
    assert rows[0].cells[6] == "8 (2×4)"


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("not json {", "squeue output unreadable (JSONDecodeError: "),
        ("[1, 2]", "squeue output unreadable (ValueError: not squeue's document: no list of jobs)"),
    ],
)
def test_json_garbage_keeps_last_good(text: str, start: str) -> None:
    replay = Replay(squeue=answer((SLURM_DATA / "squeue-22.05.json").read_text()), sacct=SACCT_DISABLED)
    poller, clock = make(replay, use_json=True)
    good = [j.job_id for j in poller.poll().jobs]
    assert "3" in good
    replay.answers["squeue"] = answer(text)
    clock.now += 5
    snap = poller.poll()
    assert len(snap.errors) == 1 and snap.errors[0].startswith(start)
    assert snap.errors[0].endswith(f"; showing the table from {clock_time(snap.taken_at)}")
    assert [j.job_id for j in snap.jobs] == good
    assert {j.job_id: j.gpus for j in snap.jobs}["3"] == {"node1": [0, 1], "node2": [0, 1]}


def test_default_runner_is_run_slurm_without_check(monkeypatch) -> None:
    seen = {}

    def fake(argv, *, timeout, check):
        seen.update(argv=argv, timeout=timeout, check=check)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(poller_mod, "run_slurm", fake)
    poller_mod.default_runner(["squeue", "--json"], 7.0)
    assert seen == {"argv": ["squeue", "--json"], "timeout": 7.0, "check": False}


# --------------------------------------------------------------------------- real cluster


@pytest.mark.slurm
def test_poller_against_the_cluster(slurm_cluster, tmp_path, monkeypatch) -> None:
    """The real squeue/sacct/sinfo/scontrol answer the argv the poller builds: the job is listed with its
    GPU placement, accounting is found disabled, the partition has the cluster's GPUs."""
    from slurm_helpers import sbatch, scancel, wait_for

    monkeypatch.setenv("SLURM_CONF", slurm_cluster.env["SLURM_CONF"])
    env = slurm_cluster.env
    job = sbatch("sleep 60\n", env, tmp_path, ["--gres=gpu:1", "-J", "home poll", "-o", str(tmp_path / "o")])
    try:
        poller = SlurmPoller()

        def placed():
            snap = poller.poll()
            mine = {j.job_id: j for j in snap.jobs}.get(job)
            # RUNNING, not only placed: a job holds its GPUs while still CONFIGURING; a poll with a
            # transient error (a slow slurmctld) is asked again
            ok = mine is not None and mine.gpus and mine.state == "RUNNING" and not snap.errors
            return (snap, mine) if ok else None

        snap, mine = wait_for(placed, 30, interval=0.3, what=f"job {job} running with its GPUs")
        assert snap.errors == [] and snap.slurm_found is True
        assert snap.cluster_name == slurm_cluster.name and snap.version == slurm_cluster.version
        assert snap.accounting is slurm_cluster.accounting
        assert mine.name == "home poll" and mine.state == "RUNNING"
        assert sum(len(v) for v in mine.gpus.values()) == 1 and set(mine.gpus) <= set(slurm_cluster.nodes)
        total = sum(p.total_gpus for p in snap.partitions)
        assert total == len(slurm_cluster.nodes) * slurm_cluster.gpus_per_node
    finally:
        scancel(job, env)


def test_quick_poll_asks_squeue_only() -> None:
    replay = Replay()
    poller, _ = make(replay)
    snap = poller.poll(quick=True)
    assert replay.take() == ["squeue"]
    assert [j.job_id for j in snap.jobs] and snap.partitions == [] and snap.cluster_name == ""
    poller.poll()
    assert [k for k in replay.take() if not k.startswith("job:")] == ["config", "squeue", "sacct", "sinfo"]
