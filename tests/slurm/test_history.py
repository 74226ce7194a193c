"""``gputui history``: one sacct call, GPUs from AllocTRES, GPU-hours, outcome, and the GPU use from sacct's
``gres/gpuutil``, else gputui's own record files, else "unknown" (issue 23.4). The sacct rows are 26.05.5's
shape (captured on the accounting test cluster: ``AllocTRES`` ``billing=1,cpu=1,gres/gpu=2,node=1``,
steps with ``TRESUsageInAve`` ``energy=0``); the gpuutil value is written by hand (no NVML there)."""

from __future__ import annotations

import json
import os

import pytest
from attach_helpers import gputui
from fake_slurm import DATA, FakeSlurm, response
from slurm_helpers import run, sbatch, wait_for

from gputui.slurm.fields import FIELD_END
from gputui.slurm.history import FIELDS, parse_history, totals
from gputui.stream.io import encode_record
from gputui.stream.records import Record


def rows(*lines: tuple[str, ...]) -> str:
    return "".join("".join(f + FIELD_END for f in line) + "\n" for line in lines)


END = "2026-11-26T09:00:00"
SACCT = rows(
    ("54", "wrap", "COMPLETED", "0:0", "3600", "billing=1,cpu=1,gres/gpu=2,node=1", "", END, "/w"),
    ("54.batch", "batch", "COMPLETED", "0:0", "3600", "cpu=1,gres/gpu=2,mem=0,node=1", "energy=0", END, ""),
    ("55", "train", "FAILED", "1:0", "1800", "billing=4,cpu=4,gres/gpu:a100=4,node=1", "", END, "/w"),
    ("55.0", "python", "FAILED", "1:0", "1200", "cpu=4,gres/gpu=4", "cpu=01:00,gres/gpuutil=80", END, ""),
    ("55.1", "python", "FAILED", "1:0", "600", "cpu=4,gres/gpu=4", "cpu=01:00,gres/gpuutil=20", END, ""),
    ("56", "cpu only", "COMPLETED", "0:0", "60", "billing=1,cpu=1,node=1", "", END, "/w"),
)


def test_gpu_hours_outcome_and_sacct_gpuutil(tmp_path) -> None:
    jobs = {j.job_id: j for j in parse_history(SACCT.replace("/w", str(tmp_path)))}
    assert set(jobs) == {"54", "55"}  # the site records gres/gpu: job 56 held none
    assert (jobs["54"].gpus, jobs["54"].gpu_hours, jobs["54"].outcome) == (2, 2.0, "COMPLETED")
    assert (jobs["54"].source, jobs["54"].mean_util_pct, jobs["54"].idle_gpu_hours) == ("unknown", None, None)
    assert (jobs["55"].gpus, jobs["55"].gpu_hours, jobs["55"].outcome) == (4, 2.0, "FAILED (exit 1:0)")
    assert jobs["55"].source == "sacct" and jobs["55"].mean_util_pct == pytest.approx(60.0)  # 80×2/3+20×1/3
    assert totals(list(jobs.values())).gpu_hours == 4.0


def test_use_from_gputui_records_beside_the_job(tmp_path) -> None:
    for node, utils in (("node1", [0, 0, 90, 90]), ("node2", [100, 100, 2, 100])):
        lines = [encode_record(Record("gpu", 1.0 + i, {"host": node, "gpu_id": "0", "util_gpu_pct": u}))
                 for i, u in enumerate(utils)]  # fmt: skip
        (tmp_path / f"gputui-54-{node}.jsonl").write_bytes(b"".join(lines))
    jobs = {j.job_id: j for j in parse_history(SACCT.replace("/w", str(tmp_path)))}
    assert jobs["54"].source == "gputui records"
    assert jobs["54"].mean_util_pct == pytest.approx(60.25)
    assert jobs["54"].idle_gpu_hours == pytest.approx(2.0 * 3 / 8)  # 3 of 8 samples under 5 %
    assert jobs["55"].source == "sacct"  # sacct first


def test_no_gres_gpu_recorded_means_unknown_gpus() -> None:
    line = ("7", "x", "COMPLETED", "0:0", "60", "billing=1,cpu=1,node=1", "", END, "")
    (job,) = parse_history(rows(line))
    assert job.gpus is None and job.gpu_hours is None and totals([job]).unknown_gpus == 1


@pytest.fixture
def slurm(tmp_path, monkeypatch):
    fake = FakeSlurm(tmp_path, monkeypatch)
    yield fake
    fake.close()


def test_cli_one_sacct_call_json_csv_and_errors(slurm, tmp_path) -> None:
    old_style = SACCT.replace(FIELD_END + "\n", "\n").replace(FIELD_END, "\x1f")  # -P lines: gputui's END
    slurm.set("sacct", response(old_style.replace("/w", str(tmp_path))))  # is drawn per process
    res = gputui(["history", "--since", "30d", "--json"], os.environ, tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [j["job_id"] for j in doc["jobs"]] == ["54", "55"] and doc["totals"]["gpu_hours"] == 4.0
    (argv,) = slurm.calls("sacct")
    assert "-X" not in argv and argv[argv.index("-S") + 1] == "now-30days" and argv[-1] == ",".join(FIELDS)
    csv = gputui(["history", "--csv"], os.environ, tmp_path).stdout.splitlines()
    assert csv[0].startswith("job_id,name,outcome,gpus") and csv[1].startswith(
        "54,wrap,COMPLETED,2,3600,2.0,,,"
    )
    text = gputui(["history"], os.environ, tmp_path).stdout
    assert "unknown" in text and text.splitlines()[-1].startswith("2 jobs, 4.00 GPU-hours")
    slurm.set("sacct", response(stderr=(DATA / "sacct-22.05-disabled.txt").read_text(), exit=1))
    res = gputui(["history"], os.environ, tmp_path)
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "accounting" in res.stderr


@pytest.mark.slurm
def test_history_on_the_cluster(slurm_cluster, tmp_path) -> None:
    """Real numbers where the cluster keeps accounting (26.05 with slurmdbd); 22.05 has none: one line."""
    env = slurm_cluster.env
    if run(["sacct", "-n", "-X", "-j", "1"], env, check=False).returncode != 0:
        res = gputui(["history"], env, tmp_path)
        assert res.returncode == 1 and "accounting" in res.stderr
        return
    job = sbatch("sleep 3\n", env, tmp_path, ["--gres=gpu:2", "-N1", "-o", str(tmp_path / "o")])

    def listed():
        res = gputui(["history", "--since", "1h", "--json"], env, tmp_path)
        return next((j for j in json.loads(res.stdout)["jobs"] if j["job_id"] == job), None)

    mine = wait_for(listed, 60, interval=1, what=f"job {job} in gputui history")
    assert mine["gpus"] == 2 and mine["elapsed_s"] >= 3 and mine["outcome"] == "COMPLETED"
    assert mine["gpu_hours"] == pytest.approx(2 * mine["elapsed_s"] / 3600)
    assert mine["source"] in ("unknown", "sacct")
