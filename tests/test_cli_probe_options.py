"""``--probe-backend`` and ``--probe-interval``: declared once (:func:`gputui.cli_options.add_probe_options`)
and accepted, with the same values and limits, by every command that starts samplers on a job's nodes."""

from __future__ import annotations

import argparse

import pytest

from gputui import cli
from gputui.cli_options import BACKENDS, add_probe_options

COMMANDS = (["attach", "5"], ["run", "--dry-run"], ["scale", "--gpus", "1,2"])


@pytest.mark.parametrize("command", COMMANDS, ids=lambda argv: argv[0])
@pytest.mark.parametrize("backend", BACKENDS)
def test_every_sampler_command_takes_both_options(command: list[str], backend: str) -> None:
    args = cli.build_parser().parse_args([*command, "--probe-backend", backend, "--probe-interval", "0.25"])
    assert (args.probe_backend, args.probe_interval) == (backend, 0.25)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda argv: argv[0])
def test_unset_they_are_none(command: list[str]) -> None:
    args = cli.build_parser().parse_args(command)
    assert (args.probe_backend, args.probe_interval) == (None, None)


@pytest.mark.parametrize(
    ("option", "value"), [("--probe-backend", "cuda"), ("--probe-interval", "0"), ("--probe-interval", "x")]
)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda argv: argv[0])
def test_bad_values_are_usage_errors(command: list[str], option: str, value: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.build_parser().parse_args([*command, option, value])
    assert exc.value.code == 2 and option in capsys.readouterr().err


def test_the_one_declaration_carries_its_help() -> None:
    parser = argparse.ArgumentParser()
    add_probe_options(parser, "whose backend")
    helps = {a.dest: a.help for a in parser._actions}
    assert helps["probe_backend"] == "whose backend" and helps["probe_interval"] == "seconds between samples"
