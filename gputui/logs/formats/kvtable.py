"""Tables of one name and one value per row, between ruled lines: Stable-Baselines3's and OpenAI
Baselines' logger (``docs/log-formats.md``), and every script that prints its figures that way.

::

    ---------------------------------
    | rollout/           |          |
    |    ep_len_mean     | 155      |
    |    ep_rew_mean     | -66.3    |
    | time/              |          |
    |    total_timesteps | 2048     |
    ---------------------------------

A row ``| name | value |`` is kept until the table's closing rule; a row with a name ending in ``/`` and
no value is a section, whose name heads the rows under it (``rollout/ep_len_mean``). At the closing
rule the table's values are given together, at the table's own counter: the row named
``total_timesteps``, ``timesteps``, ``step``, ``steps``, else ``iterations``, ``n_updates`` (a step), or
``epoch`` (an epoch); a table without one is a ``context`` value of the stream's latest step or epoch.
"""

from __future__ import annotations

import re

from gputui.logs.base import Context, emit, is_metric_name, to_float
from gputui.stream.records import Record

NAME = "kvtable"
MAX_ROW = 200
RULE = re.compile(r"^\s*-{8,}\s*$")
KEY = "kvtable"  # ctx.extra: the open table's rows
STEPS = ("total_timesteps", "timesteps", "step", "steps", "global_step", "iterations", "n_updates", "updates")
MAX_ROWS = 256


class KeyValueTable:
    name = NAME

    #: The cheap pre-test of auto routing (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '"|" in head or ("-----" in head and ctx.extra)'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if RULE.match(text):
            rows = ctx.extra.pop(KEY, None)
            return None if rows is None else self._table(rows, ctx, now)
        if text.count("|") != 3 or len(text) > MAX_ROW:
            return None
        _, name, raw, end = text.split("|")
        if _.strip() or end.strip():
            return None
        name, raw = name.strip(), raw.strip()
        rows = ctx.extra.get(KEY)
        if not raw:
            if not name.endswith("/"):
                return None
            if rows is None:
                rows = ctx.extra[KEY] = []
            rows.append((name, None))  # a section
            return []
        value = to_float(raw)
        if value is None or not name or "|" in name:
            return None
        if rows is None:
            rows = ctx.extra[KEY] = []
        if len(rows) < MAX_ROWS:
            rows.append((name, value))
        return []

    def _table(self, rows: list[tuple[str, float | None]], ctx: Context, now: float) -> list[Record]:
        section = ""
        pairs: list[tuple[str, float]] = []
        counters: dict[str, float] = {}
        for name, value in rows:
            if value is None:
                section = name
                continue
            key = name.strip().lower().replace(" ", "_")
            if key in STEPS or key == "epoch":
                counters[key] = value  # the table's position, not one of its values
                continue
            full = section + name.strip()
            if is_metric_name(full.rsplit("/", 1)[-1]):
                pairs.append((full, value))
        if not pairs:
            return []
        step = next((int(counters[k]) for k in STEPS if k in counters), None)
        epoch = int(counters["epoch"]) if "epoch" in counters else None
        out: list[Record] = []
        if step is None and epoch is None:
            emit(out, pairs, NAME, "context", ctx, now, ctx.epoch, ctx.step)
            return out
        if step is not None:
            ctx.step = step
        emit(out, pairs, NAME, "step" if step is not None else "epoch", ctx, now, epoch, step)
        return out


PARSER = KeyValueTable()
