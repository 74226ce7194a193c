"""A generator of training-log formats with known values (issue 22, part 2).

:func:`make_log` draws one *format* from a seed (a layout: ``name: value`` pairs, a header row and rows,
two lists, MetricLogger; separators; name styles; units; a log prefix with timestamps, levels, ranks or
ANSI colour; counters; progress-bar noise; non-metric lines: config dumps, prose, model printouts; one
or several runs) and writes a log in it, with the values each metric line holds.

The expected names are written here by hand from the naming rule of ``docs/log-formats.md`` (*The
extractor*) and then mapped by the alias table, as the goldens are: they do not come from the code
under test.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from gputui.stream.names import canonical_metric_name


@dataclass(frozen=True)
class Value:
    name: str
    value: float
    epoch: int | None
    step: int | None


@dataclass
class Log:
    text: bytes
    values: list[Value] = field(default_factory=list)
    printed: set[float] = field(default_factory=set)  # every number printed on a metric line
    layout: str = ""


#: (printed label, expected name before the alias table, how the value is drawn and printed)
PLAIN = [
    (["loss", "Loss", "train_loss", "train/loss", "LOSS"], "loss", "loss"),
    (["acc", "Acc", "accuracy", "Acc@1", "top1"], "accuracy", "pct"),
    (["Acc@5", "acc5"], "acc5", "pct"),
    (["Test. Acc.", "test_acc"], "test_acc", "pct"),
    (["lr", "LR", "learning_rate", "Learning Rate"], "learning_rate", "lr"),
    (["grad_norm", "Grad Norm", "gnorm"], None, "norm"),
    (["ppl", "perplexity"], None, "big"),
    (["mAP", "map50"], None, "unit"),
]
TIMES = [(["dt", "time", "step_time", "batch time", "iter_time"], "ms"), (["dt", "time", "step time"], "s")]
MEMORY = [(["max_mem", "mem", "gpu_mem", "memory"], "M"), (["max_mem", "mem", "reserved"], "G")]
RATES = ["tok/s", "tokens/s", "samples/s", "img/s"]
PERCENTS = ["mfu", "util", "MFU"]
PREFIXES = [
    "",
    "{date} {time},123 - INFO - ",
    "[{date} {time}] ",
    "[{date} {time},456][train][INFO] - ",
    "INFO:root:",
    "[rank0]: ",
    "0: ",
    "\x1b[32mINFO\x1b[0m ",
    "\x1b[1m[{time}]\x1b[0m ",
    "I0501 {time}.123456 4242 train.py:88] ",
    "(TaskRunner pid=4242) ",
    "{time} | INFO | ",
    "[INFO] ",
    "{date}T{time}Z ",
]
RANK_LABELS = ("[rank0]: ", "0: ")
SEPARATORS = [" | ", ", ", "  ", " - ", "\t", "; "]
NOISE = [
    "MASTER_ADDR=gpu-node-12 MASTER_PORT=12802",
    "world_size: 4",
    "Namespace(lr=0.003, epochs=90, batch_size=256, seed=1234, workers=16)",
    "  (0): Linear(in_features=768, out_features=3072, bias=True)",
    "  (1): Dropout(p=0.1, inplace=False)",
    "  (conv1): Conv2d(3, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)",
    "Using 8 GPUs on 2 nodes",
    "Saving checkpoint to ./ckpt/step_4000.pt",
    "Loading dataset from /data/shards/train-00017-of-00128.parquet",
    "  warmup_steps: 2000",
    "  weight_decay: 0.05",
    "  batch_size: 512",
    "Model has 124.44M parameters",
    "torch version 2.3.1, cuda 12.1",
    "Starting training with 8 workers",
    "Resolved 14 dependencies in 2.31s",
    "WARNING: 3 samples were skipped because they were empty",
]


def _printed(rng: random.Random, kind: str) -> str:
    if kind == "loss":
        return f"{rng.uniform(0.05, 9.0):.4f}"
    if kind == "pct":
        return f"{rng.uniform(1, 99):.2f}"
    if kind == "lr":
        return f"{rng.uniform(1e-5, 9e-3):.4e}"
    if kind == "norm":
        return f"{rng.uniform(0.1, 20):.3f}"
    if kind == "big":
        return f"{rng.uniform(10, 900):.2f}"
    return f"{rng.uniform(0.01, 0.99):.4f}"


class Format:
    """One drawn format: which metrics, how they are named, printed, separated and placed."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.layout = rng.choice(["pairs", "pairs", "pairs", "table", "list", "metriclogger"])
        self.prefix = rng.choice(PREFIXES)
        self.sep = rng.choice(SEPARATORS)
        kv = [": ", "=", " = "] + ([" "] if self.sep.strip() in ("|", "") else [])
        self.kv = rng.choice(kv)
        picks = rng.sample(PLAIN, rng.randint(1, 4))
        self.metrics: list[tuple[str, str, str, str | None]] = []  # label, expected, kind, unit
        for labels, expected, kind in picks:
            label = rng.choice(labels)
            self.metrics.append((label, expected or label.lower(), kind, None))
        if rng.random() < 0.5:
            labels, unit = rng.choice(TIMES)
            label = rng.choice(labels)
            self.metrics.append((label, label.replace(" ", "_") + "_s", "time", unit))
        if rng.random() < 0.4:
            labels, unit = rng.choice(MEMORY)
            label = rng.choice(labels)
            self.metrics.append((label, label + ("_mib" if unit == "M" else "_gib"), "mem", unit))
        if rng.random() < 0.3:
            label = rng.choice(PERCENTS)
            self.metrics.append((label, label.lower() + "_pct", "pctunit", "%"))
        if rng.random() < 0.3:
            label = rng.choice(RATES)
            self.metrics.append((label, label, "rate", rng.choice(["k", ""])))
        rng.shuffle(self.metrics)
        self.epochs = rng.random() < 0.6
        self.counter = rng.choice(
            ["step {s}", "Step {s}/{S}", "iter {s}/{S}", "[{s}/{S}]", "it {s}", "Iteration {s}"]
        )
        self.epoch_counter = rng.choice(["Epoch {e}", "epoch {e}", "Epoch [{e}/{E}]", "Epoch: {e}"])
        self.split = rng.random() < 0.3  # a train line and an eval line that share the names
        self.noise = rng.random() < 0.8
        self.bars = rng.random() < 0.3
        self.runs = 2 if rng.random() < 0.2 else 1

    def value(self, metric: tuple[str, str, str, str | None]) -> tuple[str, float]:
        """(text printed, value the extractor must give)."""
        _, _, kind, unit = metric
        rng = self.rng
        if kind == "time":
            text = f"{rng.uniform(50, 900):.1f}" if unit == "ms" else f"{rng.uniform(0.05, 3):.3f}"
            return text + unit, float(text) * (0.001 if unit == "ms" else 1.0)  # type: ignore[operator]
        if kind == "mem":
            text = str(rng.randint(900, 60000)) if unit == "M" else f"{rng.uniform(1, 79):.1f}"
            return text + unit, float(text)  # type: ignore[operator]
        if kind == "pctunit":
            text = f"{rng.uniform(5, 60):.2f}"
            return text + "%", float(text)
        if kind == "rate":
            text = f"{rng.uniform(1, 99):.1f}" if unit == "k" else f"{rng.uniform(100, 9000):.1f}"
            return text + (unit or ""), float(text) * (1000 if unit == "k" else 1)
        text = _printed(rng, kind)
        return text, float(text)


