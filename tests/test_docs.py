"""The documentation site: complete, linked, inert, and working in a real browser."""

from __future__ import annotations

import html
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from textwrap import dedent
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from generator.commands.generate import RENDERERS, render
from generator.commands.lint import lint
from generator.naming import safe_file_name
from generator.render.docs import catalog_path, schema_path

from .conftest import ROOT

SOURCES = [ROOT / "catalog", ROOT / "tests" / "catalogs" / "hostile", ROOT / "tests" / "catalogs" / "services"]
ARTIFACTS = ROOT / "tests" / "artifacts"


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.sources: list[str] = []
        self.ids: set[str] = set()
        self.scripts: list[dict[str, str | None]] = []
        self.fields: list[str] = []
        self.text: list[str] = []
        self._in_script = False
        self.svg_links = 0  # links inside an inline SVG
        self._svg_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if attributes.get("href"):
            self.links.append(attributes["href"] or "")
        if attributes.get("src"):
            self.sources.append(attributes["src"] or "")
        if attributes.get("id"):
            self.ids.add(attributes["id"] or "")
        if attributes.get("data-field"):
            self.fields.append(attributes["data-field"] or "")
        if tag == "script":
            self.scripts.append(attributes)
        if tag == "svg":
            self._svg_depth += 1
        if tag == "a" and self._svg_depth and attributes.get("href"):
            self.svg_links += 1
        for name in attributes:
            assert not name.startswith("on"), f"event handler attribute {name}"

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._svg_depth -= 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Any]:
    """Every output of every test catalog, so links to schemas can be followed."""
    sites = {}
    for source in SOURCES:
        out = tmp_path_factory.mktemp(source.name)
        result = lint(str(source))
        for files in render(result.catalog_set, list(RENDERERS)).values():
            for relative, content in files.items():
                path = out / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
        sites[out] = result.catalog_set
    return sites


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _property_names(schema: Any, shared: Any, seen: frozenset[str] = frozenset()) -> set[str]:
    names: set[str] = set()
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref[len("#/$defs/"):]
            if name not in seen:
                names |= _property_names(shared[name].schema, shared, seen | {name})
        for name, child in (schema.get("properties") or {}).items():
            names.add(name)
            names |= _property_names(child, shared, seen)
        if "items" in schema:
            names |= _property_names(schema["items"], shared, seen)
    return names


def _page_of(out: Path, catalog_id: str, event_type: str) -> Path:
    return out / "docs" / "events" / safe_file_name(catalog_id) / f"{safe_file_name(event_type)}.html"


def test_every_event_and_payload_field_appears(site: dict[Path, Any]) -> None:
    for out, catalog_set in site.items():
        for event in catalog_set.events:
            catalog_text = "".join(parse(out / "docs" / catalog_path(event.catalog_id)).text)
            assert event.type in catalog_text
            page = parse(_page_of(out, event.catalog_id, event.type))
            assert event.type in "".join(page.text)
            assert (f"v{event.dataversion}" if event.dataversion else "notification") in page.ids
            if event.payload is not None:
                expected = _property_names(event.payload.schema, catalog_set.schemas)
                assert expected <= set(page.fields), expected - set(page.fields)


def _enum_values(schema: Any, shared: Any, seen: frozenset[str] = frozenset()) -> list[Any]:
    """Every enum value reachable from a schema, through $ref too."""
    values: list[Any] = []
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] not in seen:
            values += _enum_values(shared[ref[8:]].schema, shared, seen | {ref[8:]})
        values += schema.get("enum", [])
        for child in [*(schema.get("properties") or {}).values(), schema.get("items")]:
            values += _enum_values(child, shared, seen)
    return values


def test_enums_through_ref_constraints_and_nullability(tmp_path: Path) -> None:
    """The issue's case: a shared enum used through `$ref` (also as array
    items) shows its values and links its schema page; bounds, formats,
    defaults and null are in the table."""
    (tmp_path / "c.yaml").write_text(dedent('''
        catalog: permits
        title: Permits
        version: 1.0.0
        profile: cloudevents
        producer: {source: urn:example:permits}
        schemas:
          Activiteit: {type: string, enum: [bouwen, slopen, kappen], description: An activity.}
        events:
          - type: nl.example.permit-requested
            dataversion: 1.0.0
            title: Permit requested
            data:
              type: object
              properties:
                activiteiten: {type: array, items: {$ref: '#/schemas/Activiteit'}, minItems: 1}
                hoofdactiviteit: {$ref: '#/schemas/Activiteit'}
                aantal: {type: integer, minimum: 1, maximum: 10, default: 1}
                opmerking: {type: [string, "null"], maxLength: 200}
                datum: {type: string, format: date}
        '''))
    result = lint(str(tmp_path))
    assert not result.has_errors, [str(d) for d in result.diagnostics]
    files = render(result.catalog_set, ["docs"])["docs"]
    page = files["docs/events/permits/nl.example.permit-requested.html"].decode()
    rows = {name: row for name, row in re.findall(r'data-field="([^"]+)">(.*?)</tr>', page)}
    texts = {name: html.unescape(re.sub(r"<[^>]+>", "", row)) for name, row in rows.items()}
    for field in ("activiteiten", "hoofdactiviteit"):
        assert '"bouwen", "slopen", "kappen"' in texts[field], texts[field]
        assert "<code>&#34;kappen&#34;</code>" in rows[field]  # each value as code: never broken, quotes straight
        assert 'href="../../schemas/Activiteit.html">Activiteit</a>' in rows[field]
    assert "array of <a" in rows["activiteiten"] and "min items 1" in texts["activiteiten"]
    rows = texts
    assert "≥ 1" in rows["aantal"] and "≤ 10" in rows["aantal"] and "default 1" in rows["aantal"]
    assert "string | null" in rows["opmerking"] and "max length 200" in rows["opmerking"]
    assert "string (date)" in rows["datum"]
    schema_page = files["docs/schemas/Activiteit.html"].decode()
    assert "nl.example.permit-requested" in schema_page and "#v1.0.0" in schema_page
    assert "<code>&#34;kappen&#34;</code>" in schema_page


