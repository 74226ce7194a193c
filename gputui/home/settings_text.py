"""The settings in effect as TOML text (the ``S`` screen of the jobs list): file, values, cluster preset."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from gputui.config import Config, config_path


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _table(name: str, values: dict[str, Any], mark: str = "") -> list[str]:
    return [f"[{name}]{mark}", *(f"{k} = {_toml(v)}" for k, v in values.items() if v not in (None, (), []))]


def settings_text(config: Config, cluster_name: str = "", problem: str | None = None) -> str:
    """The file in use (or why not), the precedence, and every value in effect, as TOML."""
    path = config.path or str(config_path())
    if problem:
        where = f"# settings file: {path} is NOT in use: {problem}"
    else:
        where = f"# settings file: {path}" + ("" if config.path else " (not found: defaults in use)")
    lines = [
        where,
        "# precedence: flags (--refresh, --cluster), then GPUTUI_REFRESH / GPUTUI_CLUSTER, then the file",
        "",
        *_table("jobs", asdict(config.jobs)),
        "",
        *_table("dashboard", asdict(config.dashboard)),
        "",
        *_table("alerts", asdict(config.alerts)),
        "",
        *_table("verdict", asdict(config.verdict)),
    ]
    chosen = config.cluster or cluster_name
    lines += [
        "",
        f"# cluster: {cluster_name or '?'}"
        + (f", preset {config.cluster!r} chosen" if config.cluster else ""),
    ]
    for name, preset in sorted(config.clusters.items()):
        lines += _table(f"clusters.{name}", asdict(preset), "  # in use" if name == chosen else "")
    if not config.clusters:
        lines.append("# no [clusters.NAME] presets (partition, account, time, setup for the launch form)")
    return "\n".join(lines) + "\n"
