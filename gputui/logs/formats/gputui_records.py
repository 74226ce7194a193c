"""gputui's own records printed on stdout: ``[N: ]@gputui {json}`` (see :mod:`gputui.stream.io`).

They are taken as they are (their own time and names), with the rank of an ``srun --label`` prefix
added when the record has none and a ``scope`` (``epoch`` when the record has an epoch and no step).
A line with the marker but a broken payload gives no records (it is counted in ``ctx.extra``).
"""

from __future__ import annotations

from gputui.logs.base import Context
from gputui.stream.io import STDOUT_PREFIX, parse_prefixed
from gputui.stream.records import Record, RecordError

NAME = "gputui"


class GputuiParser:
    name = NAME

    #: The cheap pre-test of auto routing: a condition on ``text``, ``head`` (``text[:24]``) and ``ctx``
    #: that is False only where :meth:`parse` would say "not mine" (:func:`gputui.logs.parser.route_auto`).
    PRETEST = f"{STDOUT_PREFIX!r} in text"

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if STDOUT_PREFIX not in text:
            return None
        try:
            records = parse_prefixed(text.lstrip())
        except (ValueError, RecordError, UnicodeError, RecursionError):
            ctx.extra["gputui_invalid"] = ctx.extra.get("gputui_invalid", 0) + 1
            return []
        if records is None:
            return None
        for record in records:
            if record.kind != "metric":
                if record.get("scope") == "epoch":
                    ctx.stated_epoch = True
                continue
            if ctx.rank is not None and record.get("rank") is None:
                record.fields["rank"] = ctx.rank
            if "scope" not in record.fields:
                has_epoch = record.get("epoch") is not None
                record.fields["scope"] = "epoch" if has_epoch and record.get("step") is None else "step"
            if record.fields["scope"] == "epoch":
                ctx.stated_epoch = True
        return records


PARSER = GputuiParser()
