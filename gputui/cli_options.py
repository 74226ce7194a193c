"""The option groups of the ``gputui`` command line (shared by several subcommands) and their types.

Kept apart from :mod:`gputui.cli` so that module stays a readable grammar; like it, cheap to import:
the types that need a command's modules import them only when an option is given.
"""

from __future__ import annotations

import argparse

from gputui.argtypes import (
    DURATION_S,
    SAMPLE_INTERVAL_S,
    positive_int,
    positive_int_list,
)

#: The GPU backends a sampler may use (``--backend``, ``--probe-backend``).
BACKENDS = ("auto", "nvidia", "amd", "sim", "none")


def add_low_bandwidth_option(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--low-bandwidth``: the dashboard for slow links (``[dashboard] low_bandwidth``). Given to the
    top-level parser (the jobs screen and the dashboards it opens) and to each dashboard command; a
    command's own default must not hide the top-level one, so only the top level has one."""
    parser.add_argument(
        "--low-bandwidth",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="dashboard for slow links: a slower refresh, no braille charts ([dashboard] low_bandwidth)",
    )


def add_sampling_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--interval",
        type=SAMPLE_INTERVAL_S.parse,
        default=1.0,
        metavar="S",
        help="seconds between samples (default 1)",
    )
    parser.add_argument(
        "--backend",
        default="auto",
        choices=BACKENDS,
        help="GPU backend (default auto: NVML, then ROCm/amdgpu sysfs; sim is simulated); with no command: "
        "of the probes the jobs screen starts",
    )
    stop = parser.add_mutually_exclusive_group()
    stop.add_argument("--count", type=positive_int, metavar="N", help="stop after N samples per GPU")
    stop.add_argument(
        "--duration",
        type=DURATION_S.parse,
        metavar="S",
        help="stop after S seconds (with no command: quit the jobs screen after S seconds)",
    )


def add_probe_options(parser: argparse.ArgumentParser, backend_help: str) -> None:
    """``--probe-backend`` and ``--probe-interval``: the samplers gputui starts on a job's nodes (attach,
    run, and each size of a scale sweep); ``backend_help`` says whose backend it is."""
    parser.add_argument("--probe-backend", choices=BACKENDS, help=backend_help)
    parser.add_argument(
        "--probe-interval", type=SAMPLE_INTERVAL_S.parse, metavar="S", help="seconds between samples"
    )


def add_attach_options(parser: argparse.ArgumentParser) -> None:
    """Options of attaching to a job (``attach``, and ``run`` unless --no-attach)."""
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="write the merged record stream to stdout (no UI)")
    out.add_argument("--output", metavar="FILE", help="append the merged record stream to FILE (no UI)")
    out.add_argument("--text", action="store_true", help="one readable line per record on stdout (no UI)")
    add_probe_options(parser, "GPU backend of the probe on the job's nodes (default auto)")
    parser.add_argument("--detach-after", type=DURATION_S.parse, metavar="S", help="stop attaching after S s")
    parser.add_argument("--no-wait", action="store_true", help="do not wait for a pending job to start")
    parser.add_argument("--no-logs", action="store_true", help="do not follow the job's output files")


def add_launch_options(parser: argparse.ArgumentParser) -> None:
    """The batch script's options shared by ``run`` and a ``scale`` sweep."""
    parser.add_argument("--cpus-per-task", type=positive_int, metavar="C")
    parser.add_argument("--time", metavar="HH:MM:SS")
    parser.add_argument("--partition")
    parser.add_argument("--account")
    parser.add_argument("--mem")
    parser.add_argument("--env-setup", metavar="FILE", help="shell file sourced before the command")
    parser.add_argument(
        "--setup",
        action="append",
        default=[],
        metavar="LINE",
        help="a shell line run before the command, as written (repeatable: module load ..., source venv)",
    )
    parser.add_argument(
        "--pattern",
        choices=("per-gpu", "torchrun", "per-node", "lightning"),
        default="per-gpu",
        help="per-gpu: srun starts one task per GPU; torchrun: one torchrun per node; per-node: one task "
        "per node (TensorFlow); lightning: one task per GPU, Lightning reads Slurm itself (default per-gpu)",
    )
    parser.add_argument("--job-name", metavar="NAME", help="Slurm job name (default: the program's name)")


