"""The log parser: bytes in, records out. One parser per followed file (or per stream).

For every finished frame (:mod:`gputui.logs.normalize`): an ``srun --label`` prefix (``3: ``) or a
``[rank3]:`` marker at the start of the physical line sets the rank of all its frames and is removed;
each rank has its own :class:`~gputui.logs.base.Context`. The family parsers are tried in order and the
first that recognises the frame gives its records (:func:`route_auto` skips, with each parser's
``PRETEST``, those that would say "not mine"); a frame goes to the outcome tracker when its line was
flagged by the normaliser's gate (or while a traceback is being read): the others cannot hold a signal.

Catch-up mode (:attr:`LogParser.thin`): the normaliser skips redraws (:mod:`gputui.logs.thinning`), and a
frame whose shape, in the same kind of context, already gave no record and changed nothing is counted
without being parsed (``docs/log-formats.md``).
"""

from __future__ import annotations

import codecs
import copy
import re
import time as _time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import IO

from gputui.logs import planned
from gputui.logs.aggregate import aggregate
from gputui.logs.base import Context, LineParser
from gputui.logs.bounded import remember
from gputui.logs.formats import (
    darknet,
    extract,
    fairseq,
    flower,
    gputui_records,
    hf,
    keras,
    kvtable,
    megatron_straggler,
    mmengine,
    open_clip,
    pipetable,
    pytorch,
    sacrebleu,
    sample_factory,
    taught,
    timm,
    tqdm,
    ultralytics,
)
from gputui.logs.normalize import DEFAULT_MAX_FRAME, Frame
from gputui.logs.outcome import RECENT_FRAMES, OutcomeTracker
from gputui.logs.outcome import gate as outcome_gate
from gputui.logs.runs import start_marker
from gputui.logs.thinning import LABEL as LABEL_BYTES
from gputui.logs.thinning import SHAPE_DELETE, ThinningNormalizer
from gputui.logs.unread import Unread
from gputui.stream.records import Record

#: ``--format`` name → the line parsers it enables, in the order auto mode tries them. Registering a
#: format here is all it takes: auto routing (:func:`route_auto`) asks each parser's own ``PRETEST``.
#: ``generic`` (the fallback) stays last.
FAMILIES: dict[str, tuple[LineParser, ...]] = {
    "gputui": (gputui_records.PARSER,),
    "megatron_straggler": (megatron_straggler.PARSER,),
    "pipetable": (pipetable.PARSER,),
    "darknet": (darknet.PARSER,),
    "flower": (flower.PARSER,),
    "sample_factory": (sample_factory.PARSER,),
    "sacrebleu": (sacrebleu.PARSER,),
    "kvtable": (kvtable.PARSER,),
    "ultralytics": (ultralytics.PARSER,),
    "fairseq": (fairseq.PARSER,),
    "timm": (timm.PARSER,),
    "keras": (keras.PARSER,),
    "tqdm": (tqdm.PARSER,),
    "hf": (hf.PARSER,),
    "open_clip": (open_clip.PARSER,),
    "mmengine": (mmengine.PARSER,),
    "pytorch": (pytorch.PARSER,),
    "generic": (extract.FALLBACK,),
}
Route = Callable[[str, Context, float], "list[Record] | None"]
_ROUTES: dict[tuple[LineParser, ...], Route] = {}


def auto_parsers() -> tuple[LineParser, ...]:
    """The parsers of ``--format auto``: every family of :data:`FAMILIES`, in order."""
    return tuple(p for family in FAMILIES.values() for p in family)


def route_auto(parsers: tuple[LineParser, ...]) -> Route:
    """The auto route over ``parsers`` (built once per tuple): each in order, skipped where its
    ``PRETEST`` rejects the frame (the same result as trying each in turn, without the calls).
    The fallback's ``[]`` (a line it looked at and could not read) is no one's line: None, counted as
    unread."""
    route = _ROUTES.get(parsers)
    if route is None:
        route = _ROUTES[parsers] = _router(parsers)
    return route


