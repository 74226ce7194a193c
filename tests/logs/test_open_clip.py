"""OpenCLIP's progress line (``gputui.logs.formats.open_clip``): samples as the step, every part by label."""

from __future__ import annotations

from gputui.logs import parse_bytes
from gputui.stream.names import STEP_TIMES, canonical_metric_name

NEW = (
    " 0: 2025-01-24,15:34:58 | INFO | Train Epoch: 0 [    4096/10977280 (0%)] Data (t): 2.352 "
    "Batch (t): 4.571, 896.088/s, 56.0055/s/gpu LR: 0.000000 Logit Scale: 14.286 "
    "Contrastive_loss: 8.4170 (8.4170) Loss: 8.4170 (8.4170)\n"
)
OLD = (
    "2022-05-01,10:00:00 | INFO | Train Epoch: 2 [ 25856/100352 (26%)] Loss: 5.1200 (5.3000) "
    "Data (t): 0.101 Batch (t): 0.520, 49.5268/s LR: 0.000500 Logit Scale: 20.100\n"
)


def metrics(text: str) -> list[tuple]:
    return [
        (r.get("name"), r.get("value"), r.get("step"), r.get("epoch"), r.get("rank"))
        for r in parse_bytes(text.encode())
        if r.kind == "metric"
    ]


def test_a_progress_line_gives_every_part_at_its_samples() -> None:
    got = metrics(NEW)
    assert [(n, v) for n, v, *_ in got] == [
        ("data_t", 2.352),
        ("batch_t", 4.571),
        ("samples_per_s", 896.088),
        ("samples_per_second_per_gpu", 56.0055),
        ("learning_rate", 0.0),
        ("logit_scale", 14.286),
        ("contrastive_loss", 8.417),
        ("contrastive_loss_avg", 8.417),
        ("loss", 8.417),
        ("loss_avg", 8.417),
    ]
    assert {(s, e, r) for _, _, s, e, r in got} == {(4096, 0, 0)}  # srun's "0: " is the rank


def test_an_older_release_prints_the_parts_in_another_order() -> None:
    got = {n: v for n, v, *_ in metrics(OLD)}
    assert got == {
        "data_t": 0.101,
        "batch_t": 0.52,
        "samples_per_s": 49.5268,
        "learning_rate": 0.0005,
        "logit_scale": 20.1,
        "loss": 5.12,
        "loss_avg": 5.3,
    }
    assert canonical_metric_name("batch_t") in STEP_TIMES  # the step time of the step-time pane
