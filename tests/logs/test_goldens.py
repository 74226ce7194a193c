"""Every peer log against its hand-checked golden file: epochs, end-of-epoch values, outcome."""

from __future__ import annotations

import hashlib

import pytest
from log_testdata import NAMES, golden, log_bytes

from gputui.logs import parse_bytes
from gputui.logs.epochs import EpochTable
from gputui.stream.names import canonical_metric_name

# Golden keys for prose lines are snake_case names chosen by hand; the generic parser derives its name
# from the printed label instead. Only these differ (all from one printed line, see the golden notes).
PROSE_NAMES = {
    # "Accuracy of the network on the 10000 test images: 62%"
    "test_accuracy_pct_int": "accuracy_of_the_network_on_the_10000_test_images_pct",
    # fairseq's "train_train_wall": "113" (its stat train_wall, time in training steps) and
    # "train_wall": "154" (its stat wall, the cumulative clock) would both be "wall" under the alias
    # table's train_ rule: the fairseq parser names the first step_wall
    "train_train_wall": "step_wall",
}


# Metrics a row may hold beyond its golden's list, each read by eye in the log: everything else in a row
# is junk and fails the test (the row's metric set is compared whole).
ALSO_IN_ROW = {
    # "Batch_Loss=0.069, Batch_PSNR=25" in the postfix of each epoch's final bar frame (the last batch)
    "custom_tqdm_psnr_summary": {"batch_loss", "batch_psnr"},
    # "Percentage of used data: 0.00%", printed in each epoch's block
    "custom_fer_epochs_oom": {"percentage_of_used_data_pct"},
    # "Test accuracy =  0.555" after fit(): a test value joined to the last epoch as context
    "keras1_cifar10_samples_bs": {"test_accuracy"},
    # "CUDA event elapsed time: 7.00759033203125sec" after the last epoch: the run's time, as context
    "cesga_fsdp_mnist_2rank": {"cuda_event_elapsed_time"},
    # "Best test accuracy: 85.38%" after the last epoch: a run summary, joined to the last epoch as context
    "python_logging_cifar_gbk_completed": {"best_test_accuracy_pct"},
    # the epoch bar's GPU_mem ("2.61G") and Instances columns, read since issue 30
    "ultralytics_two_finetunes_completed": {"gpu_mem_gb", "instances"},
}


def _parse(name: str):
    records = parse_bytes(log_bytes(name))
    table = EpochTable()
    table.add_all(records)
    return records, table.rows()


def test_every_golden_is_checked() -> None:
    assert len(NAMES) == 29


@pytest.mark.parametrize("name", NAMES)
def test_data_is_byte_exact(name: str) -> None:
    assert hashlib.sha256(log_bytes(name)).hexdigest() == golden(name)["file"]["sha256"]


@pytest.mark.parametrize("name", NAMES)
def test_epochs_and_values(name: str) -> None:
    expected = golden(name)["expected"]
    _, rows = _parse(name)
    wanted = expected["epochs"]
    got = {(r.run, r.epoch): r for r in rows}
    run_of = {}
    if wanted and "run" in wanted[0]:
        run_of = {(e["run"], e["epoch"]): e for e in wanted}
    assert len(rows) == len(wanted), [(r.run, r.epoch) for r in rows]
    for entry in wanted:
        key = (entry.get("run", 0), entry["epoch"])
        assert key in got, f"epoch {key} missing"
        row = got[key]
        names = set()
        for printed, value in entry["metrics"].items():
            metric = PROSE_NAMES.get(printed, canonical_metric_name(printed))
            names.add(metric)
            assert row.values.get(metric) == pytest.approx(value, rel=1e-12), (key, printed, row.values)
        junk = set(row.values) - names - ALSO_IN_ROW.get(name, set())
        assert not junk, f"epoch {key}: metrics not in the golden: {sorted(junk)}"
        if "epoch_time_s" in entry:
            assert row.epoch_time_s == pytest.approx(entry["epoch_time_s"]), key
            assert row.epoch_time_source == "printed"
    assert not run_of or len(run_of) == len(wanted)


