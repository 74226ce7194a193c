"""Cost of gputui's probes, side by side with nvitop's and gpustat's Python APIs on the same fake NVML.

    python benchmarks/probe_cost.py [--gpus 8] [--seconds 20] [--repeats 5]

What it measures (CPU time, ``time.process_time``; medians over repeats):
1. CPU per sample per GPU, in-process, each tool in its own interpreter with ``LD_LIBRARY_PATH`` pointing
   at the fake ``libnvidia-ml.so.1`` (tests/fakes/fake_nvml.c, 8 GPUs): gputui's nvidia backend (every
   tick without processes; 1 tick in 5 with); nvitop's ``Device`` getters for the same fields and its
   ``as_snapshot()``; gpustat's ``new_query()`` (one refresh: all its fields and processes). nvitop pins
   ``nvidia-ml-py<13.596`` and gpustat does not, so each peer runs from its own venv under /tmp
   (created here with ``python3 -m venv`` + pip when missing).
2. CPU share of a real ``gputui probe --interval 1`` (8 fake GPUs) over ``--seconds``, from its own
   ``probe_cpu_s`` field (start-up excluded).
3. The AMD paths on the fake sysfs tree (3 GCDs): sysfs alone, and pyrsmi over a fake amdsmi module.
4. Headless log size per GPU-sample and the cost of writing one record.

The fake library answers in well under a microsecond, so these figures are the Python-side cost of each
tool; a real driver adds its own call latency (published: ~0.1 ms for four getters, see
docs/benchmarks.md). Prints a Markdown table and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FAKES = REPO / "tests" / "fakes"
PEERS = {
    "nvitop": ("/tmp/bench-nvitop", ["nvitop", "nvidia-ml-py<13.596"]),
    "gpustat": ("/tmp/bench-gpustat", ["gpustat", "nvidia-ml-py"]),
}

# Each snippet prints one JSON object: {"cpu_us_per_sample": [...per repeat...], ...}
_TIMER = """
import json, statistics, time
def bench(fn, n, repeats):
    fn()  # warm-up (first calls resolve C symbols)
    out = []
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        out.append((time.process_time() - t0) / n * 1e6)
    return statistics.median(out)
"""

GPUTUI = (
    _TIMER
    + """
from gputui.probes.nvidia import NvidiaBackend
b = NvidiaBackend()
b.open()
from gputui.probes.host import HostProbe
from gputui.stream.io import RecordWriter
import os, tempfile
h = HostProbe()
w = RecordWriter(os.path.join(tempfile.mkdtemp(), "t.jsonl"))
def tick(procs):
    def run():
        for rec in b.sample(processes=procs, now=0.0):
            w.write(rec)
        w.write(h.sample(now=0.0))
    return run
res = {
    "plain": bench(lambda: b.sample(processes=False, now=0.0), N, R),
    "with_processes": bench(lambda: b.sample(processes=True, now=0.0), N, R),
    "host": bench(lambda: h.sample(now=0.0), N, R),
    "tick": bench(tick(False), N, R),
    "tick_with_processes": bench(tick(True), N, R),
    "gpus": len(b.devices),
}
print(json.dumps(res))
"""
)

NVITOP = (
    _TIMER
    + """
from nvitop import Device
devs = Device.all()
def fields(with_procs):
    def run():
        for d in devs:
            with d.oneshot():
                (d.gpu_utilization(), d.memory_utilization(), d.memory_used(), d.memory_total(),
                 d.temperature(), d.power_usage(), d.power_limit(), d.sm_clock(), d.memory_clock())
                if with_procs:
                    d.processes()
    return run
res = {
    "plain": bench(fields(False), N, R),
    "with_processes": bench(fields(True), N, R),
    "snapshot": bench(lambda: [d.as_snapshot() for d in devs], N, R),
    "gpus": len(devs),
}
print(json.dumps(res))
"""
)

GPUSTAT = (
    _TIMER
    + """
import gpustat
q = gpustat.new_query()
res = {"query": bench(gpustat.new_query, N, R), "gpus": len(q.gpus)}
print(json.dumps(res))
"""
)

AMD = (
    _TIMER
    + """
