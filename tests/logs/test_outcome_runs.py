"""Outcomes by runs (issue 22): several launches appended to one file are runs and the last one decides,
earlier runs' failures stay as events; a bare ``Killed`` is a crash by SIGKILL; a global counter at its
planned total followed by a summary is completion."""

from __future__ import annotations

import io

import pytest

from gputui.logs import parse_bytes, parse_stream

OOM_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 88, in <module>\n'
    "    loss.backward()\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
)
PREEMPTED = "slurmstepd: error: *** JOB 77 ON gpu3 CANCELLED AT 2026-01-02T03:04:05 DUE TO PREEMPTION ***\n"

# How a launch announces itself (the markers of gputui.logs.runs), and how it counts its work.
BANNERS = {
    "argparse": "Namespace(lr=0.001, batch_size=64, epochs=5)\n",
    "hf": "***** Running training *****\n  Num examples = 5000\n",
    "ultralytics": "Starting training for 5 epochs...\n",
    "deit": "| distributed init (rank 0): env://\n",
    "none": "",
}


def _epochs(last: int) -> str:
    return "".join(f"Epoch {e} - loss: {2 / e:.4f} - acc: {0.4 + e / 20:.3f}\n" for e in range(1, last + 1))


def _steps(last: int) -> str:
    return "".join(
        f"step {s} | loss: {9 / (s + 1):.4f} | lr 3.0e-04 | dt: 120.5ms\n" for s in range(0, last + 1, 10)
    )


COUNTERS = {"epochs": (_epochs, 2, 5), "steps": (_steps, 30, 120)}


def launch(banner: str, counter: str, ending: str) -> str:
    """One launch: its banner, its counter lines, then how it ended."""
    lines, short, full = COUNTERS[counter]
    if ending == "oom":
        return BANNERS[banner] + lines(short) + OOM_TRACEBACK
    if ending == "preempted":
        return BANNERS[banner] + lines(short) + PREEMPTED
    return BANNERS[banner] + lines(full) + "End of training\n"


def outcome(text: str) -> dict:
    events = [r for r in parse_bytes(text.encode()) if r.kind == "event" and r.get("event") == "outcome"]
    assert len(events) == 1
    return events[0].fields


def signals(text: str, name: str) -> list:
    return [r for r in parse_bytes(text.encode()) if r.kind == "event" and r.get("signal") == name]


@pytest.mark.parametrize("counter", COUNTERS)
@pytest.mark.parametrize("banner", BANNERS)
def test_an_oom_launch_then_a_completed_launch_is_completed(banner: str, counter: str) -> None:
    log = launch(banner, counter, "oom") + launch(banner, counter, "completed")
    result = outcome(log)
    assert result["outcome"] == "completed" and result["evidence"] == "End of training"
    assert [e["signal"] for e in result["earlier_runs"]] == ["oom"]
    assert len(signals(log, "oom")) == 1  # the first run's OOM stays an error event


@pytest.mark.parametrize("counter", COUNTERS)
@pytest.mark.parametrize("banner", BANNERS)
def test_a_completed_launch_then_an_oom_launch_is_oom(banner: str, counter: str) -> None:
    result = outcome(launch(banner, counter, "completed") + launch(banner, counter, "oom"))
    assert result["outcome"] == "oom"
    assert "CUDA out of memory" in result["evidence"]


def test_three_launches_the_last_decides_and_the_earlier_are_listed() -> None:
    log = launch("argparse", "steps", "oom") + launch("argparse", "steps", "preempted")
    log += launch("argparse", "steps", "completed")
    result = outcome(log)
    assert result["outcome"] == "completed"
    assert [e["signal"] for e in result["earlier_runs"]] == ["oom", "cancelled"]
    assert outcome(log.rsplit("Namespace", 1)[0])["outcome"] == "cancelled"  # without the last launch


def test_output_after_a_failure_without_a_new_launch_does_not_hide_it() -> None:
    # another rank's last lines after rank 0's OOM, and a launcher's messages: the same launch
    tail = "step 30 | loss: 0.2900 | lr 3.0e-04 | dt: 121.0ms\nChildFailedError: train.py FAILED\n"
    assert outcome(launch("argparse", "steps", "oom") + tail)["outcome"] == "oom"
    # a banner with no training after it: no new run either
    assert outcome(launch("argparse", "steps", "oom") + BANNERS["argparse"])["outcome"] == "oom"


