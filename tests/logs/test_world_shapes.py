"""The shapes of the world's logs (issue 30): every printed value under the name the log gives it.

Each case is a class of line met in the corpus of real logs (``corpus/``), written here in its own words
so that the rule, not one file, is what the test holds."""

from __future__ import annotations

import pytest

from gputui.logs import parse_bytes


def values(text: str) -> list[tuple[str, float, int | None, int | None]]:
    """(name, value, step, epoch) of every metric record of a log given as text."""
    out = []
    for r in parse_bytes(text.encode()):
        if r.kind == "metric":
            out.append((r.get("name"), float(f"{r.get('value'):.9g}"), r.get("step"), r.get("epoch")))
    return out


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # a counter padded to its width; "lr 8e-07" without a colon; a time with its unit
        (
            "step     0 | loss: 10.894550 | lr 8.3916e-07 | norm: 0.2403 | dt: 30000.00ms "
            "| tok/sec: 17476.27",
            [
                ("loss", 10.89455, 0),
                ("learning_rate", 8.3916e-07, 0),
                ("norm", 0.2403, 0),
                ("dt_s", 30.0, 0),
                ("tokens_per_s", 17476.27, 0),
            ],
        ),
        # several words before a value; a noun two split words share; a split heading
        ("step 100: train loss 3.4633, val loss 3.4987", [("loss", 3.4633, 100), ("val_loss", 3.4987, 100)]),
        ("Epoch 3 | loss train: 0.5, val: 0.6", [("loss", 0.5, None), ("val_loss", 0.6, None)]),
        (
            "epoch 3 train: loss 0.5 acc 0.9 | val: loss 0.6 acc 0.8",
            [
                ("loss", 0.5, None),
                ("accuracy", 0.9, None),
                ("val_loss", 0.6, None),
                ("val_accuracy", 0.8, None),
            ],
        ),
        # thousands separators, signs; a count named after it; a counter after its number
        ("Epoch 1, tokens: 10,690,944, loss: -0.5", [("tokens", 10690944.0, None), ("loss", -0.5, None)]),
        (
            "step   47700 | loss 1.4684 | 113.4k tok/s | mfu 114.07%",
            [("loss", 1.4684, 47700), ("tokens_per_s", 113400.0, 47700), ("mfu_pct", 114.07, 47700)],
        ),
        (
            "[Rank 0] (after 1 iterations) memory (MB) | allocated: 3993.4 | max allocated: 11493.6",
            [("allocated", 3993.4, 1), ("max_allocated", 11493.6, 1)],
        ),
        # the words of a phrase name the value after it
        ("Score at iteration 0 is 1.6235", [("score", 1.6235, 0)]),
        # a list after one name; two names for two values
        (
            "[Rank 0] step=10, skipped=4, lr=[5.79e-07, 5.8e-07], mom=[(0.9, 0.95)]",
            [("skipped", 4.0, 10), ("learning_rate", 5.79e-07, 10), ("lr_1", 5.8e-07, 10)],
        ),
        (
            "[1,     0/ 2562] - Reconstruction/K-Means Loss: [2.005 / 230.014] - [wd: 5.00e-02] (2996.7 ms)",
            [
                ("reconstruction_loss", 2.005, 0),
                ("k-means_loss", 230.014, 0),
                ("wd", 0.05, 0),
                ("time_s", 2.9967, 0),
            ],
        ),
        # a dictionary in a line: a loss dictionary's keys are losses
        (
            "Epoch:   0 [       1/100], loss: {'classification': 8.5994, 'total_loss': 19.99}, "
            "LR: [1e-06, 1e-06]",
            [
                ("classification_loss", 8.5994, 1),
                ("total_loss", 19.99, 1),
                ("learning_rate", 1e-06, 1),
                ("lr_1", 1e-06, 1),
            ],
        ),
        # a section heading (an entity's name) heads the names after it
        (
            "epoch 2 LOC: precision:  76.63%; recall:  71.25%; FB1:  73.84",
            [("loc_precision_pct", 76.63, None), ("loc_recall_pct", 71.25, None), ("loc_fb1", 73.84, None)],
        ),
        # energy and power units
        (
            "step 20 Energy=31.67 Wh (114005.4 J), Avg Power=624.7 W",
            [("energy_wh", 31.67, 20), ("energy_j", 114005.4, 20), ("avg_power_w", 624.7, 20)],
        ),
        # a bar that names no epoch: its postfix values at its position, not its counters
        (
            "Training progress:  10%|█    | 3000/30000 [00:30<04:30, 98.1it/s, Loss=0.1230]",
            [("loss", 0.123, 3000)],
        ),
        # memory of a total ("9.8/15.9GB": the total is a constant), a device's use in %, a batch size
        (
            "[000500/50000] X4K    | loss 0.0488 | VRAM 9.8/15.9GB (62%) | GPU 0% | 3.04 it/s | batch 16",
            [
                ("loss", 0.0488, 500),
                ("vram_gb", 9.8, 500),
                ("vram_pct", 62.0, 500),
                ("gpu_pct", 0.0, 500),
                ("it_per_s", 3.04, 500),
            ],
        ),
        # a value and its spread
        (
            "step 5 | acc: 0.91 +/- 0.02 | loss 0.4",
            [("accuracy", 0.91, 5), ("acc_std", 0.02, 5), ("loss", 0.4, 5)],
        ),
        # "DEV" is a split; a key's text value is no part of the next name; a rate per second
        ("step 5 | DEV : loss 0.52 | acc 0.9", [("val_loss", 0.52, 5), ("val_accuracy", 0.9, 5)]),
        ("step 10 phase=dense reward 0.75 kl 0.01", [("reward", 0.75, 10), ("kl", 0.01, 10)]),
        (
            "step 20 | loss 2.1 | Global Tokens/s 123456.7",
            [("loss", 2.1, 20), ("global_tokens_per_s", 123456.7, 20)],
        ),
        ("step 20 | loss 2.1 | samples/sec 55.2", [("loss", 2.1, 20), ("samples_per_s", 55.2, 20)]),
    ],
)
def test_a_line_gives_every_value_it_prints(line: str, expected: list) -> None:
    assert [(n, v, s) for n, v, s, _ in values(line + "\n")] == expected


