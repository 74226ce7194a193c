"""Families of the third set of goldens, on their documented shapes (not only the goldens' files): timm's
``train.py``, Keras ``verbose=2`` on TF 2.x, the Flax examples' epoch lines (absl prefix), and HF
Accelerate's ``epoch N: {…}`` prints; catch-up (thin) mode gives the same rows and outcome."""

from __future__ import annotations

import pytest
from log_testdata import metrics_where, parse_text

from gputui.logs.outcome import FINISH, FINISH_KEYS


def _rows(rows) -> list[tuple]:
    return [(r.run, r.epoch, sorted(r.values.items()), r.epoch_time_s) for r in rows]


# --- timm ----------------------------------------------------------------------------------------------

TIMM_2021 = (
    "Scheduled epochs: 2\n"
    "Train: 0 [   0/1251 (  0%)]  Loss:  6.945775 (6.9458)  Time: 13.661s,   74.96/s  (13.661s,   74.96/s)"
    "  LR: 1.000e-04  Data: 6.457 (6.457)\n"
    "Train: 0 [1250/1251 (100%)]  Loss:  6.760907 (6.8209)  Time: 0.136s, 7514.95/s  (0.618s, 1657.09/s)"
    "  LR: 1.000e-04  Data: 0.000 (0.442)\n"
    "Test: [   0/48]  Time: 18.616 (18.616)  Loss:  6.2293 (6.2293)  Acc@1:  0.4883 ( 0.4883)"
    "  Acc@5: 12.1094 (12.1094)\n"
    "Test: [  48/48]  Time: 0.556 (1.946)  Loss:  5.9052 (6.4740)  Acc@1: 10.9670 ( 1.3580)"
    "  Acc@5: 24.4104 ( 5.2700)\n"
    "Current checkpoints:\n ('./output/train/20210427-resnet50/checkpoint-0.pth.tar', 1.3579999966430665)\n\n"
    "Train: 1 [   0/1251 (  0%)]  Loss:  6.714797 (6.7148)  Time: 3.803s,  269.24/s  (3.803s,  269.24/s)"
    "  LR: 2.800e-04  Data: 3.159 (3.159)\n"
    "Train: 1 [1250/1251 (100%)]  Loss:  6.473104 (6.6372)  Time: 0.136s, 7556.11/s  (0.410s, 2495.61/s)"
    "  LR: 2.800e-04  Data: 0.000 (0.253)\n"
    "Test: [  48/48]  Time: 0.033 (0.214)  Loss:  5.1628 (5.9491)  Acc@1: 21.6981 ( 4.1320)"
    "  Acc@5: 32.9009 (12.4860)\n"
    "*** Best metric: 4.132000020141602 (epoch 1)\n"
)

# timm 1.0: 3-significant-digit losses, seconds on the test times; the epoch's last batch (72 of 0..72)
# is not logged, and there is an EMA model validated after the model.
TIMM_2024 = (
    "Train: 0 [   0/73 (  1%)]  Loss: 6.86 (6.86)  Time: 9.575s,   13.37/s  (9.575s,   13.37/s)"
    "  LR: 1.000e-05  Data: 0.844 (0.844)\n"
    "Train: 0 [  50/73 ( 70%)]  Loss: 6.77 (6.83)  Time: 0.320s,  400.32/s  (0.470s,  272.39/s)"
    "  LR: 1.000e-05  Data: 0.217 (0.047)\n"
    "Test: [   0/30]  Time: 6.593 (6.593)  Loss:   6.723 ( 6.723)  Acc@1:   0.000 (  0.000)"
    "  Acc@5:   0.000 (  0.000)\n"
    "Test: [  30/30]  Time: 3.856 (0.732)  Loss:   6.615 ( 6.691)  Acc@1:   0.000 (  0.076)"
    "  Acc@5:   1.176 (  3.287)\n"
    "Test (EMA): [  30/30]  Time: 0.024 (0.176)  Loss:  6.8138 (6.9122)  Acc@1:  0.0000 ( 0.1000)"
    "  Acc@5:  0.0000 ( 0.5000)\n"
)


