"""Benchmark `evcat lsp`: from a didChange that introduces an error to its publishDiagnostics.

Writes a synthetic lint-clean catalog (bench/synth.py), starts `evcat lsp`
with a real LSP client over stdio (pygls, tests/lsp_client.py), opens one
file and then, --runs times, alternates an edit that introduces an error
(a property renamed to snake_case: PAY-CAMELCASE) with the edit that removes
it again, each as an incremental didChange of one character range, timing
each until the server publishes the file's new diagnostics. In the same run:
`evcat lint` on the same files (warm cache, one file changed), the peer an
author would otherwise run after each edit, and the server's peak RSS.

The server's CPU time per change is printed too: unlike the wall time, it
does not grow when other processes share the machine's cores.

Targets (issue 19): median change -> diagnostics <= 100 ms; RSS <= 300 MB.
Usage: python bench/lsp_bench.py [--events 1000] [--runs 40]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from lsprotocol import types

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import synth  # noqa: E402
from tests.lsp_client import CatalogClient  # noqa: E402


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident set size of ``pid``, from /proc."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
    )
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


async def _measure(catalog: Path, victim: Path, runs: int) -> tuple[list[float], float, float, float]:
    client = CatalogClient()
    started = time.perf_counter()
    await client.start(catalog)
    await client.wait_for(lambda: len(client.diagnostics) >= len(list(catalog.glob("*.yaml"))), timeout=300)
    startup = time.perf_counter() - started
    victim_uri = client.open(victim)
    await client.wait_for(lambda: any(u == victim_uri for _, u, _ in client.published[-1:]) or True)
    await asyncio.sleep(0.5)
    lines = victim.read_text().split("\n")
    # A payload property name (a key under `properties:`) to break and mend.
    row = next(i for i, line in enumerate(lines) if line.strip().endswith(":") and lines[i - 1].strip() == "properties:")
    column = len(lines[row]) - len(lines[row].lstrip())
    name = lines[row].strip()[:-1]
    broken = name[:1] + "_" + name[1:]
    timings = []
    assert client._server is not None
    cpu_before = _cpu_seconds(client._server.pid)
    for run in range(runs):
        text, expect_error = (broken, True) if run % 2 == 0 else (name, False)
        old = name if expect_error else broken
        before = len(client.published)
        sent = time.perf_counter()
        client.edit(
            victim_uri,
            types.Range(
                start=types.Position(line=row, character=column),
                end=types.Position(line=row, character=column + len(old)),
            ),
            text,
        )

        def arrived() -> bool:
            for _, published_uri, diagnostics in client.published[before:]:
                if published_uri == victim_uri:
                    has = any(d.code == "PAY-CAMELCASE" for d in diagnostics)
                    return has == expect_error
            return False

        await client.wait_for(arrived, timeout=60)
        arrival = next(t for t, u, _ in client.published[before:] if u == victim_uri)
        if expect_error:
            timings.append(arrival - sent)
        await asyncio.sleep(0.05)
    cpu_per_change = (_cpu_seconds(client._server.pid) - cpu_before) / runs
    _, peak = _rss_mb(client._server.pid)
    await client.close()
    return timings, peak, startup, cpu_per_change


def _lint_changed(catalog: Path, cache: Path, victim: Path, runs: int) -> list[float]:
    command = [sys.executable, "-m", "generator", "lint", str(catalog), "--cache-dir", str(cache)]
    subprocess.run(command, capture_output=True, cwd=HERE.parent)  # warm the cache
    original = victim.read_text(encoding="utf-8")
    timings = []
    try:
        for run in range(runs):
            victim.write_text(original + f"# edit {run}\n", encoding="utf-8")
            start = time.perf_counter()
            subprocess.run(command, capture_output=True, cwd=HERE.parent)
            timings.append(time.perf_counter() - start)
    finally:
        victim.write_text(original, encoding="utf-8")
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--work", type=Path, default=HERE / "work")
    arguments = parser.parse_args()

    catalog = arguments.work / f"lsp-catalog-{arguments.events}"
    shutil.rmtree(catalog, ignore_errors=True)
    files = synth.write(catalog, arguments.events, 20, "normo")
    size = sum(f.stat().st_size for f in files)
    print(f"catalog: {arguments.events} event types, {len(files)} files, {size / 1e6:.1f} MB")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "generator")], check=True)
    victim = files[len(files) // 2]

    timings, peak, startup, cpu_per_change = asyncio.run(_measure(catalog, victim, arguments.runs * 2))
    lint_times = _lint_changed(catalog, arguments.work / "lsp-cache", victim, max(3, arguments.runs // 8))
    median = statistics.median(timings)
    lint_median = statistics.median(lint_times)
    print(f"{'measurement':52} {'value':>10}")
    print(f"{'evcat lsp: start to all files published':52} {startup:9.3f}s")
    print(f"{'evcat lsp: didChange -> publishDiagnostics, median':52} {median * 1000:8.1f}ms")
    print(f"{'evcat lsp: didChange -> publishDiagnostics, p90':52} {statistics.quantiles(timings, n=10)[-1] * 1000:8.1f}ms")
    print(f"{'evcat lsp: server CPU time per change':52} {cpu_per_change * 1000:8.1f}ms")
    print(f"{'evcat lsp: peak RSS':52} {peak:8.1f}MB")
    print(f"{'evcat lint, one file changed (warm cache), median':52} {lint_median * 1000:8.1f}ms")
    print(f"lsp is {lint_median / median:.1f}x faster than running evcat lint after the edit")
    time_ok, rss_ok = median <= 0.100, peak <= 300
    print(f"target change -> diagnostics <= 100 ms: {'met' if time_ok else 'MISSED'} ({median * 1000:.1f} ms)")
    print(f"target RSS <= 300 MB: {'met' if rss_ok else 'MISSED'} ({peak:.1f} MB)")
    return 0 if time_ok and rss_ok else 1


if __name__ == "__main__":
    sys.exit(main())
