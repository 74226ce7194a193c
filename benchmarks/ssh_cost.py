"""What gputui costs over SSH, side by side with its peers: bytes/s written to the terminal and CPU.

    python benchmarks/ssh_cost.py [--seconds 60] [--warmup 5] [--rounds 1] [--refresh 1]
                                  [--cases dashboard,attach,jobs] [--dump DIR]

Each program runs in its own pseudo-terminal (160×45 set with TIOCSWINSZ, ``TERM=xterm-256color``), as
over ``ssh -t``: every byte it writes is read and counted, and the CPU time of its process tree (psutil,
user + system) is taken over ``--seconds`` after ``--warmup`` seconds. Cases, run in turn (interleaved,
``--rounds`` times), each program at the same ``--refresh``:

- ``dashboard``: ``gputui replay rec.jsonl`` following the record file that a real ``gputui --log``
  probe writes every second on 8 GPUs of the fake NVML (tests/fakes/fake_nvml.c), as attached to a
  job (the probe runs on the compute node: not counted) vs ``nvitop -m full`` on the same fake NVML.
- ``attach``: the same plus a growing job output (tqdm-style ``\\r`` progress at 10 frames/s and a
  metrics line every 2 s, ~1 KB/s) vs ``tail -f`` of that output + nvitop, in two terminals (summed).
- ``jobs``: the jobs screen (``gputui --refresh R``) vs ``turm --slurm-refresh R`` on the local Slurm
  cluster (``ci/slurm-cluster up``; 3 jobs of ours are submitted and cancelled at the end).
- ``dashboard-lowbw``/``attach-lowbw``: the gputui side with ``--low-bandwidth`` (no peer).

The peers come from ``--peers`` (a venv with ``nvitop==1.7.2`` and ``turm==0.17.0``, default
/tmp/peers-venv). ``--dump DIR`` keeps each program's raw terminal output for analysis.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_cost import build_fake_nvml

REPO = Path(__file__).resolve().parents[1]
COLS, ROWS = 160, 45


@dataclass
class Cost:
    bytes: int = 0
    cpu_s: float = 0.0
    seconds: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.bytes + other.bytes, self.cpu_s + other.cpu_s, max(self.seconds, other.seconds))

    @property
    def rate(self) -> float:
        return self.bytes / self.seconds if self.seconds else 0.0

    @property
    def cpu_pct(self) -> float:
        return 100 * self.cpu_s / self.seconds if self.seconds else 0.0


def _tree_cpu(pid: int) -> float:
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            t = proc.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def _spawn(argv: list[str], env: dict[str, str]) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:  # the child: its terminal is the pty's other end
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    return pid, fd


def measure(programs: list[list[str]], env: dict[str, str], warmup: float, seconds: float, dump=None) -> Cost:
    """Run ``programs`` side by side, each in its own pty; their bytes and tree CPU over the window."""
    spawned = [_spawn(argv, env) for argv in programs]
    fds = {fd: i for i, (_pid, fd) in enumerate(spawned)}
    counts = [0] * len(spawned)
    raw = [bytearray() for _ in spawned]
    start = time.monotonic()
    window_at, end_at = start + warmup, start + warmup + seconds
    cpu0: list[float] | None = None
    open_fds = set(fds)
    while open_fds:
        now = time.monotonic()
        if cpu0 is None and now >= window_at:
            cpu0 = [_tree_cpu(pid) for pid, _fd in spawned]
            counts = [0] * len(spawned)
        if now >= end_at:
            break
        ready, _, _ = select.select(list(open_fds), [], [], 0.05)
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                open_fds.discard(fd)
                continue
            counts[fds[fd]] += len(data)
            if cpu0 is not None:
                raw[fds[fd]] += data
    cpu1 = [_tree_cpu(pid) for pid, _fd in spawned]
    elapsed = time.monotonic() - window_at
    for pid, _fd in spawned:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for pid, fd in spawned:
        _drain_and_reap(pid, fd)
    if dump is not None:
        for i, data in enumerate(raw):
            Path(f"{dump}.{i}.bin").write_bytes(bytes(data))
    cpu = sum(b - a for a, b in zip(cpu0 or cpu1, cpu1, strict=True))
    return Cost(sum(counts), cpu, elapsed)


def _drain_and_reap(pid: int, fd: int) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                if not os.read(fd, 65536):
                    break
            except OSError:
                break
        if os.waitpid(pid, os.WNOHANG)[0]:
            break
    else:
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    os.close(fd)


def log_writer(path: Path) -> None:
    """A training job's output: tqdm ``\\r`` frames at 10/s, a metrics line every 2 s (a child process)."""
    step = 0
    with open(path, "a", buffering=1) as out:
        while True:
            step += 1
            pct = step % 100
            bar = "█" * (pct * 25 // 100)
            out.write(
                f"\rEpoch {step // 1000}: {pct:3d}%|{bar:<25}| {step % 1000}/1000 "
                f"[00:{step // 10 % 60:02d}<01:30, 9.87it/s, loss={2.0 / (1 + step / 100):.4f}]"
            )
            if step % 20 == 0:
                out.write(f"\nstep {step} loss {2.0 / (1 + step / 100):.5f} lr 3.0e-04 grad_norm 1.21\n")
            time.sleep(0.1)


@dataclass
class Setup:
    folder: Path
    env: dict[str, str]
    gputui: str
    peers: Path


def cases(setup: Setup, refresh: float) -> dict[str, tuple[list[list[str]], list[list[str]] | None]]:
    """Case name → (gputui programs, peer programs or None)."""
    rec, log = str(setup.folder / "rec.jsonl"), str(setup.folder / "train.out")
    g, p = setup.gputui, setup.peers
    nvitop = [str(p / "bin" / "nvitop"), "-m", "full", "--interval", f"{refresh:g}"]
    turm = [str(p / "bin" / "turm"), "--slurm-refresh", f"{refresh:g}"]
    return {
        "dashboard": ([[g, "replay", rec]], [nvitop]),
        "attach": ([[g, "replay", rec, log]], [nvitop, ["tail", "-f", log]]),
        "jobs": ([[g, "--refresh", f"{refresh:g}"]], [turm]),
        "dashboard-lowbw": ([[g, "replay", "--low-bandwidth", rec]], None),
        "attach-lowbw": ([[g, "replay", "--low-bandwidth", rec, log]], None),
    }


def prepare(folder: Path, refresh: float, peers: Path) -> Setup:
    lib = build_fake_nvml(folder)
    config = folder / "config.toml"
    config.write_text(f"[dashboard]\nrefresh_s = {refresh:g}\n\n[jobs]\nrefresh_s = {max(refresh, 0.5):g}\n")
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "COLUMNS": str(COLS),
        "LINES": str(ROWS),
        "LD_LIBRARY_PATH": str(lib),
        "FAKE_NVML_GPUS": "8",
        "FAKE_NVML_NAME": "NVIDIA H100 80GB HBM3",
        "GPUTUI_CONFIG": str(config),
    }
    gputui = str(Path(sys.executable).parent / "gputui")
    return Setup(folder, env, gputui, peers)


