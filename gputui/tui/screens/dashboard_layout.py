"""How the dashboard's left column shares its rows: the GPU pane takes the rows its GPUs need (bounded, so
a big job scrolls or rolls nodes up rather than pushing the charts off), the node heatmap the rows its
nodes need (two per row, bounded), and the time chart the rest. Pure arithmetic, no Textual."""

from __future__ import annotations

from dataclasses import dataclass

BORDER = 2  # a round border's top and bottom rows
GPU_SHARE = 0.6  # the GPU pane takes at most this share of the column
HEATMAP_SHARE = 0.3  # the heatmap at most this share
COLLAPSE_FROM = 8  # GpuPane rolls nodes up when its rows exceed max(its height, this)
TIMELINE_MIN = 10  # the time chart keeps at least this many rows (border, frame and ticks: 5; plot: 5)
SMALL_TIMELINE_MIN = 8  # in a small terminal: shown only with this many rows left (plot: 3 rows)
HEATMAP_FROM = 3  # nodes from which the heatmap is shown (with two, the GPU rows already compare them)


@dataclass(frozen=True)
class LeftColumn:
    gpus: int  # rows of the GPU pane (border included)
    heatmap: int  # rows of the heatmap (border included); 0: not shown
    heatmap_nodes: int  # nodes the heatmap has room for (two per row)
    timeline: bool = True  # the time chart is shown (it takes the rows left)


def gpu_rows(gpus: int) -> int:
    """Text rows the GPU pane needs: the summary line and one row per GPU (or one waiting line)."""
    return 1 + gpus if gpus else 1


def left_column(
    height: int, gpus: int, nodes: int, *, timeline: bool = True, small: bool = False
) -> LeftColumn:
    """Rows for the GPU pane and the heatmap in a left column ``height`` rows tall. Without the time
    chart (``timeline`` False: a slow link) the GPU pane keeps the whole column and there is no heatmap.
    In a ``small`` terminal there is no heatmap, and the time chart only takes the rows every GPU's row
    leaves, when they are enough for a plot (a 2-GPU job at 80×24 left 8 rows of its GPU pane empty)."""
    if not timeline:
        return LeftColumn(height, 0, 0, timeline=False)
    if small:
        need = gpu_rows(gpus) + BORDER
        if height - need < SMALL_TIMELINE_MIN:
            return LeftColumn(height, 0, 0, timeline=False)
        return LeftColumn(need, 0, 0)
    heatmap = heatmap_nodes = 0
    if nodes >= HEATMAP_FROM:  # before extra GPU rows: with many nodes the GPU pane rolls them up anyway
        rows = min((nodes + 1) // 2, max(1, int(height * HEATMAP_SHARE) - BORDER))
        if height - TIMELINE_MIN - 3 - (rows + BORDER) >= 0:
            heatmap, heatmap_nodes = rows + BORDER, min(nodes, 2 * rows)
    cap = min(max(3, int(height * GPU_SHARE)), max(3, height - TIMELINE_MIN - heatmap))
    need = gpu_rows(gpus)
    if need + BORDER > cap and need > max(cap - BORDER, COLLAPSE_FROM):  # the pane rolls nodes up
        need = 1 + nodes
    return LeftColumn(min(need + BORDER, cap), heatmap, heatmap_nodes)