@pytest.mark.parametrize("name", NAMES)
def test_outcome(name: str) -> None:
    expected = golden(name)["expected"]["outcome"]
    records, _ = _parse(name)
    outcomes = [r for r in records if r.kind == "event" and r.get("event") == "outcome"]
    assert len(outcomes) == 1
    outcome = outcomes[0]
    assert outcome["outcome"] == expected["status"], outcome.fields
    assert outcome.get("evidence")
    for extra in expected.get("secondary", []):
        assert extra in outcome.get("secondary", [])


def test_no_epochs_invented_for_in_progress_epochs() -> None:
    _, rows = _parse("custom_fer_epochs_oom")  # OOM during epoch 144
    assert rows[-1].epoch == 143
    _, rows = _parse("imagenet_style_adagrad_cancelled")  # cancelled right after "Epoch #68"
    assert rows[-1].epoch == 67


def test_lightning_final_frame_not_last_labelled_frame() -> None:
    _, rows = _parse("cesga_lightning1_tqdm_4rank")
    assert [r.epoch for r in rows] == list(range(10))
    assert "v_num" not in rows[0].values


def test_duplicate_rank_lines_give_one_epoch_with_two_streams() -> None:
    _, rows = _parse("cesga_accelerate_glue_2rank_nccl")
    assert len(rows) == 30
    assert all(r.streams == 2 and not r.conflicts for r in rows)


def test_keras_legacy_sample_counter_gives_images_per_second() -> None:
    _, rows = _parse("keras1_cifar10_samples_bs")
    assert rows[0].samples == 50000
    assert rows[0].images_per_s == pytest.approx(50000 / 27, rel=1e-3)


def _metrics(records, **match):
    return [r for r in records if r.kind == "metric" and all(r.get(k) == v for k, v in match.items())]


def test_hf_trainer_step_dicts() -> None:
    records, _ = _parse("hf_deepspeed_oom_nccl_watchdog")
    losses = _metrics(records, name="loss", source="hf_trainer")
    assert len(losses) == 775
    assert losses[0]["value"] == 1.1217 and losses[-1]["value"] == 0.1915
    grads = _metrics(records, name="grad_norm")
    assert grads[0]["value"] == 13.39783243670413
    assert losses[-1]["epoch"] == 0.07


def test_hf_eval_dict_spliced_into_a_bar_frame() -> None:
    records, rows = _parse("lumi_hf_trainer_eval_8rank_cancelled")
    assert rows == []
    val = _metrics(records, name="val_loss")
    assert len(val) == 1 and val[0]["value"] == 3.214578151702881 and val[0]["epoch"] == 0.05
    # the step is the training bar's position when the dict is read (394 of 1000, the last full frame
    # before the spliced one; the Trainer evaluated at step 395 and stdout was block-buffered)
    assert val[0]["step"] == 394
    assert not _metrics(records, name="label")  # pprinted dataset samples are not metrics


def test_hf_final_summary_dicts() -> None:
    records, rows = _parse("hf_trainer_final_dicts_peft")
    assert rows == []
    losses = _metrics(records, name="loss", scope="summary")
    assert [r["value"] for r in losses] == [
        1.527357816696167,
        1.5054534673690796,
        1.5291342735290527,
        1.5291342735290527,
    ]


def test_step_lines_of_deepspeed_scripts() -> None:
    records, rows = _parse("deepspeed_1gpu_slurm_cancelled")
    assert rows == []
    losses = _metrics(records, name="loss", scope="step")
    assert [r["step"] for r in losses] == list(range(0, 90, 10))
    assert losses[0]["value"] == 5.0676
    assert _metrics(records, name="tokens_per_s")[0]["value"] == 24.63
    assert _metrics(records, name="gpu_mem_gb")[0]["value"] == 12.81
    records, _ = _parse("deepspeed_amd_multirank_sigint")
    losses = _metrics(records, name="loss", scope="step")
    assert len(losses) == 26 and len({r["step"] for r in losses}) == 13


def test_pytorch_mnist_step_lines_from_four_ranks() -> None:
    records, _ = _parse("cesga_ddp_mnist_4rank")
    steps = _metrics(records, name="loss", scope="step")
    assert len(steps) == 192
    assert steps[0]["value"] == 2.306303 and steps[-1]["value"] == 0.074819


def test_time_limit_after_a_bar_on_the_same_line() -> None:
    records, rows = _parse("tqdm_only_time_limit")
    assert rows == [] and not [r for r in records if r.kind == "metric"]
