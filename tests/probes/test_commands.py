"""``gputui probe`` and ``gputui --log``: streaming, signals, rotation, patterns, kills and full disks."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

from probe_helpers import clean_env, count_lines, gputui_cmd, parse_lines, run_gputui, wait_for

from gputui.stream.io import ReadStats, read_file


def _read(path: Path) -> tuple[list, ReadStats]:
    stats = ReadStats()
    return list(read_file(path, stats)), stats


def test_probe_sim_streams_valid_records():
    res = run_gputui("probe", "--backend", "sim", "--count", "3", "--interval", "0.05")
    assert res.returncode == 0 and res.stderr == ""
    recs = parse_lines(res.stdout)
    first = recs[0]
    assert first["event"] == "probe_started" and first["simulated"] is True and first["backend"] == "sim"
    assert first["version"] and first["python"] == sys.executable and first["host"]
    assert [r["kind"] for r in recs].count("gpu") == 12 and recs[-1]["event"] == "probe_stopped"


def _start(*args, env=None, **kw):
    return subprocess.Popen(
        gputui_cmd(*args), env=env or clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw
    )


def test_probe_ignores_usr1_usr2_and_stops_cleanly_on_term_and_int():
    for stop in (signal.SIGTERM, signal.SIGINT):
        proc = _start("probe", "--backend", "sim", "--interval", "0.05")
        assert json.loads(proc.stdout.readline())["event"] == "probe_started"
        proc.send_signal(signal.SIGUSR1)
        proc.send_signal(signal.SIGUSR2)
        for _ in range(12):  # keeps sampling after the USR signals
            assert json.loads(proc.stdout.readline())["kind"] in ("gpu", "host")
        assert proc.poll() is None
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0 and err == b""
        last = parse_lines(out.decode())[-1]
        assert last["event"] == "probe_stopped" and last["reason"] == (
            "sigterm" if stop == signal.SIGTERM else "sigint"
        )


def test_probe_exits_quietly_when_reader_goes_away(tmp_path):
    err = tmp_path / "err"
    probe = " ".join(gputui_cmd("probe", "--backend", "sim", "--interval", "0.01"))
    script = f"{probe} 2>{err} | head -n 1; echo ${{PIPESTATUS[0]}}"
    res = subprocess.run(["bash", "-c", script], env=clean_env(), capture_output=True, text=True, timeout=30)
    first, status = res.stdout.splitlines()
    assert json.loads(first)["event"] == "probe_started"
    assert status == "0" and err.read_text() == ""


def test_headless_patterns_append_and_check(tmp_path):
    env = clean_env(SLURM_JOB_ID="4242", SLURMD_NODENAME="nid000007", SLURM_NODEID="1")
    for _ in range(2):
        res = run_gputui(
            "--log",
            str(tmp_path / "gpu-%j-%N-%n.jsonl"),
            "--backend",
            "sim",
            "--count",
            "2",
            "--interval",
            "0.02",
            env=env,
        )
        assert res.returncode == 0 and "stopped (count) after 2 samples" in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1  # one-paragraph summary
    path = tmp_path / "gpu-4242-nid000007-1.jsonl"
    recs, stats = _read(path)
    assert stats.skipped == 0
    assert [r.get("event") for r in recs if r.kind == "event"] == ["probe_started", "probe_stopped"] * 2
    assert {r["job"] for r in recs if r.kind in ("gpu", "host")} == {"4242"}
    check = run_gputui("check", str(path))
    assert check.returncode == 0 and "skipped" not in check.stdout


def test_headless_rotation_by_size(tmp_path):
    path = tmp_path / "g.jsonl"
    env = clean_env(GPUTUI_SIM_GPUS="8")
    args = (
        "--log",
        str(path),
        "--backend",
        "sim",
        "--count",
        "25",
        "--interval",
        "0.01",
        "--rotate-mb",
        "0.01",
        "--rotate-keep",
        "2",
    )
    res = run_gputui(*args, env=env)
    assert res.returncode == 0, res.stderr
    assert path.exists() and Path(f"{path}.1").exists() and Path(f"{path}.2").exists()
    assert not Path(f"{path}.3").exists()
    heads = []
    for p in (Path(f"{path}.2"), Path(f"{path}.1"), path):
        recs, stats = _read(p)
        assert stats.skipped == 0 and recs
        assert p.stat().st_size < 10 * 1024 + 8 * 1024  # rotated once past the limit (one tick's worth)
        # Each file started by rotation describes itself: it begins with the run's probe_started event.
        assert recs[0].kind == "event" and recs[0]["event"] == "probe_started", p
        assert [r.get("event") for r in recs[1:] if r.kind == "event"] == (
            ["probe_stopped"] if p == path else []
        )
        heads.append(recs[0])
    for key in ("version", "python", "backend", "host", "pid", "interval_s", "gpus", "simulated"):
        assert len({h[key] for h in heads}) == 1, key
    assert heads[0]["backend"] == "sim" and heads[0]["gpus"] == 8
    rotations = [h["rotation"] for h in heads]
    assert rotations[0] >= 2 and rotations == [rotations[0], rotations[0] + 1, rotations[0] + 2]
    assert "continued: rotation" in heads[-1]["message"]


def test_rotation_of_an_existing_full_file_starts_with_the_original_event(tmp_path):
    from gputui.probes.headless import RotatingWriter
    from gputui.stream.records import event, host_sample

    path = tmp_path / "r.jsonl"
    path.write_text("")
    w = RotatingWriter(str(path), max_bytes=1)
    w.write(host_sample(host="a", cpu_pct=1.0))  # before any probe_started: nothing to repeat
    started = event("probe_started", message="m", version="9", backend="sim", host="a")
    w.write(started)  # rotates: the new file begins with the event itself, not a copy
    w.write(host_sample(host="a", cpu_pct=2.0))
    w.close()
    assert [r.kind for r in _read(Path(f"{path}.2"))[0]] == ["host"]
    assert [r.get("rotation") for r in _read(Path(f"{path}.1"))[0]] == [None]
    current = _read(path)[0]
    assert [(r.kind, r.get("event"), r.get("rotation")) for r in current] == [
        ("event", "probe_started", 2),
        ("host", None, None),
    ]


def test_headless_survives_sighup_and_summarises_on_sigterm(tmp_path):
    path = tmp_path / "h.jsonl"
    proc = _start("--log", str(path), "--backend", "sim", "--interval", "0.05")
    wait_for(lambda: count_lines(path) >= 6, what="first samples")
    proc.send_signal(signal.SIGHUP)
    seen = count_lines(path)
    wait_for(lambda: count_lines(path) >= seen + 10, what="samples after SIGHUP")
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0 and out == b""
    text = err.decode()
    assert (
        text.startswith("gputui: stopped (sigterm)")
        and "util mean" in text
        and "mem peak" in text
        and "energy" in text
    )
    recs, stats = _read(path)
    assert stats.skipped == 0 and recs[-1]["event"] == "probe_stopped" and recs[-1]["reason"] == "sigterm"


def test_sigkill_leaves_a_valid_file(tmp_path):
    path = tmp_path / "k.jsonl"
    proc = _start(
        "--log", str(path), "--backend", "sim", "--interval", "0.005", env=clean_env(GPUTUI_SIM_GPUS="8")
    )
    wait_for(lambda: count_lines(path) >= 200, what="samples")
    proc.kill()
    proc.communicate(timeout=10)
    recs, stats = _read(path)
    assert len(recs) >= 200 and stats.skipped == 0


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))


def test_full_disk_is_one_line_and_keeps_earlier_records(tmp_path):
    path = tmp_path / "f.jsonl"
    proc = subprocess.run(
        gputui_cmd("--log", str(path), "--backend", "sim", "--interval", "0.01", "--count", "100"),
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=_limit_file_size,
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gputui: error: cannot write to") and "intact" in lines[0]
    recs, stats = _read(path)
    assert len(recs) > 10 and stats.malformed == stats.invalid == 0 and stats.truncated <= 1
    res = run_gputui("--log", "/dev/full", "--backend", "sim", "--count", "1")
    assert res.returncode == 1 and "disk full" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_headless_without_gpus_creates_no_file(tmp_path):
    path = tmp_path / "none.jsonl"
    res = run_gputui(
        "--log", str(path), "--backend", "sim", "--count", "1", env=clean_env(CUDA_VISIBLE_DEVICES="")
    )
    assert res.returncode == 1 and "no GPUs visible" in res.stderr and "Traceback" not in res.stderr
    assert not path.exists()


def test_headless_into_missing_directory_is_one_line(tmp_path):
    res = run_gputui("--log", str(tmp_path / "no" / "such" / "x.jsonl"), "--backend", "sim", "--count", "1")
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "cannot open" in res.stderr


def test_probe_modules_import_neither_textual_nor_torch():
    code = (
        "import sys\n"
        "from gputui.cli import main\n"
        "import gputui.commands.probe, gputui.commands.headless\n"
        "import gputui.probes.nvidia, gputui.probes.amd.rocm, gputui.probes.sampler, gputui.probes.host\n"
        "main(['probe', '--backend', 'sim', '--count', '1'])\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'torch', 'rich', 'pynvml')]\n"
        "print(bad, file=sys.stderr)\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], env=clean_env(), capture_output=True, text=True, timeout=30
    )
    assert res.returncode == 0 and res.stderr.strip() == "[]"


def test_host_record_has_probe_cost():
    res = run_gputui("probe", "--backend", "none", "--count", "1")
    assert res.returncode == 0
    host = next(r for r in parse_lines(res.stdout) if r["kind"] == "host")
    for key in (
        "cpu_pct",
        "cpu_count",
        "mem_used_bytes",
        "mem_total_bytes",
        "load_1m",
        "probe_cpu_s",
        "probe_rss_bytes",
    ):
        assert host[key] is not None
    assert 0 < host["probe_rss_bytes"] < 200 * 2**20
