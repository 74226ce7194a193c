"""The corpus of real training logs (``corpus/README.md``): add, read, check, materialise and score.

``python corpus/corpus.py add NAME --repo OWNER/NAME --path P --family F`` copies a log out of a
repository snapshot (``/work/.mirror/OWNER+NAME/repo``, brought by the search tool's ``fetch``) and
writes its entry; ``lines NAME`` prints its lines numbered, frame by frame, to write the expectations;
``score`` runs gputui's parser over every log and compares.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENTRIES = HERE / "entries"
MIRRORS = Path(os.environ.get("GPUTUI_MIRRORS", "/work/.mirror"))
SCHEMA = "gputui-corpus/v1"
MAX_BYTES = 4 << 20
CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


def logs_dir() -> Path:
    """Where the logs are: ``$GPUTUI_CORPUS``, else ``corpus/logs``."""
    return Path(os.environ.get("GPUTUI_CORPUS") or HERE / "logs")


def entry_path(name: str) -> Path:
    return ENTRIES / f"{name}.json"


def load(name: str) -> dict:
    return json.loads(entry_path(name).read_text(encoding="utf-8"))


def save(entry: dict) -> None:
    ENTRIES.mkdir(exist_ok=True)
    text = json.dumps(entry, indent=2, ensure_ascii=False) + "\n"
    entry_path(entry["name"]).write_text(text, encoding="utf-8")


def entries() -> Iterator[dict]:
    for path in sorted(ENTRIES.glob("*.json")):
        yield json.loads(path.read_text(encoding="utf-8"))


def split_of(name: str) -> str:
    """``dev`` or ``heldout``, by a hash of the name (no one chooses)."""
    return "heldout" if hashlib.sha256(name.encode()).digest()[0] % 2 else "dev"


def mirror(repo: str) -> Path:
    """The git directory of a repository's snapshot (bare, or a work tree's ``.git``)."""
    path = MIRRORS / repo.replace("/", "+", 1) / "repo"
    return path / ".git" if (path / ".git").is_dir() else path


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(mirror(repo)), *args], check=True, capture_output=True
    ).stdout


def frames(raw: bytes) -> list[list[str]]:
    """Each physical line's frames: split on ``\\r``, ANSI removed, backspaces applied."""
    out = []
    for line in raw.split(b"\n"):
        text = line.decode("utf-8", "replace")
        parts = []
        for frame in text.split("\r"):
            frame = CSI.sub("", frame)
            while "\x08" in frame:
                frame = re.sub("[^\x08]\x08|^\x08+", "", frame, count=1)
            parts.append(frame.rstrip())
        out.append(parts)
    if out and out[-1] == [""]:
        out.pop()
    return out


def cmd_add(args: argparse.Namespace) -> int:
    if entry_path(args.name).exists() and not args.force:
        print(f"{args.name}: an entry exists (--force to replace)", file=sys.stderr)
        return 1
    commit = git(args.repo, "rev-parse", args.commit).decode().strip()
    blob = git(args.repo, "rev-parse", f"{commit}:{args.path}").decode().strip()
    data = git(args.repo, "cat-file", "blob", blob)
    if len(data) > MAX_BYTES:
        print(f"{args.name}: {len(data)} bytes, more than {MAX_BYTES}", file=sys.stderr)
        return 1
    logs_dir().mkdir(parents=True, exist_ok=True)
    (logs_dir() / f"{args.name}.log").write_bytes(data)
    entry = {
        "schema": SCHEMA,
        "name": args.name,
        "family": args.family,
        "split": split_of(args.name),
        "round": args.round,
        "source": {
            "repo": args.repo,
            "path": args.path,
            "commit": commit,
            "blob": blob,
            "url": f"https://github.com/{args.repo}/blob/{commit}/{args.path}",
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        },
        "training": None,
        "outcome": None,
        "values": [],
        "not_metrics": [],
        "notes": [],
        "checks": [],
    }
    save(entry)
    lines = data.count(b"\n")
    print(f"{args.name}: {len(data)} bytes, {lines} lines, split {entry['split']}")
    return 0


def log_bytes(name: str) -> bytes:
    return (logs_dir() / f"{name}.log").read_bytes()


def cmd_lines(args: argparse.Namespace) -> int:
    lines = frames(log_bytes(args.name))
    pattern = re.compile(args.grep) if args.grep else None
    end = args.end or len(lines)
    for number in range(max(args.start, 1), min(end, len(lines)) + 1):
        parts = lines[number - 1]
        for index, frame in enumerate(parts):
            if pattern is not None and not pattern.search(frame):
                continue
            tag = f"{number}" if len(parts) == 1 else f"{number}.{index}/{len(parts)}"
            print(f"{tag}\t{frame[: args.width]}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    bad = 0
    for entry in entries():
        path = logs_dir() / f"{entry['name']}.log"
        if not path.exists():
            print(f"{entry['name']}: missing")
            bad += 1
        elif hashlib.sha256(path.read_bytes()).hexdigest() != entry["source"]["sha256"]:
            print(f"{entry['name']}: SHA-256 differs")
            bad += 1
    print(f"{sum(1 for _ in entries())} entries, {bad} missing or different")
    return 1 if bad else 0


def cmd_materialize(args: argparse.Namespace) -> int:
    need: set[str] = set()
    for entry in entries():
        path = logs_dir() / f"{entry['name']}.log"
        if path.exists():
            continue
        source = entry["source"]
        if not mirror(source["repo"]).exists():
            need.add(source["repo"])
            continue
        data = git(source["repo"], "cat-file", "blob", source["blob"])
        logs_dir().mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for repo in sorted(need):
        print(f"fetch github:{repo}")
    return 1 if need else 0


def cmd_stats(args: argparse.Namespace) -> int:
    all_entries = list(entries())
    families = {e["family"] for e in all_entries}
    checked = [e for e in all_entries if len(e.get("checks", [])) >= 2 and e.get("values")]
    print(f"logs {len(all_entries)}, families {len(families)}, checked twice {len(checked)}")
    for split in ("dev", "heldout"):
        print(f"  {split}: {sum(e['split'] == split for e in checked)} checked")
    return 0


def main(argv: list[str] | None = None) -> int:
    from score import add_score_commands  # beside this file

    parser = argparse.ArgumentParser(prog="corpus.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="copy a log out of a repository snapshot and write its entry")
    add.add_argument("name")
    add.add_argument("--repo", required=True)
    add.add_argument("--path", required=True)
    add.add_argument("--commit", default="HEAD")
    add.add_argument("--family", required=True)
    add.add_argument("--force", action="store_true")
    add.add_argument("--round", type=int, default=1, help="the gathering round (2: measured blind)")
    add.set_defaults(run=cmd_add)
    lines = sub.add_parser("lines", help="a log's lines, numbered, frame by frame")
    lines.add_argument("name")
    lines.add_argument("--start", type=int, default=1)
    lines.add_argument("--end", type=int, default=0)
    lines.add_argument("--grep", default="")
    lines.add_argument("--width", type=int, default=400)
    lines.set_defaults(run=cmd_lines)
    sub.add_parser("check", help="every log present and byte-exact").set_defaults(run=cmd_check)
    sub.add_parser("materialize", help="write missing logs from snapshots").set_defaults(run=cmd_materialize)
    sub.add_parser("stats", help="logs, families, checked entries").set_defaults(run=cmd_stats)
    add_score_commands(sub)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    try:
        sys.exit(main())
    except BrokenPipeError:  # "| head"
        sys.stderr.close()
        sys.exit(0)
