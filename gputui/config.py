"""User settings: alert thresholds and dashboard rates, from a TOML file.

The file is ``$GPUTUI_CONFIG`` when set, else ``gputui/config.toml`` in the XDG config directory
(``~/.config/gputui/config.toml``; located with platformdirs, read with the standard library's tomllib).
A missing file means the defaults; a broken one is a one-line :class:`ConfigError`. Example::

    [alerts]
    gpu_idle_minutes = 2       # a GPU under idle_util_pct this long while the job runs
    idle_util_pct = 5
    no_output_minutes = 10     # no new line in the job's output this long: possible hang
    mem_high_pct = 95
    hot_temp_c = 85
    straggler_gap_pct = 30     # a node this many points of utilisation below the job's median

    [dashboard]
    refresh_s = 0.5            # screen refresh (charts redraw at most this often)
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """The config file cannot be used; ``str()`` is one line naming the file and the problem."""


@dataclass(frozen=True)
class AlertThresholds:
    gpu_idle_minutes: float = 2.0
    idle_util_pct: float = 5.0
    busy_util_pct: float = 30.0  # the job counts as busy when its median GPU is above this
    no_output_minutes: float = 10.0
    mem_high_pct: float = 95.0
    hot_temp_c: float = 85.0
    straggler_gap_pct: float = 30.0


@dataclass(frozen=True)
class DashboardSettings:
    refresh_s: float = 0.5


@dataclass(frozen=True)
class Config:
    alerts: AlertThresholds = field(default_factory=AlertThresholds)
    dashboard: DashboardSettings = field(default_factory=DashboardSettings)
    path: str | None = None  # the file it came from, if any


def config_path(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get("GPUTUI_CONFIG"):
        return Path(env["GPUTUI_CONFIG"])
    from platformdirs import user_config_dir

    return Path(user_config_dir("gputui", appauthor=False)) / "config.toml"


def _section(cls: type, raw: Any, name: str, path: Path) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: [{name}] must be a table")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{path}: unknown setting {name}.{unknown[0]} (known: {', '.join(sorted(known))})")
    values = {}
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{path}: {name}.{key} must be a number ≥ 0, not {value!r}")
        values[key] = float(value)
    return cls(**values)


def load_config(env: dict[str, str] | None = None) -> Config:
    """The settings in effect (defaults where the file is silent)."""
    path = config_path(env)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"alerts", "dashboard"})
    if unknown:
        raise ConfigError(f"{path}: unknown section [{unknown[0]}] (known: alerts, dashboard)")
    return Config(
        alerts=_section(AlertThresholds, data.get("alerts"), "alerts", path),
        dashboard=_section(DashboardSettings, data.get("dashboard"), "dashboard", path),
        path=str(path),
    )
