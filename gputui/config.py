"""User settings: alert thresholds, refresh rates and cluster presets, from a TOML file.

The file is ``$GPUTUI_CONFIG`` when set, else ``gputui/config.toml`` in the XDG config directory
(``~/.config/gputui/config.toml``; located with platformdirs, read with the standard library's tomllib).
A missing file means the defaults; a broken one is a one-line :class:`ConfigError` naming the file and
the line (``gputui`` then starts with the defaults and shows that line). Every number must be finite and
in its range (percentages 0-100, minutes up to a day, ``[jobs] refresh_s`` 0.5-3600 s as it calls Slurm,
``[dashboard] refresh_s`` 0.1-3600 s, ``ended_hours`` up to 720, ``[verdict] window_s`` 1-3600 s,
``rank_gap_pct`` up to 1000), every switch true or false. Flags and
environment variables (``GPUTUI_REFRESH``, ``GPUTUI_CLUSTER``) take precedence over the file, within the
same ranges. Example::

    [alerts]
    gpu_idle_minutes = 2       # a GPU under idle_util_pct this long while the job runs
    idle_util_pct = 5
    no_output_minutes = 10     # no new line in the job's output this long: possible hang
    mem_high_pct = 95
    hot_temp_c = 85
    straggler_gap_pct = 30     # a node this many points of utilisation below the job's median

    [verdict]                  # why a job is slow or stuck; every threshold: docs/verdicts.md
    sustain_minutes = 1        # a slow condition must last this long to be a verdict
    rank_gap_pct = 10          # a rank this much slower than the others' median: a straggler rank

    [dashboard]
    refresh_s = 0.5            # screen refresh (charts redraw at most this often)
    low_bandwidth = false      # slow links: slower refresh, no braille charts (also --low-bandwidth)

    [jobs]
    refresh_s = 5              # one squeue call this often on the jobs list
    ended_hours = 24           # also list jobs that ended this long ago (sacct), 0: none
    squeue_json = false        # read `squeue --json` instead of `squeue -O` (GPU placement included)

    [clusters.lumi]            # a preset: used when Slurm's ClusterName is "lumi" (or --cluster lumi)
    partition = "small-g"
    account = "project_465000000"
    time = "01:00:00"
    setup = ["module load LUMI", "source ~/venvs/torch/bin/activate"]

    [[patterns]]               # a log format taught (docs/log-formats.md, Teaching a format)
    pattern = "iter {step}: loss {loss}, time {step_time_ms}ms"
    where = "~/projects/gpt"   # optional: only logs under this folder; cluster = "lumi": only there
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from gputui.argtypes import SCREEN_REFRESH_S, SLURM_REFRESH_S, Range


class ConfigError(Exception):
    """The config file cannot be used; ``str()`` is one line naming the file and the problem."""


def _setting(default: float, limits: Range) -> Any:
    """A numeric setting with the range the file's value must fall in."""
    return field(default=default, metadata={"range": limits})


PERCENT = Range(0.0, 100.0, "%")
MINUTES = Range(0.0, 24 * 60.0, "minutes")


@dataclass(frozen=True)
class AlertThresholds:
    gpu_idle_minutes: float = _setting(2.0, MINUTES)
    idle_util_pct: float = _setting(5.0, PERCENT)
    busy_util_pct: float = _setting(30.0, PERCENT)  # the job counts as busy when its median GPU is above this
    no_output_minutes: float = _setting(10.0, MINUTES)
    mem_high_pct: float = _setting(95.0, PERCENT)
    hot_temp_c: float = _setting(85.0, Range(0.0, 150.0, "°C"))
    straggler_gap_pct: float = _setting(30.0, PERCENT)


@dataclass(frozen=True)
class VerdictSettings:
    """``[verdict]``: the thresholds of the verdict rules (:mod:`gputui.monitor.verdicts`)."""

    window_s: float = _setting(10.0, Range(1.0, 3600.0, "s"))
    sustain_minutes: float = _setting(1.0, MINUTES)
    cpu_busy_pct: float = _setting(90.0, PERCENT)
    burst_idle_pct: float = _setting(20.0, PERCENT)
    input_share_pct: float = _setting(30.0, PERCENT)
    comm_power_pct: float = _setting(50.0, PERCENT)
    comm_share_pct: float = _setting(40.0, PERCENT)
    rank_gap_pct: float = _setting(10.0, Range(0.0, 1000.0, "%"))
    rank_consistent_pct: float = _setting(80.0, PERCENT)
    idle_all_along_pct: float = _setting(90.0, PERCENT)
    pinned_util_pct: float = _setting(95.0, PERCENT)
    high_util_pct: float = _setting(80.0, PERCENT)
    low_util_pct: float = _setting(50.0, PERCENT)
    clock_drop_pct: float = _setting(20.0, PERCENT)
    power_limit_pct: float = _setting(98.0, PERCENT)
    mem_creep_pct: float = _setting(10.0, PERCENT)


@dataclass(frozen=True)
class DashboardSettings:
    refresh_s: float = _setting(0.5, SCREEN_REFRESH_S)
    low_bandwidth: bool = False  # slow links: a slower refresh, no braille charts (`--low-bandwidth`)


