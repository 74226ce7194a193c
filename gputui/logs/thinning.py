"""Catch-up reading: the normaliser that skips the progress frames nobody needs (``docs/log-formats.md``).

A log that is already large when gputui opens it (attach or replay of a long job, ``gputui parse`` of a
1 GB file) is mostly redraws: thousands of ``\\r`` frames of one bar, thousands of per-step lines of the
same shape. Reading it at the speed of one regex per frame would keep the user waiting for minutes, so
while a reader is *behind* (:attr:`ThinningNormalizer.thin` is true) frames are picked on the bytes,
before they are decoded:

- each frame gets a *shape*: its bytes with digits, spaces, bar characters (``=>.#-``, the block
  elements) and non-ASCII bytes deleted, so ``Epoch 3:  45%|████▌ | 45/100 [00:02<00:03, loss=0.5]``
  and the next redraw have the same shape, and a frame with another metric, another description, a
  dict spliced in, or a summary line has another;
- a *run* is consecutive frames of one shape (and, in ``srun --label`` logs, one rank). Of a run only
  these are parsed: its first and last frames, the frames on both sides of each change of the epoch
  number (``epoch 3`` → ``epoch 4``, timm's ``Train: 3 [``, found by bisection on the run), and every
  :data:`SAMPLE_EVERY`-th frame (the step history, thinned); the last redraw of each line of ``\r``
  frames and, in labelled logs, each such line's first frame (it carries the rank) are always kept.
  Periods of 2 to 4 frames (a bar and the line it is interrupted by, a step line and its companion)
  are runs too and are skipped a whole period at a time;
- the others are skipped without being decoded. Skipping a frame of a run cannot change an epoch row
  or the outcome: end-of-epoch values come from the last frame before a change of shape or epoch, and
  the words an outcome signal is made of are part of the shape, so the first frame of a run that holds
  one is kept (the outcome gate reads only the kept frames). Only step-scope values (the points of a
  loss-per-step chart) are fewer, as the live path already thins them to one per printed second.

The frames that are kept are exactly the frames the plain :class:`~gputui.logs.normalize.Normalizer`
gives for them (same text, same line numbers); :attr:`recent` holds the true last frames of the block
(where the outcome looks for a completion line). A reader that has caught up sets ``thin`` back to false
and reads every frame again.
"""

from __future__ import annotations

import re
from itertools import compress, islice, repeat
from operator import eq

from gputui.logs.normalize import CSI, Frame, Normalizer, apply_backspaces

#: Every n-th period of a run is parsed as a sample of the step history.
SAMPLE_EVERY = 128
#: The periods of the runs looked for: a bar redrawn (1), a step line and its companion (2), ...
PERIODS = (1, 2, 3, 4)
TWINS = re.compile(rb"\x01{2,}")
ONE, ZERO = b"\x01", b"\x00"
FLIP = bytes([1, 0]) + bytes(254)
#: Bytes deleted to get a frame's shape: digits, spaces, bar and number punctuation, non-ASCII bytes.
SHAPE_DELETE = b"0123456789 \t=>.#-+:" + bytes(range(0x80, 0x100))
EPOCH_TOKEN = re.compile(rb"(?i:epoch)(?:\(\w+\))?\W{0,4}(\d+)|\bTrain: (\d+) \[")  # timm: "Train: 3 ["
CSI_BYTES = re.compile(CSI.pattern.encode())
LABEL = re.compile(
    rb"^\s{0,4}(\d{1,5}): (?![-\d.]+, [-\d.]+ avg)|^\[rank(\d{1,5})\]:|^\[\d+,(\d{1,5})\]<std(?:out|err)>:"
)
LABELLED = re.compile(rb"\n\s{0,4}\d{1,5}: |\n\[rank\d{1,5}\]:|\n\[\d+,\d{1,5}\]<std")  # literal \n first
RECENT = 64
#: Frames never thinned: Megatron's straggler reports (:mod:`gputui.logs.formats.megatron_straggler`), whose
#: per-rank values the verdicts count report by report.
PER_RANK = (b"/Rnk", b"Etpt(TF)")


def _epoch(raw: bytes) -> bytes | None:
    """The epoch number a frame names, if any (literal scans first: most frames name none)."""
    at = raw.find(b"poch")
    if at < 0:
        at = raw.find(b"POCH")
        if at < 0:
            at = raw.find(b"Train: ")
            if at < 0:
                return None
    m = EPOCH_TOKEN.search(raw, max(0, at - 1))
    return None if m is None else m.group(1) or m.group(2)


def _last_frame(parts: list[bytes], start: int, out: list[int]) -> None:
    """The index of a line's last frame of redraws (a bar's final frame when tqdm ends it with a newline);
    none for a CRLF line (one frame and an empty one)."""
    if len(parts) > 2 or parts[-1]:
        out.append(start + len(parts) - (1 if parts[-1].strip() else 2))


