"""W&B offline runs (``wandb/offline-run-*/run-*.wandb``) read like TensorBoard event files: runs written by
W&B itself (``WANDB_MODE=offline``, in a child process as a training would), read back by ``gputui parse``,
``report``, ``replay --headless`` and the follower ``attach`` uses; and without the ``wandb`` package, one
line saying what to install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gputui.cli import main
from gputui.logs.files.metric_files import MetricFileFollower, run_dir_files
from gputui.logs.files.wandb_offline import NEEDS, WandbRunParser

STEPS_PER_EPOCH = 100
TRAINING = """
import json, sys, time, wandb
epochs, code = int(sys.argv[1]), int(sys.argv[2])
run = wandb.init(project="p", config={"lr": 0.1})
times = []
for step in range(epochs * STEPS):
    row = {"loss": 4.0 / (step + 1), "epoch": step // STEPS, "train": {"lr": 0.1 * 0.99**step}}
    if step % STEPS == STEPS - 1:
        row["val_loss"] = 1.5 - 0.25 * (step // STEPS)
    before = time.time()
    wandb.log(row)
    times.append((before, time.time()))
run.finish(exit_code=code)
print(json.dumps(times))
""".replace("STEPS", str(STEPS_PER_EPOCH))


def offline_run(folder: Path, epochs: int = 3, exit_code: int = 0) -> tuple[Path, list[tuple[float, float]]]:
    """A W&B offline run written by wandb in a child process; its .wandb file and each step's log() times."""
    pytest.importorskip("wandb", reason="W&B's own client writes the runs (pip install 'gputui[wandb]')")
    env = os.environ | {"WANDB_MODE": "offline", "WANDB_DIR": str(folder), "WANDB_SILENT": "true"}
    env.pop("WANDB_API_KEY", None)
    before = set(folder.glob("wandb/offline-run-*"))
    done = subprocess.run(
        [sys.executable, "-c", TRAINING, str(epochs), str(exit_code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    (run_dir,) = set(folder.glob("wandb/offline-run-*")) - before
    (wandb_file,) = run_dir.glob("run-*.wandb")
    return wandb_file, json.loads(done.stdout.strip().splitlines()[-1])


def expected(epochs: int) -> list[tuple[str, float, int, int]]:
    out = []
    for step in range(epochs * STEPS_PER_EPOCH):
        out += [("loss", 4.0 / (step + 1), step, step // STEPS_PER_EPOCH)]
        out += [("train.lr", 0.1 * 0.99**step, step, step // STEPS_PER_EPOCH)]
        if step % STEPS_PER_EPOCH == STEPS_PER_EPOCH - 1:
            out.append(("val_loss", 1.5 - 0.25 * (step // STEPS_PER_EPOCH), step, step // STEPS_PER_EPOCH))
    return out


def test_parse_reads_every_value_with_its_step_epoch_and_time(tmp_path: Path, capsys) -> None:
    wandb_file, times = offline_run(tmp_path)
    assert wandb_file.stat().st_size > 3 * 32768  # several blocks, records split across them
    assert main(["parse", "--json", str(wandb_file.parent)]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    metrics = [r for r in out if r["kind"] == "metric"]
    want = sorted(expected(3))  # a nested dict's keys joined by "." as W&B names them
    assert sorted((r["name"], r["value"], r["step"], r["epoch"]) for r in metrics) == want
    for r in metrics:  # W&B's own _timestamp of the row, taken inside wandb.log()
        before, after = times[r["step"]]
        assert before <= r["time"] <= after + 1e-3, r
    assert {r["time_source"] for r in metrics} == {"emitted"} and {r["source"] for r in metrics} == {"wandb"}
    assert {r["scope"] for r in metrics if r["name"] == "val_loss"} == {"epoch"}
    (outcome,) = [r for r in out if r.get("event") == "outcome"]
    assert outcome["outcome"] == "completed" and "exited with code 0" in outcome["evidence"]


def test_report_and_replay_of_the_wandb_folder_and_a_crashed_run(tmp_path: Path, capsys) -> None:
    good, _ = offline_run(tmp_path, epochs=3)
    bad, _ = offline_run(tmp_path, epochs=1, exit_code=3)
    assert main(["report", "--json", str(tmp_path / "wandb")]) == 0  # each run its own RUN
    reports = {Path(r["run"]).name: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert reports[good.parent.name]["outcome"] == "completed"
    assert reports[bad.parent.name]["outcome"] == "crashed"
    rows = reports[good.parent.name]["epoch_rows"]
    assert [r["metrics"]["val_loss"] for r in rows] == [1.5, 1.25, 1.0]

    assert main(["replay", "--headless", str(good.parent)]) == 0
    out = capsys.readouterr().out
    assert "training: 3 epoch(s); loss 4.0000 → 0.0133" in out
    assert f"outcome: completed: W&B run {good.stem.removeprefix('run-')} exited with code 0" in out

    assert main(["parse", str(bad)]) == 0
    assert "outcome: crashed" in capsys.readouterr().out


def test_a_growing_file_read_in_pieces_gives_the_same_records(tmp_path: Path) -> None:
    """What the follower ``attach`` uses sees: the file in any pieces (a chunk header or a record cut
    between two reads) gives the same records as the whole file; the newest run of the job's folder."""
    wandb_file, _ = offline_run(tmp_path, epochs=2)
    data = wandb_file.read_bytes()
    whole = WandbRunParser()
    want = [r.to_json_dict() for r in whole.feed(data) + whole.finish()]
    for size in (1, 5, 999, 32768):
        parser = WandbRunParser()
        got = [r for i in range(0, len(data), size) for r in parser.feed(data[i : i + size])]
        assert [r.to_json_dict() for r in got + parser.finish()] == want
    assert run_dir_files(str(tmp_path), job_id="5", since=0) == [str(wandb_file)]
    follower = MetricFileFollower(str(wandb_file), job="5")
    followed = follower.poll() + follower.finish()
    assert len(followed) == len(want) and {r["job"] for r in followed} == {"5"}


def test_without_the_wandb_package_one_line_says_what_to_install(tmp_path: Path, capsys, monkeypatch) -> None:
    run_file = tmp_path / "wandb" / "offline-run-20260101_000000-abc" / "run-abc.wandb"
    run_file.parent.mkdir(parents=True)
    run_file.write_bytes(b":W&B\xe1\xbe\x00")
    for module in ("wandb", "wandb.proto", "wandb.proto.wandb_internal_pb2"):
        monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    assert main(["parse", str(run_file)]) == 1
    assert capsys.readouterr().err.strip() == f"gputui: error: {run_file}: {NEEDS}"
    assert main(["report", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == f"gputui: error: {tmp_path}: {NEEDS}"
    (said,) = MetricFileFollower(str(run_file)).finish()
    assert said["event"] == "error" and said["message"] == f"{run_file}: {NEEDS}"