def test_a_test_phase_after_the_end_message_is_not_a_new_run() -> None:
    fit = "Epoch 4: 100%|##########| 50/50 [00:02<00:00, loss=0.2]\n"
    fit += "`Trainer.fit` stopped: `max_epochs=5` reached.\n"
    test = "| distributed init (rank 0): env://\nstep 1 | test_loss: 0.3100\nstep 2 | test_loss: 0.3000\n"
    result = outcome(_epochs(5) + fit + test)
    assert result["outcome"] == "completed" and "max_epochs=5" in result["evidence"]


@pytest.mark.parametrize("thin", [False, True])
def test_the_runs_are_the_same_in_catch_up_mode_and_in_small_reads(thin: bool) -> None:
    log = (launch("hf", "steps", "oom") + launch("hf", "steps", "completed")).encode()
    records = list(parse_stream(io.BytesIO(log), thin=thin, read_size=37))
    result = next(r for r in records if r.get("event") == "outcome")
    assert result["outcome"] == "completed" and [e["signal"] for e in result["earlier_runs"]] == ["oom"]


def test_cut_at_each_line_a_two_launch_log_keeps_the_answer_of_its_last_run() -> None:
    first, second = launch("argparse", "steps", "oom"), launch("argparse", "steps", "completed")
    lines = (first + second).splitlines(keepends=True)
    cut_after_oom = len(first.splitlines())
    for n in range(cut_after_oom, len(lines) + 1):
        result = outcome("".join(lines[:n]))
        if n == len(lines):
            assert result["outcome"] == "completed"
        elif n <= cut_after_oom + 1:  # the OOM, then the next banner: no training of the new run yet
            assert result["outcome"] == "oom", n
        else:  # the second launch trains and has not finished
            assert result["outcome"] == "unknown", n
            assert [e["signal"] for e in result["earlier_runs"]] == ["oom"]


KILLED = [
    "Killed",
    "/var/spool/slurmd/job1042215/slurm_script: line 21: 1613604 Killed                  python train.py",
    "srun: error: nid005475: task 0: Killed",
]


@pytest.mark.parametrize("line", KILLED)
def test_a_bare_killed_is_a_crash_by_sigkill_that_names_the_oom_killer(line: str) -> None:
    result = outcome(_epochs(3) + line + "\n")
    assert result["outcome"] == "crashed" and result["evidence"] == line
    assert "SIGKILL" in result["reason"] and "OOM killer" in result["reason"]


def test_killed_words_that_are_not_a_kill_are_not_a_crash() -> None:
    for line in ("Killing subprocess 4242", "Killed processes are restarted by the elastic agent: 0"):
        assert outcome(_epochs(3) + line + "\n")["outcome"] == "unknown"


@pytest.mark.parametrize(
    "slurm",
    [
        "slurmstepd: error: Detected 1 oom_kill event in StepId=1054.0. "
        "Some of the step tasks have been OOM Killed.",
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1042215.batch cgroup. "
        "Some of your processes may have been killed by the cgroup out-of-memory handler.",
        "srun: error: ana: task 0: Out Of Memory",
    ],
)
def test_slurm_oom_kill_lines_are_oom_and_name_the_killer_of_a_killed_task(slurm: str) -> None:
    assert outcome(_epochs(3) + slurm + "\n")["outcome"] == "oom"
    result = outcome(_epochs(3) + KILLED[1] + "\n" + slurm + "\n")
    assert result["outcome"] == "oom" and result["evidence"] == slurm
    assert "crashed" not in result.get("secondary", [])


PADDLESEG = "".join(
    f"2026-03-01 10:{i % 60:02d}:00 [INFO]\t[TRAIN] epoch: 12, iter: {i}/80000, loss: 0.2113, lr: 0.000010, "
    f"batch_cost: 0.2415, reader_cost: 0.00043, ips: 33.1245 samples/sec | ETA 0:00:{(80000 - i) // 10:02d}\n"
    for i in range(79950, 80001, 10)
)
SUMMARY = (
    "2026-03-01 10:59:59 [INFO]\t[EVAL] #Images: 500 mIoU: 0.7712 Acc: 0.9561 Kappa: 0.9430 Dice: 0.8620\n"
)


