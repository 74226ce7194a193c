"""The outcome the dashboard and summaries show: the log's verdict, or Slurm's final state where the log
has no evidence (issue 12: attached, Slurm's final job state is evidence)."""

from __future__ import annotations

from gputui.monitor.state import DashboardState, JobInfo
from gputui.stream.records import event


def state_with(kind: str, job_state: str, log_outcome: str | None) -> DashboardState:
    state = DashboardState(JobInfo(kind=kind, title="job 7", job_id="7"))
    state.job.state = job_state
    if log_outcome is not None:
        state.outcome = event("outcome", message=log_outcome, outcome=log_outcome, evidence="last line")
    return state


def test_slurm_state_decides_where_the_log_has_no_evidence() -> None:
    assert state_with("attach", "COMPLETED", "unknown").final_outcome() == (
        "completed",
        "Slurm: job 7 ended COMPLETED",
    )
    assert state_with("attach", "TIMEOUT", None).final_outcome() == (
        "time_limit",
        "Slurm: job 7 ended TIMEOUT",
    )
    assert state_with("attach", "OUT_OF_MEMORY", "unknown").final_outcome()[0] == "oom"


def test_the_logs_evidence_wins_and_replays_do_not_guess() -> None:
    assert state_with("attach", "COMPLETED", "oom").final_outcome() == ("oom", "last line")
    assert state_with("replay", "COMPLETED", "unknown").final_outcome() == ("unknown", "last line")
    assert state_with("attach", "RUNNING", "unknown").final_outcome() == ("unknown", "last line")
    assert state_with("local", "COMPLETED", None).final_outcome() is None
