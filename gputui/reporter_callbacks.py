"""Keras and Lightning callbacks that report through :class:`gputui.reporter.Reporter`.

Importing this module imports neither Keras nor Lightning: each class is built the first time it is
looked up (module ``__getattr__``), so ``from gputui.reporter_callbacks import KerasReporter`` is the
moment Keras is imported.

Keras::

    model.fit(ds, epochs=5, callbacks=[KerasReporter(batch_size=256)])   # global batch size

Lightning::

    trainer = L.Trainer(callbacks=[LightningReporter()])   # each rank reports with its global rank
"""

from __future__ import annotations

import time
from typing import Any

from gputui.reporter import Reporter

__all__ = ["KerasReporter", "LightningReporter"]  # noqa: F822 (built on first use by __getattr__)

_BUILT: dict[str, type] = {}


def _number(value: Any) -> float | None:
    try:
        if hasattr(value, "item"):
            value = value.item()
        return float(value)
    except (TypeError, ValueError):
        return None


def _build_keras() -> type:
    import keras

    class KerasReporter(keras.callbacks.Callback):
        """Report Keras ``logs`` at each epoch end, plus epoch time, images/s and step time.

        ``batch_size`` is the global batch (what ``fit`` sees); images/s is then the global rate
        of this process's replicas.
        """

        def __init__(
            self,
            reporter: Reporter | None = None,
            batch_size: int | None = None,
            world_size: int | None = None,
        ) -> None:
            super().__init__()
            self.reporter = reporter if reporter is not None else Reporter()
            self.batch_size = batch_size
            self.world_size = world_size
            self._start = 0.0
            self._steps = 0
            self._global_step = 0

        def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
            self._start, self._steps = time.perf_counter(), 0

        def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
            self._steps += 1
            self._global_step += 1

        def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
            elapsed = time.perf_counter() - self._start
            metrics = {k: _number(v) for k, v in (logs or {}).items() if k not in ("learning_rate",)}
            images = self._steps * self.batch_size if self.batch_size else None
            self.reporter.epoch_end(
                epoch + 1,
                metrics,
                epoch_time_s=elapsed,
                images=images,
                steps=self._steps or None,
                step=self._global_step,
                world_size=self.world_size,
            )

    return KerasReporter


def _build_lightning() -> type:
    try:
        from lightning.pytorch import Callback
    except ImportError:
        from pytorch_lightning import Callback

    class LightningReporter(Callback):
        """Report ``trainer.callback_metrics`` at each training epoch end from every rank, with the
        epoch time, this rank's images (``batch_size`` = batch per rank) and, on rank 0, the global
        images/s; its ``*_step`` values every ``log_every_n_steps`` steps (step records, epoch as a
        fraction); rank 0 also says when training starts (epochs, world size, steps per epoch) and when
        it has finished (the evidence of a completed run)."""

        def __init__(self, reporter: Reporter | None = None, batch_size: int | None = None) -> None:
            super().__init__()
            self.reporter = reporter
            self.batch_size = batch_size
            self._start = 0.0
            self._steps = 0

        def _reporter(self, trainer: Any) -> Reporter:
            if self.reporter is None:
                self.reporter = Reporter(rank=trainer.global_rank, human=trainer.global_rank == 0)
            return self.reporter

        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            reporter = self._reporter(trainer)
            if trainer.global_rank == 0:
                steps = trainer.num_training_batches
                reporter.start(
                    epochs=trainer.max_epochs,
                    world_size=trainer.world_size,
                    steps_per_epoch=steps if isinstance(steps, int) else None,
                    global_batch=self.batch_size * trainer.world_size if self.batch_size else None,
                )

        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            self._reporter(trainer)
            self._start, self._steps = time.perf_counter(), 0

        def on_train_batch_end(
            self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, idx: int
        ) -> None:
            self._steps += 1
            step, every = (
                int(trainer.global_step),
                max(1, int(getattr(trainer, "log_every_n_steps", 50) or 1)),
            )
            if step % every == 0:  # Lightning's own logging cadence: its *_step values, as step records
                values = {
                    k: _number(v) for k, v in dict(trainer.callback_metrics).items() if k.endswith("_step")
                }
                values = {k: v for k, v in values.items() if v is not None}
                total = getattr(trainer, "num_training_batches", None)
                fraction = (idx + 1) / total if isinstance(total, int) and total > 0 else 0.0
                if values:
                    self._reporter(trainer).metrics(values, step=step, epoch=trainer.current_epoch + fraction)

        def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            elapsed = time.perf_counter() - self._start
            metrics = {k: _number(v) for k, v in dict(trainer.callback_metrics).items()}
            images = self._steps * self.batch_size if self.batch_size else None
            world = getattr(trainer, "world_size", None)
            if images and world and trainer.global_rank == 0 and elapsed > 0:
                metrics["global_images_per_s"] = images * world / elapsed  # DistributedSampler: equal shares
            self._reporter(trainer).epoch_end(
                trainer.current_epoch + 1,
                metrics,
                epoch_time_s=elapsed,
                images=images,
                steps=self._steps or None,
                step=int(trainer.global_step),
                world_size=world,
            )

        def on_train_end(self, trainer: Any, pl_module: Any) -> None:
            if trainer.global_rank == 0 and not getattr(trainer, "interrupted", False):
                self._reporter(trainer).finish(epochs=trainer.current_epoch)

    return LightningReporter


_BUILDERS = {"KerasReporter": _build_keras, "LightningReporter": _build_lightning}


def __getattr__(name: str) -> type:
    builder = _BUILDERS.get(name)
    if builder is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _BUILT:
        _BUILT[name] = builder()
    return _BUILT[name]
