"""``l``: the launch form — every ``gputui run`` option as a field, a live preview of the exact batch
script, messages beside the fields that are wrong, and the job's dashboard once submitted.

The form's text lives in a :class:`~gputui.home.launch.LaunchForm`; validation and the script come from
:mod:`gputui.home.launch` (the same rendering as ``gputui run --dry-run``). ``ctrl+s`` submits,
``escape`` goes back without submitting. Submitting runs sbatch in a worker; the screen is dismissed
with ``("slurm", job_id)`` or ``("local", spec)``.
"""

from __future__ import annotations

from rich.markup import escape
from rich.syntax import Syntax
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Label, Select, Static, TextArea

from gputui.config import Config
from gputui.home.launch import preview, remember, remembered, validate_form
from gputui.slurm.batch_script import PATTERNS, submit, write_script
from gputui.slurm.commands import SlurmError
from gputui.textsafe import printable

#: (field, label, placeholder) of the one-line inputs, in form order.
INPUTS = (
    ("command", "command or script", "python train.py --epochs 3"),
    ("job_name", "job name", "(the program's name)"),
    ("nodes", "nodes", "1"),
    ("gpus_per_node", "GPUs per node", "0"),
    ("ntasks_per_node", "tasks per node", "(GPUs per node)"),
    ("cpus_per_task", "CPUs per task", "(Slurm's default)"),
    ("mem", "memory per node", "32G"),
    ("time", "time limit", "01:00:00"),
    ("partition", "partition", "(the default partition)"),
    ("account", "account", "(your default account)"),
)


class LaunchScreen(Screen):
    BINDINGS = [
        Binding("ctrl+s", "submit", "submit"),
        Binding("escape", "back", "back"),
    ]

    def __init__(
        self, config: Config, cluster: str, *, slurm: bool = True, partitions: list[str] | None = None
    ) -> None:
        super().__init__()
        self.config = config
        self.cluster = cluster
        self.form = remembered(cluster, config.preset(cluster))
        if not slurm:
            self.form.where = "local"
        self.slurm = slurm
        self.partitions = partitions or []
        self.submitting = False

    def compose(self) -> ComposeResult:
        title = (
            f"launch a job on {self.cluster or 'this cluster'}"
            if self.slurm
            else "launch locally (no Slurm here)"
        )
        yield Static(f" gputui  {title}", id="launch-header")
        with Horizontal(id="launch-main"):
            with VerticalScroll(id="launch-form"):
                for name, label, placeholder in INPUTS:
                    with Horizontal(classes="field-row"):
                        yield Label(label, classes="field-label")
                        yield Input(getattr(self.form, name), placeholder=placeholder, id=f"f-{name}")
                    yield Label("", id=f"e-{name}", classes="field-error")
                with Horizontal(classes="field-row"):
                    yield Label("launch pattern", classes="field-label")
                    yield Select(
                        [(p, p) for p in PATTERNS], value=self.form.pattern, allow_blank=False, id="f-pattern"
                    )
                yield Label("", id="e-pattern", classes="field-error")
                where = [("Slurm (sbatch)", "slurm"), ("this machine (local ranks)", "local")]
                with Horizontal(classes="field-row"):
                    yield Label("run on", classes="field-label")
                    yield Select(
                        where if self.slurm else where[1:],
                        value=self.form.where,
                        allow_blank=False,
                        id="f-where",
                    )
                yield Label("set-up lines (module load …, source venv/bin/activate)", classes="setup-label")
                yield TextArea(self.form.setup, id="f-setup", soft_wrap=False)
                yield Button("submit (ctrl+s)", id="submit", variant="primary")
            with VerticalScroll(id="launch-preview") as box:
                box.border_title = "batch script (exactly what is submitted)"
                yield Static(id="script")
        yield Static(id="launch-status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#f-command", Input).focus()
        if self.partitions:
            self.query_one("#f-partition", Input).placeholder = "one of: " + ", ".join(self.partitions[:6])
        self.update_preview()

    # ------------------------------------------------------------------ live preview

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        name = (event.input.id or "").removeprefix("f-")
        if hasattr(self.form, name):
            setattr(self.form, name, event.value)
            self.update_preview()

    @on(Select.Changed)
    def _chosen(self, event: Select.Changed) -> None:
        name = (event.select.id or "").removeprefix("f-")
        if hasattr(self.form, name) and isinstance(event.value, str):
            setattr(self.form, name, event.value)
            self.update_preview()

    @on(TextArea.Changed, "#f-setup")
    def _setup(self, event: TextArea.Changed) -> None:
        self.form.setup = event.text_area.text
        self.update_preview()

    def update_preview(self, *, all_errors: bool = False) -> dict[str, str]:
        """Redraw the script and the field messages (an empty field's message only once submitting)."""
        text, errors = preview(self.form)
        self.query_one("#script", Static).update(Syntax(text, "bash", theme="ansi_dark", word_wrap=False))
        for name in ("command", *(n for n, _, _ in INPUTS[1:]), "pattern"):
            label = self.query_one(f"#e-{name}", Label)
            message = errors.get(name, "")
            if name == "command" and not all_errors and not self.form.command.strip():
                message = ""
            label.update(message)
            label.display = bool(message)
        return errors

    # ------------------------------------------------------------------ submit

    def action_back(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#submit")
    def _pressed(self) -> None:
        self.action_submit()

    def action_submit(self) -> None:
        if self.submitting:
            return
        errors = self.update_preview(all_errors=True)
        status = self.query_one("#launch-status", Static)
        if errors:
            first = next(iter(errors))
            status.update(f"[b red]nothing submitted:[/] {len(errors)} field(s) to fix ({errors[first]})")
            self.query_one(f"#f-{first}").focus()
            return
        spec, _ = validate_form(self.form)
        assert spec is not None
        remember(self.cluster, self.form)
        if self.form.where == "local":
            self.dismiss(("local", spec))
            return
        self.submitting = True
        status.update("submitting with sbatch…")
        self._submit(spec)

    @work(thread=True, exit_on_error=False, group="submit")
    def _submit(self, spec) -> None:
        try:
            job_id, _path = submit(write_script(spec))
        except (SlurmError, OSError) as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self.dismiss, ("slurm", job_id))

    def _failed(self, why: str) -> None:
        self.submitting = False
        self.query_one("#launch-status", Static).update(f"[b red]not submitted:[/] {escape(printable(why))}")