def _router(parsers: tuple[LineParser, ...]) -> Route:
    """One function with the pre-tests written in as an if-chain (as fast as a hand-written one: no
    call per family for its pre-test). The pre-tests are the parsers' own constant strings. A closure
    looping over (pre-test function, parse) pairs instead, measured on the peer corpus: 8 % slower routing,
    4 % slower full parse (2026-11, best of 15)."""
    lines = ["def route(text, ctx, now):", "    head = text[:24]"]
    names: dict[str, object] = {"complete": extract.complete}
    for i, p in enumerate(parsers):
        if p is extract.FALLBACK:
            continue
        names[f"parse_{i}"] = p.parse
        done = "complete(text, ctx, now, records)" if getattr(p, "PARTIAL", False) else "records"
        lines += [
            f"    if {p.PRETEST}:",
            f"        records = parse_{i}(text, ctx, now)",
            "        if records is not None:",
            f"            return {done}",
        ]
    if extract.FALLBACK in parsers:
        names["fallback"] = extract.FALLBACK.parse
        lines.append("    return fallback(text, ctx, now) or None")
    else:
        lines.append("    return None")
    exec("\n".join(lines), names)  # built from the parsers' own constant strings
    return names["route"]  # type: ignore[return-value]


#: an ``srun --label`` prefix (not Darknet's iteration: `` 595: 0.81, 0.86 avg loss, …``)
LABEL = re.compile(
    r"^\s{0,4}(\d{1,5}): (?![-\d.]+, [-\d.]+ avg)|^\[rank(\d{1,5})\]:\s?"
    r"|^\[\d+,(\d{1,5})\]<std(?:out|err)>:"  # mpirun --tag-output, horovodrun: "[1,0]<stdout>:"
)
INERT_MAX = 8192
#: An epoch line without values that closes its epoch (``==end-of-epoch 2==``), not one that announces it.
FOOTER = re.compile(r"\b(?:end|ends|ended|finish(?:ed)?|done|complete[d]?|summary)\b", re.IGNORECASE)


def _state(ctx: Context) -> tuple:
    """What a frame can change in its stream's context (the line-shape plan cache left out)."""
    return (
        ctx.epoch,
        ctx.epoch_base,
        ctx.keras_epoch,
        ctx.keras_epochs,
        ctx.header_epoch,
        ctx.header_frame,
        ctx.last_progress,
        ctx.main_bar,
        ctx.batch_size,
        ctx.bar_clock,
        ctx.bar_desc,
        ctx.table,
        ctx.series_lines,
        tuple(ctx.extra.items()),
    )


READ_SIZE = 1 << 20


