"""The speed-ups of the log parser give the results of the plain rules they replace: the normaliser's
per-line path, the outcome gate, the generic parser's per-shape plans, the HF dict fast path, and the
(documented) thinning of progress-bar step records."""

from __future__ import annotations

import ast
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from log_testdata import NAMES, log_bytes
from test_properties import NOISY, SAMPLES, _key

from gputui.logs import LogParser
from gputui.logs.base import Context
from gputui.logs.formats.generic import DIGITS, GenericParser, plan_of
from gputui.logs.formats.hf import _literal_dict
from gputui.logs.normalize import ELLIPSIS, Normalizer, clean
from gputui.logs.outcome import _KEY_RE, _KEYS, TRACEBACK, gate
from gputui.logs.thinning import ThinningNormalizer

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PIECES = [b"\r", b"\n", b"\r\n", b"\x08", b"\x08\x08\r", b"\x1b[1m", b"\x1b", b"[0m", b"\xff", b"\xe2\x94"]
PIECES += [b"\x81", b"a", b" ", b"\t", b"\x0b", b"\x1c", b"\xc2\x85", b"\xc2\xa0", b"x" * 40, b"OOM"]
BYTES = st.lists(st.sampled_from(PIECES), max_size=60).map(b"".join)


def _reference(data: bytes, max_frame: int) -> list[tuple[int, str]]:
    """The rules of docs/log-formats.md applied frame by frame to the whole input."""
    out, head = [], max_frame // 2
    for number, raw in enumerate(data.split(b"\n"), 1):
        for part in raw.split(b"\r"):
            if len(part) > max_frame:
                part = part[:head] + ELLIPSIS + part[-(max_frame - head) :]
            text = clean(part.decode("utf-8", "replace"))
            if text:
                out.append((number, text))
    return out


@SETTINGS
@given(st.one_of(BYTES, NOISY), st.lists(st.integers(0, 50), max_size=6), st.sampled_from([16, 40, 4096]))
def test_normaliser_matches_the_frame_by_frame_rules(data: bytes, sizes: list[int], max_frame: int) -> None:
    normalizer, frames, pos = Normalizer(max_frame), [], 0
    for size in sizes:
        frames += normalizer.feed(data[pos : pos + size])
        pos += size
    frames += normalizer.feed(data[pos:]) + normalizer.finish()
    assert frames == _reference(data, max_frame)


def test_normaliser_matches_the_rules_on_every_log() -> None:
    for name in NAMES:
        data = log_bytes(name)
        normalizer = Normalizer(200)
        frames = [f for i in range(0, len(data), 7777) for f in normalizer.feed(data[i : i + 7777])]
        assert frames + normalizer.finish() == _reference(data, 200), name


def test_gate_finds_every_outcome_key() -> None:
    for key in (*_KEYS, TRACEBACK):
        for text in (key, f"x {key} y", f"{key}{key}"):
            assert gate(text.encode()), text


@SETTINGS
@given(
    st.lists(st.sampled_from([*_KEYS, TRACEBACK, "x", " ", "Epoch ", "\xe9", "oom", "C", "k"]), max_size=12)
)
def test_gate_is_a_superset_of_the_outcome_checks(pieces: list[str]) -> None:
    text = "".join(pieces)
    if _KEY_RE.search(text) or TRACEBACK in text:
        assert gate(text.encode())


def _records(data: bytes, gated: bool, sizes: int = 997) -> list[tuple]:
    parser = LogParser()
    if not gated:
        parser.normalizer = ThinningNormalizer()  # no gate: every frame goes through the outcome checks
    out = []
    for i in range(0, len(data), sizes):
        out += parser.feed(data[i : i + sizes], now=0.0)
    return [_key(r) for r in out + parser.finish(now=0.0)]


def test_outcome_gate_changes_no_record() -> None:
    for name in NAMES:
        data = log_bytes(name)
        assert _records(data, True) == _records(data, False), name


@SETTINGS
@given(st.one_of(NOISY, st.sampled_from(SAMPLES)))
def test_outcome_gate_changes_no_record_on_noise(data: bytes) -> None:
    assert _records(data, True, 13) == _records(data, False, 13)


def _generic_lines() -> list[str]:
    lines = []
    for name in NAMES:
        for raw in log_bytes(name).split(b"\n"):
            text = raw.decode("utf-8", "replace").strip()
            if text and len(text) < 300 and any(c.isdigit() for c in text) and "\r" not in text:
                lines.append(text)
    return lines[::7]