def test_a_line_without_a_counter_is_read_once_its_names_come_back_in_a_training_log() -> None:
    log = "validation loss: 10.95\n" + "".join(
        f"step {s} | loss: {10 - s / 100:.4f}\n" + (f"validation loss: {9 - s / 100:.2f}\n" if s % 2 else "")
        for s in range(1, 6)
    )
    got = [(n, v, s) for n, v, s, _ in values(log) if n == "val_loss"]
    assert got[0] == ("val_loss", 10.95, None)  # the first line waited for its series, then came
    assert [s for _, _, s in got[1:]] == [1, 3, 5]  # each at the latest step


@pytest.mark.parametrize(
    "log",
    [
        # settings and printouts of any kind, even repeated with other numbers
        "".join(f"Effective batch size: {2**i} (ratio: {i})\n" for i in range(5)),
        "".join(f"[INFO] Killing subprocess {8774 + i}\n" for i in range(5)),
        "".join(f"  layer rec 'lstm{i}_bw' #: {1024 * i}\n" for i in range(5)),
        "".join(f"adam_beta{i} ...................................... 0.{i}\n" for i in range(5)),
        "    train_cfg=dict(\n        pos_iou_thr=0.7,\n        neg_iou_thr=0.3,\n    ),\n",
        "".join(
            f"h shape: torch.Size([8, {i}, 4, 4]), hs[-1] shape: torch.Size([8, 256, 4, 4])\n"
            for i in range(5)
        ),
        "".join(f"deepspeed --nnodes {i} --num_local_procs {i} train.py\n" for i in range(5)),
        "".join(
            f"W1220 14:03:{i:02d}.712000 140061 torch/_inductor/select.py:1452] took 0.{i}s\n"
            for i in range(5)
        ),
        "".join(
            f"Loading safetensors checkpoint shards: {50 * i}% Completed | {i}/2 [00:0{i}<00:01]\n"
            for i in range(3)
        ),
    ],
)
def test_nothing_is_invented_from_lines_that_measure_nothing(log: str) -> None:
    assert values(log) == []


