"""Incremental and parallel generation (issue 8) and interruption (issue 9):
the render cache never changes the output, only what changed is rendered
again, and Ctrl-C or a failure while rendering leaves OUT as it was."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.engine.config import RunConfig
from generator.commands import generate as generate_module
from generator.cli import main
from generator.commands.generate import Progress, RenderCache, RenderStats, generate, render
from generator.commands.lint import lint
from generator.render import docs
from generator.render import templates as template_module

from .conftest import ROOT, catalog_text
from .test_generate import snapshot

KINDS = generate_module.parse_kinds(None)  # the default outputs, what `evcat generate` writes


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    target = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", target)
    shutil.copytree(ROOT / "tests" / "catalogs" / "hostile", target / "hostile")
    return target


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_warm_and_cold_runs_are_byte_identical(catalog: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    first = RenderStats()
    generate(str(catalog), str(tmp_path / "warm"), KINDS, RunConfig(cache_dir=cache))
    again = generate(str(catalog), str(tmp_path / "warm"), KINDS, RunConfig(cache_dir=cache))
    assert again.stats is not None and again.stats.rendered == 0 and again.stats.cached == again.stats.units
    assert again.report is not None and not again.report.written and not again.report.deleted
    generate(str(catalog), str(tmp_path / "cold"), KINDS, RunConfig(cache_dir=None))
    assert snapshot(tmp_path / "warm") == snapshot(tmp_path / "cold")
    assert first.rendered == 0  # untouched: stats are only filled when passed to render

    # One event changes: only that catalog's units and the indexes render again.
    edit(catalog / "normo" / "meter-data.yaml", "title: Meter removed", "title: Meter taken out of service")
    changed = generate(str(catalog), str(tmp_path / "warm"), KINDS, RunConfig(cache_dir=cache))
    assert changed.stats is not None
    assert changed.stats.rendered == len(KINDS) + 2  # meter-data in each kind + jsonschema and docs indexes
    assert changed.report is not None and changed.report.written
    assert all("meter" in path or "index" in path for path in changed.report.written), changed.report.written
    generate(str(catalog), str(tmp_path / "cold2"), KINDS, RunConfig(cache_dir=None))
    assert snapshot(tmp_path / "warm") == snapshot(tmp_path / "cold2")


def test_a_damaged_cache_is_ignored(catalog: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    generate(str(catalog), str(tmp_path / "a"), KINDS, RunConfig(cache_dir=str(cache)))
    entries = sorted(cache.rglob("*.marshal"))
    assert entries
    assert not (cache / "templates").exists()  # no jinja2 bytecode cache (it is read with pickle)
    for number, entry in enumerate(entries):
        entry.write_bytes([b"", b"\x00garbage", b"\xe9" * 100][number % 3])
    template_module._environment.cache_clear()  # as in a new process: the templates load from the cache
    result = generate(str(catalog), str(tmp_path / "b"), KINDS, RunConfig(cache_dir=str(cache)))
    assert result.stats is not None and result.stats.rendered == result.stats.units
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")


def test_a_changed_template_changes_the_key(catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog_set = lint(str(catalog)).catalog_set
    unit = docs.units(catalog_set)[0]
    before = RenderCache(str(tmp_path)).key(unit)
    templates = tmp_path / "templates" / "docs"
    templates.mkdir(parents=True)
    (templates / "event.html.jinja").write_text("{{ page.type }}\n")
    user = template_module.check_directory(str(tmp_path / "templates"))
    assert RenderCache(str(tmp_path), templates=user).key(unit) != before
    assert RenderCache(str(tmp_path)).key(unit) == before


@pytest.mark.own_process
def test_parallel_and_serial_rendering_agree(catalog: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog_set = lint(str(catalog)).catalog_set
    stats = RenderStats()
    parallel = render(catalog_set, KINDS, stats=stats)
    monkeypatch.setenv("EVCAT_JOBS", "1")
    serial = render(catalog_set, KINDS)
    assert parallel == serial
    if (os.cpu_count() or 1) > 1:
        assert stats.workers > 1


def test_progress_bar_only_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    bar = Progress(3, terminal)
    for name in ("a", "b", "c"):
        bar.step(name)
    bar.close()
    assert "3/3" in terminal.getvalue() and terminal.getvalue().endswith("\r\x1b[K")
    pipe = io.StringIO()
    quiet = Progress(3, pipe)
    for name in ("a", "b", "c"):
        quiet.step(name)
    quiet.close()
    assert pipe.getvalue() == ""


def test_failure_while_rendering_leaves_out_unchanged(catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["generate", str(catalog), "-o", str(out), "--no-cache"]) == 0
    (out / "mine.txt").write_text("my notes")
    before = snapshot(out)
    edit(catalog / "normo" / "meter-data.yaml", "title: Meter removed", "title: Meter taken out of service")
    real = docs.type_views

    def broken(catalog_set: Any, only: Any = None, *, full: bool = True) -> Any:
        if only is not None and only.id == "meter-data":
            raise RuntimeError("template exploded")
        return real(catalog_set, only, full=full)

    monkeypatch.setattr(docs, "type_views", broken)  # workers are forked after this: they see it too
    code = main(["generate", str(catalog), "-o", str(out), "--no-cache"])
    assert code == 3 and "template exploded" in capsys.readouterr().err
    assert snapshot(out) == before


def test_ctrl_c_while_generating_a_large_catalog_leaves_out_unchanged(tmp_path: Path) -> None:
    big = tmp_path / "big"
    subprocess.run([sys.executable, str(ROOT / "bench" / "synth.py"), str(big), "--events", "1000"], check=True,
                   capture_output=True)
    out = tmp_path / "out"
    assert main(["generate", str(ROOT / "catalog"), "-o", str(out), "--no-cache"]) == 0
    (out / "mine.txt").write_text("my notes")
    before = snapshot(out)
    process = subprocess.Popen(
        [sys.executable, "-m", "generator", "generate", str(big), "-o", str(out), "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=ROOT,
    )
    # Well inside the run (started, its Ctrl-C handling in place; linting or
    # rendering), well before its end: a cold run of 1,000 types takes 4 s or
    # more, and at 2 s a faster run on a loaded machine was already swapping
    # OUT in (an interrupt held there lets it finish: exit 0, found 3 times).
    time.sleep(1.0)
    assert process.poll() is None, "the run finished before Ctrl-C: the test needs a bigger catalog"
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr.strip() == "evcat: interrupted" and "Traceback" not in stdout + stderr
    assert snapshot(out) == before
    time.sleep(0.2)
    listing = subprocess.run(["ps", "-o", "stat=,args=", "-s", str(process.pid)], capture_output=True, text=True).stdout
    # A zombie (an exited ruff whose worker was stopped first) runs nothing; init reaps it.
    running = [line for line in listing.splitlines() if not line.strip().startswith("Z")]
    assert running == [], f"processes outlived the interrupted run: {running}"


def test_nothing_changed_replays_the_recorded_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    # A warning (CE-SOURCE-ABSOLUTE: a relative source) must be shown again on a replayed run.
    (catalog / "hostile.yaml").write_text(catalog_text("cloudevents", source="/relative/source"))
    arguments = ["generate", str(catalog), "-o", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")]
    assert main(arguments) == 0
    first = capsys.readouterr()
    assert "warning CE-SOURCE-ABSOLUTE" in first.out
    result = generate(str(catalog), str(tmp_path / "out"), KINDS, RunConfig(cache_dir=str(tmp_path / "cache")))
    assert result.stats is not None and result.stats.replayed
    assert main(arguments) == 0
    again = capsys.readouterr()
    assert again.out == first.out  # the same diagnostics, in the same order
    # Any change (here: only the file's name) means a real run, not a replay.
    (catalog / "hostile.yaml").rename(catalog / "renamed.yaml")
    moved = generate(str(catalog), str(tmp_path / "out"), KINDS, RunConfig(cache_dir=str(tmp_path / "cache")))
    assert moved.stats is not None and not moved.stats.replayed
    assert [d.location.file for d in moved.lint.diagnostics] == [
        d.location.file.replace("hostile.yaml", "renamed.yaml") for d in result.lint.diagnostics
    ]


def test_render_cache_keys_do_not_depend_on_the_process(tmp_path: Path) -> None:
    """String hashes change per process (PYTHONHASHSEED): a key built from the
    repr of a set would miss every entry in the next run."""
    probe = (
        "from generator.commands.lint import lint\n"
        "from generator.commands.generate import RenderCache\n"
        "from generator.render import asyncapi, docs, jsonschema\n"
        "from generator.render import python\n"
        f"cache = RenderCache({str(tmp_path)!r})\n"
        "catalog_set = lint('catalog').catalog_set\n"
        "units = [*jsonschema.units(catalog_set), *asyncapi.units(catalog_set), *docs.units(catalog_set), *python.units(catalog_set)]\n"
        "print([cache.key(unit) for unit in units])\n"
    )
    keys = []
    for seed in ("1", "2"):
        run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)})
        assert run.returncode == 0, run.stderr
        keys.append(run.stdout)
    assert keys[0] == keys[1]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)


@given(_JSON)
@settings(max_examples=500, deadline=None)
def test_dump_json_writes_what_the_standard_library_writes(value: Any) -> None:
    """dump_json takes orjson's fast path only where it writes the same bytes."""
    from generator.render import dump_json

    try:
        expected = (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no output either way
        return
    assert dump_json(value) == expected


def test_out_files_are_trusted_by_their_stamp_only_while_untouched(catalog: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 16: a file of OUT whose inode, size, mtime and ctime match the stamp
    sealed after the last verified write is not read again; any change to it
    (even with its size and mtime put back), a tampered stamp entry, or
    ``--check`` compares content."""
    from generator import writer

    cache, out = str(tmp_path / "cache"), tmp_path / "out"
    generate(str(catalog), str(out), KINDS, RunConfig(cache_dir=cache))
    time.sleep(writer.RACY_NS / 1e9 + 0.05)  # files written just now are not stamped (racy)
    generate(str(catalog), str(out), KINDS, RunConfig(cache_dir=cache))  # compares content, stamps every file
    expected = snapshot(out)
    reads: list[str] = []
    real_same = writer._same
    monkeypatch.setattr(writer, "_same", lambda path, content: reads.append(path) or real_same(path, content))
    quiet = generate(str(catalog), str(out), KINDS, RunConfig(cache_dir=cache))
    assert quiet.report is not None and not quiet.report.written and quiet.report.unchanged
    assert reads == []  # all trusted by their stamps

    # Same size, same mtime, other bytes: the ctime gives it away.
    victim = next(path for path in sorted(out.rglob("*.html")) if path.stat().st_size > 10)
    before = victim.stat()
    data = victim.read_bytes()
    victim.write_bytes(data[:-2] + (b"XX" if data[-2:] != b"XX" else b"YY"))
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert victim.stat().st_size == before.st_size and victim.stat().st_mtime_ns == before.st_mtime_ns
    check = generate(str(catalog), str(out), KINDS, RunConfig(cache_dir=cache), check=True)
    assert check.report is not None and check.report.written == [victim.relative_to(out).as_posix()]
    repaired = generate(str(catalog), str(out), KINDS, RunConfig(cache_dir=cache))
    assert repaired.report is not None and repaired.report.written == [victim.relative_to(out).as_posix()]
    assert str(victim) in reads and snapshot(out) == expected

    # A damaged stamp entry is a miss: every file is compared by content again.
    for entry in (Path(cache) / "stamps").rglob("*.marshal"):
        entry.write_bytes(entry.read_bytes()[:-1] + b"\x00")
    reads.clear()
    again = generate(str(catalog), str(out), KINDS, RunConfig(cache_dir=cache))
    assert again.report is not None and not again.report.written
    assert len(reads) == len(again.report.unchanged) and snapshot(out) == expected


def test_workers_load_the_model_library_only_on_a_cold_cache(
    catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a cold cache every Python unit is rendered by the workers forked
    before lint, and each loads datamodel-code-generator while lint runs; on
    a warm cache few units change (and their models are mostly stored), so
    nothing loads it ahead (the warm helper that did cost 0.79x CPU on a
    title edit and bought nothing on a payload edit: bench/MECHANISMS.md).
    A changed payload is rendered all the same."""
    warmed: list[bool] = []
    real = generate_module.workers_module.pool

    def noted(workers: int, warm_up: Any = None) -> Any:
        warmed.append(warm_up is not None)
        return real(workers, warm_up)

    monkeypatch.setattr(generate_module.workers_module, "pool", noted)
    cache = str(tmp_path / "cache")
    generate(str(catalog), str(tmp_path / "warm"), KINDS, RunConfig(cache_dir=cache))
    assert warmed == [True]
    edit(catalog / "normo" / "meter-data.yaml", "Meter number as printed", "Meter number as engraved")
    changed = generate(str(catalog), str(tmp_path / "warm"), KINDS, RunConfig(cache_dir=cache))
    assert warmed == [True, False]
    assert changed.stats is not None and changed.stats.rendered
    generate(str(catalog), str(tmp_path / "cold"), KINDS, RunConfig(cache_dir=None))
    assert warmed == [True, False, True]
    assert snapshot(tmp_path / "warm") == snapshot(tmp_path / "cold")


def test_lint_findings_are_not_reused_by_other_code_of_the_same_version(tmp_path: Path) -> None:
    """The parse cache and the memo of checks are keyed by evcat's code, not
    only its version (``engine.cache.code_digest``): a checkout edited, or a
    build of another commit with the same version, never shows the findings
    the old code made. (They were keyed by the version alone: a rule fixed
    in a checkout still showed its old verdict from .evcat-cache/.)"""
    code = tmp_path / "code"
    shutil.copytree(ROOT / "generator", code / "generator", ignore=shutil.ignore_patterns("__pycache__"))
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    closed = {"type": "object", "description": "A.", "properties": {"a": {"type": "string", "description": "A."}},
              "additionalProperties": False}
    data = {"type": "object", "description": "The payload.", "allOf": [{"$ref": "#/schemas/Base"}],
            "properties": {"b": {"type": "string", "description": "B."}}}
    (catalog / "c.yaml").write_text(json.dumps({
        "catalog": "drawn", "title": "Closed", "version": "1.0.0", "profile": "cloudevents",
        "producer": {"source": "urn:example:x"}, "schemas": {"Base": closed},
        "events": [{"type": "org.example.closed", "dataversion": "1.0.0", "title": "Closed",
                    "description": "A payload over a closed schema.", "data": data}]}), encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(code)}
    command = [sys.executable, "-m", "generator", "lint", str(catalog), "--cache-dir", str(tmp_path / "cache")]

    def findings() -> str:
        done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert "Traceback" not in done.stderr, done.stderr
        return done.stdout

    assert "PAY-ALLOF-CLOSED" in findings()  # kept in the memo of checks (rules.part_findings)
    rules = code / "generator" / "rules" / "payload.py"
    text = rules.read_text(encoding="utf-8")
    assert text.count("or leave out what closes it") == 1
    rules.write_text(text.replace("or leave out what closes it", "or leave out what closes it (new words)"), encoding="utf-8")
    assert "(new words)" in findings()
