"""The lint command line: formats, exit codes, overrides, cache, the format schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml

from generator.engine.config import RunConfig
from generator.cli import main
from generator.catalog_format import catalog_json_schema
from generator.commands.lint import lint

from .conftest import ROOT, catalog_text, run_evcat

BAD = catalog_text(events="  - type: nl.test.thing_happened\n    title: Thing\n    description: D.\n").replace(
    "producer:", "rules:\n  PAY-DESCRIPTION: off\nproducer:"
)


@pytest.fixture
def bad_dir(tmp_path: Path) -> Path:
    (tmp_path / "a.yaml").write_text(BAD)
    (tmp_path / "b.yaml").write_text(catalog_text(catalog_id="other", source="urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66"))
    return tmp_path


def lint_output(directory: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["lint", str(directory), "--no-cache", "--format", fmt])
    return code, capsys.readouterr().out


def test_text_format_sorted_with_summary(bad_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = lint_output(bad_dir, "text", capsys)
    lines = out.strip().splitlines()
    assert code == 1
    assert lines[-1] == "1 error, 1 warning in 2 files"
    assert "a.yaml:15:11: error NLGOV-TYPE-RDNS" in lines[0]
    assert "b.yaml:6:11: warning NLGOV-SOURCE-URN" in lines[1]


def test_warnings_only_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "b.yaml").write_text(catalog_text(source="urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66"))
    code, out = lint_output(tmp_path, "text", capsys)
    assert code == 0 and "warning NLGOV-SOURCE-URN" in out


def test_json_format(bad_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = lint_output(bad_dir, "json", capsys)
    report = json.loads(out)
    assert report["summary"] == "1 error, 1 warning in 2 files"
    first = report["diagnostics"][0]
    assert first["rule"] == "NLGOV-TYPE-RDNS" and first["severity"] == "error" and first["line"] == 15


def test_sarif_format(bad_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = lint_output(bad_dir, "sarif", capsys)
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["NLGOV-TYPE-RDNS", "NLGOV-SOURCE-URN"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    assert results[0]["level"] == "error" and results[1]["level"] == "warning"


def test_github_format(bad_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = lint_output(bad_dir, "github", capsys)
    first = out.splitlines()[0]
    assert first.startswith("::error file=") and ",line=15,col=11,title=NLGOV-TYPE-RDNS::" in first


def test_rule_overrides(tmp_path: Path) -> None:
    text = catalog_text(source="urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66")
    (tmp_path / "c.yaml").write_text(text.replace("producer:", "rules:\n  NLGOV-SOURCE-URN: error\nproducer:"))
    diagnostics = lint(str(tmp_path)).diagnostics
    assert [(d.rule, str(d.severity)) for d in diagnostics] == [("NLGOV-SOURCE-URN", "error")]
    (tmp_path / "c.yaml").write_text(text.replace("producer:", "rules:\n  NLGOV-SOURCE-URN: off\nproducer:"))
    assert lint(str(tmp_path)).diagnostics == []
    (tmp_path / "c.yaml").write_text(text.replace("producer:", "rules:\n  CAT-REF: off\nproducer:"))
    assert [d.rule for d in lint(str(tmp_path)).diagnostics] == ["CAT-TYPE", "NLGOV-SOURCE-URN"]


def test_warm_cache_gives_the_same_diagnostics(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", catalog)
    (catalog / "bad.yaml").write_text(BAD + "    examples:\n      - {data: {thingId: 5}}\n")
    cache = tmp_path / "cache"
    cold = lint(str(catalog), RunConfig(cache_dir=str(cache))).diagnostics
    assert any(d.rule == "CAT-EXAMPLE" for d in cold)
    assert (cache / "checks.marshal").exists() and any((cache / "parsed").rglob("*.marshal"))
    warm = lint(str(catalog), RunConfig(cache_dir=str(cache))).diagnostics
    assert warm == cold
    uncached = lint(str(catalog)).diagnostics
    assert uncached == cold
    # A corrupt cache is recomputed, never trusted.
    for entry in (cache / "parsed").rglob("*.marshal"):
        entry.write_bytes(b"garbage")
    (cache / "checks.marshal").write_bytes(b"\x00")
    assert lint(str(catalog), RunConfig(cache_dir=str(cache))).diagnostics == cold


def test_change_in_a_referenced_file_reaches_the_memoised_example_check(tmp_path: Path) -> None:
    shared = catalog_text(catalog_id="shared").replace("events:", "schemas:\n  Code: {type: string, description: A code.}\nevents:")
    user = catalog_text(catalog_id="user", events=(
        "  - type: nl.test.code-set\n    dataversion: 1.0.0\n    title: Code set\n    description: D.\n"
        "    data:\n      type: object\n      description: P.\n      properties:\n"
        "        code: {$ref: 'shared.yaml#/schemas/Code'}\n    examples:\n      - data: {code: abc}\n"
    ))
    (tmp_path / "shared.yaml").write_text(shared)
    (tmp_path / "user.yaml").write_text(user)
    cache = tmp_path / ".cache"
    assert lint(str(tmp_path), RunConfig(cache_dir=str(cache))).diagnostics == []
    (tmp_path / "shared.yaml").write_text(shared.replace("{type: string, description: A code.}", "{type: integer, description: A code.}"))
    assert [d.rule for d in lint(str(tmp_path), RunConfig(cache_dir=str(cache))).diagnostics] == ["CAT-EXAMPLE"]


def test_warm_cache_keeps_a_payload_that_breaks_the_meta_schema(tmp_path: Path) -> None:
    """The memo of the compile check keeps that the payload did not compile, so
    the warm run reports the meta-schema error too (it once crashed here)."""
    broken = catalog_text(events=(
        "  - type: nl.test.thing-happened\n    dataversion: 1.0.0\n    title: Thing\n    description: D.\n"
        "    data:\n      type: object\n      description: P.\n      minProperties: -1\n"
        "    examples:\n      - data: {}\n"
    ))
    (tmp_path / "c.yaml").write_text(broken)
    cache = tmp_path / ".cache"
    cold = lint(str(tmp_path), RunConfig(cache_dir=str(cache))).diagnostics
    assert [(d.rule, d.location.line) for d in cold] == [("CAT-SCHEMA", 20)]
    assert lint(str(tmp_path), RunConfig(cache_dir=str(cache))).diagnostics == cold


def test_format_schema_is_shipped_and_current() -> None:
    shipped = json.loads((ROOT / "generator" / "data" / "catalog.schema.json").read_text())
    assert shipped == catalog_json_schema(), "regenerate: python -m generator schema > generator/data/catalog.schema.json"
    result = run_evcat("schema")
    assert result.returncode == 0 and json.loads(result.stdout) == shipped


def test_shipped_catalogs_satisfy_the_format_schema() -> None:
    """The editor schema, checked by the independent `jsonschema` package, agrees with evcat."""
    schema = catalog_json_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    files = sorted((ROOT / "catalog").rglob("*.yaml"))
    assert files
    for path in files:
        errors = list(validator.iter_errors(yaml.safe_load(path.read_text())))
        assert not errors, (path, [e.message for e in errors])
    broken = yaml.safe_load(files[0].read_text())
    broken["evnets"] = broken.pop("events")
    assert not validator.is_valid(broken)


def test_rules_command_lists_every_rule() -> None:
    result = run_evcat("rules")
    assert result.returncode == 0
    assert "NORMO-TYPE-PAST-TENSE" in result.stdout and "CE-SIZE" in result.stdout
