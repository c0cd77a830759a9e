"""Benchmark `evcat lint` against the floor: PyYAML's C loader alone on the same files.

Writes a synthetic lint-clean catalog (bench/synth.py) and times, as medians
of --runs runs, interleaved so machine noise hits both alike:
- floor: a Python process that only loads every file with yaml.CSafeLoader;
- cold lint: `evcat lint` with an empty cache;
- one file changed: `evcat lint` after one file's content changed (warm cache).

Targets (issue 2): cold <= 1.5x floor; one file changed <= 1.0 s.
Usage: python bench/lint_bench.py [--events 1000] [--runs 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import synth  # noqa: E402

FLOOR = "import sys, yaml\nfor name in sys.argv[1:]:\n    with open(name, 'rb') as f: yaml.load(f, Loader=yaml.CSafeLoader)\n"


def timed(command: list[str], expect: int = 0) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != expect:
        raise SystemExit(f"{' '.join(command[:4])}... exited {result.returncode}:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, default=HERE / "work")
    arguments = parser.parse_args()

    catalog = arguments.work / f"catalog-{arguments.events}"
    cache = arguments.work / "cache"
    shutil.rmtree(catalog, ignore_errors=True)
    files = synth.write(catalog, arguments.events, 20, "normo")
    size = sum(f.stat().st_size for f in files)
    print(f"catalog: {arguments.events} event types, {len(files)} files, {size / 1e6:.1f} MB")

    python = sys.executable
    # An installed wheel has bytecode; this machine may set PYTHONDONTWRITEBYTECODE.
    subprocess.run([python, "-m", "compileall", "-q", str(HERE.parent / "generator")], check=True)
    lint = [python, "-m", "generator", "lint", str(catalog), "--cache-dir", str(cache)]
    floor, cold, changed = [], [], []
    victim = files[len(files) // 2]
    original = victim.read_text(encoding="utf-8")
    try:
        for run in range(arguments.runs):
            floor.append(timed([python, "-c", FLOOR, *map(str, files)]))
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(timed(lint))
            victim.write_text(original + f"# edit {run}\n", encoding="utf-8")
            changed.append(timed(lint))
    finally:
        victim.write_text(original, encoding="utf-8")

    rows = [
        ("floor: PyYAML CSafeLoader load", statistics.median(floor), None),
        ("evcat lint, cold (empty cache)", statistics.median(cold), 1.5),
        ("evcat lint, one file changed", statistics.median(changed), None),
    ]
    floor_median = rows[0][1]
    print(f"{'measurement':36} {'median s':>9} {'x floor':>8}")
    for name, value, _ in rows:
        print(f"{name:36} {value:9.3f} {value / floor_median:8.2f}")
    cold_ok = rows[1][1] <= 1.5 * floor_median
    changed_ok = rows[2][1] <= 1.0
    print(f"target cold <= 1.5x floor: {'met' if cold_ok else 'MISSED'} ({rows[1][1] / floor_median:.2f}x)")
    print(f"target one file changed <= 1.0 s: {'met' if changed_ok else 'MISSED'} ({rows[2][1]:.3f} s)")
    return 0 if cold_ok and changed_ok else 1


if __name__ == "__main__":
    sys.exit(main())