def test_names_with_digits_are_read_per_line() -> None:
    got = values("epoch 1 layer1 loss: 0.5\nepoch 1 layer2 loss: 0.9\n")
    assert [(n, v) for n, v, _, _ in got] == [("layer1_loss", 0.5), ("layer2_loss", 0.9)]


def test_a_table_of_names_and_values_is_read_at_its_own_counter() -> None:
    rows = ("rollout/", ""), ("   ep_len_mean", "155"), ("   ep_rew_mean", "-66.3"), ("time/", "")
    rows += ("   fps", "2114"), ("   total_timesteps", "2048")
    rule = "-" * 33 + "\n"
    table = rule + "".join(f"| {name:<18} | {value:<8} |\n" for name, value in rows) + rule
    assert values(table) == [
        ("rollout/ep_len_mean", 155.0, 2048, None),
        ("rollout/ep_rew_mean", -66.3, 2048, None),
        ("time/fps", 2114.0, 2048, None),
    ]


def test_w_and_b_run_summary_is_the_runs_summary() -> None:
    log = "step 1 loss 2.0\nwandb: Run summary:\nwandb:    eval_top5 91.136\nwandb:    eval_top1 72.19\n"
    records = [r for r in parse_bytes(log.encode()) if r.kind == "metric" and r.get("name") != "loss"]
    assert {(r.get("name"), r.get("scope")) for r in records} == {
        ("val_top5", "summary"),
        ("val_accuracy", "summary"),
    }


TRAINED = "iter: 19  total_loss: 0.5  lr: 0.02\n"


def test_a_markdown_table_reads_by_its_header_once_a_rule_row_confirms_it() -> None:
    """detectron2's evaluation tables: a row of numbers under names; names and values in pairs."""
    table = (
        "|   AP   |  AP50  |  AP75  |\n"
        "|:------:|:------:|:------:|\n"
        "| 10.970 | 22.437 | 9.255  |\n"
        "| category   | AP     | category | AP     |\n"
        "|:-----------|:-------|:---------|:-------|\n"
        "| cup or mug | 7.698  | bird     | 33.738 |\n"
    )
    got = [(n, v) for n, v, _, _ in values(TRAINED + table)]
    assert got[2:] == [
        ("ap", 10.97),
        ("ap50", 22.437),
        ("ap75", 9.255),
        ("cup_or_mug_ap", 7.698),
        ("bird_ap", 33.738),
    ]
    assert [n for n, *_ in values(TRAINED + table.replace("|:------:|:------:|:------:|\n", ""))][2:5] != [
        "ap"
    ]


def test_a_markdown_table_before_training_is_settings_and_a_counter_column_is_the_position() -> None:
    settings = "| lr | dropout |\n|----|-------|\n| 0.001 | 0.1 |\n"
    assert values(settings) == []
    epochs = "| epoch | loss | acc |\n|---|---|---|\n| 1 | 0.9 | 0.5 |\n| 2 | 0.7 | 0.6 |\n"
    assert values(epochs) == [
        ("loss", 0.9, None, 1),
        ("accuracy", 0.5, None, 1),
        ("loss", 0.7, None, 2),
        ("accuracy", 0.6, None, 2),
    ]


def test_times_per_item_and_sentences_that_end_after_a_unit() -> None:
    """``0.0389 s/iter.``: seconds per iteration, the full stop ends the sentence; a split's own time
    (``Eval: 0.0002 s/iter``) does not make the names after it the split's."""
    line = (
        "d2.evaluation.evaluator INFO: Inference done 11/3334. Dataloading: 0.0011 s/iter. "
        "Inference: 0.0389 s/iter. Eval: 0.0002 s/iter. Total: 0.0402 s/iter. ETA=0:02:13\n"
    )
    got = {n: v for n, v, _, _ in values(TRAINED + line.replace("0.0389", "0.0371") + line)}
    assert got["dataloading_s"] == 0.0011 and got["inference_s"] == 0.0389
    assert got["val_time_s"] == 0.0002 and got["total_s"] == 0.0402


