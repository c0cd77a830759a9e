"""What the limits of ``--templates`` (issue 30) cost, in one run.

Since issue 30, the units that templates of ``--templates DIR`` render run
in child processes bounded in time and memory (``engine.workers.bounded``);
the built-in templates render as before. Measured on a synthetic lint-clean
catalog (bench/synth.py), in --runs rounds (order alternating per round),
wall and CPU time (the command and every process it reaped), cold (no cache):

- ``--only docs`` and ``--only python`` with the built-in templates;
- the same with ``--templates DIR``, DIR holding one verbatim copy of a
  built-in template of that output (so the output is the same, sandboxed
  and bounded).

With ``--compare DIR`` (a checkout of another evcat commit, e.g. the one
before the limits: ``git archive REV | tar -x -C DIR``) every measurement also
runs for DIR, and the table gives the ratios this/DIR per round.

Targets: the built-in templates are not slower (this/DIR <= 1.1, with
--compare). Reported, not judged: what ``--templates`` costs over the
built-in templates in this checkout (the sandbox alone took 1.2 to 1.5 times
as long before the limits; README, templates/README.md).

Usage: python bench/templates_bench.py [--events 300] [--runs 3] [--compare DIR] [--strict]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import measure
import synth
from measure import Rounds, Targets, spread

COPIES = {"docs": "docs/event.md.jinja", "python": "python/pyproject.toml.jinja"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compare", type=Path, metavar="DIR")
    measure.add_common_arguments(parser)
    arguments = parser.parse_args()
    measure.check_checkout()
    checkouts = {"this": measure.ROOT}
    if arguments.compare is not None:
        checkouts["base"] = arguments.compare.resolve()
    with tempfile.TemporaryDirectory(prefix="evcat-templates-bench-") as work_name:
        work = Path(work_name)
        catalog = work / "catalog"
        synth.write(catalog, arguments.events, 20, "normo")
        mine = work / "mine"
        for kind, name in COPIES.items():
            (mine / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(measure.ROOT / "templates" / name, mine / name)
        rounds = Rounds()
        names = [f"{side} {kind} {how}" for side in checkouts for kind in COPIES for how in ("builtin", "templates")]
        for round_ in range(arguments.runs):
            for name in measure.alternate(round_, names):
                side, kind, how = name.split()
                out = work / "out"
                shutil.rmtree(out, ignore_errors=True)
                command = [sys.executable, "-m", "generator", "generate", str(catalog), "-o", str(out), "--no-cache",
                           "--only", kind, *(["--templates", str(mine)] if how == "templates" else [])]
                env = measure.child_env()
                env["PYTHONPATH"] = str(checkouts[side])
                rounds.add(name, measure.run(command, env=env, cwd=work))
            print(f"round {round_ + 1} done", flush=True)
    print(f"\n{arguments.events} event types; {arguments.runs} rounds\n")
    rows = [(name, name) for name in names]
    rounds.table(rows)
    print()
    targets = Targets()
    for kind in COPIES:
        ratios = rounds.ratios(f"this {kind} templates", f"this {kind} builtin")
        print(f"this: --templates / built-in, --only {kind}: wall {spread(ratios, digits=2)}")
        if "base" in checkouts:
            ratios = rounds.ratios(f"base {kind} templates", f"base {kind} builtin")
            print(f"base: --templates / built-in, --only {kind}: wall {spread(ratios, digits=2)}")
            ratios = rounds.ratios(f"this {kind} templates", f"base {kind} templates")
            print(f"--templates this/base, --only {kind}: wall {spread(ratios, digits=2)} "
                  f"(CPU {spread(rounds.ratios(f'this {kind} templates', f'base {kind} templates', 'cpu'), digits=2)})")
    if "base" in checkouts:
        for kind in COPIES:
            wall = statistics.median(rounds.ratios(f"this {kind} builtin", f"base {kind} builtin"))
            targets.check(f"built-in --only {kind} this/base, wall", wall, 1.1, "x")
    return targets.exit_code(arguments.strict)


if __name__ == "__main__":
    raise SystemExit(main())
