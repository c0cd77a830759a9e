"""Benchmark `evcat lsp`: edit -> diagnostics and fix -> clear, wall and CPU, per catalog layout.

For each --layouts entry (default 50 files of 20 types and 10 files of 100,
--events types in all) a synthetic lint-clean catalog (bench/synth.py) is
written and `evcat lsp` is started with a real LSP client over stdio (pygls,
tests/lsp_client.py), as an editor starts it: initialize, initialized, then
didOpen of one file at once. Measured:

- open (cold): didOpen sent right after initialized -> the first
  publishDiagnostics of that file (the server reads and checks the whole
  folder first; no .evcat-cache/ in the folder);
- open (warm): didOpen of another file on the running server -> its diagnostics;
- payload edit: in an event's payload of the opened file, a property key
  renamed to snake_case (PAY-CAMELCASE), then the fix that renames it back;
- shared-schema edit: in file000.yaml, ``Money.amount`` retyped from
  ``number`` to ``string``. Every file has events whose payload references
  Money and whose examples give an amount, so the edit makes examples invalid
  in (nearly) every file (CAT-EXAMPLE) and the fix clears them all.

Each edit or fix is one incremental didChange of one character range. Its
wall time runs from sending it to the *last* publishDiagnostics of the burst
it causes (the edited file and every file whose diagnostics change; the burst
ends after --quiet seconds without a publish, which is not counted), with the
edited file's own publish shown too. Its CPU time is the server's, workers
included (/proc: the server, its reaped children, its live descendants),
from sending it to the end of the burst: unlike wall time, hardly changed by
other programs on the machine. --runs edit/fix pairs per kind, median [min-max].

Every wait has a --timeout: a server that stops answering (e.g. forked workers
deadlocked) is reported as TIMEOUT/hang, killed, and the benchmark goes on.
Set --jobs 1 (EVCAT_JOBS=1) to run the server without worker processes.

The peer, in the same run: `evcat lint` of the folder after one file changed
(warm cache), what an author would otherwise run after an edit.

Targets (issue 29), per layout: median edit -> diagnostics and fix -> clear
each <= 100 ms wall and <= 100 ms CPU, for the payload and the shared-schema
edit; first diagnostics of the opened file <= 300 ms after didOpen (cold and
warm are both checked). Kept from issue 19: the server tree's memory <= 300 MB.
Usage: python bench/lsp_bench.py [--events 1000] [--layouts 20 100] [--runs 10] [--jobs N] [--timeout 30] [--strict]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import measure  # noqa: E402
import synth  # noqa: E402
from measure import MiB, Targets, spread  # noqa: E402
from tests.lsp_client import CatalogClient  # noqa: E402


class Hang(Exception):
    pass


@dataclass
class Series:
    """One kind of change: wall (to the burst's end and to the edited file's
    publish) and CPU seconds per change; None where it timed out."""
    wall: list[float] = field(default_factory=list)
    own: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    files: list[int] = field(default_factory=list)  # files published in the burst
    hung: bool = False


@dataclass
class Layout:
    per_file: int
    startup: float | None = None  # start -> every file published
    open_cold: float | None = None
    open_warm: float | None = None
    startup_cpu: float | None = None
    settled: float | None = None  # start -> the server idle (its work after the first check done)
    settled_cpu: float | None = None
    series: dict[str, Series] = field(default_factory=dict)
    peak_pss: int = 0
    rss_sum: int = 0
    lint: list[measure.Sample] = field(default_factory=list)
    note: str = ""


def _kill(client: CatalogClient) -> None:
    server = client._server
    if server is not None and server.returncode is None:
        for pid in reversed(measure.tree(server.pid)):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


async def _close(client: CatalogClient, hung: bool) -> None:
    if hung:
        _kill(client)
    else:
        try:
            await asyncio.wait_for(client.close(), 15)
            return
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - a server that will not stop is killed
            _kill(client)
    try:
        await asyncio.wait_for(client.stop(), 10)
    except (asyncio.TimeoutError, Exception):  # noqa: BLE001
        pass


def _tree_states(client: CatalogClient) -> str:
    """Each process of the server's tree: pid, state, threads, kernel wait channel."""
    server = client._server
    if server is None or server.returncode is not None:
        return "server gone"
    described = []
    for pid in measure.tree(server.pid):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            threads = len(os.listdir(f"/proc/{pid}/task"))
            wchan = Path(f"/proc/{pid}/wchan").read_text().strip() or "-"
        except OSError:
            continue
        described.append(f"{pid} {state} {threads} thread(s) wchan={wchan}")
    return "; ".join(described)


