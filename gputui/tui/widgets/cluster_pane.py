"""The cluster pane: each partition's GPU type, free / total GPUs and node states (from one sinfo)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from gputui.slurm.cluster import STATE_CATEGORIES, PartitionGpus

STATE_STYLE = {"idle": "green", "mixed": "cyan", "allocated": "yellow", "drain": "red", "down": "bold red"}


def cluster_table(partitions: list[PartitionGpus]) -> Table | Text:
    if not partitions:
        return Text("no partitions known yet", style="dim")
    table = Table(box=None, padding=(0, 1), expand=False, show_edge=False, header_style="bold")
    for name in ("PARTITION", "GPU TYPE", "FREE/TOTAL GPUS", "CPUS IDLE", "NODES"):
        table.add_column(name, no_wrap=True)
    for part in partitions:
        states = Text("  ").join(
            Text(f"{part.node_states[c]} {c}", style=STATE_STYLE.get(c, ""))
            for c in STATE_CATEGORIES
            if part.node_states.get(c)
        )
        free = Text(f"{part.free_gpus}/{part.total_gpus}")
        if part.total_gpus:
            free.stylize("bold green" if part.free_gpus else "red")
        name = part.name + ("*" if part.default else "")
        if part.available and part.available != "up":
            name += f" ({part.available})"
        table.add_row(
            name, ",".join(part.gpu_types) or "-", free, f"{part.cpus_idle}/{part.cpus_total}", states
        )
    return table


class ClusterPane(Static):
    shown: list[PartitionGpus] | None = None

    def show(self, partitions: list[PartitionGpus]) -> None:
        """Redraw only when a partition changed (sinfo is asked every 60 s; the list more often)."""
        if partitions != self.shown:
            self.shown = partitions
            self.update(cluster_table(partitions))
