"""Issue 16: nothing in a catalog, a cache or an output directory can be turned
against the user. One test per finding of the review (each failed before its
fix), then the concurrency and crash tests of the writer."""

from __future__ import annotations

import marshal
import os
import pickle
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from generator.cli import main

from .conftest import ROOT, catalog_text, run_evcat

KINDS = "python,jsonschema,asyncapi,docs"


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def small(tmp_path: Path) -> Path:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "test.yaml").write_text(catalog_text(), encoding="utf-8")
    return catalog


def _edit(catalog: Path) -> None:
    path = catalog / "test.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("Thing happened", "Thing changed"), encoding="utf-8")


# --- the cache --------------------------------------------------------------------------------


class _Marker:
    """Unpickling this creates the file ``path``: code running from the cache."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def test_a_planted_template_bytecode_entry_runs_nothing(small: Path, tmp_path: Path) -> None:
    """jinja2's FileSystemBytecodeCache reads its entries with pickle; their
    names can be computed from the template paths. evcat keeps no such cache."""
    import jinja2
    import jinja2.bccache

    cache = tmp_path / "cache"
    marker = tmp_path / "executed"
    planted = cache / "templates"
    planted.mkdir(parents=True)
    keeper = jinja2.FileSystemBytecodeCache(str(planted))
    for template in (ROOT / "templates").rglob("*.jinja"):
        name = str(template.relative_to(ROOT / "templates")).replace(os.sep, "/")
        key = keeper.get_cache_key(name, str(template))
        payload = jinja2.bccache.bc_magic + pickle.dumps(_Marker(str(marker)))
        (planted / f"__jinja2_{key}.cache").write_bytes(payload)
    out = tmp_path / "out"
    for arguments in (["-o", str(out)], ["-o", str(out), "--check"]):
        result = run_evcat("generate", str(small), *arguments, "--cache-dir", str(cache))
        assert result.returncode == 0, result.stderr
        assert not marker.exists(), "code from the cache ran"


def test_compiled_templates_in_the_cache_run_only_if_sealed(small: Path, tmp_path: Path) -> None:
    """Compiled templates are kept (``engine.store.TemplateCode``) as marshal'd
    code objects, sealed: an entry replaced by code that would create a file
    is a miss, never executed; the output is what a cold run writes."""
    cache = tmp_path / "cache"
    out = tmp_path / "out"
    assert run_evcat("generate", str(small), "-o", str(out), "--cache-dir", str(cache)).returncode == 0
    entries = sorted((cache / "jinja").rglob("*.marshal"))
    assert len(entries) >= 10, entries  # docs and python templates
    marker = tmp_path / "executed"
    planted = marshal.dumps(compile(f"open({str(marker)!r}, 'w').close()", "planted", "exec"))
    head = len(b"evcat-cache-2\n") + 32
    for number, entry in enumerate(entries):
        data = entry.read_bytes()
        entry.write_bytes(data[:head] + planted if number % 2 else planted)  # old seal kept, or none at all
    _edit(small)  # something to render: templates are loaded
    for arguments in (["-o", str(out)], ["-o", str(out), "--check"]):
        result = run_evcat("generate", str(small), *arguments, "--cache-dir", str(cache))
        assert result.returncode == 0, result.stderr
        assert not marker.exists(), "code from the cache ran"
    cold = tmp_path / "cold"
    assert run_evcat("generate", str(small), "-o", str(cold), "--no-cache").returncode == 0
    assert snapshot(out) == snapshot(cold)


def _tamper(cache: Path) -> int:
    """Change every entry as an attacker who can write the cache would:
    the payload's strings and bytes edited, any header kept as it was."""
    count = 0

    def change(value: Any) -> Any:
        if isinstance(value, bytes):
            return b"# TAMPERED\n" + value
        if isinstance(value, str):
            return value + " TAMPERED" if "\n" not in value else "# TAMPERED\n" + value
        if isinstance(value, dict):
            return {key: change(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(change(item) for item in value)
        return value

    from generator.engine import store

    for path in cache.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if data.startswith(store._MAGIC):  # read_entry's layout: magic, seal, marshal'd payload
            head = len(store._MAGIC) + store._SEAL
            path.write_bytes(data[:head] + marshal.dumps(change(marshal.loads(data[head:]))))
        elif data.startswith(store._FILES_MAGIC):  # write_files': magic, seal, header length, header, the files
            start = len(store._FILES_MAGIC) + store._SEAL + store._LENGTH
            length = int.from_bytes(data[start - store._LENGTH:start], "big")
            header = marshal.dumps(change(marshal.loads(data[start:start + length])))
            body = data[start + length:]
            path.write_bytes(data[:start - store._LENGTH] + len(header).to_bytes(store._LENGTH, "big") + header
                             + b"# TAMPERED\n" + body)
        else:
            path.write_bytes(b"# TAMPERED\n" + data)
        count += 1
    return count


def test_tampered_cache_entries_are_misses(small: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    out = tmp_path / "out"
    assert run_evcat("generate", str(small), "-o", str(out), "--cache-dir", str(cache)).returncode == 0
    cold = snapshot(out)
    assert _tamper(cache) > 5
    check = run_evcat("generate", str(small), "-o", str(out), "--cache-dir", str(cache), "--check")
    assert check.returncode == 0, check.stderr  # what --check compares with is what a cold run writes
    again = tmp_path / "again"
    assert run_evcat("generate", str(small), "-o", str(again), "--cache-dir", str(cache)).returncode == 0
    assert snapshot(again) == cold
    # and a lint through the tampered parse cache says what a cold lint says
    warm = run_evcat("lint", str(small), "--cache-dir", str(cache), "--format", "json")
    assert warm.stdout == run_evcat("lint", str(small), "--no-cache", "--format", "json").stdout


def test_cached_bytes_count_only_when_they_match_their_sealed_digest(small: Path, tmp_path: Path) -> None:
    """A rendered unit's entry seals the digests of its files; their bytes
    are compared with OUT by digest and checked when read. An attacker who
    edits those bytes in the cache and in OUT alike gets neither past
    ``--check`` nor into the output."""
    cache = tmp_path / "cache"
    out = tmp_path / "out"
    assert run_evcat("generate", str(small), "-o", str(out), "--cache-dir", str(cache)).returncode == 0
    cold = snapshot(out)
    old, new = b"Thing happened", b"Thing HACKED!!"  # the same length: offsets in the entries stay right
    edited = 0
    for path in [*(cache / "render").rglob("*.marshal"), *(p for p in out.rglob("*") if p.is_file())]:
        data = path.read_bytes()
        if old in data:
            path.write_bytes(data.replace(old, new))
            edited += 1
    assert edited > 5
    check = run_evcat("generate", str(small), "-o", str(out), "--cache-dir", str(cache), "--check")
    assert check.returncode == 1 and "stale" in check.stderr, check.stderr
    (out / "docs").rename(tmp_path / "docs-moved")  # some files must be written from the cache
    result = run_evcat("generate", str(small), "-o", str(out), "--cache-dir", str(cache))
    assert result.returncode == 0, result.stderr
    assert snapshot(out) == cold
    assert run_evcat("generate", str(small), "-o", str(out), "--cache-dir", str(cache), "--check").returncode == 0


def test_a_symlink_inside_the_cache_is_not_written_through(small: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache.mkdir()
    for name in ("render", "parsed", "models", "runs"):
        (cache / name).symlink_to(elsewhere, target_is_directory=True)
    (cache / "checks.marshal").symlink_to(elsewhere / "checks")
    assert run_evcat("generate", str(small), "-o", str(tmp_path / "out"), "--cache-dir", str(cache)).returncode == 0
    assert list(elsewhere.iterdir()) == []


# --- the writer -------------------------------------------------------------------------------


def test_a_planted_temporary_link_is_not_written_through(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_evcat("generate", str(small), "-o", str(out), "--no-cache").returncode == 0
    victims = []
    for path in [p for p in out.rglob("*") if p.is_file()]:
        victim = tmp_path / f"victim-{len(victims)}"
        victim.write_text("mine\n")
        victims.append(victim)
        for name in (f".{path.name}.evcat-tmp", f".{path.name}.evcat-tmp-0000000000000000"):
            (path.parent / name).symlink_to(victim)
    _edit(small)
    result = run_evcat("generate", str(small), "-o", str(out), "--no-cache")
    assert result.returncode == 0, result.stderr
    assert all(victim.read_text() == "mine\n" for victim in victims)
    cold = tmp_path / "cold"
    run_evcat("generate", str(small), "-o", str(cold), "--no-cache")
    assert {k: v for k, v in snapshot(out).items() if ".evcat-tmp" not in k} == snapshot(cold)


def test_a_directory_in_the_way_is_a_clean_error_before_any_rename(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_evcat("generate", str(small), "-o", str(out), "--no-cache").returncode == 0
    _edit(small)
    blocked = next(p for p in sorted(out.rglob("*.md")))
    blocked.unlink()
    blocked.mkdir()
    (blocked / "keep").write_text("x")
    before = snapshot(out)
    directories = sorted(p for p in out.rglob("*") if p.is_dir())
    result = run_evcat("generate", str(small), "-o", str(out), "--no-cache")
    assert result.returncode == 1
    assert "directory is in the way" in result.stderr and "Traceback" not in result.stderr
    assert snapshot(out) == before
    assert sorted(p for p in out.rglob("*") if p.is_dir()) == directories


@pytest.mark.parametrize("blocked", ["jsonschema", "docs/markdown"])
def test_a_file_where_a_directory_must_go_is_named(small: Path, tmp_path: Path, blocked: str) -> None:
    """The error names the file in the way, not OUT, and comes before anything changes."""
    out = tmp_path / "out"
    assert run_evcat("generate", str(small), "-o", str(out), "--no-cache").returncode == 0
    _edit(small)
    shutil.rmtree(out / blocked)
    (out / blocked).write_text("a file of mine\n")
    before = snapshot(out)
    result = run_evcat("generate", str(small), "-o", str(out), "--no-cache")
    assert result.returncode == 1
    assert f"{out / blocked} is a file where a directory must go" in result.stderr, result.stderr
    assert f"cannot write {out}:" not in result.stderr and "Traceback" not in result.stderr
    assert snapshot(out) == before


def test_an_error_while_writing_names_the_file(small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """An OSError from the file system (a full disk, say) names the file it
    happened to, when the system says which, rather than OUT."""
    import errno

    from generator import writer

    out = tmp_path / "out"
    full = str(out / "docs" / "index.html")

    def no_space(path: str, content: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), full)

    monkeypatch.setattr(writer, "_create", no_space)
    assert main(["generate", str(small), "-o", str(out), "--no-cache", "--only", "docs"]) == 1
    error = capsys.readouterr().err
    assert f"cannot write {full}: {os.strerror(errno.ENOSPC)}; nothing was changed" in error, error


def test_a_planted_journal_cannot_reach_outside_out(small: Path, tmp_path: Path) -> None:
    import json

    out = tmp_path / "out"
    assert run_evcat("generate", str(small), "-o", str(out), "--no-cache").returncode == 0
    victim = tmp_path / "victim"
    victim.write_text("mine\n")
    journal = {"state": "committing", "renames": [["../victim", "../victim2"]], "deleted": ["../victim", "/etc/hostname"],
               "directories": ["../"]}
    (out / ".evcat-journal").write_text(json.dumps(journal))
    result = run_evcat("generate", str(small), "-o", str(out), "--no-cache")
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "mine\n" and not (out / ".evcat-journal").exists()


FAST_KINDS = "jsonschema,asyncapi,docs"  # python adds a second of start-up per run and nothing to the writer


@pytest.fixture
def wide(tmp_path: Path) -> tuple[Path, Path]:
    """Two versions of a directory of 30 catalogs: enough files (some 300)
    that the commits of two runs overlap."""
    pair = []
    for name, title in (("wide-a", "Thing happened"), ("wide-b", "Thing changed")):
        directory = tmp_path / name
        directory.mkdir()
        for number in range(30):
            text = catalog_text(catalog_id=f"cat-{number}").replace("nl.test.thing-happened", f"nl.test.thing{number}-happened")
            (directory / f"c{number}.yaml").write_text(text.replace("Thing happened", title), encoding="utf-8")
        pair.append(directory)
    return pair[0], pair[1]


def _cold(catalog: Path, out: Path) -> dict[str, bytes]:
    assert run_evcat("generate", str(catalog), "-o", str(out), "--no-cache", "--only", FAST_KINDS).returncode == 0
    return snapshot(out)


def _start(catalog: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "generator", "generate", str(catalog), "-o", str(out), "--no-cache", "--only", FAST_KINDS],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_two_runs_into_one_out_never_mix(wide: tuple[Path, Path], tmp_path: Path) -> None:
    first, other = wide
    colds = [_cold(first, tmp_path / "cold-a"), _cold(other, tmp_path / "cold-b")]
    for repetition in range(20):
        out = tmp_path / f"out-{repetition}"
        # even repetitions: the same catalog twice (exactly one run writes);
        # odd ones: two different catalogs (one whole output wins)
        second = first if repetition % 2 == 0 else other
        runs = [_start(first, out), _start(second, out)]
        results = [run.communicate(timeout=120) for run in runs]
        assert [run.returncode for run in runs] == [0, 0], results
        assert snapshot(out) in colds, f"repetition {repetition}: the outputs of two runs are mixed"
        if second is first:
            assert snapshot(out) == colds[0]
            wrote = sorted(int(stderr.split("wrote ")[1].split(",")[0]) for _, stderr in results)
            assert wrote[0] == 0 and wrote[1] > 0, results  # the other run says it did not write
        shutil.rmtree(out)


def test_a_run_killed_anywhere_is_finished_or_undone_by_the_next(wide: tuple[Path, Path], tmp_path: Path) -> None:
    first, other = wide
    cold_b = _cold(other, tmp_path / "cold-b")
    out = tmp_path / "out"
    started = time.monotonic()
    _cold(first, out)
    duration = time.monotonic() - started
    generator = random.Random(16)
    for repetition in range(50):
        run = _start(other if repetition % 2 == 0 else first, out)
        time.sleep(generator.uniform(duration * 0.4, duration * 1.05))
        run.send_signal(signal.SIGKILL)
        run.communicate()
        # the next run (in this process: faster to start)
        assert main(["generate", str(other), "-o", str(out), "--no-cache", "--only", FAST_KINDS]) == 0
        assert snapshot(out) == cold_b, f"repetition {repetition}"
        assert not [p for p in out.rglob("*") if ".evcat-tmp" in p.name or p.name == ".evcat-journal"]


def test_a_lock_held_too_long_is_a_clear_failure_that_writes_nothing(small: Path, tmp_path: Path) -> None:
    """The lock on OUT has a timeout (--lock-timeout): past it, generate exits 1
    naming the holder's pid and leaves OUT as it was. (AsyncAPI: an output
    that carries the edited event title.)"""
    import fcntl

    out = tmp_path / "out"
    assert run_evcat("generate", str(small), "-o", str(out), "--no-cache", "--only", "asyncapi").returncode == 0
    _edit(small)
    before = snapshot(out)
    descriptor = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # another run writing OUT: this process
        started = time.monotonic()
        result = run_evcat("generate", str(small), "-o", str(out), "--no-cache", "--only", "asyncapi", "--lock-timeout", "1")
        waited = time.monotonic() - started
        check = run_evcat("generate", str(small), "-o", str(out), "--no-cache", "--only", "asyncapi", "--check",
                          "--lock-timeout", "0")
    finally:
        os.close(descriptor)
    assert result.returncode == 1, result.stderr
    assert f"still locked by pid {os.getpid()}" in result.stderr and "nothing was written" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and waited < 60
    assert check.returncode == 1 and f"pid {os.getpid()}" in check.stderr, check.stderr
    assert snapshot(out) == before
    # released: the same command goes through
    assert run_evcat("generate", str(small), "-o", str(out), "--no-cache", "--only", "asyncapi", "--lock-timeout", "1").returncode == 0
    assert snapshot(out) != before


def test_a_lock_timeout_must_be_a_number_of_seconds(small: Path, tmp_path: Path) -> None:
    for value in ("-1", "soon", "nan", "inf"):
        result = run_evcat("generate", str(small), "-o", str(tmp_path / "out"), "--lock-timeout", value)
        assert result.returncode == 2 and "--lock-timeout" in result.stderr, (value, result.stderr)
    assert not (tmp_path / "out").exists()


def test_a_planted_manifest_entry_is_ignored_with_one_warning(small: Path, tmp_path: Path) -> None:
    """Entries of OUT's manifest that are no safe relative path inside OUT
    (``../x``, an absolute path, a name under a symlinked directory, a
    symlink) are ignored with a warning, once; nothing is deleted through
    them and generate goes on."""
    import json

    out = tmp_path / "out"
    assert run_evcat("generate", str(small), "-o", str(out), "--no-cache", "--only", "jsonschema,docs").returncode == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = [outside / name for name in ("x", "y", "z", "w")]
    for victim in victims:
        victim.write_text("mine\n")
    (out / "linkdir").symlink_to(outside, target_is_directory=True)
    (out / "docs" / "link").symlink_to(victims[2])
    manifest = json.loads((out / ".evcat-manifest.json").read_text(encoding="utf-8"))
    planted = ["../outside/x", str(victims[1]), "docs/link", "linkdir/w", "docs/../../outside/x", "a\u0000b", "docs\\x"]
    manifest["files"]["docs"] += planted
    manifest["files"]["python"] = ["../outside/x", "linkdir/w"]  # a kind this run does not produce
    (out / ".evcat-manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    _edit(small)

    check = run_evcat("generate", str(small), "-o", str(out), "--no-cache", "--only", "jsonschema,docs", "--check")
    assert check.returncode == 1 and "warning" in check.stderr and "Traceback" not in check.stderr, check.stderr
    result = run_evcat("generate", str(small), "-o", str(out), "--no-cache", "--only", "jsonschema,docs")
    assert result.returncode == 0, result.stderr
    assert "warning" in result.stderr and "'../outside/x'" in result.stderr and "\x00" not in result.stderr, result.stderr
    assert all(victim.read_text() == "mine\n" for victim in victims)
    assert (out / "docs" / "link").is_symlink() and (out / "linkdir").is_symlink()
    listed = json.loads((out / ".evcat-manifest.json").read_text(encoding="utf-8"))["files"]
    assert not set(planted) & {name for names in listed.values() for name in names}
    assert "python" not in listed or listed["python"] == []
    cold = tmp_path / "cold"
    assert run_evcat("generate", str(small), "-o", str(cold), "--no-cache", "--only", "jsonschema,docs").returncode == 0
    mine = {k: v for k, v in snapshot(out).items() if not k.startswith(("linkdir", "docs/link"))}
    assert mine == snapshot(cold)
    # reported once: the next run has nothing to say
    again = run_evcat("generate", str(small), "-o", str(out), "--no-cache", "--only", "jsonschema,docs")
    assert again.returncode == 0 and "warning" not in again.stderr, again.stderr


# --- catalogs from git ------------------------------------------------------------------------


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "catalog").mkdir(parents=True)
    (repo / "sub").mkdir()
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("config", "user.email", "t@example.nl")
    git("config", "user.name", "T")
    (repo / "catalog" / "c.yaml").write_text(catalog_text())
    (repo / "sub" / "keep").write_text("x")
    git("add", ".")
    git("commit", "-qm", "one")
    return repo


@pytest.mark.parametrize("path", [":/catalog", ":(top)catalog", ":(top,glob)**", ":(attr:x)catalog", "../repo/catalog", "catalog/../../x"])
def test_git_pathspec_magic_writes_nothing_outside_a_private_directory(repository: Path, tmp_path: Path, path: str) -> None:
    before = set(Path("/").iterdir()), set(Path(tempfile_dir()).iterdir())
    result = run_evcat("diff", f"git:HEAD:{path}", "git:HEAD:catalog", cwd=repository / "sub")
    after = set(Path("/").iterdir()), set(Path(tempfile_dir()).iterdir())
    for created in (after[0] - before[0]):  # clean up what an old evcat would have written
        shutil.rmtree(created, ignore_errors=True)
    assert after[0] == before[0], "written at the root of the file system"
    assert not [p for p in after[1] - before[1] if p.name.startswith("evcat-git-")]
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "error" in result.stderr


def tempfile_dir() -> str:
    import tempfile

    return tempfile.gettempdir()


def test_git_ref_of_one_catalog_file(repository: Path) -> None:
    result = run_evcat("diff", "git:HEAD:catalog/c.yaml", "git:HEAD:catalog", cwd=repository)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    bad = run_evcat("diff", "git:HEAD:sub/keep", "git:HEAD:catalog", cwd=repository)
    assert bad.returncode == 2 and "no catalog files" in bad.stderr
    option = run_evcat("diff", "git:--output=/tmp/x:catalog", "git:HEAD:catalog", cwd=repository)
    assert option.returncode == 2 and "Traceback" not in option.stderr


# --- evcat validate: hostile events -----------------------------------------------------------


def _meter_line() -> str:
    import json

    from .test_validate import METER

    return json.dumps(METER)


HOSTILE_EVENTS = {
    "nested 3,000 deep": ('"reason": "replacement"', '"reason": ' + "[" * 3000 + "]" * 3000, "CE-FORMAT"),
    "nested 1,000 deep": ('"reason": "replacement"', '"reason": ' + "[" * 1000 + "]" * 1000, "CE-FORMAT"),
    "objects 3,000 deep": ('"reason": "replacement"', '"reason": ' + '{"a":' * 3000 + "1" + "}" * 3000, "CE-FORMAT"),
    "400-digit integer": ('"multiplicationFactor": 1', '"multiplicationFactor": ' + "9" * 400, "CE-FORMAT"),
    "400-digit attribute": ('"gridoperator": "8716871000002"', '"gridoperator": ' + "9" * 400, "CE-FORMAT"),
    "lone surrogate in id": ('"id": "example"', '"id": "\\ud800"', "CE-STRING-CHARS"),
    "lone surrogate in data": ('"reason": "replacement"', '"reason": "\\udc00"', "CE-STRING-CHARS"),
    "lone surrogate in a key": ('"reason": "replacement"', '"\\udc00": 1', "CE-STRING-CHARS"),
    "NaN": ('"multiplicationFactor": 1', '"multiplicationFactor": NaN', "CE-FORMAT"),
    "Infinity": ('"multiplicationFactor": 1', '"multiplicationFactor": -Infinity', "CE-FORMAT"),
    "1e400": ('"multiplicationFactor": 1', '"multiplicationFactor": 1e400', "CE-FORMAT"),
    "control character in id": ('"id": "example"', '"id": "a\\u0001b"', "CE-STRING-CHARS"),
    "escape sequence in id": ('"id": "example"', '"id": "\\u001b[31mred"', "CE-STRING-CHARS"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_EVENTS))
def test_one_hostile_event_is_a_diagnostic_and_never_stops_the_others(case: str, tmp_path: Path) -> None:
    from .goldens import CATALOGS

    old, new, rule = HOSTILE_EVENTS[case]
    good = _meter_line()
    assert old in good
    bad = good.replace(old, new, 1)
    (tmp_path / "events.jsonl").write_text(f"{good}\n{bad}\n{good}\n", encoding="utf-8")
    (tmp_path / "batch.json").write_text(f"[{good}, {bad}]", encoding="utf-8")
    result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "events.jsonl"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "null" not in result.stdout
    assert result.stdout.strip().endswith("2 of 3 events valid"), result.stdout
    assert f"events.jsonl:2:1: error {rule}" in result.stdout, result.stdout
    assert "\x1b" not in result.stdout and "\x01" not in result.stdout
    # in a batch (one JSON document), the batch or the one item is reported
    batch = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "batch.json"), "--format", "json")
    assert batch.returncode == 1 and "Traceback" not in batch.stderr and "internal error" not in batch.stderr


def test_an_event_line_beyond_the_limit_is_a_diagnostic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.commands import validate as validate_module

    from .goldens import CATALOGS
    from .test_validate import NORMO

    monkeypatch.setattr(validate_module, "MAX_EVENT_BYTES", 4096)
    good = _meter_line()
    (tmp_path / "events.jsonl").write_text(f"{good}\n{'x' * 10_000}\n{good}\n", encoding="utf-8")
    (tmp_path / "big.json").write_text("[" + ",".join([good] * 10) + "]", encoding="utf-8")
    result = validate_module.validate(NORMO, [str(tmp_path / "events.jsonl"), str(tmp_path / "big.json")])
    assert result.events == 4 and result.invalid == 2
    assert [d.location.line for d in result.diagnostics] == [2, 1]
    assert all("limit" in d.message for d in result.diagnostics)
    assert CATALOGS  # the catalogs the module is built from


# --- reading a catalog ------------------------------------------------------------------------


def test_a_fifo_a_device_and_a_link_outside_are_not_read(small: Path, tmp_path: Path) -> None:
    os.mkfifo(small / "pipe.yaml")
    (small / "zero.yaml").symlink_to("/dev/zero")
    secret = tmp_path / "secret.yaml"
    secret.write_text(catalog_text(catalog_id="secret-catalog").replace("Test catalog", "SECRET TITLE"))
    (small / "outside.yaml").symlink_to(secret)
    for command in (["lint", str(small)], ["generate", str(small), "-o", str(tmp_path / "out")]):
        result = subprocess.run([sys.executable, "-m", "generator", *command], cwd=ROOT, capture_output=True, text=True,
                                env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
        assert "pipe.yaml:1:1: error" in result.stdout and "not a regular file" in result.stdout
        assert "zero.yaml:1:1: error" in result.stdout
        assert "outside.yaml:1:1: error" in result.stdout and "outside the catalog directory" in result.stdout
        assert "SECRET" not in result.stdout


def test_out_and_the_cache_inside_the_catalog_directory_are_not_catalogs(small: Path) -> None:
    for _ in range(2):
        result = run_evcat("generate", str(small), "-o", str(small / "out"), "--cache-dir", str(small / "cache"))
        assert result.returncode == 0, result.stdout + result.stderr
    assert run_evcat("lint", str(small), "--cache-dir", str(small / "cache")).returncode == 0


def test_a_yaml_file_that_is_no_catalog_is_skipped_with_a_note(small: Path) -> None:
    (small / "docker-compose.yml").write_text("services:\n  web:\n    image: nginx\n")
    result = run_evcat("lint", str(small), "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "note: skipped" in result.stderr and "docker-compose.yml" in result.stderr
    missing = small / "missing.yaml"  # a catalog that only forgot its id is still a catalog: an error
    missing.write_text(catalog_text(catalog_id="x").replace("catalog: x\n", "").replace("nl.test.thing-happened", "nl.test.other-thing"))
    assert run_evcat("lint", str(small), "--no-cache").returncode == 1


# --- names ------------------------------------------------------------------------------------


def test_generated_names_never_shadow_the_runtime_or_the_standard_library(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    for number, catalog_id in enumerate(("email", "json", "typing")):
        names = ("event.error", "field", "cloud.event", "class.var", "literal") if number == 0 else (f"nl.test.other{number}",)
        events = "".join(f"  - type: {name}\n    title: T\n    description: D.\n" for name in names)
        (catalog / f"{catalog_id}.yaml").write_text(
            catalog_text("cloudevents", catalog_id=catalog_id, events=events), encoding="utf-8")
    out = tmp_path / "out"
    result = run_evcat("generate", str(catalog), "-o", str(out), "--no-cache", "--only", "python")
    assert result.returncode == 0, result.stdout + result.stderr
    packages = sorted(p.name for p in (out / "python").iterdir())
    assert not set(packages) & set(sys.stdlib_module_names), packages
    code = (
        "import sys, json, email, typing\n"
        "from catalog_email import EventError, parse_event, EVENTS\n"
        "assert isinstance(EventError, type) and issubclass(EventError, Exception)\n"
        "assert len(EVENTS) == 5, EVENTS\n"
        "for cls in EVENTS.values():\n"
        "    assert cls.__name__ not in ('EventError', 'Field', 'CloudEvent', 'ClassVar', 'Literal'), cls.__name__\n"
        "import catalog_email.events as events_module\n"
        "assert events_module.Field.__module__.startswith('pydantic')\n"
        "assert json.dumps is not None and email.message_from_string is not None\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=out / "python", capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def test_two_catalogs_on_one_package_name_are_a_lint_error(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "a.yaml").write_text(catalog_text(catalog_id="import"), encoding="utf-8")
    (catalog / "b.yaml").write_text(
        catalog_text(catalog_id="catalog-import").replace("nl.test.thing-happened", "nl.test.other-happened"), encoding="utf-8")
    result = run_evcat("lint", str(catalog), "--no-cache")
    assert result.returncode == 1
    assert "CAT-PACKAGE-NAME" in result.stdout and "catalog_import" in result.stdout


# --- Markdown and the terminal ----------------------------------------------------------------


def test_markdown_docs_carry_no_script_when_rendered(tmp_path: Path) -> None:
    """The docs as python-markdown (MkDocs) renders them: no javascript: link,
    no element or attribute from a catalog's names or descriptions."""
    import html.parser

    import markdown

    hostile_name = "a`<img src=x onerror=alert(1)>`b"
    events = f"""\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: "Thing [click](javascript:alert(1)) ![i](JaVaScRiPt:alert(2)) [ok](https://example.nl)"
    description: |
      [a](javascript:alert(3)) [b]( \\x01javascript:alert(4)) [c](java\\\\script:alert(5)) [d][r] <script>alert(6)</script>

      [r]: javascript:alert(7)
    data:
      type: object
      description: "[e](data:text/html,<script>alert(8)</script>)"
      properties:
        "{hostile_name}": {{type: string, description: "[f](vbscript:x)"}}
"""
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "c.yaml").write_text(catalog_text("cloudevents", events=events, header="rules:\n  PAY-CAMELCASE: off\n"),
                                    encoding="utf-8")
    out = tmp_path / "out"
    result = run_evcat("generate", str(catalog), "-o", str(out), "--no-cache", "--only", "docs")
    assert result.returncode in (0,), result.stdout + result.stderr
    pages = sorted(out.rglob("*.md"))
    assert pages

    class Collect(html.parser.HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.tags.append((tag, attrs))

    allowed = {"h1", "h2", "p", "code", "table", "thead", "tbody", "tr", "th", "td", "a", "ul", "li", "strong", "pre", "em"}
    for page in pages:
        rendered = markdown.markdown(page.read_text(encoding="utf-8"), extensions=["tables", "fenced_code"])
        parser = Collect()
        parser.feed(rendered)
        for tag, attrs in parser.tags:
            assert tag in allowed, (page.name, tag, rendered)
            for name, value in attrs:
                assert not name.startswith("on"), (page.name, name)
                if name in ("href", "src"):
                    cleaned = "".join(ch for ch in (value or "") if ord(ch) > 0x20).lower()
                    assert cleaned.startswith(("https:", "http:", "mailto:")) or ":" not in cleaned.split("/")[0], (page.name, value)
    text = "".join(page.read_text(encoding="utf-8") for page in pages)
    assert "https://example.nl" in text  # a safe link stays a link


def test_lint_text_output_shows_control_characters_escaped(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    text = catalog_text().replace("title: Thing happened", 'title: "Thing \\e[2J\\e]0;pwned\\a \\u202e happened"')
    text = text.replace("catalog: test-catalog", 'catalog: "Bad\\e[31mId"')
    (catalog / "c.yaml").write_text(text, encoding="utf-8")
    result = run_evcat("lint", str(catalog), "--no-cache")
    assert result.returncode == 1
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\u202e" not in result.stdout
    assert "\\x1b" in result.stdout


def test_docs_grow_linearly_with_the_number_of_catalogs(tmp_path: Path) -> None:
    from generator.commands.lint import lint
    from generator.render import docs

    def size(count: int) -> int:
        catalog = tmp_path / f"catalogs-{count}"
        catalog.mkdir()
        for number in range(count):
            text = catalog_text(catalog_id=f"cat-{number}").replace("nl.test.thing-happened", f"nl.test.thing{number}-happened")
            (catalog / f"c{number}.yaml").write_text(text, encoding="utf-8")
        files = docs.render(lint(str(catalog)).catalog_set)
        return sum(len(content) for name, content in files.items() if name.endswith(".html") and "index" not in name)

    small_size, large_size = size(60), size(240)
    assert large_size < 4.5 * small_size, (small_size, large_size)  # 4x the catalogs: about 4x the pages, not 16x


# --- the generated package: hostile input ------------------------------------------------------

_RUNTIME_PROBE = r'''
import json, sys
from pydantic import ValidationError
import meter_data as package
from meter_data import EventError, parse_event, parse_batch, from_http, from_http_batch

good = {"specversion": "1.0", "id": "x", "source": "urn:ean13:8716859000003:cmr", "type": "mdm.meter.removed",
        "time": "2024-01-01T00:00:00.000000Z", "subject": "871685900000000018", "gridoperator": "8716871000002"}
deep = "[" * 3000 + "]" * 3000
cases = {
    "a number": lambda: parse_event("123"),
    "null": lambda: parse_event("null"),
    "a list": lambda: parse_event("[1, 2]"),
    "nested 3,000 deep": lambda: parse_event('{"type": "mdm.meter.removed", "x": ' + deep + "}"),
    "bytes not UTF-8": lambda: parse_event(b"\xff\xfe"),
    "type not a string": lambda: parse_event(json.dumps({**good, "type": ["mdm.meter.removed"]})),
    "type a dict": lambda: parse_event({**good, "type": {"a": 1}}),
    "dataversion a list": lambda: parse_event({**good, "dataversion": [1]}),
    "a batch of numbers": lambda: parse_batch("[1, 2, 3]"),
    "a batch not a list": lambda: parse_batch('{"a": 1}'),
    "a batch nested deep": lambda: parse_batch(deep),
    "NaN": lambda: parse_event('{"type": "mdm.meter.removed", "x": NaN}'),
    "huge integer": lambda: parse_event('{"type": "mdm.meter.removed", "x": ' + "9" * 5000 + "}"),
    "headers not strings": lambda: from_http({"ce-type": 5, "ce-specversion": None}, b""),
    "header pairs broken": lambda: from_http([("content-type",)], b"{}"),
    "body a number": lambda: from_http({"content-type": "application/cloudevents+json"}, 5),
    "body nested deep": lambda: from_http({"content-type": "application/cloudevents+json"}, deep),
    "batch body deep": lambda: from_http_batch({"content-type": "application/cloudevents-batch+json"}, deep),
    "content-type odd": lambda: from_http({"content-type": "\x00;;=="}, b"{}"),
}
bad = []
for name, case in cases.items():
    try:
        case()
    except (EventError, ValidationError):
        pass
    except BaseException as error:
        bad.append(f"{name}: {type(error).__name__}: {str(error)[:80]}")
print(json.dumps(bad))
'''


@pytest.fixture(scope="module")
def normo_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("package")
    result = run_evcat("generate", str(ROOT / "catalog"), "-o", str(out), "--no-cache", "--only", "python")
    assert result.returncode == 0, result.stderr
    return out / "python"


def test_the_generated_package_raises_only_its_documented_errors(normo_package: Path) -> None:
    import json

    run = subprocess.run([sys.executable, "-c", _RUNTIME_PROBE], cwd=normo_package, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []


def test_the_event_limit_stops_reading_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.commands import lint as lint_module
    from generator.engine import cache as cache_module

    catalog = tmp_path / "catalog"
    catalog.mkdir()
    for number in range(20):
        text = catalog_text(catalog_id=f"cat-{number}").replace("nl.test.thing-happened", f"nl.test.thing{number}-happened")
        (catalog / f"c{number:02}.yaml").write_text(text, encoding="utf-8")
    parsed: list[str] = []
    real = cache_module.load_bytes

    def counting(raw: bytes, display: str, **options: Any) -> Any:
        parsed.append(display)
        return real(raw, display, **options)

    monkeypatch.setattr(cache_module, "load_bytes", counting)
    monkeypatch.setattr(cache_module, "MAX_EVENTS", 5)  # where reading stops
    monkeypatch.setattr(lint_module, "MAX_EVENTS", 5)  # where the limit is reported
    result = lint_module.lint(str(catalog))
    assert any("more than 5 event types" in d.message for d in result.diagnostics)
    assert len(parsed) == 6, parsed  # the sixth file passes the limit: the other 14 are never parsed
    assert len(result.diagnostics) == 1, result.diagnostics


# --- the cache's key from the environment (issue 30) ------------------------------------------


@pytest.fixture
def fresh_key(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``store._secret`` is read once per process: forgotten around the test."""
    from generator.engine import store

    monkeypatch.delenv("EVCAT_CACHE_KEY", raising=False)
    monkeypatch.delenv("EVCAT_CACHE_SECRET", raising=False)
    store._secret.cache_clear()
    yield store
    monkeypatch.undo()
    store._secret.cache_clear()


def test_a_cache_key_from_the_environment_refuses_entries_sealed_under_another(
        small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_key: Any) -> None:
    """A CI cache holding ``~/.cache`` beside ``.evcat-cache`` hands whoever
    poisons it the key file and the entries. With ``EVCAT_CACHE_KEY`` (a CI
    secret) the key file is neither read nor made, and entries sealed under
    any other key (the file's, or another secret) are recomputed: the output
    is a cold run's, without a traceback."""
    from generator.commands.generate import generate
    from generator.engine.config import RunConfig

    home = tmp_path / "home"  # the user's cache home, which a careless CI cache would carry along
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    cache = tmp_path / "cache"
    kinds = KINDS.split(",")

    def run(key: str | None) -> tuple[int, bool, dict[str, bytes]]:
        if key is None:
            monkeypatch.delenv("EVCAT_CACHE_KEY", raising=False)
        else:
            monkeypatch.setenv("EVCAT_CACHE_KEY", key)
        fresh_key._secret.cache_clear()
        out = tmp_path / f"out-{key}"
        result = generate(str(small), str(out), kinds, RunConfig(cache_dir=str(cache), jobs=1))
        assert result.stats is not None and result.report is not None
        return result.stats.cached, result.stats.replayed, snapshot(out)

    cached, replayed, cold = run(None)
    assert (cached, replayed) == (0, False) and (home / "evcat" / "cache-secret").is_file()
    assert run(None)[1], "the cache works under the file's key"
    first, second = "0123456789abcdef" * 4, "fedcba9876543210" * 4
    cached, replayed, output = run(first)
    assert (cached, replayed) == (0, False), "entries sealed with the key file are trusted under EVCAT_CACHE_KEY"
    assert output == cold
    shutil.rmtree(home)
    assert run(first)[1], "the cache works under EVCAT_CACHE_KEY"
    assert not home.exists(), "EVCAT_CACHE_KEY set: the key file is neither read nor made"
    cached, replayed, output = run(second)
    assert (cached, replayed, output) == (0, False, cold)
    assert run(second)[1]  # and reads what it sealed itself


def test_a_weak_cache_key_is_a_usage_error(small: Path, tmp_path: Path) -> None:
    """``EVCAT_CACHE_KEY`` has at least 32 characters (``openssl rand -hex 32``
    gives 64); a shorter one would be guessed, so evcat refuses to run with it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVCAT_CACHE_KEY": "secret"}
    result = subprocess.run(check=False, args=[sys.executable, "-m", "generator", "generate", str(small), "-o", str(tmp_path / "out"),
                             "--cache-dir", str(tmp_path / "cache")], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2
    assert "EVCAT_CACHE_KEY" in result.stderr and "at least 32 characters" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()
    # Without a cache the key is not used: nothing to refuse.
    no_cache = subprocess.run(check=False, args=[sys.executable, "-m", "generator", "lint", str(small), "--no-cache"],
                              capture_output=True, text=True, env=env, timeout=120)
    assert no_cache.returncode == 0, no_cache.stderr