def _expected(fmt: Format, metric: tuple[str, str, str, str | None], split: str) -> str:
    expected = metric[1]
    if split and not expected.startswith(("train", "val", "valid", "eval", "test")):
        expected = split + expected
    return canonical_metric_name(expected)


SPLIT_WORDS = [("Eval", "val_"), ("Test", "test_"), ("Validation", "val_"), ("[Eval]", "val_")]


class Writer:
    """Writes the lines of one log in a drawn format and keeps the values they hold."""

    def __init__(self, fmt: Format) -> None:
        self.fmt = fmt
        self.lines: list[str] = []
        self.log = Log(b"", layout=fmt.layout)
        self.clock = 0

    def prefix(self) -> str:
        self.clock += 7
        hms = f"{10 + self.clock // 3600 % 10:02d}:{self.clock // 60 % 60:02d}:{self.clock % 60:02d}"
        return self.fmt.prefix.format(date="2025-03-14", time=hms)

    def keep(self, name: str, text: str, value: float, epoch: int | None, step: int | None) -> None:
        self.log.values.append(Value(name, value, epoch, step))
        self.log.printed.add(round(value, 9))
        self.log.printed.add(round(float(text.rstrip("%kMGsm")), 9))

    def counters(self, epoch: int | None, step: int, steps: int, epochs: int) -> str:
        fmt = self.fmt
        text = fmt.counter.format(s=step, S=steps)
        if epoch is not None:
            text = fmt.epoch_counter.format(e=epoch, E=epochs) + fmt.sep + text
        return text

    def pairs_line(
        self, epoch: int | None, step: int, steps: int, epochs: int, split: tuple[str, str]
    ) -> str:
        fmt = self.fmt
        parts = []
        for metric in fmt.metrics:
            text, value = fmt.value(metric)
            parts.append(metric[0] + fmt.kv + text)
            self.keep(_expected(fmt, metric, split[1]), text, value, epoch, step)
        head = (split[0] + " " if split[0] else "") + self.counters(epoch, step, steps, epochs)
        if fmt.layout == "list":
            names = ", ".join(m[0] for m in fmt.metrics)
            values = ", ".join(p[len(m[0]) + len(fmt.kv) :] for p, m in zip(parts, fmt.metrics, strict=True))
            return f"{head}{fmt.sep}[{names}]: [{values}]"
        return head + fmt.sep + fmt.sep.join(parts)

    def table(self, epoch_col: bool, rows: list[tuple[int | None, int]]) -> None:
        fmt = self.fmt
        sep = {"\t": "\t", ", ": ","}.get(fmt.sep, "   ")
        labels = (["epoch"] if epoch_col else []) + ["step"] + [m[0] for m in fmt.metrics]
        self.lines.append(self.prefix() + sep.join(labels))
        for epoch, step in rows:
            cells = ([str(epoch)] if epoch_col else []) + [str(step)]
            for metric in fmt.metrics:
                text, value = fmt.value(metric)
                cells.append(text)
                self.keep(_expected(fmt, metric, ""), text, value, epoch, step)
            self.lines.append(self.prefix() + sep.join(cells))

    def metriclogger(self, epoch: int, step: int, steps: int) -> str:
        fmt = self.fmt
        parts = [f"Epoch: [{epoch}]", f"[{step:>4}/{steps}]", "eta: 0:01:02"]
        for metric in fmt.metrics:
            if metric[2] in ("time", "mem", "pctunit", "rate"):
                continue
            text, value = fmt.value(metric)
            avg, avg_value = fmt.value(metric)
            parts.append(f"{metric[0]}: {text} ({avg})")
            name = _expected(fmt, metric, "")
            self.keep(name, text, value, epoch, step)
            self.keep(
                canonical_metric_name(metric[1] or metric[0].lower()) + "_avg", avg, avg_value, epoch, step
            )
        return "  ".join(parts)

    def bar(self) -> str:
        return "".join(
            f"\r{p:3d}%|{'#' * (p // 10):<10}| {p // 2}/50 [00:01<00:01, 20.0it/s]" for p in (0, 50, 100)
        )