def test_the_planned_total_reached_and_then_a_summary_is_completed() -> None:
    result = outcome(PADDLESEG + SUMMARY)
    assert result["outcome"] == "completed"
    assert "iter: 80000/80000" in result["evidence"] and "mIoU: 0.7712" in result["summary"]
    for counter in ("step", "iteration"):
        log = "".join(f"{counter} {i}/500 loss {1 / i:.3f}\n" for i in range(100, 501, 100))
        assert outcome(log + "Saved final checkpoint to out/model_final.pth\n")["outcome"] == "completed"


def test_the_planned_total_without_a_summary_or_short_of_it_stays_as_it_was() -> None:
    assert outcome(PADDLESEG)["outcome"] == "completed"  # its planned total reached (issue 30)
    short = PADDLESEG.rsplit("\n", 2)[0] + "\n" + SUMMARY
    assert outcome(short)["outcome"] == "truncated"  # 79990/80000: planned work not reached
    error = "RuntimeError: NCCL communicator was aborted on rank 3.\n"
    assert outcome(PADDLESEG + error)["outcome"] == "nccl_error"


def test_an_early_stop_after_n_epochs_then_the_best_epochs_summary_is_early_stopped() -> None:
    log = (
        "".join(
            f"[pretrain] epoch {e:3d}/40  train={5 - e / 10:.4f}  heldout={5.3 - e / 20:.4f}\n"
            for e in range(1, 29)
        )
        + "[pretrain] early stop after 28 epochs (no improvement for 6)\n"
        + "pretrain-encoder: best epoch 22, held-out total 5.1822. wrote artifacts/encoder\n"
    )
    result = outcome(log)
    assert result["outcome"] == "early_stopped"
    assert result["evidence"].startswith("[pretrain] early stop after 28 epochs")


def test_an_argparse_error_ends_the_last_launch_as_a_crash() -> None:
    log = (
        "Namespace(lr=0.001, epochs=1)\n"
        + _epochs(1)
        + "usage: main.py [-h] [--lr LR]\nmain.py: error: unrecognized arguments: -ws 8\n"
    )
    assert outcome(log)["outcome"] == "crashed"


def test_a_traceback_that_logging_reports_is_not_the_end_and_n_epoch_plans_the_run() -> None:
    logging_error = (
        "--- Logging error ---\n"
        + "Traceback (most recent call last):\n"
        + '  File "/usr/lib/python3.11/logging/__init__.py", line 1110, in emit\n'
        + "TypeError: not all arguments converted during string formatting\n"
        + "Call stack:\n"
        + "Message: 'loss %s'\n"
    )
    log = "train.py --n_epoch=5 --lr=5e-4\n" + _epochs(4)
    assert outcome(log)["outcome"] == "truncated"  # 4 of the 5 epochs --n_epoch plans
    result = outcome(log + "Epoch 5 - loss: 0.4000\n" + logging_error)
    assert result["outcome"] == "completed" and result["evidence"].startswith("Epoch 5")


def test_values_under_an_announced_epoch_wait_for_it_to_run() -> None:
    launch = (
        "Namespace(lr=0.01, max_epoch=250)\n**** EPOCH 000 ****\n"
        "Current learning rate: 0.010000\nCurrent BN decay momentum: 0.500000\n"
    )
    never_ran = parse_bytes((launch * 3).encode())
    assert [r for r in never_ran if r.kind == "metric"] == []  # launches that printed no batch
    assert outcome(launch * 3)["outcome"] == "truncated"  # the epoch it announced never ran
    ran = launch + "mean loss: 2.41\naccuracy: 0.29\n**** EPOCH 001 ****\nCurrent learning rate: 0.009000\n"
    got = [
        (r.get("name"), r.get("value"), r.get("epoch"))
        for r in parse_bytes(ran.encode())
        if r.kind == "metric"
    ]
    assert got == [
        ("current_learning_rate", 0.01, 0),
        ("current_bn_decay_momentum", 0.5, 0),
        ("mean_loss", 2.41, 0),
        ("accuracy", 0.29, 0),
        ("current_learning_rate", 0.009, 1),
    ]


def test_a_line_that_closes_an_epoch_announces_nothing() -> None:
    log = "epoch 1\nstep 10 | loss 0.5\nepoch 2\nstep 20 | loss 0.4\n==end-of-epoch 2==\n"
    assert outcome(log)["outcome"] == "unknown"  # no plan stated; not "truncated" at an announcement
    assert outcome(log.replace("==end-of-epoch 2==", "epoch 3"))["outcome"] == "truncated"
