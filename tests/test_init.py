"""`evcat init`: a starter project whose catalog lints clean under each profile."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from generator.catalog_format import catalog_json_schema
from tests.conftest import run_evcat


@pytest.mark.parametrize("profile", ["nlgov", "normo"])
def test_starter_catalog_lints_clean(tmp_path: Path, profile: str) -> None:
    project = tmp_path / "Gemeente Voorbeeld"
    done = run_evcat("init", str(project), "--profile", profile)
    assert done.returncode == 0, done.stderr
    catalog = project / "catalog" / "gemeente-voorbeeld.yaml"
    text = catalog.read_text()
    assert text.startswith("# yaml-language-server: $schema=./catalog.schema.json\n")
    assert f"profile: {profile}\n" in text
    linted = run_evcat("lint", str(project / "catalog"), "--no-cache")
    assert (linted.returncode, linted.stdout) == (0, "no problems in 1 file\n")
    schema = json.loads((project / "catalog" / "catalog.schema.json").read_text())
    assert schema == catalog_json_schema()
    jsonschema.Draft7Validator(schema).validate(yaml.safe_load(text))
    generated = run_evcat("generate", str(project / "catalog"), "-o", str(tmp_path / "out"), "--only", "jsonschema", "--no-cache")
    assert generated.returncode == 0, generated.stdout + generated.stderr


def test_gitignore_and_ci_snippets(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc")  # no final newline
    run_evcat("init", str(tmp_path))
    assert (tmp_path / ".gitignore").read_text() == "*.pyc\n.evcat-cache/\n"
    github = yaml.safe_load((tmp_path / ".github" / "workflows" / "evcat.yml").read_text())
    steps = github["jobs"]["lint"]["steps"]
    assert {"run": "evcat lint catalog --format github"} in steps
    gitlab = yaml.safe_load((tmp_path / ".gitlab-ci.yml").read_text())
    assert "evcat lint catalog" in gitlab["evcat-lint"]["script"]


def test_init_never_overwrites(tmp_path: Path) -> None:
    run_evcat("init", str(tmp_path / "p"))
    catalog = tmp_path / "p" / "catalog" / "p.yaml"
    catalog.write_text("my own work\n")
    again = run_evcat("init", str(tmp_path / "p"))
    assert again.returncode == 0
    assert catalog.read_text() == "my own work\n"
    assert "kept     " in again.stdout
    assert (tmp_path / "p" / ".gitignore").read_text().count(".evcat-cache/") == 1
