"""A tiny reporter for your own training scripts: gputui metric records on stdout and/or a JSONL file.

No third-party imports. Add three lines to any training loop::

    from gputui.reporter import Reporter

    rep = Reporter()                      # job and rank come from Slurm/torchrun variables
    for epoch in range(1, epochs + 1):
        ...
        rep.epoch_end(epoch, {"loss": loss, "accuracy": acc}, epoch_time_s=dt, images=n)

Each record goes to stdout as ``@gputui {json}`` on a line of its own (gputui's log follower picks
them out of the job's output), and optionally to ``file`` as JSON lines. ``epoch_end`` also prints one
human-readable line. Epochs are numbered from 1 (``epoch_base=1``) unless told otherwise.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import IO, Any

from gputui.stream.io import RecordWriter, format_prefixed
from gputui.stream.records import Record, metric

__all__ = ["Reporter"]

_HUMAN_ORDER = ("loss", "accuracy", "val_loss", "val_accuracy")


def _env_rank() -> int | None:
    for name in ("RANK", "SLURM_PROCID"):
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return None


class Reporter:
    """Emit gputui metric records.

    ``job``/``rank`` default to ``SLURM_JOB_ID`` and ``RANK``/``SLURM_PROCID``. ``file`` is a path for a
    JSONL copy; ``{rank}`` and ``{job}`` in it are replaced. ``stdout=False`` writes only the file.
    ``human`` prints a readable line per epoch (pass ``human=(rank == 0)`` to keep logs short).
    """

    def __init__(
        self,
        job: str | None = None,
        rank: int | None = None,
        file: str | os.PathLike[str] | None = None,
        stdout: bool = True,
        *,
        human: bool = True,
        epoch_base: int = 1,
        source: str = "gputui",
        stream: IO[str] | None = None,
    ) -> None:
        self.job = job if job is not None else (os.environ.get("SLURM_JOB_ID") or None)
        self.rank = rank if rank is not None else _env_rank()
        self.stdout = stdout
        self.human = human
        self.epoch_base = epoch_base
        self.source = source
        self._stream = stream
        self._writer: RecordWriter | None = None
        if file is not None:
            path = os.fspath(file).replace("{rank}", str(self.rank or 0)).replace("{job}", self.job or "")
            self._writer = RecordWriter(path)

    @property
    def stream(self) -> IO[str]:
        return self._stream if self._stream is not None else sys.stdout

    def _record(self, name: str, value: float, step: int | None, epoch: float | None, **extra: Any) -> Record:
        return metric(
            name,
            value,
            step=step,
            epoch=epoch,
            epoch_base=self.epoch_base if epoch is not None else None,
            rank=self.rank,
            job=self.job,
            source=self.source,
            **extra,
        )

    def emit(self, records: list[Record], human_line: str | None = None) -> None:
        """Write records (one stdout write, each record on its own line) and an optional human line."""
        if self._writer is not None:
            for record in records:
                self._writer.write(record)
        text = ""
        if self.stdout and records:
            # The leading newline puts the first record on its own line even after a progress bar.
            text = "\n" + "\n".join(format_prefixed(r) for r in records) + "\n"
        if human_line is not None:
            text += human_line + "\n"
        if text:
            stream = self.stream
            stream.write(text)
            stream.flush()

    def start(self, *, epochs: int | None = None, world_size: int | None = None, **detail: Any) -> None:
        """Emit a ``train_started`` event: the planned epochs and world size (the dashboard's progress
        and ETA, reports' GPU counts)."""
        from gputui.stream.records import event

        values = {
            k: v for k, v in {"epochs": epochs, "world_size": world_size, **detail}.items() if v is not None
        }
        record = event(
            "train_started",
            message=f"training started: {epochs or '?'} epochs",
            rank=self.rank,
            job=self.job,
            **values,
        )
        self.emit([record])

    def finish(self, *, epochs: int | None = None, **detail: Any) -> None:
        """Emit a ``train_finished`` event: training ran to its end (what log readers take as evidence
        that the run completed, rather than a log that merely stops)."""
        from gputui.stream.records import event

        values = {k: v for k, v in {"epochs": epochs, **detail}.items() if v is not None}
        record = event(
            "train_finished",
            message=f"training finished: {epochs or '?'} epochs",
            rank=self.rank,
            job=self.job,
            **values,
        )
        self.emit([record], "training finished" if self.human else None)

    def metric(
        self, name: str, value: float, step: int | None = None, epoch: float | None = None, **extra: Any
    ) -> None:
        """Emit one metric record (``name`` goes through gputui's alias table: ``acc`` → ``accuracy``)."""
        self.emit([self._record(name, value, step, epoch, **extra)])

    def metrics(
        self, values: Mapping[str, float], step: int | None = None, epoch: float | None = None
    ) -> None:
        """Emit several metric records at once (one write)."""
        self.emit([self._record(name, float(value), step, epoch) for name, value in values.items()])

    def epoch_end(
        self,
        epoch: float,
        metrics: Mapping[str, float | None] | None = None,
        epoch_time_s: float | None = None,
        images: int | None = None,
        *,
        step: int | None = None,
        steps: int | None = None,
        world_size: int | None = None,
    ) -> None:
        """Emit ``metrics`` for ``epoch`` plus ``epoch_time_s``, ``images_per_s`` and ``step_time_s``.

        ``images`` is the number of samples this process handled in the epoch; ``steps`` the number of
        optimiser steps (for ``step_time_s``); with ``world_size`` a ``global_images_per_s`` record
        (images × world_size / epoch time) is added when this is rank 0 (or rank is unknown).
        """
        values: dict[str, float] = {}
        for name, value in (metrics or {}).items():
            if value is None:
                continue
            try:
                values[name] = float(value)
            except (TypeError, ValueError):
                continue
        if epoch_time_s is not None and epoch_time_s > 0:
            values.setdefault("epoch_time_s", epoch_time_s)
            if images:
                values.setdefault("images_per_s", images / epoch_time_s)
                if world_size and (self.rank or 0) == 0:
                    values.setdefault("global_images_per_s", images * world_size / epoch_time_s)
            if steps:
                values.setdefault("step_time_s", epoch_time_s / steps)
        order = {name: i for i, name in enumerate(_HUMAN_ORDER)}
        names = sorted(values, key=lambda n: order.get(n, len(order)))
        # scope "epoch": these are end-of-epoch values even though they carry the step reached
        records = [self._record(name, values[name], step, epoch, scope="epoch") for name in names]
        line = self.format_epoch(epoch, records) if self.human else None
        self.emit(records, line)

    def format_epoch(self, epoch: float, records: list[Record]) -> str:
        """The human line: ``epoch 3 [rank 0]: loss 0.1234  accuracy 0.9512  epoch_time_s 1.52 ...``."""
        who = f" [rank {self.rank}]" if self.rank is not None else ""
        parts = []
        for r in records:
            value = r["value"]
            if value is None:
                parts.append(f"{r['name']} {r.get('nonfinite', 'nan')}")
            elif abs(value) >= 100:
                parts.append(f"{r['name']} {value:.0f}")
            else:
                parts.append(f"{r['name']} {value:.4g}")
        epoch_text = f"{epoch:g}" if isinstance(epoch, float) else str(epoch)
        return f"epoch {epoch_text}{who}: " + "  ".join(parts)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> Reporter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
