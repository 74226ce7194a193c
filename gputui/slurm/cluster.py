"""The cluster's partitions and their GPUs, for the home screen: where can a job start now?

* Read: **one** ``sinfo -h -N -O NodeList:\\x1F,Partition:\\x1F,...`` call (see :data:`SINFO_FIELDS`): one
  line per node and partition with the partition's availability, the node's ``StateLong``, ``Gres``,
  ``GresUsed``, ``CPUsState`` and memory. Fields with an empty size and a suffix print unpadded; a line is
  used only if it splits into exactly the expected number of parts, others are counted in ``skipped``.
* Free GPUs: ``total - used`` summed over the nodes that can take a job, i.e. whose base state is ``idle``
  or ``mixed`` with no flag but ``~`` (powered down, Slurm boots it for the job), in a partition that is
  ``up``. Not free: ``allocated``, ``completing``, ``drain*``, ``down``, ``fail*``, ``maint``,
  ``reserved``, ``future``, ``unknown``, and any node flagged ``*`` (not responding), ``$`` (maintenance
  reservation), ``@``/``^`` (reboot), ``#``/``!``/``%`` (power transitions) or ``-`` (planned).
* A node in several partitions is counted in each; one listed twice for a partition, once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gputui.hostlist import HostlistError, expand_hostlist
from gputui.slurm.commands import run_slurm

SEP = "\x1f"
#: sinfo -O fields, in order.
SINFO_FIELDS = (
    "NodeList",
    "Partition",
    "Available",
    "StateLong",
    "Gres",
    "GresUsed",
    "CPUsState",
    "Memory",
    "AllocMem",
)
#: Node state categories counted per partition, in display order.
STATE_CATEGORIES = ("idle", "mixed", "allocated", "drain", "down", "other")
_FLAGS = "*~#!%$@^-"
_USABLE_FLAGS = "~"
_NULL = ("", "(null)", "N/A", "none")
_PAREN_TAIL = re.compile(r"\([^()]*\)$")  # (S:0-1), (IDX:0,2-3), (IDX:N/A)
_SUFFIX = {"k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


@dataclass
class NodeGpus:
    """One node: its state and GPUs (``gpu_type`` None when untyped, ``a100,v100`` when mixed)."""

    node: str
    partitions: list[str] = field(default_factory=list)
    state: str = ""  # StateLong as printed: idle, mixed, drained, down*, idle~ ...
    gpu_type: str | None = None
    total: int = 0
    used: int = 0
    cpus_idle: int = 0
    cpus_total: int = 0
    memory_mb: int | None = None
    alloc_mem_mb: int | None = None

    @property
    def base_state(self) -> str:
        return self.state.lower().rstrip(_FLAGS).split("+")[0]

    @property
    def flags(self) -> str:
        return self.state[len(self.state.rstrip(_FLAGS)) :]

    @property
    def usable(self) -> bool:
        """Can take a job now: idle or mixed, no flag but ``~``, no ``+drain``-style extra state."""
        plain = "+" not in self.state
        return self.base_state in ("idle", "mixed") and plain and set(self.flags) <= set(_USABLE_FLAGS)

    @property
    def category(self) -> str:
        """One of :data:`STATE_CATEGORIES`."""
        base, extra = self.base_state, self.state.lower().rstrip(_FLAGS).split("+")[1:]
        if "*" in self.flags or base in ("down", "fail", "failing") or "down" in extra:
            return "down"
        if base.startswith("drain") or any(e.startswith("drain") for e in extra):
            return "drain"
        if self.usable:
            return base
        return "allocated" if base in ("allocated", "completing") else "other"

    @property
    def free(self) -> int:
        return max(self.total - self.used, 0)


@dataclass
class PartitionGpus:
    """One partition; ``free_gpus`` counts only usable nodes (module docstring) of an ``up`` partition."""

    name: str
    default: bool = False
    available: str = "up"  # partition state: up, down, drain, inact
    gpu_types: list[str] = field(default_factory=list)  # typed GPUs only, in node order
    total_gpus: int = 0
    used_gpus: int = 0
    free_gpus: int = 0
    nodes_total: int = 0
    node_states: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATE_CATEGORIES, 0))
    cpus_idle: int = 0
    cpus_total: int = 0
    nodes: list[NodeGpus] = field(default_factory=list)

    def add(self, node: NodeGpus) -> None:
        self.nodes.append(node)
        self.nodes_total += 1
        self.node_states[node.category] += 1
        self.total_gpus += node.total
        self.used_gpus += min(node.used, node.total)
        if node.usable and self.available == "up":
            self.free_gpus += node.free
        for gpu_type in (node.gpu_type or "").split(","):
            if gpu_type and gpu_type not in self.gpu_types:
                self.gpu_types.append(gpu_type)
        self.cpus_idle += node.cpus_idle
        self.cpus_total += node.cpus_total


@dataclass
class ClusterSnapshot:
    """Partitions (default first, then by name), nodes (sinfo's order) and unreadable lines."""

    partitions: list[PartitionGpus] = field(default_factory=list)
    nodes: list[NodeGpus] = field(default_factory=list)
    skipped: int = 0


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside parentheses: ``gpu:2(IDX:0,2),gpu:v100:1``."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _count(text: str) -> int | None:
    text = text.strip().lower()
    scale = _SUFFIX.get(text[-1:], 1)
    digits = text[:-1] if scale > 1 else text
    return int(digits) * scale if digits.isdigit() else None


def parse_gres(text: str) -> list[tuple[str | None, int]]:
    """GPU ``(type, count)`` pairs of a Gres or GresUsed value; other GRES and ``(null)`` give nothing.

    ``gpu:a100:4(S:0-1),shard:8`` → ``[("a100", 4)]``; ``gpu:(null):0`` → ``[(None, 0)]``; ``gpu`` → 1."""
    out: list[tuple[str | None, int]] = []
    for item in _split_top_level(text.strip()):
        parts = _PAREN_TAIL.sub("", item.strip()).split(":")
        if parts[0] != "gpu":
            continue
        gpu_type = parts[1] if len(parts) == 3 else None
        count = _count(parts[-1]) if len(parts) > 1 else 1
        if len(parts) == 2 and count is None:  # gpu:a100 means one a100
            gpu_type, count = parts[1], 1
        if count is None or len(parts) > 3:
            continue
        out.append((None if gpu_type in _NULL else gpu_type, count))
    return out


def parse_gres_used(text: str) -> list[tuple[str | None, int]]:
    """GPUs in use from GresUsed: ``gpu:a100:2(IDX:0-1)``, ``gpu:tesla:0(IDX:N/A)``, ``gpu:0``."""
    return parse_gres(text)


def sinfo_argv() -> list[str]:
    return ["sinfo", "-h", "-N", "-O", ",".join(f"{name}:{SEP}" for name in SINFO_FIELDS)]


def _int(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


def _node(parts: list[str]) -> NodeGpus:
    gres = parse_gres(parts[4])
    types = [t for t, _ in gres if t]
    cpus = [_int(p) or 0 for p in parts[6].split("/")]
    return NodeGpus(
        node=parts[0].strip(),
        state=parts[3].strip(),
        gpu_type=",".join(dict.fromkeys(types)) or None,
        total=sum(n for _, n in gres),
        used=sum(n for _, n in parse_gres_used(parts[5])),
        cpus_idle=cpus[1] if len(cpus) == 4 else 0,
        cpus_total=cpus[3] if len(cpus) == 4 else 0,
        memory_mb=_int(parts[7]),
        alloc_mem_mb=_int(parts[8]),
    )


def parse_snapshot(text: str) -> ClusterSnapshot:
    """A :class:`ClusterSnapshot` from the output of :func:`sinfo_argv`."""
    snap = ClusterSnapshot()
    nodes: dict[str, NodeGpus] = {}
    partitions: dict[str, PartitionGpus] = {}
    for line in text.splitlines():
        parts = line.split(SEP)
        if len(parts) != len(SINFO_FIELDS) + 1 or not parts[0].strip() or not parts[1].strip():
            snap.skipped += bool(line.strip())
            continue
        raw_name = parts[1].strip()
        name = raw_name.rstrip("*")
        part = partitions.setdefault(name, PartitionGpus(name, available=parts[2].strip().lower()))
        part.default = part.default or raw_name.endswith("*")
        try:
            hosts = expand_hostlist(parts[0].strip())
        except HostlistError:
            hosts = [parts[0].strip()]
        for host in hosts:
            node = nodes.get(host)
            if node is None:
                node = nodes[host] = _node([host, *parts[1:]])
            if name not in node.partitions:
                node.partitions.append(name)
                part.add(node)
    snap.nodes = list(nodes.values())
    snap.partitions = sorted(partitions.values(), key=lambda p: (not p.default, p.name))
    return snap


def parse_sinfo(text: str) -> list[PartitionGpus]:
    """Partitions from the output of :func:`sinfo_argv` (use :func:`parse_snapshot` for ``skipped``)."""
    return parse_snapshot(text).partitions


def cluster_gpus(env: dict[str, str] | None = None, timeout: float = 15.0) -> ClusterSnapshot:
    """The cluster's partitions and GPUs: exactly one sinfo call (SlurmError on failure)."""
    return parse_snapshot(run_slurm(sinfo_argv(), env=env, timeout=timeout).stdout)
