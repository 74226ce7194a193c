"""``T``: teach a log format from the dashboard (``docs/dashboard.md``, *Teaching a format*).

The dialog lists the lines that looked like metrics but were not read (one example per shape, from the state:
:class:`~gputui.monitor.training.UnreadLog`). Choosing one shows its numbers, each with a name to type (blank:
read past; ``step``/``epoch`` place the values), the pattern they make
(:func:`gputui.logs.formats.taught.pattern_from`) and what it reads from the line, as the user types.
``enter`` stores the pattern in the settings file for logs under the log's folder
(:func:`gputui.config_write.append_pattern`), puts it in effect in this process and dismisses with it
(the dashboard then has the source read its logs again); ``escape`` cancels. A pattern that cannot be used
or a settings file that cannot be written is one line in the dialog.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from gputui.config import ConfigError
from gputui.config_write import append_pattern
from gputui.logs.base import Context
from gputui.logs.formats.taught import (
    TEACHING,
    Taught,
    TaughtParser,
    compile_pattern,
    numbers_in,
    pattern_from,
)
from gputui.monitor.training import UnreadLog
from gputui.textsafe import printable

EXAMPLE_CHARS = 100


@dataclass(frozen=True)
class Lesson:
    """What the dialog stored: the pattern, the folder it applies to, the settings file."""

    pattern: str
    where: str
    settings: str


def reading(line: str, names: list[str]) -> tuple[str, str]:
    """The pattern that ``names`` make of ``line`` and what it reads there (``step 1  loss 4.996``);
    ``ValueError`` (one line) when the pattern cannot be used."""
    pattern = pattern_from(line, names)
    compiled = compile_pattern(pattern)
    records = TaughtParser([compiled]).parse(line, Context(), 0.0) or []
    if not records:
        raise ValueError("the pattern does not read its own line: a counter must be a whole number")
    first = records[0].fields
    counters = [f"{key} {first[key]}" for key in ("epoch", "step") if isinstance(first.get(key), int)]
    values = [f"{r.fields['name']} {r.fields['value']:g}" for r in records if r.kind == "metric"]
    return pattern, "  ".join(counters + values)


class TeachScreen(ModalScreen[Lesson | None]):
    """Choose an unread line, name its numbers, store the pattern (``enter``) or cancel (``escape``)."""

    DEFAULT_CSS = """
    TeachScreen { align: center middle; }
    #teach-box {
        width: 100; max-width: 95%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    #teach-shapes { height: auto; max-height: 8; }
    #teach-names { height: auto; max-height: 10; }
    .teach-row { height: 1; }
    .teach-number { width: 24; }
    .teach-row Input { width: 1fr; }
    #teach-line, #teach-pattern, #teach-reads, #teach-error, #teach-where { height: auto; }
    #teach-error { color: $error; }
    #teach-keys { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, unread: list[UnreadLog]) -> None:
        super().__init__()
        self.choices = [(log.path, example) for log in unread for _count, example in log.examples]
        self.labels = [
            self._label(log, count, example, len(unread) > 1)
            for log in unread
            for count, example in log.examples
        ]
        self.chosen: tuple[str, str] | None = None  # (log path, example line)
        self.numbers: list[str] = []

    @staticmethod
    def _label(log: UnreadLog, count: int, example: str, several: bool) -> Text:
        shown = example if len(example) <= EXAMPLE_CHARS else example[:EXAMPLE_CHARS] + "…"
        where = f"{os.path.basename(log.path)}: " if several else ""
        return Text(printable(f"{count:>9,}  {where}{shown}"))

    def compose(self) -> ComposeResult:
        with Vertical(id="teach-box") as box:
            box.border_title = "teach a log format"
            yield Static("lines that look like metrics but were not read (lines, an example):")
            yield OptionList(*(Option(label) for label in self.labels), id="teach-shapes")
            yield Static(id="teach-line")
            yield VerticalScroll(id="teach-names")
            yield Static(id="teach-pattern")
            yield Static(id="teach-reads")
            yield Static(id="teach-where")
            yield Static(id="teach-error")
            yield Static(id="teach-keys")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self._keys()

    def _keys(self) -> None:
        keys = "[b]enter[/b] choose the line" if self.chosen is None else "[b]enter[/b] save  [b]tab[/b] next"
        self.query_one("#teach-keys", Static).update(f"{keys}  [b]esc[/b] cancel")

    @on(OptionList.OptionSelected, "#teach-shapes")
    async def _choose(self, event: OptionList.OptionSelected) -> None:
        self.chosen = self.choices[event.option_index]
        body, spans = numbers_in(self.chosen[1])
        self.numbers = [body[start:end] for start, end in spans]
        line = Text(printable(body))
        if line.plain == body:  # (a line shown with escapes is not highlighted: its offsets moved)
            for start, end in spans:
                line.stylize("bold cyan", start, end)
        self.query_one("#teach-line", Static).update(Text("line  ").append_text(line))
        names = self.query_one("#teach-names", VerticalScroll)
        await names.remove_children()
        rows = [
            Horizontal(
                Static(Text(f"n{index + 1} = {printable(number)}"[:22]), classes="teach-number"),
                Input(placeholder="name (blank: ignore; step, epoch: counters)", compact=True),
                classes="teach-row",
            )
            for index, number in enumerate(self.numbers)
        ]
        await names.mount_all(rows)
        folder = os.path.dirname(self.chosen[0]) or "."  # as the log was named (stored absolute)
        self.query_one("#teach-where", Static).update(Text(printable(f"for logs under {folder}/")))
        self._keys()
        self._preview()
        if rows:
            rows[0].query_one(Input).focus()

    def _names(self) -> list[str]:
        return [box.value for box in self.query("#teach-names Input").results(Input)]

    def _preview(self) -> tuple[str, str] | None:
        """Show the pattern and what it reads (or why not); the pattern when it can be used."""
        if self.chosen is None:
            return None
        names = self._names()
        pattern = pattern_from(self.chosen[1], names)
        self.query_one("#teach-pattern", Static).update(Text(printable(f"pattern  {pattern}")))
        try:
            _, reads = reading(self.chosen[1], names)
        except ValueError as exc:
            self._error(str(exc))
            self.query_one("#teach-reads", Static).update("")
            return None
        self._error("")
        self.query_one("#teach-reads", Static).update(Text(printable(f"reads    {reads}")))
        return pattern, reads

    def _error(self, message: str) -> None:
        self.query_one("#teach-error", Static).update(
            Text(printable(message.splitlines()[0] if message else ""))
        )

    @on(Input.Changed)
    def _typed(self) -> None:
        self._preview()

    @on(Input.Submitted)
    def _save(self) -> None:
        if self.chosen is None:
            return
        shown = self._preview()
        if shown is None:
            return
        pattern = shown[0]
        where = os.path.dirname(os.path.abspath(self.chosen[0]))
        try:
            settings = append_pattern(pattern, where)
            compiled = compile_pattern(pattern)
        except (ConfigError, ValueError) as exc:
            self._error(str(exc))
            return
        TEACHING.add(Taught(compiled, where))  # the parsers made from now on try it first
        self.dismiss(Lesson(pattern, where, str(settings)))

    def action_cancel(self) -> None:
        self.dismiss(None)
