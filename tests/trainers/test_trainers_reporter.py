"""The public reporter and its import-guarded framework callbacks."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import types

from trainer_helpers import records_from

from gputui.reporter import Reporter
from gputui.stream.io import read_file


def test_metric_line_is_a_valid_record_on_its_own_line() -> None:
    out = io.StringIO()
    out.write("progress bar without newline")
    rep = Reporter(job="42", rank=3, stream=out)
    rep.metric("acc", 0.5, step=7, epoch=2)
    text = out.getvalue()
    assert text.startswith("progress bar without newline\n@gputui {")
    assert text.endswith("}\n")
    [record] = records_from(text)
    assert (record["name"], record["value"], record["step"], record["epoch"]) == ("accuracy", 0.5, 7, 2)
    assert (record["rank"], record["job"], record["epoch_base"]) == (3, "42", 1)


def test_epoch_end_derives_throughput_and_prints_a_human_line() -> None:
    out = io.StringIO()
    rep = Reporter(job="1", rank=0, stream=out)
    rep.epoch_end(1, {"loss": 0.25, "val_loss": None}, epoch_time_s=2.0, images=1000, steps=10, world_size=4)
    records = {r["name"]: r["value"] for r in records_from(out.getvalue())}
    assert records == {
        "loss": 0.25,
        "epoch_time_s": 2.0,
        "images_per_s": 500.0,
        "global_images_per_s": 2000.0,
        "step_time_s": 0.2,
    }
    human = out.getvalue().rstrip("\n").splitlines()[-1]
    assert human.startswith("epoch 1 [rank 0]: loss 0.25")
    assert "images_per_s 500" in human


def test_only_rank_zero_reports_the_global_rate_and_human_false_is_quiet() -> None:
    out = io.StringIO()
    Reporter(rank=1, stream=out, human=False).epoch_end(3, {}, epoch_time_s=1.0, images=10, world_size=2)
    names = [r["name"] for r in records_from(out.getvalue())]
    assert names == ["epoch_time_s", "images_per_s"]
    assert not [line for line in out.getvalue().splitlines() if line.startswith("epoch")]


def test_file_copy_with_rank_placeholder_and_no_stdout(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    monkeypatch.setenv("SLURM_PROCID", "5")
    monkeypatch.delenv("RANK", raising=False)
    out = io.StringIO()
    with Reporter(file=tmp_path / "m-{rank}.jsonl", stdout=False, stream=out) as rep:
        rep.metric("loss", float("nan"), step=1)
        rep.metrics({"loss": 1.0, "images_per_s": 3.0}, step=2)
    assert out.getvalue() == ""
    records = list(read_file(str(tmp_path / "m-5.jsonl")))
    assert [r["name"] for r in records] == ["loss", "loss", "images_per_s"]
    assert records[0]["rank"] == 5 and records[0]["job"] == "77"
    assert records[0]["value"] != records[0]["value"]  # NaN survives as null + nonfinite


def test_importing_the_callbacks_module_imports_no_framework() -> None:
    code = (
        "import sys, json, gputui.reporter_callbacks as c;"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('keras', 'tensorflow', 'lightning', 'pytorch_lightning', 'torch'))))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(res.stdout) == []


def test_lightning_callback_reports_callback_metrics(monkeypatch) -> None:
    class Callback:  # stand-in for lightning.pytorch.Callback
        pass

    fake = types.ModuleType("lightning.pytorch")
    fake.Callback = Callback  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "lightning", types.ModuleType("lightning"))
    monkeypatch.setitem(sys.modules, "lightning.pytorch", fake)
    import gputui.reporter_callbacks as callbacks

    monkeypatch.setattr(callbacks, "_BUILT", {})
    out = io.StringIO()
    cb = callbacks.LightningReporter(Reporter(rank=1, stream=out), batch_size=8)
    trainer = types.SimpleNamespace(
        global_rank=1, current_epoch=0, global_step=4, world_size=2, callback_metrics={"train_loss": 0.5}
    )
    trainer.log_every_n_steps, trainer.num_training_batches = (
        2,
        4,
    )  # real Lightning: tests/trainers/test_trainers_lightning.py
    cb.on_train_epoch_start(trainer, None)
    for i in range(4):
        cb.on_train_batch_end(trainer, None, None, None, i)
    cb.on_train_epoch_end(trainer, None)
    records = {r["name"]: r for r in records_from(out.getvalue())}
    assert records["loss"]["value"] == 0.5 and records["loss"]["epoch"] == 1
    assert records["loss"]["step"] == 4 and records["loss"]["rank"] == 1
    assert "images_per_s" in records and "global_images_per_s" not in records