import sys, tempfile, pathlib
sys.path.insert(0, FAKES)
from amd_tree import build_amd_tree, GCDS
from fake_amdsmi import make_fake_amdsmi
root = build_amd_tree(pathlib.Path(tempfile.mkdtemp()))
from gputui.probes.amd.rocm import AmdRocmBackend
res = {}
b = AmdRocmBackend({}, root=str(root), library="sysfs"); b.open()
res["sysfs"] = bench(lambda: b.sample(processes=False, now=0.0), N, R); b.close()
try:
    import pyrsmi  # noqa
    sys.modules["amdsmi"] = make_fake_amdsmi([g["slot"] for g in GCDS])
    b = AmdRocmBackend({}, root=str(root), library="pyrsmi"); b.open()
    res["pyrsmi"] = bench(lambda: b.sample(processes=False, now=0.0), N, R); b.close()
    b = AmdRocmBackend({}, root=str(root), library="amdsmi"); b.open()
    res["amdsmi"] = bench(lambda: b.sample(processes=False, now=0.0), N, R); b.close()
except ImportError:
    pass
res["gpus"] = len(GCDS)
print(json.dumps(res))
"""
)

WRITE = (
    _TIMER
    + """
import os, tempfile
from gputui.probes.sim import SimBackend
from gputui.stream.io import RecordWriter, encode_record
b = SimBackend({"GPUTUI_SIM_GPUS": "1"}); b.open()
rec = b.sample(processes=False, now=1.7e9)[0]
path = os.path.join(tempfile.mkdtemp(), "w.jsonl")
w = RecordWriter(path)
res = {"write_us": bench(lambda: w.write(rec), N, R), "encode_us": bench(lambda: encode_record(rec), N, R)}
print(json.dumps(res))
"""
)


def ensure_peer(name: str) -> str | None:
    venv, packages = PEERS[name]
    python = f"{venv}/bin/python"
    if not os.path.exists(python):
        print(f"creating {venv} ({' '.join(packages)})", file=sys.stderr)
        subprocess.run(["python3", "-m", "venv", venv], check=True)
        res = subprocess.run([f"{venv}/bin/pip", "install", "-q", *packages], capture_output=True, text=True)
        if res.returncode != 0:
            print(f"cannot install {name}: {res.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
    return python


def build_fake_nvml(out: Path) -> Path:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        sys.exit("benchmark needs gcc to build the fake NVML library")
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O2", "-o", str(out / "libnvidia-ml.so.1"), str(FAKES / "fake_nvml.c")],
        check=True,
    )
    return out


def run_snippet(python: str, code: str, env: dict[str, str], n: int, repeats: int) -> dict:
    prelude = f"N = {n}\nR = {repeats}\nFAKES = {str(FAKES)!r}\n"
    res = subprocess.run(
        [python, "-c", prelude + textwrap.dedent(code)], env=env, capture_output=True, text=True
    )
    if res.returncode != 0:
        raise RuntimeError(f"{python}: {res.stderr.strip()[-800:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def probe_cpu_share(env: dict[str, str], seconds: float) -> dict:
    """Run ``gputui probe --interval 1`` and read its own CPU time from the host records."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gputui",
            "probe",
            "--backend",
            "nvidia",
            "--interval",
            "1",
            "--duration",
            str(seconds),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    hosts = [json.loads(x) for x in proc.stdout.splitlines() if '"kind":"host"' in x]
    first, last = hosts[0], hosts[-1]
    span = last["time"] - first["time"]
    cpu = last["probe_cpu_s"] - first["probe_cpu_s"]
    return {
        "cpu_pct_of_core": 100 * cpu / span,
        "span_s": span,
        "cpu_s": cpu,
        "startup_cpu_s": first["probe_cpu_s"],
        "rss_mib": last["probe_rss_bytes"] / 2**20,
    }


