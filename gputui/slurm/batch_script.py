"""The batch script ``gputui run`` writes: a readable ``#SBATCH`` template for three launch patterns.

* ``per-gpu`` — one task per GPU: ``srun CMD`` starts nodes × tasks-per-node copies; each reads its rank
  from ``SLURM_PROCID`` (what ``gputui.distenv`` and the reference trainers do).
* ``torchrun`` — one task per node running ``torchrun --nproc_per_node=T --no-python CMD`` (LUMI style;
  rendezvous ``c10d`` at ``MASTER_ADDR:MASTER_PORT``).
* ``per-node`` — one task per node using all its GPUs (TensorFlow ``MirroredStrategy`` /
  ``MultiWorkerMirroredStrategy`` with ``SlurmClusterResolver``).
* ``lightning`` — PyTorch Lightning: one task per GPU started by ``srun`` (as ``per-gpu``, no torchrun);
  Lightning reads ``SLURM_PROCID``/``SLURM_LOCALID``/``SLURM_NODEID`` itself and needs
  ``--ntasks-per-node`` equal to ``Trainer(devices=...)``, and a job not named ``bash``/``interactive``.

``MASTER_ADDR`` is the job's first host (``scontrol show hostnames``), ``MASTER_PORT`` is computed in the
script from ``SLURM_JOB_ID`` with the same formula as :func:`gputui.distenv.master_port_for_job`, and the
user's command is written with :func:`shlex.join`, so it reaches the program byte for byte. ``srun`` has
no ``-u``: an ``--unbuffered`` task gets a pseudo-terminal of zero width, on which tqdm bars print nothing
(``PYTHONUNBUFFERED=1`` streams Python's output instead). Scripts are
kept in :func:`scripts_dir` and renamed ``<name>-<jobid>.sh`` once sbatch has given the job id.

Every value is data, never a line, path or option of the script: the job name follows :data:`JOB_NAME`
(the one rule of ``gputui run`` and the launch form: it is written into ``#SBATCH --job-name=`` and the
script's file name), option values have no whitespace or line break, set-up lines are one line each, and
the command and paths are quoted.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

from gputui.distenv import PORT_HIGH, PORT_LOW
from gputui.slurm.commands import SlurmError, run_slurm

PATTERNS = ("per-gpu", "torchrun", "per-node", "lightning")
GPU_BACKENDS = ("auto", "nvidia", "amd", "sim", "none")  # `gputui --backend` choices
_DESCRIPTIONS = {
    "per-gpu": "one task per GPU: srun starts every rank; each reads its rank from SLURM_PROCID",
    "torchrun": "one task per node running torchrun, which starts the node's ranks",
    "per-node": "one task per node using all of the node's GPUs (e.g. TensorFlow MirroredStrategy)",
    "lightning": "PyTorch Lightning: srun starts one task per GPU; Lightning reads Slurm's variables itself",
}
#: The job names gputui writes (``gputui run --job-name``, the launch form): no space, line break, quote,
#: ``/`` or ``%``, so the name is one word of the ``#SBATCH`` line and of the script's file name.
JOB_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,64}")
JOB_NAME_RULE = "up to 64 letters, digits, _ . + -"
LIGHTNING_NOTE = [
    "# Lightning's SLURMEnvironment takes the ranks from SLURM_PROCID/SLURM_LOCALID/SLURM_NODEID and needs",
    "# --ntasks-per-node equal to Trainer(devices=...) and --nodes equal to Trainer(num_nodes=...).",
]


@dataclass
class LaunchSpec:
    cmd: list[str]
    nodes: int = 1
    gpus_per_node: int = 0
    ntasks_per_node: int | None = None
    cpus_per_task: int | None = None
    time: str | None = None
    partition: str | None = None
    account: str | None = None
    mem: str | None = None
    env_setup: str | None = None
    setup_lines: list[str] = field(default_factory=list)  # shell lines run first (module load, venv)
    pattern: str = "per-gpu"
    job_name: str | None = None
    gpu_log: bool = False  # start `gputui --log` on every node in the background
    gpu_log_interval: float = 2.0
    gpu_log_backend: str | None = None  # `gputui --log --backend B` (None: gputui's default, auto)
    python: str = "python3"  # interpreter for gputui itself (the --gpu-log step)
    extra_sbatch: list[str] = field(default_factory=list)

    @property
    def ranks_per_node(self) -> int:
        """Processes per node: tasks per node, else GPUs per node, else 1 (1 for per-node)."""
        if self.pattern == "per-node":
            return 1
        return self.ntasks_per_node or self.gpus_per_node or 1

    @property
    def world_size(self) -> int:
        return self.nodes * self.ranks_per_node

    @property
    def name(self) -> str:
        if self.job_name:
            return self.job_name
        words = [w for w in self.cmd if not w.startswith("-")]
        prog = next((w for w in words[1:] if "python" in Path(words[0]).name and w != "-m"), None)
        base = Path(prog or (words[0] if words else "job")).name
        return re.sub(r"[^A-Za-z0-9_.+-]", "_", base)[:40] or "job"


def job_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a job name (one line, the name shown escaped), or None when it can."""
    return None if JOB_NAME.fullmatch(name) else f"job name {name!r}: {JOB_NAME_RULE}"


