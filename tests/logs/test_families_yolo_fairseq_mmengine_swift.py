"""The format families added for the second set of goldens, on their documented shapes (not only the goldens'
files): Ultralytics YOLO, fairseq JSON, MMEngine, ms-swift dicts, python logging prefixes, and the outcome
rules that came with them (framework end messages, iteration N/M, OOM warnings, failed starts)."""

from __future__ import annotations

import pytest
from log_testdata import metrics_where, parse_text

from gputui.logs.outcome import FINISH, FINISH_KEYS, gate

# --- Ultralytics -------------------------------------------------------------------------------------

HEADER = "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"
VAL_HEADER = (
    "   Class  Images  Instances  Box(P  R  mAP50  mAP50-95): 100%|██████████| 4/4 [00:01<00:00,  2.9it/s]\n"
)
YOLO8_TQDM = (
    "engine/trainer: task=detect, mode=train, amp=True, cache=False, rect=False, batch=16, lr0=0.01\n"
    "Starting training for 2 epochs...\n"
    "\n"
    + HEADER
    + "   1/2  2.61G  1.196  1.469  1.183  216  640:  50%|█████     | 4/8 [00:01<00:01,  3.07it/s]\r"
    "   1/2  2.61G  1.190  1.460  1.180  210  640: 100%|██████████| 8/8 [00:02<00:00,  3.07it/s]\n"
    + VAL_HEADER
    + "                   all        128        929      0.577      0.557      0.588      0.377\n"
    "\n"
    + HEADER
    + "   2/2  2.61G  1.100  1.300  1.100  200  640: 100%|██████████| 8/8 [00:03<00:00,  3.01it/s]\n"
    + VAL_HEADER
    + "                   all        128        929      0.600      0.570      0.610      0.400\n"
    "\n"
    "2 epochs completed in 0.003 hours.\n"
    "Validating runs/detect/train/weights/best.pt...\n"
    + VAL_HEADER
    + "                   all        128        929      0.601      0.571      0.611      0.401\n"
    "                person        128        254      0.700      0.600      0.650      0.420\n"
    "Results saved to runs/detect/train\n"
)


@pytest.mark.parametrize("thin", [False, True])
def test_yolo_tqdm_epoch_table(thin: bool) -> None:
    records, rows, outcome = parse_text(YOLO8_TQDM, thin=thin)
    assert [r.epoch for r in rows] == [1, 2]
    assert rows[0].values == {
        "box_loss": 1.190,
        "cls_loss": 1.460,
        "dfl_loss": 1.180,
        "gpu_mem_gb": 2.61,
        "instances": 210,
        "box_p": 0.577,
        "box_r": 0.557,
        "box_map50": 0.588,
        "box_map50-95": 0.377,
    }
    assert rows[0].epoch_time_s == 2.0 and rows[0].steps == 8
    assert rows[1].values["box_map50-95"] == 0.400  # not the final validation of best.pt (0.401) …
    final = metrics_where(records, name="box_map50-95", scope="summary")
    assert [r["value"] for r in final] == [0.401]  # … which is the run's summary
    assert outcome["outcome"] == "completed" and "epochs completed" in outcome["evidence"]
    assert not metrics_where(records, name="batch") and not metrics_where(records, name="lr0")  # settings


def test_yolo_segmentation_columns_and_v5_header() -> None:
    text = (
        "     Epoch   gpu_mem       box       seg       obj       cls    labels  img_size\n"
        "  0/99  3.41G  0.1065  0.0500  0.0689  0.0294  212  640: 100%|████| 8/8 [00:05<00:00,  1.5it/s]\n"
        "   Class  Images  Instances  Box(P  R  mAP50  mAP50-95)  Mask(P  R  mAP50  mAP50-95): 100%|██| 4/4 "
        "[00:01<00:00,  2.9it/s]\n"
        "     all  128  929  0.577  0.557  0.588  0.377  0.5  0.4  0.45  0.3\n"
    )
    _, rows, _ = parse_text(text)
    assert len(rows) == 1 and rows[0].epoch == 0
    values = rows[0].values
    assert values["box"] == 0.1065 and values["seg"] == 0.05 and values["labels"] == 212
    assert values["gpu_mem_gb"] == 3.41 and "img_size" not in values
    assert values["box_map50-95"] == 0.377 and values["mask_map50-95"] == 0.3 and values["mask_p"] == 0.5