GENERIC_LINES = _generic_lines()


@SETTINGS
@given(st.sampled_from(GENERIC_LINES), st.randoms(use_true_random=False))
def test_a_plan_depends_only_on_the_shape(line: str, rnd: random.Random) -> None:
    other = "".join(rnd.choice("0123456789") if c in "0123456789" else c for c in line)
    assert other.encode().translate(DIGITS) == line.encode().translate(DIGITS)
    assert plan_of(other) == plan_of(line)
    warm, cold = Context(epoch=3), Context(epoch=3)
    warm.plans[line.encode().translate(DIGITS)] = plan_of(line)
    parse = GenericParser().parse
    assert parse(other, warm, 0.0) == parse(other, cold, 0.0)


KEYS = ["'loss'", "'a b'", "''", "'x\\\\y'", "'é'", "'a,b'", "'}'", "'k: v'"]
VALUES = ["0", "00", "01", "-0", "-0.0", "1.", ".5", "1e5", "-1E+5", "2.3", "'x'", "'0.5'", "nan", "True"]
VALUES += ["1_0", "٣", "1j", "'a, b'", "- 1", "+1", "0x1", "1e", "9" * 40, "-.5e-3", "None"]


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES)), min_size=1, max_size=4))
def test_hf_fast_dict_reads_what_literal_eval_reads(items: list[tuple[str, str]]) -> None:
    text = "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    try:
        expected = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        expected = None
    got = _literal_dict(text)
    assert repr(got) == repr(expected)
    if isinstance(expected, dict):
        assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]  # type: ignore[union-attr]


def _steps(records) -> list[tuple]:
    return [
        (r["step"], r["name"], r["value"]) for r in records if r.kind == "metric" and r["scope"] == "step"
    ]


def test_keras_bar_gives_one_step_value_per_printed_second() -> None:
    etas = {1: 3, 2: 3, 3: 2, 4: 2, 5: 1}
    frames = [f"{n}/6 [==>...] - ETA: {eta}s - loss: 0.{n}" for n, eta in etas.items()]
    data = ("Epoch 1/2\n" + "\r".join(frames) + "\r6/6 [======] - 4s 9ms/step - loss: 0.6\n").encode()
    records = LogParser().feed(data, now=0.0)
    assert _steps(records) == [(1, "loss", 0.1), (3, "loss", 0.3), (5, "loss", 0.5)]
    assert [(r["name"], r["value"]) for r in records if r["scope"] == "epoch"] == [
        ("loss", 0.6),
        ("epoch_time_s", 4.0),
    ]


def test_tqdm_bar_gives_one_step_value_per_printed_second() -> None:
    def frame(n: int, elapsed: str) -> str:
        return f"Epoch 0: {n * 25:3d}%|##  | {n}/4 [{elapsed}<00:01, 9.0it/s, v_num=0, loss={n}.5]"

    data = "\r".join(frame(n, e) for n, e in ((0, "00:00"), (1, "00:00"), (2, "00:01"), (3, "00:01")))
    data += "\r" + frame(4, "00:01") + "\n"
    records = LogParser().feed(data.encode(), now=0.0)
    assert _steps(records) == [(0, "loss", 0.5), (2, "loss", 2.5)]
    assert [(r["name"], r["value"]) for r in records if r["scope"] == "epoch"] == [
        ("loss", 4.5),
        ("epoch_time_s", 1.0),
    ]
    byte_by_byte = LogParser()
    assert [r for i in range(len(data)) for r in byte_by_byte.feed(data.encode()[i : i + 1], 0.0)] == records


def test_outcome_state_stays_small_however_many_signals() -> None:
    parser = LogParser()
    chunk = b"Epoch 1/1\n1/1 [==] - 1s - loss: 0.1\nTraceback (most recent call last):\nValueError: x\n"
    chunk += b"RuntimeError: CUDA out of memory\nNCCL error: unhandled\n"
    parser.feed(chunk * 3000, now=0.0)
    assert len(parser.outcome.signals) <= 3
    outcome = parser.finish(now=0.0)[-1]
    assert outcome["outcome"] == "oom"  # the first root cause; the last traceback was not survived
    assert outcome["secondary"] == ["nccl_error", "crashed_traceback"]
