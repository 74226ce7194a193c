"""``pip install gputui`` alone, as a new user gets it: no extras, no test dependencies.

A fresh venv gets the package (not editable, no extras). What must work there: ``--help``, ``parse``,
``replay``, ``report`` and the jobs screen; what needs an extra (the trainers, the demo, NVML) must say
so in one line naming the extra, with no traceback. The venv is built once per run (a few seconds: pip
takes the packages from the local index).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest
from test_e2e_dashboard import Terminal, header, shell

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "logs" / "data" / "cesga_ddp_mnist_4rank.log"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with ``pip install <this checkout>`` and nothing else; its ``gputui`` script."""
    where = tmp_path_factory.mktemp("fresh-venv")
    venv.EnvBuilder(with_pip=True).create(where)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, str(ROOT)], check=True, timeout=600, capture_output=True)
    return where / "bin" / "gputui"


def plain_env(tmp_path: Path) -> dict[str, str]:
    """No Slurm configuration, no settings file, no inherited gputui variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "GPUTUI_"))}
    env["GPUTUI_CONFIG"] = str(tmp_path / "no-config.toml")
    env["GPUTUI_STATE_DIR"] = str(tmp_path / "state")
    return env


def run(gputui: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(gputui), *args], capture_output=True, text=True, timeout=120, env=env)


def test_the_bare_install_lacks_numpy_and_torch(fresh: Path) -> None:
    """The premise of the tests below: the core install brings none of the trainers' modules."""
    python = fresh.parent / "python"
    probe = "import importlib.util as u; print([m for m in ('numpy', 'torch') if u.find_spec(m)])"
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_help_parse_replay_and_report_work_without_extras(fresh: Path, tmp_path: Path) -> None:
    env = plain_env(tmp_path)
    helped = run(fresh, "--help", env=env)
    assert helped.returncode == 0 and "replay" in helped.stdout and "parse" in helped.stdout
    parsed = run(fresh, "parse", str(LOG), env=env)
    assert parsed.returncode == 0, parsed.stderr
    assert "test_accuracy_pct" in parsed.stdout and "0.0478" in parsed.stdout
    replayed = run(fresh, "replay", "--headless", str(LOG), env=env)
    assert replayed.returncode == 0, replayed.stderr
    assert "training: 2 epoch(s)" in replayed.stdout
    reported = run(fresh, "report", str(LOG), env=env)
    assert reported.returncode == 0, reported.stderr
    for out in (helped, parsed, replayed, reported):
        assert "Traceback" not in out.stdout + out.stderr


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["train", "torch", "--epochs", "1"], "gputui[torch]"),
        (["train", "tf"], "gputui[tf]"),
        (["train", "lightning"], "gputui[lightning]"),
        (["demo", "--headless"], "gputui[demo]"),
        (["probe", "--backend", "nvidia", "--count", "1"], "gputui[nvidia]"),
        (["serve", "demo"], "gputui[serve]"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(
    fresh: Path, tmp_path: Path, args: list[str], extra: str
) -> None:
    out = run(fresh, *args, env=plain_env(tmp_path))
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gputui: error:"), out.stderr
    assert extra in lines[0] and "Traceback" not in out.stderr + out.stdout


@pytest.mark.skipif(
    shutil.which("tmux") is None and os.environ.get("CI") != "true", reason="tmux is not installed"
)
def test_the_jobs_screen_opens_and_quits_without_extras_or_slurm(fresh: Path, tmp_path: Path) -> None:
    term = Terminal(f"gputui-fresh-{os.getpid()}")
    try:
        env = {"GPUTUI_CONFIG": str(tmp_path / "no-config.toml"), "GPUTUI_STATE_DIR": str(tmp_path / "st")}
        term.start(shell(f"unset SLURM_CONF GPUTUI_CLUSTER GPUTUI_REFRESH; {fresh}"), env=env, cwd=tmp_path)
        screen = term.wait(lambda s: "gputui" in header(s) and "╭─ my jobs" in s and s, 60, "the jobs screen")
        assert "d: demo" in screen or "d runs the demo" in screen  # without Slurm it offers the demo
        term.keys("q")
        screen = term.wait(lambda s: "EXIT=" in s and s, 20, "gputui to quit")
        assert "EXIT=0" in screen and "Traceback" not in screen
    finally:
        term.kill()
