"""Log reading: behaviour mutation testing found unchecked (docs/testing.md, "Mutation testing").

A log deleted and written again, catch-up that starts after the first read, ``follow`` and its stop
callback, TensorBoard event files as TensorFlow and tensorboardX write them (double tensors, step 0,
a corrupt event, bytes arriving in small pieces), and ``parse_stream``'s default read size.
"""

from __future__ import annotations

import io
import struct
import threading

from tensorboardX import SummaryWriter
from tensorboardX.proto.event_pb2 import Event
from tensorboardX.proto.summary_pb2 import Summary
from tensorboardX.proto.tensor_pb2 import TensorProto

from gputui.logs import parse_bytes
from gputui.logs.files.tensorboard import EventFileParser
from gputui.logs.follower import LogFollower
from gputui.logs.parser import parse_stream

DEADLINE = 10.0


def _losses(records) -> list[float]:
    return [r["value"] for r in records if r.kind == "metric" and r["name"] == "loss"]


# --------------------------------------------------------------------------- follower


def test_a_log_deleted_and_written_again_is_read_from_its_start(tmp_path) -> None:
    path = tmp_path / "slurm-1.out"
    path.write_bytes(b"old run output\n")
    follower = LogFollower(path, from_end=True)  # attach: the existing content is history
    assert follower.poll() == []
    path.unlink()
    assert [r["message"] for r in follower.poll()] == [
        "slurm-1.out was deleted: showing what is still written to it, and a new slurm-1.out if one appears"
    ]
    path.write_bytes(b"epoch 1 , loss = 0.5\n")  # the job was requeued: a new file from byte 0
    assert _losses(follower.poll()) == [0.5]


def test_catch_up_after_the_first_read_shows_every_byte_in_order(tmp_path) -> None:
    """Only a follower that starts behind shows the file's tail first; one already showing the log
    gives the pane every byte when it falls behind later."""
    path = tmp_path / "log"
    path.write_bytes(b"start\n")
    shown: list[bytes] = []
    follower = LogFollower(path, max_bytes=4096, on_data=shown.append)
    follower.poll()
    burst = b"".join(b"line %06d\n" % i for i in range(40_000))  # 480 KB: more than the 256 KiB tail
    with open(path, "ab") as f:
        f.write(burst)
    while follower.file.offset < path.stat().st_size:
        follower.poll()
    assert b"".join(shown) == b"start\n" + burst


def test_follow_yields_records_and_stops_when_asked(tmp_path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"epoch 1 , loss = 0.5\n")
    follower = LogFollower(path)
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 3

    got: list = []
    worker = threading.Thread(target=lambda: got.extend(follower.follow(0.01, stop)), daemon=True)
    worker.start()
    worker.join(DEADLINE)
    assert not worker.is_alive(), "follow() did not stop"
    assert _losses(got) == [0.5] and len(asked) == 4

    again = LogFollower(path)  # no stop callback: follows until the caller stops iterating
    assert _losses([next(iter(again.follow(0.01)))]) == [0.5]


# --------------------------------------------------------------------------- TensorBoard event files


def _framed(payload: bytes) -> bytes:
    """One TFRecord (CRCs are not checked by the reader)."""
    return struct.pack("<Q", len(payload)) + b"\0" * 4 + payload + b"\0" * 4


def _tensor_event(tag: str, tensor: TensorProto, step: int | None = None) -> bytes:
    event = Event(wall_time=1700000000.0, summary=Summary(value=[Summary.Value(tag=tag, tensor=tensor)]))
    if step is not None:
        event.step = step
    return _framed(event.SerializeToString())


def test_float64_scalars_from_double_tensors() -> None:
    """TensorFlow writes a float64 ``tf.summary.scalar`` as a DT_DOUBLE tensor: ``double_val`` or
    ``tensor_content``; step 0 is the protobuf default and is left out of the event."""
    data = (
        _tensor_event("loss", TensorProto(dtype=2, double_val=[0.25]))
        + _tensor_event("loss", TensorProto(dtype=2, tensor_content=struct.pack("<d", 0.125)), step=3)
        + _tensor_event("loss", TensorProto(dtype=1, tensor_content=struct.pack("<f", 0.5)), step=4)
    )
    parser = EventFileParser()
    got = [(r["name"], r["value"], r.get("step")) for r in parser.feed(data)]
    assert got == [("loss", 0.25, 0), ("loss", 0.125, 3), ("loss", 0.5, 4)]
    assert parser.skipped == 0


