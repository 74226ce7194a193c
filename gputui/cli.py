"""The ``gputui`` command line.

This module must stay cheap to import: ``gputui --help`` and ``--version`` answer without loading
Textual, torch, TensorFlow or NVML. Each command's implementation is imported only when it runs.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable, Sequence

from gputui import __version__
from gputui import cli_options as options
from gputui.argtypes import (
    DURATION_S,
    ROTATE_MB,
    SLURM_REFRESH_S,
    int_in,
    positive_int,
)
from gputui.cli_help import DESCRIPTION, EPILOG

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
#: Commands that read training logs: the taught formats (--pattern, [[patterns]]) apply to them.
TEACHING_COMMANDS = frozenset({"parse", "replay", "report", "export", "attach", "run", "tui", "headless"})


class CommandError(Exception):
    """A user-facing failure: printed as one line ``gputui: error: ...``, exit status 1."""


def _teach(args: argparse.Namespace) -> None:
    """The taught log formats in effect: ``--pattern``, then the settings file's ``[[patterns]]``."""
    from gputui.config import load_config_or_defaults
    from gputui.logs.formats.taught import use

    config, problem = load_config_or_defaults()
    if problem and args.command in ("parse", "report", "export"):  # the dashboard says it itself
        print(f"gputui: warning: {problem}", file=sys.stderr)
    use(getattr(args, "patterns", None) or (), config.patterns, config.cluster)


