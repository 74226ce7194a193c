"""Why a job is slow or stuck, across every node, from its records (``docs/verdicts.md``)."""

from gputui.monitor.verdicts.engine import VerdictEngine, judge
from gputui.monitor.verdicts.findings import HEALTHY, Finding
from gputui.monitor.verdicts.scaling import scale_diagnosis

__all__ = ["HEALTHY", "Finding", "VerdictEngine", "judge", "scale_diagnosis"]
