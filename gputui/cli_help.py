"""The text of ``gputui --help``: what gputui is, and examples of every command (kept out of
:mod:`gputui.cli`, whose grammar is long enough)."""

DESCRIPTION = """\
Watch, launch and attach to GPU training jobs on SLURM clusters.

With no command, opens the terminal UI on your jobs. With --log FILE, runs headless
(for compute nodes): GPU and host samples are appended to FILE as JSON lines."""

EPILOG = """\
examples:
  gputui                             the jobs screen: my jobs, free GPUs, launch, attach, cancel
  gputui jobs                        my jobs as text
  gputui hold 123456                 keep a pending job from starting (gputui release 123456: let it)
  gputui demo                        the dashboard on a real local DDP run (simulated GPUs)
  gputui attach 123456               the dashboard on job 123456: every node's GPUs, its output
  gputui attach 123456 --output run.jsonl     no UI: records appended to a file
  gputui replay run.jsonl slurm-123456.out    recorded runs in the dashboard, with a time cursor
  gputui run -N 2 --gpus-per-node 4 -- python train.py
  gputui run --local --ntasks-per-node 2 -- python train.py     no Slurm: local ranks
  gputui --log gpu-%j-%N.jsonl --interval 2  headless sampling on a compute node
  gputui probe --backend sim --count 3       simulated GPUs, to see the records
  gputui parse slurm-123456.out      per-epoch table of a training log
  gputui report 123456               GPUs, epoch time, images/s, final metrics of a job (docs/analysis.md)
  gputui scale --from 1001 1002 1004 speedup and efficiency across runs at 1, 2, 4 GPUs
  gputui scale --gpus 1,2,4 -- python train.py    submit at 1, 2, 4 GPUs, wait, compare
  gputui export 123456 --to mlflow mlruns     the job as an MLflow run (also: csv, tensorboard)
  gputui serve attach 123456         the dashboard in a browser through ssh -L, behind a token

records and their schema: docs/records.md
settings (TOML): {settings}  ($GPUTUI_CONFIG overrides the path)"""
