"""Benchmark `evcat lint` and `evcat generate` at catalog scale against the peer, in one run.

Writes a synthetic lint-clean catalog (bench/synth.py) and measures wall time
and peak memory, each as the median of --runs runs, interleaved so machine
noise hits all alike:
- floor: PyYAML's C loader alone on the catalog files;
- evcat lint, cold (empty cache) and after one file changed;
- evcat generate, cold: all outputs (Python, JSON Schema, AsyncAPI, docs;
  black-formatted), empty cache, empty OUT;
- evcat generate, nothing changed (warm cache, OUT current);
- evcat generate, one event changed: its title edited (payloads unchanged),
  and, separately, a property added to its payload;
- peer: `datamodel-codegen` once over a directory holding the same payload
  schemas (evcat's data.schema.json files), with its default formatting.

Peak memory is the largest sum of the proportional set sizes (PSS) of the
command and all its child processes (workers), sampled every 50 ms: pages
that workers share with the parent after fork count once in all, not once per
process as a sum of resident set sizes would count them.

Targets (issue 8, 1,000 types): lint cold <= 1.5x floor, one file changed
<= 1.0 s; generate cold <= 0.5x peer; nothing changed <= 1 s; one event
changed <= 2 s; 5,000 types: cold generate completes, peak <= 1 GB.

With ``--compare DIR`` (a checkout of another evcat commit, e.g. made with
``git worktree add ../base REV``) the lint and generate measurements run for
this checkout and for DIR alternately, on the same catalog, each with its own
cache and OUT, and the table adds DIR's figures and the ratio this/DIR
(issue 16: every generate figure within 10% of the commit before it).

Usage: python bench/generate_bench.py [--events 1000] [--runs 3] [--skip-peer] [--compare DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import synth  # noqa: E402
import yaml  # noqa: E402

FLOOR = "import sys, yaml\nfor name in sys.argv[1:]:\n    with open(name, 'rb') as f: yaml.load(f, Loader=yaml.CSafeLoader)\n"


def _memory(pid: int) -> int:
    """Proportional set size of a process (shared pages split between the
    processes sharing them, as after fork), from smaps_rollup; RSS where the
    kernel has no smaps_rollup."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    with open(f"/proc/{pid}/statm", "rb") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _tree_memory(root: int) -> int:
    """Memory of ``root`` and every descendant, following
    /proc/PID/task/TID/children (a few small reads, not a scan of /proc)."""
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            total += _memory(pid)
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                    stack.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


