"""timm's ``train.py`` (pytorch-image-models): per-batch ``Train:`` lines, ``Test:`` validation lines,
``*** Best metric``.

After normalisation (any prefix before ``Train:`` / ``Test`` is allowed, e.g. a logging timestamp):

- ``Train: 3 [ 150/1251 ( 12%)]  Loss: 6.91 (6.93)  Time: 0.412s, 2486.52/s  (0.433s, 2360.1/s)
  LR: 1.000e-03  Data: 0.012 (0.015)``: a ``step`` record per meter with the batch's own value (the
  number before the parentheses); the batch index is 0-based, so ``[1250/1251 (100%)]`` is the epoch's
  last batch: its running averages (in parentheses) are the epoch's training values (scope ``epoch``):
  ``loss``, ``step_time_s``, ``samples_per_s`` (timm counts the samples of all ranks), ``data_time_s``
  and ``lr``. Epochs are numbered from 0, as printed.
- ``Test: [  48/48]  Time: 0.556 (1.946)  Loss: 5.9052 (6.4740)  Acc@1: 10.97 ( 1.358)  Acc@5: …``:
  the validation of the current epoch; its batch index runs from 0 to the printed last index, so the
  line with both equal is the last: its averages are the epoch's ``val_loss``, ``val_acc1`` (→
  ``val_accuracy``), ``val_acc5``, ``val_step_time_s``. ``Test (EMA):`` gives ``val_ema_*``. If the
  epoch's last ``Train:`` line was not printed (newer timm logs every ``log_interval`` updates), the
  averages of its latest one are its training values, given with the validation. The lines before
  the last (and MetricLogger's ``Test: [ 20/79]`` lines, whose index never reaches the count) give
  their values as printed, named as the extractor names them with ``test_`` before (``test_loss``,
  ``test_loss_avg``), at no step: a ``step`` scope value of the current epoch.
- ``*** Best metric: 72.19 (epoch 299)``: a ``summary`` record ``best_metric`` (timm prints it after the
  loop; the outcome tracker takes it as the end of training).

Every ``[i/N]`` counts as progress for the outcome (a log that ends inside an epoch is ``truncated``).
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, emit, to_float
from gputui.logs.formats.extract import named_values, shape_of
from gputui.stream.records import Record

NAME = "timm"
TRAIN = re.compile(r"(?:^|\s)Train:\s*(\d+)\s*\[\s*(\d+)/(\d+)\s*\(\s*\d+%\)\]\s*(.*)$")
TEST = re.compile(r"(?:^|\s)Test(?:\s*\((\w+)\))?:\s*\[\s*(\d+)/(\d+)\]\s*(.*)$")
BEST = re.compile(r"\*\*\* Best metric:\s*(" + NUM + r")\s*\(epoch\s+(\d+)\)")
# "Loss:  6.76 (6.82)", "Time: 0.136s, 7514.95/s  (0.618s, 1657.09/s)", "LR: 1.000e-04", "Acc@1: 1.0 ( 2.0)"
METER = re.compile(
    r"([A-Za-z][\w@]*):\s+(" + NUM + r")s?(?:,\s*(" + NUM + r")/s)?"
    r"(?:\s+\(\s*(" + NUM + r")s?(?:,\s*(" + NUM + r")/s)?\s*\))?"
)
#: Printed meter → metric name (the time meters are seconds; ``Time`` also gives the rate).
NAMES = {"loss": "loss", "time": "step_time_s", "data": "data_time_s", "lr": "lr"}
KEY = "timm_train"  # ctx.extra: (epoch, averages of its latest Train line, whether they were stated)


def _meters(rest: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """``(values, averages)`` of a line's meters: the batch's own numbers and the running averages."""
    values: list[tuple[str, float]] = []
    averages: list[tuple[str, float]] = []
    for label, value, rate, avg, avg_rate in METER.findall(rest):
        low = label.lower()
        name = NAMES.get(low) or low.replace("@", "")
        for target, raw in ((values, value), (averages, avg or (value if low == "lr" else ""))):
            number = to_float(raw) if raw else None
            if number is not None:
                target.append((name, number))
        if low == "time":
            for target, raw in ((values, rate), (averages, avg_rate)):
                number = to_float(raw) if raw else None
                if number is not None:
                    target.append(("samples_per_s", number))
    return values, averages


class TimmParser:
    name = NAME

    #: The cheap pre-test of auto routing: a condition on ``text``, ``head`` (``text[:24]``) and ``ctx``
    #: that is False only where :meth:`parse` would say "not mine" (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '"Train:" in text or "Test" in text or "Best metric:" in text'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if "Train:" in text:
            m = TRAIN.search(text)
            if m is not None:
                return self._train(m, ctx, now)
        if "Test" in text:
            m = TEST.search(text)
            if m is not None:
                return self._test(m, ctx, now)
        if "Best metric:" in text:
            m = BEST.search(text)
            if m is not None:
                value = to_float(m.group(1))
                out: list[Record] = []
                if value is not None:
                    emit(out, (("best_metric", value),), NAME, "summary", ctx, now, int(m.group(2)))
                return out
        return None

    def _train(self, m: re.Match[str], ctx: Context, now: float) -> list[Record] | None:
        values, averages = _meters(m.group(4))
        if not values:
            return None
        epoch, i, n = int(m.group(1)), int(m.group(2)), int(m.group(3))
        ctx.epoch, ctx.epoch_base = epoch, 0
        ctx.last_progress = (i + 1, n)  # the batch index is 0-based: the last batch is n - 1
        out: list[Record] = []
        emit(out, values, NAME, "step", ctx, now, epoch, i + 1, extra={"steps_total": n})
        last = i + 1 >= n
        if last:
            emit(out, averages, NAME, "epoch", ctx, now, epoch)
        ctx.extra[KEY] = (epoch, averages, last)
        return out

    def _test(self, m: re.Match[str], ctx: Context, now: float) -> list[Record]:
        i, n = int(m.group(2)), int(m.group(3))
        ctx.last_progress = (i, n)
        if i < n:  # a running validation line: its values as printed, at no step (not final yet)
            return self._running(m, ctx, now)
        _, averages = _meters(m.group(4))
        prefix = "val_" + (m.group(1).lower() + "_" if m.group(1) else "")
        epoch = ctx.epoch
        scope = "epoch" if epoch is not None else "summary"
        out: list[Record] = []
        train = ctx.extra.get(KEY)
        if train is not None and train[0] == epoch and not train[2]:
            emit(out, train[1], NAME, "epoch", ctx, now, epoch)  # the epoch's last Train line was not printed
            ctx.extra[KEY] = (epoch, train[1], True)
        emit(out, [(prefix + name, value) for name, value in averages], NAME, scope, ctx, now, epoch)
        return out

    @staticmethod
    def _running(m: re.Match[str], ctx: Context, now: float) -> list[Record]:
        """``Test: [ 20/79]  loss: 7.11 (7.14)  acc1: 0.78 (0.78)  max mem: 997``: ``test_loss``,
        ``test_loss_avg``, ``test_max_mem`` … as the extractor names them, without a step (the batch
        index of an evaluation is no training step)."""
        rest = m.group(4)
        reading = shape_of(rest, ctx).found[2]
        prefix = "test_" + (m.group(1).lower() + "_" if m.group(1) else "")
        pairs = [
            (name if name.startswith(prefix) else prefix + name, v) for name, v in named_values(rest, reading)
        ]
        out: list[Record] = []
        emit(out, pairs, NAME, "step", ctx, now, ctx.epoch)
        return out


PARSER = TimmParser()
