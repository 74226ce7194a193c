"""Planned work reached or not, from a run's own counters: the last step and epoch its metric lines
printed, against the totals it stated (``epoch 3/10``, ``iter 120/5000``, ``max_steps: 19073``,
``'epochs': 10``, ``Total optimization steps = 1,000``).

A run that counts epochs is judged by them (its steps count each epoch's batches, unless the step counter
goes on across epochs, as PaddleSeg's ``epoch: 12, iter: 79990/80000``). A run of steps
whose last printed step is within one printing interval of its planned steps reached them
(``step 19072`` of 19,073; PaddleNLP's ``1050`` of 1,060 printed every 10); the last planned epoch is
reached when the last epoch printed is the planned total (counted from 1) or one less (counted from
0: the first epoch printed was 0). Reached: ``completed``; not reached: ``truncated``; no total
stated: nothing said (:meth:`Counters.reached` is ``None``).
"""

from __future__ import annotations

import re
from typing import Any

from gputui.logs.outcome_patterns import PLANNED, PLANNED_STEPS
from gputui.logs.planned import EPOCHS_KEY
from gputui.logs.planned import KEY as STEPS_KEY

#: ``Epoch:[1/1](4292/4292)``, ``[3/10][120/500]``: the position after an epoch's is the step's.
SECOND_POSITION = re.compile(r"\d+\s*/\s*\d+\W{1,3}(\d+)\s*/\s*(\d+)")


#: A batch position right after an epoch's: the steps count that epoch's batches.
PER_EPOCH = re.compile(
    r"\[\s*\d+(?:\s*/\s*\d+)?\s*\]\s*[\[(]\s*\d+\s*/\s*\d+|\d+\s*/\s*\d+\W{1,3}\d+\s*/\s*\d+"
)


EVALUATION = ("val", "test", "eval", "dev")  # names whose steps are an evaluation's, not training's
BATCH_POSITION = re.compile(r"(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d.])")


def _batches_of(text: str, step: int) -> int | None:
    """The epoch's batches where the line prints its step as ``s/M`` (``[13967/21279]``, ``286/573``)."""
    for m in BATCH_POSITION.finditer(text):
        if int(m.group(1)) == step and int(m.group(2)) >= step:
            return int(m.group(2))
    return None


class Counters:
    """Where one run's counters got. Fed the last metric record of every frame that gave records."""

    __slots__ = (
        "batches",
        "counted",
        "epoch",
        "epoch_first",
        "epochs",
        "gap",
        "per_epoch",
        "step",
        "steps",
        "where",
    )

    def __init__(self) -> None:
        self.step: int | None = None
        self.gap = 1  # steps between two printed steps
        self.epoch: int | None = None
        self.epoch_first: int | None = None
        self.steps: int | None = None  # planned
        self.epochs: int | None = None
        self.where: tuple[int, str] | None = None  # the last counter line: line, text
        self.per_epoch = False  # the step counter started again with an epoch: it counts batches
        # the last step line with an epoch and a "/": its "s/M" may give the epoch's batches (read at the end)
        self.batches: tuple[str, int] | None = None
        self.counted = -1  # the last line where the step or the epoch went on

    def note(self, line: int, text: str, fields: dict[str, Any], extra: dict[str, Any]) -> None:
        step, epoch = fields.get("step"), fields.get("epoch")
        if isinstance(step, int) and self.step is not None and step < self.step:
            self.per_epoch = self.per_epoch or (isinstance(epoch, int) and epoch != self.epoch)
        if not str(fields.get("name", "")).startswith(EVALUATION) and (
            (isinstance(step, int) and (self.step is None or step > self.step))
            or (isinstance(epoch, int) and (self.epoch is None or epoch > self.epoch))
        ):
            self.counted = line  # a counter that went on (an evaluation at the last step does not)
        if isinstance(step, int):
            self.batches = (text, step) if isinstance(epoch, int) and "/" in text else None
            if self.step is not None and step > self.step:
                self.gap = step - self.step
            self.step = step
            total = fields.get("steps_total") or extra.get(STEPS_KEY)
            if isinstance(total, int) and total > 0:
                self.steps = total
        if isinstance(epoch, int):
            if self.epoch_first is None or epoch < self.epoch_first:
                self.epoch_first = epoch  # the lowest: a settings line's "epoch: 30" may come first
            self.epoch = epoch
            total = extra.get(EPOCHS_KEY)
            if isinstance(total, int):
                self.epochs = total
        if "/" in text:
            if isinstance(epoch, int) and not self.per_epoch and PER_EPOCH.search(text):
                self.per_epoch = True  # "[1][50/100]", "Epoch:[1/1](4292/4292)": the epoch's batches
            if "poch" in text or "POCH" in text:
                m = PLANNED.search(text)
                if m is not None and int(m.group(2)) > 0:
                    self.epochs = int(m.group(2))
            if step is not None:
                m = PLANNED_STEPS.search(text) or SECOND_POSITION.search(text)
                if m is not None and int(m.group(2)) > 0:
                    self.steps = int(m.group(2))
        self.where = (line, text)

    def saw_epoch(self, epoch: Any) -> None:
        """An earlier epoch given late (a series' first lines wait): the run's first epoch may be it."""
        if isinstance(epoch, int) and (self.epoch_first is None or epoch < self.epoch_first):
            self.epoch_first = epoch

    def restarts(self, fields: dict[str, Any]) -> bool:
        """Whether a record's step (or epoch) is back below this run's last one (a rank lagging by
        under 1 % of the steps is not: as :class:`gputui.analysis.steps.StepTracker`)."""
        step, epoch = fields.get("step"), fields.get("epoch")
        if isinstance(step, int) and self.step is not None:
            return step < self.step - max(1, self.step // 100)
        return isinstance(epoch, int) and self.epoch is not None and epoch < self.epoch

    def reached(self) -> tuple[str, dict[str, Any]] | None:
        """``(completed|truncated, evidence)`` where a planned total was stated, else None."""
        if self.where is None:
            return None
        line, text = self.where
        info: dict[str, Any] = {"evidence": text.strip()[:500], "line": line}
        batches = _batches_of(*self.batches) if self.batches is not None else None
        if (
            batches is not None and self.step is not None and self.step + self.gap < batches
        ):  # the file stops inside an epoch: planned work visibly not done
            return "truncated", {
                **info,
                "reason": f"epoch {self.epoch} stops at batch {self.step} of {batches}",
            }
        if self.epoch is not None and self.epochs is None and (self.per_epoch or self.steps is None):
            return None  # an epoch run's steps count each epoch's batches: only its epochs tell
        if self.epochs is not None and self.epoch is not None:
            last = self.epoch + (1 if self.epoch_first == 0 else 0)  # epochs done, counted from 1
            if last >= self.epochs:
                return "completed", {**info, "reason": f"the last planned epoch ({self.epochs}) was reached"}
            return "truncated", {**info, "reason": f"epoch {self.epoch} of {self.epochs} planned"}
        if self.steps is not None and self.step is not None:
            if self.step + self.gap >= self.steps:
                return "completed", {**info, "reason": f"the planned steps ({self.steps:,}) were reached"}
            return "truncated", {**info, "reason": f"step {self.step:,} of {self.steps:,} planned"}
        return None
