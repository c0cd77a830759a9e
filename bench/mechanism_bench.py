"""What each speed mechanism buys: this checkout against copies with one mechanism switched off.

For every mechanism named (``MECHANISMS``), a copy of this checkout's
``generator/`` and ``templates/`` is made under ``--work`` and the mechanism
is switched off there by a few exact text substitutions (each must match
once, so a patch that no longer fits the code fails loudly instead of
measuring nothing). Then, in ``--runs`` rounds, every step of the scenario
runs for this checkout ("on") and for every copy, back to back, in an order
that rotates per round (so load from other programs falls on all sides);
each side has its own OUT and cache directory. Steps, on a synthetic
catalog (bench/synth.py, ``--events`` types, 20 per file):

- ``all-cold``: ``evcat generate`` (4 outputs), empty cache and OUT;
- ``all-nothing``: again, nothing changed;
- ``all-title``: one event's title changed;
- ``all-payload``: one event's payload changed (a property added);
  (then the original catalog again, untimed, for the next round)
- ``python-nocache``: ``generate --only python --no-cache`` into an empty OUT;
- ``docs-nocache``: ``generate --only docs --no-cache`` into an empty OUT.

After every step, each copy's OUT is compared byte for byte with this
checkout's (``diff -r``): a switched-off mechanism must not change the output.
The mechanism ``null`` switches nothing off: a plain copy, the control for
noise and for the cost of being a copy. ``--cold-once`` runs ``all-cold`` in
the first round only (more rounds of the warm steps in the same time).
Printed per mechanism and step: wall and CPU seconds (median [min-max]) of
both sides, and the per-round ratio off/on (median [min-max]): above 1, what
the mechanism saves.

    python bench/mechanism_bench.py [--only replay,prefork] [--steps all-cold,all-title] [--events 1000] [--runs 5] [--cold-once]

Results and verdicts: bench/MECHANISMS.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import measure  # noqa: E402
import synth  # noqa: E402
import yaml  # noqa: E402
from measure import Rounds, spread  # noqa: E402

# name: (what "off" means, [(file under generator/, old text, new text)], default steps)
GENERATE = ["all-cold", "all-nothing", "all-title", "all-payload"]
MECHANISMS: dict[str, tuple[str, list[tuple[str, str, str]], list[str]]] = {
    "null": ("nothing switched off: a plain copy, the control (its ratio is the noise and the cost of being a copy)", [],
             GENERATE),
    "replay": ("no run record: lint and the render-cache lookups run every time", [
        ("commands/generate.py", "    run_key = _run_key(", "    run_key = None and _run_key("),
    ], GENERATE),
    "header": ("no plain-text path in vocabulary.header_value: every value goes through quote()", [
        ("vocabulary.py", "return text if _HEADER_PLAIN.fullmatch(text) else quote(text, safe=_HEADER_SAFE)",
         "return quote(text, safe=_HEADER_SAFE)"),
    ], ["docs-nocache"]),
    "runtime_words": ("no naming._runtime_words: every class name asks generated_module_names (parses the runtime)", [
        ("naming.py", "words = _runtime_words() if name.isascii() else None", "words = None"),
    ], ["python-nocache", "all-title"]),
    "models_store": ("no store of datamodel-code-generator output (python.Settings.memo=None)", [
        ("commands/generate.py", "settings = python.Settings(formatter, memo)", "settings = python.Settings(formatter, None)"),
    ], GENERATE),
    "template_code": ("no compiled-template store (cachefile.TemplateCode): templates compiled in every process", [
        ("commands/generate.py", "return TemplateCode(cache_dir, code_digest()) if cache_dir else None", "return None"),
    ], GENERATE),
    "prefork": ("workers forked when rendering starts (after lint), not before lint", [
        ("commands/generate.py", "pool = workers_module.pool(config.workers(1 << 16), ", "pool = None and workers_module.pool(config.workers(1 << 16), "),
    ], ["all-cold", "all-payload"]),
    "helper": ("no warm helper: a payload's new models are rendered after lint, datamodel-code-generator loaded then", [
        ("commands/generate.py", "helper = start_helper() if cache_dir", "helper = None if cache_dir"),
    ], ["all-title", "all-payload"]),
    "frozen": ("no gc.freeze around rendering in generate", [
        ("commands/generate.py", "with workers_module.frozen():", "with __import__('contextlib').nullcontext():"),
    ], ["all-cold", "docs-nocache"]),
    "no_collection": ("cyclic gc left on while lint loads and checks", [
        ("commands/lint.py", "    with no_collection():\n        cache = Cache(", "    with __import__('contextlib').nullcontext():\n        cache = Cache("),
    ], ["all-cold", "all-title"]),
    "parse_cache": ("no parse cache (lint.Cache.parsed=None): every file parsed again", [
        ("engine/cache.py", 'self.parsed = Store(root, "parsed") if root else None', "self.parsed = None"),
    ], ["all-cold", "all-title"]),
    "check_memo": ("no memo of costly checks (lint.Cache.checks=None): payload schemas and examples checked again", [
        ("engine/cache.py", 'self.checks = Single(root, "checks.marshal") if root else None', "self.checks = None"),
    ], ["all-cold", "all-title"]),
    "render_cache": ("no render cache (and so no run record and no models store, which hang on it)", [
        ("commands/generate.py", "render_cache = RenderCache(cache_dir, formatter, templates) if cache_dir else None", "render_cache = None"),
    ], ["all-cold", "all-title"]),
}


def make_copy(work: Path, name: str) -> Path:
    """A copy of this checkout's generator/ and templates/ with ``name`` switched off."""
    tree = work / f"off-{name}"
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(measure.ROOT / "generator", tree / "generator", ignore=ignore)
    shutil.copytree(measure.ROOT / "templates", tree / "templates", ignore=ignore)
    for relative, old, new in MECHANISMS[name][1]:
        path = tree / "generator" / relative
        text = path.read_text(encoding="utf-8")
        if text.count(old) != 1:
            raise SystemExit(f"{name}: {relative} holds {old!r} {text.count(old)} times, not once: update MECHANISMS")
        path.write_text(text.replace(old, new), encoding="utf-8")
    return tree


