"""Benchmark `evcat validate`'s streaming (issue 16): memory and throughput.

1. Throughput on --events (100,000) valid events against a peer evcat: the
   same CLI from another checkout (--peer-root, e.g. a git worktree of the
   commit before the change), run alternately --runs times in this run, so
   machine noise hits both alike. Target: within 10% of the peer.
2. Peak memory on --gigabytes (1) of JSON lines (the events repeated),
   written under /tmp and deleted afterwards, sampled every 50 ms: the largest
   sum of the proportional set sizes (PSS) of the CLI and its workers (as
   generate_bench.py counts), and the largest resident set of any one of
   them. Target: both <= 300 MB.

Usage: python bench/validate_stream_bench.py --peer-root /tmp/evcat-base [--events 100000] [--gigabytes 1]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import synth  # noqa: E402
from validate_bench import write_events  # noqa: E402

from generator.commands.lint import lint  # noqa: E402


def _tree_memory(root: int) -> tuple[int, int]:
    """(sum of PSS, largest RSS) in bytes of ``root`` and its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    pss, rss, stack = 0, 0, [root]
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        try:
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
                    elif line.startswith("Rss:"):
                        rss = max(rss, int(line.split()[1]) * 1024)
        except OSError:
            pass
    return pss, rss


def run(root: Path, catalog: Path, events: Path, cache: Path) -> tuple[float, tuple[int, int], int]:
    """(seconds, (peak PSS sum, peak RSS of one process), exit code) of one `evcat validate` from checkout ``root``."""
    command = [sys.executable, "-m", "generator", "validate", str(catalog), str(events), "--cache-dir", str(cache)]
    peak = (0, 0)
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=root, env=dict(os.environ, PYTHONPATH=str(root)),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            pss, rss = _tree_memory(process.pid)
            peak = (max(peak[0], pss), max(peak[1], rss))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    process.wait()
    done.set()
    sampler.join()
    return time.perf_counter() - started, peak, process.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--types", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--peer-root", type=Path, help="another evcat checkout to compare throughput with")
    parser.add_argument("--work", type=Path, default=HERE / "work")
    arguments = parser.parse_args()
    work = arguments.work
    catalog = work / f"validate-catalog-{arguments.types}"
    shutil.rmtree(catalog, ignore_errors=True)
    synth.write(catalog, arguments.types, 20, "normo")
    catalog_set = lint(str(catalog)).catalog_set
    events = work / f"events-{arguments.events}.jsonl"
    write_events(catalog_set, events, arguments.events)
    me = HERE.parent
    roots = {"this checkout": me}
    if arguments.peer_root:
        roots["peer"] = arguments.peer_root.resolve()
    times: dict[str, list[float]] = {name: [] for name in roots}
    for name, root in roots.items():  # warm each one's parse cache
        run(root, catalog, events, work / f"cache-{name.replace(' ', '-')}")
    for _ in range(arguments.runs):
        for name, root in roots.items():
            seconds, _, code = run(root, catalog, events, work / f"cache-{name.replace(' ', '-')}")
            if code != 0:
                print(f"{name}: exit {code}")
                return 2
            times[name].append(seconds)
    print(f"{arguments.events:,} events of {len(catalog_set.events)} types ({events.stat().st_size / 1e6:.1f} MB), median of {arguments.runs}:")
    for name, values in times.items():
        print(f"  {name:16} {statistics.median(values):7.2f} s  {arguments.events / statistics.median(values):9.0f} events/s")
    status = 0
    if "peer" in times:
        ratio = statistics.median(times["this checkout"]) / statistics.median(times["peer"])
        print(f"  time / peer's: {ratio:.2f} (target <= 1.10): {'ok' if ratio <= 1.10 else 'MISSED'}")
        status |= ratio > 1.10
    if arguments.gigabytes > 0:
        lines = events.read_bytes()
        with tempfile.TemporaryDirectory(prefix="evcat-validate-", dir="/tmp") as directory:
            big = Path(directory) / "big.jsonl"
            target = int(arguments.gigabytes * 1e9)
            with big.open("wb") as handle:
                written = 0
                while written < target:
                    handle.write(lines)
                    written += len(lines)
            seconds, peak, code = run(me, catalog, big, work / "cache-this-checkout")
            count = written // len(lines) * arguments.events
            fits = max(peak) <= 300 * 2**20 and code == 0
            print(f"{written / 1e9:.2f} GB of JSON lines ({count:,} events): {seconds:.1f} s, exit {code}, peak PSS of all "
                  f"processes {peak[0] / 2**20:.0f} MiB, peak RSS of one process {peak[1] / 2**20:.0f} MiB "
                  f"(target <= 300): {'ok' if fits else 'MISSED'}")
            status |= not fits
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
