"""Mutation testing of gputui's parsing, probing and Slurm code with Cosmic Ray: a seeded sample (issue 14).

Not part of CI. ``make mutate`` (or ``python benchmarks/mutation.py``) mutates a **separate clone** of this
repository (``--workdir``, default ``/tmp/gputui-mutate``), never this working tree: Cosmic Ray writes each
mutant to the file on disk, runs the group's tests, and puts the file back. Mutating on disk means the many
tests that start ``python -m gputui ...`` (or the fake ``srun``) in a subprocess run the mutant too; the
clone is put first on ``PYTHONPATH`` so it shadows the editable install, and subprocesses inherit that.

Groups (module set -> tests run for each of its mutants, ``-x -m "not slurm"``, in the clone):

- ``core``: ``stream/records.py``, ``stream/io.py``, ``distenv.py`` -> their unit tests (those that exist);
- ``logs``: ``gputui/logs/`` -> ``tests/logs``;
- ``probes``: ``gputui/probes/`` -> ``tests/probes``;
- ``slurm``: ``gputui/slurm/``, ``gputui/hostlist.py`` -> ``tests/slurm``, ``tests/test_hostlist.py``,
  ``tests/test_slurm_cluster.py``.

Every mutant Cosmic Ray's default operators make is a candidate, less those inside type annotations (every
module has ``from __future__ import annotations``: never evaluated, so always equivalent). From each group
``--sample`` candidates are drawn at random with ``--seed`` (the same source and seed give the same
sample). Score = (killed + timed out) / (killed + timed out + survived), with a Wilson 95 % interval; the
overall figure weights each group by its number of candidates. Survivors listed in :data:`EXPLAINED` as
equivalent are left out of the "non-equivalent" score; their reasons (and those of survivors accepted
without a test) are printed next to them.

Usage::

    python benchmarks/mutation.py [--sample 60] [--seed 14] [--groups core,logs] [--out FILE]
    python benchmarks/mutation.py --list                  # candidates and the sample, no test run
    python benchmarks/mutation.py --recheck FILE          # FILE's survivors again, at FILE's commit, with
                                                          # this working tree's KILLER_TESTS
    python benchmarks/mutation.py --report FILE           # print FILE again with the current EXPLAINED

Needs ``pip install -e '.[mutate]'`` (Cosmic Ray) in the test environment (``make test``'s venv).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_WORKDIR = Path("/tmp/gputui-mutate")
STATE = ".mutation"  # in the clone: Cosmic Ray session databases and the JSON result
PYTEST = ["-x", "-q", "-p", "no:cacheprovider", "-m", "not slurm", "--hypothesis-seed=0"]


@dataclass(frozen=True)
class Group:
    """A set of modules to mutate and the tests that judge their mutants."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]


GROUPS: dict[str, Group] = {
    "core": Group(
        ("gputui/stream/records.py", "gputui/stream/io.py", "gputui/distenv.py"),
        ("tests/test_records.py", "tests/test_recordio.py", "tests/test_distenv.py",
         "tests/test_master_port_values.py", "tests/test_record_io_edges_and_world_size.py"),
    ),
    "logs": Group(("gputui/logs",), ("tests/logs",)),
    "probes": Group(("gputui/probes",), ("tests/probes",)),
    "slurm": Group(
        ("gputui/slurm", "gputui/hostlist.py"),
        ("tests/slurm", "tests/test_hostlist.py", "tests/test_slurm_cluster.py"),
    ),
}  # fmt: skip

# The tests written to kill earlier runs' survivors (docs/testing.md): --recheck copies these files of the
# working tree into the clone by default, so an old run's survivors meet the tests written since.
KILLER_TESTS = (
    "tests/test_record_io_edges_and_world_size.py",
    "tests/logs/test_follower_tensorboard_generic_edges.py",
    "tests/probes/test_rotation_sim_gpus_and_energy.py",
    "tests/slurm/test_submit_errors_and_job_fields.py",
)

