"""Step-based training logs with known values (no epochs): the formats language models are trained with.

Each writer returns the path it wrote. The values are functions of the step, so every number a test
asserts follows from the formulas here (see each docstring).
"""

from __future__ import annotations

from pathlib import Path


def nanogpt(path: Path, last: int = 12000, planned: int = 19073) -> Path:
    """``step N/19073 | loss X | lr … | dt: 312.50ms | tok/sec 512000.00 | mfu 38.20%`` for steps 0..last;
    loss = 11 − step/1500 (3.0 at step 12,000: −0.8 per 1,200 steps)."""
    lines = ["number of parameters: 124.44M", "using fused AdamW: True"]
    for step in range(last + 1):
        loss = 11 - step / 1500
        lines.append(
            f"step {step:5d}/{planned} | loss {loss:.6f} | lr 6.0000e-04 | norm 0.3120 | dt: 312.50ms"
            f" | tok/sec 512000.00 | mfu 38.20%"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def nanogpt_setting(path: Path) -> Path:
    """build-nanogpt style without a total on the counter; ``max_steps = 19073`` printed first. Steps
    0..5000, loss = 10 − step/1000, dt 250 ms, tok/sec 2.1M."""
    lines = ["max_steps = 19073", "total desired batch size: 524288"]
    for step in range(5001):
        lines.append(
            f"step {step} | loss: {10 - step / 1000:.6f} | lr 6.0000e-04 | norm: 0.3120 | dt: 250.00ms"
            f" | tok/sec: 2097152.00"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def hf_steps(path: Path) -> Path:
    """Dicts with a ``step`` and no ``epoch`` every 10 steps up to 1,000 after HF's banner
    ``Total optimization steps = 2,000``; loss = 2 − step/1000."""
    lines = ["***** Running training *****", "  Num examples = 64,000", "  Total optimization steps = 2,000"]
    for step in range(10, 1001, 10):
        lines.append(
            f"{{'loss': {2.0 - step / 1000:.4f}, 'grad_norm': 1.5, 'learning_rate': 5e-05, 'step': {step}}}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def megatron(path: Path, last: int = 300, planned: int = 500) -> Path:
    """Megatron-LM's ``iteration N/ 500 | … | elapsed time per iteration (ms): 850.2 | … | lm loss: X |``
    with a timestamp one second apart; lm loss = 9 − iteration/100 (6.0 at 300)."""
    lines = ["  train_iters ..................................... 500"]
    for it in range(1, last + 1):
        stamp = f"2024-01-01 10:{it // 60:02d}:{it % 60:02d}"
        lines.append(
            f" [{stamp}] iteration {it:8d}/{planned:8d} | consumed samples: {it * 256:12d} |"
            f" elapsed time per iteration (ms): 850.2 | learning rate: 1.500000E-04 | global batch size:"
            f"   256 | lm loss: {9 - it / 100:.6E} | loss scale: 1.0 | grad norm: 1.234 |"
            f" number of skipped iterations:   0 | number of nan iterations:   0 |"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build_nanogpt(path: Path, steps: int = 6000, every: int = 250) -> Path:
    """Karpathy's build-nanogpt: ``step N | loss: X | lr … | norm: … | dt: Tms | tok/sec: R`` for steps
    0..steps-1, a validation and a HellaSwag line every ``every`` steps; the step after one of them is an
    evaluation step (dt 20 s, the rest 450 ms + step mod 7 ms), tok/sec = 524,288 / dt. Its own figures:
    :func:`build_nanogpt_truth`."""
    lines = ["using device: cuda", "total desired batch size: 524288", "max_steps = 6000"]
    for step in range(steps):
        if step % every == 0:
            lines.append(f"validation loss: {10 - step / 1000:.4f}")
            lines.append(f"HellaSwag accuracy: {2400 + step // 10}/10042={(2400 + step // 10) / 10042:.4f}")
        dt = 20000.0 if step % every == 0 else 450.0 + step % 7
        lines.append(
            f"step {step:5d} | loss: {11 - step / 1000:.6f} | lr 6.0000e-04 | norm: 0.3120 | dt: {dt:.2f}ms"
            f" | tok/sec: {524288 / (dt / 1000):.2f}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build_nanogpt_truth(steps: int = 6000, every: int = 250) -> dict[str, float]:
    """What the log of :func:`build_nanogpt` says, from its own printed values: the mean step time (the
    first step left out), the elapsed time (every printed step time), tokens over seconds."""
    dts = [(20000.0 if s % every == 0 else 450.0 + s % 7) / 1000 for s in range(steps)]
    printed = [round(d * 1000, 2) / 1000 for d in dts]
    rates = [round(524288 / d, 2) for d in dts]
    return {
        "step_time_s": sum(printed[1:]) / (steps - 1),
        "elapsed_s": sum(printed),
        "tokens_per_s": sum(r * d for r, d in zip(rates, printed, strict=True)) / sum(printed),
    }
