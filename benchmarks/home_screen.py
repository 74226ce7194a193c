"""The jobs home screen (``gputui`` with no command) beside the Slurm TUI peers on the same local cluster.

    python benchmarks/home_screen.py [--runs 11] [--seconds 60] [--jobs 3] [--size 160x50]

Needs a reachable Slurm (``SLURM_CONF`` for ``ci/slurm-cluster``) and tmux. It submits ``--jobs``
``sleep`` jobs (their empty output files in a temporary folder) and cancels them at the end.
Four measurements:

1. **First screen with my jobs listed.** Each tool runs in its own tmux session of ``--size`` (a real
   terminal: it answers the tools' queries). The time is taken just before ``tmux new-session`` starts
   it; the screen is read with ``tmux capture-pane`` every 10 ms until every submitted job id is on it.
   gputui is also timed by its own hook (``GPUTUI_JOBS_LISTED_FILE``: the app writes the wall-clock time
   once the first list is on screen, then quits). Runs are interleaved (one of each tool per round);
   medians, and each tool's median ÷ gputui's (polled, the same harness for all).
2. **Idle CPU with the list refreshing**, each tool at its default refresh: after the jobs are on screen
   and a 5 s warm-up, user + system CPU of the tool's process (all threads) and of the Slurm commands it
   ran and waited for (its ``cutime``/``cstime``) over ``--seconds``, as a share of one core.
3. **Memory**: the tool's RSS at the end of that window, and its peak (``VmHWM``).
4. **gputui with 200 jobs, in process**: ``GputuiApp`` on a ``SlurmPoller`` whose runner answers from
   outputs recorded from the cluster at the start (``squeue`` lines used as templates for 200 jobs,
   ``sinfo``, ``sacct``, ``scontrol``), headless under ``App.run_test``. Per poll the Slurm calls are
   counted by command (24 polls on a clock advanced 5 s each: two minutes at the default refresh), and
   the handling of a ``JobsPolled`` message is timed when nothing, one cell, or the row order changed:
   the handler's wall time (``JobsScreen.redraw()`` and the header, detail and status lines) and the CPU
   from the handler's start until the next frame is composed and turned into terminal output (layout,
   compositor and ``render_segments``, which a headless app otherwise skips; writing to the terminal is
   not included).

Peers (looked up on PATH, then in /tmp/peers-venv/bin and /tmp/peers-venv2/bin; any not found is
reported as such): turm (Rust, ``pip install turm``), run as ``turm --me``; ChipCracker/slurm-tui
(Textual; not on PyPI under that name, install it from its source), ``slurm-tui``; WissamAntoun/SlurmTUI
(Textual, PyPI ``slurmtui``), ``slurmtui``. A tool that fails to list the jobs once is dropped, and
its last screen (with any traceback) is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pwd
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PEER_DIRS = ("/tmp/peers-venv/bin", "/tmp/peers-venv2/bin")
SOCKET = f"gputui-bench-{os.getpid()}"  # a tmux server of our own (tests use tmux too)
FIRST_SCREEN_TIMEOUT_S = 30.0
SETTLE_S = 0.15  # after a JobsPolled message: every frame it causes is composed by then (60 fps)


def find(name: str) -> str | None:
    return shutil.which(name) or next(
        (str(Path(d) / name) for d in PEER_DIRS if (Path(d) / name).exists()), None
    )


def tools() -> dict[str, list[str] | None]:
    turm, chip, wissam = find("turm"), find("slurm-tui"), find("slurmtui")
    return {
        "gputui": [sys.executable, "-m", "gputui"],
        "turm (Rust)": [turm, "--me"] if turm else None,
        "slurm-tui (ChipCracker, Textual)": [chip] if chip else None,
        "slurmtui (WissamAntoun, Textual)": [wissam] if wissam else None,
    }


# --------------------------------------------------------------------------- Slurm and tmux


def submit_jobs(count: int, folder: str) -> list[str]:
    """``count`` sleep jobs writing nothing to ``folder``/gtbench-<id>.out (a real file, not /dev/null:
    turm follows the selected job's output with inotify, and /dev/null's events fire on every write to it
    by any process on the machine, which keeps turm busy)."""
    ids = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(count):
            out = subprocess.run(
                [
                    "sbatch",
                    "--parsable",
                    "-J",
                    "gtbench",
                    "-o",
                    f"{folder}/gtbench-%j.out",
                    "--wrap",
                    "sleep 1800",
                ],
                cwd=tmp,
                capture_output=True,
                text=True,
                check=True,
            )
            ids.append(out.stdout.strip().split(";")[0])
    return ids


def tmux(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["tmux", "-L", SOCKET, "-f", "/dev/null", *args], capture_output=True, text=True, check=check
    )


def start(name: str, argv: list[str], size: tuple[int, int], env: dict[str, str]) -> float:
    """Start ``argv`` in a new detached session; returns the wall-clock time taken just before.

    USER and LOGNAME are set as a login shell sets them (slurm-tui asks squeue for ``-u $USER``)."""
    user = pwd.getpwuid(os.getuid()).pw_name
    env = {"USER": user, "LOGNAME": user, **env}
    extra = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
    cmd = ["new-session", "-d", "-s", name, "-x", str(size[0]), "-y", str(size[1]), *extra, "--", *argv]
    began = time.time()
    tmux(*cmd)
    return began


def alive(name: str) -> bool:
    """The session's tool still runs (sessions remain on exit, to show what a tool printed last)."""
    res = tmux("display-message", "-p", "-t", name, "#{pane_dead}", check=False)
    return res.returncode == 0 and res.stdout.strip() == "0"


