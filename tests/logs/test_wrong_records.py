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