# Survivors judged by hand, keyed by (module, line before, line after) (stable while the line is).
# ("equivalent", why): no test can tell the mutant from the original; left out of the non-equivalent score.
# ("accepted", why): a real difference, not worth a test; still counted as survived.
EQ, ACC = "equivalent", "accepted"
EXPLAINED: dict[tuple[str, str, str], tuple[str, str]] = {
    ("gputui/stream/io.py", "_CHUNK = 1 << 16", "_CHUNK = 1 % 16"): (
        ACC, "1-byte reads give the same records, far slower; they differ only for a line of 1 MiB to "
        "1 MiB + 64 KiB, which 64 KiB reads accept though docs/records.md says lines over 1 MiB are dropped",
    ),
    ("gputui/logs/formats/mmengine.py", 'if (kind == "Epoch") != (epoch_text is not None):',
     'if (kind <= "Epoch") != (epoch_text is not None):'): (
        EQ, "LOOP matches only Epoch or Iter, and 'Iter' <= 'Epoch' is false: <= is == here",
    ),
    ("gputui/logs/normalize.py",
     'if cleaned and self._gate is not None and self._gate("\\r".join(frames).encode()):',
     'if cleaned or self._gate is not None and self._gate("\\r".join(frames).encode()):'): (
        EQ, "an uncleaned line's bytes are what the block gate already scanned, so it is hot either way; "
        "and a hot line only means its frames get the outcome checks",
    ),
    ("gputui/logs/normalize.py",
     "last = len(lines) - 1  # the part after the final \\n is empty or ends with \\r",
     "last = len(lines) * 1  # the part after the final \\n is empty or ends with \\r"): (
        EQ, "the empty part after the final newline gives no frame, and ``line`` is local to the function",
    ),
    ("gputui/logs/formats/pytorch.py", "if len(_NAMES) >= 1024:", "if len(_NAMES) < 1024:"): (
        EQ, "a memo of metric names: clearing it on every miss changes speed only",
    ),
    ("gputui/logs/files/tensorboard.py",
     'struct.unpack(f"<{len(value) // 8}d", value) if wire == 2 else struct.unpack("<d", value)',
     'struct.unpack(f"<{len(value) // 8}d", value) if not wire == 2 else struct.unpack("<d", value)'): (
        ACC, "differs only for a packed double_val of several values: scalar summaries are 0-d (one value)",
    ),
    ("gputui/logs/thinning.py", "if m < 3 * period:", "if m < 3 >> period:"): (
        EQ, "an early exit: with fewer than 3 periods of frames no run has two twins, so nothing is skipped",
    ),
    ("gputui/logs/formats/ultralytics.py", "if total > 0 and n == total:", "if total > -1 and n == total:"): (
        ACC, "differs only for a 0/0 bar (an epoch row with no batches), which Ultralytics does not print",
    ),
    ("gputui/probes/base.py", 'if vendor == "amd":', 'if vendor <= "amd":'): (
        EQ, "vendor is 'amd' or 'nvidia' (GPUTUI_SIM_VENDOR is checked), and 'nvidia' <= 'amd' is false",
    ),
    ("gputui/probes/headless.py",
     "def __init__(self, path: str, *, max_bytes: int | None = None, keep: int = 5) -> None:",
     "def __init__(self, path: str, *, max_bytes: int | None = None, keep: int = 6) -> None:"): (
        ACC, "the class default is unused: its one caller (gputui probe --log) always passes --rotate-keep",
    ),
    ("gputui/probes/process_sim.py", "if previous is None or now - previous[1] <= 0:",
     "if previous is None or now - previous[1] == 0:"): (
        EQ, "a negative interval gives a CPU share <= 0, clamped to the same 0.0 (CPU time never decreases)",
    ),
    ("gputui/probes/process_sim.py",
     "return max(0.0, min(100.0, 100.0 * (cpu - previous[0]) / (now - previous[1]))), rss",
     "return max( -1.0, min(100.0, 100.0 * (cpu - previous[0]) / (now - previous[1]))), rss"): (
        ACC, "the lower clamp matters only if a process's CPU time went down between samples (a reused pid)",
    ),
    ("gputui/probes/sim.py", "elif (t % 300) < 10 and t > 60:  # periodic evaluation",
     "elif (t % 300) < 10 and t > 59:  # periodic evaluation"): (
        EQ, "t % 300 < 10 never holds for 59 < t <= 60",
    ),
    # the independent sample (seed 15, 30 per group, commit 25c5ec4)
    ("gputui/stream/io.py", "_CHUNK = 1 << 16", "_CHUNK = 1 * 16"): (
        ACC, "16-byte reads: as for 1 << 16 -> 1 % 16 above",
    ),
    ("gputui/stream/io.py", "self._needs_newline = len(view) < len(data)",
     "self._needs_newline = len(view) is not len(data)"): (
        ACC, "differs only after a write that failed before its first byte (a record over 256 bytes): "
        "the next record then starts with a newline, a blank line that readers skip",
    ),
    ("gputui/stream/records.py", "*,", "/,"): (
        EQ, "keyword-only marker made positional-only: every caller uses keywords",
    ),
    ("gputui/stream/records.py",
     'def event(event_type: str, *, message: str = "", time: float | None = None, '
     '**detail: Any) -> Record:',
     'def event(event_type: str, /, message: str = "", time: float | None = None, '
     '**detail: Any) -> Record:'): (
        EQ, "keyword-only marker made positional-only: every caller uses keywords",
    ),
    ("gputui/logs/catchup.py", "PREVIEW_MIN_BYTES = 16 << 20", "PREVIEW_MIN_BYTES = 16 | 20"): (
        ACC, "which logs get a quick preview before their history is read (all but tiny ones): display only",
    ),
    ("gputui/logs/follower.py", "changed = size != self.offset or fst.st_mtime_ns != self._mtime",
     "changed = size < self.offset or fst.st_mtime_ns != self._mtime"): (
        ACC, "a grown file also has a new mtime, except on a file system with coarse timestamps",
    ),
    ("gputui/logs/bounded.py", "if len(cache) >= bound:", "if len(cache) <= bound:"): (
        EQ, "a memo of line plans, shapes or seconds: clearing it on every miss changes speed only",
    ),
    ("gputui/logs/normalize.py", "if index == last and not raw:", "if index >= last and not raw:"): (
        EQ, "index never exceeds last (the index of the final part)",
    ),
    ("gputui/logs/outcome.py", "at = block.find(key, at + 1)", "at = block.find(key, at + 2)"): (
        EQ, "no gate key can occur again one byte after itself (none is a run of one repeated character)",
    ),
    ("gputui/logs/outcome.py", 'if text[:1].isspace() and tb["frames"] < MAX_TRACEBACK_FRAMES:',
     'if text[:1].isspace() and tb["frames"] is MAX_TRACEBACK_FRAMES:'): (
        ACC, "the next test skips the same indented frame lines, unless one looks like an exception line",
    ),
    ("gputui/probes/amd/topology.py", "continue", "break"): (
        ACC, "amdgpu always writes location_id for a GPU node (and what a break skips depends on glob order)",
    ),
    ("gputui/probes/nvidia.py", "except nv.NVMLError:", "except nvCosmicRayTestingExceptionNVMLError:"): (
        ACC, "a MIG slot NVML refuses: the fake NVML has no MIG devices",
    ),
    ("gputui/probes/nvidia.py", "self._mem_v2 = False", "self._mem_v2 = True"): (
        ACC, "a driver without the v2 memory call gets it tried again each sample: more calls, same values",
    ),
    ("gputui/probes/sim.py", "clock_sm_mhz=self.clock_sm if util > 20 else 210,",
     "clock_sm_mhz=self.clock_sm if util > 21 else 210,"): (
        ACC, "the simulated idle-clock threshold: a sample between 20 and 21 % is rare, the value arbitrary",
    ),
    ("gputui/slurm/attach.py", "except ImportError:", "except CosmicRayTestingException:"): (
        EQ, "the import is of gputui's own follower module, which is always there",
    ),
    ("gputui/slurm/attach.py",
     "since = time.time() - (job.time_used_s or 0) - 60  # a run directory of this job, not an older one",
     "since = time.time() - (job.time_used_s and 0) - 60  # a run directory of this job, not an older one"): (
        ACC, "worth a test later: attaching to a job that has run for more than a minute must still find the "
        "run directory it made at its start (needs a fake job with a RunTime and a run directory)",
    ),
    ("gputui/slurm/batch_script.py",
     'res = run_slurm(["sbatch", "--parsable", str(script)], env=env, check=False, timeout=60)',
     'res = run_slurm(["sbatch", "--parsable", str(script)], env=env, check=False, timeout= 59)'): (
        ACC, "sbatch's timeout, 60 or 59 s: no behaviour to pin",
    ),
    ("gputui/slurm/jobs.py", "if len(parts) != len(SQUEUE_FIELDS) + 1:",
     "if len(parts) is not len(SQUEUE_FIELDS) + 1:"): (
        EQ, "CPython keeps one object per small int (-5..256): 'is not' is != for a field count",
    ),
    ("gputui/slurm/stdout_path.py", 'if letter == "s":', 'if letter <= "s":'): (
        EQ, "the letters left at this test are s, t, u and x (_TOKEN); of them only s is <= 's'",
    ),
    ("gputui/slurm/stdout_path.py", 'if letter == "u":', 'if letter <= "u":'): (
        EQ, "the letters left at this test are u and x; of them only u is <= 'u'",
    ),
}  # fmt: skip


