"""NCCL Inspector files → per-rank metric records, and where a run's are found (``docs/log-formats.md``)."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import time
from pathlib import Path

import pytest
from per_rank_gen import Operation, inspector_line

from gputui.cli import main as cli_main
from gputui.logs.files import metric_files
from gputui.logs.files.nccl_inspector import WINDOW_S, NcclInspectorParser
from gputui.sources.inputs import run_files, run_records
from gputui.stream.records import Record

EXAMPLE_RUN = Path(__file__).parent / "per_rank" / "nccl_run"
COMMS = [("0x7f8c496ae9f661", "DP Group 0", 8, 2), ("0x1a2b3c4d5e6f70", "TP Group 3", 2, 1)]


def random_operations(rng: random.Random, count: int, *, verbose: bool) -> list[Operation]:
    """One process's operations over about a minute: two communicators, a few message sizes."""
    host, pid = f"node{rng.randint(1, 9)}", rng.randint(1000, 99999)
    ranks = {comm: rng.randrange(n) for comm, _name, n, _nodes in COMMS}
    t, ops = 1_750_000_000_000_000 + rng.randrange(10**9), []
    for sn in range(count):
        comm, name, n_ranks, nnodes = rng.choice(COMMS)
        t += rng.randrange(1, 3_000_000)
        ops.append(
            Operation(
                comm, name, ranks[comm], n_ranks, nnodes, host, pid, rng.choice(["AllReduce", "AllGather"]),
                sn, rng.choice([1 << 16, 8 << 20, 64 << 20]), rng.randint(20, 90_000),
                t + rng.randrange(500_000), t if verbose else None,
            )
        )  # fmt: skip
    return ops


def expected_means(ops: list[Operation], verbose: bool) -> dict[tuple, tuple[int, dict[str, float]]]:
    """(comm, rank, collective, size, window) → (count, {metric: mean}) as computed here."""
    groups: dict[tuple, list[Operation]] = {}
    for op in ops:
        when = (op.stop_us if verbose else op.dump_us) / 1e6
        groups.setdefault((op.comm, op.rank, op.coll, op.msg_bytes, math.floor(when / WINDOW_S)), []).append(
            op
        )
    return {
        key: (
            len(group),
            {
                "nccl_busbw_gbps": sum(op.busbw for op in group) / len(group),
                "nccl_algbw_gbps": sum(op.algbw for op in group) / len(group),
                "nccl_time_us": sum(op.time_us for op in group) / len(group),
            },
        )
        for key, group in groups.items()
    }


def read(data: bytes, pieces: int = 1, seed: int = 0) -> tuple[list[Record], NcclInspectorParser]:
    """The records of ``data`` fed in ``pieces`` random pieces, then ``finish``."""
    rng, parser, out = random.Random(seed), NcclInspectorParser(), []
    cuts = sorted(rng.sample(range(1, len(data)), pieces - 1)) if pieces > 1 else []
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        out += parser.feed(data[start:end])
    return out + parser.finish(now=0.0), parser


@pytest.mark.parametrize("seed", range(8))
def test_generated_operations_give_each_windows_means(seed: int) -> None:
    rng = random.Random(seed)
    verbose = seed % 2 == 1  # NCCL_INSPECTOR_DUMP_VERBOSE=1: each operation's own stop time
    ops = random_operations(rng, rng.randint(20, 300), verbose=verbose)
    data = "".join(inspector_line(op) + "\n" for op in ops).encode()
    records, parser = read(data, pieces=rng.randint(1, 40), seed=seed)
    assert parser.stats.records == len(ops) and parser.skipped == 0
    got: dict[tuple, tuple[int, dict[str, float]]] = {}
    names = {op.comm: op.comm_name for op in ops}
    for rec in records:
        f = rec.fields
        assert (f["source"], f["scope"], f["time_source"], f["window_s"]) == (
            "nccl_inspector",
            "step",
            "emitted",
            10,
        )
        assert (f["comm_name"], f["comm_ranks"], f["host"], f["pid"]) == (
            names[f["comm"]], {c[0]: c[2] for c in COMMS}[f["comm"]], ops[0].host, ops[0].pid
        )  # fmt: skip
        key = (f["comm"], f["rank"], f["collective"], f["msg_bytes"], math.floor(rec.time / WINDOW_S))
        count, means = got.setdefault(key, (f["count"], {}))
        assert count == f["count"] and f["name"] not in means
        means[f["name"]] = f["value"]
    expected = expected_means(ops, verbose)
    assert got.keys() == expected.keys()
    for key, (count, means) in expected.items():
        assert got[key][0] == count
        assert got[key][1] == {name: pytest.approx(mean) for name, mean in means.items()}


