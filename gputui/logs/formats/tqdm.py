"""tqdm progress bars, including PyTorch Lightning's ``TQDMProgressBar`` (``docs/log-formats.md`` §3).

Shape: ``[desc: ]pct%|bar| n/total [elapsed<remaining, rate[, postfix]]`` (tqdm's non-TTY form has no
bar: ``100% 8/8 [00:11<00:00,  1.40s/it]``). The description gives the epoch when it names one
(Lightning ``Epoch 3``, 0-based; a custom ``Training Epoch 3``), the postfix gives ``name=value`` pairs.

- a running frame → scope ``step`` (the latest value of the bar), only when it carries metrics, and
  only the first frame of each printed second: a frame whose (description, elapsed) is that of the
  last frame that gave step records is *thinned* (no records; its position still counts). A fast bar
  redraws ~10 times a second; this keeps one value per second, the same for any read sizes;
- the frame with ``n == total`` of a bar whose description names an epoch → scope ``epoch`` with
  ``epoch_time_s`` = its elapsed field. Lightning redraws the 100 % frame after validation with the
  ``val_*`` values and then shows one stale ``0/N`` frame of the same epoch: the last 100 % frame wins.
- bars without an epoch in the description (downloads, ``map``, HF Trainer's step bar) give no metric
  records; their position is kept for the outcome (a bar stopped before 100 %).
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, clock_seconds, emit, is_metric_name, to_float
from gputui.stream.records import Record

NAME = "tqdm"
LIGHTNING = "lightning"
BAR = re.compile(
    r"^(?P<desc>.*?)(?P<pct>\d{1,3})%(?:\|[^|]*\||\s)\s*(?P<n>[\d.]+[kMG]?)/(?P<total>[\d.]+[kMG]?|\?)"
    r"\s*\[(?P<elapsed>[\d:]+)(?:<[^,\]]*)?(?:,\s*(?P<rest>[^\]]*))?\]\s*$"
)
EPOCH_DESC = re.compile(r"\bepoch\s*[:#]?\s*(\d+)(?:\s*/\s*(\d+))?", re.IGNORECASE)
POSTFIX = re.compile(r"(?:^|,\s*)([A-Za-z_][\w./@ -]*?)=\s*(" + NUM + r")(%?)(?=\s*(?:,|$))", re.IGNORECASE)
#: ``name: value`` pairs in a description (``Epoch: 0, L1: 0.202, Gen: 2.533:  12%|…``): the bar's values too.
DESC_PAIR = re.compile(
    r"(?:^|[,|;]\s*|\s-\s|\s{2,})([A-Za-z_][\w./@-]*(?: [A-Za-z_][\w./@-]*){0,2}):\s*(" + NUM + r")"
    r"(?=\s*(?:[,|;]|\s-\s|:?\s*$))",
    re.IGNORECASE,
)
COUNTERS = frozenset({"epoch", "step", "iter", "iteration", "batch", "round", "episode"})
DIGITS = str.maketrans("", "", "0123456789.")


class TqdmParser:
    name = NAME

    #: The cheap pre-test of auto routing: a condition on ``text``, ``head`` (``text[:24]``) and ``ctx``
    #: that is False only where :meth:`parse` would say "not mine" (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '"%" in text and "[" in text'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if "%" not in text or "[" not in text:
            return None
        m = BAR.match(text)
        if m is None:
            return None
        n_text, total_text, desc = m.group("n", "total", "desc")
        if not n_text.isdigit() or not total_text.isdigit():
            return []  # byte counters (downloads) or unknown totals
        n, total = int(n_text), int(total_text)
        ctx.last_progress = (n, total)
        if not desc.strip() and "it" in text[-12:]:  # HF's step bars: no description, unit "it"
            main = ctx.main_bar
            if main is None or total >= main[1]:  # the training bar, not the shorter eval bars
                ctx.main_bar = (n, total)
        seen = ctx.bar_desc  # (description, epoch, lightning, bar) of the previous frame: usually it
        if seen is None or seen[0] != desc:
            em = EPOCH_DESC.search(desc)
            epoch_named = None if em is None else int(em.group(1))
            seen = ctx.bar_desc = (desc, epoch_named, desc.strip().startswith("Epoch "), desc.rstrip())
        epoch = seen[1]
        if epoch is None:
            return self._postfix(m, seen, n, ctx, now)
        if seen[2]:
            ctx.epoch_base = 0
        ctx.epoch = epoch
        final = total > 0 and n == total
        clock = None
        if not final:
            clock = (seen[3].translate(DIGITS), m.group("elapsed"))  # padding, values: not a new bar
            if clock == ctx.bar_clock:
                return []  # same bar, same printed second: thinned (docs/log-formats.md)
        pairs = _described(desc) if ":" in desc else []
        pairs += _postfix_pairs(m.group("rest") or "")
        source = LIGHTNING if seen[2] else NAME
        out: list[Record] = []
        emit(out, pairs, source, "epoch" if final else "step", ctx, now, epoch, n)
        if final:
            elapsed = clock_seconds(m.group("elapsed"))
            if elapsed is not None:
                extra = {"steps": total}
                emit(out, (("epoch_time_s", elapsed),), source, "epoch", ctx, now, epoch, n, None, extra)
        elif out:
            ctx.bar_clock = clock
        return out

    def _postfix(self, m: re.Match, seen: tuple, n: int, ctx: Context, now: float) -> list[Record]:
        """A bar that names no epoch (``Training progress: 10/30000 [..., Loss=0.249]``): its postfix
        values at its position, one per printed second as for epoch bars."""
        rest = m.group("rest") or ""
        described = _described(seen[0]) if ":" in seen[0] else []
        if "=" not in rest and not described:
            return []
        clock = (seen[3].translate(DIGITS), m.group("elapsed"))
        if clock == ctx.bar_clock and n != int(m.group("total")):  # its last frame always
            return []
        pairs = described
        pairs += _postfix_pairs(rest)
        out: list[Record] = []
        emit(out, pairs, NAME, "step", ctx, now, None, n)
        if out:
            ctx.bar_clock = clock
        return out


def _postfix_pairs(rest: str) -> list[tuple[str, float]]:
    """The ``name=value`` pairs of a bar's postfix; a percentage is ``*_pct`` (``acc=1.8%``)."""
    pairs = []
    for pm in POSTFIX.finditer(rest):
        key = pm.group(1).strip()
        value = to_float(pm.group(2))
        if value is not None and is_metric_name(key):
            pairs.append((f"{key}_pct" if pm.group(3) else key, value))
    return pairs


def _described(desc: str) -> list[tuple[str, float]]:
    """The values a description names (its counters left out: they are the bar's position)."""
    pairs = []
    for pm in DESC_PAIR.finditer(desc.rstrip().rstrip(":")):
        key = pm.group(1).strip()
        value = to_float(pm.group(2))
        if value is not None and key.lower() not in COUNTERS and is_metric_name(key):
            pairs.append((key, value))
    return pairs


PARSER = TqdmParser()
