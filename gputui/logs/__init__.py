"""Training metrics from unmodified scripts: normalising raw log bytes, per-format parsers, the per-epoch
view, the job outcome and the file follower. Never imports Textual. See ``docs/log-formats.md``."""

from gputui.logs.parser import LogParser, parse_bytes, parse_stream

__all__ = ["LogParser", "parse_bytes", "parse_stream"]