def test_bad_lines_are_counted_and_skipped() -> None:
    op = Operation(
        "0xabc", "DP Group 0", 1, 4, 1, "node1", 42, "AllReduce", 7, 1 << 20, 100, 1_750_000_000_000_000
    )
    good = inspector_line(op)
    nan = good.replace('"coll_busbw_gbs":15.728640', '"coll_busbw_gbs":"nan"')
    assert nan != good
    lines = [
        good,
        "{not json",
        good[: len(good) // 2],  # cut mid-object (a writer killed), then the next line
        "[" * 5000 + "]" * 5000,  # nested far deeper than any record
        json.dumps({"header": {"rank": 1}, "metadata": {}}),  # JSON, no operation
        json.dumps(
            {"header": {"rank": -1}, "metadata": {"dump_timestamp_us": 1}, "coll_perf": {"coll": "x"}}
        ),
        "\udcff\udcfe",  # bytes 0xff 0xfe: not UTF-8
        nan,  # NaN bandwidth: the other values stay
        good.replace('"rank":1,', '"rank":' + "9" * 400 + ","),  # numbers no float holds
        good.replace('"dump_timestamp_us":1750000000000000', '"dump_timestamp_us":' + "9" * 400),
        good.replace('"coll_exec_time_us":100,', '"coll_exec_time_us":' + "9" * 5000 + ","),
        '{"pad":"' + "x" * (2 << 20) + '"}',  # over the line limit
    ]
    data = "\n".join(lines).encode("utf-8", "surrogateescape") + b"\n" + good.encode()[:40]
    records, parser = read(data, pieces=7)
    stats = parser.stats
    assert (stats.records, stats.malformed, stats.invalid, stats.too_long, stats.truncated) == (2, 5, 4, 1, 1)
    metrics = [(r["name"], r["value"]) for r in records if r.kind == "metric"]
    assert sorted(metrics) == sorted(
        [("nccl_algbw_gbps", 10.48576), ("nccl_busbw_gbps", 15.72864), ("nccl_time_us", 100.0)]
    )
    counts = {r["name"]: r["count"] for r in records if r.kind == "metric"}
    assert counts == {"nccl_busbw_gbps": 2, "nccl_algbw_gbps": 2, "nccl_time_us": 2}  # ops averaged
    warning = [r for r in records if r.kind == "event"]
    assert len(warning) == 1 and warning[0]["event"] == "warning"
    assert "skipped 11 lines" in warning[0]["message"]
    assert stats.examples[:3] == ["line 2: not JSON (JSONDecodeError)", "line 3: not JSON (JSONDecodeError)",
                                  "line 4: not JSON (ValueError)"]  # fmt: skip


def test_a_run_dir_finds_its_inspector_folder(tmp_path: Path) -> None:
    """Beside a run's other metric files, in the job's working directory, or the folder itself."""
    folder = tmp_path / "nccl-inspector-4242"
    shutil.copytree(EXAMPLE_RUN / "nccl-inspector-4242", folder)
    files = sorted(str(p) for p in folder.iterdir())
    assert len(files) == 4
    assert metric_files.run_dir_files(str(tmp_path)) == files
    assert metric_files.run_dir_files(str(folder)) == files  # the folder given itself
    assert all(metric_files.metric_file_kind(f) == "nccl_inspector" for f in files)
    (tmp_path / "metrics.csv").write_text("step,loss\n1,0.5\n")
    assert metric_files.run_dir_files(str(tmp_path)) == [str(tmp_path / "metrics.csv"), *files]
    other = tmp_path / "nccl-inspector-17"  # another job's, newer
    shutil.copytree(folder, other)
    os.utime(other, (os.path.getmtime(folder) + 60,) * 2)
    assert metric_files.run_dir_files(str(tmp_path), job_id="4242")[1:] == files
    assert metric_files.run_dir_files(str(tmp_path))[1] == str(other / "node1-pid1001.log")
    custom = tmp_path / "dumps"  # NCCL_INSPECTOR_DUMP_DIR of another name: known by its lines
    custom.mkdir()
    shutil.copy(files[0], custom / "gpu7-pid99.log")
    (custom / "train-pid3.log").write_text("epoch 1 loss 0.3\n")
    assert metric_files.run_dir_files(str(custom)) == [str(custom / "gpu7-pid99.log")]
    assert metric_files.metric_file_kind(str(custom / "train-pid3.log")) is None
    assert [f.kind for f in run_files(str(tmp_path / "dumps"))] == ["nccl_inspector"]


def test_report_of_a_run_dir_reads_the_inspector_folder(capsys: pytest.CaptureFixture[str]) -> None:
    """``gputui report`` of a run directory holding only ``nccl-inspector-4242/`` (a 2-node × 2-GPU job
    whose rank 3, on node2, arrives late at each collective: the others' operations last longer, they
    wait for it): its four ranks' records."""
    records = [r for r in run_records(str(EXAMPLE_RUN)) if r.kind == "metric"]
    assert {r["rank"] for r in records} == {0, 1, 2, 3}
    times: dict[int, list[float]] = {}
    for r in records:
        if r["name"] == "nccl_time_us" and r["collective"] == "AllReduce":
            times.setdefault(r["rank"], []).append(r["value"])
    means = {rank: sum(v) / len(v) for rank, v in times.items()}
    assert min(means, key=means.__getitem__) == 3 and means[3] < 0.7 * min(means[0], means[1], means[2])
    assert {r["host"] for r in records if r["rank"] == 3} == {"node2"}
    assert cli_main(["report", "--json", str(EXAMPLE_RUN)]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["ranks"] == 4


def test_send_recv_lines_give_their_peer() -> None:
    """``p2p_perf`` (``inspectorCompletedP2p``): the operation, its peer, bytes, time and bandwidths."""
    line = {
        "header": {"id": "0x9e", "comm_name": "PP Group 1", "rank": 1, "n_ranks": 4, "nnodes": 2},
        "metadata": {"dump_timestamp_us": 1_750_000_005_000_000, "hostname": "node2", "pid": 77},
        "p2p_perf": {
            "p2p": "Send",
            "p2p_sn": 12,
            "p2p_peer": 2,
            "p2p_msg_size_bytes": 33554432,
            "p2p_exec_time_us": 1154,
            "p2p_timing_source": "kernel_gpu",
            "p2p_algobw_gbs": 29.076631,
            "p2p_busbw_gbs": 29.076631,
        },
    }
    records, _ = read((json.dumps(line, separators=(",", ":")) + "\n").encode())
    assert [(r["name"], r["value"]) for r in records] == [
        ("nccl_busbw_gbps", 29.076631),
        ("nccl_algbw_gbps", 29.076631),
        ("nccl_time_us", 1154.0),
    ]
    f = records[0].fields
    assert (f["collective"], f["peer"], f["msg_bytes"], f["rank"], f["comm_name"]) == (
        "Send",
        2,
        33554432,
        1,
        "PP Group 1",
    )
    assert records[0].time == 1_750_000_005.0


def test_a_followed_file_gives_each_window_once_it_is_past(tmp_path: Path) -> None:
    """``attach``/``replay`` follow the file as NCCL appends to it: a window's means come once operations
    two windows later are read, or once the clock is past it (the file stopped growing), the rest at the
    end. Operations an hour ahead of this clock (a node's) wait for later operations."""
    path = tmp_path / "nccl-inspector-9" / "node1-pid5.log"
    path.parent.mkdir()
    ahead = (int(time.time()) // 10 * 10 + 3600) * 1_000_000

    def op(start: int, second: int, time_us: int) -> str:
        dump = start + second * 1_000_000
        return inspector_line(
            Operation("0x1", "DP", 0, 2, 1, "node1", 5, "AllReduce", second, 1 << 20, time_us, dump)
        )

    follower = metric_files.MetricFileFollower(str(path))
    path.write_text(op(ahead, 1, 100) + "\n" + op(ahead, 2, 300) + "\n")
    assert follower.poll() == []  # window 0 may still get operations
    with path.open("a") as fh:
        fh.write(op(ahead, 25, 50) + "\n")
    first = [r for r in follower.poll() if r["name"] == "nccl_time_us"]
    assert [(r["value"], r["count"], r.time) for r in first] == [(200.0, 2, ahead / 1e6 + 2)]
    rest = [r for r in follower.finish() if r.kind == "metric" and r["name"] == "nccl_time_us"]
    assert [(r["value"], r["count"]) for r in rest] == [(50.0, 1)]

    past = tmp_path / "nccl-inspector-8" / "node1-pid6.log"  # an ended run: every window at once
    past.parent.mkdir()
    past.write_text(op(1_750_000_000_000_000, 1, 100) + "\n" + op(1_750_000_000_000_000, 25, 50) + "\n")
    got = metric_files.MetricFileFollower(str(past)).poll()
    assert [(r["value"], r["count"]) for r in got if r["name"] == "nccl_time_us"] == [(100.0, 1), (50.0, 1)]