def exists(name: str) -> bool:
    return tmux("has-session", "-t", name, check=False).returncode == 0


def screen_text(name: str) -> str | None:
    res = tmux("capture-pane", "-p", "-t", name, check=False)
    return res.stdout if res.returncode == 0 else None


def wait_listed(
    name: str, ids: list[str], timeout: float = FIRST_SCREEN_TIMEOUT_S
) -> tuple[float | None, str]:
    """Poll the pane until every job id is on it; (wall-clock time seen, last screen text)."""
    patterns = [re.compile(rf"(?<![\d]){re.escape(i)}(?![\d])") for i in ids]
    deadline = time.time() + timeout
    text = ""
    while time.time() < deadline:
        got = screen_text(name)
        now = time.time()
        if got is None:
            return None, text
        text = got
        if all(p.search(text) for p in patterns):
            return now, text
        if not alive(name):
            return None, "(the tool exited) " + (screen_text(name) or "")
        time.sleep(0.01)
    return None, text


def stop(name: str) -> None:
    tmux("kill-session", "-t", name, check=False)
    for _ in range(100):
        if not exists(name):
            return
        time.sleep(0.02)


def pane_pid(name: str) -> int:
    return int(tmux("display-message", "-p", "-t", name, "#{pane_pid}").stdout.strip())


# --------------------------------------------------------------------------- 1. first screen


def first_screens(cases: dict[str, list[str]], ids: list[str], runs: int, size) -> tuple[dict, dict]:
    times: dict[str, list[float]] = {"gputui (its own hook)": []} | {name: [] for name in cases}
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(runs):
            report = Path(tmp) / f"listed-{run}"
            began = start("hook", cases["gputui"], size, {"GPUTUI_JOBS_LISTED_FILE": str(report)})
            deadline = time.time() + FIRST_SCREEN_TIMEOUT_S
            polls = 0
            while not report.exists() and time.time() < deadline:  # a stat, not a tmux client, per 10 ms
                time.sleep(0.01)
                polls += 1
                if polls % 50 == 0 and not alive("hook"):
                    break
            stop("hook")
            if report.exists():
                when, rows = report.read_text().split()[:2]
                times["gputui (its own hook)"].append(float(when) - began)
                times.setdefault("_rows", []).append(float(rows))
            for name, argv in cases.items():
                if name in failures:  # it failed once: not again
                    continue
                began = start("poll", argv, size, {})
                seen, text = wait_listed("poll", ids)
                stop("poll")
                if seen is None:
                    failures[name] = text
                else:
                    times[name].append(seen - began)
                time.sleep(0.2)
    for name, text in failures.items():
        print(
            f"\n{name}: the job ids were not all on screen within {FIRST_SCREEN_TIMEOUT_S:g} s; last screen:"
        )
        print("\n".join(line.rstrip() for line in text.splitlines() if line.strip())[-1500:])
    return times, failures


