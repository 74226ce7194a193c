"""The straggler-rank verdict from the per-rank diagnostics examples, read by the real readers through
``gputui report`` (Megatron-LM ``--log-straggler`` lines; an NCCL Inspector folder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gputui.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "logs" / "per_rank"


@pytest.mark.parametrize(
    ("run", "where", "evidence"),
    [
        (
            "megatron_straggler_srun.log",
            "rank 5",
            "lowest in 5 of 5 min/max lines: rank_clock_mhz 1422 vs 1980",
        ),
        ("nccl_run", "rank 3 of DP Group 0", "its NCCL collectives take 176.6 µs vs 281 µs on the others"),
    ],
)
def test_report_names_the_slow_rank(
    run: str, where: str, evidence: str, capsys, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("GPUTUI_CONFIG", str(tmp_path / "none.toml"))
    assert main(["report", "--json", str(EXAMPLES / run)]) == 0
    (finding,) = json.loads(capsys.readouterr().out)["verdict"]
    assert finding["kind"] == "straggler_rank" and finding["where"] == where
    assert finding["evidence"].startswith(evidence)