def test_timm_epoch_rows_from_the_last_train_line_and_the_last_test_line() -> None:
    records, rows, outcome = parse_text(TIMM_2021)
    assert [r.epoch for r in rows] == [0, 1]
    assert rows[0].values == {
        "loss": 6.8209,
        "step_time_s": 0.618,
        "samples_per_s": 1657.09,
        "learning_rate": 1e-4,
        "data_time_s": 0.442,
        "val_step_time_s": 1.946,
        "val_loss": 6.474,
        "val_accuracy": 1.358,
        "val_acc5": 5.27,
    }
    assert rows[1].values["val_accuracy"] == 4.132 and rows[1].values["loss"] == 6.6372
    steps = metrics_where(records, name="loss", scope="step")
    assert [(r["epoch"], r["step"], r["value"]) for r in steps] == [
        (0, 1, 6.945775),
        (0, 1251, 6.760907),
        (1, 1, 6.714797),
        (1, 1251, 6.473104),
    ]
    assert steps[0]["steps_total"] == 1251
    assert metrics_where(records, name="best_metric", scope="summary")[0]["value"] == 4.132000020141602
    assert outcome["outcome"] == "completed" and "Best metric" in outcome["evidence"]


def test_timm_unlogged_last_batch_and_ema_validation() -> None:
    _, rows, _ = parse_text(TIMM_2024)
    assert len(rows) == 1
    values = rows[0].values
    assert values["loss"] == 6.83 and values["learning_rate"] == 1e-5  # the latest Train line's averages
    assert values["val_loss"] == 6.691 and values["val_accuracy"] == 0.076
    assert values["val_ema_loss"] == 6.9122 and values["val_ema_acc1"] == 0.1


def test_timm_outcome_without_the_best_metric_line() -> None:
    cut = TIMM_2021.split("*** Best metric")[0]
    assert parse_text(cut)[2]["outcome"] == "completed"  # its last planned epoch was printed (issue 30)
    running = "Test: [   0/48]  Time: 1.730 (1.730)  Loss:  5.7946 (5.7946)  Acc@1:  1.1719 ( 1.1719)\n"
    inside = TIMM_2021.split("Test: [  48/48]  Time: 0.033")[0] + running  # ends in epoch 1's validation
    _, rows, outcome = parse_text(inside)
    assert outcome["outcome"] == "truncated"
    assert [r.epoch for r in rows] == [0, 1]  # epoch 1's training finished; its validation did not
    assert "val_loss" not in rows[1].values
    train_cut = TIMM_2021.split("Train: 1 [1250")[0]  # ends in epoch 1's training
    assert parse_text(train_cut)[2]["outcome"] == "truncated"


def test_timm_best_metric_is_a_finish_message() -> None:
    line = "2026-03-21 01:18:57,412 INFO: *** Best metric: 79.45 (epoch 286)"
    assert FINISH.search(line) is not None
    assert any(key in line.encode() for key in FINISH_KEYS)
    assert FINISH.search("*** Best metric: 79.45") is None  # a fork's per-epoch print without the epoch


def test_timm_lines_that_are_not_timm() -> None:
    text = "Test set: Average loss: 0.0479, Accuracy: 9845/10000 (98%)\nTrain: done\n"
    records, _, _ = parse_text(text)
    assert not metrics_where(records, source="timm")


@pytest.mark.parametrize("text", [TIMM_2021, TIMM_2024])
def test_timm_thin_mode_gives_the_same_rows_and_outcome(text: str) -> None:
    plain = parse_text(text)
    thin = parse_text(text, thin=True)
    assert _rows(thin[1]) == _rows(plain[1])
    assert thin[2]["outcome"] == plain[2]["outcome"]


# --- Keras verbose=2 (tf.keras >= 2.7, Keras 3) ----------------------------------------------------------

