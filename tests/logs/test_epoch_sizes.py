"""images/s in the per-epoch view: sample and step counters of the log, ``--batch-size``, and what is
not a batch size."""

from __future__ import annotations

from gputui.cli import main as cli_main
from gputui.logs import LogParser
from gputui.logs.epochs import EpochTable


def _live_rows(lines_at: list[tuple[float, bytes]], **kw):
    """Feed lines as a follower would, each at its own read time; measured epoch times."""
    parser = LogParser()
    table = EpochTable(measure=True, **kw)
    for now, line in lines_at:
        table.add_all(parser.feed(line, now=now))
    table.add_all(parser.finish(now=lines_at[-1][0]))
    return table.rows()


def _mnist_epoch(epoch: int) -> list[bytes]:
    return [
        f"Train Epoch: {epoch} [0/60000 (0%)]\tLoss: 2.30\n".encode(),
        f"Train Epoch: {epoch} [59520/60000 (99%)]\tLoss: 0.{epoch}1\n".encode(),
        b"Test set: Average loss: 0.1162, Accuracy: 9619/10000 (96%)\n",
    ]


def test_mnist_sample_counter_gives_images_per_second_when_following() -> None:
    lines = _mnist_epoch(1) + _mnist_epoch(2) + _mnist_epoch(3)
    rows = _live_rows([(100.0 + 20.0 * (i // 3), line) for i, line in enumerate(lines)])
    assert [r.epoch for r in rows] == [1, 2, 3]
    assert [r.samples for r in rows] == [60000, 60000, 60000]
    assert rows[0].epoch_time_s is None  # no earlier epoch end to measure from
    assert [(r.epoch_time_s, r.epoch_time_source) for r in rows[1:]] == [(20.0, "measured")] * 2
    assert [r.images_per_s for r in rows[1:]] == [3000.0, 3000.0]


def _imagenet_epoch(epoch: int) -> list[bytes]:
    return [
        f"Epoch: [{epoch}][   0/5005]\tTime  3.1 ( 3.1)\tLoss 6.9e+00 (6.9e+00)\tAcc@1 0.0 (0.0)\n".encode(),
        f"Epoch: [{epoch}][5000/5005]\tTime  0.3 ( 0.4)\tLoss 4.1e+00 (4.5e+00)\tAcc@1 9.0 (7.1)\n".encode(),
        b"Test: [ 0/196]\tTime 1.2 (1.2)\tLoss 3.9e+00 (3.9e+00)\tAcc@1 12.0 (12.0)\n",
        b" * Acc@1 12.500 Acc@5 31.250\n",
    ]


def test_imagenet_batch_counter_times_batch_size() -> None:
    lines = _imagenet_epoch(0) + _imagenet_epoch(1)
    timed = [(0.0 + 1000.0 * (i // 4), line) for i, line in enumerate(lines)]
    rows = _live_rows(timed, batch_size=256)
    assert [r.epoch for r in rows] == [0, 1]
    assert [r.steps for r in rows] == [5005, 5005]  # the training loop's [i/N], not Test's [i/196]
    assert rows[1].epoch_time_s == 1000.0
    assert rows[1].images_per_s == round(256 * 5005 / 1000.0, 3)
    assert _live_rows(timed)[1].images_per_s is None  # steps without a batch size: no images/s


def test_parse_batch_size_option(tmp_path, capsys) -> None:
    log = tmp_path / "slurm-7.out"
    log.write_bytes(
        b"Epoch 1/2\n94/94 - 2s - loss: 0.90 - accuracy: 0.70 - 2s/epoch - 21ms/step\n"
        b"Epoch 2/2\n94/94 - 2s - loss: 0.60 - accuracy: 0.80 - 2s/epoch - 21ms/step\n"
    )
    assert cli_main(["parse", str(log)]) == 0
    header, first = capsys.readouterr().out.splitlines()[1:3]
    assert header.split()[:3] == ["epoch", "time_s", "img/s"]
    assert first.split()[:3] == ["1", "2", "-"]
    assert cli_main(["parse", "--batch-size", "32", str(log)]) == 0
    first = capsys.readouterr().out.splitlines()[2]
    assert first.split()[:3] == ["1", "2", "1504"]  # 32 × 94 steps / 2 s


def test_a_printed_batch_size_is_not_a_metric() -> None:
    rows = _live_rows(
        [
            (0.0, b"Epoch 1/1\n"),
            (1.0, b"10/10 - 1s - loss: 0.5\n"),
            (2.0, b"Training with batch size: 128 and 2 GPUs\n"),
            (3.0, b"per_device_train_batch_size = 8\n"),
        ]
    )
    assert rows[0].values == {"loss": 0.5}
