"""CPU and bytes of the writer chain between Textual's driver and the terminal, on recorded frames.

    python benchmarks/writer_chain.py record [--seconds 20] [--out FILE]
    python benchmarks/writer_chain.py [--frames FILE] [--repeat 5]

``record`` runs the ``attach`` case of benchmarks/ssh_cost.py (``gputui replay rec.jsonl train.out``
following a real ``gputui --log`` probe on 8 fake-NVML GPUs and a tqdm-style job output, 160×45, in a
pseudo-terminal) for ``--seconds`` and keeps every string Textual hands its driver's ``write`` (what the
writer gets) as JSON lines, gzipped (by default the file tests/tui/test_writer_chain.py reads). The
default run feeds those frames, in order, through the old two-pass chain (tests/tui/two_pass_chain.py:
the diff, then the squeezer parsing its output again) and through the one-pass writer that
``gputui.tui.app`` installs, and prints the CPU time per frame (``time.process_time``, best of
``--repeat`` passes each, interleaved) and the bytes sent.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "tui"))
from two_pass_chain import FRAMES, SgrSqueezer, TwoPassScreenDiff, recorded_frames  # noqa: E402

from gputui.tui.screen_diff import ScreenDiff  # noqa: E402

RECORDER = """
import json, sys
from gputui.tui.app import GputuiApp
meter = GputuiApp._meter_terminal
out = open({out!r}, "w", encoding="utf-8")
def recording(self):
    meter(self)
    chain = self._driver.write
    def write(data):
        out.write(json.dumps(data) + "\\n")
        out.flush()
        chain(data)
    self._driver.write = write
GputuiApp._meter_terminal = recording
from gputui.cli import main
sys.argv = ["gputui", *{argv!r}]
sys.exit(main())
"""


def record(seconds: float, out: Path) -> None:
    """Run the attach case in a pty and keep what Textual writes, before the chain."""
    import ssh_cost

    folder = Path(tempfile.mkdtemp(prefix="writer-chain-"))
    raw = folder / "frames.jsonl"
    try:
        setup = ssh_cost.prepare(folder, 1.0, Path("/nonexistent"))
        feeders = ssh_cost.start_feeders(setup)
        argv = ["replay", str(folder / "rec.jsonl"), str(folder / "train.out")]
        code = RECORDER.format(out=str(raw), argv=argv)
        try:
            ssh_cost.measure([[sys.executable, "-c", code]], setup.env, 0.0, seconds)
        finally:
            for proc in feeders:
                proc.terminate()
                proc.wait()
        out.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(out, "wt", encoding="utf-8") as fh:
            fh.write(raw.read_text(encoding="utf-8"))
        frames = recorded_frames(out)
        print(f"{len(frames)} frames, {sum(len(f.encode()) for f in frames)} bytes -> {out}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", nargs="?", default="measure", choices=["measure", "record"])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--out", type=Path, default=FRAMES)
    parser.add_argument("--frames", type=Path, default=FRAMES)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if args.action == "record":
        record(args.seconds, args.out)
    else:
        measure(recorded_frames(args.frames), args.repeat)
    return 0


def two_passes(frames: list[str]) -> tuple[float, float, list[str]]:
    """CPU seconds of the diff and of the squeezer over ``frames``, and what they sent."""
    diff, squeezer = TwoPassScreenDiff(), SgrSqueezer()
    t0 = time.process_time()
    diffed = [diff.diff(frame) for frame in frames]
    t1 = time.process_time()
    sent = [squeezer.squeeze(data) for data in diffed]
    return t1 - t0, time.process_time() - t1, sent


def one_pass(frames: list[str]) -> tuple[float, list[str]]:
    writer = ScreenDiff()
    t0 = time.process_time()
    sent = [writer.diff(frame) for frame in frames]
    return time.process_time() - t0, sent


def measure(frames: list[str], repeat: int) -> None:
    diff_s = squeeze_s = after_s = float("inf")
    for _ in range(repeat):
        d, s, before = two_passes(frames)
        a, after = one_pass(frames)
        diff_s, squeeze_s, after_s = min(diff_s, d), min(squeeze_s, s), min(after_s, a)
    n = len(frames)
    size = sum(len(f.encode()) for f in frames)
    before_bytes = sum(len(b.encode()) for b in before)
    after_bytes = sum(len(a.encode()) for a in after)
    print(f"{n} frames recorded, {size} bytes from Textual (best of {repeat} passes)")
    print("| chain | CPU µs/frame | bytes sent |")
    print("|---|---:|---:|")
    print(f"| before: diff | {1e6 * diff_s / n:.0f} | |")
    print(f"| before: squeeze (parses the diff's output again) | {1e6 * squeeze_s / n:.0f} | |")
    print(f"| before: both | {1e6 * (diff_s + squeeze_s) / n:.0f} | {before_bytes} |")
    print(f"| after: one pass | {1e6 * after_s / n:.0f} | {after_bytes} |")
    print(
        f"second pass: {100 * squeeze_s / (diff_s + squeeze_s):.1f} % of the chain; after / before: "
        f"{100 * after_s / (diff_s + squeeze_s):.0f} % CPU; identical output: {before == after}"
    )


if __name__ == "__main__":
    sys.exit(main())