def add_sweep_options(parser: argparse.ArgumentParser) -> None:
    """``gputui scale --gpus 1,2,4 ... -- CMD``: the same training submitted at each size."""
    parser.add_argument(
        "--gpus",
        type=positive_int_list,
        metavar="LIST",
        help="submit CMD at each total GPU count (1,2,4) through gputui run, wait, compare",
    )
    parser.add_argument(
        "--nodes",
        type=positive_int_list,
        metavar="LIST",
        help="nodes per size: one number for all, or one per --gpus entry (default 1)",
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="ranks without GPUs: N tasks, no --gres (CPU training, test clusters)",
    )
    parser.add_argument(
        "--local", action="store_true", help="run each size as local processes, one after another"
    )
    parser.add_argument(
        "--sequential", action="store_true", help="submit the next size only when the previous one has ended"
    )
    parser.add_argument(
        "--no-gpu-log", action="store_true", help="no gputui --log on the nodes (no utilisation)"
    )
    add_probe_options(
        parser, "the samplers' GPU backend (default auto; --local with sim: simulated GPUs following ranks)"
    )
    add_launch_options(parser)
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS... ({gpus} and {nodes} replaced)")


def add_report_options(parser: argparse.ArgumentParser) -> None:
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object per run (scale: one in all)")
    fmt.add_argument("--csv", action="store_true", help="CSV with a header row")
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        metavar="N",
        help="global batch of one printed step, for images/s where a log counts steps only",
    )
    parser.add_argument(
        "--plot",
        metavar="FILE",
        help="also draw the figure into FILE (.png/.svg/.pdf; needs gputui[plot], else a terminal chart)",
    )


def add_job_action_commands(commands: argparse._SubParsersAction) -> None:
    """``cancel JOBID [--signal SIG]``, ``hold JOBID``, ``release JOBID``: the jobs screen's job actions
    (:data:`gputui.home.actions.ACTIONS`) on the command line."""
    cancel = commands.add_parser(
        "cancel",
        help="cancel (or signal) one of my jobs, and confirm it",
        description="Cancel one of my active jobs and wait until Slurm says it ended, or with --signal "
        "send SIG to every step and the batch shell. One line says the confirmed outcome; exit 1 when "
        "Slurm refused or it could not be confirmed, 2 for a job id or signal that is not one.",
    )
    cancel.add_argument("jobid", help="Slurm job id (123, array 123_4, het 123+1)")
    cancel.add_argument("--signal", metavar="SIG", help="send SIG instead (USR1, SIGTERM, 10 ...)")
    for verb, key, what in (
        ("hold", "H", "hold one of my pending jobs: it does not start until released"),
        ("release", "U", "release one of my held jobs: it may start again"),
    ):
        job_verb = commands.add_parser(
            verb,
            help=f"{what}, and confirm it",
            description=f"{what[0].upper()}{what[1:]} (the jobs screen's {key} key). One line says what "
            "Slurm shows afterwards; exit 1 when Slurm refused or it could not be confirmed, 2 for a job "
            "id that is not one.",
        )
        job_verb.add_argument("jobid", help="Slurm job id (123, array 123_4, het 123+1)")


def pattern(text: str) -> object:
    """``--pattern TEXT``: a taught log format, compiled (a bad one is a usage error naming it)."""
    from gputui.logs.formats.taught import compile_pattern

    try:
        return compile_pattern(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def add_pattern_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pattern",
        dest="patterns",
        action="append",
        type=pattern,
        metavar="TEXT",
        help="teach a log format: the line's text with {name} for its numbers, e.g. "
        "'iter {step}: loss {loss}, time {step_time_ms}ms' ({step}/{epoch} place the values; repeatable; "
        "kept per folder in the settings' [[patterns]])",
    )


def history_since(text: str) -> str:
    """``gputui history --since``: the period as sacct's relative start (gputui.home.history_text)."""
    from gputui.home.history_text import since_arg

    return since_arg(text)
