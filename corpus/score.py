"""Scores of gputui's log parser on the corpus (``corpus/README.md``, *Scores*), and the comparison of
two independent readings of one log."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field

from corpus import HERE, entries, load, log_bytes, logs_dir
from gputui.stream.records import OUTCOMES as OUTCOMES  # the statuses an entry's outcome may have

NON_ALNUM = re.compile(r"[^a-z0-9]+")
TIME = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0}
TIME.update({"min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0})
TIME.update({"h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0})
COUNT = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9}
MEMORY = {"k": "_kib", "kb": "_kb", "kib": "_kib", "m": "_mib", "mb": "_mb", "mib": "_mib"}
MEMORY.update({"g": "_gib", "gb": "_gb", "gib": "_gib", "tb": "_tb", "tib": "_tib"})


def key(name: str) -> str:
    """A name as compared: through gputui's alias table, then letters and digits only (``tok/sec``,
    ``tok_sec`` and ``HellaSwag accuracy``/``hella_swag_accuracy`` are the same name spelled two ways)."""
    from gputui.stream.names import canonical_metric_name

    return NON_ALNUM.sub("", canonical_metric_name(name))


def accepted(name: str, value: float, unit: str | None) -> list[tuple[str, float]]:
    """(name, value) forms under which a printed value counts as read: the name as printed, with the
    unit's suffix, and the value as printed or converted (seconds, ×1000 for ``k``); names as :func:`key`."""
    canon = key
    base = name
    forms = [(canon(base), value)]
    if unit:
        low = unit.lower()
        if "/" in low and low.split("/")[0].strip() in TIME:  # "s/iter", "ms/step": a time per item
            low = low.split("/")[0].strip()
        if unit == "%":
            forms += [(canon(base + "_pct"), value), (canon(base), value / 100)]
        elif low in TIME:
            seconds = value * TIME[low]
            forms += [(canon(base + "_s"), seconds), (canon(base), seconds)]
        elif low in MEMORY:
            forms += [(canon(base + MEMORY[low]), value)]
            forms += [(canon(base), value * f) for f in (1024.0, 1000.0, 1 / 1024, 1 / 1000)]
        elif unit in COUNT:
            forms += [(canon(base), value * COUNT[unit])]
    return forms


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12


@dataclass
class LogScore:
    name: str
    family: str
    split: str
    expected: int = 0
    by_name: int = 0
    with_position: int = 0
    loose: int = 0
    outcome_expected: str | None = None
    outcome_got: str | None = None
    invented: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def outcome_right(self) -> bool:
        return self.outcome_expected == self.outcome_got


def parse(name: str) -> list:
    from gputui.logs import parse_bytes

    return parse_bytes(log_bytes(name))


def score_log(entry: dict) -> LogScore:
    records = parse(entry["name"])
    metrics = [r for r in records if r.kind == "metric"]
    outcome = [r for r in records if r.kind == "event" and r.get("event") == "outcome"]
    result = LogScore(entry["name"], entry["family"], entry["split"])
    outcome_entry = entry.get("outcome") or {}
    result.outcome_expected = None if outcome_entry.get("disputed") else outcome_entry.get("status")
    result.outcome_got = outcome[-1].get("outcome") if outcome else None
    if entry.get("training") is False:
        result.invented = invented(entry)
    index: dict[str, list] = defaultdict(list)
    for record in metrics:
        value = record.get("value")
        if isinstance(value, int | float):
            index[key(record.get("name"))].append(record)
    for line in entry.get("values", []):
        for printed in line["printed"]:
            result.expected += 1
            found = positioned = loose = False
            forms = accepted(printed["name"], float(printed["value"]), printed.get("unit"))
            if printed.get("also"):  # the second reading's spelling of the name
                forms += accepted(printed["also"], float(printed["value"]), printed.get("unit"))
            for name, value in forms:
                for record in index.get(name, ()):
                    if close(float(record.get("value")), value):
                        found = True
                        if _at(record, line):
                            positioned = True
                            break
                if positioned:
                    break
            if not found:
                loose = _loosely(printed, index)
            result.by_name += found
            result.with_position += positioned
            result.loose += found or loose
            if not found:
                result.misses.append(
                    f"line {line['line']}: {printed['name']}={printed['value']}"
                    f"{printed.get('unit') or ''}  | {line['text'][:140]}"
                )
    return result


def measured_lines(name: str) -> set[int]:
    """The lines of a no-training log that print a measurement of the job (``readings/measures.json``)."""
    lines: set[int] = set()
    for path in sorted((HERE / "readings").glob("measures*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")).get(name, {}).get("lines", []):
            first, _, last = str(item).partition("-")
            lines.update(range(int(first), int(last or first) + 1))
    return lines


