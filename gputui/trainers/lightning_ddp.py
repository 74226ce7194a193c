"""Reference PyTorch Lightning DDP trainer: the torch trainer's models and datasets in a
``LightningModule``, ``Trainer(strategy="ddp")`` reading the Slurm environment itself, and gputui's
``LightningReporter`` callback emitting records. See ``docs/trainers.md``.

Under Slurm, Lightning needs one task per device: ``#SBATCH --ntasks-per-node`` equal to the GPUs per node
(``gputui run --pattern lightning`` writes that script), and ``srun`` starting the tasks; ``--devices``
and ``--num-nodes`` default to Slurm's tasks per node and node count. Its loggers write under one run
directory, ``--run-dir``/``version_<job id>``: ``metrics.csv`` (CSVLogger) beside the TensorBoard event
file (TensorBoardLogger); gputui's ``replay`` and ``attach`` read both.

    srun python -m gputui.trainers.lightning_ddp --model resnet18 --epochs 5
"""

from __future__ import annotations

import os
import sys

from gputui import distenv
from gputui.argtypes import positive_int
from gputui.trainers import data as datasets
from gputui.trainers.common import (
    TrainerError,
    batching,
    build_parser,
    leave_after_distributed,
    reporter_for,
    run,
)

PROG = "gputui.trainers.lightning_ddp"


def parser():
    p = build_parser(PROG, ("cnn", "resnet18", "resnet50"), 0.05, "PyTorch Lightning DDP reference trainer")
    p.add_argument("--accelerator", choices=("auto", "cpu", "gpu"), default="auto")
    p.add_argument(
        "--devices", type=positive_int, help="processes (GPUs) per node (default: Slurm's tasks per node, 1)"
    )
    p.add_argument("--num-nodes", type=positive_int, help="nodes (default: Slurm's node count, 1)")
    p.add_argument(
        "--run-dir",
        default="lightning_logs",
        metavar="DIR",
        help="CSVLogger and TensorBoardLogger write into DIR/version_<job id> (default lightning_logs)",
    )
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes per rank")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm bars in the output")
    return p


def lightning():
    """``lightning.pytorch`` (the unified package) or ``pytorch_lightning``, whichever is installed."""
    try:
        import lightning.pytorch as pl
    except ImportError:
        try:
            import pytorch_lightning as pl
        except ImportError:
            raise TrainerError("needs PyTorch Lightning: pip install 'gputui[lightning]'") from None
    return pl


def module_class(pl):
    """The ``LightningModule`` (built here: Lightning is imported only when training)."""
    import torch
    import torch.nn.functional as F

    from gputui.trainers.models_torch import build

    class Classifier(pl.LightningModule):
        def __init__(self, model: str, channels: int, classes: int, lr: float) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.net = build(model, channels, classes)

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, batch_idx):
            x, y = batch
            out = self.net(x)
            loss = F.cross_entropy(out, y)
            accuracy = (out.argmax(1) == y).float().mean()
            self.log("train_loss", loss, on_step=True, on_epoch=True, prog_bar=True, sync_dist=True)
            self.log("train_acc", accuracy, on_step=False, on_epoch=True, sync_dist=True)
            return loss

        def validation_step(self, batch, batch_idx):
            x, y = batch
            out = self.net(x)
            self.log("val_loss", F.cross_entropy(out, y), prog_bar=True, sync_dist=True)
            self.log("val_acc", (out.argmax(1) == y).float().mean(), prog_bar=True, sync_dist=True)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)

    return Classifier


