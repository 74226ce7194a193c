"""The normaliser's frames of real log lines, as fixed text (not compared with the module's own rules).

test_fast_paths.py checks the fast path against a reference built from ``normalize.clean``, so a wrong
rule in ``clean``/``apply_backspaces`` would pass there. Here the expected frames are written out: what a
terminal shows for each ``\\r``-separated frame, backspaces moving the cursor left (later characters
overwrite, nothing is erased). Every input is fed whole, in small pieces, and through the frame-by-frame
path, which must all give the same fixed frames.
"""

from __future__ import annotations

import pytest
from log_testdata import log_bytes

from gputui.logs.normalize import Normalizer


def line_of(name: str, number: int) -> bytes:
    """Physical line ``number`` (from 1) of a test log, with its newline."""
    return log_bytes(name).split(b"\n")[number - 1] + b"\n"


def frames(data: bytes, chunk: int | None) -> list[tuple[int, str]]:
    """The frames of ``data`` fed in pieces of ``chunk`` bytes (None: at once)."""
    n = Normalizer()
    step = chunk or len(data)
    out = [f for i in range(0, len(data), step) for f in n.feed(data[i : i + step])]
    return out + n.finish()


def slow_frames(data: bytes) -> list[tuple[int, str]]:
    """The frame-by-frame path (the fast path's reference) on ``data``, which ends with a newline."""
    return Normalizer()._frames_slow(data, False)


def assert_frames(data: bytes, want: list[str]) -> None:
    """Every way of reading ``data`` (one line) gives the frames ``want``, all on line 1."""
    expected = [(1, text) for text in want]
    for chunk in (None, 1, 7, 4096):
        assert frames(data, chunk) == expected, chunk
    assert slow_frames(data) == expected


KERAS1 = line_of("keras1_cifar10_samples_bs", 37)  # Keras 2 Progbar: text + \b * width + \r, 391 times


def test_keras_progbar_line_with_backspaces():
    got = [text for _, text in frames(KERAS1, None)]
    assert len(got) == 391
    assert got[:3] == [
        "  128/50000 [..............................] - ETA: 14:55 - loss: 2.9038 - acc: 0.1328",
        "  256/50000 [..............................] - ETA: 7:39 - loss: 2.8811 - acc: 0.1523",
        "  384/50000 [..............................] - ETA: 5:13 - loss: 2.7917 - acc: 0.1641",
    ]
    assert got[-2:] == [
        "49920/50000 [============================>.] - ETA: 0s - loss: 1.8971 - acc: 0.3390",
        "50000/50000 [==============================] - 27s 547us/step - loss: 1.8970 - acc: 0.3390",
    ]
    assert not [t for t in got if "\b" in t or not t.endswith(tuple("0123456789"))]
    assert [text for _, text in slow_frames(KERAS1)] == got
    for chunk in (1, 7, 4096):
        assert frames(KERAS1, chunk) == [(1, text) for text in got]


def test_keras_progbar_line_keeps_its_line_number_in_the_whole_log():
    data = log_bytes("keras1_cifar10_samples_bs")
    by_line = [f for f in frames(data, 7777) if f[0] in (36, 37, 38)]
    assert by_line[0] == (36, "Epoch 1/10") and by_line[-1] == (38, "Epoch 2/10")
    assert by_line[-2] == (
        37,
        "50000/50000 [==============================] - 27s 547us/step - loss: 1.8970 - acc: 0.3390",
    )
    assert len(by_line) == 393


def test_tqdm_line_ending_in_slurms_cancel_message():
    data = line_of("tqdm_only_time_limit", 24)
    assert_frames(
        data,
        [
            "  0%|          | 0/50 [00:00<?, ?it/s]",
            "  2%|▏         | 1/50 [10:29<8:34:20, 629.80s/it]",
            "  4%|▍         | 2/50 [20:57<8:23:26, 629.29s/it]",
            "  6%|▌         | 3/50 [31:28<8:13:11, 629.61s/it]",
            "  8%|▊         | 4/50 [41:58<8:02:55, 629.90s/it]",
            " 10%|█         | 5/50 [52:28<7:52:24, 629.87s/it]",
            " 12%|█▏        | 6/50 [1:02:58<7:41:48, 629.73s/it]",
            " 14%|█▍        | 7/50 [1:13:27<7:31:14, 629.65s/it]",
            " 16%|█▌        | 8/50 [1:23:54<7:20:08, 628.77s/it]",
            " 18%|█▊        | 9/50 [1:34:21<7:09:26, 628.44s/it]",
            " 20%|██        | 10/50 [1:44:50<6:58:54, 628.37s/it]",
            " 22%|██▏       | 11/50 [1:55:19<6:48:37, 628.66s/it]slurmstepd: error: *** JOB 42189 ON "
            "clr1247 CANCELLED AT 2022-04-14T16:17:16 DUE TO TIME LIMIT ***",
        ],
    )


def test_tqdm_line_with_utf8_blocks():
    assert_frames(
        line_of("deepspeed_1gpu_slurm_cancelled", 21),
        [
            "Loading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]",
            "Loading checkpoint shards:  50%|█████     | 1/2 [00:24<00:24, 24.02s/it]",
            "Loading checkpoint shards: 100%|" + "█" * 10 + "| 2/2 [00:31<00:00, 14.56s/it]",
            "Loading checkpoint shards: 100%|" + "█" * 10 + "| 2/2 [00:31<00:00, 15.98s/it]",
        ],
    )


def test_keras3_bar_with_ansi_and_backspaces():
    data = (
        b"\r\x1b[1m1/5\x1b[0m \x1b[32m\xe2\x94\x81\xe2\x94\x81\x1b[0m \x1b[1m0s\x1b[0m 10ms/step"
        b" - accuracy: 0.2500 - loss: 2.0400" + b"\x08" * 71 + b"\r\x1b[1m5/5\x1b[0m \x1b[32m\xe2\x94\x81"
        b"\xe2\x94\x81\x1b[0m\x1b[37m\x1b[0m \x1b[1m3s\x1b[0m 10ms/step - accuracy: 0.2506 - loss: 2.0408\n"
    )
    assert_frames(
        data,
        [
            "1/5 ━━ 0s 10ms/step - accuracy: 0.2500 - loss: 2.0400",
            "5/5 ━━ 3s 10ms/step - accuracy: 0.2506 - loss: 2.0408",
        ],
    )


@pytest.mark.parametrize(
    ("data", "want"),
    [
        # conda's spinner as a terminal receives it: each glyph + space, then two backspaces
        (
            b"Solving environment: / \x08\x08- \x08\x08\\ \x08\x08| \x08\x08done\n",
            ["Solving environment: done"],
        ),
        # a shorter rewrite leaves the old tail on screen: backspaces do not erase
        (b"ETA: 14:55\x08\x08\x08\x08\x087:39\n", ["ETA: 7:395"]),
        # more backspaces than text stop at the first column
        (b"ab\x08\x08\x08\x08cd - loss: 0.5\n", ["cd - loss: 0.5"]),
        # CRLF line ends and a bar redrawn with \r: no empty frames, nothing lost
        (b"Epoch 1/10\r\n", ["Epoch 1/10"]),
        (
            b"\r 50%|#####     | 5/10\r100%|##########| 10/10\r\n",
            [" 50%|#####     | 5/10", "100%|##########| 10/10"],
        ),
    ],
)
def test_backspace_and_carriage_return_rules(data: bytes, want: list[str]):
    assert_frames(data, want)
