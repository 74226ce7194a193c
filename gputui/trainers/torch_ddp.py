"""Reference PyTorch DistributedDataParallel trainer that reports gputui metrics.

Launch one process per GPU (``srun`` with ``--ntasks-per-node`` = GPUs per node, or ``torchrun`` per
node); rank, world size and the rendezvous address come from :mod:`gputui.distenv`. CUDA when available
(NVIDIA and ROCm builds both say ``cuda``) with NCCL, else CPU with gloo. See ``docs/trainers.md``.

    srun python -m gputui.trainers.torch_ddp --model resnet50 --dataset synthetic --batch-size 256
"""

from __future__ import annotations

import os
import sys
import time
import zlib
from datetime import timedelta

from gputui import distenv
from gputui.trainers import data as datasets
from gputui.trainers.common import (
    TrainerError,
    batching,
    build_parser,
    fault_hook,
    leave_after_distributed,
    peer_lost,
    reporter_for,
    run,
)

PROG = "gputui.trainers.torch_ddp"
_PEER_WORDS = ("connection", "closed", "timed out", "timeout", "gloo", "nccl", "peer", "broken pipe", "reset")


def parser():
    p = build_parser(PROG, ("cnn", "resnet18", "resnet50"), 0.05, "PyTorch DDP reference trainer")
    p.add_argument(
        "--amp", action="store_true", help="mixed precision (fp16 + GradScaler on CUDA, bf16 on CPU)"
    )
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes per rank")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    p.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    return p


