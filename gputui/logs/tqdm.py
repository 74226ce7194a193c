"""tqdm progress bars, including PyTorch Lightning's ``TQDMProgressBar`` (``docs/log-formats.md`` §3).

Shape: ``[desc: ]pct%|bar| n/total [elapsed<remaining, rate[, postfix]]`` (tqdm's non-TTY form has no
bar: ``100% 8/8 [00:11<00:00,  1.40s/it]``). The description gives the epoch when it names one
(Lightning ``Epoch 3``, 0-based; a custom ``Training Epoch 3``), the postfix gives ``name=value`` pairs.

- every frame → scope ``step`` (the latest value of a running bar), only when it carries metrics;
- the frame with ``n == total`` of a bar whose description names an epoch → scope ``epoch`` with
  ``epoch_time_s`` = its elapsed field. Lightning redraws the 100 % frame after validation with the
  ``val_*`` values and then shows one stale ``0/N`` frame of the same epoch: the last 100 % frame wins.
- bars without an epoch in the description (downloads, ``map``, HF Trainer's step bar) give no metric
  records; their position is kept for the outcome (a bar stopped before 100 %).
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, clock_seconds, is_metric_name, metric, to_float
from gputui.records import Record

NAME = "tqdm"
LIGHTNING = "lightning"
BAR = re.compile(
    r"^(?P<desc>.*?)(?P<pct>\d{1,3})%(?:\|[^|]*\||\s)\s*(?P<n>[\d.]+[kMG]?)/(?P<total>[\d.]+[kMG]?|\?)"
    r"\s*\[(?P<elapsed>[\d:]+)(?:<[^,\]]*)?(?:,\s*(?P<rest>[^\]]*))?\]\s*$"
)
EPOCH_DESC = re.compile(r"\bepoch\s*[:#]?\s*(\d+)(?:\s*/\s*(\d+))?", re.IGNORECASE)
POSTFIX = re.compile(r"(?:^|,\s*)([A-Za-z_][\w./@ -]*?)=\s*(" + NUM + r")(?=\s*(?:,|$))", re.IGNORECASE)


class TqdmParser:
    name = NAME

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if "%" not in text or "[" not in text:
            return None
        m = BAR.match(text)
        if m is None:
            return None
        n_text, total_text = m.group("n"), m.group("total")
        if not n_text.isdigit() or not total_text.isdigit():
            return []  # byte counters (downloads) or unknown totals
        n, total = int(n_text), int(total_text)
        ctx.last_progress = (n, total)
        desc = m.group("desc")
        em = EPOCH_DESC.search(desc)
        if em is None:
            return []
        epoch = int(em.group(1))
        lightning = desc.strip().startswith("Epoch ")
        source = LIGHTNING if lightning else NAME
        if lightning:
            ctx.epoch_base = 0
        ctx.epoch = epoch
        pairs = []
        for pm in POSTFIX.finditer(m.group("rest") or ""):
            key = pm.group(1).strip()
            value = to_float(pm.group(2))
            if value is not None and is_metric_name(key):
                pairs.append((key, value))
        final = total > 0 and n == total
        scope = "epoch" if final else "step"
        out = []
        for key, value in pairs:
            rec = metric(key, value, source=source, scope=scope, ctx=ctx, now=now, epoch=epoch, step=n)
            if rec is not None:
                out.append(rec)
        if final:
            elapsed = clock_seconds(m.group("elapsed"))
            if elapsed is not None:
                rec = metric(
                    "epoch_time_s",
                    elapsed,
                    source=source,
                    scope="epoch",
                    ctx=ctx,
                    now=now,
                    epoch=epoch,
                    step=n,
                    steps=total,
                )
                if rec is not None:
                    out.append(rec)
        return out


PARSER = TqdmParser()
