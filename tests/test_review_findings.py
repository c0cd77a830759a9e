"""Regression tests for a review of the whole change (each failed before its fix)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from generator.commands.lint import lint
from generator.commands.serve import CatalogJudge

from .conftest import ROOT, run_evcat

STRUCTURED = {"content-type": "application/cloudevents+json"}


@pytest.fixture(scope="module")
def judge() -> CatalogJudge:
    return CatalogJudge(lint(str(ROOT / "catalog")).catalog_set)


def _removed(extra: str) -> bytes:
    return ('{"specversion":"1.0","type":"mdm.meter.removed","id":"1","source":"urn:ean13:8716859000003:cmr",'
            '"time":"2024-01-01T00:00:00.000000Z","zz":' + extra + "}").encode()


@pytest.mark.parametrize("extra", ["NaN", "Infinity", "1e400", '"\\ud800"', "[" * 200 + "]" * 200, str(2**70)])
def test_serve_reads_events_as_validate_does(judge: CatalogJudge, extra: str) -> None:
    """NaN, Infinity, 1e400, lone surrogates, deep nesting and integers beyond
    64 bits: evcat validate refuses them, so does evcat serve."""
    (judged,) = judge(STRUCTURED, _removed(extra))
    assert not judged.valid, extra


def test_serve_types_integer_headers_by_ascii_digits_only(judge: CatalogJudge) -> None:
    from generator.commands.serve import binary_to_structured

    zaken = lint(str(ROOT / "catalog")).catalog_set
    event = next(e for c in zaken.catalogs for e in c.events if any(x.type == "Integer" for x in e.extensions))
    name = next(x.name for x in event.extensions if x.type == "Integer")
    headers = {"ce-specversion": "1.0", "ce-type": event.type, "ce-id": "1", "ce-source": event.source,
               "ce-dataversion": event.dataversion or "", f"ce-{name}": "%D9%A1"}  # Arabic-Indic digit one
    structured = binary_to_structured(headers, b"", judge.checker)
    assert structured[name] == "\u0661"  # not read as the integer 1: the checker then refuses it


@pytest.mark.parametrize("manifest", ['{"files": {"python": [1]}}', '[["a"]]', "null", '{"files": [1]}'])
def test_a_malformed_manifest_is_no_crash(tmp_path: Path, manifest: str) -> None:
    out = tmp_path / "out"
    assert run_evcat("generate", str(ROOT / "catalog"), "-o", str(out), "--only", "jsonschema").returncode == 0
    (out / ".evcat-manifest.json").write_text(manifest, encoding="utf-8")
    result = run_evcat("generate", str(ROOT / "catalog"), "-o", str(out), "--only", "jsonschema")
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr


def test_git_file_names_that_are_not_utf8_are_no_crash(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    (repository / "cat").mkdir(parents=True)
    shutil_source = ROOT / "catalog" / "normo" / "meter-data.yaml"
    (repository / "cat" / "meter-data.yaml").write_bytes(shutil_source.read_bytes())
    (repository / "cat" / "x\udcff.txt".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")).write_bytes(b"x")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.nl", "-C", str(repository)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    result = run_evcat("diff", "git:HEAD:cat", str(repository / "cat"), cwd=repository)
    assert result.returncode in (0, 1), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_the_receiver_measures_a_batch_event_in_utf8(tmp_path: Path) -> None:
    """An event of about 100 kB on the wire (50,000 'é') is under Het Normo's
    256 kB, in a batch as in structured mode."""
    from generator.commands.generate import render

    for relative, content in render(lint(str(ROOT / "catalog")).catalog_set, ["python"])["python"].items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    sys.path.insert(0, str(tmp_path / "python"))
    try:
        from meter_data.webhook import Receiver

        receiver = Receiver()
        event = json.loads(_removed('"' + "\u00e9" * 50_000 + '"'))
        judged = receiver.judge({"content-type": "application/cloudevents-batch+json"},
                                json.dumps([event], ensure_ascii=False).encode("utf-8"))
        assert all(not [f for f in j.findings if f.rule == "WEBHOOK-EVENT-SIZE"] for j in judged), judged
    finally:
        sys.path.remove(str(tmp_path / "python"))
        for name in [n for n in sys.modules if n == "meter_data" or n.startswith("meter_data.")]:
            del sys.modules[name]