@dataclass
class Mutant:
    """One sampled mutation and, once run, its outcome."""

    group: str
    module: str
    operator: str
    occurrence: int
    line: int
    col: int
    definition: str | None
    before: str = ""
    after: str = ""
    outcome: str = "pending"  # killed | timeout | survived | incompetent
    seconds: float = 0.0
    failed_test: str | None = None
    explained: list[str] = field(default_factory=list)  # [kind, reason] from EXPLAINED

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.module, self.before, self.after)

    @property
    def ident(self) -> tuple[str, str, int]:
        return (self.module, self.operator, self.occurrence)


# --------------------------------------------------------------------------- the clone


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def prepare_clone(workdir: Path, source: Path, commit: str | None, add_tests: list[str]) -> str:
    """Make ``workdir`` a clean clone of ``source`` at ``commit`` (default its HEAD), plus the files of
    ``source``'s working tree that match the ``add_tests`` globs (new tests not committed yet)."""
    if workdir.resolve() == source.resolve() or source.resolve() in workdir.resolve().parents:
        sys.exit(f"--workdir {workdir} must not be the repository itself: mutants are written to disk")
    if not (workdir / ".git").is_dir():
        subprocess.run(["git", "clone", "--quiet", str(source), str(workdir)], check=True)
    git("fetch", "--quiet", str(source), "HEAD", cwd=workdir)
    git("reset", "--quiet", "--hard", commit or "FETCH_HEAD", cwd=workdir)
    git("clean", "-fdxq", "-e", STATE, cwd=workdir)
    for pattern in add_tests:
        for path in sorted(source.glob(pattern)):
            rel = path.relative_to(source)
            (workdir / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, workdir / rel)
            print(f"added from the working tree: {rel}")
    (workdir / STATE).mkdir(exist_ok=True)
    return git("rev-parse", "--short", "HEAD", cwd=workdir).strip()


