"""The settings in effect as text (the ``S`` screen of the jobs list): file, values, cluster preset."""

from __future__ import annotations

from dataclasses import asdict

from gputui.config import Config, config_path


def settings_text(config: Config, cluster_name: str = "") -> str:
    path = config.path or str(config_path())
    lines = [
        f"settings file: {path}" + ("" if config.path else " (not found: defaults in use)"),
        "precedence: command-line flags, then GPUTUI_REFRESH / GPUTUI_CLUSTER, then the file",
        "",
        "[jobs]",
        *(f"{k} = {v}" for k, v in asdict(config.jobs).items()),
        "",
        "[dashboard]",
        *(f"{k} = {v}" for k, v in asdict(config.dashboard).items()),
        "",
        "[alerts]",
        *(f"{k} = {v}" for k, v in asdict(config.alerts).items()),
    ]
    chosen = config.cluster or cluster_name
    lines += [
        "",
        f"cluster: {cluster_name or '?'}"
        + (f" (preset {config.cluster!r} chosen)" if config.cluster else ""),
    ]
    for name, preset in sorted(config.clusters.items()):
        mark = "  ← in use" if name == chosen else ""
        lines.append(f"[clusters.{name}]{mark}")
        lines += [f"{k} = {v!r}" for k, v in asdict(preset).items() if v]
    if not config.clusters:
        lines.append("no [clusters.NAME] presets (partition, account, time, setup for the launch form)")
    return "\n".join(lines) + "\n"