@dataclass(frozen=True)
class JobsSettings:
    refresh_s: float = _setting(5.0, SLURM_REFRESH_S)  # one squeue call per refresh
    ended_hours: float = _setting(24.0, Range(0.0, 30 * 24.0, "hours"))  # sacct over this many hours
    squeue_json: bool = False


@dataclass(frozen=True)
class ServeSettings:
    max_viewers: float = _setting(2.0, Range(1.0, 64.0, "viewers"))  # gputui serve: each a gputui process


@dataclass(frozen=True)
class ClusterPreset:
    """Launch-form defaults for one cluster."""

    partition: str | None = None
    account: str | None = None
    time: str | None = None
    setup: tuple[str, ...] = ()


@dataclass(frozen=True)
class PatternSetting:
    """A taught log format (``[[patterns]]``): for logs under the folder ``where``, on ``cluster``."""

    pattern: str
    where: str | None = None
    cluster: str | None = None


@dataclass(frozen=True)
class Config:
    alerts: AlertThresholds = field(default_factory=AlertThresholds)
    verdict: VerdictSettings = field(default_factory=VerdictSettings)
    dashboard: DashboardSettings = field(default_factory=DashboardSettings)
    jobs: JobsSettings = field(default_factory=JobsSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)
    clusters: dict[str, ClusterPreset] = field(default_factory=dict)
    patterns: tuple[PatternSetting, ...] = ()  # [[patterns]]: log formats taught
    cluster: str | None = None  # preset chosen by --cluster / GPUTUI_CLUSTER (else Slurm's ClusterName)
    path: str | None = None  # the file it came from, if any

    def preset(self, cluster_name: str) -> ClusterPreset:
        """The preset for ``--cluster``/``GPUTUI_CLUSTER`` if given, else for Slurm's cluster name."""
        return self.clusters.get(self.cluster or cluster_name) or ClusterPreset()


SECTIONS = ("alerts", "verdict", "dashboard", "jobs", "serve", "clusters", "patterns")


def config_path(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get("GPUTUI_CONFIG"):
        return Path(env["GPUTUI_CONFIG"])
    from platformdirs import user_config_dir

    return Path(user_config_dir("gputui", appauthor=False)) / "config.toml"


class _Where:
    """Line numbers of sections and keys in the file's text, for error messages."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def line(self, section: str, key: str | None = None) -> int | None:
        current = None
        for number, raw in enumerate(self.lines, 1):
            line = raw.strip()
            header = re.match(r"\[\s*([^\]]+?)\s*\]", line)
            if header:
                current = header.group(1).replace('"', "")
                if key is None and current == section:
                    return number
                continue
            name = re.match(r'"?([A-Za-z0-9_.-]+)"?\s*=', line)
            in_place = current == section or (current is None and name and name.group(1) == (key or section))
            if name and in_place and (key is None or name.group(1) == key):
                return number
        return None

    def error(self, message: str, section: str, key: str | None = None) -> ConfigError:
        number = self.line(section, key)
        message = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)  # one line
        return ConfigError(f"{self.path}:{number}: {message}" if number else f"{self.path}: {message}")


def _number(where: _Where, section: str, key: str, value: Any, limits: Range) -> float:
    problem = limits.problem(value)
    if problem:
        raise where.error(f"{section}.{key} {problem}, not {_shown(value)}", section, key)
    return float(value)


def _shown(value: Any) -> str:
    """A TOML value for a one-line message: its repr, cut short (a table or a long string)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _section(cls: type, raw: Any, name: str, where: _Where) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        raise where.error(f"[{name}] must be a table", name)
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise where.error(
            f"unknown setting {name}.{unknown[0]} (known: {', '.join(sorted(known))})", name, unknown[0]
        )
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if known[key].type in (bool, "bool"):
            if not isinstance(value, bool):
                raise where.error(f"{name}.{key} must be true or false, not {_shown(value)}", name, key)
            values[key] = value
        else:
            values[key] = _number(where, name, key, value, known[key].metadata["range"])
    return cls(**values)


def _presets(raw: Any, where: _Where) -> dict[str, ClusterPreset]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise where.error("[clusters] must hold tables such as [clusters.NAME]", "clusters")
    out = {}
    for cluster, table in raw.items():
        section = f"clusters.{cluster}"
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", cluster):
            raise where.error(f"[{section}]: a cluster name is a word such as lumi", "clusters", cluster)
        if not isinstance(table, dict):
            raise where.error(f"clusters.{cluster} must be a table [clusters.{cluster}]", "clusters", cluster)
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key in ("partition", "account", "time"):
                if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_.:+-]+", value):
                    raise where.error(
                        f'{section}.{key} must be a word such as "gpu", not {_shown(value)}', section, key
                    )
                values[key] = value
            elif key == "setup":
                if not isinstance(value, list) or not all(
                    isinstance(v, str) and "\n" not in v for v in value
                ):
                    raise where.error(f"{section}.setup must be a list of one-line strings", section, key)
                values[key] = tuple(value)
            else:
                raise where.error(
                    f"unknown setting {section}.{key} (known: account, partition, setup, time)", section, key
                )
        out[str(cluster)] = ClusterPreset(**values)
    return out


