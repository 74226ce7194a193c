"""Small modal screens of the jobs list: confirm (y/n), choose one of a few, view a text, type a value."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question: ``y`` confirms, ``n``/``escape`` declines."""

    BINDINGS = [
        Binding("y", "answer(True)", "yes"),
        Binding("n,escape,q", "answer(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.question), classes="dialog-text")  # names in it are text, not markup
            yield Static("[b]y[/b] yes    [b]n[/b] / esc no", classes="dialog-keys")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class ChoiceScreen(ModalScreen[str | None]):
    """One of a few choices (signals, nodes): arrows and enter; escape cancels."""

    BINDINGS = [Binding("escape,q", "cancel", "cancel")]

    def __init__(self, title: str, choices: list[tuple[str, str]]) -> None:
        """``choices``: (value, label) pairs."""
        super().__init__()
        self.title_text = title
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-text")
            yield OptionList(*(Option(label, id=value) for value, label in self.choices), id="choices")
            yield Static("[b]enter[/b] choose    [b]esc[/b] cancel", classes="dialog-keys")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class TextScreen(ModalScreen[None]):
    """A read-only text (a batch script, the settings), scrollable; ``escape``/``q`` close it."""

    BINDINGS = [Binding("escape,q,v", "close", "close")]

    def __init__(self, title: str, text: str, *, shell: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.shell = shell

    def compose(self) -> ComposeResult:
        body: object = self.text
        if self.shell:
            from rich.syntax import Syntax  # pygments: imported when a script is first shown

            body = Syntax(self.text, "bash", theme="ansi_dark", word_wrap=False)
        with VerticalScroll(classes="text-box") as box:
            box.border_title = self.title_text
            box.border_subtitle = "esc: close"
            yield Static(body, markup=False)

    def action_close(self) -> None:
        self.dismiss(None)


class PromptScreen(ModalScreen[str | None]):
    """One line of text (a file to replay); ``enter`` accepts, ``escape`` cancels."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, title: str, placeholder: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-text")
            yield Input(placeholder=self.placeholder, id="prompt")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