def test_yolo_84_bar_stopped_with_an_oom_warning_is_truncated() -> None:
    text = (
        "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"
        "   1/100   15G   3.566   8.963   0.02247   117   704: 9% ━─────────── 604/6848 2.5it/s 3:38<40:49\r"
        "   1/100   15G   3.566   8.982   0.02247    57   640: 9% ━─────────── 609/6848 2.7it/s 3:40<38:10"
        "WARNING ⚠️ CUDA OutOfMemoryError in TaskAlignedAssigner, using CPU\n"
    )
    records, rows, outcome = parse_text(text)
    assert rows == []
    assert outcome["outcome"] == "truncated"
    assert [r for r in records if r.kind == "event" and r.get("event") == "warning"]
    assert metrics_where(records, name="box_loss", scope="step", step=604)


def test_a_fatal_oom_is_still_oom() -> None:
    text = "Epoch 1, loss: 0.5\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert parse_text(text)[2]["outcome"] == "oom"
    text = "Epoch 1, loss: 0.5\n| WARNING | fairseq.trainer | OOM: Ran out of memory with exception: "
    text += "CUDA out of memory\n"
    assert parse_text(text)[2]["outcome"] == "unknown"  # fairseq recovers from it (a warning)


# --- fairseq ------------------------------------------------------------------------------------------

FAIRSEQ = (
    "2021-03-01 10:00:00 | INFO | fairseq_cli.train | begin training epoch 1\n"
    '2021-03-01 10:00:10 | INFO | train_inner | {"epoch": 1, "update": 0.5, "loss": "4.1", '
    '"num_updates": "50", "wall": "10"}\n'
    '2021-03-01 10:00:20 | INFO | valid | {"epoch": 1, "valid_loss": "4.0", "valid_num_updates": "50"}\n'
    "SENSE:  0.38\n"
    '2021-03-01 10:00:30 | INFO | valid | {"epoch": 1, "valid_loss": "3.9", "valid_num_updates": "100"}\n'
    '2021-03-01 10:00:31 | INFO | test | {"epoch": 1, "test_loss": "3.95", "test_num_updates": "100"}\n'
    "2021-03-01 10:00:32 | INFO | fairseq.checkpoint_utils | Saved checkpoint (epoch 1 @ 100 updates, "
    "score 3.9)\n"
    "2021-03-01 10:00:32 | INFO | fairseq_cli.train | end of epoch 1 (average epoch stats below)\n"
    '2021-03-01 10:00:32 | INFO | train | {"epoch": 1, "train_loss": "4.05", "train_num_updates": "100", '
    '"train_train_wall": "25", "train_wall": "32"}\n'
    "2021-03-01 10:00:33 | INFO | fairseq_cli.train | done training in 33.0 seconds\n"
)


def test_fairseq_json_epoch_rows() -> None:
    records, rows, outcome = parse_text(FAIRSEQ)
    assert len(rows) == 1
    assert rows[0].values == {
        "loss": 4.05,
        "num_updates": 100,
        "step_wall": 25,
        "wall": 32,
        "val_loss": 3.9,  # the validation at the epoch's end, not the one at 50 updates
        "val_num_updates": 100,
        "test_loss": 3.95,
        "test_num_updates": 100,
    }
    inner = metrics_where(records, name="loss", scope="step", source="fairseq")
    assert [(r["step"], r["epoch"], r["value"]) for r in inner] == [(50, 1, 4.1)]
    assert not metrics_where(records, name="sense") and not metrics_where(records, name="score")
    assert outcome["outcome"] == "completed"


# --- MMEngine ----------------------------------------------------------------------------------------


