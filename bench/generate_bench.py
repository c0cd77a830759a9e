"""Benchmark `evcat generate` at catalog scale against the peer, datamodel-codegen, in one run.

Writes a synthetic lint-clean catalog (bench/synth.py) and measures, in
--runs rounds (order alternating per round, so machine noise hits both sides
alike), wall and CPU time (CPU: the command and every process it started and
reaped: workers, ruff), each shown as median [min-max]:
- peer: `datamodel-codegen` over a directory holding the same payload schemas
  (evcat's data.schema.json files), pydantic v2 models, formatted by ruff as
  evcat's output is (``--formatters ruff-format ruff-check``; its default,
  black + isort, alone makes it ~2.6x slower), and on the same cores as
  evcat: the schemas are split into --jobs shards (whole catalogs each) and
  one datamodel-codegen runs per shard, all at once. It is the strongest
  peer we know for "JSON Schema in, typed pydantic models out";
- evcat generate --only python, cold (empty cache, empty OUT), then nothing
  changed (warm cache, OUT current), then one event's payload changed (a
  property added);
- evcat generate of all four outputs (Python, JSON Schema, AsyncAPI, docs):
  cold, nothing changed, one event's title changed, one payload changed.
evcat runs with EVCAT_JOBS=--jobs (default: all cores). The verdict on a ratio
is the median of the per-round ratios (peer and evcat cold back to back).

Memory, in one separate cold run of all four outputs (sampling slows what it
samples, so no timed run is sampled): the peak of the summed proportional set
sizes (PSS) of the command and all its child processes, sampled every 50 ms.

Targets (issue 29, 1,000 types): cold --only python <= 0.3x the peer's wall
time; nothing changed <= 0.25 s; one payload changed <= 1.0 s (both for
--only python and for all four outputs). Kept from issue 8: cold peak memory
<= 1 GiB at any size.

With ``--compare DIR`` (a checkout of another evcat commit, e.g. made with
``git worktree add ../base REV``) the evcat measurements run for this
checkout and for DIR alternately, on the same catalog, each with its own
cache and OUT, and the table adds the ratio this/DIR (issue 16: every
generate figure within 10% of the commit before it).

Usage: python bench/generate_bench.py [--events 1000] [--runs 3] [--jobs N] [--skip-peer] [--compare DIR] [--strict]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import measure  # noqa: E402
import synth  # noqa: E402
import yaml  # noqa: E402
from measure import MiB, Rounds, Targets, spread  # noqa: E402

PEER_FORMATTERS = ["ruff-format", "ruff-check"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="cores for each side: EVCAT_JOBS for evcat, shards for the peer (default: all)")
    parser.add_argument("--work", type=Path, default=HERE / "work")
    parser.add_argument("--skip-peer", action="store_true", help="leave out datamodel-codegen (for the 5,000 run)")
    parser.add_argument("--skip-memory", action="store_true", help="leave out the sampled memory run")
    parser.add_argument("--compare", type=Path, metavar="DIR",
                        help="also measure the evcat checkout in DIR, alternately with this one, and report ratios")
    measure.add_common_arguments(parser)
    arguments = parser.parse_args()
    measure.check_checkout()
    this = measure.ROOT
    trees = {"this": this}
    if arguments.compare is not None:
        other = arguments.compare.resolve()
        if not (other / "generator" / "__main__.py").is_file():
            parser.error(f"--compare {other}: not an evcat checkout (no generator/__main__.py)")
        trees["base"] = other

    work = arguments.work / f"generate-{arguments.events}"
    shutil.rmtree(work, ignore_errors=True)
    catalog = work / "catalog"
    files = synth.write(catalog, arguments.events, 20, "normo")
    size = sum(f.stat().st_size for f in files)
    print(f"catalog: {arguments.events} event types, {len(files)} files, {size / 1e6:.1f} MB; "
          f"{os.cpu_count()} cores, --jobs {arguments.jobs} for each side; {arguments.runs} rounds", flush=True)

    python = sys.executable
    for tree in trees.values():
        measure.compile_checkout(tree)
    envs = {name: {**measure.child_env(EVCAT_JOBS=str(arguments.jobs)), "PYTHONPATH": str(tree)} for name, tree in trees.items()}
    evcat = [python, "-m", "generator"]

    def generate(name: str, only: str | None) -> list[str]:
        suffix = "" if name == "this" else f"-{name}"
        command = [*evcat, "generate", str(catalog), "-o", str(work / f"out-{only or 'all'}{suffix}"),
                   "--cache-dir", str(work / f"cache-{only or 'all'}{suffix}")]
        return command + (["--only", only] if only else [])

    def reset(name: str, only: str | None) -> None:
        suffix = "" if name == "this" else f"-{name}"
        shutil.rmtree(work / f"out-{only or 'all'}{suffix}", ignore_errors=True)
        shutil.rmtree(work / f"cache-{only or 'all'}{suffix}", ignore_errors=True)

    # The peer's input: the same payload schemas, one file each, in --jobs shards of whole catalogs.
    measure.run([*evcat, "generate", str(catalog), "-o", str(work / "schemas"), "--only", "jsonschema", "--no-cache"],
                env=envs["this"], cwd=this)
    schemas = sorted((work / "schemas" / "jsonschema").rglob("data.schema.json"))
    by_catalog: dict[str, list[Path]] = {}
    for schema in schemas:
        by_catalog.setdefault(schema.relative_to(work / "schemas" / "jsonschema").parts[0], []).append(schema)
    shards = [work / f"peer_in_{shard}" for shard in range(arguments.jobs)]
    for shard in shards:
        shard.mkdir()
    for index, (_, members) in enumerate(sorted(by_catalog.items())):
        for schema in members:
            number = len(list(shards[index % len(shards)].iterdir()))
            shutil.copyfile(schema, shards[index % len(shards)] / f"payload_{number:05d}.json")
    codegen = str(Path(python).with_name("datamodel-codegen"))
    codegen_command = [codegen] if Path(codegen).exists() else [python, "-m", "datamodel_code_generator"]
    peer_help = subprocess.run([*codegen_command, "--help"], capture_output=True, text=True).stdout
    if "ruff-format" not in peer_help:
        raise SystemExit("this datamodel-codegen has no --formatters ruff-format: install datamodel-code-generator[ruff] >= 0.26")
    peers = [[*codegen_command, "--input", str(shard), "--input-file-type", "jsonschema",
              "--output", str(work / f"peer_out_{index}"), "--output-model-type", "pydantic_v2.BaseModel",
              "--formatters", *PEER_FORMATTERS] for index, shard in enumerate(shards)]

    def run_peer() -> measure.Sample:
        for index in range(len(peers)):
            shutil.rmtree(work / f"peer_out_{index}", ignore_errors=True)
        return measure.run_parallel(peers, env=envs["this"])

    rounds = {name: Rounds() for name in trees}
    peer_rounds = Rounds()
    victim = files[len(files) // 2]
    original = victim.read_text(encoding="utf-8")
    first_title = next(line for line in original.splitlines() if line.strip().startswith("title:") and line.startswith("  "))

    def payload_edit(run: int) -> str:
        document = yaml.safe_load(original)
        event = next(event for event in document["events"] if "data" in event and "properties" in event["data"])
        event["data"]["properties"][f"benchExtra{run}"] = {"type": "string", "description": "A property added by the benchmark."}
        return yaml.dump(document, Dumper=synth._Dumper, sort_keys=False, width=100, allow_unicode=True)

    def timed(name: str, key: str, command: list[str]) -> measure.Sample:
        return rounds[name].add(key, measure.run(command, env=envs[name], cwd=trees[name]))

    def warm_runs(run: int, name: str, only: str | None) -> None:
        """After a cold run: nothing changed, (a title changed,) a payload changed, back to the original."""
        label = only or "all"
        command = generate(name, only)
        timed(name, f"{label}-nothing", command)
        if only is None:
            victim.write_text(original.replace(first_title, f"{first_title} (edit {run})", 1), encoding="utf-8")
            timed(name, f"{label}-title", command)
        victim.write_text(payload_edit(run), encoding="utf-8")
        timed(name, f"{label}-payload", command)
        victim.write_text(original, encoding="utf-8")
        measure.run(command, env=envs[name], cwd=trees[name])  # back to the original for the next run

    try:
        # Warm-up: bytecode, page cache, the peer's imports.
        for name in trees:
            reset(name, "python")
            measure.run(generate(name, "python"), env=envs[name], cwd=trees[name])
        for run in range(arguments.runs):
            sides = (["peer"] if not arguments.skip_peer else []) + list(trees)
            for side in measure.alternate(run, sides):
                if side == "peer":
                    peer_rounds.add("peer", run_peer())
                    continue
                reset(side, "python")
                timed(side, "python-cold", generate(side, "python"))
            for name in measure.alternate(run, list(trees)):
                warm_runs(run, name, "python")
            for name in measure.alternate(run, list(trees)):
                reset(name, None)
                timed(name, "all-cold", generate(name, None))
                warm_runs(run, name, None)
            peer_text = f"peer {peer_rounds.wall('peer')[-1]:.2f} s, " if peer_rounds.wall("peer") else ""
            print(f"round {run + 1}: {peer_text}cold --only python {rounds['this'].wall('python-cold')[-1]:.2f} s, "
                  f"cold all {rounds['this'].wall('all-cold')[-1]:.2f} s", flush=True)
        memory = None
        if not arguments.skip_memory:
            reset("this", None)
            memory = measure.run(generate("this", None), env=envs["this"], cwd=this, memory=True, interval=0.05)
    finally:
        victim.write_text(original, encoding="utf-8")

    out_python = work / "out-python"
    outputs = sum(1 for p in (work / "out-all").rglob("*") if p.is_file())
    ruff_check = subprocess.run(["ruff", "format", "--check", "--quiet", "--isolated", str(out_python)], capture_output=True, text=True)
    print(f"ruff format --check on the generated Python: exit {ruff_check.returncode}")
    peer_count = len(schemas)
    rows = [
        (f"peer: datamodel-codegen, ruff, {len(peers)} shard(s) ({peer_count} schemas)", "peer"),
        ("evcat generate --only python, cold", "python-cold"),
        ("evcat generate --only python, nothing changed", "python-nothing"),
        ("evcat generate --only python, one payload changed", "python-payload"),
        ("evcat generate (4 outputs), cold", "all-cold"),
        ("evcat generate (4 outputs), nothing changed", "all-nothing"),
        ("evcat generate (4 outputs), one title changed", "all-title"),
        ("evcat generate (4 outputs), one payload changed", "all-payload"),
    ]
    print(f"\n{arguments.events} event types, {outputs} output files (4 outputs)\n")
    mine = rounds["this"]
    if peer_rounds.samples:
        mine.samples["peer"] = peer_rounds.samples["peer"]
    mine.table(rows, peer="peer" if peer_rounds.samples else None)
    if "base" in trees:
        base = rounds["base"]
        print(f"\nbase: {trees['base']}; ratio this/base per round, median [min-max]")
        for label, key in rows[1:]:
            if base.samples.get(key) and mine.samples.get(key):
                wall = [a / b for a, b in zip(mine.wall(key), base.wall(key))]
                cpu = [a / b for a, b in zip(mine.cpu(key), base.cpu(key))]
                print(f"  {label:52} wall {spread(wall, digits=2)}  CPU {spread(cpu, digits=2)}")
    if memory is not None:
        ranked = [peak for pid, peak in sorted(memory.rss_peaks.items(), key=lambda i: -i[1]) if pid != memory.pid]
        others = ", ".join(f"{peak / MiB:.0f}" for peak in ranked[:8]) + (f" and {len(ranked) - 8} smaller" if len(ranked) > 8 else "")
        print(f"\nmemory, cold generate (4 outputs), sampled: peak summed PSS {memory.peak_pss / MiB:.0f} MiB; "
              f"peak RSS: parent {memory.rss_peaks.get(memory.pid, 0) / MiB:.0f} MiB, others {others or '-'} MiB "
              f"({len(memory.rss_peaks)} processes)")
    print()
    targets = Targets()
    at_size = arguments.events == 1000
    if peer_rounds.samples:
        ratios = mine.ratios("python-cold", "peer")
        cpu_ratios = mine.ratios("python-cold", "peer", "cpu")
        targets.check("cold --only python / peer, wall (median of rounds)", statistics.median(ratios), 0.3, "x",
                      note=f"CPU {statistics.median(cpu_ratios):.2f}x the peer's", applies=at_size)
        all_ratio = statistics.median(mine.ratios("all-cold", "peer"))
        print(f"(information: cold, all four outputs / peer: wall {all_ratio:.2f}x, "
              f"CPU {statistics.median(mine.ratios('all-cold', 'peer', 'cpu')):.2f}x)")
    for label, key, limit in (("--only python, nothing changed", "python-nothing", 0.25),
                              ("--only python, one payload changed", "python-payload", 1.0),
                              ("4 outputs, nothing changed", "all-nothing", 0.25),
                              ("4 outputs, one payload changed", "all-payload", 1.0)):
        targets.check(f"{label}, wall", mine.median(key), limit, " s", note=f"CPU {mine.median(key, 'cpu'):.3f} s", applies=at_size)
    if memory is not None:
        targets.check("cold generate peak memory (summed PSS)", memory.peak_pss / MiB, 1024, " MiB")
    if "base" in trees:  # issue 16: within 10% of the commit compared with
        for key in ("python-cold", "python-nothing", "python-payload", "all-cold", "all-nothing", "all-title", "all-payload"):
            ratio = statistics.median(a / b for a, b in zip(mine.wall(key), rounds["base"].wall(key)))
            targets.check(f"{key} this/base, wall", ratio, 1.1, "x")
    (work / "results.json").write_text(json.dumps(
        {name: {key: [[s.wall, s.cpu] for s in samples] for key, samples in r.samples.items()} for name, r in rounds.items()},
        indent=1))
    return targets.exit_code(arguments.strict)


if __name__ == "__main__":
    raise SystemExit(main())
