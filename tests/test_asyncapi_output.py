"""The AsyncAPI documents, checked by the official parser and by Spectral."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from generator.generate import render
from generator.lint import lint

from .conftest import ROOT


def generated(tmp_path: Path, catalog: Path = ROOT / "catalog") -> list[Path]:
    result = lint(str(catalog))
    assert not result.has_errors
    files = render(result.catalog_set, ["asyncapi"])["asyncapi"]
    paths = []
    for relative, content in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        paths.append(path)
    return sorted(paths)


ALL_CATALOGS = [ROOT / "catalog", ROOT / "tests" / "catalogs" / "hostile"]


def test_official_parser_zero_errors_and_warnings(node_tools: Path, tmp_path: Path) -> None:
    paths = [path for catalog in ALL_CATALOGS for path in generated(tmp_path, catalog)]
    run = subprocess.run(
        ["node", str(node_tools / "validate-asyncapi.mjs"), *map(str, paths)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    results = json.loads(run.stdout)
    catalogs = [c for directory in ALL_CATALOGS for c in lint(str(directory)).catalog_set.catalogs]
    for path in paths:
        report = results[str(path)]
        # Spectral severities: 0 error, 1 warning, 2 information, 3 hint.
        assert report["parsed"], report["diagnostics"]
        assert [d for d in report["diagnostics"] if d["severity"] <= 1] == []
        catalog = next(c for c in catalogs if path.stem == c.id)
        assert report["messages"] == len(catalog.events)
        assert report["channels"] == report["operations"] == len({e.type for e in catalog.events})


def test_spectral_asyncapi_ruleset_zero_errors(node_tools: Path, tmp_path: Path) -> None:
    paths = [path for catalog in ALL_CATALOGS for path in generated(tmp_path, catalog)]
    ruleset = tmp_path / ".spectral.yaml"
    ruleset.write_text('extends: ["spectral:asyncapi"]\n')
    run = subprocess.run(
        [str(node_tools / "node_modules" / ".bin" / "spectral"), "lint", "-r", str(ruleset), "-f", "json", *map(str, paths)],
        capture_output=True, text=True, timeout=300,
    )
    findings = json.loads(run.stdout or "[]")
    assert [f for f in findings if f["severity"] == 0] == [], run.stdout[-3000:]


def test_document_shape(tmp_path: Path) -> None:
    documents = {path.stem: yaml.safe_load(path.read_text()) for path in generated(tmp_path)}
    meter = documents["meter-data"]
    assert meter["asyncapi"] == "3.1.0"
    assert meter["info"]["title"] == "Meter data events" and meter["info"]["version"] == "2.3.0"
    assert meter["servers"]["production"]["host"] == "events.edsn.example.nl"
    channel = meter["channels"]["mdm.meter.updated"]
    assert sorted(channel["messages"]) == ["mdm.meter.updated.1.0.1", "mdm.meter.updated.1.2.0", "mdm.meter.updated.2.0.0"]
    operation = meter["operations"]["send.mdm.meter.updated"]
    assert operation["action"] == "send"
    assert {"$ref": "#/channels/mdm.meter.updated/messages/mdm.meter.updated.2.0.0"} in operation["messages"]
    message = meter["components"]["messages"]["mdm.meter.updated.2.0.0"]
    assert message["contentType"] == "application/cloudevents+json"
    assert message["x-eventcatalog-message-type"] == "event"
    assert message["x-eventcatalog-message-version"] == "2.0.0"
    assert message["payload"]["properties"]["type"] == {"const": "mdm.meter.updated"}
    assert message["payload"]["properties"]["data"]["properties"]["meter"] == {"$ref": "#/components/schemas/Meter"}
    assert message["examples"][0]["payload"]["data"]["meter"]["meterId"] == "E00000000035671400"
    trait = meter["components"]["messageTraits"]["mdm.meter.updated.2.0.0.binary"]
    assert "ce-gridoperator" in trait["headers"]["required"]
    # Recursive shared schema stays a local reference, never remote.
    node = meter["components"]["schemas"]["AllocationNode"]
    assert node["properties"]["children"]["items"] == {"$ref": "#/components/schemas/AllocationNode"}
    text = json.dumps(documents)
    assert '"$ref": "http' not in text and "$defs" not in text


def test_hostile_text_survives_yaml_exactly(tmp_path: Path) -> None:
    [path] = generated(tmp_path, ROOT / "tests" / "catalogs" / "hostile")
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    catalog = lint(str(ROOT / "tests" / "catalogs" / "hostile")).catalog_set.catalogs[0]
    assert document["info"]["title"] == catalog.title
    assert document["info"]["description"] == catalog.description
    kebab = document["components"]["messages"]["io.example.kebab-case-type.v2.notification"]
    assert kebab["title"] == "A notification </script><script>alert(1)</script>"
    assert kebab["x-deprecated"] == "Use \"something else\"; see <a href='x'>docs</a>."