def validate(spec: LaunchSpec) -> None:
    """:class:`SlurmError` (one line) for a spec whose values could not be written as they are."""
    if not spec.cmd:
        raise SlurmError("no command given: gputui run [options] -- CMD ARGS...")
    if spec.pattern not in PATTERNS:
        raise SlurmError(f"unknown pattern {spec.pattern!r} (one of {', '.join(PATTERNS)})")
    if spec.gpus_per_node < 0:
        raise SlurmError("--gpus-per-node must be 0 or more")
    for label, value in (("--time", spec.time), ("--mem", spec.mem), ("--partition", spec.partition)):
        if value is not None and (not value or any(c.isspace() or c in "\"'`$;\\" for c in value)):
            raise SlurmError(f"{label} {value!r} is not a valid value")
    if spec.gpu_log_backend not in (None, *GPU_BACKENDS):
        raise SlurmError(f"unknown GPU backend {spec.gpu_log_backend!r} (one of {', '.join(GPU_BACKENDS)})")
    one_line = [("set-up line", line) for line in spec.setup_lines]
    one_line += [("--env-setup", spec.env_setup or ""), *(("#SBATCH option", a) for a in spec.extra_sbatch)]
    for label, value in one_line:
        if "\n" in value or "\r" in value:
            raise SlurmError(f"{label} {value!r} must be one line")
    problem = job_name_problem(spec.name)
    if problem:
        raise SlurmError(problem)
    if spec.pattern == "lightning" and spec.name in ("bash", "interactive"):
        raise SlurmError(
            f"job name {spec.name!r}: Lightning takes a job of that name for an interactive session and "
            "ignores Slurm's tasks (use --job-name)"
        )
    if spec.account is not None and not re.fullmatch(r"[A-Za-z0-9_.+-]+", spec.account):
        raise SlurmError(f"--account {spec.account!r} is not a valid value")


def _port_lines() -> list[str]:
    span = PORT_HIGH - PORT_LOW + 1
    return [
        "job_number=${SLURM_JOB_ID%%[!0-9]*}",
        f"export MASTER_PORT=$(( {PORT_LOW} + job_number % {span} ))",
    ]