def test_shared_schemas_contacts_servers_and_search_index(site: dict[Path, Any]) -> None:
    for out, catalog_set in site.items():
        index = parse(out / "docs" / "index.html")
        for name in catalog_set.schemas:
            schema_page = parse(out / "docs" / schema_path(name))
            assert name in "".join(schema_page.text)
            assert f"{schema_path(name)}" in index.links
            for event in catalog_set.events:
                if event.payload is not None and name in event.payload.uses:
                    event_page = parse(_page_of(out, event.catalog_id, event.type))
                    assert f"../../{schema_path(name)}" in event_page.links, (name, event.type)
                    anchor = f"v{event.dataversion}"
                    assert f"../events/{safe_file_name(event.catalog_id)}/{safe_file_name(event.type)}.html#{anchor}" in schema_page.links
        for catalog in catalog_set.catalogs:
            page = parse(out / "docs" / catalog_path(catalog.id))
            text = "".join(page.text)
            contact = catalog.producer.contact
            for value in (catalog.producer.source, catalog.producer.organization, *(contact and (contact.name, contact.email, contact.url) or ())):
                if value:
                    assert value in text, value
            for server in catalog.servers:
                assert server.host in text and (server.pathname or "") in text and server.name in text
            assert page.svg_links >= sum(1 + len({e.dataversion for e in catalog.events if e.type == t}) for t in {e.type for e in catalog.events})
        search = (out / "docs" / "assets" / "search-index.js").read_text()
        entries = json.loads(search.removeprefix("window.EVCAT_SEARCH_INDEX = ").rstrip().removesuffix(";"))
        fields = {name for entry in entries for name in entry["fields"]}
        for event in catalog_set.events:
            if event.payload is not None:
                assert _property_names(event.payload.schema, catalog_set.schemas) <= fields


def test_all_internal_links_resolve(site: dict[Path, Any]) -> None:
    checked = 0
    for out in site:
        for path in sorted((out / "docs").rglob("*.html")):
            page = parse(path)
            for source in page.sources:
                assert not urlsplit(source).scheme, f"{path}: loads {source}"  # offline: nothing remote is loaded
            for link in page.links:
                parts = urlsplit(link)
                if parts.scheme:  # only a producer's or a service owner's contact links out
                    assert parts.scheme in ("mailto", "https", "http") and ("/catalogs/" in str(path) or "/services/" in str(path)), link
                    continue
                target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
                assert target.exists(), f"{path.relative_to(out)}: {link} does not resolve"
                if parts.fragment and target.suffix == ".html":
                    assert parts.fragment in parse(target).ids, f"{path}: {link}: no #{parts.fragment}"
                checked += 1
    assert checked > 100


def test_html_in_descriptions_is_text_never_markup(site: dict[Path, Any]) -> None:
    out = next(o for o in site if (o / "docs" / "events" / "hostile-names").exists())
    index = parse(out / "docs" / "index.html")
    assert [script.get("src") for script in index.scripts] == ["assets/search-index.js", "assets/search.js"]
    assert '<script>alert("docs")</script>' in "".join(index.text)
    for page_path in (out / "docs").rglob("*.html"):
        page = parse(page_path)
        assert [script.get("src") for script in page.scripts] in ([], ["../../assets/docs.js"]) or page_path.name == "index.html"
    kebab = parse(out / "docs" / "events" / "hostile-names" / "io.example.kebab-case-type.v2.html")
    assert "A notification </script><script>alert(1)</script>" in "".join(kebab.text)
    assert "{% for x in y %}{{ x }}{% endfor %}" in "".join(kebab.text)
    markdown = (out / "docs" / "markdown" / "index.md").read_text()
    assert "&lt;script&gt;" in markdown and "<script>" not in markdown
    catalog_page = (out / "docs" / "catalogs" / "hostile-names.html").read_text()
    assert 'href="https://example.nl/?a=1&amp;b=%3C2%3E"' in catalog_page  # the contact URL, escaped


