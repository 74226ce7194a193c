"""What the batch scripts of ``gputui run`` say, line by line, and what they do when bash runs them.

test_slurm_units.test_dry_run_golden compares the output with ``render()`` and with golden files that
``GPUTUI_UPDATE_GOLDEN`` rewrites, so a wrong line can be blessed. Here the lines users rely on are
written out: the task layout, the rendezvous port formula, the launch line; and each script runs under
bash with stand-ins for ``srun``/``scontrol`` that record what they were given.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gputui.cli import main as cli_main
from gputui.slurm.batch_script import PATTERNS, LaunchSpec, render

DATA = Path(__file__).parent / "data"
CMD = ["python", "train.py", "--epochs", "3", "a b", "it's", '"q"', "$HOME", "x;y", "`id`"]
QUOTED = "python train.py --epochs 3 'a b' 'it'\"'\"'s' '\"q\"' '$HOME' 'x;y' '`id`'"
ARGV = [
    "run",
    "-N",
    "2",
    "--gpus-per-node",
    "4",
    "--cpus-per-task",
    "8",
    "--time",
    "01:00:00",
    "--partition",
    "gpu",
    "--account",
    "proj42",
    "--mem",
    "64G",
    "--env-setup",
    "/home/me/env setup.sh",
]
SETUP = "source '/home/me/env setup.sh'"
ADDR = 'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)'
COMMON = [
    "#!/bin/bash",
    "#SBATCH --job-name=train.py",
    "#SBATCH --nodes=2",
    "#SBATCH --gres=gpu:4",
    "#SBATCH --cpus-per-task=8",
    "#SBATCH --mem=64G",
    "#SBATCH --time=01:00:00",
    "#SBATCH --partition=gpu",
    "#SBATCH --account=proj42",
    "set -eo pipefail",
    SETUP,
    ADDR,
    "job_number=${SLURM_JOB_ID%%[!0-9]*}",
    "export MASTER_PORT=$(( 10000 + job_number % 22768 ))",
    "export PYTHONUNBUFFERED=1",
]
# Per pattern: the lines that differ (task layout, world size, launch).
LINES = {
    "per-gpu": [
        "#SBATCH --ntasks-per-node=4",  # one task per GPU
        "export WORLD_SIZE=$SLURM_NTASKS",
        f"srun {QUOTED}",
    ],
    "torchrun": [
        "#SBATCH --ntasks-per-node=1",  # torchrun starts the node's 4 ranks
        "export WORLD_SIZE=$(( SLURM_NNODES * 4 ))",
        "srun torchrun \\",
        '    --nnodes="$SLURM_NNODES" \\',
        "    --nproc_per_node=4 \\",
        '    --rdzv_id="$SLURM_JOB_ID" \\',
        "    --rdzv_backend=c10d \\",
        '    --rdzv_endpoint="$MASTER_ADDR:$MASTER_PORT" \\',
        "    --no_python \\",
        f"    {QUOTED}",
    ],
    "per-node": [
        "#SBATCH --ntasks-per-node=1",  # one task per node, all its GPUs
        "export WORLD_SIZE=$SLURM_NNODES",
        f"srun {QUOTED}",
    ],
    "lightning": [
        "#SBATCH --ntasks-per-node=4",  # Lightning: one task per device, started by srun
        "export WORLD_SIZE=$SLURM_NTASKS",
        f"srun {QUOTED}",
    ],
}


def dry_run(pattern: str, capsys: pytest.CaptureFixture[str]) -> str:
    """What ``gputui run --pattern P --dry-run -- CMD`` prints."""
    assert cli_main([*ARGV, "--pattern", pattern, "--dry-run", "--", *CMD]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("pattern", PATTERNS)
def test_script_lines(pattern: str, capsys: pytest.CaptureFixture[str]) -> None:
    for text in (dry_run(pattern, capsys), (DATA / f"golden-{pattern}.sh").read_text()):
        lines = text.splitlines()
        for line in COMMON + LINES[pattern]:
            assert lines.count(line) == 1, line
        assert [ln for ln in lines if ln.startswith("#SBATCH --ntasks-per-node=")] == [LINES[pattern][0]]
        # set-up, then rendezvous, then the launch, in that order; the launch is the script's end
        order = [lines.index(x) for x in ("set -eo pipefail", SETUP, ADDR, LINES[pattern][2])]
        assert order == sorted(order)
        assert lines[-1] == LINES[pattern][-1]
        subprocess.run(["bash", "-n"], input=text, text=True, check=True)  # valid shell


STUBS = {
    # records its arguments (NUL-separated) and the rendezvous variables it was started with
    "srun": '#!/bin/bash\nprintf \'%s\\0\' "$@" > "$OUT/srun.args"\n'
    'printf \'%s\\n\' "MASTER_ADDR=$MASTER_ADDR" "MASTER_PORT=$MASTER_PORT" "WORLD_SIZE=$WORLD_SIZE" '
    '"PYTHONUNBUFFERED=$PYTHONUNBUFFERED" "FROM_SETUP=$FROM_SETUP" > "$OUT/srun.env"\n',
    "scontrol": '#!/bin/bash\n[ "$1 $2" = "show hostnames" ] && printf \'node7\\nnode8\\n\'\n',
}


@pytest.mark.parametrize(
    ("pattern", "world", "launch"),
    [
        ("per-gpu", "8", CMD),
        ("per-node", "2", CMD),
        (
            "torchrun",
            "8",
            [
                "torchrun",
                "--nnodes=2",
                "--nproc_per_node=4",
                "--rdzv_id=12345",
                "--rdzv_backend=c10d",
                "--rdzv_endpoint=node7:22345",
                "--no_python",
                *CMD,
            ],
        ),
    ],
)
def test_script_runs_the_command_with_the_rendezvous(
    pattern: str, world: str, launch: list[str], tmp_path: Path
) -> None:
    """bash runs the script: srun gets the user's argv byte for byte, MASTER_PORT 22345 for job 12345."""
    bash = shutil.which("bash")
    assert bash is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in STUBS.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    setup = tmp_path / "env setup.sh"
    setup.write_text("export FROM_SETUP=yes\n")
    spec = LaunchSpec(cmd=CMD, nodes=2, gpus_per_node=4, pattern=pattern, env_setup=str(setup))
    script = tmp_path / "job.sh"
    script.write_text(render(spec))
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "OUT": str(tmp_path),
        "SLURM_JOB_ID": "12345",
        "SLURM_JOB_NODELIST": "node[7-8]",
        "SLURM_NNODES": "2",
        "SLURM_NTASKS": "8" if pattern == "per-gpu" else "2",
    }
    subprocess.run([bash, str(script)], env=env, check=True, timeout=30)
    assert (tmp_path / "srun.args").read_bytes().split(b"\0")[:-1] == [w.encode() for w in launch]
    assert (tmp_path / "srun.env").read_text().splitlines() == [
        "MASTER_ADDR=node7",
        "MASTER_PORT=22345",
        f"WORLD_SIZE={world}",
        "PYTHONUNBUFFERED=1",
        "FROM_SETUP=yes",
    ]