def test_mmengine_validation_gives_the_epoch_row() -> None:
    text = (
        "2025/10/09 09:49:34 - mmengine - INFO - Epoch(train)  [1][ 50/100]  lr: 1.0e-02  eta: 0:10:00  "
        "time: 0.8981  data_time: 0.2132  memory: 9480  loss: 0.9783  acc: 95.8\n"
        "2025/10/09 09:50:34 - mmengine - INFO - Epoch(train)  [1][100/100]  lr: 1.0e-02  eta: 0:09:00  "
        "time: 0.8000  data_time: 0.2000  memory: 9480  loss: 0.8000  acc: 96.0\n"
        "2025/10/09 09:50:40 - mmengine - INFO - Saving checkpoint at 1 epochs\n"
        "2025/10/09 09:50:50 - mmengine - INFO - Epoch(val)  [1][ 50/500]    eta: 0:00:20  time: 0.04  "
        "data_time: 0.002  memory: 1500\n"
        "2025/10/09 09:51:10 - mmengine - INFO - Epoch(val) [1][500/500]    coco/bbox_mAP: 0.3740  "
        "coco/bbox_mAP_50: 0.5810  data_time: 0.0020  time: 0.0500\n"
    )
    records, rows, outcome = parse_text(text)
    assert len(rows) == 1 and rows[0].epoch == 1
    assert rows[0].values == {"val_coco/bbox_map": 0.374, "val_coco/bbox_map_50": 0.581}
    step = metrics_where(records, name="loss", scope="step")
    assert [(r["step"], r["steps_total"]) for r in step] == [(50, 100), (100, 100)]
    assert metrics_where(records, name="step_time_s")[0]["value"] == 0.8981
    assert outcome["outcome"] == "unknown"  # ends after a finished validation: nothing says more


def test_mmengine_iteration_loop_stopped_is_truncated() -> None:
    text = "2025/10/09 09:49:34 - mmengine - INFO - Iter(train) [  50/90000]  lr: 1.0e-02  loss: 0.97\n"
    records, rows, outcome = parse_text(text)
    assert rows == [] and metrics_where(records, name="loss", step=50)
    assert outcome["outcome"] == "truncated"


# --- Megatron and step counters ----------------------------------------------------------------------

MEGATRON = (
    " [2026-05-15 19:06:31.362340] iteration        9/      10 | consumed samples:           80 | "
    "lm loss: 1.048134E+01 | grad norm: 12.451 |\n"
    " [2026-05-15 19:06:41.362340] iteration       10/      10 | consumed samples:           80 | "
    "lm loss: 1.048134E+01 | grad norm: 12.451 |\n"
)


def test_megatron_end_messages() -> None:
    assert parse_text(MEGATRON)[2]["outcome"] == "completed"  # the last planned iteration (issue 30)
    done = MEGATRON + "[after training is done] datetime: 2026-05-15 19:07:00\n" + "saving checkpoint\n" * 80
    assert parse_text(done)[2]["outcome"] == "completed"
    exhausted = MEGATRON.replace("10/      10", "10/     200")
    assert parse_text(exhausted)[2]["outcome"] == "truncated"  # iteration 10 of 200, then nothing
    exhausted += "[exiting program after consuming all available data at iteration 10] datetime: …\n"
    assert parse_text(exhausted)[2]["outcome"] == "completed"


def test_iteration_counter_after_an_epoch_counter_does_not_decide() -> None:
    # the line's epoch counter says the planned epoch; an inner iteration counter is not the plan
    outcome = parse_text("Epoch 10/10 iter 400/448 loss: 0.5\n")[2]
    assert outcome["outcome"] == "completed"


# --- outcome: several runs in one file -----------------------------------------------------------------


def test_a_traceback_before_training_then_training_was_a_failed_start() -> None:
    failed_start = 'Traceback (most recent call last):\n  File "train.py", line 3\nValueError: no stats\n'
    steps = "".join(f"Step {i}: loss={1 / (i + 1):.4f}\n" for i in range(0, 500, 100))
    assert parse_text(failed_start + steps)[2]["outcome"] == "unknown"
    cancelled = "slurmstepd: error: *** JOB 1 ON n1 CANCELLED AT 2026-01-06T04:52:18 ***\n"
    assert parse_text(failed_start + steps + cancelled)[2]["outcome"] == "cancelled"
    assert parse_text(steps + failed_start)[2]["outcome"] == "crashed_traceback"
    # a failed start, then a run that crashes: the crash is the outcome
    crash = 'Traceback (most recent call last):\n  File "train.py", line 9\nRuntimeError: boom\n'
    outcome = parse_text(failed_start + steps + crash)[2]
    assert outcome["outcome"] == "crashed_traceback" and "boom" in outcome["evidence"]