async def _wait(client: CatalogClient, predicate, timeout: float, what: str = "") -> None:
    try:
        await client.wait_for(predicate, timeout=timeout)
    except TimeoutError:
        stderr = "".join(client.stderr[-5:]).strip()
        raise Hang(f"waiting for {what}; server tree: {_tree_states(client)}"
                   + (f"; stderr: {stderr[-300:]}" if stderr else "")) from None


async def _quiet(client: CatalogClient, quiet: float, timeout: float) -> None:
    """Until no publishDiagnostics has arrived for ``quiet`` seconds."""
    deadline = time.perf_counter() + timeout
    while True:
        last = client.published[-1][0] if client.published else 0.0
        idle = time.perf_counter() - last
        if idle >= quiet:
            return
        if time.perf_counter() > deadline:
            raise Hang("the server kept publishing")
        await asyncio.sleep(quiet - idle + 0.005)


async def _settle(pid: int, timeout: float, still: float = 0.2) -> None:
    """Until the server's CPU time has not grown for ``still`` seconds: what
    it does unasked after its first check (finding the positions of files
    read from the cache, ``Folder.place_next``) is timed as start-up, not
    charged to the first edits."""
    deadline = time.perf_counter() + timeout
    last, since = measure.tree_cpu(pid), time.perf_counter()
    while time.perf_counter() - since < still:
        if time.perf_counter() > deadline:
            raise Hang("the server kept working after its first check")
        await asyncio.sleep(0.05)
        now = measure.tree_cpu(pid)
        if now != last:
            last, since = now, time.perf_counter()


def _range(line: int, column: int, length: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=column),
                       end=types.Position(line=line, character=column + length))


async def _changes(client: CatalogClient, uri: str, row: int, column: int, good: str, bad: str, has_error,
                   runs: int, arguments: argparse.Namespace, layout: Layout, name: str) -> None:
    """--runs pairs of edit (good -> bad) and fix (bad -> good) at (row, column)."""
    assert client._server is not None
    pid = client._server.pid
    edit, fix = layout.series.setdefault(f"{name} edit", Series()), layout.series.setdefault(f"{name} fix", Series())
    for run in range(runs):
        for series, old, new, expect_error in ((edit, good, bad, True), (fix, bad, good, False)):
            before = len(client.published)
            cpu_before = measure.tree_cpu(pid)
            sent = time.perf_counter()
            client.edit(uri, _range(row, column, len(old)), new)

            def arrived() -> bool:
                for _, published_uri, diagnostics in client.published[before:]:
                    if published_uri == uri and has_error(diagnostics) == expect_error:
                        return True
                return False

            try:
                await _wait(client, arrived, arguments.timeout,
                            f"{name} {'edit' if expect_error else 'fix'} {run + 1}: {uri.rsplit('/', 1)[-1]} "
                            f"{'with' if expect_error else 'without'} the error")
                await _quiet(client, arguments.quiet, arguments.timeout)
            except Hang:
                series.hung = True
                raise
            burst = client.published[before:]
            own = next(t for t, u, d in burst if u == uri and has_error(d) == expect_error)
            series.wall.append(burst[-1][0] - sent)
            series.own.append(own - sent)
            series.cpu.append(measure.tree_cpu(pid) - cpu_before)
            series.files.append(len({u for _, u, _ in burst}))
            pss, peaks = measure.tree_memory(pid)
            layout.peak_pss = max(layout.peak_pss, pss)
            layout.rss_sum = max(layout.rss_sum, sum(peaks.values()))


def _property_row(lines: list[str]) -> tuple[int, int, str]:
    """A payload property key (a key right under ``properties:``) of an event."""
    events_at = next(i for i, line in enumerate(lines) if line.startswith("events:"))
    row = next(i for i in range(events_at, len(lines))
               if lines[i].strip().endswith(":") and lines[i - 1].strip() == "properties:")
    return row, len(lines[row]) - len(lines[row].lstrip()), lines[row].strip()[:-1]


def _money_row(lines: list[str]) -> tuple[int, int]:
    """The ``type: number`` line of ``Money.amount`` (file000.yaml)."""
    start = next(i for i, line in enumerate(lines) if line == "  Money:")
    amount = next(i for i in range(start, len(lines)) if lines[i].strip() == "amount:")
    row = amount + 1
    assert lines[row].strip() == "type: number", lines[row]
    return row, lines[row].index("number")


