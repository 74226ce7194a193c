"""Record construction and validation (gputui.stream.records, gputui.stream.names)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gputui.stream import records
from gputui.stream.names import canonical_metric_name, is_valid_metric_name
from gputui.stream.records import RecordError, record_from_json_dict


def test_metric_record_round_trips_through_json_dict() -> None:
    rec = records.metric("val_acc", 0.91, step=120, epoch=3, epoch_base=1, rank=0, job="42", time=1000.5)
    obj = rec.to_json_dict()
    assert obj == {
        "v": 1,
        "kind": "metric",
        "time": 1000.5,
        "name": "val_accuracy",
        "value": 0.91,
        "step": 120,
        "epoch": 3,
        "epoch_base": 1,
        "rank": 0,
        "job": "42",
        "source": "gputui",
        "time_source": "emitted",
    }
    assert record_from_json_dict(obj) == rec


def test_step_is_optional_and_none_fields_are_left_out() -> None:
    obj = records.metric("loss", 1.5, time=1.0).to_json_dict()
    assert "step" not in obj and "epoch" not in obj and "rank" not in obj


@pytest.mark.parametrize("value, tag", [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")])
def test_nonfinite_metric_values_are_written_as_null_and_restored(value: float, tag: str) -> None:
    obj = records.metric("loss", value, time=1.0).to_json_dict()
    assert obj["value"] is None and obj["nonfinite"] == tag
    back = record_from_json_dict(obj)["value"]
    assert (math.isnan(back) and math.isnan(value)) or back == value


def test_metric_without_time_gets_the_read_time_and_says_so() -> None:
    rec = record_from_json_dict({"v": 1, "kind": "metric", "name": "loss", "value": 2}, read_time=77.0)
    assert rec.time == 77.0 and rec["time_source"] == "read"


def test_unknown_fields_and_newer_versions_are_kept() -> None:
    rec = record_from_json_dict({"v": 7, "kind": "host", "time": 5, "host": "n1", "future_field": [1, 2]})
    assert rec.v == 7 and rec["future_field"] == [1, 2]


@pytest.mark.parametrize(
    "obj, problem",
    [
        ([], "not a JSON object"),
        ({"kind": "gpu"}, "schema version"),
        ({"v": 1, "kind": "weather", "time": 1}, "unknown kind"),
        ({"v": 1, "kind": "host", "time": "noon", "host": "n"}, "time"),
        ({"v": 1, "kind": "gpu", "time": 1, "host": "n"}, "gpu_id"),
        ({"v": 1, "kind": "metric", "time": 1, "name": "bad:name", "value": 1}, "metric name"),
        ({"v": 1, "kind": "metric", "time": 1, "name": "loss", "value": None}, "nonfinite"),
        ({"v": 1, "kind": "metric", "time": 1, "name": "loss", "value": 1, "step": -1}, "step"),
        ({"v": 1, "kind": "metric", "time": 1, "name": "loss", "value": True}, "wrong type"),
        ({"v": 1, "kind": "event", "time": 1, "event": "x", "rank": "0"}, "rank"),
    ],
)
def test_invalid_records_say_what_is_wrong(obj: object, problem: str) -> None:
    with pytest.raises(RecordError, match=problem):
        record_from_json_dict(obj)


def test_gpu_sample_marks_missing_fields_with_a_reason_not_zero() -> None:
    rec = records.gpu_sample(
        host="node1",
        gpu_id="GPU-1",
        vendor="nvidia",
        source="nvml",
        util_gpu_pct=50,
        missing={"power_w": "not_supported"},
    )
    assert rec["power_w"] is None and rec["missing"] == {"power_w": "not_supported"}
    with pytest.raises(RecordError, match="reason"):
        records.gpu_sample(host="n", gpu_id="g", vendor="amd", source="sysfs", missing={"temp_c": "dunno"})


def test_event_vocabulary_is_enforced() -> None:
    assert records.event("node_lost", message="node2 stopped answering", node="node2")["node"] == "node2"
    with pytest.raises(RecordError):
        records.event("exploded")
    with pytest.raises(RecordError):
        records.event("outcome", outcome="meh")
    assert records.event("outcome", outcome="oom")["outcome"] == "oom"


@pytest.mark.parametrize(
    "printed, canonical",
    [
        ("acc", "accuracy"),
        ("val_acc", "val_accuracy"),
        ("Loss", "loss"),
        ("train_loss", "loss"),
        ("train/loss", "loss"),
        ("eval_loss", "val_loss"),
        ("validation_accuracy", "val_accuracy"),
        ("lr", "learning_rate"),
        ("test_acc", "test_accuracy"),
        ("Learning Rate", "learning_rate"),
        ("epoch_time", "epoch_time_s"),
        ("img/s", "images_per_s"),
        ("psnr", "psnr"),
        ("train_samples_per_second", "samples_per_s"),
        ("top-1 (%)", "top-1"),
        ("val", "val"),
    ],
)
def test_alias_table(printed: str, canonical: str) -> None:
    assert canonical_metric_name(printed) == canonical
    assert is_valid_metric_name(canonical)


def test_metric_names_are_limited_to_mlflow_characters() -> None:
    assert is_valid_metric_name("train/loss 2.x-y")
    assert not is_valid_metric_name("loss:1")
    assert not is_valid_metric_name("")
    assert not is_valid_metric_name("x" * 251)
    assert is_valid_metric_name(canonical_metric_name("λ/Δ::" + "y" * 400))


@given(st.text(max_size=60))
def test_canonical_names_are_valid_and_a_fixed_point(raw: str) -> None:
    name = canonical_metric_name(raw)
    assert is_valid_metric_name(name)
    assert canonical_metric_name(name) == name


def test_reader_applies_the_alias_table_and_keeps_the_printed_name() -> None:
    rec = record_from_json_dict({"v": 1, "kind": "metric", "time": 1, "name": "val_acc", "value": 0.5})
    assert rec["name"] == "val_accuracy" and rec["raw_name"] == "val_acc"


def test_every_example_in_the_schema_doc_is_a_valid_record() -> None:
    import json
    import re
    from pathlib import Path

    from gputui.stream.io import records_from_json_dict

    doc = (Path(__file__).parents[1] / "docs" / "records.md").read_text()
    blocks = re.findall(r"```json\n(.*?)```", doc, flags=re.S)
    objects = []
    for block in blocks:
        text = block.replace("\n ", " ")  # examples are wrapped for reading
        objects += [json.loads(line) for line in text.splitlines() if line.strip()]
    assert len(objects) >= 6
    for obj in objects:
        assert records_from_json_dict(obj)
