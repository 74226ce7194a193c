"""Records the generic parser used to get wrong (issue 12): each case printed as users' loops print it."""

from __future__ import annotations

from gputui.logs import parse_bytes


def metrics(text: str) -> list[tuple[str, float, int | None, str]]:
    records = parse_bytes(text.encode())
    return [
        (r.fields["name"], round(r.fields["value"], 6), r.fields.get("epoch"), r.fields["scope"])
        for r in records
        if r.kind == "metric"
    ]


def test_an_epoch_anchor_is_not_part_of_the_metric_name() -> None:
    assert metrics("epoch 1 loss=0.5\nepoch 2 loss=0.4\n") == [
        ("loss", 0.5, 1, "epoch"),
        ("loss", 0.4, 2, "epoch"),
    ]
    assert metrics("Epoch 3 loss: 0.31 acc: 0.9\n") == [
        ("loss", 0.31, 3, "epoch"),
        ("accuracy", 0.9, 3, "epoch"),
    ]


def test_a_step_anchor_is_not_part_of_the_metric_name() -> None:
    names = [m[0] for m in metrics("epoch 1\nstep 20 loss=0.7\nstep 40 loss=0.6\n")]
    assert names == ["loss", "loss"]


def test_a_model_printout_after_training_gives_no_metrics() -> None:
    log = (
        "Epoch 3 loss: 0.31 acc: 0.9\n"
        "Net(\n"
        "  (fc1): Linear(in_features=128, out_features=10, bias=True)\n"
        "  (dropout): Dropout(p=0.25, inplace=False)\n"
        "  (conv): Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))\n"
        ")\n"
        "Dropout(p=0.25)\n"
    )
    names = {m[0] for m in metrics(log)}
    assert names == {"loss", "accuracy"}


def test_milliseconds_and_minutes_are_read_as_seconds() -> None:
    got = metrics("epoch 3 loss=0.2\ntime: 850ms\nepoch 4 loss=0.1 time: 2 min\n")
    assert ("time", 0.85, 3, "context") in got
    assert ("epoch_time_s", 120.0, 4, "epoch") in got
    step = metrics("epoch 1\nstep 300 loss: 0.25 step_time: 120ms\n")
    assert ("step_time_s", 0.12, None, "step") in step


def test_whitespace_separated_pairs_after_an_anchor() -> None:
    got = metrics("Epoch 3: loss 1.234e-01  acc 93.1%  val_loss 2.0e-01\n")
    assert got == [("loss", 0.1234, 3, "epoch"), ("acc_pct", 93.1, 3, "epoch"), ("val_loss", 0.2, 3, "epoch")]
    assert [m[:2] for m in metrics("epoch 6 | train/loss 0.5 | val/acc 0.8\n")] == [
        ("loss", 0.5),
        ("val_accuracy", 0.8),
    ]
    assert [m[:2] for m in metrics("step 100 loss 0.2, lr 1e-4\n")] == [
        ("loss", 0.2),
        ("learning_rate", 0.0001),
    ]


def test_words_after_an_anchor_are_not_metrics() -> None:
    assert metrics("Epoch 5 of 10\nEpoch 2 started with 4 workers\n") == []
    # a duration the epoch's line states is its time, whatever remark follows (issue 30)
    assert metrics("epoch 7 done in 12 s and more\n") == [("epoch_time_s", 12.0, 7, "epoch")]


def _trainer_log(with_records: bool, with_lines: bool) -> bytes:
    """What gputui's trainers print for two epochs on rank 0: records and/or the human line."""
    import io

    from gputui.reporter import Reporter

    stream = io.StringIO()
    reporter = Reporter(job="7", rank=0, stream=stream, human=True)
    for epoch, loss in ((1, 2.299), (2, 2.233)):
        reporter.epoch_end(epoch, {"loss": loss, "accuracy": 0.2 * epoch}, epoch_time_s=2.5, images=1500)
    kept = [
        line
        for line in stream.getvalue().splitlines()
        if (line.startswith("@gputui") and with_records) or (line.startswith("epoch") and with_lines)
    ]
    return ("\n".join(kept) + "\n").encode()