def same_tree(one: Path, other: Path) -> str | None:
    """None when the two directories hold the same files, byte for byte; else diff -r's first lines."""
    found = subprocess.run(["diff", "-rq", str(one), str(other)], check=False, capture_output=True, text=True)
    return None if found.returncode == 0 else (found.stdout + found.stderr)[:600]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help=f"comma-separated mechanisms (default: all of {', '.join(MECHANISMS)})")
    parser.add_argument("--steps", help="comma-separated steps for every mechanism (default: each mechanism's own)")
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2, help="EVCAT_JOBS for every side")
    parser.add_argument("--work", type=Path, default=HERE / "work")
    parser.add_argument("--json", type=Path, help="write every sample here")
    parser.add_argument("--cold-once", action="store_true",
                        help="all-cold in the first round only (more rounds of the warm steps for the same time)")
    arguments = parser.parse_args()
    measure.check_checkout()
    names = arguments.only.split(",") if arguments.only else list(MECHANISMS)
    for name in names:
        if name not in MECHANISMS:
            parser.error(f"unknown mechanism {name!r}")
    work = arguments.work / f"mechanisms-{arguments.events}"
    shutil.rmtree(work, ignore_errors=True)
    catalog = work / "catalog"
    files = synth.write(catalog, arguments.events, 20, "normo")
    trees = {"on": measure.ROOT, **{name: make_copy(work, name) for name in names}}
    for tree in trees.values():
        measure.compile_checkout(tree)
    envs = {side: {**measure.child_env(EVCAT_JOBS=str(arguments.jobs)), "PYTHONPATH": str(tree)} for side, tree in trees.items()}
    steps_of = {name: arguments.steps.split(",") if arguments.steps else MECHANISMS[name][2] for name in names}
    steps = [step for step in [*GENERATE, "python-nocache", "docs-nocache"] if any(step in s for s in steps_of.values())]
    if any(step.startswith("all-") and step != "all-cold" for step in steps) and "all-cold" not in steps:
        steps.insert(0, "all-cold")  # the warm steps start from a cold run
    print(f"catalog: {arguments.events} event types, {len(files)} files; EVCAT_JOBS={arguments.jobs}; "
          f"{arguments.runs} rounds; steps {', '.join(steps)}", flush=True)

    victim = files[len(files) // 2]
    original = victim.read_text(encoding="utf-8")
    first_title = next(line for line in original.splitlines() if line.strip().startswith("title:") and line.startswith("  "))

    def payload_edit(run: int) -> str:
        document = yaml.safe_load(original)
        event = next(event for event in document["events"] if "data" in event and "properties" in event["data"])
        event["data"]["properties"][f"benchExtra{run}"] = {"type": "string", "description": "A property added by the benchmark."}
        return yaml.dump(document, Dumper=synth._Dumper, sort_keys=False, width=100, allow_unicode=True)

    def out(side: str, step: str) -> Path:
        return work / side / (f"out-{step}" if step.endswith("nocache") else "out-all")

    def command(side: str, step: str) -> list[str]:
        base = [sys.executable, "-m", "generator", "generate", str(catalog), "-o", str(out(side, step))]
        if step == "python-nocache":
            return base + ["--only", "python", "--no-cache"]
        if step == "docs-nocache":
            return base + ["--only", "docs", "--no-cache"]
        return base + ["--cache-dir", str(work / side / "cache-all")]

    def sides_of(step: str) -> list[str]:
        return ["on", *(name for name in names if step in steps_of[name] or
                         (step == "all-cold" and any(s.startswith("all-") for s in steps_of[name])))]

    rounds = Rounds()
    differences: dict[tuple[str, str], str] = {}
    # Warm-up: bytecode, page cache.
    for side in trees:
        measure.run(command(side, "python-nocache"), env=envs[side], cwd=work)
    try:
        for run in range(arguments.runs):
            for step in steps:
                if arguments.cold_once and run and step == "all-cold":
                    continue
                if step == "all-title":
                    victim.write_text(original.replace(first_title, f"{first_title} (edit {run})", 1), encoding="utf-8")
                elif step == "all-payload":
                    victim.write_text(payload_edit(run), encoding="utf-8")
                else:
                    victim.write_text(original, encoding="utf-8")
                sides = sides_of(step)
                shift = run % len(sides)
                order = sides[shift:] + sides[:shift]
                if run % 2:
                    order.reverse()
                for side in order:
                    if step == "all-cold":
                        shutil.rmtree(work / side / "cache-all", ignore_errors=True)
                    if step in ("all-cold",) or step.endswith("nocache"):
                        shutil.rmtree(out(side, step), ignore_errors=True)
                    rounds.add(f"{side}/{step}", measure.run(command(side, step), env=envs[side], cwd=work))
                for side in sides[1:]:
                    found = same_tree(out("on", step), out(side, step))
                    if found is not None:
                        differences.setdefault((side, step), found)
                print(f"round {run + 1} {step}: " + ", ".join(
                    f"{side} {rounds.wall(f'{side}/{step}')[-1]:.2f}s" for side in sides), flush=True)
            victim.write_text(original, encoding="utf-8")
            for side in trees:  # back to the original for the next round (untimed)
                if "all-cold" in steps and (side == "on" or any(s.startswith("all-") for s in steps_of[side])):
                    measure.run(command(side, "all-nothing"), env=envs[side], cwd=work)
    finally:
        victim.write_text(original, encoding="utf-8")

    print(f"\n{arguments.events} event types, EVCAT_JOBS={arguments.jobs}, {arguments.runs} rounds; "
          "seconds median [min-max]; ratio off/on per round, median [min-max]\n")
    print("| mechanism | step | on: wall s | off: wall s | off/on wall | on: CPU s | off: CPU s | off/on CPU | output |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        for step in steps:
            if name not in sides_of(step):
                continue
            on, off = f"on/{step}", f"{name}/{step}"
            same = "identical" if (name, step) not in differences else "DIFFERS"
            print(f"| {name} | {step} | {spread(rounds.wall(on))} | {spread(rounds.wall(off))} | "
                  f"{spread(rounds.ratios(off, on), digits=2)} | {spread(rounds.cpu(on))} | {spread(rounds.cpu(off))} | "
                  f"{spread(rounds.ratios(off, on, 'cpu'), digits=2)} | {same} |")
    for (name, step), found in differences.items():
        print(f"\n{name} changes the output at {step}:\n{found}")
    if arguments.json:
        arguments.json.write_text(json.dumps(
            {key: [[s.wall, s.cpu] for s in samples] for key, samples in rounds.samples.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
