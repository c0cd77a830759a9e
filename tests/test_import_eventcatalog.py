"""`evcat import eventcatalog` (contract §10) on a project written by
EventCatalog's own writer (@eventcatalog/sdk, from AsyncAPI examples, by
tests/install-components.sh: tests/thirdparty.py) and on evcat's EventCatalog export."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.commands.lint import lint
from generator.importers import Options, reader

from .conftest import ROOT, run_evcat
from .thirdparty import eventcatalog_project

read_eventcatalog = reader("eventcatalog")


def front_matter(path: Path) -> dict[str, Any]:
    """The page's YAML front matter, read here independently of the importer."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    return yaml.safe_load(text[4:text.index("\n---", 4)])


def pages_of(root: Path, collection: str) -> list[tuple[Path, dict[str, Any]]]:
    """Every page of ``collection`` (events, commands, queries): the folders
    EventCatalog itself globs, ``<collection>/<name>/index.md(x)`` and
    ``<collection>/<name>/versioned/<version>/index.md(x)``."""
    found = []
    for directory, _, files in os.walk(root):
        parts = Path(directory).relative_to(root).parts
        if "index.mdx" in files or "index.md" in files:
            page = Path(directory) / ("index.mdx" if "index.mdx" in files else "index.md")
            if len(parts) >= 2 and parts[-2] == collection or len(parts) >= 4 and parts[-4] == collection and parts[-2] == "versioned":
                found.append((page, front_matter(page)))
    return found


def written_events(catalog: Path) -> list[dict[str, Any]]:
    events = []
    for file in sorted(catalog.glob("*.yaml")):
        events.extend(yaml.safe_load(file.read_text(encoding="utf-8")).get("events") or [])
    return events


@pytest.mark.real  # third-party documents (tests/thirdparty.py)
def test_the_sdk_written_project_imports_lints_and_generates(tmp_path: Path) -> None:
    project = eventcatalog_project()
    catalog = tmp_path / "catalog"
    result = run_evcat("import", "eventcatalog", str(project), "-o", str(catalog))
    assert result.returncode == 0, result.stdout + result.stderr
    expected = {(str(data["id"]), str(data["version"])) for _, data in pages_of(project, "events")}
    assert expected, project
    events = written_events(catalog)
    assert len(events) == len(expected)
    assert {(event["type"], event["dataversion"]) for event in events} == expected
    # Every event's payload is its schema file's (read here), under the same property names.
    by_key = {(event["type"], event["dataversion"]): event for event in events}
    for page, data in pages_of(project, "events"):
        schema = json.loads((page.parent / data["schemaPath"]).read_text(encoding="utf-8"))
        imported = by_key[(str(data["id"]), str(data["version"]))]["data"]
        assert set(schema.get("properties", {})) == set(imported.get("properties", {})), page
    # Every command and query page is a located note, never dropped in silence.
    output = result.stdout + result.stderr
    for collection in ("commands", "queries"):
        for page, data in pages_of(project, collection):
            shown = str(page.relative_to(ROOT))
            assert re.search(rf"{re.escape(shown)}:\d+:\d+: .*{re.escape(repr(data['id']))}", output), (shown, output[-2000:])
    linted = run_evcat("lint", str(catalog))
    assert linted.returncode == 0 and linted.stdout.strip().splitlines()[-1].startswith("0 errors"), linted.stdout[-3000:]
    generated = run_evcat("generate", str(catalog), "-o", str(tmp_path / "out"), "--only", "python,jsonschema,asyncapi")
    assert generated.returncode == 0, generated.stdout[-3000:] + generated.stderr[-3000:]
    index = yaml.safe_load((tmp_path / "out" / "jsonschema" / "index.json").read_text())
    assert len(index) == len(expected)