# --------------------------------------------------------------------------- 2./3. idle CPU and memory


def idle_cpu(argv: list[str], ids: list[str], seconds: float, size) -> dict[str, float] | str:
    began = start("idle", argv, size, {})
    try:
        seen, text = wait_listed("idle", ids)
        if seen is None:
            return "job ids never all on screen: " + " | ".join(text.strip().splitlines()[-3:])
        proc = psutil.Process(pane_pid("idle"))
        time.sleep(5.0)  # warm-up after the first list
        c0, w0 = proc.cpu_times(), time.monotonic()
        time.sleep(seconds)
        c1, w1 = proc.cpu_times(), time.monotonic()
        rss = proc.memory_info().rss
        peak = rss
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) * 1024
        except OSError:
            pass
        wall = w1 - w0
        own = (c1.user - c0.user) + (c1.system - c0.system)
        kids = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
        return {
            "own": own / wall,
            "children": kids / wall,
            "rss": rss / 2**20,
            "peak": peak / 2**20,
            "started_s": seen - began,
        }
    finally:
        stop("idle")


def squeue_cost(calls: int = 20) -> float:
    """CPU seconds of one squeue call as gputui makes it (client side only; slurmctld not counted)."""
    from gputui.slurm.jobs import squeue_argv

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(calls):
        subprocess.run(squeue_argv(all_states=True), capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) / calls


# --------------------------------------------------------------------------- 4. 200 jobs in process