KERAS_V2 = (
    "Epoch 1/2\n"
    "1563/1563 - 12s - loss: 1.5000 - accuracy: 0.4500 - val_loss: 1.2000 - val_accuracy: 0.5600"
    " - 12s/epoch - 8ms/step\n"
    "Epoch 2/2\n"
    "1563/1563 - 9s - loss: 1.1000 - accuracy: 0.6100 - val_loss: 1.0000 - val_accuracy: 0.6500"
    " - 835ms/epoch - 6ms/step\n"
    "313/313 - 1s - loss: 1.0100 - accuracy: 0.6400 - 1s/epoch - 3ms/step\n"
)


def test_keras_verbose2_tf2_lines() -> None:
    records, rows, outcome = parse_text(KERAS_V2)
    assert [(r.epoch, r.epoch_time_s) for r in rows] == [(1, 12.0), (2, 9.0)]
    assert rows[1].values == {"loss": 1.1, "accuracy": 0.61, "val_loss": 1.0, "val_accuracy": 0.65}
    evaluated = metrics_where(records, name="accuracy", scope="summary")  # evaluate()
    assert [r["value"] for r in evaluated] == [0.64]
    assert outcome["outcome"] == "completed"  # "Epoch 2/2" reached


def test_keras3_verbose2_lines() -> None:
    text = "Epoch 1/2\n94/94 - 2s - 20ms/step - accuracy: 0.1108 - loss: 2.3097\nEpoch 2/2\n"
    text += "94/94 - 1s - 14ms/step - accuracy: 0.0952 - loss: 2.3042 - val_accuracy: 0.31 - val_loss: 1.9\n"
    _, rows, _ = parse_text(text)
    assert [(r.epoch, r.epoch_time_s, r.values["loss"]) for r in rows] == [(1, 2.0, 2.3097), (2, 1.0, 2.3042)]


# --- Flax / JAX ------------------------------------------------------------------------------------------

FLAX_MNIST = (
    "I1123 10:00:01.123456 140234 train.py:150] epoch:  1, train_loss: 0.2364, train_accuracy: 92.88,"
    " test_loss: 0.0618, test_accuracy: 97.98\n"
    "I1123 10:00:09.654321 140234 train.py:150] epoch:  2, train_loss: 0.0528, train_accuracy: 98.37,"
    " test_loss: 0.0431, test_accuracy: 98.61\n"
)
FLAX_OLD = (
    "I0301 09:00:00.000001 1 train.py:120] train epoch: 1, loss: 0.2364, accuracy: 92.88\n"
    "I0301 09:00:01.000001 1 train.py:121] eval epoch: 1, loss: 0.0618, accuracy: 97.98\n"
)


def test_flax_mnist_epoch_lines_with_absl_prefix() -> None:
    _, rows, outcome = parse_text(FLAX_MNIST)
    assert [r.epoch for r in rows] == [1, 2]
    assert rows[0].values == {"loss": 0.2364, "accuracy": 92.88, "test_loss": 0.0618, "test_accuracy": 97.98}
    assert outcome["outcome"] == "unknown"  # the example prints no end line


def test_flax_train_and_eval_epoch_lines() -> None:
    """``train epoch: 1, …``: the split word before the anchor is no metric (``epoch`` or ``val_epoch``)."""
    _, rows, _ = parse_text(FLAX_OLD)
    assert rows[0].values == {"loss": 0.2364, "accuracy": 92.88, "val_loss": 0.0618, "val_accuracy": 97.98}


# --- HF Accelerate -----------------------------------------------------------------------------------------

ACCELERATE = (
    "Distributed environment: MULTI_GPU  Backend: nccl\nNum processes: 2\n"
    "epoch 0: {'accuracy': 0.7598039215686274, 'f1': 0.8032128514056225}\n"
    "epoch 0: {'accuracy': 0.7598039215686274, 'f1': 0.8032128514056225}\n"
    "[1,mpirank:0,algo-1]<stdout>:epoch 1: {'accuracy': 0.8480392156862745, 'f1': 0.8931034482758621}\n"
)


def test_accelerate_nlp_example_epoch_dicts() -> None:
    _, rows, _ = parse_text(ACCELERATE)
    assert [(r.epoch, r.values["f1"], r.streams) for r in rows] == [
        (0, 0.8032128514056225, 2),
        (1, 0.8931034482758621, 1),
    ]
