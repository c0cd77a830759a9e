"""What `evcat lsp` keeps between keystrokes, each switched off in turn: CPU per change.

In-process (``generator.lsp.folder.Folder``, as the server holds it, without
the LSP stream): on the synthetic catalogs of bench/lsp_bench.py (1,000
types as 50 files of 20 and 10 files of 100), the payload edit and the
shared-schema edit of that benchmark and their fixes, each followed by the
folder's check. One configuration is everything on; each other one switches
one mechanism off:

- ``reparse``: the block reparse of an edited buffer (engine/reparse.py);
- what ``engine.keep.Keep`` keeps (``build``'s rewritten schemas, ``structure``
  checks, ``part-findings``, ``refs-resolved``, memo keys by
  ``fingerprints``, the ``event-findings`` of unchanged events, PAY-DESCRIPTION's
  findings by part, ``described``), emptied
  before every change;
- ``build: events``: ``build``'s entries that hand back an unchanged file's
  events as the same objects (so ``event-findings`` finds them), dropped
  before every change.

Configurations run in alternating rounds (forward, then backward); the first
edit/fix pair after a switch warms up and is not counted. Reported: median
CPU ms per change (set_buffer + check), and off/on. CPU time is the verdict;
the machine's load is printed.

    python3 bench/lsp_keep_bench.py [--rounds 4] [--pairs 4]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import measure  # noqa: E402
import synth  # noqa: E402

import generator.lsp.folder as folder_module  # noqa: E402
from generator.lsp.folder import Folder  # noqa: E402

KEEPS = ["build", "structure", "part-findings", "refs-resolved", "fingerprints", "event-findings", "described"]
# build's entries for an unchanged file's events (the same objects again).
EVENTS = "build: events"
CONFIGS = ["all on", "reparse", *KEEPS, EVENTS]
_REPARSE = folder_module.reparse


def _setup(root: Path, kind: str) -> tuple[Folder, str, str, str]:
    folder = Folder.open(str(root))
    folder.check()
    files = sorted(folder.documents)
    victim = files[len(files) // 2] if kind == "payload" else files[0]
    lines = folder.text(victim).split("\n")
    if kind == "payload":  # a payload property key renamed to snake_case
        start = next(i for i, line in enumerate(lines) if line.startswith("events:"))
        row = next(i for i in range(start, len(lines)) if lines[i].strip().endswith(":") and lines[i - 1].strip() == "properties:")
        name = lines[row].strip()[:-1]
        bad = lines[row].replace(name, name[:1] + "_" + name[1:], 1)
    else:  # Money.amount retyped in file000.yaml
        start = next(i for i, line in enumerate(lines) if line == "  Money:")
        row = next(i for i in range(start, len(lines)) if lines[i].strip() == "amount:") + 1
        bad = lines[row].replace("number", "string")

    def variant(line: str) -> str:
        return "\n".join([*lines[:row], line, *lines[row + 1:]])

    edited, fixed = variant(bad), variant(lines[row])
    folder.set_buffer(victim, fixed)
    folder.check()
    gc.freeze()
    return folder, victim, edited, fixed


def _run(folder: Folder, victim: str, edited: str, fixed: str, off: str | None, pairs: int) -> list[float]:
    folder_module.reparse = (lambda *arguments: None) if off == "reparse" else _REPARSE  # type: ignore[assignment]
    seconds = []
    for pair in range(pairs + 1):
        for text in (edited, fixed):
            keep = folder.keep
            if off == "build":
                keep.build_memo = {}
            elif off == "structure":
                keep.structure = {}
            elif off in KEEPS:
                keep.rule_caches[off] = {}
            elif off == EVENTS:
                keep.build_memo = {key: entry for key, entry in keep.build_memo.items() if key[0] not in ("events", "several")}
            started = time.process_time()
            folder.set_buffer(victim, text)
            folder.check()
            if pair:  # the first pair after a switch warms up
                seconds.append(time.process_time() - started)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--layouts", type=int, nargs="+", default=[100, 20], metavar="PER_FILE")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--pairs", type=int, default=4, help="edit/fix pairs per configuration and round")
    parser.add_argument("--work", type=Path, default=HERE / "work")
    arguments = parser.parse_args()
    measure.check_checkout()
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at start", flush=True)
    for per_file in arguments.layouts:
        root = arguments.work / f"lsp-keep-{arguments.events}-{per_file}"
        if not root.exists():
            synth.write(root, arguments.events, per_file, "normo")
        for kind in ("payload", "shared schema"):
            folder, victim, edited, fixed = _setup(root, kind)
            samples: dict[str, list[float]] = {name: [] for name in CONFIGS}
            for round_ in range(arguments.rounds):
                for name in CONFIGS if round_ % 2 == 0 else CONFIGS[::-1]:
                    samples[name] += _run(folder, victim, edited, fixed, None if name == "all on" else name, arguments.pairs)
            folder_module.reparse = _REPARSE  # type: ignore[assignment]
            base = statistics.median(samples["all on"])
            print(f"\n## {arguments.events} types, {per_file} per file, {kind} edit/fix: all on {base * 1000:.1f} ms CPU "
                  f"per change (median of {len(samples['all on'])})")
            for name in CONFIGS[1:]:
                value = statistics.median(samples[name])
                print(f"  {name:14} off: {value * 1000:6.1f} ms  ({value / base:.2f}x)")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
