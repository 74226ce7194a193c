"""What ``gputui parse`` says about the lines it did not read (:mod:`gputui.logs.unread`).

After the tables, one line per log that has metric-looking lines no parser read; ``--unread`` lists each
shape of them with its count, an example line, the rule by which it was not read, and a draft
``--pattern`` to start teaching from.
"""

from __future__ import annotations

import shlex
from typing import IO

from gputui.logs.formats.extract import why_unread
from gputui.logs.formats.taught import draft
from gputui.logs.unread import Unread, unread_line
from gputui.textsafe import printable

EXAMPLE_CHARS = 160


def note(path: str, unread: Unread) -> str | None:
    """``LOG: 12,000 lines in 3 shapes were not read: gputui parse --unread LOG lists them; ...``."""
    lines, shapes = unread.summary()
    if not shapes:
        return None
    where = shlex.quote(path)
    hint = f"gputui parse --unread {where} lists them; --pattern teaches one"
    return printable(f"{path}: {unread_line(lines, shapes, hint)}")


def listing(path: str, unread: Unread, out: IO[str]) -> None:
    """Each unread shape of one log: its count, an example line, a draft pattern."""
    print(f"== {printable(path)}", file=out)
    lines, shapes = unread.summary()
    if not shapes:
        print("every line that looks like metrics was read", file=out)
        return
    print(unread_line(lines, shapes, "each shape, its count and an example"), file=out)
    for shape in unread.listed():
        example = (
            shape.example if len(shape.example) <= EXAMPLE_CHARS else shape.example[:EXAMPLE_CHARS] + "…"
        )
        print(printable(f"{shape.count:>10,}  {example}"), file=out)
        print(printable(f"{'':>10}  not read: {why_unread(shape.example)}"), file=out)
        print(printable(f"{'':>10}  draft: --pattern {shlex.quote(draft(shape.example))}"), file=out)
    if unread.untracked:
        print(f"(and {unread.untracked:,} lines of shapes past the first {len(unread.shapes)})", file=out)
    print("name each {nK} as its metric ({step}, {epoch}, {loss}, ...); {} reads past a number", file=out)