def test_a_running_evaluation_line_gives_its_values_at_no_step() -> None:
    """MetricLogger's ``Test: [20/79]`` lines (DINO, Swin, torchvision references): every value as
    printed, with its running average, named for the test, and no step (an evaluation's batch index
    is no training step); the last line still gives the epoch's validation values."""
    train = "Epoch: [0]  [780/782]  eta: 0:00:00  lr: 0.000500  loss: 3.557686 (4.475975)  time: 0.16\n"
    test = (
        "Test:  [ 0/79]  eta: 0:01:49  loss: 6.921075 (6.921075)  acc5: 1.562500 (1.562500)  max mem: 997\n"
        "Test:  [20/79]  eta: 0:00:13  loss: 7.112292 (7.136923)  acc5: 1.562500 (2.046131)  max mem: 997\n"
    )
    got = [(n, v, s) for n, v, s, _ in values(train + test) if n.startswith("test_")]
    assert got[:5] == [
        ("test_loss", 6.921075, None),
        ("test_loss_avg", 6.921075, None),
        ("test_acc5", 1.5625, None),
        ("test_acc5_avg", 1.5625, None),
        ("test_max_mem", 997.0, None),
    ]
    assert ("test_loss_avg", 7.136923, None) in got


def test_single_letter_parts_in_capitals_and_a_fractional_epoch_are_read() -> None:
    """CycleGAN's ``D_A: 1.016`` is a loss, not an environment variable; PaddleNLP's Trainer ends its
    evaluation line with ``epoch: 10.0``, a fractional position that leaves the values before it read."""
    gan = "(epoch: 1, iters: 100, time: 1.294) , D_A: 1.016, G_A: 1.631\n"
    assert ("d_a", 1.016, 100, 1) in values(gan)
    assert values("MASTER_PORT: 29500\n") == []
    paddle = "step 10 loss: 1.45\neval_loss: 0.5748, eval_micro_f1: 0.9848, epoch: 10.0\n"
    assert ("val_loss", 0.5748, 10, None) in values(paddle + paddle.replace("0.5748", "0.5512"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a sentence before the label; the label inside an open bracket; a time in brackets after a value
        ("Epoch 50 loss 0.2\nTraining finished. Total time: 2256.13 seconds\n", ("total_time", 2256.13)),
        ("Epoch 1 loss 0.5\n  -> New best model saved (Dice: 0.0378)\n", ("dice", 0.0378)),
        ("Epoch 1 average loss: 0.6189  (78.2s)\n", ("epoch_time_s", 78.2)),
        # MXNet's split joined by a hyphen
        ("INFO:root:Epoch[0] Train-accuracy=0.671875\n", ("accuracy", 0.671875)),
        ("INFO:root:Epoch[0] Validation-accuracy=0.710788\n", ("val_accuracy", 0.710788)),
    ],
)
def test_labels_are_the_last_clause_before_the_value(text: str, expected: tuple[str, float]) -> None:
    assert expected in [(n, v) for n, v, _, _ in values(text)]


def test_times_named_after_their_value_an_ordinal_and_a_bracketed_remark() -> None:
    """Ultralytics' ``Speed:`` line names each time after it; Caffe's ``Train net output #2:`` is an
    index, and ``(* 0.008 = 0.004 loss)`` a remark on the value before it."""
    speed = "Epoch 1 loss 0.5\nSpeed: 0.2ms preprocess, 6.2ms inference, 0.0ms loss, 1.0ms postprocess per im"
    got = dict((n, v) for n, v, _, _ in values(speed + "\n"))
    assert got["speed_preprocess_s"] == 0.0002 and got["speed_postprocess_s"] == 0.001
    caffe = "".join(
        f"I0613 17:29:58.112792  1860 solver.cpp:228] Iteration {i}, loss = {9 - i / 100}\n"
        f"I0613 17:29:58.112792  1860 solver.cpp:244]     Train net output #2: center_loss = {i / 7:.4f}"
        f" (* 0.008 = {i / 7 * 0.008:.6f} loss)\n"
        for i in (100, 200)
    )
    assert ("center_loss", 28.5714, 200, None) in values(caffe)


