"""Events per second read by the generated package against the official
CloudEvents SDK for Python (v2), on the same events, in one run (issue 15:
at least 2x; applied here to both HTTP content modes).

- structured mode: the generated ``parse_event`` on the JSON text against the
  SDK's ``JSONFormat().read``;
- binary mode: the generated ``from_http(headers, body)`` on binary-mode HTTP
  messages (``ce-`` headers, the payload as body, as the generated
  ``to_http(event, "binary")`` writes them) against the SDK's
  ``cloudevents.core.bindings.http.from_binary(HTTPMessage(headers, body),
  JSONFormat())``.

The SDK v2 is the peer: the official reader, and the fastest Python
CloudEvents reader we know of. It reads the envelope and parses ``data`` as
JSON; the generated code also types and validates the payload (pydantic
models, strict JSON types), keeps timestamps' text and checks the profile's
rules. Events: every example of the shipped catalogs, each with its own id,
repeated to ``--events``.

Both sides run in this process, one after the other in --runs rounds
(order alternating), each timed by wall clock and by CPU time
(``time.process_time``); the verdict is the median of the per-round ratios,
shown with their spread.

With ``--careful``, each round also reads the same events with the fast path
switched off (``parse_fast`` and ``binary_fast`` answering None, so every
event goes the careful way: ``read_json``, then the models' own checks):
what the compiled fast path buys, as on/off ratios in the same rounds.

    python3 bench/parse_bench.py [--events 20000] [--runs 5] [--careful] [--strict]
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
sys.path.insert(0, str(ROOT / "bench"))

import measure  # noqa: E402
from generator.commands.generate import render  # noqa: E402
from generator.commands.lint import lint  # noqa: E402
from generator.naming import python_package_name  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--careful", action="store_true",
                        help="also time the careful path alone (fast path off), same rounds")
    measure.add_common_arguments(parser)
    arguments = parser.parse_args()
    measure.check_checkout()

    catalog_set = lint(str(ROOT / "catalog")).catalog_set
    directory = Path(tempfile.mkdtemp(prefix="evcat-parse-bench-"))
    for relative, content in render(catalog_set, ["python"])["python"].items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    sys.path.insert(0, str(directory / "python"))

    examples = [(event.catalog_id, event.complete_example(example.values)) for event in catalog_set.events for example in event.examples]
    structured, binary = [], []
    for index in range(arguments.events):
        catalog_id, example = examples[index % len(examples)]
        package = importlib.import_module(python_package_name(catalog_id))
        raw = json.dumps({**example, "id": f"event-{index}"}, ensure_ascii=False).encode("utf-8")
        structured.append((package.parse_event, raw))
        headers, body = package.to_http(package.parse_event(raw), "binary")
        binary.append((package.from_http, headers, body))

    from cloudevents.core.bindings.http import HTTPMessage, from_binary
    from cloudevents.core.formats.json import JSONFormat

    sdk = JSONFormat()
    messages = [HTTPMessage(headers=dict(headers), body=body) for _, headers, body in binary]

    def ours_structured() -> None:
        for parse, raw in structured:
            parse(raw)

    def theirs_structured() -> None:
        for _, raw in structured:
            sdk.read(None, raw)

    def ours_binary() -> None:
        for read, headers, body in binary:
            read(headers, body)

    def theirs_binary() -> None:
        for message in messages:
            from_binary(message, sdk)

    packages = {sys.modules[read.__module__] for read, _, _ in binary}

    # The floor of the generated reading: the fast path's two library calls
    # alone (jiter's from_json with read_json's options, one pydantic-core
    # validate_python of the registry's compiled validator), no glue at all.
    from jiter import from_json

    floor_items = [(package._fastpath.fast_path(package.EVENTS).validator, raw)
                   for package, raw in ((sys.modules[parse.__module__], raw) for parse, raw in structured)]

    def floor_structured() -> None:
        for validator, raw in floor_items:
            validator.validate_python(from_json(raw, allow_inf_nan=False, catch_duplicate_keys=True, cache_mode=False))

    def careful(function):  # the fast path off: every event the careful way
        def run() -> None:
            switched = [(package._parsing, "parse_fast") for package in packages]
            switched += [(package._http, "binary_fast") for package in packages]
            originals = [getattr(module, name) for module, name in switched]
            for module, name in switched:
                setattr(module, name, lambda *arguments: None)
            try:
                function()
            finally:
                for (module, name), original in zip(switched, originals):
                    setattr(module, name, original)
        return run

    cases = {
        "structured": (("parse_event", ours_structured), ("SDK JSONFormat().read", theirs_structured)),
        "binary": (("from_http", ours_binary), ("SDK from_binary", theirs_binary)),
    }
    mechanisms = {}
    if arguments.careful:
        mechanisms = {
            "structured": ("parse_event", ("parse_event, careful path only", careful(ours_structured))),
            "binary": ("from_http", ("from_http, careful path only", careful(ours_binary))),
        }
    timed = {mode: list(pair) + ([mechanisms[mode][1]] if mode in mechanisms else []) for mode, pair in cases.items()}
    floor_name = "floor: from_json + validate_python"
    timed["structured"].append((floor_name, floor_structured))
    for functions in timed.values():  # warm up: imports, compiled validators
        for _, function in functions:
            function()
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for run in range(arguments.runs):
        for functions in timed.values():
            for name, function in measure.alternate(run, functions):
                start_wall, start_cpu = time.perf_counter(), time.process_time()
                function()
                wall.setdefault(name, []).append(time.perf_counter() - start_wall)
                cpu.setdefault(name, []).append(time.process_time() - start_cpu)
    print(f"{arguments.events} events, {len(examples)} distinct examples of {len(catalog_set.events)} event types, "
          f"{arguments.runs} alternating rounds; events/s from the median run")
    targets = measure.Targets()
    for mode, ((ours, _), (theirs, _)) in cases.items():
        print(f"{mode} mode:")
        for name in (ours, theirs):
            print(f"  {name:24} {arguments.events / statistics.median(wall[name]):10,.0f} events/s wall, "
                  f"{arguments.events / statistics.median(cpu[name]):10,.0f} events per CPU second")
        ratios = [a / b for a, b in zip(wall[theirs], wall[ours])]
        cpu_ratios = [a / b for a, b in zip(cpu[theirs], cpu[ours])]
        print(f"  {ours} speed / {theirs}'s, per round: wall {measure.spread(ratios, digits=2)}, CPU {measure.spread(cpu_ratios, digits=2)}")
        targets.check(f"{mode}: {ours} / {theirs}, wall (median of rounds)", statistics.median(ratios), 2, "x",
                      at_least=True, note=f"CPU {statistics.median(cpu_ratios):.2f}x")
        if mode == "structured":
            floor_ratios = [a / b for a, b in zip(wall[theirs], wall[floor_name])]
            print(f"  {floor_name:24} {arguments.events / statistics.median(wall[floor_name]):10,.0f} events/s wall: "
                  f"the most any reading built on these two calls can reach is {measure.spread(floor_ratios, digits=2)} "
                  f"the SDK's speed (wall, per round); {ours} reaches "
                  f"{statistics.median(ratios) / statistics.median(floor_ratios):.0%} of that floor's speed")
        if mode in mechanisms:
            off = mechanisms[mode][1][0]
            print(f"  {off:24} {arguments.events / statistics.median(wall[off]):10,.0f} events/s wall, "
                  f"{arguments.events / statistics.median(cpu[off]):10,.0f} events per CPU second")
            print(f"  fast path on/off ({ours} speed / careful path only), per round: "
                  f"wall {measure.spread([a / b for a, b in zip(wall[off], wall[ours])], digits=2)}, "
                  f"CPU {measure.spread([a / b for a, b in zip(cpu[off], cpu[ours])], digits=2)}")
    return targets.exit_code(arguments.strict)


if __name__ == "__main__":
    raise SystemExit(main())
