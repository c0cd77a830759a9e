"""Docs output size and generation time at 1,000 and 5,000 event types.

Shows that the documentation site grows no more than linearly in the number
of event types: per type, the bytes written and the seconds taken stay
(about) the same from 1,000 to 5,000 types, and no page grows with the
catalog except the pages that list it (a catalog page, the search index).
Two shapes of the synthetic catalog (bench/synth.py): 20 types per catalog
(many catalogs) and every type in one catalog (one big catalog page).

    python bench/docs_bench.py [--sizes 1000 5000] [--runs 1]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth

LINEAR = 1.25  # per-type cost at 5,000 over per-type cost at 1,000: at most this


def measure(events: int, one_catalog: bool, work: Path, runs: int) -> dict[str, float]:
    folder = work / f"docs-{events}-{'one' if one_catalog else 'many'}"
    shutil.rmtree(folder, ignore_errors=True)
    catalog, out = folder / "catalog", folder / "out"
    files = synth.write(catalog, events, 20, "normo")
    if one_catalog:  # every file a part of one catalog (a file may hold at most 8 MiB)
        for path in files:
            text = re.sub(r"(?m)^catalog: .*$", "catalog: synthetic-all", path.read_text(encoding="utf-8"))
            path.write_text(re.sub(r"(?m)^title: .*$", "title: All synthetic events", text), encoding="utf-8")
    command = [sys.executable, "-m", "generator", "generate", str(catalog), "-o", str(out), "--only", "docs", "--no-cache"]
    seconds = []
    for _ in range(runs):
        shutil.rmtree(out, ignore_errors=True)
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=HERE.parent)
        seconds.append(time.perf_counter() - start)
    docs = out / "docs"
    files = [path for path in docs.rglob("*") if path.is_file()]
    html = [path for path in files if path.suffix == ".html"]
    events_pages = sorted(path.stat().st_size for path in html if "/events/" in str(path))
    return {
        "seconds": statistics.median(seconds),
        "bytes": sum(path.stat().st_size for path in files),
        "files": len(files),
        "largest_html": max(path.stat().st_size for path in html),
        "event_page_median": events_pages[len(events_pages) // 2],
        "event_page_max": events_pages[-1],
        "index": (docs / "index.html").stat().st_size,
        "search_index": (docs / "assets" / "search-index.js").stat().st_size,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--work", type=Path, default=HERE / "work")
    arguments = parser.parse_args()
    print(f"{os.cpu_count()} cores; median of {arguments.runs} run(s); evcat generate --only docs --no-cache\n")
    print("| shape | types | seconds | ms/type | MB | kB/type | files | largest page kB | event page kB (median/max) | index kB | search index kB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ok = True
    for shape, one_catalog in (("20 types per catalog", False), ("one catalog", True)):
        results = {}
        for events in arguments.sizes:
            result = measure(events, one_catalog, arguments.work, arguments.runs)
            results[events] = result
            print(f"| {shape} | {events:,} | {result['seconds']:.1f} | {1000 * result['seconds'] / events:.2f} | "
                  f"{result['bytes'] / 1e6:.1f} | {result['bytes'] / 1e3 / events:.1f} | {result['files']:,} | "
                  f"{result['largest_html'] / 1e3:.0f} | {result['event_page_median'] / 1e3:.1f}/{result['event_page_max'] / 1e3:.1f} | "
                  f"{result['index'] / 1e3:.0f} | {result['search_index'] / 1e3:.0f} |", flush=True)
        small, large = min(results), max(results)
        if small != large:
            for key in ("bytes", "seconds"):
                ratio = (results[large][key] / large) / (results[small][key] / small)
                verdict = "ok" if ratio <= LINEAR else "MISSED"
                ok &= ratio <= LINEAR
                print(f"|  {shape}: {key} per type at {large:,} / at {small:,} = {ratio:.2f} (target <= {LINEAR}) {verdict} |")
            page_ratio = results[large]["event_page_max"] / results[small]["event_page_max"]
            print(f"|  {shape}: largest event page at {large:,} / at {small:,} = {page_ratio:.2f} (an event page does not grow with the catalog) |")
            ok &= page_ratio <= LINEAR
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