def log_size(env: dict[str, str], tmp: Path, count: int) -> dict:
    path = tmp / "bench-log.jsonl"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "gputui",
            "--log",
            str(path),
            "--backend",
            "nvidia",
            "--interval",
            "0.01",
            "--count",
            str(count),
        ],
        env=env,
        capture_output=True,
        check=True,
    )
    lines = path.read_bytes().splitlines(keepends=True)
    gpu = [x for x in lines if b'"kind":"gpu"' in x]
    with_procs = [x for x in gpu if b'"processes":[' in x]
    return {
        "bytes_per_gpu_record": sum(map(len, gpu)) / len(gpu),
        "bytes_per_gpu_sample_all": sum(map(len, lines)) / len(gpu),
        "bytes_per_gpu_record_with_processes": (sum(map(len, with_procs)) / len(with_procs))
        if with_procs
        else None,
        "file_bytes": sum(map(len, lines)),
        "gpu_records": len(gpu),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--samples", type=int, default=300, help="samples per repeat")
    ap.add_argument("--repeats", type=int, default=5)
    opts = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="gputui-bench-"))
    lib = build_fake_nvml(tmp)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "CUDA_VISIBLE", "FAKE_NVML"))}
    env.update(
        LD_LIBRARY_PATH=str(lib), FAKE_NVML_GPUS=str(opts.gpus), FAKE_NVML_PROCS="0:1:1000000,1:1:1000000"
    )
    n, r = opts.samples, opts.repeats

    results: dict[str, dict] = {}
    results["gputui"] = run_snippet(sys.executable, GPUTUI, env, n, r)
    # gpustat sleeps 0.1 s per GPU with processes inside new_query (wall time, not CPU): fewer samples
    for peer, code, samples in (("nvitop", NVITOP, max(n // 5, 20)), ("gpustat", GPUSTAT, 10)):
        python = ensure_peer(peer)
        if python:
            results[peer] = run_snippet(python, code, env, samples, r)
    results["amd"] = run_snippet(sys.executable, AMD, env, n, r)
    results["write"] = run_snippet(sys.executable, WRITE, env, 2000, r)
    results["probe"] = probe_cpu_share(env, opts.seconds)
    results["log"] = log_size(env, tmp, 50)
    shutil.rmtree(tmp, ignore_errors=True)

    g = opts.gpus
    ours = results["gputui"]
    # gputui reads processes every 5 s: at 1 Hz that is 4 plain ticks + 1 with processes
    ours_mix = (4 * ours["plain"] + ours["with_processes"]) / 5
    rows = [("gputui nvidia backend, mixed 4:1 (as run at 1 Hz)", ours_mix / g)]
    rows.append(("gputui, tick without processes", ours["plain"] / g))
    rows.append(("gputui, tick with processes", ours["with_processes"] / g))
    if "nvitop" in results:
        nv = results["nvitop"]
        rows.append(("nvitop Device getters, same fields, with processes", nv["with_processes"] / g))
        rows.append(("nvitop Device getters, same fields, no processes", nv["plain"] / g))
        rows.append(("nvitop Device.as_snapshot()", nv["snapshot"] / g))
    if "gpustat" in results:
        rows.append(("gpustat new_query() (all fields + processes)", results["gpustat"]["query"] / g))
    print(f"\n### CPU per sample per GPU ({g} fake GPUs, median of {r} x {n} samples)\n")
    print("| path | µs CPU per GPU-sample |\n|---|---:|")
    for label, us in rows:
        print(f"| {label} | {us:.1f} |")
    print("\nratios (peer / gputui mixed; >1 means gputui is cheaper):")
    if "nvitop" in results:
        nv = results["nvitop"]
        print(f"  nvitop same fields, processes every tick: {nv['with_processes'] / ours_mix:.1f}x")
        print(
            f"  nvitop same fields, processes every tick vs gputui with processes every tick: "
            f"{nv['with_processes'] / ours['with_processes']:.1f}x"
        )
        print(
            f"  nvitop same fields, no processes vs gputui no processes: {nv['plain'] / ours['plain']:.1f}x"
        )
        print(f"  nvitop as_snapshot: {nv['snapshot'] / ours_mix:.1f}x")
    if "gpustat" in results:
        print(f"  gpustat new_query: {results['gpustat']['query'] / ours_mix:.1f}x")
    tick_us = (4 * ours["tick"] + ours["tick_with_processes"]) / 5
    print(
        f"\none whole tick in-process ({g} GPU records + host record, encoded and written): "
        f"{tick_us:.0f} µs CPU -> {tick_us / 1e4:.3f} % of one core at 1 Hz "
        f"(host record alone {ours['host']:.0f} µs)"
    )
    p = results["probe"]
    print(
        f"\n`gputui probe --interval 1`, {g} fake GPUs, {p['span_s']:.0f} s: "
        f"{p['cpu_pct_of_core']:.3f} % of one core ({p['cpu_s']:.3f} s CPU, clock-tick resolution 0.01 s; "
        f"start-up {p['startup_cpu_s']:.2f} s CPU; RSS {p['rss_mib']:.0f} MiB)"
    )
    a = results["amd"]
    print(
        "\nAMD, µs CPU per GCD-sample (3 fake GCDs): "
        + ", ".join(f"{k} {a[k] / a['gpus']:.1f}" for k in ("sysfs", "pyrsmi", "amdsmi") if k in a)
    )
    lg, w = results["log"], results["write"]
    print(
        f"\nheadless log: {lg['bytes_per_gpu_record']:.0f} B per GPU record "
        f"({lg['bytes_per_gpu_record_with_processes'] or 0:.0f} B on process ticks), "
        f"{lg['bytes_per_gpu_sample_all']:.0f} B per GPU-sample incl. host/event records; "
        f"write {w['write_us']:.1f} µs CPU per record (encode {w['encode_us']:.1f} µs)"
    )
    print("\nraw:", json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