class _Epochs:
    """The epoch numbers of a block's non-blank frames, each read once (``at``: their indices)."""

    __slots__ = ("at", "memo", "raws")

    def __init__(self, raws: list[bytes], at: list[int]) -> None:
        self.raws, self.at, self.memo = raws, at, {}

    def of_period(self, start: int, period: int) -> tuple[bytes | None, ...]:
        memo, out = self.memo, []
        for j in range(start, min(start + period, len(self.at))):
            token = memo.get(j, memo)
            if token is memo:
                token = memo[j] = _epoch(self.raws[self.at[j]])
            out.append(token)
        return tuple(out)


def _epoch_changes(epochs: _Epochs, a: int, period: int, lo: int, hi: int, out: set[int]) -> None:
    """Periods ``k`` in ``[lo, hi)`` (of the stretch starting at ``a``) after which the epoch numbers
    change, found by bisection: a stretch whose two ends name the same epochs is taken to hold them."""
    if epochs.of_period(a + lo * period, period) == epochs.of_period(a + hi * period, period):
        return
    if hi - lo == 1:
        out.update((lo, hi))
        return
    mid = (lo + hi) // 2
    _epoch_changes(epochs, a, period, lo, mid, out)
    _epoch_changes(epochs, a, period, mid, hi, out)


def _thin_runs(
    shapes: list[bytes], epochs: _Epochs, periods: tuple[int, ...], sampled: list[int] | None = None
) -> bytearray:
    """1 for each frame to skip: the inner periods of runs of each period length (the first period,
    the twins of the last, every :data:`SAMPLE_EVERY`-th and those around a change of epoch are kept).
    ``sampled`` gets the first frame of each kept inner period."""
    m = len(shapes)
    skip = bytearray(m)
    for period in periods:
        if m < 3 * period:
            break
        equal = bytes(map(eq, shapes, islice(shapes, period, None)))
        for run in TWINS.finditer(equal):
            a, b = run.span()  # frames j in [a, b) have a twin of the same shape at j + period
            count = (b - a) // period
            if count < 2:
                continue
            skip[a + period : a + count * period] = ONE * ((count - 1) * period)
            kept = set(range(SAMPLE_EVERY, count, SAMPLE_EVERY))
            _epoch_changes(epochs, a, period, 0, count, kept)
            for k in kept:
                lo = a + k * period
                skip[lo : lo + period] = ZERO * period
            if sampled is not None:
                sampled += (a + k * period for k in kept)
    return skip


def _keep_samples(shapes: list[bytes], kept: bytearray, sampled: list[int]) -> list[bytes]:
    """The shapes of the frames a pass keeps, each sampled one made unique: the next pass (longer
    periods) must not thin the step history a second time (every 128th of every 128th)."""
    shapes = list(shapes)
    for i in sampled:
        shapes[i] += b"\x00%d" % i
    return list(compress(shapes, kept))


def _per_rank_apart(shapes: list[bytes]) -> list[bytes]:
    """The shapes with each per-rank report's made unique (:data:`PER_RANK`): it is no run, every one
    is parsed (and the lines between them too, as their runs are broken)."""
    return [s + b"\x00%d" % i if PER_RANK[0] in s or PER_RANK[1] in s else s for i, s in enumerate(shapes)]


