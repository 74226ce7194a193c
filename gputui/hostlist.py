"""Slurm host lists and task counts, expanded without calling Slurm.

``node[01-03,07],gpu-a100-[1-2]`` → ``node01 node02 node03 node07 gpu-a100-1 gpu-a100-2`` and
``2(x3),1`` → ``[2, 2, 2, 1]``, as ``scontrol show hostnames`` and ``SLURM_TASKS_PER_NODE`` mean them.
"""

from __future__ import annotations

import re

_TASKS = re.compile(r"^(\d+)(?:\(x(\d+)\))?$")


class HostlistError(ValueError):
    """A host list or tasks-per-node string that Slurm would not produce."""


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
            if depth > 1:
                raise HostlistError(f"nested brackets in host list {text!r}")
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"unbalanced ']' in host list {text!r}")
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise HostlistError(f"unbalanced '[' in host list {text!r}")
    parts.append(text[start:])
    return [p for p in parts if p]


def _expand_range(spec: str, whole: str) -> list[str]:
    out: list[str] = []
    for item in spec.split(","):
        low, _, high = item.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise HostlistError(f"bad range {item!r} in host list {whole!r}")
        width = len(low)
        first, last = int(low), int(high or low)
        if last < first:
            raise HostlistError(f"descending range {item!r} in host list {whole!r}")
        if last - first > 100_000:
            raise HostlistError(f"range {item!r} too large in host list {whole!r}")
        out.extend(str(n).zfill(width) for n in range(first, last + 1))
    return out


def _expand_one(pattern: str, whole: str) -> list[str]:
    """Expand one host pattern, which may hold several bracket groups (``r[1-2]n[01-02]``)."""
    match = re.search(r"\[([^\]]*)\]", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    rests = _expand_one(tail, whole)
    return [head + mid + rest for mid in _expand_range(match.group(1), whole) for rest in rests]


def expand_hostlist(hostlist: str) -> list[str]:
    """Expand a Slurm host list into host names, in Slurm's order. Raises :class:`HostlistError`."""
    text = hostlist.strip()
    if not text:
        return []
    if any(ch.isspace() for ch in text):
        raise HostlistError(f"whitespace in host list {hostlist!r}")
    hosts: list[str] = []
    for pattern in _split_top_level(text):
        hosts.extend(_expand_one(pattern, text))
    return hosts


def expand_tasks_per_node(spec: str) -> list[int]:
    """Expand ``SLURM_TASKS_PER_NODE`` (``2(x3),1``) into one count per node."""
    counts: list[int] = []
    for item in filter(None, spec.strip().split(",")):
        match = _TASKS.match(item.strip())
        if match is None:
            raise HostlistError(f"bad tasks-per-node item {item!r} in {spec!r}")
        counts.extend([int(match.group(1))] * int(match.group(2) or 1))
    return counts
