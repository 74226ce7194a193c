"""``completed`` needs evidence (issue 12): a completion line, the trainer's end record, or the last planned
epoch reached; a log that just stops is ``unknown``, one short of its planned epochs ``truncated``."""

from __future__ import annotations

import io

from gputui.logs import parse_bytes
from gputui.reporter import Reporter


def outcome(text: str | bytes) -> tuple[str, str]:
    data = text.encode() if isinstance(text, str) else text
    events = [r for r in parse_bytes(data) if r.kind == "event" and r.fields.get("event") == "outcome"]
    assert len(events) == 1
    return events[0].fields["outcome"], events[0].fields.get("evidence") or ""


EPOCHS = "".join(f"epoch {e} loss={1 / e:.3f} acc={0.5 + e / 100:.2f}\n" for e in range(1, 4))


def test_a_log_that_just_stops_is_unknown() -> None:
    status, evidence = outcome(EPOCHS)
    assert status == "unknown"
    assert "no line says the run finished" in evidence


def test_a_completion_line_after_the_last_epoch_is_evidence() -> None:
    for line in (
        "Training done",
        "Finished training.",
        "DONE",
        "training completed in 12 min",
        "exit code 0",
    ):
        assert outcome(EPOCHS + line + "\n") == ("completed", line.strip())


def test_a_completion_line_before_the_last_epoch_is_not() -> None:
    assert outcome("Downloading data... done\n" + EPOCHS)[0] == "unknown"
    assert outcome("DONE\n" + EPOCHS)[0] == "unknown"


def test_planned_epochs_reached_or_not() -> None:
    full = "".join(f"Epoch {e}/5, Train Loss: {1 / e:.3f}\n" for e in range(1, 6))
    assert outcome(full)[0] == "completed"
    cut = "".join(f"Epoch {e}/5, Train Loss: {1 / e:.3f}\n" for e in range(1, 4))
    status, evidence = outcome(cut)
    assert status == "truncated" and evidence.startswith("Epoch 3/5")


def test_cut_inside_a_progress_bar_is_truncated() -> None:
    log = EPOCHS + "Epoch 4:  40%|████      | 40/100 [00:10<00:15,  4.00it/s, loss=0.2]\n"
    assert outcome(log)[0] == "truncated"


def _trainer(epochs: int, finish: bool) -> bytes:
    stream = io.StringIO()
    reporter = Reporter(job="7", rank=0, stream=stream)
    reporter.start(epochs=3, world_size=2)
    for epoch in range(1, epochs + 1):
        reporter.epoch_end(epoch, {"loss": 1 / epoch}, epoch_time_s=2.0, images=100)
    if finish:
        reporter.finish(epochs=3)
    return stream.getvalue().encode()


def test_gputui_trainer_end_record_is_the_evidence_and_a_cut_log_is_not_completed() -> None:
    status, evidence = outcome(_trainer(3, finish=True))
    assert status == "completed" and ("train_finished" in evidence or evidence == "training finished")
    # without the end record, the plan its start record states (epochs=3) decides (issue 30)
    assert outcome(_trainer(3, finish=False))[0] == "completed"
    assert outcome(_trainer(2, finish=False))[0] == "truncated"


def test_a_requeued_run_is_decided_by_its_last_run() -> None:
    first = "epoch 1 loss=0.9\nslurmstepd: error: *** JOB 42 ON node1 CANCELLED AT 2026-01-01T00:00:00 ***\n"
    again = "epoch 1 loss=0.8\nepoch 2 loss=0.5\nTraining done\n"
    records = parse_bytes((first + again).encode())
    errors = [r for r in records if r.kind == "event" and r.fields.get("signal") == "cancelled"]
    assert len(errors) == 1  # the first run's cancellation stays an event
    assert outcome(first + again) == ("completed", "Training done")
    assert outcome(first)[0] == "cancelled"


def test_a_gpu_memory_fault_or_a_segfault_is_a_crash_not_a_finished_run() -> None:
    fault = (
        "Memory access fault by GPU node-4 (Agent handle: 0x55) on address 0x7f. Reason: Page not present.\n"
    )
    segv = "slurm_script: line 12: 4242 Segmentation fault      (core dumped) python t.py\n"
    illegal = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    for line in (fault, segv, illegal):
        status, evidence = outcome(EPOCHS + line)
        assert status == "crashed" and evidence == line.strip()


STEPS = "".join(f"step {s:05d}/00050 | loss: {9 / (s + 1):.4f} | dt: 120.5ms\n" for s in range(0, 1))


def test_a_finished_tokenizer_before_the_steps_is_not_the_run_finishing() -> None:
    """nanochat trains its tokenizer first: its ``Finished training`` precedes the model's step 0 of 50."""
    text = "rustbpe - INFO - Finished training: 759 merges completed\n" + STEPS
    assert outcome(text)[0] == "truncated"


