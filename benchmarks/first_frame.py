"""Time to first frame of the dashboard: process start → the first screen drawn, for demo, replay and attach.

Each command runs in a pseudo-terminal (``script``) with ``GPUTUI_FIRST_FRAME_FILE`` set: the app writes
the wall-clock time once its first frame is on screen, then quits; the figure is that time minus the
time just before the command was started (so it includes starting ``script`` and the interpreter; a
process's own create time is no use: Linux derives it from a boot time in whole seconds). Goal
(issue 10): under 0.8 s on the development machine (Textual's own import is ~0.2–0.35 s of it).
The peer: a bare Textual app with one Static, measured the same way, is the floor; the ratio to it
is printed. Attach is measured on a job id Slurm does not know (the screen and its one-line error
are the first frame).

    python benchmarks/first_frame.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def replay_file(folder: Path) -> Path:
    sys.path.insert(0, str(ROOT))
    from gputui.stream.io import RecordWriter
    from gputui.stream.records import gpu_sample, metric

    path = folder / "run.jsonl"
    with RecordWriter(path) as out:
        for t in range(600):
            for gpu in range(8):
                out.write(
                    gpu_sample(
                        host="node1",
                        gpu_id=f"GPU-{gpu}",
                        index=gpu,
                        vendor="nvidia",
                        source="sim",
                        simulated=True,
                        time=1.8e9 + t,
                        util_gpu_pct=90.0,
                    )
                )
            out.write(metric("loss", 2.0 / (1 + t), step=t + 1, time=1.8e9 + t))
    return path


BARE_APP = """
import os, time
from textual.app import App
from textual.widgets import Static

class Bare(App):
    def compose(self):
        yield Static("hello")

    def on_mount(self):
        self.call_after_refresh(self.done)

    def done(self):
        with open(os.environ["GPUTUI_FIRST_FRAME_FILE"], "a") as fh:
            fh.write(f"{time.time():.6f}\\n")
        self.exit()

Bare().run()
"""


def first_frame(argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "frame"
            env = dict(os.environ, GPUTUI_FIRST_FRAME_FILE=str(report), TERM="xterm-256color")
            cmd = ["script", "-qec", shlex.join(argv), "/dev/null"]
            start = time.time()
            subprocess.run(
                cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=60, check=False
            )
            if report.exists():
                times.append(float(report.read_text().split()[0]) - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("script") is None:
        print("needs `script` (util-linux) for a pseudo-terminal")
        return 1
    gputui = [sys.executable, "-m", "gputui"]
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare_textual_app.py"
        bare.write_text(BARE_APP)
        cases = {
            "bare Textual app (floor)": [sys.executable, str(bare)],
            "demo": [*gputui, "demo"],
            "replay (600 s × 8 GPUs)": [*gputui, "replay", str(replay_file(Path(tmp)))],
            "attach (unknown job)": [*gputui, "attach", "999999"],
        }
        print(f"{'command':<26} {'median s':>9} {'min s':>7} {'max s':>7}  runs  ÷ floor")
        floor = None
        for name, argv in cases.items():
            times = first_frame(argv, args.runs)
            if not times:
                print(f"{name:<26} no frame reported")
                continue
            median = statistics.median(times)
            floor = floor or median
            ratio = median / floor
            print(
                f"{name:<26} {median:9.3f} {min(times):7.3f} {max(times):7.3f} {len(times):5d}  {ratio:6.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
