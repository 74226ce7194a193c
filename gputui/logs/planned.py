"""The planned number of steps of a step-based run, as the log states it (``docs/log-formats.md``).

Step records without an epoch get ``steps_total``: the run's planned steps, from the line's own global
counter (``step 12000/19073``, Megatron's ``iteration 300/ 500``, ``[Step 80/100]``), else from a setting
the stream printed before (``max_steps: 19073``, ``--max_steps 19073``, ``"total_steps": 5000``,
``num_training_steps=…``, Megatron's ``train_iters ....... 500``, HF's ``Total optimization steps =
19,073``). The parser calls :func:`mark` on a frame's records and :func:`note_setting` on a frame that
gave none (both only where the frame's text can hold one).
"""

from __future__ import annotations

import re

from gputui.logs.base import Context
from gputui.logs.outcome_patterns import PLANNED, PLANNED_STEPS
from gputui.stream.records import Record

KEY = "steps_planned"  # ctx.extra: the planned steps a setting stated
EPOCHS_KEY = "epochs_planned"  # ctx.extra: the planned epochs a setting stated
SETTING = re.compile(
    r"(?<![\w-])(?:-{0,2})(?:max_steps|max[_ ]iters?|max[_ ]iterations|train_iters|total_steps"
    r"|num_training_steps|num_iterations|total_batch(?:es)?|niter"
    r"|total_iters|train_steps|num_train_steps|Total optimization steps|Max steps)"
    r"[\"']?\s*(?:[:=]|\.{2,})?\s*(\d[\d,_]*)(?!\d|\.\d)",
    re.IGNORECASE,
)
EPOCHS_SETTING = re.compile(
    r"(?<![\w-])(?:-{0,2})(?:num_epochs?|max_epochs?|epochs|epoch_num|n_epochs?|nb_epochs|total_epochs"
    r"|num_train_epochs|train_epochs|Num Epochs|Total epochs|training epochs?)"
    r"[\"']?\s*(?:[:=]|\.{2,})?\s*(\d+)(?!\d|\.\d)",
    re.IGNORECASE,
)
WORDS = (
    "steps",
    "iters",
    "STEPS",
    "ITERS",
    "poch",
    "POCH",
    "Max",
    "max_",
    "MAX_",
    "max iter",
    "total_batch",
    "niter",
    "training epoch",
)


def unplanned(ctx: Context) -> bool:
    """No planned steps or epochs known on this stream yet."""
    extra = ctx.extra
    return KEY not in extra and EPOCHS_KEY not in extra


def note_setting(text: str, ctx: Context) -> None:
    """Remember a planned-steps or planned-epochs setting printed on this stream (``max_steps: 19073``,
    ``'epochs': 10``)."""
    m = SETTING.search(text)
    if m is not None:
        total = int(m.group(1).replace(",", "").replace("_", ""))
        if total > 0:
            ctx.extra[KEY] = total
    m = EPOCHS_SETTING.search(text)
    if m is not None and 0 < int(m.group(1)) < 1_000_000:
        ctx.extra[EPOCHS_KEY] = int(m.group(1))
    m = PLANNED.search(text)  # an epoch's header: "Epoch 2/2"
    if m is not None and 0 < int(m.group(2)) < 1_000_000:
        ctx.extra[EPOCHS_KEY] = int(m.group(2))


def mark(text: str, records: list[Record], ctx: Context) -> None:
    """Give a frame's step records without an epoch the planned total (its counter's, else a setting's)."""
    first = records[0].fields
    step = first.get("step")
    if step is None or first.get("epoch") is not None or "steps_total" in first:
        return
    total = ctx.extra.get(KEY)
    if "/" in text:
        m = PLANNED_STEPS.search(text)
        if m is not None and int(m.group(1)) == step and int(m.group(2)) > 0:
            total = int(m.group(2))
    if total:
        for record in records:
            fields = record.fields
            if record.kind == "metric" and fields.get("step") is not None and fields.get("epoch") is None:
                fields["steps_total"] = total
