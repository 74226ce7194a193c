"""``gputui scale --gpus 1,2 ... -- CMD``: the same training at each size, then the comparison. Real runs:
the PyTorch DDP trainer (CPU, gloo) at 1 and 2 ranks with the local launcher, and at 1 rank on 1 node
and 2 ranks on 2 nodes on the local Slurm cluster; ``gputui scale --from`` on what they left."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from gputui.cli import build_parser, main
from gputui.commands import scale

TRAIN = [sys.executable, "-m", "gputui.trainers.torch_ddp", "--epochs", "3", "--batch-size", "32"]
TRAIN += ["--scaling", "strong", "--timeout", "60"]


@pytest.fixture
def here(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUTUI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    return tmp_path


def _runs(*argv: str) -> list[scale.SweepRun]:
    return scale.sweep_runs(build_parser().parse_args(["scale", *argv]))


def test_each_size_gets_its_own_launch_spec() -> None:
    runs = _runs(
        "--gpus", "1,2,8", "--nodes", "1,1,2", "--time", "10", "--", "train.py", "--n={gpus}x{nodes}"
    )
    assert [(r.gpus, r.nodes, r.spec.nodes, r.spec.gpus_per_node) for r in runs] == [
        (1, 1, 1, 1),
        (2, 1, 1, 2),
        (8, 2, 2, 4),
    ]
    assert [r.spec.cmd for r in runs] == [
        ["train.py", "--n=1x1"],
        ["train.py", "--n=2x1"],
        ["train.py", "--n=8x2"],
    ]
    assert [r.spec.world_size for r in runs] == [1, 2, 8]
    assert [r.spec.job_name for r in runs] == ["train.py-scale1", "train.py-scale2", "train.py-scale8"]
    assert all(r.spec.gpu_log and r.spec.time == "10" for r in runs)  # utilisation per size, by default
    assert [r.label for r in runs] == ["1 GPU, 1 node", "2 GPUs, 1 node", "8 GPUs, 2 nodes"]
    cpu = _runs("--gpus", "4", "--nodes", "2", "--cpu", "--", "train.py")[0]
    assert (cpu.spec.gpus_per_node, cpu.spec.ntasks_per_node, cpu.spec.world_size) == (0, 2, 4)
    assert not cpu.spec.gpu_log and cpu.label == "4 ranks, 2 nodes"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--gpus", "1,2", "--nodes", "1,2,4", "--", "t"], "--nodes gives 3 values for 2 sizes of --gpus"),
        (["--gpus", "3", "--nodes", "2", "--", "t"], "3 GPUs do not divide over 2 nodes"),
        (["--gpus", "1,2"], "no command given"),
        (["--gpus", "1", "--time", "1;rm", "--", "t"], "--time '1;rm' is not a valid value"),
        (["--gpus", "1", "--from", "a", "--", "t"], "give existing runs (--from RUN...) or sizes"),
        ([], "give existing runs (--from RUN...) or sizes"),
    ],
)
def test_bad_sweeps_are_one_line_and_submit_nothing(here: Path, capsys, argv, message) -> None:
    assert main(["scale", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gputui: error: ") and message in err and err.count("\n") == 1
    assert not (here / "state").exists()  # no script written


def test_bad_gpu_list_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["scale", "--gpus", "1,x", "--", "t"])
    assert "'x' is not a whole number" in capsys.readouterr().err


def test_local_sweep_at_one_and_two_ranks(here: Path, capsys) -> None:
    argv = [
        "scale",
        "--gpus",
        "1,2",
        "--local",
        "--probe-backend",
        "sim",
        "--probe-interval",
        "0.2",
        "--json",
    ]
    assert main([*argv, "--", *TRAIN]) == 0
    out, err = capsys.readouterr()
    points = json.loads(out)["points"]
    files = sorted(p.name for p in here.glob("gputui-scale-*.jsonl"))
    assert [p["run"] for p in points] == files and len(files) == 2
    assert [p["gpus"] for p in points] == [1, 2]
    one, two = points
    assert one["speedup"] == 1.0 and two["speedup"] == pytest.approx(
        one["epoch_time_s"] / two["epoch_time_s"]
    )
    assert two["efficiency"] == pytest.approx(two["speedup"] / 2)
    assert one["util_mean"] is not None and two["util_mean"] is not None  # simulated GPUs follow the ranks
    assert err.count(": COMPLETED") == 2 and "records in gputui-scale-" in err
    # the runs it left are RUNs for `scale --from` and `report`
    assert main(["scale", "--json", "--from", *files]) == 0
    assert json.loads(capsys.readouterr().out)["points"] == points
    assert main(["report", "--json", files[1]]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["gpus"] == 2 and report["outcome"] == "completed" and report["simulated"]


@pytest.mark.slurm
def test_slurm_sweep_on_one_and_two_nodes(slurm_cluster, here: Path, capsys, monkeypatch) -> None:
    for key, value in slurm_cluster.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(scale, "POLL_S", 1.0)
    argv = ["scale", "--gpus", "1,2", "--nodes", "1,2", "--cpu", "--time", "5", "--json", "--", *TRAIN]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    ids = re.findall(r"submitted job (\d+)", err)
    assert len(ids) == 2 and f"job {ids[1]} (2 ranks, 2 nodes): COMPLETED" in err
    points = json.loads(out)["points"]
    assert [(p["run"], p["gpus"]) for p in points] == [(ids[0], 1), (ids[1], 2)]
    assert points[1]["efficiency"] == pytest.approx(points[0]["epoch_time_s"] / points[1]["epoch_time_s"] / 2)
    assert all(p["accuracy_name"] == "val_accuracy" for p in points)
    assert sorted(p.name for p in here.glob("slurm-*.out")) == [f"slurm-{i}.out" for i in ids]
    script = next((here / "state" / "scripts").glob(f"*-scale2-{ids[1]}.sh")).read_text()
    assert "#SBATCH --nodes=2" in script and "#SBATCH --ntasks-per-node=1" in script
    assert "--gres" not in script
    # the 2-node run's output, read on its own: both ranks, every epoch
    assert main(["report", "--json", ids[1]]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["gpus"] == 2 and report["epochs"] == 3 and report["outcome"] == "completed"


@pytest.mark.slurm
def test_ctrl_c_stops_waiting_not_the_jobs(slurm_cluster, here: Path, capsys, monkeypatch) -> None:
    for key, value in slurm_cluster.env.items():
        monkeypatch.setenv(key, value)
    waits: list[list[str]] = []

    def interrupted(runs: list[scale.SweepRun], poll_s: float) -> None:
        waits.append([r.run for r in runs])
        raise KeyboardInterrupt

    monkeypatch.setattr(scale, "wait_for", interrupted)
    argv = ["scale", "--gpus", "1,2", "--cpu", "--time", "5", "--", *TRAIN]
    assert main(argv) == 130
    err = capsys.readouterr().err
    ids = re.findall(r"submitted job (\d+)", err)
    assert len(ids) == 2 and waits == [ids]
    assert f"the jobs go on. Compare them later: gputui scale --from {' '.join(ids)}" in err
    monkeypatch.undo()
    for key, value in slurm_cluster.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(here)
    runs = [
        scale.SweepRun(n, 1, scale.LaunchSpec(cmd=["t"]), run=i) for n, i in zip((1, 2), ids, strict=True)
    ]
    scale.wait_for(runs, 1.0)  # they went on without us
    assert [r.state for r in runs] == ["COMPLETED", "COMPLETED"]
    assert main(["scale", "--json", "--from", *ids]) == 0
    assert [p["gpus"] for p in json.loads(capsys.readouterr().out)["points"]] == [1, 2]


def test_slurm_failing_while_waiting_is_one_line(tmp_path: Path, capsys, monkeypatch) -> None:
    """scontrol fails while the sweep waits (slurmctld down): one line naming the jobs to compare
    later, exit 1; fake sbatch and scontrol (tests/fakes/slurm)."""
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "slurm"))
    from fake_slurm import FakeSlurm, response

    fake = FakeSlurm(tmp_path, monkeypatch)
    fake.set("sbatch", response("5\n"), response("6\n"))
    down = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"
    fake.set("scontrol show job", response(stderr=down, exit=1))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUTUI_STATE_DIR", str(tmp_path / "state"))
    assert main(["scale", "--gpus", "1,2", "--cpu", "--", "train.py"]) == 1
    err = capsys.readouterr().err
    assert "submitted job 5 (1 rank, 1 node)" in err and "submitted job 6 (2 ranks, 1 node)" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("gputui: error: cannot watch the jobs: scontrol: slurm_load_jobs error")
    assert last.endswith("compare later: gputui scale --from 5 6")
    scripts = sorted((tmp_path / "state" / "scripts").glob("*.sh"))
    assert [p.name.rsplit("-", 1)[-1] for p in scripts] == ["5.sh", "6.sh"]  # named after their jobs
    assert [argv[0] for argv in fake.calls("sbatch")] == ["--parsable", "--parsable"]
    assert "#SBATCH --ntasks-per-node=2" in scripts[1].read_text()