def invented(entry: dict) -> int:
    """Metric records of a log without training that come from no line printing a measurement of the
    job (its evaluation scores, times: those may be read). The log is fed line by line so that each
    record's line is known."""
    from gputui.logs import LogParser

    allowed = measured_lines(entry["name"])
    parser = LogParser()
    count = 0
    for number, line in enumerate(log_bytes(entry["name"]).split(b"\n"), start=1):
        records = parser.feed(line + b"\n")
        count += sum(r.kind == "metric" for r in records) if number not in allowed else 0
    return count + sum(r.kind == "metric" for r in parser.finish())


def _loosely(printed: dict, index: dict[str, list]) -> bool:
    """The value under any name holding the expected name's longest word."""
    word = NON_ALNUM.sub("", max(printed["name"].replace("-", "_").split("_"), key=len).lower())
    values = [v for _, v in accepted(printed["name"], float(printed["value"]), printed.get("unit"))]
    return any(
        word in name and any(close(float(r.get("value")), v) for r in records for v in values)
        for name, records in index.items()
    )


def _at(record, line: dict) -> bool:
    step, epoch = line.get("step"), line.get("epoch")
    if step is not None and record.get("step") != step:
        return False
    return epoch is None or record.get("epoch") is None or record.get("epoch") == epoch


def total(scores: list[LogScore]) -> dict:
    expected = sum(s.expected for s in scores)
    judged = [s for s in scores if s.outcome_expected]

    def share(n: int) -> float | None:
        return round(100.0 * n / expected, 1) if expected else None

    return {
        "logs": len(scores),
        "values": expected,
        "recall_by_name_pct": share(sum(s.by_name for s in scores)),
        "with_position_pct": share(sum(s.with_position for s in scores)),
        "loose_pct": share(sum(s.loose for s in scores)),
        "outcomes_right": sum(s.outcome_right for s in judged),
        "outcomes": len(judged),
        "invented": sum(s.invented for s in scores),
    }


def score_all(split: str = "all", names: list[str] | None = None, round_: int = 0) -> list[LogScore]:
    chosen = []
    for entry in entries():
        if names and entry["name"] not in names:
            continue
        if round_ and entry.get("round", 1) != round_:
            continue
        if split != "all" and entry["split"] != split:
            continue
        if not (logs_dir() / f"{entry['name']}.log").exists():
            continue
        chosen.append(score_log(entry))
    return chosen


def cmd_score(args: argparse.Namespace) -> int:
    scores = score_all(args.split, args.names, args.round)
    if args.json:
        print(json.dumps({"total": total(scores), "by_family": by_family(scores)}, indent=1))
        return 0
    if args.markdown:
        print(markdown(scores))
        return 0
    for s in scores:
        mark = "" if s.outcome_right else f"  outcome {s.outcome_got} != {s.outcome_expected}"
        hidden = s.split == "heldout" and not args.show_heldout
        print(
            f"{s.name:48} {s.by_name:4}/{s.expected:<4} pos {s.with_position:4}{mark}"
            + (f"  invented {s.invented}" if s.invented else "")
        )
        if args.misses and not hidden:
            for miss in s.misses[: args.misses]:
                print(f"    miss {miss}")
    print(json.dumps(total(scores)))
    return 0


def markdown(scores: list[LogScore]) -> str:
    """The figures by family as a Markdown table (``docs/log-formats.md``, *The corpus*)."""
    rows = ["| family | logs | values | by name | with position | outcomes |", "|---|---|---|---|---|---|"]
    for family, t in by_family(scores).items():
        by_name = "-" if t["recall_by_name_pct"] is None else f"{t['recall_by_name_pct']:.1f} %"
        position = "-" if t["with_position_pct"] is None else f"{t['with_position_pct']:.1f} %"
        rows.append(
            f"| {family} | {t['logs']} | {t['values']} | {by_name} | {position} | "
            f"{t['outcomes_right']}/{t['outcomes']} |"
        )
    return "\n".join(rows)


def by_family(scores: list[LogScore]) -> dict:
    groups: dict[str, list[LogScore]] = defaultdict(list)
    for s in scores:
        groups[s.family].append(s)
    return {family: total(group) for family, group in sorted(groups.items())}


