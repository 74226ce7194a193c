"""The launch form's model (no Textual): field values, validation beside each field, the batch script.

The form holds text, as typed. :func:`validate_form` returns one message per bad field and, when there is
none, the :class:`~gputui.slurm.batch_script.LaunchSpec` that ``gputui run`` would build; the preview is
:func:`~gputui.slurm.batch_script.render` of that spec, so the form submits exactly what it shows. The
last values are remembered per cluster in gputui's state folder; a cluster preset from the settings fills
fields that were never typed.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import asdict, dataclass, fields

from gputui.config import ClusterPreset
from gputui.slurm.batch_script import JOB_NAME_RULE, PATTERNS, LaunchSpec, job_name_problem, render, state_dir
from gputui.slurm.commands import SlurmError

_TIME = re.compile(
    r"^(?:\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+|\d+-\d+:\d{1,2}|\d+-\d+:\d{1,2}:\d{1,2})$"
)
_MEM = re.compile(r"^\d+(?:[KMGT]B?)?$", re.IGNORECASE)  # what sbatch --mem takes: 100, 32k, 32G, 32GB
_WORD = re.compile(r"^[A-Za-z0-9_.+-]+$")


@dataclass
class LaunchForm:
    """The form's fields as text (what the user typed)."""

    command: str = ""
    job_name: str = ""
    nodes: str = "1"
    gpus_per_node: str = "0"
    ntasks_per_node: str = ""
    cpus_per_task: str = ""
    mem: str = ""
    time: str = ""
    partition: str = ""
    account: str = ""
    pattern: str = "per-gpu"
    setup: str = ""  # one shell line per line
    where: str = "slurm"  # "slurm" or "local" (no Slurm: ranks as local processes)


FIELD_NAMES = tuple(f.name for f in fields(LaunchForm))


def _count(
    text: str, label: str, errors: dict[str, str], key: str, *, low: int, optional: bool
) -> int | None:
    text = text.strip()
    if not text:
        if not optional:
            errors[key] = f"{label} is needed"
        return None
    if not (text.isascii() and text.isdigit()) or int(text) < low:
        errors[key] = f"{label} must be a whole number ≥ {low}"
        return None
    if int(text) > 100000:
        errors[key] = f"{label} is too large"
        return None
    return int(text)


def validate_form(form: LaunchForm, python: str = sys.executable) -> tuple[LaunchSpec | None, dict[str, str]]:
    """(spec, {}) when the form is good, else (None, {field: one-line message})."""
    errors: dict[str, str] = {}
    try:
        cmd = shlex.split(form.command)
    except ValueError as exc:
        errors["command"] = f"cannot split the command: {exc}"
        cmd = []
    if not cmd and "command" not in errors:
        errors["command"] = "a command or script to run is needed (e.g. python train.py --epochs 3)"
    nodes = _count(form.nodes, "nodes", errors, "nodes", low=1, optional=False)
    gpus = _count(form.gpus_per_node, "GPUs per node", errors, "gpus_per_node", low=0, optional=True)
    tasks = _count(form.ntasks_per_node, "tasks per node", errors, "ntasks_per_node", low=1, optional=True)
    cpus = _count(form.cpus_per_task, "CPUs per task", errors, "cpus_per_task", low=1, optional=True)
    if form.time.strip() and not _TIME.match(form.time.strip()):
        errors["time"] = "time as MM, HH:MM:SS or D-HH:MM:SS (e.g. 01:30:00)"
    if form.mem.strip() and not _MEM.match(form.mem.strip()):
        errors["mem"] = "memory per node as a number with K/M/G/T (e.g. 32G)"
    for key, label in (("partition", "partition"), ("account", "account")):
        value = getattr(form, key).strip()
        if value and not _WORD.match(value):
            errors[key] = f"{label} is one word of letters, digits, _ . + -"
    if form.job_name and job_name_problem(form.job_name):  # as typed: the rule of gputui run
        errors["job_name"] = f"job name: {JOB_NAME_RULE}"
    if form.pattern not in PATTERNS:
        errors["pattern"] = f"launch pattern is one of {', '.join(PATTERNS)}"
    if form.where == "local" and (nodes or 1) > 1:
        errors["nodes"] = "a local run has one node"
    if errors:
        return None, errors
    spec = LaunchSpec(
        cmd=cmd,
        nodes=nodes or 1,
        gpus_per_node=gpus or 0,
        ntasks_per_node=tasks,
        cpus_per_task=cpus,
        time=form.time.strip() or None,
        partition=form.partition.strip() or None,
        account=form.account.strip() or None,
        mem=form.mem.strip() or None,
        pattern=form.pattern,
        job_name=form.job_name or None,
        setup_lines=[line for line in form.setup.splitlines() if line.strip()],
        python=python,
    )
    try:
        render(spec)
    except SlurmError as exc:
        return None, {"command": str(exc)}
    return spec, {}


def preview(form: LaunchForm) -> tuple[str, dict[str, str]]:
    """The exact batch script the form would submit, or why not (with the per-field messages)."""
    spec, errors = validate_form(form)
    if spec is None:
        if list(errors) == ["command"] and not form.command.strip():
            return "# type a command (or a script) to see the batch script\n", errors
        return "# fix the fields marked in red to see the batch script\n", errors
    if form.where == "local":
        head = f"# local run: {spec.world_size} process(es) on this machine, no Slurm; the script below is\n"
        return head + "# what the same settings would submit to Slurm\n" + render(spec), {}
    return render(spec), {}


# --------------------------------------------------------------------------- remembered per cluster


def _memory_path(cluster: str):
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", cluster or "default")
    return state_dir() / "launch" / f"{safe}.json"


def remembered(cluster: str, preset: ClusterPreset | None = None) -> LaunchForm:
    """The last values used on this cluster; preset values fill what was never typed."""
    form = LaunchForm()
    if preset is not None:
        form.partition = preset.partition or ""
        form.account = preset.account or ""
        form.time = preset.time or ""
        form.setup = "\n".join(preset.setup)
    try:
        saved = json.loads(_memory_path(cluster).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return form
    if isinstance(saved, dict):
        for key in FIELD_NAMES:
            if isinstance(saved.get(key), str) and (
                saved[key] or key not in ("partition", "account", "time", "setup")
            ):
                setattr(form, key, saved[key])
    return form


def remember(cluster: str, form: LaunchForm) -> None:
    """Save the form's values for this cluster (best effort: a full disk loses only this memory)."""
    path = _memory_path(cluster)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(form), indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass
