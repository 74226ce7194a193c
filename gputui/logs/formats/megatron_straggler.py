"""Megatron-LM's straggler report (``--log-straggler``): per-rank minima and maxima (``docs/log-formats.md``).

Megatron Core's ``StragglerDetector.report`` (``megatron/core/utils.py``, called by
``megatron/training/training.py`` every ``--log-interval`` iterations, after that iteration's
``iteration N/ M |`` line) gathers each rank's numbers on rank 0, which logs through the
``megatron.core.utils`` logger (Python logging's default format, ``INFO:megatron.core.utils:``)::

    INFO:megatron.core.utils:[2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 |
    MnPwr/Rnk: 601796.00W/8 | MxPwr/Rnk: 683801.00W/18 | MnTmp/Rnk: 52.00C/0 | MxTmp/Rnk: 65.00C/21 |
    MnUtl/Rnk: 97.00%/8 | MxUtl/Rnk: 100.00%/6 | MnClk/Rnk: 1950.00MHz/28 | MxClk/Rnk: 1980.00MHz/0 |
    MnDRtt/Rnk: 14.27ms/23 | MxDRtt/Rnk: 34.65ms/3 | MnEtpt/Rnk: 296.02TF/0 | MxEtpt/Rnk: 297.32TF/8

(one line; each value is ``{value:.2f}{unit}/{rank}``; ``megatron/core/README_STRAGGLER.md`` shows it
with whole numbers). ``Mn``/``Mx``: the minimum/maximum over all ranks and the rank it was measured on.
Each pair becomes a metric record whose ``rank`` is that rank, with ``extreme: "min"``/``"max"``:

- ``Rtt`` (time in the traced operations per iteration, averaged over the interval) →
  ``rank_step_time_ms``; ``DRtt`` (``get_batch`` latency, the longest in the interval) →
  ``rank_data_time_ms``; ``Etpt`` (estimated TFLOP/s of that rank) → ``rank_tflops``;
- ``Pwr`` → ``rank_power_w``, ``Tmp`` → ``rank_temp_c``, ``Utl`` → ``rank_util_pct``, ``Clk`` →
  ``rank_clock_mhz`` (read from ``torch.cuda`` when the report is made). ``Pwr`` is
  ``torch.cuda.power_draw()``, milliwatts on NVIDIA (NVML) and watts on AMD (amdsmi), printed with a
  ``W`` either way: a line whose ``MxPwr`` is 10000 or more (no GPU draws 10 kW) is read as milliwatts.

With ``--straggler-minmax-count N`` two more lines list the N lowest and highest ``Etpt`` ranks
(``^^^^ Bottom 4 Ranks with lowest  Etpt(TF): 296.02/0, 296.17/2, …``): ``rank_tflops`` records with
``extreme: "bottom"``/``"top"``. The bracketed timestamp (local time) is the records' ``time``. The lines
name no iteration, so the records carry no ``step``: the iteration line they follow may come from another
rank (``print_rank_last``), and a step would make these ranks the run's voice in the step views.
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, metric, to_float
from gputui.logs.formats.generic import stamp
from gputui.stream.records import Record

NAME = "megatron_straggler"
PAIR = re.compile(
    r"\b(Mn|Mx)(DRtt|Rtt|Pwr|Tmp|Utl|Clk|Etpt)/Rnk: (" + NUM + r")(ms|W|C|%|MHz|TF)/(\d{1,9})(?!\d)"
)
LIST = re.compile(r"\^\^\^\^ (Bottom|Top) +\d+ Ranks with (?:lowest|highest) +Etpt\(TF\):")
LIST_ITEM = re.compile(r" (" + NUM + r")/(\d{1,9}),")
STAMP = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] \| ")
NAMES = {
    "Rtt": "rank_step_time_ms",
    "DRtt": "rank_data_time_ms",
    "Etpt": "rank_tflops",
    "Pwr": "rank_power_w",
    "Tmp": "rank_temp_c",
    "Utl": "rank_util_pct",
    "Clk": "rank_clock_mhz",
}
UNITS = {"Rtt": "ms", "DRtt": "ms", "Etpt": "TF", "Pwr": "W", "Tmp": "C", "Utl": "%", "Clk": "MHz"}
EXTREMES = {"Mn": "min", "Mx": "max", "Bottom": "bottom", "Top": "top"}
MILLIWATTS = 10000.0  # an MxPwr this high is milliwatts (torch.cuda.power_draw on NVIDIA)
LAST_TIME = "megatron_straggler_time"  # ctx.extra: the latest report's printed time (for the rank lists)


class MegatronStragglerParser:
    name = NAME

    #: The cheap pre-test of auto routing: a condition on ``text``, ``head`` (``text[:24]``) and ``ctx``
    #: that is False only where :meth:`parse` would say "not mine" (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '"/Rnk: " in text or "Etpt(TF):" in text'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if "Etpt(TF):" in text:
            return self._rank_list(text, ctx, now)
        values: list[tuple[str, str, float, int]] = []  # (Mn|Mx, quantity, value, rank)
        for m in PAIR.finditer(text):
            ext, what, number, unit, rank = m.groups()
            value = to_float(number)
            if value is None or unit != UNITS[what]:
                return None
            values.append((ext, what, value, int(rank)))
        if not values:
            return None
        found = STAMP.search(text)
        when = stamp(found.group(1)) if found is not None else None
        ctx.extra[LAST_TIME] = when
        powers = [value for ext, what, value, _ in values if what == "Pwr" and ext == "Mx"]
        scale = 1e-3 if powers and max(powers) >= MILLIWATTS else 1.0
        out: list[Record] = []
        for ext, what, value, rank in values:
            rec = metric(
                NAMES[what],
                value * scale if what == "Pwr" else value,
                source=NAME,
                scope="step",
                ctx=ctx,
                now=now,
                time=when,
                rank=rank,
                extreme=EXTREMES[ext],
            )
            if rec is not None:
                out.append(rec)
        return out

    def _rank_list(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        """``^^^^ Bottom N Ranks with lowest  Etpt(TF): v/r, v/r,``: one ``rank_tflops`` per rank."""
        found = LIST.search(text)
        if found is None:
            return None
        when = ctx.extra.get(LAST_TIME)
        out: list[Record] = []
        for item in LIST_ITEM.finditer(text, found.end()):
            value = to_float(item.group(1))
            if value is None:
                continue
            rec = metric(
                NAMES["Etpt"],
                value,
                source=NAME,
                scope="step",
                ctx=ctx,
                now=now,
                time=when,
                rank=int(item.group(2)),
                extreme=EXTREMES[found.group(1)],
            )
            if rec is not None:
                out.append(rec)
        return out


PARSER = MegatronStragglerParser()