def render(spec: LaunchSpec) -> str:
    """The batch script text for ``spec`` (what ``gputui run --dry-run`` prints)."""
    validate(spec)
    per_node_tasks = 1 if spec.pattern in ("torchrun", "per-node") else spec.ranks_per_node
    lines = [
        "#!/bin/bash",
        f"# Written by `gputui run` (pattern {spec.pattern}): {_DESCRIPTIONS[spec.pattern]}.",
        "# Edit it freely and resubmit with: sbatch <this file>",
        f"#SBATCH --job-name={spec.name}",
        f"#SBATCH --nodes={spec.nodes}",
        f"#SBATCH --ntasks-per-node={per_node_tasks}",
    ]
    if spec.gpus_per_node:
        lines.append(f"#SBATCH --gres=gpu:{spec.gpus_per_node}")
    optional = (
        ("cpus-per-task", spec.cpus_per_task),
        ("mem", spec.mem),
        ("time", spec.time),
        ("partition", spec.partition),
        ("account", spec.account),
    )
    lines += [f"#SBATCH --{key}={value}" for key, value in optional if value is not None]
    lines += [f"#SBATCH {arg}" for arg in spec.extra_sbatch]
    lines += ["", "set -eo pipefail"]
    if spec.env_setup:
        lines += ["", "# Environment setup (--env-setup)", f"source {shlex.quote(spec.env_setup)}"]
    setup = [line.rstrip() for line in spec.setup_lines if line.strip()]
    if setup:
        lines += ["", "# Environment setup (--setup lines, as written)", *setup]
    world = {
        "per-gpu": "$SLURM_NTASKS",
        "lightning": "$SLURM_NTASKS",
        "torchrun": f"$(( SLURM_NNODES * {spec.ranks_per_node} ))",
        "per-node": "$SLURM_NNODES",
    }[spec.pattern]
    lines += [
        "",
        "# Rendezvous: the job's first host, and a port derived from the job id",
        f"# ({PORT_LOW} + id % {PORT_HIGH - PORT_LOW + 1}, as gputui.distenv.master_port_for_job does)",
        'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
        *_port_lines(),
        f"export WORLD_SIZE={world}",
        "export PYTHONUNBUFFERED=1",
    ]
    if spec.gpu_log:
        log = [
            shlex.quote(spec.python),
            "-m",
            "gputui",
            "--log",
            "-",
            "--interval",
            f"{spec.gpu_log_interval:g}",
        ]
        if spec.gpu_log_backend:
            log += ["--backend", spec.gpu_log_backend]
        lines += [
            "",
            "# GPU and host samples of every node (gputui --log), in the background: one task per node",
            "# (-n: not the job's task count), records in gputui-<job>-<node>.jsonl, messages in .err.",
            'srun --overlap -N "$SLURM_NNODES" -n "$SLURM_NNODES" --ntasks-per-node=1 \\',
            '    --quiet --disable-status -o "gputui-%j-%N.jsonl" -e "gputui-%j-%N.err" \\',
            f"    {' '.join(log)} &",
            "gputui_log_step=$!",
        ]
    user_cmd = shlex.join(spec.cmd)
    if spec.pattern == "torchrun":
        launch = [
            f"# torchrun starts {spec.ranks_per_node} ranks per node and sets RANK, LOCAL_RANK, WORLD_SIZE.",
            "srun torchrun \\",
            '    --nnodes="$SLURM_NNODES" \\',
            f"    --nproc_per_node={spec.ranks_per_node} \\",
            '    --rdzv_id="$SLURM_JOB_ID" \\',
            "    --rdzv_backend=c10d \\",
            '    --rdzv_endpoint="$MASTER_ADDR:$MASTER_PORT" \\',
            "    --no_python \\",
            f"    {user_cmd}",
        ]
    elif spec.pattern == "lightning":
        launch = [*LIGHTNING_NOTE, f"srun {user_cmd}"]
    else:
        launch = [f"srun {user_cmd}"]
    lines.append("")
    if spec.gpu_log:
        launch[-1] += " || status=$?"
        lines += [
            "status=0",
            *launch,
            "# Stop the samplers: srun --disable-status passes SIGINT on, so each node writes its last",
            "# record and exits (waited for at most 10 s; SIGTERM would make srun SIGKILL them).",
            'kill -INT "$gputui_log_step" 2>/dev/null || true',
            'for _ in $(seq 50); do kill -0 "$gputui_log_step" 2>/dev/null || break; sleep 0.2; done',
            'exit "$status"',
        ]
    else:
        lines += launch
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- where scripts live


def state_dir() -> Path:
    """``$GPUTUI_STATE_DIR``, else ``$XDG_STATE_HOME/gputui``, else ``~/.local/state/gputui``."""
    if os.environ.get("GPUTUI_STATE_DIR"):
        return Path(os.environ["GPUTUI_STATE_DIR"])
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "gputui"


def scripts_dir() -> Path:
    return state_dir() / "scripts"


def write_script(spec: LaunchSpec, text: str | None = None) -> Path:
    """Write the script to :func:`scripts_dir` under a provisional name; return its path."""
    validate(spec)  # the name is one word of letters, digits, _ . + -: the file stays in the folder
    folder = scripts_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{spec.name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.sh"
    path.write_text(text if text is not None else render(spec))
    path.chmod(0o755)
    return path


def submit(script: Path, *, env: dict[str, str] | None = None) -> tuple[str, Path]:
    """``sbatch --parsable`` the script; rename it ``<name>-<jobid>.sh``; return (job id, final path)."""
    res = run_slurm(["sbatch", "--parsable", str(script)], env=env, check=False, timeout=60)
    if res.returncode != 0:
        why = (res.stderr.strip().splitlines() or [f"exit status {res.returncode}"])[-1]
        raise SlurmError(f"sbatch: {why.removeprefix('sbatch: error: ')}")
    job_id = res.stdout.strip().split(";")[0]
    if not job_id.isdigit():
        raise SlurmError(f"sbatch printed no job id: {res.stdout.strip()[:80]!r}")
    name = re.sub(r"-\d{8}-\d{6}-\d+\.sh$", "", script.name)
    final = script.with_name(f"{name}-{job_id}.sh")
    try:
        script.rename(final)
    except OSError:
        final = script
    return job_id, final


def write_and_submit(spec: LaunchSpec, text: str | None = None) -> tuple[str, Path]:
    """:func:`write_script` then :func:`submit`; a script sbatch refused is removed (nothing half-done is
    left: ``gputui run --dry-run`` prints it again)."""
    script = write_script(spec, text)
    try:
        return submit(script)
    except SlurmError:
        script.unlink(missing_ok=True)
        raise