def layout(args, env: distenv.DistEnv) -> tuple[int, int]:
    """(devices per node, nodes): the flags, else what Slurm (or the local launcher) says."""
    nodes = args.num_nodes or _int_env("SLURM_NNODES") or 1
    devices = args.devices or _int_env("SLURM_NTASKS_PER_NODE") or max(1, env.world_size // nodes)
    if devices * nodes != env.world_size and env.world_size > 1:
        raise TrainerError(
            f"{env.world_size} processes were started but --devices {devices} × --num-nodes {nodes} = "
            f"{devices * nodes}: Lightning needs one task per device (#SBATCH --ntasks-per-node={devices})"
        )
    return devices, nodes


def _int_env(name: str) -> int | None:
    value = os.environ.get(name, "").split("(")[0]  # Slurm writes "2(x3)" for 2 tasks on each of 3 nodes
    return int(value) if value.isdigit() else None


def run_version(run_dir: str, env: distenv.DistEnv) -> str:
    """``version_<job id>`` (every rank agrees without talking: Slurm's job id, the local launcher's or
    torchrun's run id), else the next free ``version_<N>`` of a single process; both loggers use it."""
    run_id = env.job_id or os.environ.get("GPUTUI_LOCAL_RUN") or os.environ.get("TORCHELASTIC_RUN_ID")
    if run_id:
        return f"version_{run_id}"
    taken = os.listdir(run_dir) if os.path.isdir(run_dir) else []
    numbers = [int(n[8:]) for n in taken if n.startswith("version_") and n[8:].isdigit()]
    return f"version_{max(numbers, default=-1) + 1}"


def train(args) -> int:
    env = distenv.from_environ()
    pl = lightning()
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from gputui.reporter_callbacks import LightningReporter

    devices, nodes = layout(args, env)
    world = devices * nodes
    data = datasets.load(args.dataset, args.data, image_size=args.image_size, samples=args.synthetic_samples)
    plan = batching(args.batch_size, world, args.scaling, args.lr, args.scale_lr)
    if "OMP_NUM_THREADS" not in os.environ and os.environ.get("SLURM_CPUS_PER_TASK", "").isdigit():
        torch.set_num_threads(int(os.environ["SLURM_CPUS_PER_TASK"]))
    pl.seed_everything(args.seed, verbose=False)

    def loader(x, y, shuffle: bool) -> DataLoader:
        dataset = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
        return DataLoader(dataset, batch_size=plan.per_rank, shuffle=shuffle, num_workers=args.workers)

    version = run_version(args.run_dir, env)
    loggers = [
        pl.loggers.CSVLogger(args.run_dir, name="", version=version),
        pl.loggers.TensorBoardLogger(args.run_dir, name="", version=version, default_hp_metric=False),
    ]
    reporting = [] if args.no_report else [LightningReporter(batch_size=plan.per_rank)]
    trainer = pl.Trainer(
        accelerator=args.accelerator,
        devices=devices,
        num_nodes=nodes,
        strategy="ddp" if world > 1 else "auto",
        max_epochs=args.epochs,
        limit_train_batches=args.max_steps or 1.0,
        logger=loggers,
        # tqdm bars, as Lightning users know them from Slurm output (Lightning >= 2.6 picks rich bars
        # when rich is installed; gputui reads both)
        callbacks=[*reporting, pl.callbacks.TQDMProgressBar()],
        enable_progress_bar=not args.no_progress_bar,
        enable_checkpointing=bool(args.checkpoint),
        enable_model_summary=False,
        log_every_n_steps=max(1, args.log_every or 10),
        default_root_dir=args.run_dir,
    )
    for callback in reporting:  # the rank is known now: --metrics-file, the job id, human lines on rank 0
        callback.reporter = reporter_for(args, env, trainer.global_rank)
    if trainer.global_rank == 0:
        print(
            f"{PROG}: {world} process(es) on {nodes} node(s) [{type(trainer.strategy).__name__}, "
            f"{type(trainer.accelerator).__name__}], model {args.model}, dataset {data.name} "
            f"{len(data.x_train)} train / {len(data.x_val)} val, batch {plan.per_rank}/rank "
            f"({plan.global_} global, {args.scaling} scaling), lr {plan.lr:g}, logs in {loggers[0].log_dir}",
            flush=True,
        )
    model = module_class(pl)(args.model, data.shape[0], data.num_classes, plan.lr)
    trainer.fit(
        model,
        loader(data.x_train, data.y_train, True),
        loader(data.x_val, data.y_val, False),
    )
    if args.checkpoint:
        trainer.save_checkpoint(args.checkpoint)  # every rank calls it; rank 0 writes
    if world > 1:
        if torch.distributed.is_initialized():  # Lightning leaves its process group up after fit
            torch.distributed.destroy_process_group()
        del trainer, model
        leave_after_distributed(0)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return run(PROG, lambda: train(args))


if __name__ == "__main__":
    sys.exit(main())
