"""``gputui run [options] -- CMD ARGS...``: write a batch script, submit it, print id and path, attach.

``--dry-run`` prints the script and submits nothing; ``--local`` runs the ranks as local processes with the
same environment contract (see :mod:`gputui.slurm.launch_local`). Scripts are kept in
``$GPUTUI_STATE_DIR/scripts`` (default ``~/.local/state/gputui/scripts``), named ``<name>-<jobid>.sh``; one
sbatch refused is removed. A bad value (a job name against
:data:`~gputui.slurm.batch_script.JOB_NAME`, a line break in an option) is one line and exit status 2,
before anything is written.
"""

from __future__ import annotations

import argparse
import sys

from gputui.cli import CommandError
from gputui.slurm.batch_script import LaunchSpec, render, write_and_submit
from gputui.slurm.commands import SlurmError


def command_of(args: argparse.Namespace, usage: str) -> list[str]:
    """The ``-- CMD ARGS...`` part of the command line (a usage error when there is none)."""
    cmd = list(args.cmd or [])
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise CommandError(f"no command given: {usage}")
    return cmd


def script_options(args: argparse.Namespace) -> dict:
    """The batch script's options shared by ``run`` and a ``scale`` sweep (``cli._add_launch_options``
    and the samplers' backend and interval), as :class:`LaunchSpec` fields."""
    return {
        "cpus_per_task": args.cpus_per_task,
        "time": args.time,
        "partition": args.partition,
        "account": args.account,
        "mem": args.mem,
        "env_setup": args.env_setup,
        "setup_lines": list(getattr(args, "setup", None) or []),
        "pattern": args.pattern,
        "gpu_log_interval": getattr(args, "probe_interval", None) or 2.0,
        "gpu_log_backend": getattr(args, "probe_backend", None),
        "python": sys.executable,
    }


def spec_from_args(args: argparse.Namespace) -> LaunchSpec:
    return LaunchSpec(
        cmd=command_of(args, "gputui run [options] -- CMD ARGS..."),
        nodes=args.nodes,
        gpus_per_node=args.gpus_per_node,
        ntasks_per_node=args.ntasks_per_node,
        job_name=getattr(args, "job_name", None),
        gpu_log=getattr(args, "gpu_log", False),
        **script_options(args),
    )


def _run_local(spec: LaunchSpec, args: argparse.Namespace) -> int:
    if (
        not (args.json or args.output or args.text or args.no_attach)
        and sys.stdout.isatty()
        and sys.stdin.isatty()
    ):
        from gputui.commands.dashboard import open_dashboard
        from gputui.sources.local import LocalRunSource

        backend = args.probe_backend or "auto"
        source = LocalRunSource(spec, backend=backend, interval=args.probe_interval or 1.0)
        low_bandwidth = getattr(args, "low_bandwidth", False)
        return open_dashboard(source, duration=args.detach_after, low_bandwidth=low_bandwidth)
    from gputui.slurm.launch_local import launch_local

    run = launch_local(spec)
    print(
        f"local run {run.run_id}: {spec.world_size} processes, MASTER_ADDR=127.0.0.1 MASTER_PORT={run.port}"
    )
    print(f"output per rank: {run.folder}/rank-<N>.out", flush=True)
    try:
        codes = run.wait()
    except KeyboardInterrupt:
        run.terminate()
        return 130
    failed = [f"rank {r} exited {c}" for r, c in enumerate(codes) if c != 0]
    print("all ranks finished" if not failed else "; ".join(failed))
    return 0 if not failed else 1


def main(args: argparse.Namespace) -> int:
    spec = spec_from_args(args)
    try:
        text = render(spec)  # every value checked (job name: one rule with the launch form)
    except SlurmError as exc:  # a bad option value: a usage error, nothing written or submitted
        print(f"gputui: error: {exc}", file=sys.stderr)
        return 2
    try:
        if args.dry_run:
            sys.stdout.write(text)
            return 0
        if args.local:
            return _run_local(spec, args)
        job_id, path = write_and_submit(spec, text)
    except (SlurmError, OSError) as exc:
        raise CommandError(str(exc)) from None
    print(f"submitted job {job_id}")
    print(f"batch script: {path}", flush=True)
    if args.no_attach:
        return 0
    from gputui.commands.attach import attach_job

    return attach_job(job_id, args)
