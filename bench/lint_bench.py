"""Benchmark `evcat lint` against the floor: PyYAML's C loader alone on the same files.

The floor (the peer) is a Python process that only does
``yaml.load(f, Loader=yaml.CSafeLoader)`` of every catalog file: no
checks, no model, one core. Any YAML-reading linter pays at least this, so it
is the strongest honest reference for a cold lint. evcat may use every core
(EVCAT_JOBS, default all), so CPU time is printed beside wall time: a wall
ratio below 1 bought with a CPU ratio above 1 is spending cores, not saving
work.

Times: on a synthetic lint-clean catalog (bench/synth.py, --events types,
--per-file per file), --runs alternating rounds of
- floor: the CSafeLoader load;
- cold lint: `evcat lint` with an empty cache;
- one file changed: `evcat lint` after one file's content changed (warm cache).
Per round the floor and the cold lint run back to back (order alternating);
the verdict is the median of the per-round ratios, shown with their spread.

Memory: a cold lint at each of --memory-sizes (1,000 / 2,000 / 4,000 types):
the peak of the summed proportional set size (PSS) of the whole process tree
(the CLI and its forked workers, sampled every 20 ms; a page shared after
fork counts once in all), beside the sum of each process's own peak RSS
(which counts shared pages once per process: an upper bound), and the
per-1,000-types slope between sizes.

Targets (issue 29): cold <= 1.0x floor at 1,000 types; at 4,000 types peak
memory of all processes <= 200 MiB, growing linearly (the slope from the
middle to the largest size at most 1.25x the slope from the smallest to the
middle). Kept from issue 2: one file changed <= 1.0 s.
Usage: python bench/lint_bench.py [--events 1000] [--runs 5] [--memory-sizes 1000 2000 4000] [--strict]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import measure  # noqa: E402
import synth  # noqa: E402
from measure import MiB, Rounds, Targets  # noqa: E402

FLOOR = "import sys, yaml\nfor name in sys.argv[1:]:\n    with open(name, 'rb') as f: yaml.load(f, Loader=yaml.CSafeLoader)\n"
LINEAR = 1.25


def lint_command(catalog: Path, cache: Path) -> list[str]:
    return [sys.executable, "-m", "generator", "lint", str(catalog), "--cache-dir", str(cache)]


def times(arguments: argparse.Namespace, env: dict[str, str], targets: Targets) -> None:
    catalog = arguments.work / f"catalog-{arguments.events}"
    cache = arguments.work / "cache"
    shutil.rmtree(catalog, ignore_errors=True)
    files = synth.write(catalog, arguments.events, arguments.per_file, "normo")
    size = sum(f.stat().st_size for f in files)
    print(f"catalog: {arguments.events} event types, {len(files)} files, {size / 1e6:.1f} MB; "
          f"{arguments.runs} alternating rounds; EVCAT_JOBS={env.get('EVCAT_JOBS', 'all cores')}", flush=True)
    python = sys.executable
    lint = lint_command(catalog, cache)
    floor = [python, "-c", FLOOR, *map(str, files)]
    rounds = Rounds()
    victim = files[len(files) // 2]
    original = victim.read_text(encoding="utf-8")
    measure.run(floor, env=env)  # page cache and bytecode warm for both
    measure.run(lint, env=env, cwd=measure.ROOT)
    try:
        for run in range(arguments.runs):
            for name in measure.alternate(run, ["floor", "cold"]):
                if name == "floor":
                    rounds.add("floor", measure.run(floor, env=env))
                else:
                    shutil.rmtree(cache, ignore_errors=True)
                    rounds.add("cold", measure.run(lint, env=env, cwd=measure.ROOT))
            victim.write_text(original + f"# edit {run}\n", encoding="utf-8")
            rounds.add("changed", measure.run(lint, env=env, cwd=measure.ROOT))
            victim.write_text(original, encoding="utf-8")
    finally:
        victim.write_text(original, encoding="utf-8")
    print()
    rounds.table([
        ("floor: PyYAML CSafeLoader load (1 process)", "floor"),
        ("evcat lint, cold (empty cache)", "cold"),
        ("evcat lint, one file changed (warm cache)", "changed"),
    ], peer="floor")
    print()
    wall_ratio = statistics.median(rounds.ratios("cold", "floor"))
    cpu_ratio = statistics.median(rounds.ratios("cold", "floor", "cpu"))
    targets.check("cold lint / floor, wall (median of rounds)", wall_ratio, 1.0, "x", note=f"CPU {cpu_ratio:.2f}x floor",
                  applies=arguments.events == 1000)
    targets.check("one file changed, wall", rounds.median("changed"), 1.0, " s",
                  note=f"CPU {rounds.median('changed', 'cpu'):.3f} s")


def memory(arguments: argparse.Namespace, env: dict[str, str], targets: Targets) -> None:
    print(f"\nmemory of a cold lint, whole process tree (sampled every 20 ms), {arguments.memory_runs} run(s) per size, median")
    print(f"| {'types':>6} | {'peak summed PSS MiB':>20} | {'sum of peak RSS MiB':>20} | {'largest process RSS MiB':>24} | {'processes':>9} | {'wall s':>7} | {'CPU s':>6} |")
    print(f"|{'-' * 8}|{'-' * 22}|{'-' * 22}|{'-' * 26}|{'-' * 11}|{'-' * 9}|{'-' * 8}|")
    peaks: dict[int, float] = {}
    for events in arguments.memory_sizes:
        catalog = arguments.work / f"memory-catalog-{events}"
        cache = arguments.work / f"memory-cache-{events}"
        shutil.rmtree(catalog, ignore_errors=True)
        synth.write(catalog, events, arguments.per_file, "normo")
        samples = []
        for _ in range(arguments.memory_runs):
            shutil.rmtree(cache, ignore_errors=True)
            samples.append(measure.run(lint_command(catalog, cache), env=env, cwd=measure.ROOT, memory=True))
        pss = statistics.median(s.peak_pss for s in samples) / MiB
        peaks[events] = pss
        last = samples[-1]
        print(f"| {events:6} | {pss:20.1f} | {statistics.median(s.sum_of_peak_rss for s in samples) / MiB:20.1f} "
              f"| {statistics.median(s.max_rss for s in samples) / MiB:24.1f} | {len(last.rss_peaks):9} "
              f"| {statistics.median(s.wall for s in samples):7.2f} | {statistics.median(s.cpu for s in samples):6.2f} |", flush=True)
        if events == max(arguments.memory_sizes):
            others = ", ".join(f"{peak / MiB:.0f}" for pid, peak in sorted(last.rss_peaks.items(), key=lambda item: -item[1])
                               if pid != last.pid)
            print(f"peak RSS per process at {events} types: parent (the CLI) {last.rss_peaks.get(last.pid, 0) / MiB:.0f} MiB; "
                  f"its descendants {others} MiB")
    sizes = sorted(peaks)
    slopes = [(peaks[b] - peaks[a]) / (b - a) * 1000 for a, b in zip(sizes, sizes[1:])]
    for (a, b), slope in zip(zip(sizes, sizes[1:]), slopes):
        print(f"slope {a}->{b} types: {slope:.1f} MiB per 1,000 types")
    largest = sizes[-1]
    targets.check(f"peak memory of all processes at {largest} types (summed PSS)", peaks[largest], 200, " MiB",
                  applies=largest == 4000)
    if len(slopes) >= 2 and slopes[0] > 0:
        targets.check("growth linear: last slope / first slope", slopes[-1] / slopes[0], LINEAR, "x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--per-file", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--memory-sizes", type=int, nargs="*", default=[1000, 2000, 4000],
                        help="types per memory measurement (none: skip memory)")
    parser.add_argument("--memory-runs", type=int, default=1)
    parser.add_argument("--work", type=Path, default=HERE / "work")
    measure.add_common_arguments(parser)
    arguments = parser.parse_args()
    measure.check_checkout()
    measure.compile_checkout()
    env = measure.child_env()
    targets = Targets()
    times(arguments, env, targets)
    if arguments.memory_sizes:
        memory(arguments, env, targets)
    return targets.exit_code(arguments.strict)


if __name__ == "__main__":
    sys.exit(main())
