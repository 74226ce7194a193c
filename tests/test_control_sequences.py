"""Terminal control sequences from logs are never printed (issue 21 part 3): :func:`gputui.textsafe.printable`
drops escape sequences and shows other controls escaped; ``gputui parse`` and ``gputui report`` on a log
full of them print none (before: ``parse`` printed them raw and ``report`` died on ``[/]`` as markup)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gputui.textsafe import printable

UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("title\x1b]0;PWNED\x07 set", "title set"),
        ("osc\x1b]8;;http://x\x1b\\link", "osclink"),
        ("clear\x1b[2J\x1b[1;1H here", "clear here"),
        ("reset\x1bc now", "reset now"),
        ("c1\x9b2J csi", "c1 csi"),
        ("charset\x1b(0 switch", "charset switch"),
        ("x\ntouch pwned", "x\\ntouch pwned"),
        ("cr\rover", "cr\\rover"),
        ("nul\x00 bell\x07 del\x7f", "nul\\x00 bell\\x07 del\\x7f"),
        ("bidi\u202eevil", "bidi\\u202eevil"),
        ("lone ESC\x1b", "lone ESC\\x1b"),
        ("tab\tstays, ünïcode 日本 too", "tab\tstays, ünïcode 日本 too"),
    ],
)
def test_sequences_are_dropped_and_controls_escaped(raw: str, shown: str) -> None:
    assert printable(raw) == shown


def test_colours_can_be_kept_for_a_view_that_styles_them() -> None:
    line = "\x1b[1;32mok\x1b[0m \x1b]0;T\x07done\x1bc"
    assert printable(line, keep_colours=True) == "\x1b[1;32mok\x1b[0m done"


@given(st.text(), st.booleans())
def test_nothing_a_terminal_acts_on_is_left(text: str, keep_colours: bool) -> None:
    shown = printable(text, keep_colours=keep_colours)
    left = re.sub(r"\x1b\[[0-9;:]*m", "", shown) if keep_colours else shown
    assert not UNSAFE.search(left)
    assert printable(shown, keep_colours=keep_colours) == shown  # once is enough


ESCAPE_LOG = "\n".join(
    [
        "Epoch 1/2",
        "100/100 - 11s - loss: 0.9000 - accuracy: 0.6000 - 11s/epoch - 110ms/step",
        "\x1b]0;PWNED\x07\x1bc\x1b[31mTraceback (most recent call last):",
        '  File "train.py", line 1, in <module>',
        "RuntimeError: CUDA out of memory \x1b]0;TITLE\x07\x9b2J [/] [bold]x\u202e",
        "",
    ]
)


@pytest.mark.parametrize("command", ["parse", "report"])
def test_parse_and_report_print_no_escape_from_the_log(command: str, tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(ESCAPE_LOG, encoding="utf-8")
    res = subprocess.run(
        [sys.executable, "-m", "gputui", command, str(log)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "200", "TERM": "dumb"},
    )
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    assert not UNSAFE.search(res.stdout.replace("\n", "")), repr(res.stdout)
    assert "CUDA out of memory" in res.stdout and "[/] [bold]x\\u202e" in res.stdout  # text stays text