def _pattern_error(where: _Where, index: int, key: str | None, message: str) -> ConfigError:
    """``FILE:LINE: patterns[N].KEY ...``: the line of the N-th ``[[patterns]]`` table (or its key)."""
    seen, number = 0, None
    for at, raw in enumerate(where.lines, 1):
        line = raw.strip()
        if re.fullmatch(r"\[\[\s*patterns\s*\]\]\s*(#.*)?", line):
            seen += 1
            number = at if seen == index else number
        elif number is not None and seen == index and key and re.match(rf"{key}\s*=", line):
            number = at
            break
        elif line.startswith("[") and seen == index:
            break
    message = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
    return ConfigError(f"{where.path}:{number}: {message}" if number else f"{where.path}: {message}")


def _patterns(raw: Any, where: _Where) -> tuple[PatternSetting, ...]:
    """``[[patterns]]`` tables: ``pattern`` (compiled now: a bad one is a one-line error), ``where``,
    ``cluster``."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise where.error('patterns must be [[patterns]] tables with pattern = "..."', "patterns")
    from gputui.logs.formats.taught import compile_pattern

    out = []
    for index, table in enumerate(raw, 1):
        name = f"patterns[{index}]"
        if not isinstance(table, dict):
            raise _pattern_error(where, index, None, f'{name} must be a table with pattern = "..."')
        unknown = sorted(set(table) - {"pattern", "where", "cluster"})
        if unknown:
            raise _pattern_error(
                where,
                index,
                unknown[0],
                f"unknown setting {name}.{unknown[0]} (known: cluster, pattern, where)",
            )
        text = table.get("pattern")
        if not isinstance(text, str):
            raise _pattern_error(
                where, index, None, f'{name} needs pattern = "..." (text with {{name}} places)'
            )
        try:
            compile_pattern(text)
        except ValueError as exc:
            raise _pattern_error(where, index, "pattern", f"{name}.pattern {_shown(text)}: {exc}") from None
        folder, cluster = table.get("where"), table.get("cluster")
        if folder is not None and (not isinstance(folder, str) or not folder.strip() or "\n" in folder):
            raise _pattern_error(
                where, index, "where", f"{name}.where must be a folder, not {_shown(folder)}"
            )
        if cluster is not None and (
            not isinstance(cluster, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", cluster)
        ):
            raise _pattern_error(
                where,
                index,
                "cluster",
                f'{name}.cluster must be a word such as "lumi", not {_shown(cluster)}',
            )
        out.append(PatternSetting(text, folder, cluster))
    return tuple(out)


def load_config(env: dict[str, str] | None = None) -> Config:
    """The settings in effect (defaults where the file is silent), environment variables applied."""
    env = dict(os.environ) if env is None else env
    path = config_path(env)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return apply_environment(Config(), env)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"at line (\d+)", str(exc))
        prefix = f"{path}:{line.group(1)}" if line else str(path)
        raise ConfigError(f"{prefix}: not valid TOML: {exc}") from None
    where = _Where(path, text)
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise where.error(f"unknown section [{unknown[0]}] (known: {', '.join(SECTIONS)})", unknown[0])
    config = Config(
        alerts=_section(AlertThresholds, data.get("alerts"), "alerts", where),
        verdict=_section(VerdictSettings, data.get("verdict"), "verdict", where),
        dashboard=_section(DashboardSettings, data.get("dashboard"), "dashboard", where),
        jobs=_section(JobsSettings, data.get("jobs"), "jobs", where),
        serve=_section(ServeSettings, data.get("serve"), "serve", where),
        clusters=_presets(data.get("clusters"), where),
        patterns=_patterns(data.get("patterns"), where),
        path=str(path),
    )
    return apply_environment(config, env)


def apply_environment(config: Config, env: dict[str, str]) -> Config:
    """``GPUTUI_REFRESH`` (jobs list seconds) and ``GPUTUI_CLUSTER`` (preset name) over the file."""
    if env.get("GPUTUI_CLUSTER"):
        config = replace(config, cluster=env["GPUTUI_CLUSTER"])
    raw = env.get("GPUTUI_REFRESH")
    if raw:
        shown = _shown(raw)
        try:
            seconds = float(raw)
        except ValueError:
            raise ConfigError(f"GPUTUI_REFRESH={shown} is not a number of seconds") from None
        problem = SLURM_REFRESH_S.problem(seconds)
        if problem:
            raise ConfigError(f"GPUTUI_REFRESH={shown} {problem} (one squeue call each)")
        config = replace(config, jobs=replace(config.jobs, refresh_s=seconds))
    return config


def load_config_or_defaults(env: dict[str, str] | None = None) -> tuple[Config, str | None]:
    """The settings, or the defaults and the one-line reason the file was not used."""
    try:
        return load_config(env), None
    except ConfigError as exc:
        try:
            fallback = apply_environment(Config(), dict(os.environ) if env is None else env)
        except ConfigError:
            fallback = Config()
        return fallback, f"{exc} — using the default settings"
