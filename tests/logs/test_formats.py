"""Each format family on the exact shapes of ``docs/log-formats.md``, the normaliser, CSV, TensorBoard,
ranks and the ``parse`` command."""

from __future__ import annotations

import io
import struct

from gputui.cli import main as cli_main
from gputui.logs import LogParser, parse_bytes
from gputui.logs.epochs import EpochTable
from gputui.logs.files.lightning_csv import CsvMetricsParser
from gputui.logs.files.tensorboard import EventFileParser
from gputui.logs.normalize import Normalizer, apply_backspaces
from gputui.stream.io import format_prefixed
from gputui.stream.records import metric


def _rows(data: bytes, **kw):
    table = EpochTable(**kw)
    table.add_all(parse_bytes(data))
    return table.rows()


def _epoch_values(data: bytes) -> list[dict]:
    return [dict(r.values, epoch=r.epoch, time=r.epoch_time_s) for r in _rows(data)]


def test_normalizer_frames_ansi_backspace_utf8() -> None:
    n = Normalizer()
    frames = n.feed(b"\r\x1b[1m1/5\x1b[0m a" + b"\x08" * 3 + b"\rb\xffc\r\n\rlast")
    assert [t for _, t in frames] == ["1/5 a", "b\ufffdc"]
    assert n.tail == "last"
    assert apply_backspaces("abc\b\bX") == "aXc"


def test_long_frames_are_bounded_but_keep_head_and_tail() -> None:
    n = Normalizer(max_frame=1000)
    data = b"Epoch 3: " + b"x" * 100_000 + b" loss=0.5\n"
    frames = n.feed(data[:50_000]) + n.feed(data[50_000:])
    ((_, text),) = frames
    assert len(text) < 1100 and text.startswith("Epoch 3: ") and text.endswith("loss=0.5")
    assert frames == Normalizer(max_frame=1000).feed(data)


def test_keras3_verbose1_bytes() -> None:
    data = (
        b"Epoch 1/2\n"
        b"\r\x1b[1m1/5\x1b[0m \x1b[32m\xe2\x94\x81\xe2\x94\x81\x1b[0m \x1b[1m0s\x1b[0m 10ms/step"
        b" - accuracy: 0.2500 - loss: 2.0400"
        + b"\x08"
        * 71
        + b"\r\x1b[1m5/5\x1b[0m \x1b[32m\xe2\x94\x81\xe2\x94\x81\x1b[0m\x1b[37m\x1b[0m"
        b" \x1b[1m3s\x1b[0m 10ms/step"
        b" - accuracy: 0.2506 - loss: 2.0408 - val_accuracy: 0.3100 - val_loss: 1.9000\n"
    )
    rows = _epoch_values(data)
    assert rows == [
        {"accuracy": 0.2506, "loss": 2.0408, "val_accuracy": 0.31, "val_loss": 1.9, "epoch": 1, "time": 3.0}
    ]


def test_keras_verbose2_generations() -> None:
    for line in (
        b"94/94 - 2s - 20ms/step - accuracy: 0.1108 - loss: 2.3097",
        b"94/94 - 2s - loss: 2.3097 - accuracy: 0.1108 - 2s/epoch - 17ms/step",
        b" - 2s - loss: 2.3097 - acc: 0.1108",
    ):
        rows = _epoch_values(b"Epoch 1/2\n" + line + b"\nEpoch 2/2\n")
        assert rows == [{"accuracy": 0.1108, "loss": 2.3097, "epoch": 1, "time": 2.0}], line


def test_keras_evaluate_after_fit_is_not_an_epoch() -> None:
    data = b"Epoch 1/1\n5/5 [====] - 1s 8ms/step - loss: 2.0\n333/333 - 1s - 3ms/step - accuracy: 0.95\n"
    assert [r.epoch for r in _rows(data)] == [1]


def test_lightning_bar_with_validation_redraw() -> None:
    data = (
        b"\rEpoch 0:  25%|##        | 1/4 [00:00<00:00, 95.28it/s, v_num=0, train_loss=2.300]"
        b"\rEpoch 0: 100%|##########| 4/4 [00:03<00:00, 95.72it/s, v_num=0, train_loss=2.000]\n"
        b"\rValidation:  50%|#####     | 1/2 [00:00<00:00, 53773.13it/s]\x1b[A\n"
        b"\r                                                            \x1b[A"
        b"\rEpoch 0: 100%|##########| 4/4 [00:03<00:00, 94.69it/s, v_num=0, train_loss=1.900, val_loss=1.850]"
        b"\rEpoch 1:   0%|          | 0/4 [00:00<?, ?it/s, v_num=0, train_loss=1.900, val_loss=1.850]"
    )
    assert _epoch_values(data) == [{"loss": 1.9, "val_loss": 1.85, "epoch": 0, "time": 3.0}]


