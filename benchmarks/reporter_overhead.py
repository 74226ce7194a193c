"""Overhead of gputui's reporter on a training loop: images/s with and without it (goal < 1 %).

A plain torch loop (the trainers' small CNN, synthetic 1×28×28 images, batch 64, 1 thread) is timed in
alternating rounds without and with the reporter (a loss record every 10 steps and ``epoch_end`` per
epoch, written to a real file as a job's stdout would be). Also prints the cost of one
``Reporter.metric`` call.

    python benchmarks/reporter_overhead.py [--rounds 5] [--steps 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F

from gputui.reporter import Reporter
from gputui.trainers.models_torch import build


def run_loop(steps: int, batch: int, reporter: Reporter | None) -> float:
    torch.manual_seed(0)
    model = build("cnn", 1, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))
    start = time.perf_counter()
    for step in range(1, steps + 1):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if reporter is not None and step % 10 == 0:
            reporter.metric("loss", loss.item(), step=step, epoch=1)
    elapsed = time.perf_counter() - start
    if reporter is not None:
        reporter.epoch_end(1, {"loss": loss.item()}, epoch_time_s=elapsed, images=steps * batch, steps=steps)
    return steps * batch / elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp, open(os.path.join(tmp, "stdout.log"), "w") as out:
        reporter = Reporter(job="1", rank=0, stream=out)
        run_loop(20, args.batch, None)  # warm-up
        without, with_ = [], []
        for _ in range(args.rounds):
            without.append(run_loop(args.steps, args.batch, None))
            with_.append(run_loop(args.steps, args.batch, reporter))
        n = 2000
        start = time.perf_counter()
        for i in range(n):
            reporter.metric("loss", 0.5, step=i, epoch=1)
        per_call_us = (time.perf_counter() - start) / n * 1e6
    a, b = statistics.median(without), statistics.median(with_)
    print(f"rounds {args.rounds} × {args.steps} steps, batch {args.batch}, cnn 1×28×28, 1 thread")
    print(f"images/s without reporter (median): {a:,.0f}")
    print(f"images/s with reporter    (median): {b:,.0f}")
    print(f"overhead: {(a - b) / a * 100:+.2f} %  (negative = noise)")
    print(f"Reporter.metric() call: {per_call_us:.1f} µs (one record, one write + flush)")
    calls = args.steps // 10 + 1
    loop_s = args.steps * args.batch / a
    print(
        f"computed overhead: {calls} calls × {per_call_us:.1f} µs / {loop_s:.2f} s loop = "
        f"{calls * per_call_us * 1e-6 / loop_s * 100:.3f} %"
    )


if __name__ == "__main__":
    main()
