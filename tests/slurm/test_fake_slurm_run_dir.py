"""Attach follows the metric files of the job's run directory (``lightning_logs/`` in its working
directory): found once they appear, read as they grow, the job's own version preferred over an older
run's. Through the fake ``srun``/``scontrol`` (tests/fakes/slurm); the event file is written with
tensorboardX, as Lightning's TensorBoardLogger writes one."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_slurm import NODES, FakeSlurm, job_line, response

from gputui.slurm import attach

pytest.importorskip("tensorboardX")


@pytest.fixture
def slurm(tmp_path, monkeypatch) -> Iterator[FakeSlurm]:
    monkeypatch.setattr(attach, "RUN_DIR_CHECK_S", 0.2)
    fake = FakeSlurm(tmp_path, monkeypatch)
    line = job_line().replace("WorkDir=/tmp/s5", f"WorkDir={tmp_path}")
    fake.set("scontrol show job", response(stdout=line)).set("srun", {"nodes": NODES})
    yield fake
    fake.close()


def write_epochs(folder: Path, losses: list[float]) -> None:
    """What Lightning's TensorBoardLogger writes for each epoch: the metrics, then the ``epoch`` scalar."""
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(logdir=str(folder))
    for epoch, loss in enumerate(losses):
        step = 10 * (epoch + 1)
        writer.add_scalar("val_loss", loss, step)
        writer.add_scalar("epoch", epoch, step)
    writer.close()


def test_attach_follows_the_jobs_lightning_logs_once_they_appear(slurm, tmp_path: Path) -> None:
    old = tmp_path / "lightning_logs" / "version_0"  # an earlier run in the same folder
    write_epochs(old, [9.0])
    past = time.time() - 3600
    os.utime(old, (past, past))
    run = slurm.attach(follow_logs=True, log_poll_s=0.1)
    run.wait(lambda: run.hosts() == {"node1", "node2"}, "records from both nodes")
    time.sleep(0.5)
    assert not [r for r in run.snapshot() if r.kind == "metric"]  # the older run is not this job's
    write_epochs(tmp_path / "lightning_logs" / "version_3", [2.5, 1.5])
    run.wait(lambda: len([r for r in run.snapshot() if r.kind == "metric"]) == 2, "the job's two epochs")
    assert run.stop() == 0
    values = [(r["epoch"], r["value"], r["scope"], r["job"]) for r in run.snapshot() if r.kind == "metric"]
    assert values == [(0, 2.5, "epoch", "3"), (1, 1.5, "epoch", "3")]
    (said,) = [e for e in run.events("job_state") if e["message"].startswith("following ")]
    assert "lightning_logs/version_3/events.out.tfevents." in said["message"]


def test_attach_also_follows_metric_files_that_appear_later(slurm, tmp_path: Path) -> None:
    """Once the job's lightning_logs/ were found, files that appear afterwards are followed too: an
    ``nccl-inspector-<job>/`` folder whose processes start writing later (it was never looked for again)."""
    write_epochs(tmp_path / "lightning_logs" / "version_3", [2.5])
    run = slurm.attach(follow_logs=True, log_poll_s=0.1)
    run.wait(lambda: any(r.kind == "metric" for r in run.snapshot()), "the job's epoch")
    example = Path(__file__).parent.parent / "logs" / "per_rank" / "nccl_run" / "nccl-inspector-4242"
    shutil.copytree(example, tmp_path / "nccl-inspector-3")  # this job's (id 3), written after the start

    def nccl_ranks() -> set[int]:
        records = run.snapshot()
        return {r["rank"] for r in records if r.kind == "metric" and r.get("source") == "nccl_inspector"}

    run.wait(lambda: nccl_ranks() == {0, 1, 2, 3}, "every rank's NCCL Inspector records")
    assert run.stop() == 0
    said = [e["message"] for e in run.events("job_state") if e["message"].startswith("following ")]
    assert len(said) == 2 and "nccl-inspector-3/" in said[1] and "lightning_logs" not in said[1]
