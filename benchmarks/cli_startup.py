"""Start-up time of the gputui command line (``--help``, ``--version``) against ``python -c pass``.

Prints the median and worst wall time over N runs of each command in a fresh interpreter, and the
modules the help path imported that a light CLI must not import. Goal: well under 0.3 s.

    python benchmarks/cli_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("textual", "torch", "tensorflow", "pynvml", "amdsmi", "pyrsmi")


def wall_times(argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return times


def heavy_modules_on_help_path() -> list[str]:
    code = (
        "import json, sys\nfrom gputui.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
        "    pass\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = json.loads(out.stderr.strip().splitlines()[-1])
    return [m for m in modules if m.split(".")[0] in HEAVY]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    script = shutil.which("gputui", path=str(Path(sys.executable).parent)) or "gputui"
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "gputui --help": [script, "--help"],
        "gputui --version": [script, "--version"],
        "python -m gputui --help": [sys.executable, "-m", "gputui", "--help"],
        "python -c 'import textual.app'": [sys.executable, "-c", "import textual.app"],
    }
    print(f"{'command':34} {'median ms':>10} {'max ms':>8}   ({args.runs} runs each)")
    for label, argv in cases.items():
        times = wall_times(argv, args.runs)
        print(f"{label:34} {statistics.median(times) * 1000:10.1f} {max(times) * 1000:8.1f}")
    print(f"heavy modules imported by --help: {heavy_modules_on_help_path() or 'none'}")


if __name__ == "__main__":
    main()
