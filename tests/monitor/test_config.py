"""The TOML settings file: defaults, values, and one-line errors naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from gputui.config import AlertThresholds, Config, ConfigError, DashboardSettings, config_path, load_config


def env_for(path: Path) -> dict[str, str]:
    return {"GPUTUI_CONFIG": str(path)}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gputui.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_config_path_follows_the_environment(tmp_path, monkeypatch):
    assert config_path(env_for(tmp_path / "x.toml")) == tmp_path / "x.toml"
    monkeypatch.setenv("GPUTUI_CONFIG", str(tmp_path / "y.toml"))
    assert config_path() == tmp_path / "y.toml"
    default = config_path({})
    assert default.name == "config.toml" and default.parent.name == "gputui"


def test_missing_file_gives_the_defaults(tmp_path):
    config = load_config(env_for(tmp_path / "does-not-exist.toml"))
    assert config == Config()
    assert config.alerts == AlertThresholds()
    assert config.dashboard == DashboardSettings()
    assert config.alerts.gpu_idle_minutes == 2.0
    assert config.alerts.mem_high_pct == 95.0
    assert config.dashboard.refresh_s == 0.5
    assert config.path is None


def test_missing_file_through_the_process_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUTUI_CONFIG", str(tmp_path / "nope.toml"))
    assert load_config() == Config()


def test_values_are_read_and_the_rest_stay_default(tmp_path):
    path = write(
        tmp_path,
        "[alerts]\ngpu_idle_minutes = 0.5\nmem_high_pct = 90\nstraggler_gap_pct = 15\n\n"
        "[dashboard]\nrefresh_s = 1\n",
    )
    config = load_config(env_for(path))
    assert config.alerts.gpu_idle_minutes == 0.5
    assert config.alerts.mem_high_pct == 90.0
    assert isinstance(config.alerts.mem_high_pct, float)
    assert config.alerts.straggler_gap_pct == 15.0
    assert config.alerts.hot_temp_c == AlertThresholds().hot_temp_c
    assert config.dashboard.refresh_s == 1.0
    assert config.path == str(path)


def test_an_empty_file_is_all_defaults(tmp_path):
    config = load_config(env_for(write(tmp_path, "")))
    assert config.alerts == AlertThresholds()
    assert config.dashboard == DashboardSettings()


def assert_one_line_error(path: Path, *words: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(env_for(path))
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    for word in words:
        assert word in message
    return message


def test_unknown_key_is_an_error(tmp_path):
    path = write(tmp_path, "[alerts]\ngpu_idle_minuts = 3\n")
    assert_one_line_error(path, "alerts.gpu_idle_minuts", "gpu_idle_minutes")


def test_unknown_section_is_an_error(tmp_path):
    path = write(tmp_path, "[colours]\nred = 1\n")
    assert_one_line_error(path, "[colours]")


def test_bad_toml_is_an_error(tmp_path):
    path = write(tmp_path, "[alerts\ngpu_idle_minutes = = 3\n")
    assert_one_line_error(path, "not valid TOML")


def test_negative_value_is_an_error(tmp_path):
    path = write(tmp_path, "[alerts]\nmem_high_pct = -5\n")
    assert_one_line_error(path, "alerts.mem_high_pct", "-5")


@pytest.mark.parametrize("value", ['"ten"', "true", "[1, 2]"])
def test_non_numbers_are_errors(tmp_path, value):
    path = write(tmp_path, f"[dashboard]\nrefresh_s = {value}\n")
    assert_one_line_error(path, "dashboard.refresh_s")


def test_a_section_that_is_not_a_table_is_an_error(tmp_path):
    path = write(tmp_path, "alerts = 3\n")
    assert_one_line_error(path, "[alerts]")


def test_an_unreadable_file_is_an_error(tmp_path):
    path = tmp_path / "a-directory.toml"
    path.mkdir()
    assert_one_line_error(path, "cannot read")