def make_log(seed: int) -> Log:
    """One log in a format drawn from ``seed`` (deterministic)."""
    rng = random.Random(seed)
    fmt = Format(rng)
    out = Writer(fmt)
    for _ in range(fmt.runs):
        if fmt.noise:
            out.lines += [out.prefix() + line for line in rng.sample(NOISE, 6)]
        epochs = rng.randint(1, 3) if fmt.epochs or fmt.layout == "metriclogger" else 0
        steps, interval = rng.choice([(100, 10), (500, 50), (2000, 200)])
        rows = [
            (e if epochs else None, s)
            for e in range(1, max(epochs, 1) + 1)
            for s in range(interval, steps + 1, interval)
        ]
        if fmt.layout == "table":
            out.table(bool(epochs), rows)
            continue
        for epoch, step in rows:
            bar = out.bar() + "\r" if fmt.bars else ""
            if fmt.layout == "metriclogger":
                out.lines.append(bar + out.prefix() + out.metriclogger(epoch or 0, step, steps))
                if step == steps:
                    total = rng.randint(60, 5000)
                    clock = f"{total // 3600}:{total // 60 % 60:02d}:{total % 60:02d}"
                    out.lines.append(out.prefix() + f"Epoch: [{epoch}] Total time: {clock} (0.4123 s / it)")
                    out.keep("total_time_s", str(total), float(total), epoch, None)
                continue
            prefix = out.prefix()
            head = prefix + bar if prefix in RANK_LABELS else bar + prefix  # srun labels the physical line
            out.lines.append(head + out.pairs_line(epoch, step, steps, epochs, ("", "")))
            if fmt.split:
                word, prefix = rng.choice(SPLIT_WORDS)
                out.lines.append(out.prefix() + out.pairs_line(epoch, step, steps, epochs, (word, prefix)))
            if fmt.noise and rng.random() < 0.2:
                out.lines.append(out.prefix() + rng.choice(NOISE[6:10]))
    out.log.text = ("\n".join(out.lines) + "\n").encode()
    return out.log
