"""gputui.config's [jobs] and [clusters.NAME] settings, errors naming the file's line, the fallback to the
defaults, GPUTUI_REFRESH/GPUTUI_CLUSTER, Config.preset, and gputui.home.settings_text."""

from __future__ import annotations

from pathlib import Path

import pytest

from gputui.config import (
    ClusterPreset,
    Config,
    ConfigError,
    JobsSettings,
    apply_environment,
    config_path,
    load_config,
    load_config_or_defaults,
)
from gputui.home.settings_text import settings_text

EXAMPLE = """\
# gputui settings
[jobs]
refresh_s = 2
ended_hours = 0
squeue_json = true

[dashboard]
refresh_s = 1

[clusters.lumi]            # a preset
partition = "small-g"
account = "project_465000000"
time = "01:00:00"
setup = ["module load LUMI", "source ~/venvs/torch/bin/activate"]

[clusters."my-ci"]
partition = "debug"
"""


def write(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return {"GPUTUI_CONFIG": str(path)}


def error_of(tmp_path: Path, text: str, **env: str) -> str:
    with pytest.raises(ConfigError) as err:
        load_config({**write(tmp_path, text), **env})
    message = str(err.value)
    assert "\n" not in message
    return message


# --------------------------------------------------------------------------- values


def test_jobs_and_cluster_presets(tmp_path) -> None:
    env = write(tmp_path, EXAMPLE)
    config = load_config(env)
    assert config.jobs == JobsSettings(refresh_s=2.0, ended_hours=0.0, squeue_json=True)
    assert config.dashboard.refresh_s == 1.0
    assert config.clusters == {
        "lumi": ClusterPreset(
            partition="small-g",
            account="project_465000000",
            time="01:00:00",
            setup=("module load LUMI", "source ~/venvs/torch/bin/activate"),
        ),
        "my-ci": ClusterPreset(partition="debug"),
    }
    assert config.path == env["GPUTUI_CONFIG"]
    assert config.cluster is None
    assert config.alerts == Config().alerts


def test_missing_file_means_defaults(tmp_path) -> None:
    config = load_config({"GPUTUI_CONFIG": str(tmp_path / "absent.toml")})
    assert config == Config()
    assert config.jobs == JobsSettings(refresh_s=5.0, ended_hours=24.0, squeue_json=False)


def test_config_path(tmp_path) -> None:
    assert config_path({"GPUTUI_CONFIG": "/etc/g.toml"}) == Path("/etc/g.toml")
    default = config_path({})
    assert default.name == "config.toml" and default.parent.name == "gputui"


# --------------------------------------------------------------------------- errors with line numbers


def test_unknown_key_names_its_line(tmp_path) -> None:
    text = "[jobs]\nrefresh_s = 2\nended_hours = 1\nrefresh = 3\n"
    assert error_of(tmp_path, text) == (
        f"{tmp_path / 'config.toml'}:4: unknown setting jobs.refresh "
        "(known: ended_hours, refresh_s, squeue_json)"
    )


def test_same_key_in_two_sections_names_the_right_line(tmp_path) -> None:
    text = '[dashboard]\nrefresh_s = 0.5\n\n[jobs]\nended_hours = 3\nrefresh_s = "fast"\n'
    message = error_of(tmp_path, text)
    what = "jobs.refresh_s must be a number from 0.5 to 3600 s, not 'fast'"
    assert message == f"{tmp_path / 'config.toml'}:6: {what}"


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("[jobs]\nsqueue_json = 'yes'\n", 2, "jobs.squeue_json must be true or false, not 'yes'"),
        ("[jobs]\n\nrefresh_s = true\n", 3, "jobs.refresh_s must be a number from 0.5 to 3600 s, not True"),
        ("[jobs]\nended_hours = -1\n", 2, "jobs.ended_hours must be from 0 to 720 hours, not -1"),
        (
            "x = 1\n[jobs]\n",
            1,
            "unknown section [x] (known: alerts, verdict, dashboard, jobs, serve, clusters, patterns)",
        ),
        (
            "# c\n[job]\nrefresh_s = 1\n",
            2,
            "unknown section [job] (known: alerts, verdict, dashboard, jobs, serve, clusters, patterns)",
        ),
        ("jobs = 3\n", 1, "[jobs] must be a table"),
        ("[clusters]\nlumi = 3\n", 2, "clusters.lumi must be a table [clusters.lumi]"),
        (
            '[clusters.lumi]\npartition = "small-g"\naccount = "a b"\n',
            3,
            "clusters.lumi.account must be a word such as \"gpu\", not 'a b'",
        ),
        (
            '[clusters."my-ci"]\n\ntime = 60\n',
            3,
            'clusters.my-ci.time must be a word such as "gpu", not 60',
        ),
        (
            '[clusters.lumi]\nsetup = "module load LUMI"\n',
            2,
            "clusters.lumi.setup must be a list of one-line strings",
        ),
        (
            '[clusters.lumi]\nsetup = ["a", "b\\nc"]\n',
            2,
            "clusters.lumi.setup must be a list of one-line strings",
        ),
        (
            '[clusters.a]\npartition = "x"\n[clusters.b]\nqos = "high"\n',
            4,
            "unknown setting clusters.b.qos (known: account, partition, setup, time)",
        ),
        (
            "[alerts]\ngpu_idle_minutes = 2\n# idle = 3\nidle = 4\n",
            4,
            "unknown setting alerts.idle (known: busy_util_pct, gpu_idle_minutes, hot_temp_c, idle_util_pct, "
            "mem_high_pct, no_output_minutes, straggler_gap_pct)",
        ),
    ],
)
def test_errors_name_the_line(tmp_path, text: str, line: int, what: str) -> None:
    assert error_of(tmp_path, text) == f"{tmp_path / 'config.toml'}:{line}: {what}"


