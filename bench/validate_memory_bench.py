"""Memory of `evcat validate` on many invalid events (issue 30).

Issue 30: 60,000 invalid events reached 604 MB RSS, and each diagnostic
repeated the whole bad value. Target: 60,000 invalid events, each with a
1 KB bad string, stay under 300 MB peak RSS counting every process (the
parent and its forked workers), and no diagnostic line is longer than 2 KB.

The events: JSON lines of the shipped catalog's `mdm.meter.updated` 1.2.0,
half with a 1 KB `meterId` that fails its pattern (CE-DATA-SCHEMA), half
with a 1 KB type of their own that the catalog does not have (so they spread
over the worker processes, which count too). The floor, in the same run:
the same number of valid events of one type (same size on disk; one type
runs in one process), so the ratio is what the diagnostics and the workers
cost.

Every output format is measured (text, json, sarif, github; the largest
must meet the target). Memory is read from /proc (psutil is not installed
here, nor needed): the target is the peak over time of the summed RSS of
every live process of the run, polled every 10 ms (pages a forked worker shares with its parent count
twice). Shown beside it: the peak of the summed PSS (shared pages counted
once, ``measure.run(memory=True)``) and every process's own peak RSS added
(workers of successive chunks never live at the same time: an upper bound).

Usage: python bench/validate_memory_bench.py [--events 60000] [--size 1024] [--runs 1] [--formats text,json,sarif,github] [--strict]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import measure
from measure import MiB, Targets

LIMIT_BYTES = 300 * MiB
LINE_LIMIT = 2048


def event(number: int, size: int, valid: bool) -> dict[str, object]:
    # Every other invalid event has an unknown 1 KB type of its own: events are
    # spread over the workers by type, so the forked workers are measured too.
    kind = "mdm.meter.updated" if valid or number % 2 == 0 else f"nl.unknown.{number:08d}".ljust(size, "t")
    return {
        "specversion": "1.0", "id": f"e{number}", "source": "urn:ean13:8716859000003:cmr", "type": kind,
        "dataversion": "1.2.0", "time": "2023-09-22T14:01:54.957127Z", "subject": "871685900000000018",
        "datacontenttype": "application/json",
        "data": {"meterId": "E00000000035671400" if valid else "Q" * size, "connectionEan": "871685900000000018",
                 "smart": True, "product": "electricity", **({"note": "n" * size} if valid else {})},
    }


def peak_rss_sum(command: list[str], env: dict[str, str], expect: int) -> tuple[int, int, str]:
    """Run ``command``; (peak over time of the summed RSS of its live process
    tree, polled from /proc every 10 ms; processes seen; its output)."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=measure.ROOT)
        peak, seen = 0, set()
        while process.poll() is None:
            total = 0
            for pid in measure.tree(process.pid):
                try:
                    with open(f"/proc/{pid}/status", "rb") as handle:
                        total += next(int(line.split()[1]) * 1024 for line in handle if line.startswith(b"VmRSS:"))
                    seen.add(pid)
                except (OSError, StopIteration):
                    pass
            peak = max(peak, total)
            time.sleep(0.01)
        assert process.returncode == expect, process.returncode
        out.seek(0)
        return peak, len(seen), out.read().decode("utf-8")


def write(path: Path, events: int, size: int, valid: bool) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for number in range(events):
            handle.write(json.dumps(event(number, size, valid)) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=60_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--formats", default="text,json,sarif,github", help="output formats measured (text always)")
    parser.add_argument("--strict", action="store_true")
    options = parser.parse_args()
    measure.check_checkout()
    measure.compile_checkout()
    with tempfile.TemporaryDirectory() as scratch:
        invalid, valid = Path(scratch) / "invalid.jsonl", Path(scratch) / "valid.jsonl"
        write(invalid, options.events, options.size, valid=False)
        write(valid, options.events, options.size, valid=True)
        catalog = str(measure.ROOT / "catalog")
        env = measure.child_env()
        values: dict[str, list[float]] = {}
        longest = 0
        for _ in range(options.runs):
            command = [sys.executable, "-m", "generator", "validate", catalog]
            for output_format in options.formats.split(","):
                if output_format != "text":
                    rss, _, output = peak_rss_sum([*command, str(invalid), "--format", output_format], env, 1)
                    values.setdefault(f"invalid, --format {output_format}: peak of the summed RSS (MiB)", []).append(rss / MiB)
                    longest = max(longest, max(len(line.encode("utf-8")) for line in output.splitlines()))
            rss, processes, output = peak_rss_sum([*command, str(invalid)], env, 1)
            floor, _, _ = peak_rss_sum([*command, str(valid)], env, 0)
            bad = measure.run([*command, str(invalid)], env=env, cwd=measure.ROOT, expect=1, memory=True)
            good = measure.run([*command, str(valid)], env=env, cwd=measure.ROOT, expect=0, memory=True)
            lines = output.splitlines()
            assert len(lines) > options.events, f"expected a diagnostic per event, got {len(lines)} lines"
            longest = max(longest, max(len(line.encode("utf-8")) for line in lines))
            for name, value in [
                ("invalid: peak of the summed RSS of all live processes (MiB)", rss / MiB),
                ("invalid: peak of the summed PSS of all live processes (MiB)", bad.peak_pss / MiB),
                ("invalid: each process's own peak RSS, added (MiB)", bad.sum_of_peak_rss / MiB),
                ("invalid: processes", processes),
                ("invalid: wall (s)", bad.wall),
                ("valid floor: peak of the summed RSS (MiB)", floor / MiB),
                ("valid floor: wall (s)", good.wall),
                ("ratio invalid / valid floor (peak of the summed RSS)", rss / floor),
            ]:
                values.setdefault(name, []).append(value)
        print(f"{options.events:,} invalid events with {options.size:,}-byte bad strings"
              f" ({invalid.stat().st_size / MiB:.0f} MiB), {options.runs} run(s), median [min-max]")
        for name, found in values.items():
            print(f"  {name:55} {measure.spread(found, digits=2)}")
        print(f"  longest diagnostic line: {longest:,} bytes")
        peak = max(statistics.median(found) for name, found in values.items() if "peak of the summed RSS" in name
                   and name.startswith("invalid"))
        targets = Targets()
        targets.check("peak of the summed RSS of all live processes (the largest of the formats)", peak,
                      LIMIT_BYTES / MiB, " MiB")
        targets.check("longest diagnostic line", longest, LINE_LIMIT, " bytes")
        return targets.exit_code(options.strict)

if __name__ == "__main__":
    raise SystemExit(main())