# --- ms-swift, python logging, generic names --------------------------------------------------------------


def test_swift_dicts_with_text_values() -> None:
    text = (
        "{'loss': '2.029', 'grad_norm': '66.48', 'learning_rate': '1.33e-06', 'epoch': '0.003401', "
        "'global_step/max_steps': '1/294', 'elapsed_time': '1m 60s', 'memory(GiB)': '26.8'}\n"
        "{'sentence': 'a text sample', 'label': 1}\n"
        "{'eval_loss': '1.9', 'eval_runtime': '10.5', 'epoch': '0.5', 'global_step/max_steps': '147/294'}\n"
        "{'train_runtime': '2.534e+04', 'train_loss': '1.218', 'epoch': '0.9998', "
        "'global_step/max_steps': '294/294', 'remaining_time': '0s'}\n"
        "[INFO:swift] last_model_checkpoint: None\n"
    )
    records, _, outcome = parse_text(text)
    loss = metrics_where(records, name="loss", scope="step")
    assert [(r["step"], r["value"]) for r in loss] == [(1, 2.029)]
    assert not metrics_where(records, name="label")
    assert [(r["step"], r["value"]) for r in metrics_where(records, name="val_loss")] == [(147, 1.9)]
    assert outcome["outcome"] == "completed"
    end = "{'loss': '2.0', 'epoch': '0.5'}\n[INFO:swift] End time of running main: 2026-04-25 13:14:46\n"
    assert parse_text(end + "[rank1]: warning\n" * 100)[2]["outcome"] == "completed"


def test_python_logging_prefixes_and_labels() -> None:
    text = (
        "2025-06-04 17:36:55,374 - train - INFO - Epoch 1/2, Train Loss: 1.6279, Test Acc: 59.86%\n"
        "2025-06-04 17:40:55,374 - INFO - Epoch 2/2, Train Loss: 1.2434, Test Acc: 69.33%\n"
    )
    _, rows, outcome = parse_text(text)
    assert [r.values for r in rows] == [
        {"loss": 1.6279, "test_acc_pct": 59.86},
        {"loss": 1.2434, "test_acc_pct": 69.33},
    ]
    assert outcome["outcome"] == "completed"
    records, rows, _ = parse_text("evaluate: epoch30.pt @ imgsz=512\nsaved epoch_5.pth, size=12\n")
    assert rows == [] and not metrics_where(records, scope="epoch")
    records, _, _ = parse_text("Epoch 3: fitness=0.2, metrics/precision(B)=0.58, metrics/mAP50-95(B)=0.21\n")
    assert {r["name"] for r in records if r.kind == "metric"} == {
        "fitness",
        "metrics/precision_b",
        "metrics/map50-95_b",
    }


def test_gate_finds_every_end_message() -> None:
    for line in (
        "40 epochs completed in 0.012 hours.",
        "[after training is done] datetime: 2026-05-15 19:07:00",
        "[exiting program after consuming all available data at iteration 19] datetime: …",
        "[exiting program at iteration 500] datetime: …",
        "[INFO:swift] End time of running main: 2026-04-25 13:14:46.011901",
        "2021-03-01 10:00:33 | INFO | fairseq_cli.train | done training in 33.0 seconds",
    ):
        m = FINISH.search(line)
        assert m is not None, line
        hits = gate(f"x\n{line}\ny\n".encode())
        assert any(line.encode().find(key) >= 0 for key in FINISH_KEYS) and hits, line


def test_every_family_is_a_format_choice_of_the_cli() -> None:
    """``gputui parse --format NAME`` accepts every family the parser has (the CLI lists them by hand)."""
    from gputui.cli import build_parser
    from gputui.logs.parser import FAMILIES

    parse = build_parser()._subparsers._group_actions[0].choices["parse"]
    choices = next(a.choices for a in parse._actions if a.dest == "format")
    assert set(FAMILIES) <= set(choices)
