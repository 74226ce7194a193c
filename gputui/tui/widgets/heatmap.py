"""Nodes × time: one cell per node and stretch of time, coloured by the node's mean GPU utilisation, so a
node that lags its peers shows as a stripe across the job's time.

Two nodes share a text row (``▀``: the upper node is the glyph's colour, the lower one its background);
columns are equal stretches of the job's time. The widget judges nothing: the caller gives the two
thresholds (:data:`~gputui.monitor.conditions.UTIL_GOOD_PCT`, ``UTIL_LOW_PCT``) and a cell is green at or
above the first, yellow at or above the second, red below; a stretch with no sample is dark.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from gputui.monitor.series import Series
from gputui.tui.axes import elapsed

GOOD, LOW, BAD, NONE = "green", "yellow", "red", "grey23"
LABEL_WIDTH = 14


@dataclass(frozen=True)
class Thresholds:
    good: float
    low: float

    def colour(self, value: float | None) -> str:
        if value is None:
            return NONE
        return GOOD if value >= self.good else LOW if value >= self.low else BAD


def pair_label(upper: str, lower: str | None, width: int = LABEL_WIDTH) -> str:
    """The two nodes of a row, upper first: ``node01 node02``, or where both names do not fit,
    ``nid001234/35`` (the lower's name without the prefix both share)."""
    if lower is None:
        return upper[:width].ljust(width)
    if len(upper) + 1 + len(lower) <= width:
        return f"{upper} {lower}".ljust(width)
    shared = 0
    while shared < min(len(upper), len(lower)) and upper[shared] == lower[shared]:
        shared += 1
    shared = min(shared, max(0, len(lower) - 2))  # at least two characters of the lower's name
    return f"{upper}/{lower[shared:]}"[:width].ljust(width)


def heat_rows(lines: dict[str, Series], thresholds: Thresholds, width: int, start: float, end: float) -> Text:
    """The heatmap's text: one row per two nodes, ``width`` cells of time after the label."""
    hosts = list(lines)
    cells = {h: _held(lines[h].resampled(width, start, end, mean=True)) for h in hosts}
    out = Text(no_wrap=True, overflow="crop")
    for i in range(0, len(hosts), 2):
        upper = hosts[i]
        lower = hosts[i + 1] if i + 1 < len(hosts) else None
        if i:
            out.append("\n")
        out.append(pair_label(upper, lower) + " ", style="bold")
        for k in range(width):
            top = thresholds.colour(_at(cells[upper], k))
            bottom = thresholds.colour(_at(cells[lower], k)) if lower is not None else "default"
            out.append("▀", style=Style(color=top, bgcolor=bottom))
    return out


def _held(cells: list[float | None]) -> list[float | None]:
    """Cells between two samples keep the earlier sample's value (a node sampled every 5 s fills its
    row); cells before a node's first sample and after its last stay empty (a lost node goes dark)."""
    out = list(cells)
    last: float | None = None
    end = max((k for k, v in enumerate(cells) if v is not None), default=-1)
    for k in range(end + 1):
        if out[k] is None:
            out[k] = last
        else:
            last = out[k]
    return out


def _mean(series: Series) -> float:
    values = series.values
    return sum(values) / len(values) if values else float("inf")


def _at(values: list[float | None], k: int) -> float | None:
    return values[k] if k < len(values) else None


class Heatmap(Widget):
    """GPU utilisation per node over the job's time (the dashboard shows it from three nodes on)."""

    DEFAULT_CSS = "Heatmap { height: auto; }"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._lines: dict[str, Series] = {}
        self._thresholds = Thresholds(60.0, 20.0)
        self._key: tuple | None = None

    def show(self, lines: dict[str, Series], thresholds: Thresholds, max_nodes: int) -> None:
        """Draw ``lines`` (host → utilisation series); repaint only when they changed. With more nodes
        than ``max_nodes``, the ``max_nodes`` lowest (mean over the run) are drawn, lowest first: a
        straggler is never the one left out."""
        subtitle = ""
        if len(lines) > max_nodes:
            lowest = sorted(lines, key=lambda h: (_mean(lines[h]), h))[: max(1, max_nodes)]
            subtitle = f"{len(lowest)} lowest of {len(lines)} nodes · "
            lines = {h: lines[h] for h in lowest}
        spans = [(s.times[0], s.times[-1]) for s in lines.values() if len(s)]
        if spans:
            subtitle += f"{elapsed(0)} … {elapsed(max(b for _, b in spans) - min(a for a, _ in spans))}"
        key = (tuple((h, len(s), s.last) for h, s in lines.items()), thresholds)
        if self.border_subtitle != subtitle:  # setting it repaints the widget, even to the same text
            self.border_subtitle = subtitle
        if key == self._key:
            return
        self._key, self._lines, self._thresholds = key, lines, thresholds
        self.refresh(layout=True)

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, (len(self._lines) + 1) // 2)

    def render(self) -> Text:
        lines = self._lines
        spans = [(s.times[0], s.times[-1]) for s in lines.values() if len(s)]
        if not spans:
            return Text("waiting for samples", style="dim")
        width = max(1, self.size.width - LABEL_WIDTH - 1)
        start, end = min(a for a, _ in spans), max(b for _, b in spans)
        return heat_rows(lines, self._thresholds, width, start, end)