def test_gputui_trainer_epochs_from_records_from_lines_and_from_both() -> None:
    from gputui.logs.epochs import EpochTable

    for records, lines in ((True, False), (False, True), (True, True)):
        table = EpochTable()
        table.add_all(parse_bytes(_trainer_log(records, lines)))
        rows = table.rows()
        assert [(r.rank, r.epoch) for r in rows] == [(0, 1), (0, 2)], (records, lines)
        assert [round(r.values["loss"], 3) for r in rows] == [2.299, 2.233]
        assert [r.epoch_time_s for r in rows] == [2.5, 2.5]


def test_hf_trainer_dicts_get_the_global_step_of_the_training_bar() -> None:
    frames = []
    for step in range(1, 21):
        frames.append(f"\r {step * 5}%|█         | {step}/20 [00:0{step % 10}<00:10,  2.00it/s]")
        if step == 10:
            frames.append("\n{'loss': 0.9, 'grad_norm': 1.2, 'learning_rate': 5e-05, 'epoch': 0.5}\n")
            frames.append(
                "\r 50%|█████     | 4/8 [00:01<00:01,  4.00it/s]"
                "\r100%|██████████| 8/8 [00:02<00:00,  4.00it/s]"
            )
            frames.append("\n{'eval_loss': 0.8, 'eval_runtime': 2.0, 'epoch': 0.5}\n")
        if step == 20:
            frames.append("\n{'loss': 0.7, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 1.0}\n")
    records = parse_bytes("".join(frames).encode())
    steps = {
        (r.fields["name"], r.fields.get("step"))
        for r in records
        if r.kind == "metric" and r.fields["source"] == "hf_trainer"
    }
    assert ("loss", 10) in steps and ("loss", 20) in steps
    assert ("val_loss", 10) in steps  # the eval bar (8 steps) is not the training bar


def test_banners_settings_and_engine_status_lines_are_not_metrics() -> None:
    log = (
        "gputui.trainers.torch_ddp: 4 rank(s) [srun] on 2 node(s), device cuda, backend nccl, "
        "model resnet18, "
        "batch 64/rank (256 global, weak scaling), lr 0.05\n"
        "[2024-01-01 10:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=0, skipped=0, lr=[0.0001]\n"
        "Training with batch size: 128, steps per epoch: 100\n"
        "Namespace(batch_size=64, epochs=10, lr=0.01, seed=1)\n"
        "epoch 1 loss=0.5 Throughput: 850 img/s\n"
    )
    # DeepSpeed's engine line gives its learning rate at its step (issue 30: every printed value)
    assert metrics(log) == [
        ("skipped", 0.0, None, "step"),
        ("learning_rate", 0.0001, None, "step"),
        ("loss", 0.5, 1, "epoch"),
        ("throughput", 850.0, 1, "epoch"),
    ]


def test_abbreviated_counts_are_read_as_the_numbers_they_stand_for() -> None:
    records = parse_bytes(b"step:12K loss: 0.5 tokens: 1.2M\nstep: 13K | loss: 0.45 | seen: 2.5B\n")
    got = [(r.fields["name"], r.fields["value"], r.fields.get("step")) for r in records if r.kind == "metric"]
    assert got == [
        ("loss", 0.5, 12000),
        ("tokens", 1200000.0, 12000),
        ("loss", 0.45, 13000),
        ("seen", 2.5e9, 13000),
    ]


def test_a_count_printed_before_its_name_is_read() -> None:
    """``1.2M samples`` (value first) on an epoch or step line is ``samples = 1.2e6``; the same words
    in a line with no epoch or step are not metrics."""
    records = parse_bytes(
        b"epoch 3 step 500: loss=0.3, 1.2M samples, 512 images\nloading 1.2M samples from disk\n"
    )
    got = {(r["name"], r["value"], r.get("step")) for r in records if r.kind == "metric"}
    assert got == {("loss", 0.3, 500), ("samples", 1.2e6, 500), ("images", 512.0, 500)}
