"""The GPU pane: one row per GPU grouped by node, node roll-ups for big jobs, outliers marked.

Rows are rendered from :class:`~gputui.monitor.gpus.GpuBoard` on each refresh (no per-GPU widget), so a
64 × 8 job costs one text block. Nodes collapse to a roll-up row each when the GPUs do not fit; ``enter``
expands or collapses the node under the cursor (``up``/``down`` move it). The pane judges nothing: every
flag and colour comes from :func:`~gputui.monitor.conditions.classify` (the alerts' classifier) as a
level, and :data:`LEVEL_STYLE` maps a level to a style. A new sample repaints only the rows whose text
changed (:class:`~gputui.tui.widgets.changed_rows.ChangedRows`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.reactive import reactive

from gputui.config import AlertThresholds
from gputui.monitor.conditions import Condition, Conditions, Level, classify, util_level, worst
from gputui.monitor.gpus import GpuBoard, GpuState, NodeState
from gputui.tui.format import bar, gib, spark
from gputui.tui.widgets.changed_rows import ChangedRows

SELECTED = "on grey30"  # the cursor row (not reverse: bars and sparklines keep their colours)
MAX_BAR, MAX_SPARK = 30, 40
LEVEL_STYLE = {Level.OK: "", Level.NOTICE: "yellow", Level.WARNING: "bold yellow", Level.CRITICAL: "bold red"}
LEVEL_MARK = {Level.WARNING: " ⚠"}  # a flag that is also an alert says so
BAR_STYLE = {Level.OK: "green", Level.NOTICE: "yellow", Level.WARNING: "red"}  # by util_level
STALE = "dim"  # a lost GPU's last values


@dataclass(frozen=True)
class RowLayout:
    """Column widths of the GPU rows for one pane width (the flags always keep their room)."""

    host: int
    bar: int
    spark: int  # 0: no sparkline column
    compact: bool  # short memory column ("0.5/16G")

    @classmethod
    def fit(cls, width: int, flags_width: int) -> RowLayout:
        compact = width < 62
        host = 6 if compact else 10
        fixed = host + 1 + 3 + 5 + (9 if compact else 14) + 6 + 7  # name, index, %, mem, °C, W
        rest = width - fixed - flags_width - 1
        bar = max(4, min(MAX_BAR, rest // 2))
        spark = min(MAX_SPARK, rest - bar - 1)
        return cls(host, bar, spark if spark >= 6 else 0, compact)


class GpuPane(ChangedRows, can_focus=True):
    BINDINGS = [
        Binding("up,k", "cursor(-1)", "up", show=False),
        Binding("down,j", "cursor(1)", "down", show=False),
        Binding("enter", "toggle", "expand"),
    ]
    cursor = reactive(0)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.board: GpuBoard | None = None
        self.thresholds = AlertThresholds()
        self.now = 0.0
        self.running = True
        self.expanded: set[str] = set()
        self.collapsed: set[str] = set()
        self._row_nodes: list[str] = []  # node of each rendered row, for the cursor
        self._layout = RowLayout.fit(80, 0)

    def show(self, board: GpuBoard, thresholds: AlertThresholds, now: float, running: bool) -> None:
        self.board, self.thresholds, self.now, self.running = board, thresholds, now, running
        self.show_rows()

    def action_cursor(self, delta: int) -> None:
        if self._row_nodes:
            self.cursor = max(0, min(len(self._row_nodes) - 1, self.cursor + delta))

    def action_toggle(self) -> None:
        if not self._row_nodes:
            return
        host = self._row_nodes[min(self.cursor, len(self._row_nodes) - 1)]
        if self._is_expanded(host):
            self.expanded.discard(host)
            self.collapsed.add(host)
        else:
            self.collapsed.discard(host)
            self.expanded.add(host)
        self.refresh()

    def _auto_collapse(self) -> bool:
        board = self.board
        return board is not None and len(board.gpus) + 1 > max(self.size.height, 8)  # rows + summary

    def _is_expanded(self, host: str) -> bool:
        if host in self.expanded:
            return True
        if host in self.collapsed:
            return False
        return not self._auto_collapse()

    # ------------------------------------------------------------------ rendering

    def rows_key(self) -> tuple:
        return (self.size, self.has_focus, self.cursor, frozenset(self.expanded), frozenset(self.collapsed))

    def build_rows(self) -> list[Text]:
        board = self.board
        width = max(self.size.width, 40)
        if board is None or not board.gpus:
            self._row_nodes = []
            waiting = (
                "waiting for GPU samples…" if board is None or not board.nodes else "no GPUs on this job"
            )
            return [Text(waiting, style="dim")]
        out = [self._summary(board)]
        rows: list[str] = []
        found = classify(board, self.thresholds, self.now, self.running)
        # Flags matter more than the sparkline: drop that column when a shown row's flags would not fit.
        flags_width = max(
            (
                sum(len(flag) + 1 for flag, _style in _flags(found.of_gpu(gpu)))
                for node in board.nodes.values()
                if self._is_expanded(node.host)
                for gpu in node.gpus.values()
            ),
            default=0,
        )
        self._layout = RowLayout.fit(width, flags_width)
        for host in sorted(board.nodes):
            node = board.nodes[host]
            if not node.gpus:
                continue
            if self._is_expanded(host):
                for gpu in node.ordered():
                    selected = len(rows) == self.cursor and self.has_focus  # the cursor's row
                    out.append(self._gpu_row(gpu, found.of_gpu(gpu), selected))
                    rows.append(host)
            else:
                selected = len(rows) == self.cursor and self.has_focus
                out.append(self._node_row(node, found, selected))
                rows.append(host)
        self._row_nodes = rows
        return out

    def _summary(self, board: GpuBoard) -> Text:
        s = board.summary()
        text = Text()
        if board.simulated:
            text.append(" SIMULATED ", style="bold reverse yellow")
            text.append(" ")
        fmt = lambda v: "?" if v is None else f"{v:.0f}"  # noqa: E731
        text.append(f"GPUs {s['gpus']}  util min/med/max {fmt(s['util_min'])}/{fmt(s['util_median'])}/")
        text.append(f"{fmt(s['util_max'])} %  mem {fmt(s['mem_pct'])} %  ")
        lost = s["nodes"] - s["nodes_reporting"]
        nodes_style = LEVEL_STYLE[Level.CRITICAL] if lost else ""
        text.append(f"nodes {s['nodes_reporting']}/{s['nodes']}", style=nodes_style)
        return text

    def _gpu_row(self, gpu: GpuState, conditions: tuple[Condition, ...], sel: bool) -> Text:
        layout = self._layout
        line = Text(style=SELECTED if sel else "")
        host = gpu.host[: layout.host].ljust(layout.host)
        pair = ""
        if gpu.package_id is not None:
            pair = "┐" if gpu.package_power else "┘"
        line.append(f"{host} {gpu.index if gpu.index is not None else '?'!s:>2}{pair or ' '}", style="bold")
        util = gpu.util
        stale = any(c.kind == "lost" for c in conditions)  # the last values before it was lost
        line.append(bar(util, layout.bar), style=STALE if stale else BAR_STYLE[util_level(util)])
        line.append(f" {util:3.0f}%" if util is not None else "   ?%")
        if layout.spark:
            line.append(" " + spark(list(gpu.recent), layout.spark), style="cyan")
        if layout.compact:
            line.append(f" {gib(gpu.mem_used):>4}/{gib(gpu.mem_total)}G")
        else:
            line.append(f" {gib(gpu.mem_used):>5}/{gib(gpu.mem_total)} GB")
        line.append(f" {gpu.temp:3.0f}°C" if gpu.temp is not None else "   –°C")
        if gpu.secondary_die:
            line.append("  pkg ", style="dim")
        elif gpu.power is not None:
            line.append(f" {gpu.power:4.0f} W" + ("ᵖ" if gpu.package_power else " "))
        else:
            line.append("    – W ")
        for flag, fstyle in _flags(conditions):
            line.append(" ")
            line.append(flag, style=fstyle)
        return line

    def _node_row(self, node: NodeState, found: Conditions, sel: bool) -> Text:
        line = Text(style=SELECTED if sel else "")
        gpus = node.ordered()
        utils = [g.util for g in gpus if g.util is not None]
        mean = statistics.fmean(utils) if utils else None
        line.append(f"▸ {node.host[:10].ljust(10)} ", style="bold")
        line.append(f"{len(gpus)}×GPU ")
        line.append(bar(mean, 8), style=BAR_STYLE[util_level(mean)])
        line.append(f" {mean:3.0f}%" if mean is not None else "   ?%")
        if utils:
            line.append(f" min {min(utils):3.0f}%", style="dim")
        used = sum(g.mem_used or 0 for g in gpus)
        total = sum(g.mem_total or 0 for g in gpus)
        if total:
            line.append(f"  mem {100 * used / total:3.0f}%")
        for condition in found.of_node(node):  # LOST or straggler
            line.append(f"  {_flag(condition)}", style=LEVEL_STYLE[condition.level])
        if node.lost:
            return line  # its GPUs' flags would only repeat LOST
        flagged: dict[str, list[Condition]] = {}
        for gpu in gpus:
            for condition in found.of_gpu(gpu):
                flagged.setdefault(condition.label.split(" ")[0], []).append(condition)
        for word, conditions in flagged.items():
            level = worst(conditions)
            line.append(f"  {len(conditions)} {word}{LEVEL_MARK.get(level, '')}", style=LEVEL_STYLE[level])
        return line


def _flag(condition: Condition) -> str:
    """A condition's flag: its label, marked ⚠ when it is also an alert."""
    return condition.label + LEVEL_MARK.get(condition.level, "")


def _flags(conditions: tuple[Condition, ...]) -> list[tuple[str, str]]:
    """(text, style) of each flag on a GPU's row."""
    return [(_flag(c), LEVEL_STYLE[c.level]) for c in conditions]
