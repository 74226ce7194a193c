"""LogText: the job's output as a terminal shows it (progress frames, split chunks, UTF-8, bounds)."""

from __future__ import annotations

from gputui.monitor.logtext import LogText


def feed_all(log: LogText, *chunks: bytes) -> None:
    for i, chunk in enumerate(chunks):
        log.feed(chunk, float(i))


def test_carriage_return_frames_show_only_the_latest_frame():
    log = LogText("out")
    log.feed(b"Epoch 1\n 10%|#  |\r 50%|### |\r 90%|#####|", 1.0)
    assert log.view() == ["Epoch 1", " 90%|#####|"]
    log.feed(b"\r100%|######|\ndone\n", 2.0)
    assert log.view() == ["Epoch 1", "100%|######|", "done"]
    assert log.total_lines == 3
    assert log.current == ""


def test_frames_ended_by_carriage_return_across_chunks_replace_each_other():
    # print(..., end="\r") style: each chunk is one frame followed by \r
    log = LogText("out")
    feed_all(log, b"step 1/3\r", b"step 2/3\r", b"step 3/3\r")
    assert log.view() == ["step 3/3"]
    log.feed(b"\n", 9.0)
    assert log.view() == ["step 3/3"]
    assert log.total_lines == 1


def test_crlf_split_between_chunks_is_one_line():
    log = LogText("out")
    feed_all(log, b"first\r", b"\nsecond\r", b"\r\n")
    assert log.view() == ["first", "second"]


def test_a_line_split_across_chunks_is_joined():
    log = LogText("out")
    feed_all(log, b"loss: 0.", b"25 acc", b"uracy: 0.9\nnext")
    assert log.view() == ["loss: 0.25 accuracy: 0.9", "next"]
    assert log.current == "next"
    assert log.total_lines == 1


def test_utf8_character_split_across_two_feeds_decodes():
    for text in ("température 61 °C\n", "throughput ⚡ 3 it/s\n", "done 🎉\n"):
        data = text.encode("utf-8")
        for cut in range(1, len(data)):
            log = LogText("out")
            log.feed(data[:cut], 0.0)
            log.feed(data[cut:], 1.0)
            assert log.view() == [text.rstrip("\n")], (text, cut)
            assert "\ufffd" not in "".join(log.view())


def test_invalid_bytes_are_replaced_not_raised():
    log = LogText("out")
    log.feed(b"bad \xff byte\n", 0.0)
    assert log.view() == ["bad \ufffd byte"]


def test_lines_are_bounded_and_the_newest_are_kept():
    log = LogText("out", max_lines=10)
    log.feed("".join(f"line {i}\n" for i in range(1000)).encode(), 0.0)
    assert len(log.lines) == 10
    assert log.view() == [f"line {i}" for i in range(990, 1000)]
    assert log.total_lines == 1000


def test_a_long_frame_keeps_its_end():
    log = LogText("out", max_frame=50)
    log.feed(b"x" * 1000 + b"END", 0.0)
    assert len(log.current) == 50
    assert log.current.endswith("END")
    log.feed(b"\n", 1.0)
    assert len(log.lines[-1]) == 50 and log.lines[-1].endswith("END")


def test_reset_marks_the_text_and_starts_a_fresh_frame():
    log = LogText("rank-0.out")
    log.feed(b"old line\nhalf", 0.0)
    log.reset("truncated")
    view = log.view()
    assert view[0] == "old line"
    assert view[1] == "half"  # the unfinished frame is kept as a line
    assert "rank-0.out" in view[2] and "truncated" in view[2]
    assert log.current == ""
    log.feed(b"new\n", 1.0)
    assert log.view()[-1] == "new"
    assert len(log.view()) == 4


def test_reset_drops_a_pending_partial_utf8_sequence():
    log = LogText("out")
    log.feed("é".encode()[:1], 0.0)
    log.reset("rotated")
    log.feed(b"abc\n", 1.0)
    assert log.view()[-1] == "abc"


def test_last_data_time_follows_feeds_and_empty_feeds_are_ignored():
    log = LogText("out")
    assert log.last_data_time is None
    log.feed(b"a", 5.0)
    log.feed(b"", 9.0)
    assert log.last_data_time == 5.0