def use_clone(workdir: Path) -> None:
    """Make the clone's ``gputui`` the one imported here and in every subprocess, and check it."""
    os.chdir(workdir)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(workdir), os.environ.get("PYTHONPATH")]))
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # no stale .pyc of a mutant
    where = subprocess.run(
        [sys.executable, "-c", "import gputui; print(gputui.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(workdir.resolve()):
        sys.exit(f"subprocesses import gputui from {where}, not from the clone {workdir}")


def test_command(group: Group) -> str:
    """The pytest command line for the group's mutants (test files not in this checkout left out)."""
    quoted = (f"'{a}'" if " " in a else a for a in PYTEST)
    return " ".join([sys.executable, "-m", "pytest", *quoted, *(t for t in group.tests if Path(t).exists())])


# --------------------------------------------------------------------------- candidates and the sample


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) (line, character column) of every annotation in ``source``."""
    lines = source.splitlines()

    def char_col(line: int, byte_col: int) -> int:
        return len(lines[line - 1].encode()[:byte_col].decode(errors="ignore"))

    spans = []
    for node in ast.walk(ast.parse(source)):
        annotations: list[ast.expr | None] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            annotations.append(node.returns)
        elif isinstance(node, ast.arg | ast.AnnAssign):
            annotations.append(node.annotation)
        for ann in annotations:
            if ann is not None and ann.end_lineno is not None and ann.end_col_offset is not None:
                start = (ann.lineno, char_col(ann.lineno, ann.col_offset))
                spans.append((start, (ann.end_lineno, char_col(ann.end_lineno, ann.end_col_offset))))
    return spans


def candidates(group_name: str, group: Group, db_path: Path) -> list[tuple[Mutant, object]]:
    """Every mutant of Cosmic Ray's default operators in the group's modules, less annotation mutants.

    Returns (mutant, Cosmic Ray work item) pairs in a stable order, not yet described (see
    :func:`describe`); the session database at ``db_path`` holds them all (``cr-report`` reads it)."""
    from cosmic_ray.commands.init import init
    from cosmic_ray.modules import find_modules
    from cosmic_ray.work_db import WorkDB

    paths = sorted({p for m in group.modules for p in find_modules([Path(m)])})
    db_path.unlink(missing_ok=True)
    db = WorkDB(str(db_path), WorkDB.Mode.create)
    try:
        init(paths, db, {})
        items = list(db.work_items)
    finally:
        db.close()
    spans = {str(p): annotation_spans(p.read_text()) for p in paths}
    out = []
    for item in items:
        spec = item.mutations[0]
        module = str(spec.module_path)
        start, end = tuple(spec.start_pos), tuple(spec.end_pos)
        if any(s <= start and end <= e for s, e in spans[module]):
            continue
        mutant = Mutant(
            group_name, module, spec.operator_name, spec.occurrence, start[0], start[1], spec.definition_name
        )
        out.append((mutant, item))
    out.sort(key=lambda pair: (pair[0].module, pair[0].operator, pair[0].occurrence))
    return out


def describe(mutant: Mutant) -> bool:
    """Fill in the mutant's before/after text; False if Cosmic Ray cannot apply it (an operator's bug)."""
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    original = Path(mutant.module).read_text()
    try:
        mutated = mutate_code(original, get_operator(mutant.operator)(), mutant.occurrence)
    except Exception:  # e.g. ExceptionReplacer on ``except (mod.Error, ...)``: AttributeError
        return False
    if mutated is None or mutated == original:
        return False
    mutant.before, mutant.after = changed_lines(original, mutated, mutant.line)
    return True


def draw(pool: list[tuple[Mutant, object]], n: int, seed: str) -> list[tuple[Mutant, object]]:
    """A uniform random sample of ``n`` applicable mutants (seeded), in source order."""
    order = list(pool)
    random.Random(seed).shuffle(order)
    chosen = []
    for pair in order:
        if len(chosen) == n:
            break
        if describe(pair[0]):
            chosen.append(pair)
    return sorted(chosen, key=lambda pair: (pair[0].module, pair[0].line, pair[0].col))


def changed_lines(original: str, mutated: str, line: int) -> tuple[str, str]:
    """The original and mutated text of the lines the mutation changed (the line itself if none differ)."""
    old, new = original.splitlines(), mutated.splitlines()
    minus, plus = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            minus += old[i1:i2]
            plus += new[j1:j2]
    if not minus and not plus:
        return old[line - 1].strip(), new[line - 1].strip()
    return " / ".join(s.strip() for s in minus), " / ".join(s.strip() for s in plus)


# --------------------------------------------------------------------------- running


FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


def run_mutant(mutant: Mutant, item: object, command: str, timeout: float, db_path: Path) -> None:
    """Apply the mutant on disk, run the tests, restore the file; record the outcome."""
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    shutil.rmtree(".hypothesis", ignore_errors=True)  # no example saved from one mutant replayed on the next
    t0 = time.monotonic()
    result = mutate_and_test(item.mutations, command, timeout)
    mutant.seconds = round(time.monotonic() - t0, 1)
    output = result.output or ""
    if result.worker_outcome != WorkerOutcome.NORMAL or result.test_outcome == TestOutcome.INCOMPETENT:
        mutant.outcome = "incompetent"
    elif result.test_outcome == TestOutcome.SURVIVED:
        mutant.outcome = "survived"
    elif output == "timeout":
        mutant.outcome = "timeout"
    else:
        mutant.outcome = "killed"
        found = FAILED.search(output)
        mutant.failed_test = found.group(1) if found else None
    db = WorkDB(str(db_path), WorkDB.Mode.open)
    try:
        db.set_result(item.job_id, result)
    finally:
        db.close()


def baseline(command: str) -> float:
    """Seconds the unmutated tests take; exits if they fail (a mutant could not be judged)."""
    t0 = time.monotonic()
    res = subprocess.run(command, shell=True, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"the tests fail without any mutant: {command}\n{res.stdout[-3000:]}{res.stderr[-2000:]}")
    return time.monotonic() - t0


# --------------------------------------------------------------------------- scoring


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for k successes out of n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def tally(mutants: list[Mutant], population: int, equivalents_out: bool) -> dict:
    """Counts, score and 95 % interval of one group's run mutants."""
    count = {
        o: sum(m.outcome == o for m in mutants) for o in ("killed", "timeout", "survived", "incompetent")
    }
    equivalent = sum(m.outcome == "survived" and m.explained[:1] == ["equivalent"] for m in mutants)
    detected = count["killed"] + count["timeout"]
    judged = detected + count["survived"] - (equivalent if equivalents_out else 0)
    low, high = wilson(detected, judged)
    return {
        **count,
        "equivalent": equivalent,
        "population": population,
        "sampled": len(mutants),
        "judged": judged,
        "score": detected / judged if judged else None,
        "ci95": [low, high],
    }


