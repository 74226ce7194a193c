"""Flower's server lines (``gputui.logs.formats.flower``): rounds are steps; History's repeats not read."""

from __future__ import annotations

from gputui.logs import parse_bytes

LOG = """\
INFO :      Starting Flower ServerApp, config: num_rounds=2, no round_timeout
INFO :      initial parameters (loss, other metrics): 2.3026, {'cen_accuracy': 0.1011}
INFO :      [ROUND 1]
INFO :      fit progress: (1, 2.1, {'cen_accuracy': 0.25, 'note': 'x'}, 10.5)
INFO :      [ROUND 2]
INFO :      fit progress: (2, 1.9, {'cen_accuracy': 0.3}, 20.25)
INFO :      [SUMMARY]
INFO :      Run finished 2 round(s) in 20.31s
INFO :      	History (loss, distributed):
INFO :      		round 1: 0.7
INFO :      		round 2: 0.6
INFO :      	History (loss, centralized):
INFO :      		round 0: 2.3026
INFO :      		round 1: 2.1
"""


def test_rounds_are_steps_and_the_history_gives_only_what_the_rounds_did_not() -> None:
    got = [
        (r.get("name"), r.get("value"), r.get("step"), r.get("scope"))
        for r in parse_bytes(LOG.encode())
        if r.kind == "metric"
    ]
    assert got == [
        ("loss", 2.3026, 0, "step"),
        ("cen_accuracy", 0.1011, 0, "step"),
        ("loss", 2.1, 1, "step"),
        ("cen_accuracy", 0.25, 1, "step"),
        ("elapsed_s", 10.5, 1, "step"),
        ("loss", 1.9, 2, "step"),
        ("cen_accuracy", 0.3, 2, "step"),
        ("elapsed_s", 20.25, 2, "step"),
        ("runtime_s", 20.31, 2, "summary"),
        ("distributed_loss", 0.7, 1, "step"),
        ("distributed_loss", 0.6, 2, "step"),
    ]
