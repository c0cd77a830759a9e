"""Events per second read by the generated ``parse_event`` against the official
CloudEvents SDK for Python (v2, ``JSONFormat().read``) on the same JSON events,
in one run (issue 15: at least 2x).

The SDK reads the envelope and leaves ``data`` as JSON; ``parse_event`` also
types and validates the payload (pydantic models, strict JSON types), keeps
timestamps' text and checks the profile's rules. Events: every example of the
shipped catalogs, each with its own id, repeated to ``--events``.

    python3 bench/parse_bench.py [--events 20000] [--runs 5]
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.generate import render  # noqa: E402
from generator.lint import lint  # noqa: E402
from generator.naming import python_package_name  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()

    catalog_set = lint(str(ROOT / "catalog")).catalog_set
    directory = Path(tempfile.mkdtemp(prefix="evcat-parse-bench-"))
    for relative, content in render(catalog_set, ["python"])["python"].items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    sys.path.insert(0, str(directory / "python"))

    examples = [(event.catalog_id, event.complete_example(example.values)) for event in catalog_set.events for example in event.examples]
    cases = []
    for index in range(arguments.events):
        catalog_id, example = examples[index % len(examples)]
        raw = json.dumps({**example, "id": f"event-{index}"}, ensure_ascii=False).encode("utf-8")
        cases.append((importlib.import_module(python_package_name(catalog_id)).parse_event, raw))

    from cloudevents.core.formats.json import JSONFormat

    sdk = JSONFormat()

    def ours() -> None:
        for parse, raw in cases:
            parse(raw)

    def theirs() -> None:
        for _, raw in cases:
            sdk.read(None, raw)

    timings: dict[str, list[float]] = {"parse_event": [], "SDK v2": []}
    ours(), theirs()  # warm up: imports, compiled validators
    ratios = []
    for run in range(arguments.runs):  # paired, back to back, so both see the same machine
        pair = (("parse_event", ours), ("SDK v2", theirs))
        for name, function in pair if run % 2 == 0 else reversed(pair):
            start = time.perf_counter()
            function()
            timings[name].append(time.perf_counter() - start)
        ratios.append(timings["SDK v2"][-1] / timings["parse_event"][-1])
    rates = {name: arguments.events / statistics.median(values) for name, values in timings.items()}
    print(f"{arguments.events} events, {len(examples)} distinct examples of {len(catalog_set.events)} event types, {arguments.runs} paired runs")
    for name, rate in rates.items():
        print(f"  {name:12} {rate:10,.0f} events/s (median run)")
    ratio = statistics.median(ratios)
    verdict = "met" if ratio >= 2 else "MISSED"
    print(f"  runs: {' '.join(f'{r:.2f}' for r in ratios)}")
    print(f"parse_event / SDK v2: {ratio:.2f}x, median of the runs (target >= 2x): {verdict}")
    return 0 if ratio >= 2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
