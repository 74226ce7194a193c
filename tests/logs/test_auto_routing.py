"""Auto routing asks every family registered in ``FAMILIES`` (registering once is the only way)."""

from __future__ import annotations

from gputui.logs import parser as log_parser
from gputui.logs.base import Context, metric
from gputui.stream.records import Record


class Throwaway:
    """A family that claims only lines starting ``zork`` and reads ``zork <value>`` as a loss."""

    name = "zork"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def claims(self, text: str, head: str, ctx: Context) -> bool:
        self.asked.append(text)
        return head.startswith("zork")

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        record = metric("zork_loss", float(text.split()[1]), source=self.name, scope="step", ctx=ctx, now=now)
        return [record] if record is not None else []


def test_a_family_registered_only_in_families_is_tried_by_auto_mode(monkeypatch) -> None:
    family = Throwaway()
    families = {"zork": (family,), **log_parser.FAMILIES}
    monkeypatch.setattr(log_parser, "FAMILIES", families)
    records = log_parser.parse_bytes(b"zork 0.25\nnot a zork line\n", finish=False)
    assert family.asked == ["zork 0.25", "not a zork line"]
    assert [(r.fields["name"], r.fields["value"]) for r in records] == [("zork_loss", 0.25)]


def test_every_registered_parser_declares_its_pre_test() -> None:
    for name, parsers in log_parser.FAMILIES.items():
        for p in parsers:
            assert callable(getattr(p, "claims", None)), name
