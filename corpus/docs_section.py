"""Write the corpus section of docs/log-formats.md (between its ``corpus:begin``/``corpus:end`` marks)
from ``docs_section.md``: the prose, the figures of ``figures.json`` and the table by family of the
rounds it holds (``corpus.py score --markdown``). Edit the prose in ``docs_section.md``, not in the doc.

    python corpus/docs_section.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "docs" / "log-formats.md"
START, END = "<!-- corpus:begin -->", "<!-- corpus:end -->"


def main() -> int:
    figures = json.loads((HERE / "figures.json").read_text())["rounds"]
    names = sorted(
        entry["name"]
        for entry in (json.loads(p.read_text()) for p in (HERE / "entries").glob("*.json"))
        if str(entry.get("round", 1)) in figures
    )
    score = [sys.executable, str(HERE / "corpus.py"), "score", "--markdown", *names]
    table = subprocess.run(score, capture_output=True, text=True, check=True).stdout.strip()
    summary = [
        "| round | logs | values read twice | by name | with position | outcomes right | invented |",
        "|---|---|---|---|---|---|---|",
    ]
    for number, f in sorted(figures.items()):
        summary.append(
            f"| {number} | {f['logs']} | {f['values']:,} | {f['recall_by_name_pct']} % | "
            f"{f['with_position_pct']} % | {f['outcomes_right']}/{f['outcomes']} | {f['invented']} |"
        )
    body = (
        (HERE / "docs_section.md")
        .read_text()
        .replace("{SUMMARY}", "\n".join(summary))
        .replace("{TABLE}", table)
    )
    doc = DOC.read_text()
    doc = doc[: doc.index(START)] + START + "\n" + body + END + doc[doc.index(END) + len(END) :]
    DOC.write_text(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
