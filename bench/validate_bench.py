"""Benchmark `evcat validate` on 100,000 events against the strongest Python peer, in one run.

The peer is what a Python user who cares about speed would write: a script
that reads the same JSON-lines file, parses each line with orjson and checks
it with jsonschema-rs (the Rust validator evcat itself uses, so the fastest
JSON Schema validator Python has; the issue measured it 1.9x ahead of
evcat's old figure), one Draft202012Validator per event type with format
checking on, compiled on first use from the self-contained envelope schema
(event.schema.json, as `evcat generate` writes it). It runs on as many cores
as evcat (--jobs, default all): the lines are split by event type (read from
the raw bytes, as evcat does) over forked processes, so each compiles only
its share of the validators. Both sides are timed as whole processes
(interpreter start-up, imports and reading included); evcat's catalog parse
cache is warm, as on an author's machine. With --with-jsonschema the
pure-Python `jsonschema` package's validator is measured once too, as an
extra line (the peer of issue 7).

--runs alternating rounds, wall and CPU time (the process and its reaped
workers), median [min-max]; the verdict is the median of the per-round ratios.
Target (issue 29): evcat at least as fast per event as the jsonschema-rs peer
(>= 1.0x, wall). Issue 7's target (>= 20x the pure-Python jsonschema) is
checked when that line is measured.
Usage: python bench/validate_bench.py [--events 100000] [--types 1000] [--runs 5] [--jobs N] [--with-jsonschema] [--strict]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import measure  # noqa: E402
import synth  # noqa: E402
from measure import Rounds, Targets  # noqa: E402

from generator.envelope import envelope_schema  # noqa: E402
from generator.commands.lint import lint  # noqa: E402

# argv: schemas.json ([[type, dataversion, schema], ...]), events.jsonl, jobs, library (rs | jsonschema)
PEER = r"""
import re, sys, zlib
import orjson

schemas_path, events_path, jobs, library = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(schemas_path, "rb") as handle:
    schemas = {(kind, version): schema for kind, version, schema in orjson.loads(handle.read())}
with open(events_path, "rb") as handle:
    lines = handle.read().splitlines()

if library == "rs":
    import jsonschema_rs

    def compile(schema):
        return jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
else:
    import jsonschema

    def compile(schema):
        return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def check(positions):
    validators, invalid = {}, 0
    for position in positions:
        event = orjson.loads(lines[position])
        key = (event.get("type"), event.get("dataversion"))
        validator = validators.get(key)
        if validator is None:
            validator = validators[key] = compile(schemas[key])
        if not validator.is_valid(event):
            invalid += 1
    return invalid


if jobs < 2:
    invalid = check(range(len(lines)))
else:
    from multiprocessing import get_context

    TYPE = re.compile(rb'"type"\s*:\s*"([^"\\]*)"')
    buckets = [[] for _ in range(jobs * 8)]
    for position, line in enumerate(lines):
        match = TYPE.search(line)
        buckets[zlib.crc32(match.group(1) if match else b"") % len(buckets)].append(position)
    with get_context("fork").Pool(jobs) as pool:
        invalid = sum(pool.map(check, [bucket for bucket in buckets if bucket], chunksize=1))
print(invalid)
"""


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--types", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="cores for each side: EVCAT_JOBS for evcat, forked processes for the peer (default: all)")
    parser.add_argument("--with-jsonschema", action="store_true", help="also time the pure-Python jsonschema peer once")
    parser.add_argument("--work", type=Path, default=HERE / "work")
    measure.add_common_arguments(parser)
    arguments = parser.parse_args()
    measure.check_checkout()
    catalog = arguments.work / f"validate-catalog-{arguments.types}"
    shutil.rmtree(catalog, ignore_errors=True)
    synth.write(catalog, arguments.types, 20, "normo")
    catalog_set = lint(str(catalog)).catalog_set
    events = arguments.work / f"events-{arguments.events}.jsonl"
    write_events(catalog_set, events, arguments.events)
    schemas = arguments.work / f"validate-schemas-{arguments.types}.json"
    schemas.write_text(json.dumps([[event.type, event.dataversion, envelope_schema(event, catalog_set.schemas)]
                                   for event in catalog_set.events]), encoding="utf-8")
    print(f"{arguments.events} events of {len(catalog_set.events)} types, {events.stat().st_size / 1e6:.1f} MB; "
          f"--jobs {arguments.jobs} for each side; {arguments.runs} alternating rounds", flush=True)

    measure.compile_checkout()
    env = measure.child_env(EVCAT_JOBS=str(arguments.jobs))
    commands = {
        "evcat": [sys.executable, "-m", "generator", "validate", str(catalog), str(events), "--cache-dir", str(arguments.work / "cache")],
        "peer": [sys.executable, "-c", PEER, str(schemas), str(events), str(arguments.jobs), "rs"],
    }
    for name, command in commands.items():  # warm: evcat's parse cache, the page cache, bytecode
        sample = measure.run(command, env=env, cwd=measure.ROOT)
        if name == "peer" and sample.stdout.strip() != "0":
            raise SystemExit(f"the peer found {sample.stdout.strip()} invalid events; the benchmark events must be valid")
    rounds = Rounds()
    for run in range(arguments.runs):
        for name in measure.alternate(run, list(commands)):
            rounds.add(name, measure.run(commands[name], env=env, cwd=measure.ROOT))
    if arguments.with_jsonschema:
        rounds.add("jsonschema", measure.run([*commands["peer"][:-1], "jsonschema"], env=env, cwd=measure.ROOT))
    print()
    rounds.table([
        ("peer: orjson + jsonschema-rs", "peer"),
        ("evcat validate (whole CLI run)", "evcat"),
        ("extra: orjson + pure-Python jsonschema (1 run)", "jsonschema"),
    ], peer="peer")
    print()
    for name in rounds.samples:
        print(f"{name:12} {arguments.events / rounds.median(name):10,.0f} events/s (median wall), "
              f"{arguments.events / rounds.median(name, 'cpu'):10,.0f} events per CPU second")
    speedup = [1 / ratio for ratio in rounds.ratios("evcat", "peer")]
    cpu_speedup = [1 / ratio for ratio in rounds.ratios("evcat", "peer", "cpu")]
    print(f"evcat per-event speed / peer's, per round: {measure.spread(speedup, digits=2)} wall, "
          f"{measure.spread(cpu_speedup, digits=2)} CPU")
    targets = Targets()
    targets.check("evcat / jsonschema-rs peer, events per second (wall, median of rounds)", statistics.median(speedup), 1.0, "x",
                  at_least=True, note=f"CPU {statistics.median(cpu_speedup):.2f}x")
    if rounds.samples.get("jsonschema"):
        targets.check("evcat / pure-Python jsonschema (issue 7)", rounds.median("jsonschema") / rounds.median("evcat"), 20, "x",
                      at_least=True)
    return targets.exit_code(arguments.strict)


if __name__ == "__main__":
    sys.exit(main())