def overall(groups: dict[str, dict]) -> dict:
    """Population-weighted (stratified) score over the groups, with a normal-approximation 95 % interval."""
    total = sum(g["population"] for g in groups.values() if g["judged"])
    if not total:
        return {"score": None, "ci95": [0.0, 1.0], "judged": 0}
    score = var = 0.0
    for g in groups.values():
        if not g["judged"]:
            continue
        w = g["population"] / total
        p, n, big_n = g["score"], g["judged"], g["population"]
        fpc = max(0.0, (big_n - n) / (big_n - 1)) if big_n > 1 else 0.0
        score += w * p
        var += w * w * p * (1 - p) / n * fpc
    half = 1.96 * math.sqrt(var)
    judged = sum(g["judged"] for g in groups.values())
    return {"score": score, "ci95": [max(0.0, score - half), min(1.0, score + half)], "judged": judged}


def report(mutants: list[Mutant], populations: dict[str, int]) -> dict:
    """Print the per-group table and the survivors; return the summary for the JSON file."""
    for m in mutants:
        m.explained = list(EXPLAINED.get(m.key, ()))
    summary: dict = {"groups": {}, "groups_non_equivalent": {}}
    print(f"\n{'group':8} {'cands':>6} {'run':>4} {'killed':>6} {'t/o':>4} {'surv':>4} {'equiv':>5} "
          f"{'incomp':>6}  {'score':>6}  95 % CI         non-equiv score")  # fmt: skip
    for name in populations:
        ms = [m for m in mutants if m.group == name]
        if not ms:
            continue
        raw = summary["groups"][name] = tally(ms, populations[name], equivalents_out=False)
        neq = summary["groups_non_equivalent"][name] = tally(ms, populations[name], equivalents_out=True)
        print(
            f"{name:8} {raw['population']:>6} {raw['sampled']:>4} {raw['killed']:>6} {raw['timeout']:>4} "
            f"{raw['survived']:>4} {raw['equivalent']:>5} {raw['incompetent']:>6}  {pct(raw['score'])}  "
            f"{pct(raw['ci95'][0])}-{pct(raw['ci95'][1])}  {pct(neq['score'])} "
            f"({pct(neq['ci95'][0])}-{pct(neq['ci95'][1])})"
        )
    summary["overall"] = overall(summary["groups"])
    summary["overall_non_equivalent"] = overall(summary["groups_non_equivalent"])
    for label, key in (("overall", "overall"), ("overall, non-equivalent", "overall_non_equivalent")):
        o = summary[key]
        print(f"{label} (weighted by candidates, {o['judged']} judged): {pct(o['score'])} "
              f"(95 % CI {pct(o['ci95'][0])}-{pct(o['ci95'][1])})")  # fmt: skip
    survivors = [m for m in mutants if m.outcome == "survived"]
    print(f"\nsurvivors ({len(survivors)}):")
    for m in sorted(survivors, key=lambda m: (m.module, m.line)):
        print(f"  {m.module}:{m.line} [{m.definition}] {m.operator}: {m.before}  ->  {m.after}")
        if m.explained:
            print(f"      {m.explained[0]}: {m.explained[1]}")
    return summary


def pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:5.1f}%"


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, help="the clone to mutate")
    ap.add_argument("--source", type=Path, default=REPO, help="repository to clone")
    ap.add_argument(
        "--commit", help="commit of --source to mutate (default: its HEAD; --recheck: the earlier one)"
    )
    ap.add_argument("--sample", type=int, default=60, help="mutants drawn per group (default 60)")
    ap.add_argument("--seed", type=int, default=14, help="seed of the sample (default 14)")
    ap.add_argument(
        "--groups", default=",".join(GROUPS), help="comma-separated subset of " + ",".join(GROUPS)
    )
    ap.add_argument("--out", type=Path, help=f"JSON result (default WORKDIR/{STATE}/mutation.json)")
    ap.add_argument("--list", action="store_true", help="print candidates and the sample; run nothing")
    ap.add_argument(
        "--report", type=Path, help="print an earlier JSON result again (current EXPLAINED); no run"
    )
    ap.add_argument("--recheck", type=Path, help="re-run only the survivors of this earlier JSON result")
    ap.add_argument(
        "--add-tests",
        nargs="*",
        default=None,
        metavar="GLOB",
        help="copy these files of --source's working tree into the clone "
        "(default with --recheck: KILLER_TESTS, the tests written against earlier survivors)",
    )
    ap.add_argument("--timeout-factor", type=float, default=3.0, help="per-mutant timeout: factor x baseline")
    ap.add_argument("--timeout-min", type=float, default=60.0, help="... and at least this many seconds")
    args = ap.parse_args(argv)
    if args.report:
        old = json.loads(args.report.read_text())
        report([Mutant(**m) for m in old["mutants"]], {g: v["population"] for g, v in old["groups"].items()})
        return 0
    names = [g.strip() for g in args.groups.split(",") if g.strip()]
    unknown = set(names) - set(GROUPS)
    if unknown:
        ap.error(f"unknown group(s): {', '.join(sorted(unknown))}")
    try:
        import cosmic_ray  # noqa: F401
    except ImportError:
        sys.exit("Cosmic Ray is not installed: pip install -e '.[mutate]'")
    os.nice(19 - os.nice(0))  # shared machines: the whole run, tests included, at the lowest priority
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background
    signal.signal(signal.SIGTERM, _interrupt)  # so Cosmic Ray puts the mutated file back

    started = time.monotonic()
    previous = json.loads(args.recheck.read_text()) if args.recheck else None
    commit = args.commit or (previous["commit"] if previous else None)
    add_tests = args.add_tests if args.add_tests is not None else (list(KILLER_TESTS) if previous else [])
    workdir = args.workdir.resolve()
    commit = prepare_clone(workdir, args.source.resolve(), commit, add_tests)
    use_clone(workdir)
    out = args.out.resolve() if args.out else workdir / STATE / "mutation.json"
    print(f"clone {workdir} at {commit}; seed {args.seed}, sample {args.sample} per group")

    mutants: list[Mutant] = []
    populations: dict[str, int] = {}
    for name in names:
        group = GROUPS[name]
        db_path = workdir / STATE / f"{name}.sqlite"
        pool = candidates(name, group, db_path)
        populations[name] = len(pool)
        if previous:
            wanted = {
                (m["module"], m["operator"], m["occurrence"]): m
                for m in previous["mutants"]
                if m["group"] == name and m["outcome"] == "survived"
            }
            chosen = [(m, it) for m, it in pool if m.ident in wanted and describe(m)]
            for m, _ in chosen:
                if m.before != wanted[m.ident]["before"]:
                    sys.exit(f"source changed since {args.recheck}: {m.module}:{m.line} is now {m.before!r}")
        else:
            chosen = draw(pool, args.sample, f"{args.seed}:{name}")
        print(f"{name}: {len(pool)} candidates, {len(chosen)} to run")
        if args.list:
            for m, _ in chosen:
                print(f"  {m.module}:{m.line} {m.operator}: {m.before}  ->  {m.after}")
            continue
        if not chosen:
            continue
        command = test_command(group)
        base = baseline(command)
        timeout = max(args.timeout_min, args.timeout_factor * base)
        print(f"  baseline {base:.1f} s, timeout {timeout:.0f} s: {command}")
        for i, (m, item) in enumerate(chosen, 1):
            run_mutant(m, item, command, timeout, db_path)
            mutants.append(m)
            print(f"  [{i}/{len(chosen)}] {m.outcome:11} {m.seconds:5.1f}s {m.module}:{m.line} {m.operator}"
                  f"{'  by ' + m.failed_test if m.failed_test else ''}", flush=True)  # fmt: skip
    if args.list:
        return 0

    if previous:  # the earlier sample with the re-run survivors' new outcomes
        rerun = {m.ident: m for m in mutants}
        mutants = [
            rerun.get((m["module"], m["operator"], m["occurrence"]), Mutant(**m))
            for m in previous["mutants"]
            if m["group"] in names
        ]
        print(f"\nthe sample of {args.recheck} with its {len(rerun)} survivors re-run:")
    summary = report(mutants, populations)
    elapsed = time.monotonic() - started
    print(f"\n{len(mutants)} mutants, {elapsed / 60:.1f} min; JSON: {out}")
    result = {
        "tool": "cosmic-ray " + _version("cosmic-ray"),
        "commit": commit,
        "added_tests": add_tests,
        "seed": previous["seed"] if previous else args.seed,
        "sample_per_group": previous["sample_per_group"] if previous else args.sample,
        "recheck_of": str(args.recheck) if args.recheck else None,
        "elapsed_s": round(elapsed),
        **summary,
        "mutants": [asdict(m) for m in mutants],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


if __name__ == "__main__":
    sys.exit(main())
