"""What keeping the findings of the checks that follow ``$ref``s buys in
``evcat lsp`` (``rules.part_findings(..., follows_refs=True)``: PAY-ALLOF-CLOSED,
PAY-ONEOF-EXCLUSIVE, PAY-KEYWORD-VERDICT).

A synthetic lint-clean catalog of --events types (bench/synth.py) is opened
as the LSP opens it (``lsp.folder.Folder``); a payload property key of
file001.yaml is renamed to snake_case and back, --pairs times, and each
``Folder.check`` is timed (CPU of this process). "off" computes those
checks on every check (as they would without the kept findings), "on" is
evcat as it is; the two run in alternating processes, --rounds each.

Usage: python bench/follows_refs_bench.py [--events 1000] [--per-file 20 100] [--pairs 10] [--rounds 2]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def one(directory: str, per_file: int, events: int, pairs: int, off: bool) -> tuple[float, float]:
    sys.path[:0] = [str(HERE), str(HERE.parent)]
    import synth

    import generator.rules as rules
    import generator.rules.payload as payload
    from generator.lsp.folder import Folder

    if off:
        kept = rules.part_findings

        def computed(context, rule_id, part, compute, *, follows_refs=False):  # type: ignore[no-untyped-def]
            return list(compute()) if follows_refs else kept(context, rule_id, part, compute)

        payload.part_findings = computed
    out = Path(directory)
    synth.write(out, events, per_file, "nlgov")
    folder = Folder.open(str(out))
    folder.check()
    text = (out / "file001.yaml").read_text(encoding="utf-8")
    found = re.search(r"\n(\s+)([a-z]+)([A-Z][a-z]+):\n", text)
    assert found is not None
    edited = text[: found.start()] + f"\n{found[1]}{found[2]}_{found[3].lower()}:\n" + text[found.end() :]
    edits, fixes = [], []
    for _ in range(pairs + 2):
        for new, into in ((edited, edits), (text, fixes)):
            started = time.process_time()
            folder.set_buffer("file001.yaml", new)
            folder.check()
            into.append(time.process_time() - started)
    return statistics.median(edits[2:]) * 1000, statistics.median(fixes[2:]) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--per-file", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--one", nargs=3, metavar=("DIR", "PER_FILE", "MODE"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.one:
        directory, per_file, mode = arguments.one
        edit, fix = one(directory, int(per_file), arguments.events, arguments.pairs, mode == "off")
        print(f"{edit:.1f} {fix:.1f}")
        return
    print("| layout | kept (on) edit / fix CPU ms | computed (off) edit / fix CPU ms | off/on |")
    print("|---|---|---|---|")
    for per_file in arguments.per_file:
        found: dict[str, list[tuple[float, float]]] = {"on": [], "off": []}
        for _ in range(arguments.rounds):
            for mode in ("off", "on"):
                scratch = tempfile.mkdtemp(prefix="follows-refs-")
                try:
                    done = subprocess.run([sys.executable, __file__, "--events", str(arguments.events), "--pairs",
                                           str(arguments.pairs), "--one", scratch, str(per_file), mode],
                                          capture_output=True, text=True, check=True)
                finally:
                    shutil.rmtree(scratch, ignore_errors=True)
                edit, fix = map(float, done.stdout.split())
                found[mode].append((edit, fix))
        on = [statistics.median(x[i] for x in found["on"]) for i in (0, 1)]
        off = [statistics.median(x[i] for x in found["off"]) for i in (0, 1)]
        layout = f"{arguments.events // per_file}x{per_file}"
        print(f"| {layout} | {on[0]:.0f} / {on[1]:.0f} | {off[0]:.0f} / {off[1]:.0f} | "
              f"{off[0] / on[0]:.2f}x / {off[1] / on[1]:.2f}x |")


if __name__ == "__main__":
    main()