@pytest.mark.parametrize("section", ["jobs", "dashboard"])
def test_zero_refresh_refused_like_the_flag_and_the_environment(tmp_path, section: str) -> None:
    """``--refresh 0`` and ``GPUTUI_REFRESH=0`` are refused; the file's refresh_s feeds the same
    ``set_interval`` and must be more than 0 too (``ended_hours = 0`` stays allowed: it means none)."""
    message = error_of(tmp_path, f"[{section}]\nrefresh_s = 0\n")
    assert message.startswith(f"{tmp_path / 'config.toml'}:2: {section}.refresh_s")


def test_bad_toml_names_its_line(tmp_path) -> None:
    text = "[jobs]\nrefresh_s = 2\nrefresh fast\n"
    message = error_of(tmp_path, text)
    assert message.startswith(f"{tmp_path / 'config.toml'}:3: not valid TOML: ")
    assert "line 3" in message


def test_unreadable_file(tmp_path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"[jobs]\nrefresh_s = \xff\n")
    with pytest.raises(ConfigError, match=r"^.*config\.toml: cannot read: "):
        load_config({"GPUTUI_CONFIG": str(path)})
    with pytest.raises(ConfigError, match=r": cannot read: "):
        load_config({"GPUTUI_CONFIG": str(tmp_path)})  # a folder


# --------------------------------------------------------------------------- fallback to defaults


def test_load_config_or_defaults_good_file(tmp_path) -> None:
    config, message = load_config_or_defaults(write(tmp_path, EXAMPLE))
    assert message is None
    assert config.jobs.refresh_s == 2.0 and "lumi" in config.clusters


def test_load_config_or_defaults_broken_file(tmp_path) -> None:
    config, message = load_config_or_defaults(write(tmp_path, "[jobs]\nrefresh_s = 2\nrefresh = 3\n"))
    assert config == Config()
    assert message == (
        f"{tmp_path / 'config.toml'}:3: unknown setting jobs.refresh (known: ended_hours, refresh_s, "
        "squeue_json) — using the default settings"
    )
    assert "\n" not in message


def test_load_config_or_defaults_broken_file_keeps_the_environment(tmp_path) -> None:
    """The environment takes precedence over the file: a broken file gives the defaults, with
    GPUTUI_REFRESH and GPUTUI_CLUSTER still applied."""
    env = {**write(tmp_path, "[jobs\n"), "GPUTUI_REFRESH": "2", "GPUTUI_CLUSTER": "lumi"}
    config, message = load_config_or_defaults(env)
    assert message is not None and message.endswith(" — using the default settings")
    assert config.jobs.refresh_s == 2.0
    assert config.cluster == "lumi"


def test_load_config_or_defaults_bad_environment(tmp_path) -> None:
    config, message = load_config_or_defaults({**write(tmp_path, EXAMPLE), "GPUTUI_REFRESH": "soon"})
    assert config == Config()
    assert message == "GPUTUI_REFRESH='soon' is not a number of seconds — using the default settings"


# --------------------------------------------------------------------------- environment


def test_environment_over_the_file(tmp_path) -> None:
    env = {**write(tmp_path, EXAMPLE), "GPUTUI_REFRESH": "0.5", "GPUTUI_CLUSTER": "my-ci"}
    config = load_config(env)
    assert config.jobs == JobsSettings(refresh_s=0.5, ended_hours=0.0, squeue_json=True)
    assert config.dashboard.refresh_s == 1.0  # GPUTUI_REFRESH is the jobs list's
    assert config.cluster == "my-ci"
    assert config.preset("lumi") == ClusterPreset(partition="debug")


