"""``gputui scale``'s word per size: where an inefficient size lost its time, and the run's verdicts.

Where parallel efficiency is under the analysis' good mark, the GPUs' mean utilisation says where the
time went: under ``low_util_pct`` the input pipeline (GPUs waiting for data), at or above
``high_util_pct`` communication (GPUs busy with all-reduce and synchronisation rather than new work),
between both. The run's own verdicts (a straggler node, input-bound, ...) follow.
"""

from __future__ import annotations

from collections.abc import Sequence

from gputui.config import VerdictSettings
from gputui.monitor.verdicts.findings import Finding


def utilisation_diagnosis(util: float | None, settings: VerdictSettings) -> str:
    if util is None:
        return "scaling loss; no GPU samples to say why"
    if util < settings.low_util_pct:
        return f"GPUs idle {100 - util:.0f} % of the time: input pipeline (data loading) likely"
    if util >= settings.high_util_pct:
        return "GPUs busy: communication / synchronisation likely"
    return "both input pipeline and communication"


def scale_diagnosis(
    inefficient: bool, util: float | None, settings: VerdictSettings, findings: Sequence[Finding] = ()
) -> str | None:
    """The size's diagnosis: the utilisation's word when ``inefficient``, then each verdict's
    ``where what`` (``node2 straggler``); None when there is nothing to say."""
    parts = [utilisation_diagnosis(util, settings)] if inefficient else []
    if findings:
        parts.append("verdict: " + ", ".join(f"{f.where} {f.what}" for f in findings))
    return "; ".join(parts) or None