def test_hf_string_and_float_dicts() -> None:
    records = parse_bytes(
        b"\r 50%|#####     | 3/6 [00:00<00:00, 88.77it/s]\r          \r"
        b"{'loss': '0.6914', 'grad_norm': '3.362', 'learning_rate': '8.889e-06', 'epoch': '0.5'}\n"
        b"{'eval_loss': 0.5, 'eval_runtime': 1.5, 'epoch': 1.0}\n"
    )
    values = {r["name"]: (r["value"], r["epoch"]) for r in records if r.kind == "metric"}
    assert values == {
        "loss": (0.6914, 0.5),
        "grad_norm": (3.362, 0.5),
        "learning_rate": (8.889e-06, 0.5),
        "val_loss": (0.5, 1.0),
        "val_runtime_s": (1.5, 1.0),
    }


def test_pytorch_examples_shapes() -> None:
    data = (
        b"Train Epoch: 1 [640/60000 (1%)]\tLoss: 1.359780\n\n"
        b"Test set: Average loss: 0.0479, Accuracy: 9845/10000 (98%)\n\n"
        b"Epoch: [1][ 10/5005]\tTime  0.312 ( 0.420)\tLoss 6.8813e+00 (6.9052e+00)\tAcc@1   0.00 (  0.14)\n"
        b" * Acc@1 75.123 Acc@5 92.456\n"
        b"| epoch   2 |   200/ 2983 batches | lr 20.00 | ms/batch 45.12 | loss  7.63 | ppl  2054.65\n"
        b"| end of epoch   2 | time: 140.12s | valid loss  5.86 | valid ppl   351.69\n"
    )
    rows = _epoch_values(data)
    assert rows[0] == {
        "test_loss": 0.0479,
        "test_correct": 9845,
        "test_total": 10000,
        "test_accuracy_pct": 98,
        "val_accuracy": 75.123,
        "val_acc5": 92.456,
        "epoch": 1,
        "time": None,
    }
    assert rows[1] == {"val_loss": 5.86, "val_ppl": 351.69, "epoch": 2, "time": 140.12}


def test_generic_name_value_epoch_lines() -> None:
    data = (
        b"MASTER_PORT=12802\nworld_size: 4\n"  # setup output: no metrics
        b"epoch 1 | step 10 | loss=0.9\n"
        b"Epoch [1/10], Loss: 0.8123, Val Acc: 71.5%, time: 12.5s\n"
        b"epoch=2 train_loss=0.7 val_loss=0.75 lr=1e-3 elapsed=11s\n"
    )
    rows = _epoch_values(data)
    assert rows == [
        {"loss": 0.8123, "val_acc_pct": 71.5, "epoch": 1, "time": 12.5},
        {"loss": 0.7, "val_loss": 0.75, "learning_rate": 0.001, "epoch": 2, "time": 11.0},
    ]


def test_printed_timestamps_give_measured_epoch_time() -> None:
    data = b"2024-01-01 10:00:00,000 epoch 1 loss=0.5\n2024-01-01 10:01:30,500 epoch 2 loss=0.4\n"
    rows = _rows(data)
    assert rows[1].epoch_time_s == 90.5 and rows[1].epoch_time_source == "measured"
    assert rows[0].epoch_time_s is None


def test_srun_labels_give_ranks_and_separate_contexts() -> None:
    data = b"0: Epoch 1/1\n1: Epoch 1/1\n1: 5/5 [===] - 2s - loss: 0.3\n0: 5/5 [===] - 3s - loss: 0.2\n"
    rows = _rows(data)
    assert sorted((r.rank, r.values["loss"], r.epoch_time_s) for r in rows) == [(0, 0.2, 3.0), (1, 0.3, 2.0)]


def test_unlabelled_duplicate_streams_are_not_averaged() -> None:
    (row,) = _rows(b"epoch 0: {'accuracy': 0.5}\nepoch 0: {'accuracy': 0.7}\n")
    assert row.values == {"accuracy": 0.5} and row.streams == 2 and row.conflicts == {"accuracy": [0.7]}


def test_gputui_records_on_stdout_with_label() -> None:
    line = format_prefixed(metric("loss", 0.25, epoch=3, time=5.0)).encode()
    records = [r for r in parse_bytes(b"2: " + line + b"\n") if r.kind == "metric"]
    assert len(records) == 1 and records[0]["rank"] == 2 and records[0]["value"] == 0.25


