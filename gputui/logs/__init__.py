"""Training metrics from unmodified scripts: normalising raw log bytes, per-format parsers, the per-epoch
view, the job outcome and the file follower. Never imports Textual. See ``docs/log-formats.md``.

The parser is imported on first use (``from gputui.logs import LogParser``), so that a module that needs
only the per-epoch view or the outcome names does not pay for compiling every format's patterns."""

from __future__ import annotations

from typing import Any

__all__ = ["LogParser", "parse_bytes", "parse_stream"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from gputui.logs import parser

        return getattr(parser, name)
    raise AttributeError(f"module 'gputui.logs' has no attribute {name!r}")