def test_darknet_iterations_are_no_srun_labels_and_a_series_keeps_its_first_lines() -> None:
    """`` 595: 0.81, 0.86 avg loss, …`` looks like ``srun --label``'s ``595: ``; it is Darknet's
    iteration. ``Loaded: 0.000040 seconds`` after each is a series: its first lines wait and keep
    their step."""
    text = (
        " 1: 659.564758, 659.564758 avg, 0.000000 rate, 4.317869 seconds, 64 images\n"
        "Loaded: 0.000040 seconds\n"
        " 2: 600.1, 655.2 avg loss, 0.000001 rate, 0.591668 seconds, 128 images, 0.251609 hours left\n"
        "Loaded: 0.000033 seconds\n"
    )
    got = values(text)
    assert ("avg_loss", 655.2, 2, None) in got and ("images", 128.0, 2, None) in got
    assert [(n, v, s) for n, v, s, _ in got if n == "loaded_s"] == [
        ("loaded_s", 4e-05, 1),
        ("loaded_s", 3.3e-05, 2),
    ]
    assert all(r.get("rank") is None for r in parse_bytes(text.encode()))


@pytest.mark.parametrize(
    "line",
    [
        "08/21 [01:53:34] INFO     | >> [*] Computing dataset      data_utils.py:223",  # file:line
        "  time      : 2025-08-21_01:46:32",  # a date and time joined by _
        "slurmstepd: error: *** JOB 267035 ON dgx-06 CANCELLED AT 2025-08-21T02:35:44 ***",
        "[Check] input_latents: nan=False, inf=False, shape=torch.Size([1, 16, 7, 50, 80])",  # keys named nan
        "training_step -> batch keys: dict_keys(['video_id']), batch_idx: 0, batch_size: 1",  # an index
    ],
)
def test_no_value_in_references_dates_keys_and_indexes(line: str) -> None:
    """Lines of a job that trained (``step 1 loss 0.5`` before) that still hold no measurement."""
    trained = "step 1 loss 0.5\nstep 2 loss 0.4\n"
    assert values(trained + line + "\n" + line.replace("1", "2") + "\n")[2:] == []


def test_a_split_heading_names_repeated_names_and_tags_of_mpirun_are_ranks() -> None:
    line = "Epoch 3 | Train Loss: 1.2 | Token Acc: 0.4 | Val Loss: 1.5 | Token Acc: 0.3 | lr: 0.001\n"
    assert [(n, v) for n, v, _, _ in values(line)] == [
        ("loss", 1.2),
        ("token_acc", 0.4),
        ("val_loss", 1.5),
        ("val_token_acc", 0.3),
        ("learning_rate", 0.001),
    ]
    tagged = "[1,2]<stdout>:step 5 | loss 0.25\n[1,2]<stdout>:step 6 | loss 0.24\n"
    records = [r for r in parse_bytes(tagged.encode()) if r.kind == "metric"]
    assert [(r.get("rank"), r.get("step"), r.get("value")) for r in records] == [(2, 5, 0.25), (2, 6, 0.24)]


def test_a_keras_like_line_names_values_of_several_words_and_a_month_day_stamp_is_no_value() -> None:
    assert values("125/125 - 25s - batch_cost: 0.2033 - reader cost: 0.1613\n")[-1][:2] == (
        "reader_cost",
        0.1613,
    )
    assert values("I | 06-06 05:03:01 |  jaqmc   | Start burn in 100 steps.\n") == []


