"""The log pane: the job's output as a terminal would show it (ANSI colours, the current ``\\r`` frame),
followed live or paused and scrolled, searchable. Once no more output can come (the run or job ended, the
source stopped) the title says ``ended`` instead of ``following``.

Only the visible lines are turned into styled text on each refresh, whatever the log's length, and only
the screen rows that changed are repainted (an unchanged pane costs no bytes over SSH). A line's
colours become styles; every other control sequence is dropped or shown escaped
(:func:`gputui.textsafe.printable`): Rich's ANSI reader passes ``ESC c``, C1 controls and NUL through.
"""

from __future__ import annotations

from functools import lru_cache

from rich.text import Text
from textual.binding import Binding
from textual.reactive import reactive

from gputui.monitor.logtext import LogText
from gputui.textsafe import printable
from gputui.tui.widgets.changed_rows import ChangedRows


class LogPane(ChangedRows, can_focus=True):
    BINDINGS = [
        Binding("up,k", "scroll_lines(-1)", "up", show=False),
        Binding("down,j", "scroll_lines(1)", "down", show=False),
        Binding("pageup", "scroll_lines(-10)", "page up", show=False),
        Binding("pagedown", "scroll_lines(10)", "page down", show=False),
        Binding("f", "toggle_follow", "follow/pause"),
        Binding("n", "next_match", "next match", show=False),
    ]
    follow = reactive(True)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.log_text: LogText | None = None
        self.others = 0
        self.back = 0  # lines scrolled back from the end (0 = the end)
        self.search: str | None = None
        self.match_line: int | None = None
        self.ended = False  # no more output will come: the title says so, not "following"

    def show(self, log: LogText | None, others: int = 0, *, ended: bool = False) -> None:
        """Show ``log`` (``others``: how many more logs ``l`` cycles through); ``ended``: its run is over."""
        self.log_text, self.others, self.ended = log, others, ended
        if self.follow:
            self.back = 0
        self.set_title(self._title())
        self.show_rows()

    def _title(self) -> str:
        if self.log_text is None:
            return "log"
        more = f" (+{self.others} more: l)" if self.others else ""
        if self.ended:
            state = "ended" if self.follow else "ended · paused (f: to the end)"
        else:
            state = "following" if self.follow else "paused (f follows)"
        found = f" · /{self.search}" if self.search else ""
        tail = f"{more} · {state}{found}"
        name = printable(_short(self.log_text.path))
        if self.outer_size.width:  # laid out: the file name gives way to what follows it
            name = _fit(name, self.outer_size.width - 6 - len("log ") - len(tail))  # corners and spaces
        return f"log {name}{tail}"

    def on_resize(self) -> None:
        self.set_title(self._title())  # the file name gives way first, never the state

    def watch_follow(self, follow: bool) -> None:
        if follow:
            self.back = 0
        self.set_title(self._title())
        self.show_rows()

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow

    def action_scroll_lines(self, delta: int) -> None:
        if self.log_text is None:
            return
        total = len(self.log_text.view())
        self.follow = False
        self.back = max(0, min(total - 1, self.back - delta))
        self.show_rows()

    def find(self, pattern: str, *, backwards_from: int | None = None) -> bool:
        """Show the newest line (before ``backwards_from``) containing ``pattern``; pause following."""
        self.search = pattern or None
        if not pattern or self.log_text is None:
            self.match_line = None
            self.set_title(self._title())
            self.show_rows()
            return False
        lines = self.log_text.view()
        start = len(lines) - 1 if backwards_from is None else backwards_from - 1
        needle = pattern.lower()
        for i in range(start, -1, -1):
            if needle in Text.from_ansi(lines[i]).plain.lower():
                self.match_line = i
                self.follow = False
                height = max(1, self.size.height)
                self.back = max(0, len(lines) - 1 - i - height // 2)
                self.set_title(self._title())
                self.show_rows()
                return True
        self.set_title(self._title() + " · not found")
        self.show_rows()
        return False

    def action_next_match(self) -> None:
        if self.search:
            self.find(self.search, backwards_from=self.match_line)

    def build_rows(self) -> list[Text]:
        if self.log_text is None:
            return [Text("no output followed yet", style="dim")]
        lines = self.log_text.view()
        height = max(1, self.size.height)
        end = len(lines) - self.back
        first = max(0, end - height)
        out = []
        for i in range(first, end):
            line = _styled(lines[i])
            if self.search or i == self.match_line:
                line = line.copy()  # the cached one stays as it was
            if self.search:
                line.highlight_words([self.search], style="reverse yellow", case_sensitive=False)
            if i == self.match_line:
                line.stylize("bold")
            out.append(line)
        return out


@lru_cache(maxsize=1024)
def _styled(line: str) -> Text:
    """A log line as styled text (cached: the same lines are shown refresh after refresh; not to be
    changed in place)."""
    return Text.from_ansi(printable(line, keep_colours=True))


def _short(path: str) -> str:
    """The last two parts of a path (the run folder and the file), enough to tell the files apart."""
    parts = path.rstrip("/").split("/")
    return "/".join(parts[-2:]) if len(parts) > 2 else path


def _fit(name: str, room: int) -> str:
    """``name`` cut in the middle to ``room`` characters (at least 9), so the title's end stays whole."""
    room = max(room, 9)
    if len(name) <= room:
        return name
    head = (room - 1) // 2
    return name[:head] + "…" + name[len(name) - (room - 1 - head) :]
