"""gputui.home.rows: order, one row per job id, array grouping, GPU counts, state text and the / filter.

The array cases use ``data/squeue-22.05-array.txt``: the real ``squeue -O`` lines (``squeue_argv(all_states=
True)``) of array job 253 (``--array=0-5%2 --gres=gpu:1``) on the local Slurm 22.05 cluster: task 0
FAILED, tasks 1 and 2 RUNNING (own job ids 255 and 256), tasks 3-5 PENDING (JobArrayTaskLimit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gputui.home.rows import (
    COLUMNS,
    AttachedFigures,
    build_rows,
    filter_rows,
    gpu_total,
    gpus_per_node,
    job_cells,
    state_text,
)
from gputui.slurm.jobs import Job, parse_squeue
from gputui.slurm.scontrol import parse_scontrol_job

DATA = Path(__file__).parent / "data"
SLURM_DATA = Path(__file__).parent.parent / "slurm" / "data"


def job(job_id: str, state: str = "RUNNING", **kw) -> Job:
    kw.setdefault("name", f"job{job_id}")
    kw.setdefault("partition", "gpu")
    return Job(job_id=job_id, state=state, **kw)


def array_253() -> list[Job]:
    return parse_squeue((DATA / "squeue-22.05-array.txt").read_text())


def first_cells(rows) -> list[str]:
    return [r.cells[0] for r in rows]


# --------------------------------------------------------------------------- order


def test_order_running_pending_other_active_ended_newest_first() -> None:
    jobs = [
        job("10", "COMPLETED"),
        job("11", "PENDING"),
        job("12", "RUNNING"),
        job("13", "FAILED"),
        job("14", "RUNNING"),
        job("15", "SUSPENDED"),
        job("16", "PENDING"),
        job("17", "TIMEOUT"),
        job("9", "SUSPENDED"),
    ]
    rows = build_rows(jobs)
    assert [r.key for r in rows] == ["14", "12", "16", "11", "15", "9", "17", "13", "10"]
    assert [r.style for r in rows] == [
        "running",
        "running",
        "pending",
        "pending",
        "",
        "",
        "failed",
        "failed",
        "ended",
    ]
    assert all(r.kind == "job" and r.job is not None and r.job.job_id == r.key for r in rows)


def test_newest_first_compares_ids_as_numbers() -> None:
    rows = build_rows([job("99"), job("1000"), job("100")])
    assert [r.key for r in rows] == ["1000", "100", "99"]


def test_one_row_per_job_id_first_seen_wins() -> None:
    """A requeued job: squeue lists it PENDING again while sacct still has its ended allocation."""
    from_squeue = job("20", "PENDING", reason="BeginTime", name="requeued")
    from_sacct = job("20", "NODE_FAIL", exit_code="0:0", name="requeued")
    rows = build_rows([from_squeue, job("21", "COMPLETED"), from_sacct])
    assert [r.key for r in rows] == ["20", "21"]
    assert rows[0].job is from_squeue
    assert rows[0].cells[3] == "PENDING (BeginTime)"


def test_cells_of_a_plain_job() -> None:
    j = job(
        "42",
        name="train",
        partition="a100",
        nodelist="gpu[07-08]",
        num_nodes=2,
        tres_per_node="gres/gpu:a100:4",
        time_used_s=3725,
        time_limit_s=2 * 86400,
    )
    row = build_rows([j], {"42": AttachedFigures(util_pct=87.4, loss=0.123456)})[0]
    assert len(row.cells) == len(COLUMNS)
    assert row.cells == (
        "42",
        "train",
        "a100",
        "RUNNING",
        "1:02:05/2-00:00:00",
        "gpu[07-08]",
        "8 (2×4)",
        "87%",
        "0.1235",
    )


def test_cells_without_figures_nodes_or_limit() -> None:
    j = job("43", "PENDING", reason="Resources", num_nodes=3, time_limit_s=None)
    assert job_cells(j, None) == (
        "43",
        "job43",
        "gpu",
        "PENDING (Resources)",
        "-/UNLIMITED",
        "3",
        "-",
        "",
        "",
    )
    assert job_cells(job("44", "PENDING"), AttachedFigures(None, None))[5:] == ("-", "-", "", "")


# --------------------------------------------------------------------------- arrays


def test_real_array_capture_grouped() -> None:
    jobs = array_253()
    assert sorted(j.job_id for j in jobs) == ["253_0", "253_1", "253_2", "253_3", "253_4", "253_5"]
    rows = build_rows(jobs)
    assert len(rows) == 5
    head = rows[0]
    assert head.key == "array:253" and head.kind == "array" and head.job is None
    assert head.cells == ("253_[*]", "arr test", "debug", "6 tasks: 3 PD 2 R 1 F", "", "", "", "", "")
    # running tasks first in task order (their own rows and ids), then the ended one, then the pending ones
    assert [r.key for r in rows] == ["array:253", "253_1", "253_2", "253_0", "pending:253"]
    assert [r.kind for r in rows[1:4]] == ["task", "task", "task"]
    by_key = {r.key: r for r in rows}
    running = by_key["253_1"]
    assert running.job is not None and running.job.raw_job_id == 255
    assert running.cells == (
        "├ 253_1",
        "arr test",
        "debug",
        "RUNNING",
        "0:09/UNLIMITED",
        "node2",
        "1",
        "",
        "",
    )
    assert running.style == "running"
    failed = rows[3]
    assert failed.key == "253_0" and failed.cells[0] == "├ 253_0" and failed.style == "failed"
    assert failed.job is not None and failed.job.raw_job_id == 254
    folded = rows[4]
    assert folded.key == "pending:253" and folded.kind == "folded" and folded.job is None
    assert folded.style == "pending"
    assert folded.cells == (
        "└ 253_[3-5]",
        "arr test",
        "debug",
        "PENDING (JobArrayTaskLimit) ×3",
        "0:00/UNLIMITED",
        "1",
        "1",
        "",
        "",
    )


def test_rows_do_not_depend_on_the_order_squeue_prints_jobs_in() -> None:
    """The same jobs listed in another order (squeue's order may change between two refreshes) must give
    the same rows, or the table reshuffles under the cursor. Tasks 253_1 and 253_2 are both RUNNING."""
    jobs = array_253()
    forward = [(r.key, r.cells) for r in build_rows(jobs)]
    backward = [(r.key, r.cells) for r in build_rows(list(reversed(jobs)))]
    assert forward == backward


def test_pending_tasks_folded_into_one_range_row() -> None:
    tasks = [job(f"123_{t}", "PENDING", reason="Priority") for t in range(5, 10)]
    tasks.append(job("123_4", "RUNNING", nodelist="n1", num_nodes=1))
    rows = build_rows(tasks)
    assert first_cells(rows) == ["123_[*]", "├ 123_4", "└ 123_[5-9]"]
    assert rows[0].cells[3] == "6 tasks: 5 PD 1 R"
    assert rows[2].cells[3] == "PENDING (Priority) ×5"
    assert rows[2].key == "pending:123"


def test_pending_ranges_with_gaps() -> None:
    tasks = [job(f"77_{t}", "PENDING") for t in (12, 5, 6, 9, 7)]
    rows = build_rows(tasks)
    assert first_cells(rows) == ["77_[*]", "└ 77_[5-7,9,12]"]
    assert rows[0].cells[3] == "5 tasks: 5 PD"


def test_array_without_pending_tasks_closes_with_last_task() -> None:
    tasks = [job("300_2", "COMPLETED", exit_code="0:0"), job("300_1", "RUNNING")]
    rows = build_rows(tasks)
    assert first_cells(rows) == ["300_[*]", "├ 300_1", "└ 300_2"]
    assert [r.kind for r in rows] == ["array", "task", "task"]
    assert rows[2].cells[3] == "COMPLETED" and rows[2].style == "ended"


def test_array_placed_by_its_best_task_among_other_jobs() -> None:
    jobs = [
        job("100", "PENDING"),
        job("400", "COMPLETED"),
        job("50_1", "FAILED", exit_code="1:0"),
        job("50_2", "RUNNING"),
        job("30", "RUNNING"),
        job("60_0", "PENDING"),
    ]
    rows = build_rows(jobs)
    assert first_cells(rows) == ["50_[*]", "├ 50_2", "└ 50_1", "30", "100", "60_[*]", "└ 60_[0]", "400"]
    assert rows[2].cells[3] == "FAILED (1:0)"


def test_array_fields_win_over_the_id_text() -> None:
    """squeue -O gives ArrayJobID/ArrayTaskID; a task is grouped by them."""
    a = Job(job_id="7_1", state="RUNNING", array_job_id=7, array_task_id=1, raw_job_id=8)
    b = Job(job_id="7_2", state="PENDING", array_job_id=7, array_task_id=2, raw_job_id=7)
    rows = build_rows([a, b])
    assert first_cells(rows) == ["7_[*]", "├ 7_1", "└ 7_[2]"]


# --------------------------------------------------------------------------- GPUs


@pytest.mark.parametrize(
    ("tres", "per_node"),
    [
        ("gres:gpu:2", 2),
        ("gres/gpu:a100:4", 4),
        ("gres:gpu:a100:4", 4),
        ("gpu:2", 2),
        ("gres:gpu:tesla:1,gres:mps:100", 1),
        ("gres:mps:100,gres/gpu:3", 3),
        ("", None),
        ("gres:shard:2", None),
        ("cpu=4", None),
    ],
)
def test_gpus_per_node(tres: str, per_node: int | None) -> None:
    assert gpus_per_node(tres) == per_node


def test_gpu_total_from_scontrol_detail_wins_over_tres() -> None:
    detailed = parse_scontrol_job((SLURM_DATA / "scontrol-22.05-job-gres.txt").read_text())
    assert detailed.gpus == {"node1": [0, 1], "node2": [0, 1]}
    assert gpu_total(detailed) == 4
    # TRES says 4 per node on 2 nodes, but the allocation (scontrol -d) holds 3
    j = job("5", tres_per_node="gres:gpu:4", num_nodes=2, gpus={"n1": [0, 1], "n2": [2]})
    assert gpu_total(j) == 3


@pytest.mark.parametrize(
    ("tres", "nodes", "total", "cell"),
    [
        ("gres:gpu:2", 1, 2, "2"),
        ("gres:gpu:2", 3, 6, "6 (3×2)"),
        ("gres/gpu:a100:4", 2, 8, "8 (2×4)"),
        ("gres:gpu:2", None, 2, "2"),
        ("", 2, None, "-"),
    ],
)
def test_gpu_total_from_tres_times_nodes(tres: str, nodes: int | None, total: int | None, cell: str) -> None:
    j = job("5", tres_per_node=tres, num_nodes=nodes)
    assert gpu_total(j) == total
    assert job_cells(j, None)[6] == cell


# --------------------------------------------------------------------------- state text


@pytest.mark.parametrize(
    ("state", "reason", "exit_code", "text"),
    [
        ("PENDING", "Priority", "", "PENDING (Priority)"),
        ("PENDING", "", "", "PENDING"),
        ("FAILED", "NonZeroExitCode", "1:0", "FAILED (1:0)"),
        ("CANCELLED", "", "0:15", "CANCELLED (0:15)"),
        ("COMPLETED", "", "0:0", "COMPLETED"),
        ("FAILED", "NonZeroExitCode", "", "FAILED"),
        ("RUNNING", "None", "0:0", "RUNNING"),
    ],
)
def test_state_text(state: str, reason: str, exit_code: str, text: str) -> None:
    assert state_text(job("1", state, reason=reason, exit_code=exit_code)) == text


# --------------------------------------------------------------------------- filter


def filter_fixture():
    jobs = [
        job("1", "RUNNING", name="train-bert", partition="gpu"),
        job("2", "PENDING", name="eval", partition="cpu", reason="Priority"),
        *array_253(),
    ]
    return build_rows(jobs)


def test_filter_words_across_columns_all_must_match() -> None:
    rows = filter_fixture()
    assert [r.key for r in filter_rows(rows, "bert gpu")] == ["1"]
    assert [r.key for r in filter_rows(rows, "  BERT  ")] == ["1"]
    assert filter_rows(rows, "bert cpu") == []
    assert [r.key for r in filter_rows(rows, "priority")] == ["2"]


def test_filter_empty_text_keeps_everything() -> None:
    rows = filter_fixture()
    assert filter_rows(rows, "") == rows
    assert filter_rows(rows, "   ") == rows


def test_filter_keeps_array_header_with_matching_tasks() -> None:
    rows = filter_fixture()
    assert [r.key for r in filter_rows(rows, "node2")] == ["array:253", "253_1"]
    assert [r.key for r in filter_rows(rows, "253_0")] == ["array:253", "253_0"]
    assert [r.key for r in filter_rows(rows, "jobarraytasklimit")] == ["array:253", "pending:253"]


def test_filter_header_match_keeps_whole_array() -> None:
    rows = filter_fixture()
    kept = filter_rows(rows, "tasks:")  # only the header's state cell says "6 tasks: ..."
    assert [r.key for r in kept] == [r.key for r in rows if r.key.startswith(("array:", "253_", "pending:"))]
    assert len(kept) == 5


# --------------------------------------------------------------------------- many jobs


def test_two_hundred_jobs() -> None:
    states = ["RUNNING", "PENDING", "COMPLETED", "FAILED", "SUSPENDED"]
    jobs = [job(str(1000 + i), states[i % 5], exit_code="1:0" if i % 5 == 3 else "") for i in range(200)]
    rows = build_rows(jobs)
    assert len(rows) == 200 and len({r.key for r in rows}) == 200
    rank = {"RUNNING": 0, "PENDING": 1, "SUSPENDED": 2, "COMPLETED": 3, "FAILED": 3}
    expected = sorted(jobs, key=lambda j: (rank[j.state], -int(j.job_id)))
    assert [r.key for r in rows] == [j.job_id for j in expected]
    assert rows[0].key == "1195" and rows[40].key == "1196"


def test_two_hundred_array_tasks() -> None:
    tasks = [job(f"5000_{t}", "RUNNING" if t < 100 else "PENDING") for t in range(200)]
    rows = build_rows(tasks)
    assert len(rows) == 1 + 100 + 1
    assert rows[0].cells[3] == "200 tasks: 100 R 100 PD"
    assert rows[-1].cells[0] == "└ 5000_[100-199]" and rows[-1].cells[3] == "PENDING ×100"
    assert [r.key for r in rows[1:101]] == [f"5000_{t}" for t in range(100)]