def _peer_failure(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(word in text for word in _PEER_WORDS)


def train(args) -> int:
    env = distenv.from_environ()
    rank, world = env.rank, env.world_size
    data = datasets.load(args.dataset, args.data, image_size=args.image_size, samples=args.synthetic_samples)
    plan = batching(args.batch_size, world, args.scaling, args.lr, args.scale_lr)

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    from gputui.trainers.models_torch import build

    if "OMP_NUM_THREADS" not in os.environ and os.environ.get("SLURM_CPUS_PER_TASK", "").isdigit():
        torch.set_num_threads(int(os.environ["SLURM_CPUS_PER_TASK"]))
    use_cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    if use_cuda and not torch.cuda.is_available():
        raise TrainerError("--device cuda but torch sees no GPU (CPU build, or no GPU in this allocation)")
    if use_cuda:
        device = torch.device("cuda", env.local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    backend = args.backend if args.backend != "auto" else ("nccl" if use_cuda else "gloo")
    if world > 1:
        os.environ.update(env.torch_environ())
        dist.init_process_group(backend, rank=rank, world_size=world, timeout=timedelta(seconds=args.timeout))
    reporter = reporter_for(args, env, rank)

    torch.manual_seed(args.seed)
    channels, classes = data.shape[0], data.num_classes
    model = build(args.model, channels, classes).to(device)
    if world > 1:
        model = DDP(model, device_ids=[device.index] if use_cuda else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=plan.lr, momentum=0.9)
    train_set = TensorDataset(torch.from_numpy(data.x_train), torch.from_numpy(data.y_train))
    sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(
        train_set,
        batch_size=plan.per_rank,
        sampler=sampler,
        num_workers=args.workers,
        pin_memory=use_cuda,
        persistent_workers=args.workers > 0,
    )
    resize = args.image_size if args.dataset not in ("digits", "synthetic") else None
    amp_dtype = torch.float16 if use_cuda else torch.bfloat16
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp and use_cuda)

    def prepare(x, y):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        if resize and x.shape[-1] != resize:
            x = F.interpolate(x, size=(resize, resize), mode="bilinear", align_corners=False)
        return x, y

    if rank == 0:
        print(
            f"{PROG}: {world} rank(s) [{env.source}] on {len(env.nodes)} node(s), device {device.type}, "
            f"backend {backend if world > 1 else 'none'}, model {args.model}, dataset {data.name} "
            f"{len(data.x_train)} train / {len(data.x_val)} val {data.shape}, batch {plan.per_rank}/rank "
            f"({plan.global_} global, {args.scaling} scaling), lr {plan.lr:g}",
            flush=True,
        )
    if rank == 0:
        reporter.start(
            epochs=args.epochs, world_size=world, steps_per_epoch=len(loader), global_batch=plan.global_
        )
    reporter.metrics(
        {"batch_size": plan.per_rank, "global_batch_size": plan.global_, "learning_rate": plan.lr}, step=0
    )

    step = 0
    try:
        for epoch in range(1, args.epochs + 1):
            model.train()
            sampler.set_epoch(epoch)
            sums = torch.zeros(3, dtype=torch.float64, device=device)  # loss×n, correct, n
            steps, images, start = 0, 0, time.perf_counter()
            for x, y in loader:
                x, y = prepare(x, y)
                fault_hook(args, rank, step + 1)
                with torch.autocast(device.type, dtype=amp_dtype, enabled=args.amp):
                    out = model(x)
                    loss = F.cross_entropy(out, y)
                optimizer.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                with torch.no_grad():
                    n = y.numel()
                    sums += torch.stack(
                        [loss.detach().double() * n, (out.argmax(1) == y).sum().double(), sums.new_tensor(n)]
                    )
                steps, images, step = steps + 1, images + len(y), step + 1
                if args.log_every and step % args.log_every == 0:
                    reporter.metric("loss", loss.item(), step=step, epoch=epoch - 1 + steps / len(loader))
                if args.max_steps and steps >= args.max_steps:
                    break
            if use_cuda:
                torch.cuda.synchronize(device)
            elapsed = time.perf_counter() - start
            slowest = torch.tensor([elapsed], dtype=torch.float64, device=device)
            if world > 1:
                dist.all_reduce(sums)
                dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            loss_sum, correct, count = sums.tolist()
            metrics = {"loss": loss_sum / count, "accuracy": correct / count}
            if rank == 0:
                metrics["global_images_per_s"] = count / slowest.item()
                metrics.update(evaluate(model, data, plan.per_rank, prepare, device, args.amp, amp_dtype))
                if args.checkpoint:
                    save_checkpoint(model, optimizer, epoch, args)
            reporter.epoch_end(epoch, metrics, epoch_time_s=elapsed, images=images, steps=steps, step=step)
            if world > 1:
                dist.barrier()
        params = [p.detach().cpu().double() for p in model.parameters()]
        checksum = float(sum(p.sum().item() for p in params))
        crc = 0
        for p in model.parameters():
            crc = zlib.crc32(p.detach().cpu().contiguous().numpy().tobytes(), crc)
        reporter.metrics({"param_checksum": checksum, "param_crc32": crc}, step=step)
        if world > 1:
            dist.barrier()
        if rank == 0:
            reporter.finish(epochs=args.epochs)
    except RuntimeError as exc:  # includes torch.distributed.DistBackendError
        if world == 1 or not _peer_failure(exc):
            raise
        # the process group cannot be torn down cleanly without the peer: peer_lost exits at once
        peer_lost(PROG, rank, step, args.timeout, exc)
    reporter.close()
    if world > 1:
        dist.destroy_process_group()
        del model, optimizer, loader, sampler  # their collection runs now, not at interpreter exit
        leave_after_distributed(0)
    return 0


def evaluate(model, data, batch_size, prepare, device, amp, amp_dtype) -> dict[str, float]:
    """Validation loss and accuracy on rank 0 (the plain module: no collective calls)."""
    import torch
    import torch.nn.functional as F

    net = getattr(model, "module", model)
    refresh_batch_norm(net, data, batch_size, prepare)
    net.eval()
    total, correct, n = 0.0, 0, 0
    with torch.no_grad():
        for i in range(0, len(data.x_val), max(batch_size, 256)):
            x, y = prepare(
                torch.from_numpy(data.x_val[i : i + max(batch_size, 256)]),
                torch.from_numpy(data.y_val[i : i + max(batch_size, 256)]),
            )
            with torch.autocast(device.type, dtype=amp_dtype, enabled=amp):
                out = net(x)
            total += F.cross_entropy(out.float(), y, reduction="sum").item()
            correct += (out.argmax(1) == y).sum().item()
            n += len(y)
    return {"val_loss": total / max(n, 1), "val_accuracy": correct / max(n, 1)}


def refresh_batch_norm(net, data, batch_size: int, prepare, batches: int = 16) -> None:
    """BatchNorm's running statistics recomputed on training batches with the current weights ("precise
    BN") before evaluating: after a few dozen steps at momentum 0.1 they still hold much of their initial
    (0, 1), and validation looked broken (val_loss 159 while training loss was 0.95). Only buffers change;
    training, which uses each batch's own statistics, is not affected."""
    import torch
    from torch import nn

    norms = [m for m in net.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    momenta = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over the batches below
    net.train()
    with torch.no_grad():
        for i in range(0, min(len(data.x_train), batches * batch_size), batch_size):
            x, _ = prepare(
                torch.from_numpy(data.x_train[i : i + batch_size]),
                torch.from_numpy(data.y_train[i : i + batch_size]),
            )
            net(x)
    for m, momentum in zip(norms, momenta, strict=True):
        m.momentum = momentum


def save_checkpoint(model, optimizer, epoch: int, args) -> None:
    import torch

    net = getattr(model, "module", model)
    tmp = f"{args.checkpoint}.tmp"
    state = {
        "model": net.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": epoch,
        "args": vars(args),
    }
    torch.save(state, tmp)
    os.replace(tmp, args.checkpoint)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return run(PROG, lambda: train(args))


if __name__ == "__main__":
    sys.exit(main())