def measure(command: list[str], expect: int = 0, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> tuple[float, int]:
    """(wall seconds, peak bytes of the process tree); ``cwd``: the checkout
    whose ``generator`` package ``python -m generator`` runs."""
    peak = 0
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_memory(process.pid))
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode != expect:
        raise SystemExit(f"{' '.join(command[:5])}... exited {process.returncode}:\n{stdout[-2000:].decode()}{stderr[-2000:].decode()}")
    return elapsed, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=HERE / "work")
    parser.add_argument("--skip-peer", action="store_true", help="leave out datamodel-codegen (for the 5,000 run)")
    parser.add_argument("--compare", type=Path, metavar="DIR",
                        help="also measure the evcat checkout in DIR, alternately with this one, and report ratios")
    arguments = parser.parse_args()
    this = HERE.parent
    trees = {"this": this}
    if arguments.compare is not None:
        other = arguments.compare.resolve()
        if not (other / "generator" / "__main__.py").is_file():
            parser.error(f"--compare {other}: not an evcat checkout (no generator/__main__.py)")
        trees["base"] = other

    work = arguments.work / f"generate-{arguments.events}"
    shutil.rmtree(work, ignore_errors=True)
    catalog, cache, out = work / "catalog", work / "cache", work / "out"
    files = synth.write(catalog, arguments.events, 20, "normo")
    size = sum(f.stat().st_size for f in files)
    print(f"catalog: {arguments.events} event types, {len(files)} files, {size / 1e6:.1f} MB; "
          f"{os.cpu_count()} cores; {arguments.runs} runs each", flush=True)

    python = sys.executable
    # An installed wheel has bytecode; this machine may set PYTHONDONTWRITEBYTECODE.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    for tree in trees.values():
        subprocess.run([python, "-m", "compileall", "-q", str(tree / "generator")], check=True)
    evcat = [python, "-m", "generator"]
    caches = {name: cache if name == "this" else work / f"cache-{name}" for name in trees}
    outs = {name: out if name == "this" else work / f"out-{name}" for name in trees}
    lints = {name: [*evcat, "lint", str(catalog), "--cache-dir", str(caches[name])] for name in trees}
    generates = {name: [*evcat, "generate", str(catalog), "-o", str(outs[name]), "--cache-dir", str(caches[name])]
                 for name in trees}

    # The peer's input: the same payload schemas, one file each.
    subprocess.run([*evcat, "generate", str(catalog), "-o", str(work / "schemas"), "--only", "jsonschema", "--no-cache"],
                   check=True, env=env, capture_output=True, cwd=this)
    peer_in = work / "peer-in"
    peer_in.mkdir()
    for number, schema in enumerate(sorted((work / "schemas" / "jsonschema").rglob("data.schema.json"))):
        shutil.copyfile(schema, peer_in / f"payload_{number:05d}.json")
    peer_count = len(list(peer_in.iterdir()))
    peer = [str(Path(python).with_name("datamodel-codegen")), "--input", str(peer_in), "--input-file-type", "jsonschema",
            "--output", str(work / "peer-out"), "--output-model-type", "pydantic_v2.BaseModel"]
    if not Path(peer[0]).exists():
        peer[0:1] = [python, "-m", "datamodel_code_generator"]

    names = ("floor", "lint-cold", "lint-changed", "cold", "nothing", "one", "one-payload", "peer")
    results: dict[str, list[tuple[float, int]]] = {name: [] for name in names}
    base_results: dict[str, list[tuple[float, int]]] = {name: [] for name in names}
    victim = files[len(files) // 2]
    original = victim.read_text(encoding="utf-8")
    first_title = next(line for line in original.splitlines() if line.strip().startswith("title:") and line.startswith("  "))

    def payload_edit(run: int) -> str:
        document = yaml.safe_load(original)
        event = next(event for event in document["events"] if "data" in event and "properties" in event["data"])
        event["data"]["properties"][f"benchExtra{run}"] = {"type": "string", "description": "A property added by the benchmark."}
        return yaml.dump(document, Dumper=synth._Dumper, sort_keys=False, width=100, allow_unicode=True)

    def evcat_runs(run: int, name: str) -> None:
        """The lint and generate measurements of one checkout, in order."""
        into = results if name == "this" else base_results
        tree, cache_dir, out_dir = trees[name], caches[name], outs[name]
        lint, generate = lints[name], generates[name]
        shutil.rmtree(cache_dir, ignore_errors=True)
        into["lint-cold"].append(measure(lint, env=env, cwd=tree))
        victim.write_text(original + f"# edit {run}\n", encoding="utf-8")
        into["lint-changed"].append(measure(lint, env=env, cwd=tree))
        victim.write_text(original, encoding="utf-8")

        shutil.rmtree(cache_dir, ignore_errors=True)
        shutil.rmtree(out_dir, ignore_errors=True)
        into["cold"].append(measure(generate, env=env, cwd=tree))
        print(f"run {run + 1} ({name}): cold generate {into['cold'][-1][0]:.2f} s", flush=True)
        into["nothing"].append(measure(generate, env=env, cwd=tree))
        victim.write_text(original.replace(first_title, f"{first_title} (edit {run})", 1), encoding="utf-8")
        into["one"].append(measure(generate, env=env, cwd=tree))
        victim.write_text(payload_edit(run), encoding="utf-8")
        into["one-payload"].append(measure(generate, env=env, cwd=tree))
        victim.write_text(original, encoding="utf-8")
        measure(generate, env=env, cwd=tree)  # back to the original for the next run
    try:
        for run in range(arguments.runs):
            results["floor"].append(measure([python, "-c", FLOOR, *map(str, files)], env=env))
            # Alternate which checkout goes first, so neither always runs on a warmer machine.
            order = list(trees) if run % 2 == 0 else list(reversed(trees))
            for name in order:
                evcat_runs(run, name)
            if not arguments.skip_peer:
                shutil.rmtree(work / "peer-out", ignore_errors=True)
                results["peer"].append(measure(peer, env=env))
                print(f"run {run + 1}: peer {results['peer'][-1][0]:.1f} s", flush=True)
    finally:
        victim.write_text(original, encoding="utf-8")

    def median(name: str, of: dict[str, list[tuple[float, int]]] = results) -> tuple[float, float]:
        values = of[name]
        return statistics.median(v[0] for v in values), statistics.median(v[1] for v in values) / 2**20

    outputs = sum(1 for p in out.rglob("*") if p.is_file())
    black_check = subprocess.run([python, "-m", "black", "--check", "--quiet", "--target-version", "py311", str(out / "python")],
                                 capture_output=True, text=True)
    print(f"black --check on the generated Python: exit {black_check.returncode} "
          f"({'all black-formatted' if black_check.returncode == 0 else black_check.stderr.strip()[:500]})")
    rows = [
        ("floor: PyYAML CSafeLoader", "floor"),
        ("evcat lint, cold", "lint-cold"),
        ("evcat lint, one file changed", "lint-changed"),
        ("evcat generate, cold (4 outputs)", "cold"),
        ("evcat generate, nothing changed", "nothing"),
        ("evcat generate, one event's title changed", "one"),
        ("evcat generate, one event's payload changed", "one-payload"),
    ]
    if results["peer"]:
        rows.append((f"peer: datamodel-codegen ({peer_count} schemas)", "peer"))
    print(f"\n{arguments.events} event types, {outputs} output files\n")
    if "base" in trees:
        print(f"base: {trees['base']}\n")
        print(f"| {'measurement':42} | {'base s':>7} | {'this s':>7} | {'this/base':>9} | {'base MiB':>8} | {'this MiB':>8} |")
        print(f"|{'-' * 44}|{'-' * 9}|{'-' * 9}|{'-' * 11}|{'-' * 10}|{'-' * 10}|")
        for label, name in rows:
            seconds, mib = median(name)
            if base_results[name]:
                base_seconds, base_mib = median(name, base_results)
                print(f"| {label:42} | {base_seconds:7.2f} | {seconds:7.2f} | {seconds / base_seconds:9.2f} "
                      f"| {base_mib:8.0f} | {mib:8.0f} |")
            else:
                print(f"| {label:42} | {'':7} | {seconds:7.2f} | {'':9} | {'':8} | {mib:8.0f} |")
    else:
        print(f"| {'measurement':42} | {'median s':>9} | {'peak MiB':>9} |")
        print(f"|{'-' * 44}|{'-' * 11}|{'-' * 11}|")
        for label, name in rows:
            seconds, mib = median(name)
            print(f"| {label:42} | {seconds:9.2f} | {mib:9.0f} |")
    verdicts = {
        "lint cold / floor": (median("lint-cold")[0] / median("floor")[0], 1.5),
        "lint one file changed (s)": (median("lint-changed")[0], 1.0),
        "generate nothing changed (s)": (median("nothing")[0], 1.0),
        "generate one title changed (s)": (median("one")[0], 2.0),
        "generate one payload changed (s)": (median("one-payload")[0], 2.0),
        "generate cold peak (MiB)": (median("cold")[1], 1024),
    }
    if results["peer"]:
        verdicts["generate cold / peer"] = (median("cold")[0] / median("peer")[0], 0.5)
    if "base" in trees:  # issue 16: within 10% of the commit compared with
        for name, label in (("cold", "cold"), ("nothing", "nothing changed"), ("one", "one title changed"),
                            ("one-payload", "one payload changed")):
            verdicts[f"generate {label} / base"] = (median(name)[0] / median(name, base_results)[0], 1.1)
    # The time targets are set for 1,000 types; at other sizes only memory has one.
    targets = set(verdicts) if arguments.events == 1000 else {"generate cold peak (MiB)", *(v for v in verdicts if v.endswith("/ base"))}
    print()
    failed = False
    for label, (value, limit) in verdicts.items():
        if label not in targets:
            print(f"{label:34} {value:8.2f}  (the target of {limit:g} is for 1,000 types)")
            continue
        ok = value <= limit
        failed |= not ok
        print(f"{label:34} {value:8.2f}  (target <= {limit:g})  {'ok' if ok else 'MISSED'}")
    (work / "results.json").write_text(json.dumps({"this": results, "base": base_results}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
