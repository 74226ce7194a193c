"""Markdown tables: a header row of names, a rule row, then rows of values (detectron2's evaluation
results, ``tabulate(tablefmt="pipe"/"github")``, every script that prints its figures that way).

::

    |   AP   |  AP50  |  AP75  |        | category   | AP     | category | AP     |
    |:------:|:------:|:------:|        |:-----------|:-------|:---------|:-------|
    | 10.970 | 22.437 | 9.255  |        | cup or mug | 7.698  | bird     | 33.738 |

A header row is a table's only once its rule row follows (``|---|``, ``|:--:|``). Its rows are read
while they have the header's cells: a row of numbers gives one value per column, named by the column
(``ap50``); a row of names and numbers, under a header whose columns go name, value, name, value,
gives each number the name beside it and the value column's (``cup_or_mug_ap``). A column named as a
counter (``epoch``, ``step``, ``iter``) is the row's position; a table without one is a ``context``
value of the stream's latest step or epoch, read only once training output was seen (a table of
settings before it is no metric).
"""

from __future__ import annotations

import re

from gputui.logs.base import Context, emit, is_metric_name, to_float
from gputui.logs.labels import counter_kind
from gputui.logs.naming import full_name
from gputui.stream.records import Record

NAME = "pipetable"
KEY = "pipetable"  # ctx.extra: (header cells, confirmed by a rule row)
MAX_ROW = 1000
RULE_CELL = re.compile(r":?-{3,}:?")
NUMBER_CELL = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?%?|nan|NaN|inf")


def _cells(text: str) -> list[str] | None:
    """The cells of a ``| a | b |`` line, or None for another line."""
    body = text.strip()
    if len(body) < 5 or body[0] != "|" or body[-1] != "|":
        return None
    return [cell.strip() for cell in body[1:-1].split("|")]


def _number(cell: str) -> float | None:
    if NUMBER_CELL.fullmatch(cell) is None:
        return None
    return to_float(cell.rstrip("%"))


class PipeTable:
    name = NAME

    #: The cheap pre-test of auto routing (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '"|" in head'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if len(text) > MAX_ROW:
            return None
        cells = _cells(text)
        if cells is None or len(cells) < 1:
            return None
        state = ctx.extra.get(KEY)
        if all(RULE_CELL.fullmatch(c) for c in cells):
            if state is not None and not state[1] and len(state[0]) == len(cells):
                ctx.extra[KEY] = (state[0], True)
                return []
            return None
        if all(c and _number(c) is None and not c[0].isdigit() for c in cells):
            ctx.extra[KEY] = (tuple(cells), False)  # a header, until a rule row confirms it
            return None
        if state is None or not state[1] or len(state[0]) != len(cells):
            return None
        return self._row(state[0], cells, ctx, now)

    def _row(
        self, header: tuple[str, ...], cells: list[str], ctx: Context, now: float
    ) -> list[Record] | None:
        numbers = [_number(c) for c in cells]
        pairs: list[tuple[str, float]] = []
        step = epoch = None
        if all(n is not None for n in numbers):
            for label, cell, number in zip(header, cells, numbers, strict=True):
                kind = counter_kind(label)
                if kind is not None and cell.isdigit():
                    step, epoch = (int(cell), epoch) if kind == "step" else (step, int(cell))
                elif number is not None:
                    pairs.append(_named(label, "%" if cell.endswith("%") else None, number))
        elif len(cells) % 2 == 0 and all(
            (numbers[i] is None) == (i % 2 == 0) for i in range(len(cells))
        ):  # name, value, name, value: the value column's header is the noun
            for i in range(0, len(cells), 2):
                number = numbers[i + 1]
                if cells[i] and number is not None:
                    pairs.append(_named(f"{cells[i]} {header[i + 1]}", None, number))
        else:
            return None
        pairs = [(n, v) for n, v in pairs if n and is_metric_name(n)]
        if not pairs:
            return []
        out: list[Record] = []
        if step is None and epoch is None:
            if not ctx.trained:
                return []
            emit(out, pairs, NAME, "context", ctx, now, ctx.epoch, ctx.step)
            return out
        if step is not None:
            ctx.step = step
        if epoch is not None:
            ctx.epoch = epoch
        emit(out, pairs, NAME, "step" if step is not None else "epoch", ctx, now, epoch, step)
        return out


def _named(label: str, unit: str | None, value: float) -> tuple[str, float]:
    name, scale = full_name(label, unit, None)
    return name, value if scale == 1.0 else float(f"{value * scale:.15g}")


PARSER = PipeTable()