class LogParser:
    """Incremental parser of one text log. ``feed`` bytes as they arrive, ``finish`` at the end."""

    def __init__(
        self,
        formats: str | Iterable[str] = "auto",
        *,
        job: str | None = None,
        max_frame: int = DEFAULT_MAX_FRAME,
        path: str | None = None,
    ) -> None:
        """``path``: the log's file, for the taught patterns of its folder
        (:mod:`gputui.logs.formats.taught`)."""
        names = [formats] if isinstance(formats, str) else list(formats)
        auto = "auto" in names
        if auto:
            self.parsers = auto_parsers()
        else:
            unknown = [n for n in names if n not in FAMILIES]
            if unknown:
                raise ValueError(f"unknown log format {unknown[0]!r}; known: auto, {', '.join(FAMILIES)}")
            self.parsers = tuple(p for n in names for p in FAMILIES[n])
        self.job = job
        self.normalizer = ThinningNormalizer(max_frame, gate=outcome_gate)
        self.outcome = OutcomeTracker()
        self._route = route_auto(self.parsers) if auto else self._route_each
        teacher = taught.TEACHING.parser_for(path)  # the user's patterns, tried first
        if teacher is not None:
            self._route = teacher.first(self._route)
        self.unread = Unread()  # metric-looking lines that gave no record
        self.contexts: dict[int | None, Context] = {}
        self._shapes: dict[bytes, object] = {}  # line shape → how it is read: one cache for all ranks
        self._series: dict[bytes, object] = {}  # line shape without digits → its series state (all ranks)
        self._templates: dict[bytes, object] = {}  # catch-up: the expression of each step-line shape
        self._extracted: dict[bytes, bool] = {}  # catch-up: whether a skipped shape is the extractor's
        self.frames = 0
        self._line = 0
        self._line_rank: int | None = None
        self._last_frame: Frame | None = None
        self._recent: deque[Frame] = deque(maxlen=RECENT_FRAMES)
        self._finished = False
        # catch-up mode: (shape, context kind) of frames that gave nothing and changed nothing; later
        # frames of that shape in that kind of context are counted, not parsed (docs/log-formats.md)
        self._inert: set[tuple] = set()
        self._started = False  # the first bytes were seen (a byte-order mark is looked for there)
        self._utf16: codecs.IncrementalDecoder | None = None  # PowerShell's "> log.txt" writes UTF-16

    def _route_each(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        for parser in self.parsers:
            records = parser.parse(text, ctx, now)
            if records is not None:
                partial = getattr(parser, "PARTIAL", False)
                return extract.complete(text, ctx, now, records) if partial else records
        return None

    @property
    def thin(self) -> bool:
        """Catch-up mode: frames that cannot change an epoch row or the outcome are skipped
        (:mod:`gputui.logs.thinning`). Set while the reader is behind, cleared once it has caught up."""
        return self.normalizer.thin

    @thin.setter
    def thin(self, value: bool) -> None:
        self.normalizer.thin = value

    @property
    def tail(self) -> str:
        """The unfinished last frame (for display)."""
        return self.normalizer.tail

    def feed(self, data: bytes, now: float | None = None) -> list[Record]:
        """Records of the frames these bytes finished."""
        if not self._started and data:
            self._started = True
            if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # a UTF-16 byte-order mark: read as UTF-8
                self._utf16 = codecs.getincrementaldecoder("utf-16")("replace")
        if self._utf16 is not None:
            data = self._utf16.decode(data).encode()
        normalizer = self.normalizer
        frames = normalizer.feed(data)
        if normalizer.skipped:
            self.frames += normalizer.skipped
            normalizer.skipped = 0
        return self.parse_frames(frames, now, normalizer.hot, normalizer.recent or None) if frames else []

    def finish(self, now: float | None = None, *, outcome: bool = True) -> list[Record]:
        """End of input: parse the unfinished frame, then (``outcome``) add the final outcome event."""
        now = _time.time() if now is None else now
        normalizer = self.normalizer
        frames = normalizer.finish()
        out = self.parse_frames(frames, now, normalizer.hot, normalizer.recent or None) if frames else []
        if outcome and not self._finished:
            self._finished = True
            out.append(self.outcome.decide(now, self._last_frame, list(self._recent)))
        return out

    def outcome_so_far(self, now: float | None = None) -> Record:
        """The outcome the frames read so far give, for a log that may still grow (a followed replay):
        :meth:`finish`'s decision on a copy, so what is read later is judged as if this was never asked."""
        now = _time.time() if now is None else now
        return copy.deepcopy(self.outcome).decide(now, self._last_frame, list(self._recent))

    def _skipped(self, raws: list[bytes], now: float) -> list[Record]:
        """The values of frames catch-up mode skipped (:mod:`gputui.logs.aggregate`): aggregate records of
        the step lines the extractor reads, each group in one pass, else line by line; other frames (a
        bar's redraws, a family's lines) stay skipped, as their runs' kept frames speak for them."""
        out: list[Record] = []
        for group in _group(raws):
            label = LABEL_BYTES.match(group[0])
            rank = int(label.group(1) or label.group(2) or label.group(3)) if label is not None else None
            if label is not None:
                group = [_unlabelled(raw) for raw in group]
            text = group[0].decode("utf-8", "replace").rstrip()
            if "\x1b" in text or "\b" in text or "\r" in text:
                continue
            ctx = self.contexts.get(rank)
            if ctx is None:
                continue
            shape = group[0].translate(None, SHAPE_DELETE)
            mine = self._extracted.get(shape)
            if mine is None:  # whether the extractor reads this shape's lines (one probe per shape)
                first = self._route(text, copy.copy(ctx), now)
                mine = (
                    bool(first)
                    and first[0].fields.get("source") == extract.NAME
                    and "step" in first[0].fields
                )
                remember(self._extracted, shape, mine, INERT_MAX)
            if not mine:
                continue
            records = aggregate(group, text, ctx, now, self._templates)
            if records is None:  # not one shape after all: each line read, nothing lost
                for raw in group:
                    records = self._route(raw.decode("utf-8", "replace").rstrip(), ctx, now) or []
                    out += records
                continue
            out += records
        return out

    def parse_frames(
        self,
        frames: list[Frame],
        now: float | None = None,
        hot: set[int] | None = None,
        recent: list[Frame] | None = None,
    ) -> list[Record]:
        """Records of finished frames. ``hot``: the lines that may carry an outcome signal (the
        normaliser's gate); the other frames skip the outcome checks. ``None``: check every frame.
        ``recent``: the true last frames when ``frames`` were thinned (where a completion line is sought)."""
        if not frames:
            return []
        now = _time.time() if now is None else now
        out: list[Record] = []
        contexts = self.contexts
        tracker = self.outcome
        route = self._route
        ctx: Context | None = None
        last_line, last_text, count = -1, "", 0
        inert = self._inert if self.normalizer.thin else None
        unread = self.unread
        shapes = self.normalizer.shapes if inert is not None else None
        if shapes is None or len(shapes) != len(frames):  # frames not from a thinned block
            inert = None
        gaps = self.normalizer.gaps if inert is not None else None
        if gaps is not None and len(gaps) != len(frames):
            gaps = None
        index = -1
        for line, text in frames:
            index += 1
            if gaps is not None and gaps[index]:
                out += self._skipped(gaps[index], now)
            if line != self._line:
                self._line = line
                m = LABEL.match(text)
                if m is not None:
                    self._line_rank = int(m.group(1) or m.group(2) or m.group(3))
                    text = text[m.end() :]
                    if not text.strip():
                        continue
                else:
                    self._line_rank = None
            elif self._line_rank is not None and text.startswith("[") and (m := LABEL.match(text)):
                text = text[m.end() :]  # each redraw of a tagged line carries the tag again
            rank = self._line_rank
            if ctx is None or ctx.rank != rank:
                ctx = contexts.get(rank)
                if ctx is None:
                    ctx = contexts[rank] = Context(rank=rank, shapes=self._shapes, series=self._series)
            ctx.frames += 1
            count += 1
            if inert is not None:
                key = (
                    shapes[index],  # type: ignore[index]
                    rank,
                    ctx.epoch is None,
                    ctx.keras_epoch is None,
                    ctx.header_epoch is None,
                    ctx.last_progress is None,
                    ctx.main_bar is None,
                )
                if key in inert and tracker.tb is None and (hot is None or line not in hot):
                    last_line, last_text = line, text
                    continue
                before = _state(ctx)
            progress = ctx.last_progress
            records = route(text, ctx, now)
            if ctx.last_progress is not progress:
                n, total = ctx.last_progress  # type: ignore[misc]
                tracker.unfinished_progress = n < total
            elif records:
                tracker.unfinished_progress = False
            if records is None:  # no parser's line ([]: a family's line with nothing to record, a bar)
                unread.see(text, shapes[index] if inert is not None else None)  # type: ignore[index]
            elif inert is not None:
                unread.read(shapes[index])  # type: ignore[index]
            if not records and ctx.header_frame == ctx.frames and FOOTER.search(text) is None:
                tracker.announced = (line, text.strip()[:500])  # "**** EPOCH 003 ****": announced
            if ctx.held:
                if records:  # training output: the values held under its epoch's header ran
                    records = ctx.held + records
                    ctx.held = []
                elif start_marker(text) is not None:
                    ctx.held = []  # a launch starting over: that epoch never ran
            if records:
                if self.job is not None:
                    for record in records:
                        if record.kind == "metric" and "job" not in record.fields:
                            record.fields["job"] = self.job
                last_fields = records[-1].fields
                if last_fields.get("scope") != "summary" or last_fields.get("source") != "extract":
                    # (W&B's run summary, printed however the run ended, is no training output)
                    tracker.saw_training = True
                    tracker.record_line = line
                ctx.trained = True
                out += records
                if "/" in text or ctx.extra:
                    planned.mark(text, records, ctx)  # a step run's planned steps
                last = records[-1].fields
                if "step" in last or "epoch" in last:
                    first = records[0].fields.get("epoch")
                    if first is not None and first != last.get("epoch"):
                        tracker.counters.saw_epoch(first)  # a series' waiting lines, given now
                    tracker.progress(line, text, last, ctx.extra)
            if (not records or planned.unplanned(ctx)) and any(word in text for word in planned.WORDS):
                planned.note_setting(text, ctx)  # on a line that gave records too, until a plan is known
            if ctx.stated_epoch:
                ctx.stated_epoch = False
                if records:
                    tracker.saw_epoch(line, text, _epoch_index(records))
            if (
                inert is not None
                and not records
                and ctx.last_progress is progress
                and "poch" not in text
                and "POCH" not in text
                and (hot is None or line not in hot)
                and tracker.tb is None
                and len(inert) < INERT_MAX
                and _state(ctx) == before
            ):
                inert.add(key)
            if hot is None or line in hot or tracker.tb is not None:
                signals = tracker.observe(text, line, rank, now)
                if signals:
                    out += signals
                    if any(r.get("signal") == "early_stopped" for r in signals):
                        ctx.epoch = None  # training ended: later prose belongs to no epoch
            last_line, last_text = line, text
        self.frames += count
        if inert is not None:
            unread.block(shapes, self.normalizer.every)  # type: ignore[arg-type]
        self._recent.extend(frames[-RECENT_FRAMES:] if recent is None else recent)  # where decide() looks
        if last_line >= 0:
            self._last_frame = (last_line, last_text)
        return out


def _unlabelled(raw: bytes) -> bytes:
    label = LABEL_BYTES.match(raw)
    return raw[label.end() :] if label is not None else raw


def _group(raws: list[bytes]) -> list[list[bytes]]:
    """Skipped frames by shape, in order of first appearance (a period of two shapes gives two groups)."""
    groups: dict[bytes, list[bytes]] = {}
    for raw in raws:
        groups.setdefault(raw.translate(None, SHAPE_DELETE), []).append(raw)
    return list(groups.values())


def parse_stream(
    stream: IO[bytes],
    formats: str | Iterable[str] = "auto",
    *,
    read_size: int = READ_SIZE,
    finish: bool = True,
    thin: bool = False,
) -> Iterator[Record]:
    """All records of a binary stream, read in ``read_size`` pieces (constant memory). ``thin``: catch-up
    mode (fewer step records, the same epoch rows and outcome; :mod:`gputui.logs.thinning`)."""
    parser = LogParser(formats)
    parser.thin = thin
    while chunk := stream.read(read_size):
        yield from parser.feed(chunk)
    if finish:
        yield from parser.finish()


def parse_bytes(
    data: bytes, formats: str | Iterable[str] = "auto", *, finish: bool = True, thin: bool = False
) -> list[Record]:
    parser = LogParser(formats)
    parser.thin = thin
    out = parser.feed(data)
    if finish:
        out.extend(parser.finish())
    return out


def _epoch_index(records: list[Record]) -> float | None:
    """The 0-based epoch of a frame's epoch records (a bar counts from 0, a trainer from 1); None where
    the log does not say where it counts from."""
    for record in records:
        epoch, base = record.fields.get("epoch"), record.fields.get("epoch_base")
        if record.kind == "metric" and isinstance(epoch, int | float) and isinstance(base, int):
            return epoch - base
    return None