@pytest.mark.real  # third-party documents (tests/thirdparty.py)
def test_services_and_channels() -> None:
    project = eventcatalog_project()
    imported = read_eventcatalog([project], Options(type_prefix="org.asyncapi"))
    merged_services: dict[str, Any] = {}
    merged_channels: dict[str, Any] = {}
    for document in imported.documents.values():
        merged_services.update(document.get("services") or {})
        merged_channels.update(document.get("channels") or {})
        assert all(event["type"].startswith("org.asyncapi.") for event in document.get("events") or [])
    # the streetlights' topic: AsyncAPI's protocol name kafka-secure, as the channel page has it, is kafka
    page = front_matter(project / "channels" / "streetlights-kafka-api.lightingMeasured" / "index.mdx")
    assert page["protocols"] == ["kafka-secure"]
    assert merged_channels["streetlights-kafka-api.lightingMeasured"]["protocol"] == "kafka"
    assert merged_channels["streetlights-kafka-api.lightingMeasured"]["address"] == page["address"]
    assert merged_channels["streetlights-mqtt-api.lightTurnOn"]["protocol"] == "mqtt"
    # a WebSocket channel cannot be carried: a located note on its protocols
    wss = [note for note in imported.notes if "protocol wss" in note.message]
    assert wss and all(note.line and note.pointer == "/protocols" for note in wss)
    kafka = merged_services["streetlights-kafka-api-service"]
    assert kafka["receives"] == [{"type": "org.asyncapi.lightMeasured", "dataversion": "1.0.0",
                                  "channel": "streetlights-kafka-api.lightingMeasured"}]
    # the mqtt application sends the events the kafka one defined, on its own channels
    assert {"type": "org.asyncapi.turnOn", "dataversion": "1.0.0", "channel": "streetlights-mqtt-api.lightTurnOn"} in \
        merged_services["streetlights-mqtt-api-service"]["sends"]
    # one file per domain that holds events, every event in the file of its domain
    domains = {page.relative_to(project).parts[1] for page, _ in pages_of(project, "events")}
    assert sorted(imported.documents) == sorted(f"{domain}.yaml" for domain in domains)


def test_evcat_s_own_export_comes_back(tmp_path: Path) -> None:
    """The EventCatalog project `evcat generate` writes (render/eventcatalog.py)
    is imported to the same event types, dataversions (a notification without
    data stays one) and payload properties."""
    shipped = ROOT / "catalog" / "normo"
    exported = run_evcat("generate", str(shipped), "-o", str(tmp_path / "out"), "--only", "eventcatalog")
    assert exported.returncode == 0, exported.stderr
    catalog = tmp_path / "catalog"
    result = run_evcat("import", "eventcatalog", str(tmp_path / "out" / "eventcatalog"), "-o", str(catalog))
    assert result.returncode == 0, result.stdout + result.stderr
    original = {(e.type, e.dataversion): e for e in lint(str(shipped)).catalog_set.events}
    back = lint(str(catalog))
    assert not [d for d in back.diagnostics if d.severity.name == "ERROR"], back.diagnostics
    again = {(e.type, e.dataversion): e for e in back.catalog_set.events}
    # each event's $defs in the export are one shared schema again, under its own name
    assert set(back.catalog_set.schemas) <= set(lint(str(shipped)).catalog_set.schemas)
    assert again.keys() == original.keys()
    for key, event in original.items():
        if event.payload is None:
            assert again[key].payload is None
        else:
            assert set(again[key].payload.schema.get("properties", {})) == set(event.payload.schema.get("properties", {}))


def _page(path: Path, front: str, body: str = "Text.\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}---\n\n{body}", encoding="utf-8")


