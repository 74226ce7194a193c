"""What one third of the line-reading floor leaves a pure-Python log parser: a time budget, measured.

The throughput goal of the log parsers is one third of the floor of reading the same bytes line by
line in Python without parsing (``benchmarks/parse_throughput.py``). This script measures, on one
copy of the peer corpus (``tests/logs/data/*.log``, in memory, best of ``--repeat`` runs), what that
leaves per frame once the parts no parser can skip are paid:

- **floor**: text-mode ``for line in TextIOWrapper(...)`` (decode, split on ``\\n`` and ``\\r``);
- **parser**: ``gputui.logs.parse_bytes`` (frames, records, outcome), for the current ratio;
- **records**: building the parser's own records again (same names, values parsed from text with
  ``float``, same field layout, one :class:`~gputui.stream.records.Record` each, as ``logs.base.emit`` does):
  the schema's one-metric-per-record model makes these a fixed cost of any parser; also with only
  ``name`` and ``value`` (**minimal records**, the most generous bound), and as bare ``(name, value)``
  tuples (**tuples**: what a different record model would still pay);
- **one regex per frame**: a single failing ``re.search`` on every frame, the cheapest recogniser a
  per-frame parser can have (a real one also extracts, converts and keeps per-rank state);
- **numbers per frame**: ``NUMBER.findall`` (unsigned decimals) on every frame, the crudest extraction
  (no signs, exponents or names): for comparison with what the tuple model would leave;
- **one scan per chunk**: instead of per-frame calls, a single C-level ``finditer`` of the families'
  anchor words over the decoded text (what a bulk recogniser needs before it extracts anything).

``best possible ratio`` = floor / (floor + minimal records + the cheaper recogniser): an upper bound
on what any CPython parser of this schema can reach, however clever, since it leaves out all
extraction and state. ``left per frame with tuples``: the time per frame that would remain for
recognising, extracting and keeping state if records were tuples.

Usage: ``python benchmarks/parse_budget.py [--repeat 15]``.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gputui.logs import LogParser  # noqa: E402
from gputui.logs.normalize import Normalizer  # noqa: E402
from gputui.stream.records import SCHEMA_VERSION, Record  # noqa: E402

ANCHORS = re.compile(r"loss|acc|[Ee]poch|step|it/s|\{'|Error|error|CANCELLED|Traceback")
NEVER = re.compile(r"\x00\x01")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def corpus() -> bytes:
    return b"".join(p.read_bytes() + b"\n" for p in sorted((ROOT / "tests/logs/data").glob("*.log")))


def best_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15, help="runs of each timing; the best is kept")
    ns = ap.parse_args()
    data = corpus()
    text = data.decode("utf-8", "replace")

    def floor() -> int:
        return sum(1 for _ in io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace"))

    def parse() -> list[Record]:
        parser = LogParser()
        return parser.feed(data, now=0.0) + parser.finish(now=0.0)

    records = [r for r in parse() if r.kind == "metric"]
    frames = [t for _, t in Normalizer().feed(data) + Normalizer().finish()]
    layouts = [
        ({k: v for k, v in r.fields.items() if k not in ("name", "value")}, r["name"]) for r in records
    ]
    values = [repr(r["value"]) for r in records]

    def build_records() -> list[Record]:
        out = []
        append = out.append
        for (shared, name), raw in zip(layouts, values, strict=True):
            fields = shared.copy()
            fields["name"] = name
            fields["value"] = float(raw)
            append(Record("metric", 0.0, fields, SCHEMA_VERSION))
        return out

    def minimal_records() -> list[Record]:
        return [
            Record("metric", 0.0, {"name": name, "value": float(raw)}, SCHEMA_VERSION)
            for (_, name), raw in zip(layouts, values, strict=True)
        ]

    def tuples() -> list[tuple[str, float]]:
        return [(name, float(raw)) for (_, name), raw in zip(layouts, values, strict=True)]

    def regex_per_frame() -> None:
        search = NEVER.search
        for frame in frames:
            search(frame)

    def numbers_per_frame() -> None:
        findall = NUMBER.findall
        for frame in frames:
            findall(frame)

    def scan_per_chunk() -> int:
        return sum(1 for _ in ANCHORS.finditer(text))

    ms = {
        "floor": best_ms(floor, ns.repeat),
        "parser": best_ms(parse, max(3, ns.repeat // 3)),
        "records": best_ms(build_records, ns.repeat),
        "minimal_records": best_ms(minimal_records, ns.repeat),
        "tuples": best_ms(tuples, ns.repeat),
        "regex_per_frame": best_ms(regex_per_frame, ns.repeat),
        "numbers_per_frame": best_ms(numbers_per_frame, ns.repeat),
        "scan_per_chunk": best_ms(scan_per_chunk, ns.repeat),
    }
    budget = 3 * ms["floor"]
    recogniser = min(ms["regex_per_frame"], ms["scan_per_chunk"])
    fixed = ms["floor"] + ms["minimal_records"] + recogniser
    with_tuples = ms["floor"] + ms["tuples"] + recogniser
    report = {
        "corpus_mb": round(len(data) / 1e6, 3),
        "frames": len(frames),
        "text_mode_lines": floor(),
        "metric_records": len(records),
        **{f"{k}_ms": round(v, 2) for k, v in ms.items()},
        "parser_ratio_to_floor": round(ms["floor"] / ms["parser"], 3),
        "budget_at_one_third_ms": round(budget, 2),
        "floor_plus_minimal_records_plus_cheapest_recogniser_ms": round(fixed, 2),
        "left_per_frame_ns": round((budget - fixed) * 1e6 / len(frames), 1),
        "best_possible_ratio": round(ms["floor"] / fixed, 3),
        "left_per_frame_with_tuples_ns": round((budget - with_tuples) * 1e6 / len(frames), 1),
        "python": sys.version.split()[0],
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
