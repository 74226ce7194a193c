"""``gputui report`` counts GPUs as the distinct (host, gpu_id) sampled and ranks as the trainers say
(a 2-node × 4-GPU record file whose log labels rank 0 only said ``GPUs / ranks 1``)."""

from __future__ import annotations

import json
import math
import re

from gputui.cli import main
from gputui.monitor.state import DashboardState, JobInfo
from gputui.monitor.summary import summary_lines
from gputui.stream.io import encode_record
from gputui.stream.records import Record, event, gpu_sample, metric

T0 = 1_795_000_000.0


def _two_nodes_four_gpus(*, world_size: int | None = None) -> list[Record]:
    out = [event("train_started", time=T0, epochs=2, world_size=world_size)] if world_size else []
    out += [
        gpu_sample(
            host=host,
            gpu_id=f"GPU-{host}-{i}",
            vendor="nvidia",
            source="nvml",
            time=T0 + t,
            index=i,
            util_gpu_pct=90,
        )
        for host in ("node1", "node2")
        for i in range(4)
        for t in (0, 10, 20)
    ]
    out += [metric("loss", 1.0 / n, epoch=n, rank=0, scope="epoch", time=T0 + 10 * n) for n in (1, 2)]
    return sorted(out, key=lambda r: r.time)


def _report(tmp_path, capsys, records: list[Record], *args: str) -> str:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(encode_record(r) for r in records))
    assert main(["report", *args, str(path)]) == 0
    return capsys.readouterr().out


def test_eight_gpus_on_two_nodes_and_ranks_unknown_when_only_rank_0_speaks(tmp_path, capsys) -> None:
    text = _report(tmp_path, capsys, _two_nodes_four_gpus())
    assert "8 seen on 2 nodes · ranks unknown" in text
    assert "GPUs / ranks" not in text
    got = json.loads(_report(tmp_path, capsys, _two_nodes_four_gpus(), "--json"))
    assert (got["gpus"], got["gpus_seen"], got["nodes_seen"], got["ranks"]) == (8, 8, 2, None)


def test_the_trainers_world_size_gives_the_ranks(tmp_path, capsys) -> None:
    text = _report(tmp_path, capsys, _two_nodes_four_gpus(world_size=8))
    assert "8 seen on 2 nodes · ranks 8 (train_started)" in text


def test_report_and_headless_summary_print_no_none_nan_or_exponent_counts(capsys) -> None:
    """A 4-rank MNIST log (test_total 10000, no GPU samples): ``10,000`` not ``1e+04``; no ``?/?/?``."""
    log = "tests/logs/data/cesga_ddp_mnist_4rank.log"
    assert main(["report", log]) == 0
    text = capsys.readouterr().out
    assert "10,000" in text and "1e+04" not in text
    assert "energy" in text and "unknown (no power sampled)" in text
    assert main(["replay", "--headless", log]) == 0
    summary = capsys.readouterr().out
    assert "GPUs: none sampled" in summary and "?" not in summary
    for words in (text, summary):
        assert not re.search(r"\b(None|nan)\b", words)


def test_a_loss_that_was_only_nan_is_said_so() -> None:
    state = DashboardState(JobInfo(kind="replay", title="replay x"))
    state.ingest([metric("loss", math.nan, epoch=1, scope="epoch", time=T0)])
    assert "loss only nan seen" in "\n".join(summary_lines(state))
