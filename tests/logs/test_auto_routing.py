"""Auto routing asks every family registered in ``FAMILIES`` (registering once is the only way)."""

from __future__ import annotations

from gputui.logs import parser as log_parser
from gputui.logs.base import Context, metric
from gputui.stream.records import Record


class Throwaway:
    """A family whose pre-test claims only frames starting ``zork``; it reads ``zork <value>`` as a loss."""

    name = "zork"
    PRETEST = 'head.startswith("zork")'

    def __init__(self) -> None:
        self.parsed: list[str] = []

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        self.parsed.append(text)
        record = metric("zork_loss", float(text.split()[1]), source=self.name, scope="step", ctx=ctx, now=now)
        return [record] if record is not None else []


def test_a_family_registered_only_in_families_is_tried_by_auto_mode(monkeypatch) -> None:
    family = Throwaway()
    monkeypatch.setattr(log_parser, "FAMILIES", {"zork": (family,), **log_parser.FAMILIES})
    records = log_parser.parse_bytes(b"zork 0.25\nnot a zork line\n", finish=False)
    assert family.parsed == ["zork 0.25"]  # its pre-test kept the other line from it
    assert [(r.fields["name"], r.fields["value"]) for r in records] == [("zork_loss", 0.25)]


def test_every_registered_parser_declares_a_pre_test_that_compiles() -> None:
    for name, parsers in log_parser.FAMILIES.items():
        for p in parsers:
            compile(p.PRETEST, name, "eval")
