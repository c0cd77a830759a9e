"""The catalog's ``license`` (issue 31; contract §1: SPDX id as ``name``, ``url``):
read and checked at its node, carried by the model into AsyncAPI
``info.license``, the docs and the EventCatalog export; and Spectral's
asyncapi ruleset without a warning on the shipped catalogs' documents."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from generator.commands.lint import lint

from .conftest import ROOT, run_evcat

LICENSE_LINE = "license: {name: EUPL-1.2, url: 'https://spdx.org/licenses/EUPL-1.2.html'}\n"
EUPL = {"name": "EUPL-1.2", "url": "https://spdx.org/licenses/EUPL-1.2.html"}


def _catalog(tmp_path: Path, license_text: str) -> Path:
    source = (ROOT / "catalog" / "normo" / "meter-data.yaml").read_text(encoding="utf-8")
    lines = [line for line in source.splitlines(keepends=True) if not line.startswith("license:")]
    at = next(i for i, line in enumerate(lines) if line.startswith("defaults:"))
    directory = tmp_path / "catalog"
    directory.mkdir()
    (directory / "meter-data.yaml").write_text("".join(lines[:at]) + license_text + "".join(lines[at:]), encoding="utf-8")
    return directory


def test_a_license_is_accepted_and_flows_to_asyncapi_docs_and_eventcatalog(tmp_path: Path) -> None:
    directory = _catalog(tmp_path, LICENSE_LINE)
    result = lint(str(directory))
    assert [d for d in result.diagnostics if d.severity.name.lower() == "error"] == []
    catalog = result.catalog_set.catalogs[0]
    assert (catalog.license.name, catalog.license.url) == (EUPL["name"], EUPL["url"])
    out = tmp_path / "out"
    run = run_evcat("generate", str(directory), "-o", str(out), "--only", "asyncapi,docs,eventcatalog", "--no-cache")
    assert run.returncode == 0, run.stderr
    document = yaml.safe_load((out / "asyncapi" / "meter-data.yaml").read_text(encoding="utf-8"))
    assert document["info"]["license"] == EUPL
    for service in sorted((out / "asyncapi").glob("services/*.yaml")):
        assert yaml.safe_load(service.read_text(encoding="utf-8"))["info"]["license"] == EUPL, service
    docs = "".join(path.read_text(encoding="utf-8") for path in sorted((out / "docs").rglob("*.html")))
    assert 'href="https://spdx.org/licenses/EUPL-1.2.html"' in docs and "EUPL-1.2" in docs
    exported = [path for path in (out / "eventcatalog").rglob("*") if path.is_file() and "node_modules" not in path.parts]
    carrying = [path for path in exported if "https://spdx.org/licenses/EUPL-1.2.html" in path.read_text(encoding="utf-8")]
    assert carrying, "the EventCatalog export names the licence"


def test_no_license_no_info_license(tmp_path: Path) -> None:
    directory = _catalog(tmp_path, "")
    out = tmp_path / "out"
    run = run_evcat("generate", str(directory), "-o", str(out), "--only", "asyncapi", "--no-cache")
    assert run.returncode == 0, run.stderr
    assert "license" not in yaml.safe_load((out / "asyncapi" / "meter-data.yaml").read_text(encoding="utf-8"))["info"]


def test_a_wrong_license_is_a_located_error(tmp_path: Path) -> None:
    for text, expected in (
        ("license: EUPL-1.2\n", "license"),  # a string, not a mapping
        ("license: {url: 'https://spdx.org/licenses/EUPL-1.2.html'}\n", "name"),  # name is required
        ("license: {name: EUPL-1.2, link: 'https://x.example'}\n", "link"),  # unknown key
        ("license: {name: EUPL-1.2, url: not a uri}\n", "url"),
    ):
        target = tmp_path / str(len(list(tmp_path.iterdir())))
        target.mkdir()
        directory = _catalog(target, text)
        run = run_evcat("lint", str(directory))
        assert run.returncode == 1, (text, run.stdout)
        line = text.split(":", 1)[0]
        errors = [row for row in run.stdout.splitlines() if " error " in row]
        assert errors and any(expected in row for row in errors), (text, run.stdout)
        assert all("Traceback" not in stream for stream in (run.stdout, run.stderr)), line
        position = (directory / "meter-data.yaml").read_text(encoding="utf-8").splitlines().index(text.rstrip("\n")) + 1
        assert any(f"meter-data.yaml:{position}:" in row for row in errors), (text, run.stdout)


def test_the_shipped_catalogs_carry_a_license() -> None:
    for name in ("nlgov", "normo"):
        for catalog in lint(str(ROOT / "catalog" / name)).catalog_set.catalogs:
            assert catalog.license is not None and catalog.license.name == "EUPL-1.2", catalog.id


def test_spectral_asyncapi_ruleset_no_error_no_warning_on_the_shipped_catalogs(node_tools: Path, tmp_path: Path) -> None:
    """Spectral's asyncapi ruleset: 0 errors and 0 warnings on every AsyncAPI
    document of the shipped catalogs (the catalogs' and the services')."""
    out = tmp_path / "out"
    paths: list[Path] = []
    for name in ("nlgov", "normo"):
        run = run_evcat("generate", str(ROOT / "catalog" / name), "-o", str(out / name), "--only", "asyncapi", "--no-cache")
        assert run.returncode == 0, run.stderr
        paths.extend(sorted((out / name / "asyncapi").rglob("*.yaml")))
    assert len(paths) >= 3
    ruleset = tmp_path / ".spectral.yaml"
    ruleset.write_text('extends: ["spectral:asyncapi"]\n')
    run = subprocess.run(
        [str(node_tools / "node_modules" / ".bin" / "spectral"), "lint", "-r", str(ruleset), "-f", "json", *map(str, paths)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    findings = json.loads(run.stdout or "[]")
    # Spectral severities: 0 error, 1 warning, 2 information, 3 hint.
    assert [(Path(f["source"]).name, f["code"], f["message"]) for f in findings if f["severity"] <= 1] == []