def test_outcome_first_root_cause_wins() -> None:
    data = (
        b'0: Traceback (most recent call last):\n0:   File "t.py", line 1\n'
        b"0: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n"
        b"1: [E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout\n"
        b"slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2024-01-01T00:00:00 ***\n"
    )
    outcome = parse_bytes(data)[-1]
    assert outcome["outcome"] == "oom" and outcome["rank"] == 0
    assert outcome["secondary"] == ["nccl_error", "cancelled"]
    assert "CUDA out of memory" in outcome["evidence"] and outcome["line"] == 3


def test_outcome_plain_traceback_and_truncated() -> None:
    crash = parse_bytes(b'epoch 1 loss=1\nTraceback (most recent call last):\n  File "x"\nValueError: bad\n')
    assert crash[-1]["outcome"] == "crashed_traceback" and crash[-1]["evidence"] == "ValueError: bad"
    cut = parse_bytes(b"\rEpoch 0:  50%|##   | 2/4 [00:01<00:01, 2.0it/s, loss=0.3]")
    assert cut[-1]["outcome"] == "truncated"
    assert parse_bytes(b"hello\n")[-1]["outcome"] == "unknown"


def test_lightning_csv_with_header_rewrite() -> None:
    parser = CsvMetricsParser()
    first = parser.feed(b"epoch,step,train_loss\n0,49,4.8\n")
    parser.reset()  # Lightning rewrote the file with a new header
    second = parser.feed(b"epoch,step,train_loss,val_loss\n0,49,4.8,\n0,99,3.0,2.9\n")
    assert [(r["name"], r["value"], r["step"]) for r in first] == [("loss", 4.8, 49)]
    assert [(r["name"], r["value"], r["scope"]) for r in second] == [
        ("loss", 3.0, "step"),
        ("val_loss", 2.9, "epoch"),
    ]


def _crc_free_record(payload: bytes) -> bytes:
    return struct.pack("<Q", len(payload)) + b"\0" * 4 + payload + b"\0" * 4


def _field(number: int, wire: int, value: bytes) -> bytes:
    key = bytes([number << 3 | wire])
    if wire == 2:
        return key + bytes([len(value)]) + value
    return key + value


def test_tensorboard_simple_value_and_tensor_partial_records() -> None:
    def event(step: int, tag: bytes, value: bytes) -> bytes:
        summary_value = _field(1, 2, tag) + value
        return (
            _field(1, 1, struct.pack("<d", 1700000000.5))
            + bytes([2 << 3])
            + bytes([step])
            + _field(5, 2, _field(1, 2, summary_value))
        )

    simple = event(7, b"train/loss", _field(2, 5, struct.pack("<f", 0.5)))
    tensor = event(
        2, b"epoch_accuracy", _field(8, 2, _field(1, 0, b"\x01") + _field(5, 2, struct.pack("<f", 0.75)))
    )
    data = _crc_free_record(simple) + _crc_free_record(tensor)
    parser = EventFileParser()
    records = parser.feed(data[:10]) + parser.feed(data[10:30]) + parser.feed(data[30:])
    assert [(r["name"], r["value"], r.get("step"), r.get("epoch")) for r in records] == [
        ("loss", 0.5, 7, None),
        ("accuracy", 0.75, None, 2),
    ]
    assert records[0].time == 1700000000.5


def test_parse_command(tmp_path, capsys) -> None:
    log = tmp_path / "slurm-1.out"
    log.write_bytes(b"Epoch 1/1\n5/5 [===] - 2s - loss: 0.3\n")
    assert cli_main(["parse", str(log)]) == 0
    out = capsys.readouterr().out
    assert "loss" in out and "0.3" in out and "outcome: completed" in out
    assert cli_main(["parse", "--json", str(log)]) == 0
    assert '"name":"loss"' in capsys.readouterr().out
    assert cli_main(["parse", str(tmp_path / "missing.out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.out" in err and "Traceback" not in err


def test_log_parser_rejects_unknown_format() -> None:
    try:
        LogParser("nope")
    except ValueError as exc:
        assert "nope" in str(exc)
    else:
        raise AssertionError
    assert io  # keep import used


def test_prose_after_early_stopping_joins_no_epoch() -> None:
    data = (
        b"Epoch 1/9\n10/10 - 1s - loss: 0.5 - accuracy: 0.8\n"
        b"Epoch 2/9\n10/10 - 1s - loss: 0.4 - accuracy: 0.9\nEpoch 2: early stopping\n"
        b"fully_quantize: 0, inference_type: 6\nAccuracy: 0.7647\n"
    )
    rows = _epoch_values(data)
    assert [sorted(r) for r in rows] == [["accuracy", "epoch", "loss", "time"]] * 2
    assert rows[-1]["accuracy"] == 0.9
