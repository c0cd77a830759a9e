"""Lint on all cores (issue 8): the costly event checks (compiling payload
schemas, checking examples) run in worker processes while evcat runs the
other rules. The outcome is the one of a serial run, and what the workers
computed reaches the memo on disk."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from generator.commands.lint import lint
from generator.engine import checks as checks_module
from generator.engine.config import RunConfig
from generator.rules import catalog as catalog_rules

from .conftest import ROOT, catalog_text

EVENT = (
    "  - type: nl.test.{name}\n    dataversion: 1.0.0\n    title: T {name}\n    description: D.\n"
    "    data:\n      type: object\n      description: P.\n"
    "      properties:\n        code: {{{schema}, description: A code.}}\n"
    "    examples:\n      - data: {{code: {example}}}\n"
)


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    """The shipped catalogs plus events of every outcome of the costly checks."""
    target = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", target)
    events = "".join([
        EVENT.format(name="meta-broken", schema="type: string, minLength: -1", example="abc"),
        EVENT.format(name="regex-broken", schema="type: string, pattern: '['", example="abc"),
        EVENT.format(name="example-wrong", schema="type: string", example="5"),
        EVENT.format(name="example-wrong-type", schema="type: integer", example="abc"),
        *(EVENT.format(name=f"fine-{n}", schema="type: string", example="abc") for n in range(6)),
    ])
    (target / "costly.yaml").write_text(catalog_text(catalog_id="costly", events=events), encoding="utf-8")
    return target


@pytest.mark.own_process
def test_costly_checks_in_workers_give_the_serial_outcome(
    directory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVCAT_JOBS", "1")
    serial = lint(str(directory)).diagnostics
    assert [d.message.split(":")[0] for d in serial if d.rule == "CAT-SCHEMA"] == ["not a valid JSON Schema 2020-12"] * 2
    assert sum(d.rule == "CAT-EXAMPLE" for d in serial) == 2

    # Workers for any number of events; note which processes ran the checks.
    monkeypatch.setenv("EVCAT_JOBS", "2")
    monkeypatch.setattr(checks_module, "COSTLY_MIN_EVENTS", 1)
    ran = tmp_path / "ran"
    ran.mkdir()
    checks = checks_module._costly_chunk

    def noted(context: Any, positions: list[int]) -> dict[str, Any]:
        (ran / str(os.getpid())).touch()
        return checks(context, positions)

    monkeypatch.setattr(checks_module, "_costly_chunk", noted)
    cache = tmp_path / "cache"
    parallel = lint(str(directory), RunConfig(cache_dir=str(cache))).diagnostics
    assert parallel == serial
    pids = {int(path.name) for path in ran.iterdir()}
    assert pids - {os.getpid()}, "no worker ran a costly check"

    # What the workers computed was saved: a warm run computes nothing again.
    def refuse(*_: Any) -> Any:
        raise AssertionError("a memoised check ran again")

    monkeypatch.setattr(catalog_rules, "_compile", refuse)
    monkeypatch.setattr(catalog_rules, "_check_examples", refuse)
    assert lint(str(directory), RunConfig(cache_dir=str(cache))).diagnostics == serial


def test_positions_found_on_demand_are_the_recorded_ones() -> None:
    """Lint parses without recording positions and finds them again from the
    file's bytes when a diagnostic asks; both ways give the same table."""
    from generator.loader import load_bytes

    files = sorted((ROOT / "catalog").rglob("*.yaml")) + sorted((ROOT / "tests" / "catalogs").rglob("*.yaml"))
    assert len(files) >= 4
    duplicate = b"catalog: x\nevents:\n  - type: a\n    type: b\n<<: {title: t}\nanchors: &a [1, *a]\n"
    for name, raw in [*((str(f), f.read_bytes()) for f in files), ("duplicate.yaml", duplicate)]:
        eager = load_bytes(raw, name)
        lazy = load_bytes(raw, name, positions=False)
        assert lazy.positions is None and lazy.value == eager.value
        assert lazy.diagnostics == eager.diagnostics
        assert (lazy.locations, lazy.key_locations) == (eager.locations, eager.key_locations)
        assert eager.locations or eager.value is None, name  # tests/catalogs/bad holds files that do not parse


