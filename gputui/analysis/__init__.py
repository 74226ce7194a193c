"""Analysis of recorded runs: one run's report, and scaling across runs (no Textual here)."""

from gputui.analysis.run import GpuStats, RunAnalysis, RunReport
from gputui.analysis.scaling import ScalePoint, compare

__all__ = ["GpuStats", "RunAnalysis", "RunReport", "ScalePoint", "compare"]