class Recorded:
    """A poller runner answering from real outputs recorded once; ``squeue`` from ``self.squeue``."""

    def __init__(self) -> None:
        self.answers: dict[str, subprocess.CompletedProcess] = {}
        self.squeue = ""
        self.job_line = ""  # one recorded ``scontrol -o -d show job`` line of a running job
        self.job_id = ""
        self.calls: list[str] = []

    @staticmethod
    def key(argv: list[str]) -> str:
        return " ".join(argv[:3]) if argv[0] == "scontrol" else argv[0]

    def record(self) -> list[str]:
        """Ask the real cluster once (as the poller does); returns squeue's lines."""
        from gputui.home.poller import SlurmPoller, default_runner

        def recording(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
            self.calls.append(self.key(argv))
            res = default_runner(argv, timeout)
            self.answers.setdefault(self.key(argv), res)
            if argv[:3] == ["scontrol", "show", "job"] and res.returncode == 0 and not self.job_line:
                line = next((ln for ln in res.stdout.splitlines() if "JobState=RUNNING" in ln), "")
                found = re.search(r"JobId=(\S+)", line)
                if found:
                    self.job_line, self.job_id = line, found.group(1)
            return res

        began = time.perf_counter()
        SlurmPoller(run=recording).poll(force=True)
        self.first_poll_s = time.perf_counter() - began
        self.first_poll_calls = list(self.calls)
        self.calls.clear()
        return [ln for ln in self.answers["squeue"].stdout.splitlines() if ln.strip()]

    def __call__(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        key = self.key(argv)
        self.calls.append(key)
        if key == "squeue":
            return subprocess.CompletedProcess(argv, 0, self.squeue, "")
        if key == "scontrol show job" and self.job_line:
            if argv[-1] == "-d":  # every job at once: one line per running job of the squeue answer
                from gputui.slurm.jobs import parse_squeue

                ids = [job.job_id for job in parse_squeue(self.squeue) if job.state == "RUNNING"]
            else:
                ids = [argv[-1]]
            text = "".join(
                self.job_line.replace(f"JobId={self.job_id} ", f"JobId={i} ", 1) + "\n" for i in ids
            )
            return subprocess.CompletedProcess(argv, 0, text, "")
        res = self.answers.get(key)
        if res is None:
            return subprocess.CompletedProcess(argv, 1, "", f"{argv[0]}: not recorded")
        return subprocess.CompletedProcess(argv, res.returncode, res.stdout, res.stderr)


def many_jobs(templates: list[str], count: int, *, bump: int | None = None, pend: int | None = None) -> str:
    """``count`` squeue lines from recorded ones: ids 5000…, every third pending, the rest running.

    ``bump``: that job's TimeUsed is one minute more (one cell changes); ``pend``: that running job is
    pending instead (the rows reorder)."""
    from gputui.slurm.jobs import SEP, SQUEUE_FIELDS

    index = {attr: i for i, (_, attr) in enumerate(SQUEUE_FIELDS)}
    split = [ln.split(SEP) for ln in templates]
    running = next((p for p in split if p[index["state"]] == "RUNNING"), None)
    pending = next((p for p in split if p[index["state"]] == "PENDING"), None)
    if running is None:  # make one from a pending line
        running = list(pending)
        running[index["state"]], running[index["reason"]] = "RUNNING", "None"
        running[index["nodelist"]] = "node1"
    if pending is None:
        pending = list(running)
        pending[index["state"]], pending[index["reason"]] = "PENDING", "Priority"
        pending[index["nodelist"]], pending[index["start_time"]] = "", "N/A"
    out = []
    for i in range(count):
        job_id = 5000 + i
        is_pending = i % 3 == 0 or job_id == pend
        parts = list(pending if is_pending else running)
        parts[index["raw_job_id"]] = parts[index["array_job_id"]] = str(job_id)
        parts[index["name"]] = f"bench-{i:03d}"
        if not is_pending:
            minutes = i % 60 + (1 if bump == job_id else 0)
            parts[index["time_used"]] = f"{minutes}:{i % 60:02d}"
        out.append(SEP.join(parts))
    return "\n".join(out) + "\n"


async def in_process(templates: list[str], runner: Recorded, count: int, repeats: int, size) -> dict:
    from gputui.config import Config, JobsSettings
    from gputui.home.poller import SlurmPoller
    from gputui.tui.app import GputuiApp
    from gputui.tui.messages import JobsPolled
    from gputui.tui.screens.jobs import JobsScreen

    os.environ.pop("GPUTUI_JOBS_LISTED_FILE", None)
    clock = [time.monotonic()]
    poller = SlurmPoller(run=runner, clock=lambda: clock[0])
    base = many_jobs(templates, count)
    runner.squeue = base
    app = GputuiApp(None, Config(jobs=JobsSettings(refresh_s=3600)), poller=poller)
    result: dict = {}
    async with app.run_test(headless=True, size=size) as pilot:
        screen = None
        for _ in range(500):
            screen = next((s for s in app.screen_stack if isinstance(s, JobsScreen)), None)
            if screen is not None and screen.snapshot is not None:
                break
            await pilot.pause(0.02)
        assert screen is not None and screen.snapshot is not None, "the jobs screen never listed the jobs"

        # Slurm calls per poll: two minutes at the default 5 s refresh (the first poll was the app's own).
        per_poll = []
        for _ in range(24):
            clock[0] += 5.0
            runner.calls.clear()
            poller.poll()
            per_poll.append(list(runner.calls))
        result["calls"] = per_poll
        result["rows"] = len(screen.rows)

        # Frames: count compositor refreshes; turn headless updates into terminal output as a terminal would.
        frames = [0]
        real_refresh, real_display = screen._compositor_refresh, app._display

        def compositor_refresh() -> None:
            real_refresh()
            frames[0] += 1

        def display(scr, renderable) -> None:
            if renderable is not None and app.is_headless and hasattr(renderable, "render_segments"):
                renderable.render_segments(app.console)
            real_display(scr, renderable)

        screen._compositor_refresh = compositor_refresh
        app._display = display

        async def settled(action) -> tuple[float, float, int]:
            """(action's wall s, process CPU s until the screen is settled, frames composed)."""
            await pilot.pause()
            frames[0] = 0
            c0, w0 = time.process_time(), time.perf_counter()
            action()
            w1 = time.perf_counter()
            await asyncio.sleep(SETTLE_S)
            return w1 - w0, time.process_time() - c0, frames[0]

        idle = [(await settled(lambda: None))[1] for _ in range(repeats)]
        result["idle"] = statistics.median(idle)
        bumped = many_jobs(templates, count, bump=5001)
        reordered = many_jobs(templates, count, pend=5001)
        cases = {
            "nothing changed": (base, base),
            "one cell changed": (base, bumped),
            "rows rebuilt": (base, reordered),
        }
        for case, (first, second) in cases.items():
            handler, cpu, poll, drawn = [], [], [], []
            for r in range(2 * repeats + 2):
                runner.squeue = first if r % 2 else second
                t = time.perf_counter()
                snapshot = poller.poll()
                poll.append(time.perf_counter() - t)
                wall, used, n = await settled(lambda s=snapshot: screen.on_jobs_polled(JobsPolled(s)))
                if r >= 2:  # the first two are warm-up
                    handler.append(wall)
                    cpu.append(used - result["idle"])
                    drawn.append(n)
            result[case] = (handler, cpu, poll, drawn)
        await pilot.press("q")
    return result


# --------------------------------------------------------------------------- report


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def report_in_process(result: dict, args) -> None:
    counts: dict[str, int] = {}
    for calls in result["calls"]:
        for key in calls:
            counts[key] = counts.get(key, 0) + 1
    per_poll = sorted({calls.count("squeue") for calls in result["calls"]})
    print(f"\ngputui, {args.many} jobs ({result['rows']} rows), in process ({args.size}, headless):")
    print(f"  Slurm calls in 24 polls at 5 s: {counts}; squeue calls per poll: {per_poll}")
    head = f"{'handler ms':>11} {'CPU to settled ms':>18} {'frames':>7} {'poll() ms':>10}"
    print(f"  {'JobsPolled with':<18} {head}")
    for case in ("nothing changed", "one cell changed", "rows rebuilt"):
        handler, cpu, poll, drawn = result[case]
        print(
            f"  {case:<18} {1000 * statistics.median(handler):11.1f} "
            f"{1000 * statistics.median(cpu):18.1f} {statistics.median(drawn):7g} "
            f"{1000 * statistics.median(poll):10.1f}   (CPU max {1000 * max(cpu):.1f}; {len(cpu)} runs)"
        )
    print(f"  (process CPU in {SETTLE_S:g} s with no message, subtracted: {1000 * result['idle']:.1f} ms)")


def import_time(runs: int) -> float:
    """Median wall time of a new interpreter importing the app and the jobs screen (nothing drawn)."""
    code = "import gputui.tui.app, gputui.tui.screens.jobs"
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def report_first(times: dict, jobs: int, runs: int) -> None:
    rows = times.pop("_rows", [])
    print(f"\nfirst screen with my jobs listed (all {jobs} ids), {runs} runs each:")
    print(f"  {'tool':<34} {'median s':>9} {'min s':>7} {'max s':>7} {'runs':>5}  ÷ gputui")
    ref = statistics.median(times["gputui"]) if times.get("gputui") else None
    for name, values in times.items():
        if not values:
            print(f"  {name:<34} never listed the jobs")
            continue
        med = statistics.median(values)
        ratio = f"{med / ref:6.2f}" if ref else ""
        print(f"  {name:<34} {med:9.3f} {min(values):7.3f} {max(values):7.3f} {len(values):5d}  {ratio}")
    print(f"  of it, a new interpreter importing gputui's app and jobs screen: {import_time(runs):.3f} s")
    if rows:
        print(
            f"  (gputui's hook saw {statistics.median(rows):g} rows: all jobs of this user, tests' included)"
        )
    print(f"load average after: {load()}")


def report_cpu(cases: dict, ids: list[str], args, size) -> None:
    print(
        f"\nidle, list refreshing at each tool's default, {args.seconds:g} s each, {args.cpu_rounds} round(s)"
    )
    print(f"load average before: {load()}")
    got: dict[str, list[dict]] = {name: [] for name in cases}
    for _ in range(args.cpu_rounds):
        for name, argv in cases.items():
            one = idle_cpu(argv, ids, args.seconds, size)
            if isinstance(one, str):
                print(f"  {name}: {one}")
            else:
                got[name].append(one)
    head = f"{'CPU % core':>10} {'own':>6} {'Slurm cmds':>10} {'RSS MiB':>8} {'peak':>6}"
    print(f"  {'tool (medians)':<34} {head}  ÷ gputui")
    ref = None
    for name, values in got.items():
        if not values:
            continue
        med = {k: statistics.median(v[k] for v in values) for k in values[0]}
        total = 100 * statistics.median(v["own"] + v["children"] for v in values)
        ref = ref or total
        print(
            f"  {name:<34} {total:10.2f} {100 * med['own']:6.2f} {100 * med['children']:10.2f} "
            f"{med['rss']:8.1f} {med['peak']:6.1f}  {total / ref:6.2f}"
        )
        if len(values) > 1:
            each = ", ".join(f"{100 * (v['own'] + v['children']):.2f}" for v in values)
            print(f"  {'':<34} (each round: {each})")
    print(f"  one squeue call as gputui makes it: {1000 * squeue_cost():.1f} ms CPU (client side)")
    print(f"load average after: {load()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="first-screen runs per tool")
    parser.add_argument("--seconds", type=float, default=60.0, help="idle CPU window per tool")
    parser.add_argument("--jobs", type=int, default=3, help="sleep jobs to submit")
    parser.add_argument("--size", default="160x50", help="terminal size")
    parser.add_argument("--cpu-rounds", type=int, default=1, help="idle CPU windows per tool (interleaved)")
    parser.add_argument("--many", type=int, default=200, help="jobs for the in-process redraw")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: first,cpu,inprocess")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    size = tuple(int(v) for v in args.size.split("x"))
    if shutil.which("tmux") is None or shutil.which("squeue") is None:
        print("needs tmux and a reachable Slurm (SLURM_CONF)")
        return 1
    found = tools()
    for name, argv in found.items():
        if argv is None:
            print(f"{name}: not installed (not on PATH nor in {', '.join(PEER_DIRS)}), skipped")
    cases = {name: argv for name, argv in found.items() if argv is not None}
    print(f"load average at start: {load()}  (cores: {os.cpu_count()})")

    outputs = tempfile.TemporaryDirectory(prefix="gtbench-")
    ids = submit_jobs(args.jobs, outputs.name)
    print(f"submitted jobs {', '.join(ids)}; tmux {args.size}")
    tmux("new-session", "-d", "-s", "keep", "-x", "80", "-y", "24", "--", "sleep", "100000")
    tmux("set-option", "-g", "remain-on-exit", "on")
    try:
        if "inprocess" not in skip:
            runner = Recorded()
            templates = runner.record()
            calls = {k: runner.first_poll_calls.count(k) for k in dict.fromkeys(runner.first_poll_calls)}
            print(
                f"\ngputui's first poll on this cluster (the list waits for it): {calls}, "
                f"{1000 * runner.first_poll_s:.0f} ms wall"
            )
            report_in_process(asyncio.run(in_process(templates, runner, args.many, 10, size)), args)
        if "first" not in skip:
            print(f"\nload average before the first-screen runs: {load()}")
            times, failed = first_screens(cases, ids, args.runs, size)
            for name in failed:
                cases.pop(name, None)
            report_first(times, len(ids), args.runs)
        if "cpu" not in skip:
            if found.get("turm (Rust)"):
                cases["turm --slurm-refresh 5"] = [*found["turm (Rust)"], "--slurm-refresh", "5"]
            report_cpu(cases, ids, args, size)
    finally:
        tmux("kill-server", check=False)
        subprocess.run(["scancel", *ids], check=False)
        print(f"cancelled jobs {', '.join(ids)}")
        outputs.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