def cmd_compare(args: argparse.Namespace) -> int:
    """Where two readings of one log (entry files) differ: lines, names, values, outcome."""
    a, b = _read(args.first), _read(args.second)
    differences = 0
    lines_a = {v["line"]: v for v in a.get("values", [])}
    lines_b = {v["line"]: v for v in b.get("values", [])}
    for line in sorted(set(lines_a) | set(lines_b)):
        va, vb = lines_a.get(line), lines_b.get(line)
        if va is None or vb is None:
            print(f"line {line}: only in {'first' if vb is None else 'second'}")
            differences += 1
            continue
        pa = {(p["name"], float(p["value"]), p.get("unit")) for p in va["printed"]}
        pb = {(p["name"], float(p["value"]), p.get("unit")) for p in vb["printed"]}
        for extra in sorted(pa - pb, key=str):
            print(f"line {line}: first only {extra}")
            differences += 1
        for extra in sorted(pb - pa, key=str):
            print(f"line {line}: second only {extra}")
            differences += 1
        for key in ("step", "epoch"):
            if va.get(key) != vb.get(key):
                print(f"line {line}: {key} {va.get(key)} != {vb.get(key)}")
                differences += 1
    oa, ob = (a.get("outcome") or {}).get("status"), (b.get("outcome") or {}).get("status")
    if oa != ob or a.get("training") != b.get("training"):
        print(f"outcome {oa} != {ob} or training {a.get('training')} != {b.get('training')}")
        differences += 1
    print(f"{differences} differences")
    return 1 if differences else 0


def _read(path: str) -> dict:
    """An entry file given by path, or the entry of that name."""
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    return load(path)


def add_score_commands(sub) -> None:
    score = sub.add_parser("score", help="gputui's parser against every entry")
    score.add_argument("names", nargs="*")
    score.add_argument("--split", choices=("dev", "heldout", "all"), default="all")
    score.add_argument("--json", action="store_true")
    score.add_argument("--markdown", action="store_true", help="the figures by family as a Markdown table")
    score.add_argument("--round", type=int, default=0, help="only the entries of this gathering round")
    score.add_argument("--misses", type=int, default=0, help="list up to N missed values per dev log")
    score.add_argument("--show-heldout", action="store_true", help="also list held-out misses")
    score.set_defaults(run=cmd_score)
    compare = sub.add_parser("compare", help="where two readings of one log differ")
    compare.add_argument("first")
    compare.add_argument("second")
    compare.set_defaults(run=cmd_compare)


if __name__ == "__main__":
    sys.exit(1)


def merge(entry: dict, reading: dict) -> tuple[dict, dict]:
    """The entry with a second, independent reading merged in: only the values both readings list
    (same value; a name the two spell differently is kept as ``also``), a position only where both give
    the same; the outcome and ``training`` stay the first reading's where the two agree, else are
    left for a person to settle (``disputed``). Returns (entry, counts)."""
    counts = {"agreed": 0, "renamed": 0, "dropped": 0, "positions_dropped": 0}
    second = {(v["line"], v.get("frame")): v for v in reading.get("values", [])}
    values = []
    for line in entry.get("values", []):
        other = second.get((line["line"], line.get("frame")))
        if other is None:
            counts["dropped"] += len(line["printed"])
            continue
        pool = list(other["printed"])
        kept = []
        for printed in line["printed"]:
            match = _partner(printed, pool)
            if match is None:
                counts["dropped"] += 1
                continue
            pool.remove(match)
            item = dict(printed)
            if key(match["name"]) != key(printed["name"]):
                item["also"] = match["name"]
                counts["renamed"] += 1
            counts["agreed"] += 1
            kept.append(item)
        counts["dropped"] += len(pool)
        if not kept:
            continue
        merged = {**line, "printed": kept}
        for position in ("step", "epoch"):
            if line.get(position) != other.get(position):
                merged[position] = None
                counts["positions_dropped"] += 1
        values.append(merged)
    out = dict(entry)
    out["values"] = values
    disputed = ["training"] if entry.get("training") != reading.get("training") else []
    if (entry.get("outcome") or {}).get("status") != (reading.get("outcome") or {}).get("status"):
        disputed.append("outcome")
    out["disputed"] = {f: [entry.get(f), reading.get(f)] for f in disputed}
    check = {"by": reading.get("by"), "how": reading.get("how", "")}
    out["checks"] = [c for c in entry.get("checks", []) if c.get("by") != check["by"]] + [check]
    return out, counts


def _partner(printed: dict, pool: list[dict]) -> dict | None:
    """The value of the other reading that is this one: same value, the same name first."""
    value = float(printed["value"])
    same = [p for p in pool if close(float(p["value"]), value)]
    named = [p for p in same if key(p["name"]) == key(printed["name"])]
    return (named or same or [None])[0]
