"""``gputui report`` and ``gputui scale --from`` through the real CLI on generated record files: the
verdict section after the tables, ``verdict`` in ``--json`` and ``--csv``, the diagnosis per size."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

from gputui.cli import main
from gputui.monitor.verdicts.findings import clock
from gputui.stream.io import encode_record

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verdict_jobs as jobs
from verdict_jobs import T0


def _write(path: Path, records) -> str:
    path.write_bytes(b"".join(encode_record(r) for r in records))
    return str(path)


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_report_says_which_node_straggled_and_when(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("GPUTUI_CONFIG", str(tmp_path / "none.toml"))
    path = _write(tmp_path / "gputui-88-node1.jsonl", jobs.straggler_node())
    status, out, err = _cli(capsys, "report", path)
    assert status == 0 and err == ""
    tables, verdict = out.split("\nverdict\n")
    assert "node2" in tables  # the per-GPU table came first
    span = f"{clock(T0 + 120)}–{clock(T0 + 300)} (0:03:00)"
    assert verdict == f"  node2 straggler: GPUs 30 % vs 94 % on node1, power 150 vs 300 W, {span}\n"

    status, out, _ = _cli(capsys, "report", "--json", path)
    (finding,) = json.loads(out)["verdict"]
    assert (
        finding["kind"] == "straggler_node" and finding["where"] == "node2" and finding["level"] == "warning"
    )
    assert finding["start"] == T0 + 120 and finding["elapsed_s"] == 180.0

    status, out, _ = _cli(capsys, "report", "--csv", path)
    (row,) = csv.DictReader(io.StringIO(out))
    assert row["verdict"].startswith("node2 straggler:")


def test_a_healthy_run_gets_no_verdict(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("GPUTUI_CONFIG", str(tmp_path / "none.toml"))
    path = _write(tmp_path / "healthy.jsonl", jobs.healthy_two_nodes())
    status, out, _ = _cli(capsys, "report", path)
    assert status == 0 and out.endswith("\nverdict\n  no verdict: nothing slow or stuck seen\n")
    assert json.loads(_cli(capsys, "report", "--json", path)[1])["verdict"] == []


def test_report_reads_the_verdict_thresholds_from_the_settings(tmp_path: Path, capsys, monkeypatch) -> None:
    settings = tmp_path / "gputui.toml"
    settings.write_text("[verdict]\nsustain_minutes = 5\n", encoding="utf-8")
    monkeypatch.setenv("GPUTUI_CONFIG", str(settings))
    path = _write(tmp_path / "straggler.jsonl", jobs.straggler_node())
    assert json.loads(_cli(capsys, "report", "--json", path)[1])["verdict"] == []
    settings.write_text("[verdict]\nsustain_minutes = -1\n", encoding="utf-8")
    status, out, err = _cli(capsys, "report", "--json", path)  # a broken file: one line, the defaults
    assert status == 0 and "verdict.sustain_minutes must be" in err and len(err.splitlines()) == 1
    assert json.loads(out)["verdict"][0]["kind"] == "straggler_node"


def test_scale_names_each_sizes_verdict(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("GPUTUI_CONFIG", str(tmp_path / "none.toml"))
    one = _write(tmp_path / "one.jsonl", jobs.healthy_one_node())
    two = _write(tmp_path / "two.jsonl", jobs.straggler_node())
    status, out, _ = _cli(capsys, "scale", "--json", "--from", one, two)
    points = {Path(p["run"]).name: p for p in json.loads(out)["points"]}
    assert status == 0 and points["one.jsonl"]["diagnosis"] is None
    assert points["two.jsonl"]["diagnosis"] == "verdict: node2 straggler"
