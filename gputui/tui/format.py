"""Small text formatting shared by the widgets (durations, sizes, bars)."""

from __future__ import annotations

BLOCKS = " ▏▎▍▌▋▊▉█"
SPARK = "▁▂▃▄▅▆▇█"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "--:--:--"
    seconds = int(max(0, seconds))
    days, rest = divmod(seconds, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return (f"{days}-" if days else "") + f"{h:02d}:{m:02d}:{s:02d}"


def gib(value: float | None) -> str:
    if value is None:
        return "?"
    g = value / 1024**3
    return f"{g:.1f}" if g < 100 else f"{g:.0f}"


def bar(pct: float | None, width: int) -> str:
    """A horizontal bar of ``width`` cells with eighth-cell resolution."""
    if pct is None or width <= 0:
        return " " * max(width, 0)
    eighths = round(max(0.0, min(100.0, pct)) / 100 * width * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + (BLOCKS[part] if part and full < width else "")
    return text.ljust(width)


def spark(values: list[float], width: int, top: float = 100.0) -> str:
    """The last ``width`` values as block characters scaled to ``top``."""
    values = values[-width:]
    out = "".join(SPARK[min(7, int(max(0.0, v) / top * 7.999))] for v in values)
    return out.rjust(width)


def number(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "–"
    if value != value:  # NaN
        return "nan"
    if abs(value) >= 1000:
        return f"{value / 1000:.1f}k"
    return f"{value:.{digits}g}"


def line_count(content: object) -> int | None:
    """How many lines a Static's content has (None: not plain text or Rich ``Text``), so an update that
    keeps the count can skip Textual's layout pass (a layout of the whole screen per update otherwise)."""
    plain = getattr(content, "plain", content)
    return plain.count("\n") + 1 if isinstance(plain, str) else None


def needs_layout(old: object, new: object) -> bool:
    """Whether replacing ``old`` by ``new`` in a widget of fixed width may change its height."""
    count = line_count(new)
    return count is None or count != line_count(old)
