"""The pytorch/examples shapes (``docs/log-formats.md`` §5) and scripts copied from them.

- MNIST family: ``Train Epoch: 1 [640/60000 (1%)]\\tLoss: 1.359780`` (per ``log-interval`` batches,
  scope ``step``); the all-reduced variant ``Train Epoch: 1 \\tLoss: 0.2119`` (no counter) is an epoch
  value; ``Test set: Average loss: 0.0479, Accuracy: 9845/10000 (98%)`` → ``test_loss``,
  ``test_correct``, ``test_total``, ``test_accuracy_pct`` for the epoch of the preceding train lines.
- ImageNet family (``ProgressMeter``): ``Epoch: [0][ 10/5005]\\tTime  0.312 ( 0.420)\\tLoss 6.88e+00
  (6.90e+00)\\tAcc@1 0.00 (0.14)`` with any prefix (``TRAINING - ``, ``EVALUATING - ``, ``Test: ``):
  ``name value (average)`` → ``name`` and ``name_avg`` (scope ``step``); `` * Acc@1 75.1 Acc@5 92.4``
  → the epoch's validation accuracy.
- word_language_model: ``| epoch 1 | 200/ 2983 batches | lr 20.00 | ms/batch 45.12 | loss 7.63 |``
  (step) and ``| end of epoch 1 | time: 140.12s | valid loss 5.86 | valid ppl 351.69`` (epoch, with
  ``epoch_time_s``).
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, emit, metric, to_float
from gputui.logs.bounded import remember
from gputui.stream.records import Record

NAME = "pytorch_examples"
TRAIN = re.compile(
    r"Train Epoch:\s*(\d+)\s*(?:\[\s*(\d+)/(\d+)\s*\((\d+)%\)\])?\s*Loss:\s*(" + NUM + r")\s*$", re.I
)
TEST = re.compile(
    r"Test set: Average loss:\s*(" + NUM + r"),\s*Accuracy:\s*(\d+)/(\d+)\s*\((" + NUM + r")%\)", re.I
)
IMAGENET = re.compile(
    r"^(?P<pre>.*?)(?:Epoch:\s*\[(?P<epoch>\d+)\]\s*)?\[\s*(?P<i>\d+)/(?P<n>\d+)\]\s*(?P<rest>.*)$"
)
METER = re.compile(r"([A-Za-z][\w@/ ]*?)\s+(" + NUM + r")\s*\(\s*(" + NUM + r")\s*\)")
STAR = re.compile(r"^\s*\*\s+((?:[A-Za-z][\w@]*\s+" + NUM + r"\s*)+)$")
STAR_PAIR = re.compile(r"([A-Za-z][\w@]*)\s+(" + NUM + r")")
WLM_STEP = re.compile(r"^\|\s*epoch\s+(\d+)\s*\|\s*(\d+)/\s*(\d+) batches\s*\|(.*)$")
WLM_END = re.compile(r"^\|\s*end of epoch\s+(\d+)\s*\|\s*time:\s*(" + NUM + r")s\s*\|(.*)$")
PIPE_PAIR = re.compile(r"^\s*([A-Za-z][\w/ ]*?)\s+(" + NUM + r")\s*$")


_NAMES: dict[tuple[str, str], str] = {}


def _name(label: str, prefix: str = "") -> str:
    name = _NAMES.get((label, prefix))
    if name is None:
        name = prefix + re.sub(r"[^\w/.]+", "_", label.strip().lower().replace("@", "")).strip("_")
        remember(_NAMES, (label, prefix), name, 1024)
    return name


class PytorchParser:
    name = NAME

    #: The cheap pre-test of auto routing: a condition on ``text``, ``head`` (``text[:24]``) and ``ctx``
    #: that is False only where :meth:`parse` would say "not mine" (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '"Epoch" in text or "epoch" in text or "Test" in text or "[" in text or "*" in text'
    #: Its shapes are met with other meters after them (Swin's ``lr``, ``wd``, ``mem``): the extractor
    #: reads what it does not (:func:`gputui.logs.formats.extract.complete`).
    PARTIAL = True

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if "Epoch" in text or "epoch" in text or "Test" in text or "[" in text or "*" in text:
            if "Train Epoch" in text:
                return self._train(text, ctx, now)
            if "Test set:" in text:
                return self._test(text, ctx, now)
            if "/" in text and "]" in text and "(" in text:
                out = self._imagenet(text, ctx, now)
                if out is not None:
                    return out
            if text.lstrip().startswith("*"):
                return self._star(text, ctx, now)
            if text.startswith("|"):
                return self._wlm(text, ctx, now)
        return None

    def _rec(self, name: str, value: float, scope: str, ctx: Context, now: float, **kw) -> Record | None:
        return metric(name, value, source=NAME, scope=scope, ctx=ctx, now=now, **kw)

    def _train(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        m = TRAIN.search(text)
        if m is None:
            return None
        epoch = int(m.group(1))
        ctx.epoch, ctx.epoch_base = epoch, 1
        loss = to_float(m.group(5))
        if loss is None:
            return []
        if m.group(2) is None:
            rec = self._rec("loss", loss, "epoch", ctx, now, epoch=epoch)
        else:
            counter = {"samples": int(m.group(2)), "samples_total": int(m.group(3))}
            rec = self._rec("loss", loss, "step", ctx, now, epoch=epoch, **counter)
        return [rec] if rec else []

    def _test(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        m = TEST.search(text)
        if m is None:
            return None
        scope = "epoch" if ctx.epoch is not None else "summary"
        values = [
            ("test_loss", to_float(m.group(1))),
            ("test_correct", float(m.group(2))),
            ("test_total", float(m.group(3))),
            ("test_accuracy_pct", to_float(m.group(4))),
        ]
        out: list[Record] = []
        emit(out, [(n, v) for n, v in values if v is not None], NAME, scope, ctx, now, ctx.epoch)
        return out

    def _imagenet(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        m = IMAGENET.match(text)
        if m is None:
            return None
        meters = METER.findall(m.group("rest"))
        if not meters:
            return None
        pre = m.group("pre").lower()
        prefix = "test_" if "test" in pre else "val_" if ("eval" in pre or "val" in pre) else ""
        epoch = int(m.group("epoch")) if m.group("epoch") is not None else ctx.epoch
        if m.group("epoch") is not None:
            ctx.epoch = epoch
        step = int(m.group("i"))
        ctx.last_progress = (step, int(m.group("n")))
        pairs = []
        for label, value, avg in meters:
            name = _name(label, prefix)
            for key, raw in ((name, value), (name + "_avg", avg)):
                number = to_float(raw)
                if number is not None:
                    pairs.append((key, number))
        out: list[Record] = []
        extra = None if prefix else {"steps_total": int(m.group("n"))}  # a training loop's batches per epoch
        emit(out, pairs, NAME, "step", ctx, now, epoch, step, extra=extra)
        return out

    def _star(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        m = STAR.match(text)
        if m is None:
            return None
        scope = "epoch" if ctx.epoch is not None else "summary"
        pairs = []
        for label, raw in STAR_PAIR.findall(m.group(1)):
            value = to_float(raw)
            if value is not None:
                pairs.append((_name(label, "val_"), value))
        out: list[Record] = []
        emit(out, pairs, NAME, scope, ctx, now, ctx.epoch)
        return out

    def _wlm(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        end = WLM_END.match(text)
        step_m = None if end else WLM_STEP.match(text)
        if end is None and step_m is None:
            return None
        m = end or step_m
        assert m is not None
        epoch = int(m.group(1))
        ctx.epoch, ctx.epoch_base = epoch, 1
        scope = "epoch" if end else "step"
        step = None if end else int(step_m.group(2))  # type: ignore[union-attr]
        extra = {} if end else {"steps_total": int(step_m.group(3))}  # type: ignore[union-attr]
        out = []
        if end:
            rec = self._rec("epoch_time_s", float(end.group(2)), "epoch", ctx, now, epoch=epoch)
            if rec:
                out.append(rec)
        for segment in m.group(m.lastindex or 1).split("|"):
            pm = PIPE_PAIR.match(segment)
            if pm is None:
                continue
            value = to_float(pm.group(2))
            rec = value is not None and self._rec(
                _name(pm.group(1)), value, scope, ctx, now, epoch=epoch, step=step, **extra
            )
            if rec:
                out.append(rec)
        return out


PARSER = PytorchParser()
