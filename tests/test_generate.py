"""`evcat generate`: all or nothing, only inside OUT, user files kept, --check."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from generator import writer
from generator.cli import main
from generator.naming import safe_file_name

from .conftest import ROOT, catalog_text, run_evcat


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    target = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", target)
    return target


def test_generate_then_check_is_clean_and_idempotent(catalog: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["generate", str(catalog), "-o", str(out), "--no-cache"]) == 0
    first = snapshot(out)
    mtimes = {p: p.stat().st_mtime_ns for p in out.rglob("*.json")}
    assert main(["generate", str(catalog), "-o", str(out), "--no-cache"]) == 0
    assert snapshot(out) == first
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.json")} == mtimes  # nothing rewritten
    assert main(["generate", str(catalog), "-o", str(out), "--check", "--no-cache"]) == 0


def test_check_reports_stale_output_and_writes_nothing(catalog: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    main(["generate", str(catalog), "-o", str(out), "--no-cache"])
    index = out / "jsonschema" / "index.json"
    index.write_text("[]\n")
    before = snapshot(out)
    assert main(["generate", str(catalog), "-o", str(out), "--check", "--no-cache"]) == 1
    assert snapshot(out) == before


def test_user_files_survive_and_stale_generated_files_go(catalog: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    main(["generate", str(catalog), "-o", str(out), "--no-cache"])
    (out / "jsonschema" / "NOTES.md").write_text("mine")
    (out / "README.md").write_text("mine too")
    removed = catalog / "normo" / "meter-readings.yaml"
    removed.unlink()
    assert main(["generate", str(catalog), "-o", str(out), "--no-cache"]) == 0
    assert (out / "jsonschema" / "NOTES.md").read_text() == "mine"
    assert (out / "README.md").read_text() == "mine too"
    assert not list(out.rglob("*mdm.reading.validated*"))


def test_errors_refuse_generation(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(catalog_text().replace("version: 1.0.0", "version: one"))
    out = tmp_path / "out"
    result = run_evcat("generate", str(tmp_path), "-o", str(out), "--no-cache")
    assert result.returncode == 1 and "CAT-SEMVER" in result.stdout
    assert not out.exists()


def test_failure_while_writing_leaves_out_unchanged(catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    main(["generate", str(catalog), "-o", str(out), "--no-cache"])
    before = snapshot(out)
    (catalog / "normo" / "meter-data.yaml").write_text(
        (catalog / "normo" / "meter-data.yaml").read_text().replace("title: Meter removed", "title: Meter taken away")
    )
    (catalog / "nlgov" / "brp-personen.yaml").write_text(
        (catalog / "nlgov" / "brp-personen.yaml").read_text().replace("title: Persoon overleden", "title: Overleden")
    )
    calls = {"count": 0}
    real = writer._create
    directories = sorted(p for p in out.rglob("*") if p.is_dir())

    def failing(path: str, data: bytes) -> None:
        calls["count"] += 1
        if calls["count"] == 3:  # the journal of intent is the first file written
            real(path, b"")
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(writer, "_create", failing)
    code = main(["generate", str(catalog), "-o", str(out), "--no-cache"])
    monkeypatch.setattr(writer, "_create", real)
    assert code == 1
    assert snapshot(out) == before  # no temporaries (not even empty ones) left, no half update
    assert sorted(p for p in out.rglob("*") if p.is_dir()) == directories


@pytest.mark.parametrize("relative", ["../escape.json", "/etc/passwd", "a/../../b", "a\\..\\b", ""])
def test_writer_refuses_paths_outside_out(tmp_path: Path, relative: str) -> None:
    with pytest.raises(writer.OutputError):
        writer.write(tmp_path / "out", {"jsonschema": {relative: b"x"}}, "test")
    assert not (tmp_path / "escape.json").exists()


def test_a_symlinked_directory_in_out_cannot_lead_outside(catalog: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "jsonschema").symlink_to(elsewhere, target_is_directory=True)
    code = main(["generate", str(catalog), "-o", str(out), "--no-cache"])
    assert code == 1 and "resolves outside" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []  # nothing written through the link
    assert sorted(p.name for p in out.iterdir()) == ["jsonschema"]  # and nothing else either: all or nothing


@pytest.mark.parametrize("name", ["../../x", "..\\x", "..", ".", "/abs", "a/b", "nl.ok-name.v2"])
def test_safe_file_name_never_escapes(name: str) -> None:
    safe = safe_file_name(name)
    assert "/" not in safe and "\\" not in safe and safe not in (".", "..", "") and not safe.startswith(".")


def test_only_unknown_kind_is_a_usage_error(catalog: Path, tmp_path: Path) -> None:
    assert run_evcat("generate", str(catalog), "-o", str(tmp_path / "o"), "--only", "cobol").returncode == 2


def test_committed_out_is_current() -> None:
    """out/ in the repository is exactly what `evcat generate catalog -o out` writes."""
    result = run_evcat("generate", "catalog", "-o", "out", "--check", "--no-cache")
    assert result.returncode == 0, result.stderr


@pytest.mark.own_process
def test_prefork_workers_render(catalog: Path, tmp_path: Path) -> None:
    """The workers forked before lint render the units (issue 29): the pool's
    own threads make ``worker_count`` say 1 afterwards, and rendering once
    fell back to this process alone because of it."""
    from generator.commands.generate import generate
    from generator.engine import workers
    from generator.engine.config import RunConfig

    if workers.worker_count(2, 2) < 2:
        pytest.skip("no fork here")
    result = generate(str(catalog), str(tmp_path / "out"), ["jsonschema"], RunConfig(jobs=2))
    assert result.stats is not None and result.stats.rendered > 2
    assert result.stats.workers == 2


@pytest.mark.own_process
def test_the_warm_helper_renders_new_payload_models_only(catalog: Path, tmp_path: Path) -> None:
    """On a warm cache the helper loads datamodel-code-generator while lint
    runs and renders the Python units whose payload models the models store
    lacks; a title edit renders here (bench/MECHANISMS.md). Either way the
    output is what a run without any cache writes."""
    from generator.commands.generate import generate
    from generator.engine import workers
    from generator.engine.config import RunConfig

    if workers.worker_count(2, 2) < 2:
        pytest.skip("one core here: no helper")
    config = RunConfig(jobs=2, cache_dir=str(tmp_path / "cache"))
    readings = catalog / "normo" / "meter-readings.yaml"
    original = readings.read_text(encoding="utf-8")

    def run() -> int:
        result = generate(str(catalog), str(tmp_path / "out"), ["python"], config)
        fresh = tmp_path / "fresh"
        shutil.rmtree(fresh, ignore_errors=True)
        assert main(["generate", str(catalog), "-o", str(fresh), "--only", "python", "--no-cache"]) == 0
        assert snapshot(tmp_path / "out" / "python") == snapshot(fresh / "python")
        assert result.stats is not None
        return result.stats.helped

    assert run() == 0  # cold: the workers render, no helper
    readings.write_text(original.replace("title: Meter reading validated", "title: Meter reading checked"), encoding="utf-8")
    assert run() == 0  # a title: the models store has the models
    readings.write_text(original.replace("              estimated: {type: boolean",
                                         "              note: {type: string, description: A note.}\n"
                                         "              estimated: {type: boolean"), encoding="utf-8")
    assert run() == 1  # a payload: new models, by the helper


@pytest.mark.own_process
def test_the_helper_runs_work_in_order_and_raises_what_it_raises() -> None:
    """``engine.workers.Helper``: no thread in the parent (workers may still be
    forked after it), results in order, an exception raised in the parent."""
    from generator.engine import workers

    if workers.worker_count(2, 2) < 2:
        pytest.skip("one core here: no helper")
    helper = workers.helper(lambda: None)
    assert helper is not None
    try:
        assert workers.worker_count(2, 2) == 2
        assert list(helper.imap(abs, [-3, 2, -1])) == [3, 2, 1]
        with pytest.raises(ValueError, match="invalid literal"):
            list(helper.imap(int, ["x"]))
        assert list(helper.imap(abs, [-5])) == [5]  # it goes on after an error
    finally:
        workers.stop(helper)
    assert not helper.process.is_alive()


PARENT = os.getpid()


def _echo(item: bytes) -> bytes:
    return item


def _dies_in_the_helper(item: int) -> int:
    if os.getpid() != PARENT:
        os._exit(3)
    return item * 2


def _unpicklable_in_the_helper(item: int) -> object:
    return (lambda: item) if os.getpid() != PARENT else item  # a lambda does not pickle


@pytest.mark.own_process
def test_the_helper_never_hangs_and_does_here_what_it_cannot() -> None:
    """Review findings: two large messages in flight filled the pipe both
    ways (evcat generate hung for good); a helper that died, or a result that
    would not pickle, raised a raw ConnectionResetError. Now one task is in
    flight at a time, and what the helper cannot do is done here."""
    import signal

    from generator.engine import workers

    if workers.worker_count(2, 2) < 2:
        pytest.skip("one core here: no helper")
    global PARENT
    PARENT = os.getpid()
    signal.alarm(60)  # a hang fails the test (SIGALRM ends the process), not the suite forever; no thread
    try:
        for function, items, expected in [
            (_echo, [b"x" * 3_000_000, b"y" * 3_000_000], [b"x" * 3_000_000, b"y" * 3_000_000]),
            (_dies_in_the_helper, [1, 2, 3], [2, 4, 6]),
            (_unpicklable_in_the_helper, [5], [5]),
        ]:
            helper = workers.helper(lambda: None)
            assert helper is not None
            try:
                assert list(helper.imap(function, items)) == expected, function
            finally:
                workers.stop(helper)
        helper = workers.helper(lambda: None)
        assert helper is not None
        helper.connection.close()  # the parent is done: the helper ends by itself
        helper.process.join(30)
        assert not helper.process.is_alive()
    finally:
        signal.alarm(0)