async def _measure(catalog: Path, files: list[Path], layout: Layout, arguments: argparse.Namespace) -> None:
    client = CatalogClient()
    hung = False
    try:
        started = time.perf_counter()
        await client.start(catalog)
        assert client._server is not None
        pid = client._server.pid
        victim = files[len(files) // 2]
        victim_uri = client.open(victim)  # as an editor does, right after initialized
        opened = time.perf_counter()
        await _wait(client, lambda: any(u == victim_uri for _, u, _ in client.published), arguments.timeout, "the opened file's first diagnostics")
        layout.open_cold = next(t for t, u, _ in client.published if u == victim_uri) - opened
        await _wait(client, lambda: len({u for _, u, _ in client.published}) >= len(files), arguments.timeout, "every file's diagnostics at start")
        await _quiet(client, arguments.quiet, arguments.timeout)
        layout.startup = client.published[-1][0] - started
        layout.startup_cpu = measure.tree_cpu(pid)
        await _settle(pid, arguments.timeout)  # idle work after the first check (finding positions)
        layout.settled = time.perf_counter() - started
        layout.settled_cpu = measure.tree_cpu(pid)

        lines = victim.read_text(encoding="utf-8").split("\n")
        row, column, name = _property_row(lines)
        await _changes(client, victim_uri, row, column, name, name[:1] + "_" + name[1:],
                       lambda diagnostics: any(d.code == "PAY-CAMELCASE" for d in diagnostics),
                       arguments.runs, arguments, layout, "payload")

        shared = files[0]
        before = len(client.published)
        sent = time.perf_counter()
        shared_uri = client.open(shared)
        await _wait(client, lambda: any(u == shared_uri for _, u, _ in client.published[before:]), arguments.timeout, "file000.yaml's diagnostics after didOpen")
        layout.open_warm = next(t for t, u, _ in client.published[before:] if u == shared_uri) - sent
        await _quiet(client, arguments.quiet, arguments.timeout)
        lines = shared.read_text(encoding="utf-8").split("\n")
        row, column = _money_row(lines)
        await _changes(client, shared_uri, row, column, "number", "string",
                       lambda diagnostics: any(d.code == "CAT-EXAMPLE" for d in diagnostics),
                       arguments.runs, arguments, layout, "shared schema")
    except Hang as error:
        hung = True
        layout.note = f"TIMEOUT/hang after {arguments.timeout:.0f} s"
        print(f"  TIMEOUT/hang after {arguments.timeout:.0f} s {error}; server killed", flush=True)
    finally:
        await _close(client, hung)


def _lint_peer(catalog: Path, cache: Path, victim: Path, runs: int, env: dict[str, str]) -> list[measure.Sample]:
    command = [sys.executable, "-m", "generator", "lint", str(catalog), "--cache-dir", str(cache)]
    shutil.rmtree(cache, ignore_errors=True)
    measure.run(command, env=env, cwd=measure.ROOT)  # warm the cache
    original = victim.read_text(encoding="utf-8")
    samples = []
    try:
        for run in range(runs):
            victim.write_text(original + f"# edit {run}\n", encoding="utf-8")
            samples.append(measure.run(command, env=env, cwd=measure.ROOT))
    finally:
        victim.write_text(original, encoding="utf-8")
    return samples


def _report(layout: Layout, events: int, targets: Targets) -> None:
    files = (events + layout.per_file - 1) // layout.per_file
    title = f"{files} files of {layout.per_file}"
    print(f"\n## {events} types as {title}{' - ' + layout.note if layout.note else ''}")
    ms = lambda value: "TIMEOUT" if value is None else f"{value * 1000:.0f} ms"  # noqa: E731
    print(f"start -> every file published: {ms(layout.startup)} (server CPU {ms(layout.startup_cpu)}); "
          f"didOpen -> its diagnostics: cold {ms(layout.open_cold)}, warm {ms(layout.open_warm)}")
    print(f"start -> server idle (positions found after the first check): {ms(layout.settled)} "
          f"(server CPU {ms(layout.settled_cpu)}); edits are measured from then on")
    print(f"| {'change':28} | {'n':>3} | {'wall ms to burst end':>22} | {'wall ms to own file':>22} | {'server CPU ms':>22} | {'files':>5} |")
    print(f"|{'-' * 30}|{'-' * 5}|{'-' * 24}|{'-' * 24}|{'-' * 24}|{'-' * 7}|")
    for name, series in layout.series.items():
        hung = " +TIMEOUT" if series.hung else ""
        print(f"| {name + hung:28} | {len(series.wall):3} | {spread(series.wall, 1000, 1):>22} | {spread(series.own, 1000, 1):>22} "
              f"| {spread(series.cpu, 1000, 1):>22} | {max(series.files, default=0):5} |")
    if os.environ.get("LSP_BENCH_ALL"):  # every measurement, in order, for a look at the spread
        for name, series in layout.series.items():
            print(f"  {name}: wall {[round(value * 1000) for value in series.wall]} ms, "
                  f"CPU {[round(value * 1000) for value in series.cpu]} ms")
    shared = layout.series.get("shared schema edit")
    if shared is not None and shared.wall:
        # The first is of a state the server has not seen (the memo of checks
        # has no entry for it); later ones alternate between two known states.
        print(f"first shared schema edit of the run (a state not seen before): wall {ms(shared.wall[0])}, "
              f"CPU {ms(shared.cpu[0])}")
    if layout.lint:
        lint_wall = statistics.median(s.wall for s in layout.lint)
        print(f"peer: evcat lint, one file changed (warm cache): wall {spread([s.wall for s in layout.lint], 1000, 0)} ms, "
              f"CPU {spread([s.cpu for s in layout.lint], 1000, 0)} ms")
        payload = layout.series.get("payload edit")
        if payload and payload.wall:
            print(f"payload edit -> diagnostics is {lint_wall / statistics.median(payload.wall):.1f}x faster than that lint")
    print(f"server tree memory: peak summed PSS {layout.peak_pss / MiB:.0f} MiB (sampled after each change), "
          f"sum of peak RSS {layout.rss_sum / MiB:.0f} MiB")
    for name in ("payload edit", "payload fix", "shared schema edit", "shared schema fix"):
        series = layout.series.get(name, Series(hung=True))
        for what, values in (("wall", series.wall), ("CPU", series.cpu)):
            value = None if series.hung or not values else statistics.median(values)
            targets.check(f"[{title}] {name} -> diagnostics, {what} median", None if value is None else value * 1000, 100, " ms")
    targets.check(f"[{title}] didOpen -> first diagnostics, cold server",
                  None if layout.open_cold is None else layout.open_cold * 1000, 300, " ms")
    targets.check(f"[{title}] didOpen -> first diagnostics, running server",
                  None if layout.open_warm is None else layout.open_warm * 1000, 300, " ms")
    targets.check(f"[{title}] server tree memory (summed PSS)", layout.peak_pss / MiB if layout.peak_pss else None, 300, " MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--layouts", type=int, nargs="+", default=[20, 100], metavar="PER_FILE",
                        help="types per file, one catalog layout each")
    parser.add_argument("--runs", type=int, default=10, help="edit/fix pairs per kind of change")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds any one wait may take")
    parser.add_argument("--quiet", type=float, default=0.3, help="seconds without a publish that end a burst")
    parser.add_argument("--jobs", type=int, help="EVCAT_JOBS for the server and the lint peer (1: no workers)")
    parser.add_argument("--lint-runs", type=int, default=3, help="runs of the lint peer per layout (0: none)")
    parser.add_argument("--work", type=Path, default=HERE / "work")
    measure.add_common_arguments(parser)
    arguments = parser.parse_args()
    measure.check_checkout()
    measure.compile_checkout()
    if arguments.jobs is not None:
        os.environ["EVCAT_JOBS"] = str(arguments.jobs)  # the client starts the server with os.environ
    env = measure.child_env()
    print(f"{os.cpu_count()} cores; EVCAT_JOBS={os.environ.get('EVCAT_JOBS', 'all cores')}; "
          f"{arguments.runs} edit/fix pairs per change; timeout {arguments.timeout:.0f} s per wait", flush=True)
    targets = Targets()
    for per_file in arguments.layouts:
        catalog = arguments.work / f"lsp-catalog-{arguments.events}-{per_file}"
        shutil.rmtree(catalog, ignore_errors=True)
        files = synth.write(catalog, arguments.events, per_file, "normo")
        layout = Layout(per_file)
        print(f"layout {len(files)} files of {per_file}: measuring", flush=True)
        asyncio.run(_measure(catalog, files, layout, arguments))
        if arguments.lint_runs:
            layout.lint = _lint_peer(catalog, arguments.work / "lsp-cache", files[len(files) // 2], arguments.lint_runs, env)
        _report(layout, arguments.events, targets)
    print()
    return targets.exit_code(arguments.strict)


if __name__ == "__main__":
    sys.exit(main())