def test_environment_without_a_file(tmp_path) -> None:
    env = {"GPUTUI_CONFIG": str(tmp_path / "absent.toml"), "GPUTUI_REFRESH": "12", "GPUTUI_CLUSTER": "x"}
    config = load_config(env)
    assert config.jobs.refresh_s == 12.0 and config.cluster == "x" and config.path is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "GPUTUI_REFRESH='0' must be from 0.5 to 3600 s (one squeue call each)"),
        ("-2", "GPUTUI_REFRESH='-2' must be from 0.5 to 3600 s (one squeue call each)"),
        ("5s", "GPUTUI_REFRESH='5s' is not a number of seconds"),
    ],
)
def test_bad_refresh_environment(value: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        apply_environment(Config(), {"GPUTUI_REFRESH": value})
    assert str(err.value) == message


def test_empty_environment_values_are_ignored() -> None:
    assert apply_environment(Config(), {"GPUTUI_REFRESH": "", "GPUTUI_CLUSTER": ""}) == Config()


# --------------------------------------------------------------------------- presets


def test_preset_by_cluster_name_or_chosen() -> None:
    lumi = ClusterPreset(partition="small-g")
    ci = ClusterPreset(partition="debug")
    config = Config(clusters={"lumi": lumi, "ci": ci})
    assert config.preset("lumi") == lumi
    assert config.preset("ci") == ci
    assert config.preset("other") == ClusterPreset()
    assert config.preset("") == ClusterPreset()
    chosen = Config(clusters={"lumi": lumi, "ci": ci}, cluster="lumi")
    assert chosen.preset("ci") == lumi  # --cluster / GPUTUI_CLUSTER wins over Slurm's ClusterName


# --------------------------------------------------------------------------- settings text


def test_settings_text_defaults_file_not_found(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GPUTUI_CONFIG", str(tmp_path / "absent.toml"))
    text = settings_text(Config(), "ci")
    lines = text.splitlines()
    assert lines[0] == f"# settings file: {tmp_path / 'absent.toml'} (not found: defaults in use)"
    assert lines[1].startswith("# precedence: flags (--refresh, --cluster), then GPUTUI_REFRESH")
    assert lines[3:7] == ["[jobs]", "refresh_s = 5", "ended_hours = 24", "squeue_json = false"]
    assert lines[8:11] == ["[dashboard]", "refresh_s = 0.5", "low_bandwidth = false"]
    assert lines[12] == "[alerts]" and "gpu_idle_minutes = 2" in lines
    assert lines[-2:] == [
        "# cluster: ci",
        "# no [clusters.NAME] presets (partition, account, time, setup for the launch form)",
    ]
    import tomllib

    assert tomllib.loads(text)["jobs"] == {"refresh_s": 5, "ended_hours": 24, "squeue_json": False}
    assert text.endswith("\n")


def test_settings_text_with_file_and_presets(tmp_path) -> None:
    env = {**write(tmp_path, EXAMPLE), "GPUTUI_REFRESH": "3"}
    config = load_config(env)
    lines = settings_text(config, "lumi").splitlines()
    assert lines[0] == f"# settings file: {tmp_path / 'config.toml'}"
    assert lines[3:7] == ["[jobs]", "refresh_s = 3", "ended_hours = 0", "squeue_json = true"]
    start = lines.index("# cluster: lumi")
    assert lines[start:] == [
        "# cluster: lumi",
        "[clusters.lumi]  # in use",
        'partition = "small-g"',
        'account = "project_465000000"',
        'time = "01:00:00"',
        'setup = ["module load LUMI", "source ~/venvs/torch/bin/activate"]',
        "[clusters.my-ci]",
        'partition = "debug"',
    ]
    broken = settings_text(config, "lumi", "config.toml:2: bad").splitlines()[0]
    assert broken.endswith("is NOT in use: config.toml:2: bad")


def test_settings_text_chosen_preset_marked(tmp_path) -> None:
    config = load_config({**write(tmp_path, EXAMPLE), "GPUTUI_CLUSTER": "my-ci"})
    lines = settings_text(config, "lumi").splitlines()
    assert "# cluster: lumi, preset 'my-ci' chosen" in lines
    assert "[clusters.my-ci]  # in use" in lines
    assert "[clusters.lumi]" in lines
    unknown = settings_text(Config(), "").splitlines()
    assert "# cluster: ?" in unknown
