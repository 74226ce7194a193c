"""What every log-format parser shares: the per-stream context, number and name helpers, records.

A line parser is a module-level object with ``name``, ``PRETEST`` (its cheap pre-test) and
``parse(text, ctx, now) -> list[Record] | None``:
``None`` means "not my format, try the next parser"; a list (possibly empty) means the frame was
recognised. Parsers are tried in order for every finished frame (see :mod:`gputui.logs.parser`).

Every metric record carries ``source`` (the format) and ``scope``:

- ``step``: an in-progress or per-step value (progress-bar frames, per-batch lines);
- ``epoch``: an end-of-epoch value stated by the line itself (epoch summary line, final frame of an
  epoch's progress bar);
- ``context``: a value printed without an epoch of its own (``Validation accuracy: 0.27``), attributed
  to the epoch of the most recent line that named one; it only joins an epoch that has ``epoch`` values;
- ``summary``: a run-level value that is not an epoch metric (HF ``train_runtime``, Keras evaluate).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from gputui.logs.bounded import remember
from gputui.stream.names import canonical_metric_name, is_valid_metric_name
from gputui.stream.records import SCHEMA_VERSION, Record

NUM = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b(?!\s*[=:]))"  # not "nan=False"
NUM_RE = re.compile(NUM, re.IGNORECASE)
SCOPES = ("step", "epoch", "context", "summary")

#: Printed names that are identifiers or settings, never training metrics.
NOT_METRICS = frozenset(
    {
        "v_num",
        "rank",
        "local_rank",
        "global_rank",
        "world_size",
        "node_rank",
        "pid",
        "seed",
        "gpu",
        "gpus",
        "device",
        "port",
        "job",
        "job_id",
        "jobid",
        "epoch",
        "epochs",
        "step",
        "steps",
        "iter",
        "iteration",
        "batch",
        "batch_size",
        "it",
        "global_step",
        "micro_step",
        "local_step",
        "id",
        "version",
        # hardware and tensor descriptions printed by TensorFlow and others: constants, not measurements
        "incarnation",
        "memory_limit",
        "compute_capability",
        "pci_bus_id",
        "bus_id",
        "dim",
        "batch_dim_axis",
        "time_dim_axis",
        "feature_dim_axis",
        "ndim",
        "num_gpus",
        "num_workers",
        "cpu",
        "cpus",
        "process",
        "processes",
        "cuda",
        "driver",
        "exit_status",
        "return_code",
        "returncode",
        "exit_code",
        "device_count",
        "thread",
    }
)


EPOCH_IN_NAME = re.compile(r"^(?:epoch|step|iter)_?\d+(?:_pct)?$")
#: Name endings of settings (counts and sizes a run is configured with), never metrics.
SETTING_SUFFIXES = (
    "_steps",
    "_epochs",
    "_workers",
    "_interval",
    "_every",
    "_dim",
    "_layers",
    "_heads",
    "_updates",
    "_iters",
    "_idx",  # "batch_idx: 0": an index, not a measurement
    "_id",
    "_py",  # "materialize.py:135": a source file's line, not a value
)


@dataclass(slots=True)
class Context:
    """Parsing state of one output stream (one rank, or the unlabelled stream)."""

    rank: int | None = None
    epoch: int | None = None  # the most recent epoch a line named
    step: int | None = None  # the most recent step a line named (the extractor's lines)
    trained: bool = False  # a metric was read on this stream (a training run prints them)
    #: values read under an announced epoch before any training output: given with the stream's next
    #: records (or when a later epoch is announced), dropped when the epoch is announced again or the log ends
    held: list[Any] = field(default_factory=list)
    series_lines: int = 0  # lines the series stage looked at (catch-up: such a line is never inert)
    epoch_base: int | None = None
    keras_epoch: int | None = None  # a Keras ``Epoch N/M`` header waiting for its final frame
    keras_epochs: int | None = None
    header_epoch: int | None = None  # ``Results - Epoch: N`` waiting for its body line
    header_frame: int = -1  # frame number of that header
    frames: int = 0  # frames seen on this stream
    last_progress: tuple[int, int] | None = None  # (n, total) of the latest progress frame
    main_bar: tuple[int, int] | None = None  # (n, total) of the latest frame of the longest bar (HF steps)
    batch_size: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    stated_epoch: bool = False  # an ``epoch``-scope record was made (read and reset by the parser)
    bar_clock: Any = None  # (bar, printed time) of the latest running bar frame that gave step records
    bar_desc: Any = None  # (description, epoch, lightning, bar) of the latest tqdm bar frame
    plans: dict[bytes, Any] = field(default_factory=dict)  # line shape → structure (generic parser)
    shapes: dict[bytes, Any] = field(default_factory=dict)  # line shape → reading (extractor)
    table: Any = None  # the column labels of the latest header row (extractor)
    series: dict[bytes, Any] = field(default_factory=dict)  # shape, digits left out → series state


class LineParser(Protocol):
    """A format's parser. ``PRETEST`` is its cheap pre-test for auto routing: a Python condition on
    ``text``, ``head`` (``text[:24]``) and ``ctx``, made of constants (``'"%" in text and "[" in text'``),
    False only where ``parse`` would return None; auto mode skips the parse then."""

    name: str
    PRETEST: str
    #: (optional) ``True`` where the family reads some values of its lines and the extractor is to read
    #: the rest (:func:`gputui.logs.formats.extract.complete`); absent: the family reads its lines whole.
    PARTIAL: bool

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None: ...


def to_float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value


@lru_cache(maxsize=4096)
def snake(label: str) -> str:
    """A printed label as a metric name: ``GPU Mem (GB)`` → ``gpu_mem_gb``, ``Tokens/s`` kept."""
    name = re.sub(r"[^\w/.@-]+", "_", label.strip().lower()).strip("_.-")  # "mAP50-95" keeps its "-"
    return name


_NAMES: dict[str, str] = {}  # printed name → canonical name (valid names only), bounded


def _canonical(name: str) -> str | None:
    canonical = canonical_metric_name(name)
    if not is_valid_metric_name(canonical):
        return None
    return remember(_NAMES, name, canonical, 4096)


def _environment_name(word: str) -> bool:
    """``MASTER_PORT``, ``SLURM_PROCID``: an environment variable's name (``D_A``, a GAN's
    discriminator loss, is none: its parts are single letters)."""
    return word.isupper() and "_" in word and any(len(part) > 1 for part in word.split("_"))


def is_metric_name(printed: str) -> bool:
    """False for identifiers and settings (``v_num``, ``rank``, ``SLURM_JOB_ID``, ``device id``)."""
    name = snake(printed)
    return (
        bool(name)
        and name not in NOT_METRICS
        and snake(printed.rsplit(None, 1)[-1]) not in NOT_METRICS  # "INFO world_size: 4"
        and not name.endswith(("_id", "batch_size"))  # "Training with batch size: 128" is a setting
        and not name.endswith(SETTING_SUFFIXES)  # "warmup_steps: 2000", "num_workers: 8": settings
        and not any(_environment_name(word) for word in printed.split())  # "MASTER_PORT"
        and EPOCH_IN_NAME.search(name) is None  # "Epoch 0: 0%": an anchor, not a name
    )


def metric(
    name: str,
    value: float,
    *,
    source: str,
    scope: str,
    ctx: Context,
    now: float,
    epoch: float | None = None,
    step: int | None = None,
    time: float | None = None,
    **extra: Any,
) -> Record | None:
    """A metric record (same fields as :func:`gputui.stream.records.metric`), built without re-validation.

    Names go through the alias table; a name that cannot be made valid gives ``None``.
    """
    out: list[Record] = []
    emit(out, ((name, value),), source, scope, ctx, now, epoch, step, time, extra)
    return out[0] if out else None


def emit(
    out: list[Record],
    pairs: Iterable[tuple[str, float]],
    source: str,
    scope: str,
    ctx: Context,
    now: float,
    epoch: float | None = None,
    step: int | None = None,
    time: float | None = None,
    extra: dict[str, Any] | None = None,
) -> None:
    """Append one metric record per ``(name, value)`` pair to ``out`` (the hot path of every parser).

    The fields shared by the pairs are laid out once and copied per record, in the order of
    :func:`gputui.stream.records.metric`; ``ctx.stated_epoch`` is set when an ``epoch``-scope record is made.
    """
    shared: dict[str, Any] = {"name": None, "value": None}
    if step is not None:
        shared["step"] = step
    if epoch is not None:
        shared["epoch"] = epoch
        if ctx.epoch_base is not None and isinstance(epoch, int):
            shared["epoch_base"] = ctx.epoch_base
    if ctx.rank is not None:
        shared["rank"] = ctx.rank
    shared["source"] = source
    shared["time_source"] = "read" if time is None else "printed"
    shared["scope"] = scope
    if extra:
        for key, val in extra.items():
            if val is not None:
                shared[key] = val
    when = now if time is None else time
    made = len(out)
    for name, value in pairs:
        canonical = _NAMES.get(name)
        if canonical is None:
            canonical = _canonical(name)
            if canonical is None:
                continue
        fields = shared.copy()
        fields["name"] = canonical
        fields["value"] = float(value)
        out.append(Record("metric", when, fields, SCHEMA_VERSION))
    if scope == "epoch" and len(out) > made:
        ctx.stated_epoch = True


def clock_seconds(text: str) -> float | None:
    """``MM:SS`` or ``H:MM:SS`` (tqdm, Keras) → seconds."""
    parts = text.strip().split(":")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        return None
    total = 0
    for part in parts:
        total = total * 60 + int(part)
    return float(total)