def build_parser() -> argparse.ArgumentParser:
    """The whole command-line grammar (cheap: no command module is imported)."""
    parser = argparse.ArgumentParser(
        prog="gputui",
        description=DESCRIPTION,
        epilog=EPILOG.format(settings=_settings_path()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gputui {__version__}")
    parser.add_argument(
        "--log",
        metavar="FILE",
        help="headless: append GPU and host samples to FILE as JSON lines ('-' = stdout)",
    )
    parser.add_argument(
        "--rotate-mb",
        type=ROTATE_MB.parse,
        metavar="M",
        help="headless: move FILE to FILE.1 (FILE.1 to FILE.2 ...) when it reaches M MiB",
    )
    parser.add_argument(
        "--rotate-keep",
        type=int_in(1, 1000),
        default=5,
        metavar="K",
        help="headless: rotated files to keep (default 5)",
    )
    options.add_sampling_options(parser)
    options.add_low_bandwidth_option(parser, top=True)
    parser.add_argument(
        "--refresh",
        type=SLURM_REFRESH_S.parse,
        metavar="S",
        help="jobs screen: seconds between squeue calls, 0.5 to 3600 (default 5; [jobs] refresh_s, "
        "$GPUTUI_REFRESH)",
    )
    parser.add_argument(
        "--cluster",
        metavar="NAME",
        help="jobs screen: use the [clusters.NAME] preset of the settings (default: Slurm's ClusterName)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    attach = sub.add_parser(
        "attach",
        help="attach to a running job: probe its nodes, follow its output",
        description="In a terminal: the job dashboard (every node's GPUs, the job's training metrics and "
        "output). q ends only gputui's probe step; the job keeps running. --json, --output or --text "
        "(or no terminal): the record stream without a UI.",
    )
    attach.add_argument("jobid", help="Slurm job id (123, array 123_4, het 123+1)")
    options.add_attach_options(attach)
    options.add_low_bandwidth_option(attach)

    run = sub.add_parser("run", help="write a batch script for CMD, submit it with sbatch and attach")
    run.add_argument("-N", "--nodes", type=positive_int, default=1)
    run.add_argument("--gpus-per-node", type=int_in(0, 1024), default=0, metavar="G")
    run.add_argument("--ntasks-per-node", type=positive_int, metavar="T")
    options.add_launch_options(run)
    run.add_argument("--dry-run", action="store_true", help="print the batch script, submit nothing")
    run.add_argument("--local", action="store_true", help="run N local processes instead of a Slurm job")
    run.add_argument("--no-attach", action="store_true")
    run.add_argument("--gpu-log", action="store_true", help="also run `gputui --log` on every node")
    options.add_attach_options(run)
    options.add_low_bandwidth_option(run)
    run.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")

    probe = sub.add_parser("probe", help="stream GPU and host samples of this node as JSON lines to stdout")
    options.add_sampling_options(probe)

    replay = sub.add_parser(
        "replay",
        help="record files (JSON lines) and training logs in the dashboard, with a time cursor",
        description="Record files (--log, attach --output, parse --json), plain training logs and run "
        "directories (metrics.csv, TensorBoard event files, a folder with lightning_logs/) in the "
        "dashboard. Left/right move the time cursor, space plays, [ ] change the speed, home/end jump; "
        "files still being written are followed.",
    )
    replay.add_argument("files", nargs="+", metavar="FILE", help="a file, or a run directory")
    replay.add_argument("--headless", action="store_true", help="no screen: print what the files hold")
    options.add_low_bandwidth_option(replay)
    options.add_pattern_option(replay)
    report = sub.add_parser(
        "report",
        help="a run's GPUs (util, idle, memory, energy), epoch times, throughput, final metrics, and why it "
        "was slow or stuck",
    )
    report.add_argument("runs", nargs="+", metavar="RUN", help="record file, training log, or job id")
    options.add_report_options(report)
    options.add_pattern_option(report)
    scale = sub.add_parser(
        "scale",
        help="speedup and parallel efficiency across runs at several GPU counts",
        description="Compare existing runs (--from RUN...), or submit the same training at each size "
        "(--gpus 1,2,4 [options] -- CMD), wait for the jobs and compare them. Strong scaling efficiency is "
        "time based (T1 / (N * TN)), weak scaling efficiency throughput-per-GPU based.",
    )
    scale.add_argument("--from", dest="runs", nargs="+", metavar="RUN", help="compare these existing runs")
    scale.add_argument("--scaling", choices=("strong", "weak"), default="strong", help="default: strong")
    options.add_report_options(scale)
    options.add_sweep_options(scale)
    export = sub.add_parser(
        "export", help="a run's records as CSV files, TensorBoard event files or MLflow runs"
    )
    export.add_argument(
        "paths",
        nargs="+",
        metavar="RUN... DIR",
        help="RUNs (record file, training log, or job id), then DIR: a folder per RUN is written under it "
        "(mlflow: the store, or a tracking URI such as sqlite:///runs.db)",
    )
    export.add_argument("--to", choices=("csv", "tensorboard", "mlflow"), default="csv", help="default: csv")
    demo = sub.add_parser(
        "demo",
        help="the dashboard on a real small DDP training run here, with simulated GPUs (no Slurm)",
        description="Runs the PyTorch DDP reference trainer (ResNet-18, bundled digits data, CPU, gloo) "
        "with 2 ranks (--ranks) on this machine and opens the dashboard on it; one simulated GPU per "
        "rank follows that rank's CPU use and is labelled SIMULATED. Needs PyTorch (make demo installs "
        "it). q quits and stops the ranks.",
    )
    demo.add_argument("--duration", type=DURATION_S.parse, metavar="S", help="quit by itself after S seconds")
    demo.add_argument("--headless", action="store_true", help="same pipeline, no screen: print a summary")
    demo.add_argument("--record", metavar="FILE", help="also append the record stream to FILE")
    options.add_low_bandwidth_option(demo)
    demo.add_argument("--ranks", type=int_in(1, 64), default=2, help="training processes, 1-64 (default 2)")
    demo.add_argument("--epochs", type=positive_int, default=4, help="epochs to train (default 4)")

    serve = sub.add_parser(
        "serve",
        help="what gputui COMMAND shows, in a browser through an SSH tunnel, behind a token",
        description="Serves the jobs screen (or attach JOBID, demo, replay FILE...) to a browser: each "
        "viewer gets its own gputui process. Listens on 127.0.0.1 only unless --host says otherwise, "
        "makes a random token per start and prints the address with it and the ssh -L line to run on "
        "your laptop; every request without the token is refused. Ctrl-C ends the server and every "
        "viewer's gputui (jobs keep running). Needs gputui[serve]; docs/serve.md.",
    )
    serve.add_argument("--port", type=int_in(0, 65535), default=8000, help="default 8000; 0: any free port")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument(
        "--max-viewers",
        type=int_in(1, 64),
        metavar="N",
        help="browser viewers at once, each a gputui process (default 2; [serve] max_viewers)",
    )
    serve.add_argument(
        "--token-file", metavar="F", help="also write the token to F (mode 0600) once listening, for scripts"
    )
    serve.add_argument(
        "served", nargs=argparse.REMAINDER, metavar="COMMAND ...", help="attach JOBID, demo, replay FILE..."
    )

    jobs = sub.add_parser("jobs", help="list my Slurm jobs")
    jobs.add_argument("--json", action="store_true")
    jobs.add_argument(
        "--all",
        action="store_true",
        help="include ended jobs: those Slurm still remembers and sacct's of the last [jobs] ended_hours",
    )
    history = sub.add_parser("history", help="my ended jobs' GPU-hours, GPU use and outcome (one sacct call)")
    history.add_argument(
        "--since",
        default="7d",
        type=options.history_since,
        metavar="PERIOD",
        help="jobs that ended in the last PERIOD: 30m, 12h, 7d, 4w (default 7d)",
    )
    history_format = history.add_mutually_exclusive_group()
    history_format.add_argument("--json", action="store_true", help="one JSON document: jobs and totals")
    history_format.add_argument("--csv", action="store_true", help="CSV rows; an unknown value is empty")
    options.add_job_action_commands(sub)
    parse = sub.add_parser("parse", help="extract per-epoch metrics from a training log")
    parse.add_argument("files", nargs="+", metavar="FILE")
    parse.add_argument(
        "--format",
        default="auto",
        choices=(
            "auto",
            "gputui",
            "megatron_straggler",
            "pipetable",
            "darknet",
            "flower",
            "sample_factory",
            "sacrebleu",
            "kvtable",
            "ultralytics",
            "fairseq",
            "keras",
            "tqdm",
            "hf",
            "open_clip",
            "mmengine",
            "timm",
            "pytorch",
            "generic",
            "csv",
            "tensorboard",
            "jsonl",
        ),
        help="log format (default auto: every text format, chosen per line; csv/tfevents by file name)",
    )
    parse.add_argument(
        "--json",
        action="store_true",
        help="print every record as a JSON line (every frame read; the table samples progress redraws)",
    )
    parse.add_argument(
        "--batch-size",
        type=positive_int,
        metavar="N",
        help="global batch of one printed step (all ranks), for images/s where the log counts steps only",
    )
    options.add_pattern_option(parse)
    parse.add_argument(
        "--unread",
        action="store_true",
        help="list the lines that look like metrics but were not read: each shape, its count, an example",
    )
    check = sub.add_parser("check", help="validate record files and count what a reader would skip")
    check.add_argument("files", nargs="+", metavar="FILE")
    train = sub.add_parser("train", help="run a reference trainer: gputui train torch|tf|lightning --help")
    train.add_argument("framework", choices=("torch", "tf", "lightning"))
    train.add_argument("args", nargs=argparse.REMAINDER)
    return parser


# command → "module:function" implementing it.
_COMMANDS: dict[str, str] = {
    "attach": "gputui.commands.attach:main",
    "run": "gputui.commands.run:main",
    "jobs": "gputui.commands.jobs:main",
    "history": "gputui.commands.history:main",
    "cancel": "gputui.commands.job_action:main",
    "hold": "gputui.commands.job_action:main",
    "release": "gputui.commands.job_action:main",
    "check": "gputui.commands.check:main",
    "parse": "gputui.commands.parse:main",
    "train": "gputui.commands.train:main",
    "probe": "gputui.commands.probe:main",
    "headless": "gputui.commands.headless:main",
    "demo": "gputui.commands.demo:main",
    "replay": "gputui.commands.replay:main",
    "tui": "gputui.commands.home:main",
    "report": "gputui.commands.report:main",
    "scale": "gputui.commands.scale:main",
    "export": "gputui.commands.export:main",
    "serve": "gputui.commands.serve:main",
}


def _settings_path() -> str:
    try:
        from gputui.config import config_path

        return str(config_path())
    except Exception:  # no home directory: --help must still answer
        return "~/.config/gputui/config.toml"


def _resolve(command: str) -> Callable[[argparse.Namespace], int]:
    module_name, _, func = _COMMANDS[command].partition(":")
    return getattr(importlib.import_module(module_name), func)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gputui`` console script; returns the exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "export" and not any(a.startswith("-") for a in extra):
        args.paths += extra  # `export RUN1 RUN2 --to csv DIR`: DIR after the option
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    command = args.command or ("headless" if args.log else "tui")
    if args.command and args.log:
        parser.error("--log is the headless mode and takes no command")
    handler = _resolve(command)
    if command in TEACHING_COMMANDS:
        _teach(args)
    from gputui.output import STDOUT, WriteFailed, silence_stdout, stdout_guarded

    try:
        with stdout_guarded():
            return handler(args)
    except (CommandError, WriteFailed) as exc:  # WriteFailed: a full disk, named (a file, standard output)
        print(f"gputui: error: {exc}", file=sys.stderr)
        if isinstance(exc, WriteFailed) and exc.target == STDOUT:
            silence_stdout()
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as cat does
        silence_stdout()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