def test_payload_part_findings_are_kept_per_file_across_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-schema payload checks (PAY-CAMELCASE, PAY-REQUIRED, PAY-FORMAT,
    CAT-UNKNOWN-KEY) are remembered by the content of their file: a warm run
    checks only the schemas of the file that changed, with the same findings."""
    from generator.rules import payload as payload_rules

    directory = tmp_path / "catalog"
    directory.mkdir()
    bad = EVENT.format(name="bad", schema="type: string, format: emial, Nope: 1", example="abc").replace("code:", "Code:")
    for name in ("one", "two"):
        events = bad.replace("nl.test.bad", f"nl.test.{name}-bad") + EVENT.format(name=f"{name}-fine", schema="type: string", example="abc")
        (directory / f"{name}.yaml").write_text(catalog_text(catalog_id=name, events=events), encoding="utf-8")
    monkeypatch.setenv("EVCAT_JOBS", "1")
    cache = str(tmp_path / "cache")
    first = lint(str(directory), RunConfig(cache_dir=cache)).diagnostics
    assert {d.rule for d in first} >= {"PAY-CAMELCASE", "PAY-FORMAT", "CAT-UNKNOWN-KEY"}

    seen: list[str] = []
    checks = payload_rules._camel_case

    def noted(context: Any, part: Any) -> Any:
        seen.append(part.file)
        return checks(context, part)

    monkeypatch.setattr(payload_rules, "_camel_case", noted)
    assert lint(str(directory), RunConfig(cache_dir=cache)).diagnostics == first and seen == []
    two = directory / "two.yaml"
    two.write_text("# an edit that moves every line\n" + two.read_text(encoding="utf-8"), encoding="utf-8")
    moved = lint(str(directory), RunConfig(cache_dir=cache)).diagnostics
    assert seen and all(file.endswith("two.yaml") for file in seen)
    assert moved == lint(str(directory)).diagnostics  # the same as a run without any memo
    assert [d.location.line for d in moved if d.location.file.endswith("two.yaml")] == [
        d.location.line + 1 for d in first if d.location.file.endswith("two.yaml")]


def test_memo_entries_of_another_shape_are_worked_out_again(directory: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A memo entry whose rows are not what the Diagnostic codec writes (an
    older evcat's seven-field rows, garbage) is a miss: the check runs again."""
    from generator.engine.store import Single

    monkeypatch.setenv("EVCAT_JOBS", "1")
    cache = tmp_path / "cache"
    expected = lint(str(directory), RunConfig(cache_dir=str(cache))).diagnostics
    store = Single(cache, "checks.marshal")
    memo = store.get()
    assert isinstance(memo, dict) and memo
    old = {key: ([("R", 1, "m", "f", 1, 1, None)] if number % 2 else [("garbage",)], state)
           for number, (key, (_, state)) in enumerate(memo.items())}
    store.put(old)
    assert lint(str(directory), RunConfig(cache_dir=str(cache))).diagnostics == expected


def test_no_worker_is_forked_while_another_thread_runs() -> None:
    """The one decision (engine.workers.worker_count): a process with a second
    thread never forks (a forked child keeps the other thread's locks held
    forever: the hang of ``evcat lsp`` in issue 29); with one thread it does.
    In a fresh interpreter: the test process may run threads of other tests."""
    script = """
import os, threading
from generator.engine import workers

def pid(_):
    return os.getpid()

assert workers.single_threaded() and workers.worker_count(10, 2) == 2
assert set(workers.run(pid, range(4), 2)) - {os.getpid()}, "no worker ran"
release = threading.Event()
thread = threading.Thread(target=release.wait)
thread.start()
try:
    assert not workers.single_threaded()
    assert workers.worker_count(10, 2) == 1
    assert workers.pool(2) is None and workers.pool(2, lambda: None) is None
    assert set(workers.run(pid, range(4), 2)) == {os.getpid()}  # all here, none in a forked worker
finally:
    release.set()
    thread.join()
import time
deadline = time.monotonic() + 5
while not workers.single_threaded() and time.monotonic() < deadline:
    time.sleep(0.01)  # a joined thread leaves /proc/self/task a moment later
assert workers.worker_count(10, 2) == 2
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr




def _pid_after(pause: float, item: int) -> tuple[int, int]:
    time.sleep(pause)
    return item, os.getpid()


@pytest.mark.own_process
def test_claimed_work_is_shared_with_this_process_and_done_once() -> None:
    """engine.workers.claimed: every chunk once, by a worker or by this
    process, whichever is free (this one claims once it asks for results)."""
    from generator.engine.workers import claimed

    chunks = list(range(40))
    results = list(claimed(_pid_after, 0.02, chunks, 1))
    assert sorted(item for item, _ in results) == chunks
    pids = {pid for _, pid in results}
    assert os.getpid() in pids and len(pids) == 2, "both this process and the worker took chunks"

    # This process busy elsewhere first: the worker has taken chunks meanwhile.
    running = claimed(_pid_after, 0.01, chunks, 1)
    time.sleep(0.2)
    results = list(running)
    assert sorted(item for item, _ in results) == chunks
    assert sum(pid != os.getpid() for _, pid in results) >= 10


def _dies_in_a_worker(parent: int, item: int) -> int:
    if os.getpid() != parent:
        os._exit(1)  # killed mid-work: the parent never hears of the chunks it claimed
    time.sleep(0.01)
    return item


def _raises(parent: int, item: int) -> int:
    if os.getpid() != parent:
        raise ValueError(f"chunk {item} refused")
    time.sleep(0.05)
    return item


@pytest.mark.own_process
def test_claimed_work_of_a_dead_worker_is_done_here_and_an_error_is_raised_here() -> None:
    from generator.engine.workers import claimed

    running = claimed(_dies_in_a_worker, os.getpid(), list(range(10)), 1)
    time.sleep(0.2)  # the worker claims a chunk meanwhile, and dies
    assert sorted(running) == list(range(10))
    with pytest.raises(ValueError, match="refused"):
        list(claimed(_raises, os.getpid(), list(range(10)), 1))