def test_what_cannot_be_carried_is_a_located_note(tmp_path: Path) -> None:
    project = tmp_path / "project"
    events = project / "domains" / "Shop" / "services" / "Api" / "events"
    _page(events / "Avro" / "index.mdx", "id: avro-event\nname: Avro\nversion: 1.0.0\nschemaPath: schema.avsc\n")
    (events / "Avro" / "schema.avsc").write_text('{"type": "record", "name": "A", "fields": []}')
    _page(events / "Escape" / "index.mdx", "id: escape\nname: Escape\nversion: 2\nschemaPath: ../../../../../../../outside.json\n")
    (tmp_path / "outside.json").write_text('{"type": "object", "properties": {"secret": {"type": "string"}}}')
    _page(events / "Fine" / "index.md", "id: fine\nname: Fine\nversion: 1.0.0\nschemaPath: schema.json\n")
    (events / "Fine" / "schema.json").write_text('{"type": "object", "properties": {"a": {"$ref": "#/definitions/A"}}, '
                                                 '"definitions": {"A": {"type": "integer"}}}')
    _page(events / "Pointed" / "index.md", "id: pointed\nname: P\nversion: 1.0.0\nschemas:\n  - path: v.json\n    format: json-schema\n"
          "  - path: v.avsc\n    format: avro\n    default: true\n")
    (events / "Pointed" / "v.json").write_text('{"type": "object", "properties": {"b": {"type": "string"}}}')
    _page(events / "Broken" / "index.md", "id: [broken\n")
    _page(project / "domains" / "Shop" / "services" / "Api" / "commands" / "Do" / "index.md", "id: do-it\nname: Do\nversion: 1.0.0\n")
    _page(project / "domains" / "Shop" / "services" / "Api" / "index.md",
          "id: api\nname: Api\nversion: 1.0.0\nsends:\n  - id: fine\n    to:\n      - id: queue\n  - id: do-it\n")
    _page(project / "channels" / "queue" / "index.md", "id: queue\nname: Q\nversion: 1.0.0\nprotocols: [sqs]\naddress: q\n")
    (tmp_path / "secret.md").write_text("---\nid: secret-event\nname: S\nversion: 1.0.0\n---\n")
    (events / "Linked").mkdir()
    (events / "Linked" / "index.md").symlink_to(tmp_path / "secret.md")  # a page that leads out of the project
    imported = read_eventcatalog([project], Options())
    (document,) = imported.documents.values()
    by_type = {event["type"]: event for event in document["events"]}
    assert set(by_type) == {"avro-event", "escape", "fine", "pointed"}
    assert by_type["pointed"]["data"] == {}  # its default schema is Avro
    assert by_type["avro-event"]["data"] == {} and by_type["escape"]["data"] == {}
    assert by_type["escape"]["dataversion"] == "2.0.0"
    assert by_type["fine"]["data"] == {"type": "object", "properties": {"a": {"$ref": "#/schemas/A"}}}
    assert document["schemas"] == {"A": {"type": "integer"}}
    assert "secret" not in repr(imported.documents)
    notes = [(Path(note.file).parent.name, note.pointer, note.line, note.message) for note in imported.notes]

    def noted(folder: str, pointer: str, line: int | None, *words: str) -> bool:
        return any((f, p) == (folder, pointer) and (line is None or l == line) and all(w in m for w in words)
                   for f, p, l, m in notes)

    assert noted("Avro", "/schemaPath", 5, "not JSON Schema")  # the page, at its schemaPath line
    assert noted("Escape", "/schemaPath", 5, "not read")
    assert any("outside the source folder" in m for _, _, _, m in notes)
    assert noted("Broken", "", 3, "front matter not read")  # where the YAML parser gives up: after the last line
    assert noted("Do", "/id", 2, "do-it", "not events")
    assert noted("Api", "/sends/1/id", 9, "do-it")
    assert noted("queue", "/protocols", 5, "sqs")
    assert noted("Linked", "", None, "page not read", "outside")
    assert noted("Pointed", "/schemas", 6, "2 schemas", "v.avsc") and noted("Pointed", "/schemas", 6, "not JSON Schema")
    assert document["services"]["api"]["sends"] == [{"type": "fine"}]  # no version: any (EventCatalog: latest)