def test_contact_url_only_links_http(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(dedent('''
        catalog: c
        title: C
        version: 1.0.0
        profile: cloudevents
        producer: {source: urn:example:c, contact: {name: X, url: "javascript:alert(1)"}}
        events:
          - {type: io.example.x, title: X}
        '''))
    result = lint(str(tmp_path))
    assert not result.has_errors
    page = render(result.catalog_set, ["docs"])["docs"]["docs/catalogs/c.html"].decode()
    assert "javascript:alert(1)" in page and 'href="javascript' not in page


def test_markdown_copy_per_event_type(site: dict[Path, Any]) -> None:
    for out, catalog_set in site.items():
        for event in catalog_set.events:
            pages = list((out / "docs" / "markdown").rglob(f"{event.type}.md"))
            assert len(pages) == 1 and event.type in pages[0].read_text()


def _search_case(catalog_set: Any) -> tuple[str, str]:
    """A field name that is not part of any type or title, and the page of an event that has it."""
    for event in sorted(catalog_set.events, key=lambda e: (e.catalog_id, e.type)):
        if event.payload is None:
            continue
        for name in sorted(_property_names(event.payload.schema, catalog_set.schemas)):
            if all(name.lower() not in f"{e.type} {e.title}".lower() for e in catalog_set.events) and len(name) > 4:
                return name, f"events/{safe_file_name(event.catalog_id)}/{safe_file_name(event.type)}.html"
    raise AssertionError("no field name to search for")


def test_in_a_real_browser(site: dict[Path, Any], node_tools: Path, chromium: str) -> None:
    """Every enum value, field, shared schema and contact field is on the
    rendered pages; the search finds an event by a field name; no page
    scrolls sideways at 390 px, no word is broken inside at 1280 px (nor in
    a table at 390 px); the copy button copies the example."""
    ARTIFACTS.mkdir(exist_ok=True)
    for out, catalog_set in site.items():
        artifacts = ARTIFACTS / out.name.rstrip("0123456789")
        query, expected_page = _search_case(catalog_set)
        run = subprocess.run(
            ["node", str(node_tools / "browse-docs.mjs"), str(out / "docs"), str(artifacts), chromium],
            check=False, capture_output=True, text=True, timeout=600, env={"PATH": "/usr/bin:/bin", "SEARCH_QUERY": query},
        )
        assert run.returncode == 0, run.stderr[-3000:]
        report = json.loads(run.stdout)
        pages = report["pages"]
        assert pages, "no page opened"
        assert {page: info["errors"] for page, info in pages.items() if info["errors"]} == {}
        assert report["dialogs"] == []  # nothing in a description ran
        assert {page: info["broken"] for page, info in pages.items() if info["broken"]} == {}, "words broken at 1280 px"
        assert [page for page, info in pages.items() if info["overflow"]] == []
        assert {page: info for page, info in report["phone"].items() if info["overflow"] or info["broken"]} == {}
        # What people look for is on the rendered pages (innerText, so CSS did not hide it).
        for event in catalog_set.events:
            text = pages[f"events/{safe_file_name(event.catalog_id)}/{safe_file_name(event.type)}.html"]["text"]
            if event.payload is not None:
                for name in _property_names(event.payload.schema, catalog_set.schemas):
                    assert name in text, (event.type, name)
                for value in _enum_values(event.payload.schema, catalog_set.schemas):
                    assert json.dumps(value, ensure_ascii=False) in text, (event.type, value)
        for name, schema in catalog_set.schemas.items():
            text = pages[schema_path(name)]["text"]
            assert name in text and all(used.type in text for used in catalog_set.events
                                        if used.payload is not None and name in used.payload.uses)
            for value in _enum_values(schema.schema, catalog_set.schemas):
                assert json.dumps(value, ensure_ascii=False) in text, (name, value)
        for catalog in catalog_set.catalogs:
            text = pages[catalog_path(catalog.id)]["text"]
            contact = catalog.producer.contact
            assert contact is not None and (contact.name or contact.email or contact.url)
            for value in (contact.name, contact.email, contact.url, catalog.producer.organization, catalog.producer.source):
                assert value is None or value in text, value
            for server in catalog.servers:
                assert server.host in text and server.name in text
        search = report["search"]
        assert expected_page in search["found"], (query, search)
        assert search["none"] == 0 and search["noneHidden"] and "No event" in search["noneStatus"] and search["cleared"]
        copy = report["copy"]
        assert copy["visible"] and copy["state"] == "copied" and copy["same"], copy
        for shot in report["screenshots"]:
            assert Path(shot["path"]).stat().st_size > 5000 and not shot["overflow"], shot