def test_a_number_after_a_named_list_an_elapsed_time_and_a_loguru_prefix_are_no_values() -> None:
    assert values("Epoch 10    [Avg. Loss, Loss]: [10.4449, 7.1693], 0\n") == [
        ("avg_loss", 10.4449, None, 10),
        ("loss", 7.1693, None, 10),
    ]
    assert values("Epoch 1 Train batch 1/925 | loss: 0.03176 - 9.9 secs\n") == [("loss", 0.03176, 1, 1)]
    loguru = "2021-11-11 00:01:30.834 | INFO     | __main__:train:35 - step 5 loss: 2.5035\n"
    assert values(loguru) == [("loss", 2.5035, 5, None)]


def test_a_utf16_log_with_its_byte_order_mark_is_read() -> None:
    text = "epoch 1 | loss 0.5\nepoch 2 | loss 0.25\nTraining completed successfully!\n"
    data = "\ufeff".encode("utf-16-le") + text.encode("utf-16-le")  # PowerShell's "python train.py > log"
    records = parse_bytes(data)
    assert [(r.get("name"), r.get("value")) for r in records if r.kind == "metric"] == [
        ("loss", 0.5),
        ("loss", 0.25),
    ]
    assert [r.get("outcome") for r in records if r.get("event") == "outcome"] == ["completed"]


def test_values_in_a_bar_description_and_a_tuple_of_named_parts() -> None:
    bar = (
        "Epoch: 0, L1: 0.202, Gen: 2.533:  12%|#   | 60/496 [00:41<05:00, 1.45it/s]\r"
        "Epoch: 0, L1: 0.201, Gen: 2.5:  12%|#   | 61/496 [00:41<05:00, 1.45it/s]\r"
        "Epoch: 0, L1: 0.2, Gen: 2.4: 100%|#   | 496/496 [05:41<00:00, 1.45it/s]\n"
    )
    assert values(bar) == [  # the second frame is of the same printed second: thinned
        ("l1", 0.202, 60, 0),
        ("gen", 2.533, 60, 0),
        ("l1", 0.2, 496, 0),
        ("gen", 2.4, 496, 0),
        ("epoch_time_s", 341.0, 496, 0),
    ]
    parts = "step 3 | p1v(min/mean/max/std)=(0.1, 0.2, 0.3, 0.05) | loss 0.5\n"
    assert [n for n, *_ in values(parts)] == ["p1v_min", "p1v_mean", "p1v_max", "p1v_std", "loss"]


def test_a_memory_value_with_its_unit_after_name_equals() -> None:
    line = (  # DeepSpeed's timer line
        "epoch=0/micro_step=3/global_step=3, CurrSamplesPerSec=2.05, "
        "MemAllocated=13.69GB, MaxMemAllocated=28.8GB\n"
    )
    assert values(line) == [
        ("currsamplespersec", 2.05, 3, 0),
        ("memallocated_gb", 13.69, 3, 0),
        ("maxmemallocated_gb", 28.8, 3, 0),
    ]


def test_a_split_word_before_the_counter_or_right_after_it_names_the_line() -> None:
    step_line = "epoch:[  1/25 ] val step:0    loss: 3.27431 top1: 0.12500 batch_cost: 4.21128 sec\n"
    assert [n for n, *_ in values(step_line)] == ["val_loss", "val_accuracy", "val_batch_cost_s"]
    end_line = "END epoch:1   val loss_avg: 3.62249 top1_avg: 0.14896 avg_ips: 60.82658\n"
    assert [n for n, *_ in values(end_line)] == ["val_loss_avg", "val_top1_avg", "val_avg_ips"]
    train_line = "END epoch:1   train loss_avg: 3.94312  top1_avg: 0.10801\n"
    assert [n for n, *_ in values(train_line)] == ["loss_avg", "top1_avg"]


def test_a_percentage_in_a_bar_postfix_is_read_with_its_unit() -> None:
    bar = "Epoch 1:  50%|#    | 24/48 [00:10<00:10, 2.4it/s, CE=4.576, acc=1.8%]\n"
    assert values(bar) == [("ce", 4.576, 24, 1), ("acc_pct", 1.8, 24, 1)]
