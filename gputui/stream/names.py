"""Standard metric names and the alias table that maps what logs print onto them.

Names are limited to MLflow's character set ``[A-Za-z0-9_./ -]`` (also safe for W&B, TensorBoard and
Aim). Canonical names are lower case with ``_`` between words; training metrics have no prefix,
validation metrics start with ``val_``, test metrics with ``test_``. See ``docs/records.md``.
"""

from __future__ import annotations

import re

MAX_NAME_LENGTH = 250
_VALID = re.compile(r"[A-Za-z0-9_./ -]+")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_./ -]+")

#: Standard names and their meaning (units in the name).
STANDARD_METRICS: dict[str, str] = {
    "loss": "training loss",
    "accuracy": "training accuracy (fraction 0..1 or percent, as printed)",
    "val_loss": "validation loss",
    "val_accuracy": "validation accuracy",
    "test_loss": "test loss",
    "test_accuracy": "test accuracy",
    "learning_rate": "optimiser learning rate",
    "grad_norm": "gradient norm",
    "epoch_time_s": "wall time of one epoch, seconds",
    "step_time_s": "wall time of one optimiser step, seconds",
    "images_per_s": "throughput in images (samples) per second for one rank",
    "global_images_per_s": "throughput summed over all ranks",
    "samples_per_s": "throughput in samples per second (non-image data)",
    "tokens_per_s": "throughput in tokens per second",
    "steps_per_s": "optimiser steps per second (HF Trainer *_steps_per_second)",
    "runtime_s": "wall time of a whole training or evaluation, seconds (HF Trainer *_runtime)",
}

#: Per-step times as the parsers name them, and the factor to seconds.
STEP_TIMES = {
    "step_time_s": 1.0,
    "dt_s": 1.0,
    "time_s": 1.0,
    "iter_time_s": 1.0,
    "iteration_time_s": 1.0,
    "batch_time_s": 1.0,
    "batch_t": 1.0,  # OpenCLIP's "Batch (t): 4.571": seconds per batch
    "time_per_step_s": 1.0,
    "step_time_ms": 1e-3,
    "elapsed_time_per_iteration_ms": 1e-3,  # Megatron: "elapsed time per iteration (ms): 850.2"
    "elapsed_time_per_iteration_s": 1.0,  # the same, read by the extractor's naming rule (ms → s)
    "iter_time": 1.0,
    "time_ms": 1e-3,
    "dt_ms": 1e-3,
}
TOKENS = frozenset({"tokens_per_s", "tok/sec", "tok/s", "tokens_per_sec", "tokens_per_second", "tps"})
SAMPLES = frozenset(
    {"samples_per_s", "samples/sec", "samples_per_sec", "images_per_s", "global_images_per_s"}
)

#: Word-level aliases, applied after the split prefix (train/val/test) is removed.
ALIASES: dict[str, str] = {
    "acc": "accuracy",
    "top1": "accuracy",
    "acc1": "accuracy",
    "lr": "learning_rate",
    "learning rate": "learning_rate",
    "gradient_norm": "grad_norm",
    "epoch_time": "epoch_time_s",
    "epoch_time_sec": "epoch_time_s",
    "epoch_seconds": "epoch_time_s",
    "step_time": "step_time_s",
    "batch_time": "step_time_s",
    "images/s": "images_per_s",
    "img/s": "images_per_s",
    "images_per_sec": "images_per_s",
    "images_per_second": "images_per_s",
    "samples_per_second": "samples_per_s",
    "samples/s": "samples_per_s",
    "tokens_per_second": "tokens_per_s",
    "tokens/s": "tokens_per_s",
    "tokens/sec": "tokens_per_s",
    "tok/s": "tokens_per_s",
    "tok/sec": "tokens_per_s",
    "tok_s": "tokens_per_s",
    "tok_sec": "tokens_per_s",
    "tok_per_s": "tokens_per_s",
    "tokens_per_sec": "tokens_per_s",
    "samples/sec": "samples_per_s",
    "samples_sec": "samples_per_s",
    "samples_per_sec": "samples_per_s",
    "steps_per_second": "steps_per_s",
    "runtime": "runtime_s",
}

#: Split prefixes: what logs print → the canonical prefix ("" for training).
_SPLIT_PREFIXES: tuple[tuple[str, str], ...] = (
    ("training_", ""),
    ("train_", ""),
    ("train/", ""),
    ("validation_", "val_"),
    ("valid_", "val_"),
    ("val_", "val_"),
    ("val/", "val_"),
    ("eval_", "val_"),
    ("eval/", "val_"),
    ("dev_", "val_"),
    ("test_", "test_"),
    ("test/", "test_"),
)


SPLIT_HYPHEN = re.compile(r"(?:train|training|validation|valid|val|eval|test|dev)-[a-z]")


def is_valid_metric_name(name: str) -> bool:
    """True if ``name`` is non-empty, at most 250 characters and uses only MLflow's characters."""
    return 0 < len(name) <= MAX_NAME_LENGTH and _VALID.fullmatch(name) is not None


def canonical_metric_name(raw: str) -> str:
    """Map a printed metric name onto the standard vocabulary (idempotent).

    ``acc`` → ``accuracy``, ``val_acc`` → ``val_accuracy``, ``train/loss`` → ``loss``,
    ``eval_loss`` → ``val_loss``, ``lr`` → ``learning_rate``. Unknown names are kept, lower-cased, with
    spaces turned into ``_`` and characters outside the allowed set replaced by ``_``.
    """
    name = _canonical_once(raw)
    for _ in range(8):
        again = _canonical_once(name)
        if again == name:
            break
        name = again
    return name


def _canonical_once(raw: str) -> str:
    name = raw.strip().lower()
    if name in ALIASES:
        return ALIASES[name]
    name = re.sub(r"\s+", "_", name)
    if SPLIT_HYPHEN.match(name):  # "Train-accuracy", "Validation-accuracy" (MXNet)
        name = name.replace("-", "_", 1)
    prefix = ""
    for printed, canonical in _SPLIT_PREFIXES:
        if name.startswith(printed) and len(name) > len(printed):
            prefix, name = canonical, name[len(printed) :]
            break
    name = ALIASES.get(name, name)
    result = _INVALID_CHARS.sub("_", prefix + name).strip("_ ") or "unnamed"
    return result[:MAX_NAME_LENGTH].rstrip("_ ") or "unnamed"