class ThinningNormalizer(Normalizer):
    """A :class:`Normalizer` that, while :attr:`thin` is set, returns only the frames that matter."""

    __slots__ = ("_skipped", "every", "gaps", "recent", "shapes", "skipped", "thin")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.thin = False
        self.skipped = 0  # non-blank frames not returned since the reader last looked
        self._skipped = 0
        self.recent: list[Frame] = []  # the block's true last frames (thin mode); [] otherwise
        self.shapes: list[bytes] = []  # the shapes of the frames last returned (thin mode)
        self.every: list[bytes] = []  # the shapes of all frames of that block (gputui.logs.unread)
        #: per frame returned (thin mode): the frames skipped right before it (raw bytes), or None; the
        #: parser reads their values in one pass (:func:`gputui.logs.formats.extract.aggregate`)
        self.gaps: list[list[bytes] | None] = []

    def _frames(self, block: bytes, first_overflow: bool) -> list[Frame]:
        if not self.thin or first_overflow:
            self.recent, self.shapes, self.gaps = [], [], []
            return super()._frames(block, first_overflow)
        raws: list[bytes] = []
        lines: list[int] = []
        shapes: list[bytes] = []
        line = self._line
        if b"\r\n" in block:  # CRLF lines: the \r only adds an empty frame (dropped); split them as plain
            block = block.replace(b"\r\n", b"\n")
        rows = block.split(b"\n")
        if not rows[-1]:
            rows.pop()  # the block ends with \n; otherwise its last line ends with \r
        labelled = LABEL.match(block) is not None or LABELLED.search(block) is not None
        firsts: list[int] = []  # labelled lines of several frames: the first frame carries the rank
        lasts: list[int] = []  # lines of several frames: the last one is a bar's final frame
        if labelled:
            for raw in rows:
                parts = raw.split(b"\r") if 13 in raw else (raw,)
                if len(parts) > 1:
                    firsts.append(len(raws))
                    _last_frame(parts, len(raws), lasts)
                raws += parts
                lines += repeat(line, len(parts))
                m = LABEL.match(raw)
                rank = b"" if m is None else m.group(0).strip()
                bare = map(bytes.translate, parts, repeat(None), repeat(SHAPE_DELETE))
                shapes += map(bytes.__add__, repeat(rank), bare)
                line += 1
        else:
            # plain lines in slices (C level); only the lines with \r frames are split one by one. The
            # shapes come from one translation of the whole block, split the same way (it keeps \r, \n)
            shaped = block.translate(None, SHAPE_DELETE).split(b"\n")
            done = 0
            for i in compress(range(len(rows)), map(bytes.__contains__, rows, repeat(b"\r"))):
                raws += rows[done:i]
                shapes += shaped[done:i]
                lines += range(line + done, line + i)
                parts = rows[i].split(b"\r")
                _last_frame(parts, len(raws), lasts)
                raws += parts
                shapes += shaped[i].split(b"\r")
                lines += repeat(line + i, len(parts))
                done = i + 1
            raws += rows[done:]
            shapes += shaped[done : len(rows)]
            lines += range(line + done, line + len(rows))
            line += len(rows)
        self._line = line if block.endswith(b"\n") else line - 1
        self.every = shapes
        keep = self._pick(raws, _per_rank_apart(shapes) if any(k in block for k in PER_RANK) else shapes)
        if firsts or lasts:
            # a line's last frame (and, labelled, its first) is parsed, whatever the run around it;
            # the last one of a line ended by \r is blank (the next frame comes after it)
            extra = [i for i in (*firsts, *lasts) if raws[i].strip()]
            before = len(keep)
            keep = sorted(set(keep).union(extra))
            self._skipped -= len(keep) - before
        self.hot = self._hot(raws, lines, keep)
        out: list[Frame] = []
        kept_shapes: list[bytes] = []
        gaps: list[list[bytes] | None] = []
        previous = -1
        for i in keep:
            text = self._text(raws[i])
            if text:
                out.append((lines[i], text))
                kept_shapes.append(shapes[i])
                gaps.append([r for r in raws[previous + 1 : i] if r.strip()] if i > previous + 1 else None)
                previous = i
        self.shapes = kept_shapes
        self.gaps = gaps
        self.skipped += self._skipped
        tail = range(max(0, len(raws) - RECENT), len(raws))
        self.recent = [f for f in ((lines[i], self._text(raws[i])) for i in tail) if f[1]]
        return out

    def _text(self, raw: bytes) -> str:
        """The frame's text, as the plain normaliser makes it."""
        if len(raw) > self._max:
            raw = self._bound(raw)
        text = raw.decode("utf-8", "replace")
        if "\x1b" in text:
            text = CSI.sub("", text)
        if "\b" in text:
            text = apply_backspaces(text)
        return text.rstrip()

    def _pick(self, raws: list[bytes], shapes: list[bytes]) -> list[int]:
        """Indices of the frames to parse (sorted): every frame but the skipped periods of runs. Runs
        of one shape are thinned first; the longer periods are looked for among the frames left (the
        parser sees only those, so the same rule holds for them), which is most of the speed."""
        # blank frames are dropped by the normaliser anyway: runs are found among the others
        at = list(compress(range(len(raws)), map(bytes.strip, raws)))
        total = len(at)
        if len(at) != len(raws):
            shapes = list(map(shapes.__getitem__, at))
        sampled: list[int] = []
        for periods in (PERIODS[:1], PERIODS[1:]):
            skip = _thin_runs(shapes, _Epochs(raws, at), periods, sampled)
            kept = skip.translate(FLIP)
            at, shapes = list(compress(at, kept)), _keep_samples(shapes, kept, sampled)
            sampled = []
        self._skipped = total - len(at)  # non-blank frames not parsed (blank ones are never counted)
        return at

    def _hot(self, raws: list[bytes], lines: list[int], keep: list[int]) -> set[int]:
        """Lines of the kept frames where the outcome gate finds something. A skipped frame has the shape
        of a kept one, and the words the gate looks for are part of a shape: the first frame of a run
        that says ``CANCELLED`` or ``out of memory`` is kept and checked. Escape sequences and
        backspaces can split such a word: the gate reads the frames without them."""
        hot: set[int] = set()
        if self._gate is None or not keep:
            return hot
        kept = b"\n".join([raws[i] for i in keep])
        if b"\x1b" in kept:
            kept = CSI_BYTES.sub(b"", kept)
        if b"\x08" in kept:
            kept = kept.translate(None, b"\x08")
        at, index = 0, 0
        for hit in self._gate(kept):
            index += kept.count(b"\n", at, hit)
            at = hit
            hot.add(lines[keep[index]])
        return hot