def test_a_script_that_says_it_finished_without_a_read_metric_is_completed() -> None:
    """Nothing parsed as training, but the script's own last words say it finished."""
    text = "INFO - Loading data\nINFO - Visualization completed\nINFO - Pretraining completed successfully!\n"
    assert outcome(text) == ("completed", "INFO - Pretraining completed successfully!")


def test_a_time_summary_printed_on_the_way_out_short_of_the_planned_steps_is_truncated() -> None:
    """detectron2's after_train hooks time the run however it stopped: MAX_ITER says it was not done."""
    config = "SOLVER:\n  MAX_ITER: 111000\n"
    iters = "".join(
        f"d2.utils.events INFO:  iter: {i}  total_loss: 0.1668  lr: 0.02\n" for i in range(19, 16020, 1000)
    )
    end = "d2.engine.hooks INFO: Total training time: 3:49:40 (0:47:23 on hooks)\n"
    status, evidence = outcome(config + iters + end)
    assert status == "truncated" and "iter: 16019" in evidence
    assert outcome(config.replace("111000", "16020") + iters + end)[0] == "completed"


def test_a_file_that_stops_inside_an_epoch_is_truncated() -> None:
    """``epoch : 0 [13967/21279]`` as the last line: the epoch's batches visibly not done."""
    lines = "".join(
        f"epoch : 0 [{b}/21279] Train loss: 0.0{b % 9 + 1},Valid loss: 0.07\n" for b in range(13960, 13968)
    )
    assert outcome(lines)[0] == "truncated"
    whole = "".join(
        f"epoch : 0 [{b}/21279] Train loss: 0.0{b % 9 + 1},Valid loss: 0.07\n" for b in range(21270, 21280)
    )
    assert outcome(whole)[0] != "truncated"


def test_planned_work_from_settings_and_counters_written_several_ways() -> None:
    """``max iter: 100000`` (a space), ``total_batch=1082``, ``"epoch": "60/400"`` in a JSON line: each
    states the plan; the file stopping short of it is truncated."""
    iters = "max iter: 100000\n" + "".join(f"Iteration {i}: loss 0.{i % 9 + 1}\n" for i in range(0, 2021, 20))
    assert outcome(iters)[0] == "truncated"
    batches = "eopch=0 total_batch=1082\n" + "".join(
        f"step={s} loss={1 / (s + 1):.4f}\n" for s in range(0, 230, 10)
    )
    assert outcome(batches)[0] == "truncated"
    stats = "".join(
        f'json_stats: {{"_type": "train_epoch", "epoch": "{e}/400", "loss": 0.{e}}}\n' for e in range(1, 61)
    )
    assert outcome(stats)[0] == "truncated"


def test_a_watchdog_timeout_is_the_cause_of_the_traceback_after_it() -> None:
    text = (
        EPOCHS
        + "[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL()\n"
        + "Traceback (most recent call last):\n"
        + '  File "train.py", line 3, in <module>\n'
        + "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: train.py FAILED\n"
    )
    assert outcome(text)[0] == "nccl_error"


def test_the_first_epoch_of_a_series_that_waited_counts_from_zero() -> None:
    """``epoch:0`` headers, the values on their own lines (a series, read from its second line on):
    the 30 planned epochs 0..29 were all run."""
    text = "--epochs 30\n" + "".join(f"epoch:{e}\nlr: {0.02 * 0.9**e:.6f}\n" for e in range(30))
    assert outcome(text)[0] == "completed"


def test_more_ways_to_state_plans_stop_early_and_finish() -> None:
    """flair's annealing quits (``learning rate too small - quitting training!``); ``niter: 600000``
    and ``training epoch: 30`` state a plan; ``Saved final model to:`` ends a script; Lightning's
    ``Received SIGTERM: 15`` is a termination."""
    assert outcome(EPOCHS + "learning rate too small - quitting training!\n")[0] == "early_stopped"
    iters = "  niter: 600000\n" + "".join(
        f"[epoch: 19, iter: {i:,}, lr:(1.7e-04,)] l_pix: 5.1e-03\n" for i in (121300, 121400)
    )
    assert outcome(iters)[0] == "truncated"
    epochs = "Data size: 149690, batch size: 500, training epoch: 30.\n" + "".join(
        f"Epoch {e:04d} in static KGE | Ave Loss: {9 - e / 10:.4f}\n" for e in range(30)
    )
    assert outcome(epochs)[0] == "completed"
    assert outcome(EPOCHS + "Saved final model to: runs/exp/model_final\n")[0] == "completed"
    assert outcome(EPOCHS + "Saved model to runs/exp/ckpt_3\n")[0] == "unknown"
    sigterm = "Epoch 0:  31%|███       | 1225/3999 [1:07:35<2:33:02,  3.31s/it] Received SIGTERM: 15\n"
    assert outcome(sigterm)[0] == "cancelled"
