"""Property tests: no input crashes the parser; cutting a log yields a prefix of its records; the read
sizes do not change the records. Clock fields (``time``, measured epoch times) are left out."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from log_testdata import NAMES, log_bytes

from gputui.logs import LogParser, parse_bytes
from gputui.logs.epochs import EpochTable

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PIECES = [
    b"\r",
    b"\n",
    b"\x08",
    b"\x1b[1m",
    b"\x1b[A",
    b"\xff",
    b"\xe2\x94",
    b"Epoch 1/3\n",
    b"Epoch ",
    b"3/10 [====] - 2s - loss: 0.5 - acc: 0.9",
    b" - ETA: 3s",
    b"Epoch 0:  50%|#####| 2/4 [00:01<00:01, 2.0it/s, loss=0.3, v_num=1]",
    b"{'loss': 0.5, 'epoch': 0.1}",
    b"{'eval_loss': '0.4', 'epoch': '1.0'}",
    b"epoch 3: {'accuracy': 0.5}",
    b"Train Epoch: 1 [640/60000 (1%)]\tLoss: 0.3",
    b"Test set: Average loss: 0.1, Accuracy: 9/10 (90%)",
    b"Epoch: [0][ 10/50]\tTime 0.1 (0.2)\tLoss 1e+00 (2e+00)",
    b" * Acc@1 75.0 Acc@5 90.0",
    b"| end of epoch   1 | time: 1.5s | valid loss  5.86 |",
    b"TEST in epoch2, loss = 1.5, acc = 40%",
    b"Results - Epoch: 2\nTraining Loss 1.0 \tValidation Loss 2.0\n",
    b"3: ",
    b'@gputui {"v":1,"kind":"metric","name":"loss","value":1,"time":1}',
    b'Traceback (most recent call last):\n  File "x"\nRuntimeError: CUDA out of memory\n',
    b"*** JOB 1 ON n CANCELLED AT 2020-01-01T00:00:00 DUE TO TIME LIMIT ***",
    b"0.123456",
    b"=",
    b": ",
    b"%",
]
NOISY = st.lists(st.one_of(st.sampled_from(PIECES), st.binary(max_size=12)), max_size=40).map(b"".join)
SAMPLES = [log_bytes(n)[:6000] for n in NAMES] + [log_bytes(n)[-6000:] for n in NAMES]


def _key(record) -> tuple:
    fields = {k: v for k, v in record.fields.items() if k != "time"}
    return record.kind, tuple(sorted((k, repr(v)) for k, v in fields.items()))


def _stream(data: bytes, sizes: list[int] | None = None, finish: bool = True) -> list[tuple]:
    parser = LogParser()
    out = []
    pos = 0
    for size in sizes or []:
        out += parser.feed(data[pos : pos + size], now=0.0)
        pos += size
    out += parser.feed(data[pos:], now=0.0)
    if finish:
        out += parser.finish(now=0.0)
    return [_key(r) for r in out]


@SETTINGS
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    records = parse_bytes(data)
    EpochTable(measure=True).add_all(records)
    assert records[-1].get("event") == "outcome"


@SETTINGS
@given(NOISY)
def test_log_like_noise_never_crashes(data: bytes) -> None:
    records = parse_bytes(data)
    table = EpochTable()
    table.add_all(records)
    table.rows()


@SETTINGS
@given(st.one_of(NOISY, st.sampled_from(SAMPLES)), st.data())
def test_a_cut_log_gives_a_prefix_of_the_records(data: bytes, draw: st.DataObject) -> None:
    cut = draw.draw(st.integers(0, len(data)))
    full = _stream(data, finish=False)
    part = _stream(data[:cut], finish=False)
    assert full[: len(part)] == part


@SETTINGS
@given(st.one_of(NOISY, st.sampled_from(SAMPLES)), st.lists(st.integers(0, 700), max_size=30))
def test_read_sizes_do_not_change_the_records(data: bytes, sizes: list[int]) -> None:
    assert _stream(data, sizes) == _stream(data)


def test_whole_logs_byte_by_byte_chunks_match() -> None:
    for name in ("hf_trainer_final_dicts_peft", "tqdm_only_time_limit", "cesga_fsdp_mnist_2rank"):
        data = log_bytes(name)
        assert _stream(data, [1] * len(data)) == _stream(data)


def test_a_value_cut_mid_number_is_never_emitted() -> None:
    parser = LogParser()
    assert parser.feed(b"Epoch 1/2\n10/10 [====] - 3s - loss: 0.12") == []
    assert "loss: 0.12" in parser.tail
    records = parser.feed(b"34 - acc: 0.5\n")
    assert [r["value"] for r in records if r["name"] == "loss"] == [0.1234]