def test_a_corrupt_event_is_skipped_and_reading_goes_on() -> None:
    good = _tensor_event("loss", TensorProto(dtype=2, double_val=[1.0]), step=1)
    cut_varint = _framed(b"\x10\x80")  # field 2 (step): a varint whose last byte is missing
    parser = EventFileParser()
    got = parser.feed(good + cut_varint + good)
    assert [(r["value"], r.get("step")) for r in got] == [(1.0, 1), (1.0, 1)]
    assert parser.skipped == 1


def test_an_event_file_read_in_small_pieces_as_it_grows(tmp_path) -> None:
    writer = SummaryWriter(logdir=str(tmp_path))
    for step in range(1, 21):
        writer.add_scalar("loss", 1.0 / step, step)
    writer.close()
    (path,) = tmp_path.glob("events.out.tfevents.*")
    data = path.read_bytes()
    whole = [(r["name"], r["value"], r["step"]) for r in EventFileParser().feed(data)]
    assert len(whole) == 20 and whole[0] == ("loss", 1.0, 1)
    for piece in (7, 13, 50):
        parser = EventFileParser()
        got = []
        for i in range(0, len(data), piece):
            got += parser.feed(data[i : i + piece])
        assert [(r["name"], r["value"], r["step"]) for r in got] == whole, piece
        assert parser.skipped == 0


# --------------------------------------------------------------------------- parse_stream


def test_parse_stream_with_its_default_read_size_reads_everything() -> None:
    log = b"".join(b"epoch %d , loss = 0.%d\n" % (i, i) for i in range(1, 6))
    streamed = [r.to_json_dict() for r in parse_stream(io.BytesIO(log))]
    assert len(_losses(parse_bytes(log))) == 5
    assert streamed and len(streamed) == len(parse_bytes(log))


# --------------------------------------------------------------------------- generic lines, outcome


def test_an_abbreviated_step_at_the_end_of_the_line() -> None:
    for line in (b"loss: 0.5, step: 12k\n", b"loss=0.5 step=12k\n"):
        got = [(r["name"], r["value"], r["step"]) for r in parse_bytes(line) if r.kind == "metric"]
        assert got == [("loss", 0.5, 12000)], line


def test_an_abbreviated_step_before_the_pairs_is_not_part_of_a_name() -> None:
    """``step 12k loss=0.5``: the ``k`` is the step's (12,000), the metric is ``loss`` (was ``k_loss``)."""
    for line, step in ((b"step 12k loss=0.5 acc=0.9\n", 12000), (b"Step 3M loss: 0.5, acc: 0.9\n", 3000000)):
        got = [(r["name"], r["value"], r["step"]) for r in parse_bytes(line) if r.kind == "metric"]
        assert got == [("loss", 0.5, step), ("accuracy", 0.9, step)], line


def test_a_survived_oom_warning_names_its_rank_only_when_the_line_has_one() -> None:
    labelled = b"0: epoch 1 loss=0.5\n1: WARNING: CUDA out of memory. Tried to allocate 2 GiB; retrying\n"
    plain = b"epoch 1 loss=0.5\nWARNING: CUDA out of memory. Tried to allocate 2 GiB; retrying\n"
    (warning,) = [r for r in parse_bytes(labelled) if r.kind == "event" and r["event"] == "warning"]
    assert warning["rank"] == 1 and warning["line"] == 2
    (warning,) = [r for r in parse_bytes(plain) if r.kind == "event" and r["event"] == "warning"]
    assert "rank" not in warning.fields and warning["line"] == 2


def test_a_long_warning_is_cut_to_200_characters_in_its_message() -> None:
    text = "WARNING: CUDA out of memory, retrying; " + "x" * 400
    (warning,) = [
        r for r in parse_bytes(text.encode() + b"\n") if r.kind == "event" and r["event"] == "warning"
    ]
    assert warning["message"] == "warning: " + text[:200] and warning["evidence"] == text


def test_records_printed_by_the_training_keep_their_own_rank() -> None:
    line = b'@gputui {"v":1,"kind":"metric","time":1,"name":"loss","value":0.5%s}\n'
    labelled = parse_bytes(b"3: " + line % b',"rank":5')
    assert [r["rank"] for r in labelled if r.kind == "metric"] == [5]
    assert [r["rank"] for r in parse_bytes(b"3: " + line % b"") if r.kind == "metric"] == [3]
    (plain,) = [r for r in parse_bytes(line % b"") if r.kind == "metric"]
    assert "rank" not in plain.fields


def test_an_event_with_a_long_tag_is_read() -> None:
    tag = "validation/per_class_accuracy_of_" + "_".join(["class"] * 20)  # events of 100+ bytes are usual
    data = _tensor_event(tag, TensorProto(dtype=2, double_val=[0.75]), step=9)
    assert len(data) > 100
    parser = EventFileParser()
    assert [(r["name"], r["value"], r["step"]) for r in parser.feed(data)] == [(tag, 0.75, 9)]