def start_feeders(setup: Setup) -> list[subprocess.Popen]:
    """The probe writing 8 GPUs' records every second, and the job output (not measured)."""
    probe = subprocess.Popen(
        [setup.gputui, "--log", str(setup.folder / "rec.jsonl"), "--interval", "1", "--backend", "nvidia"],
        env=setup.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import ssh_cost; "
    code += f"ssh_cost.log_writer(__import__('pathlib').Path({str(setup.folder / 'train.out')!r}))"
    writer = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(3)
    return [probe, writer]


def slurm_jobs(count: int) -> list[str]:
    """Submit ``count`` sleeping jobs on the local cluster; their ids."""
    ids = []
    for i in range(count):
        out = subprocess.run(
            ["sbatch", "--parsable", f"--job-name=bench{i}", "-o", "/dev/null", "--wrap", "sleep 900"],
            capture_output=True,
            text=True,
            check=True,
        )
        ids.append(out.stdout.strip().split(";")[0])
    return ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--refresh", type=float, default=1.0)
    parser.add_argument("--cases", default="dashboard,attach,jobs")
    parser.add_argument("--peers", type=Path, default=Path("/tmp/peers-venv"))
    parser.add_argument("--dump", type=Path, default=None, help="keep raw terminal output here")
    args = parser.parse_args()
    wanted = args.cases.split(",")
    folder = Path(tempfile.mkdtemp(prefix="ssh-cost-"))
    setup = prepare(folder, args.refresh, args.peers)
    feeders = start_feeders(setup)
    jobs = slurm_jobs(3) if "jobs" in wanted else []
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
    results: dict[tuple[str, str], list[Cost]] = {}
    try:
        table = cases(setup, args.refresh)
        for round_no in range(args.rounds):
            for name in wanted:
                ours, peer = table[name]
                for who, programs in (("gputui", ours), ("peer", peer)):
                    if programs is None:
                        continue
                    dump = args.dump / f"{name}-{who}-{round_no}" if args.dump else None
                    cost = measure(programs, setup.env, args.warmup, args.seconds, dump)
                    results.setdefault((name, who), []).append(cost)
                    line = f"{name:16} {who:6} {cost.rate:9.0f} B/s {cost.cpu_pct:5.1f} %"
                    print(f"round {round_no + 1} {line}", flush=True)
    finally:
        for proc in feeders:
            proc.terminate()
            proc.wait()
        if jobs:
            subprocess.run(["scancel", *jobs], check=False)
        shutil.rmtree(folder, ignore_errors=True)
    report(results, wanted, args)
    return 0


def report(results: dict[tuple[str, str], list[Cost]], wanted: list[str], args) -> None:
    print(f"\n{COLS}x{ROWS}, refresh {args.refresh:g} s, {args.seconds:g} s windows after {args.warmup:g} s")
    print("| case | gputui B/s | peer B/s | bytes ratio | gputui CPU % | peer CPU % | CPU ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in wanted:
        for i, ours in enumerate(results.get((name, "gputui"), [])):
            peers = results.get((name, "peer"))
            if peers:
                peer = peers[i]
                ratio = f"{ours.rate / peer.rate:.1f}×" if peer.rate else "–"
                cpu_ratio = f"{ours.cpu_pct / peer.cpu_pct:.1f}×" if peer.cpu_pct else "–"
                print(
                    f"| {name} | {ours.rate:.0f} | {peer.rate:.0f} | {ratio} | {ours.cpu_pct:.1f} | "
                    f"{peer.cpu_pct:.1f} | {cpu_ratio} |"
                )
            else:
                print(f"| {name} | {ours.rate:.0f} | – | – | {ours.cpu_pct:.1f} | – | – |")


if __name__ == "__main__":
    sys.exit(main())
