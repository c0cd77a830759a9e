"""The documentation site: complete, linked, inert, and working in a real browser."""

from __future__ import annotations

import json
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from generator.generate import RENDERERS, render
from generator.lint import lint
from generator.render.docs import type_views

from .conftest import ROOT

SOURCES = [ROOT / "catalog", ROOT / "tests" / "catalogs" / "hostile"]
ARTIFACTS = ROOT / "tests" / "artifacts"


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.scripts: list[dict[str, str | None]] = []
        self.fields: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        for name in ("href", "src"):
            if attributes.get(name):
                self.links.append(attributes[name] or "")
        if attributes.get("id"):
            self.ids.add(attributes["id"] or "")
        if attributes.get("data-field"):
            self.fields.append(attributes["data-field"] or "")
        if tag == "script":
            self.scripts.append(attributes)
        for name in attributes:
            assert not name.startswith("on"), f"event handler attribute {name}"

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


def test_every_event_and_payload_field_appears(site: dict[Path, Any]) -> None:
    for out, catalog_set in site.items():
        index = parse(out / "docs" / "index.html")
        index_text = "".join(index.text)
        for event in catalog_set.events:
            assert event.type in index_text
            page_path = next(p for p in (out / "docs" / "events").rglob("*.html") if p.stem == event.type)
            page = parse(page_path)
            assert event.type in "".join(page.text)
            assert (f"v{event.dataversion}" if event.dataversion else "notification") in page.ids
            if event.payload is not None:
                expected = _property_names(event.payload.schema, catalog_set.schemas)
                assert expected <= set(page.fields), expected - set(page.fields)


def test_all_internal_links_resolve(site: dict[Path, Any]) -> None:
    checked = 0
    for out in site:
        for path in sorted((out / "docs").rglob("*.html")):
            for link in parse(path).links:
                parts = urlsplit(link)
                assert not parts.scheme, f"{path}: external link {link}"  # offline: nothing remote
                target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
                assert target.exists(), f"{path.relative_to(out)}: {link} does not resolve"
                if parts.fragment and target.suffix == ".html":
                    assert parts.fragment in parse(target).ids, f"{path}: {link}: no #{parts.fragment}"
                checked += 1
    assert checked > 100


def test_html_in_descriptions_is_text_never_markup(site: dict[Path, Any]) -> None:
    out = next(o for o in site if (o / "docs" / "events" / "hostile-names").exists())
    index = parse(out / "docs" / "index.html")
    assert [script.get("src") for script in index.scripts] == ["assets/search.js"]
    assert '<script>alert("docs")</script>' in "".join(index.text)
    for page_path in (out / "docs" / "events").rglob("*.html"):
        page = parse(page_path)
        assert page.scripts == [], page_path
    kebab = parse(out / "docs" / "events" / "hostile-names" / "io.example.kebab-case-type.v2.html")
    assert "A notification </script><script>alert(1)</script>" in "".join(kebab.text)
    assert "{% for x in y %}{{ x }}{% endfor %}" in "".join(kebab.text)
    markdown = (out / "docs" / "markdown" / "index.md").read_text()
    assert "&lt;script&gt;" in markdown and "<script>" not in markdown


def test_markdown_copy_per_event_type(site: dict[Path, Any]) -> None:
    for out, catalog_set in site.items():
        for event in catalog_set.events:
            pages = list((out / "docs" / "markdown").rglob(f"{event.type}.md"))
            assert len(pages) == 1 and event.type in pages[0].read_text()


def test_in_a_real_browser(site: dict[Path, Any], node_tools: Path, chromium: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for out, catalog_set in site.items():
        artifacts = ARTIFACTS / out.name.rstrip("0123456789")
        query = sorted(event.type for event in catalog_set.events)[0]
        run = subprocess.run(
            ["node", str(node_tools / "browse-docs.mjs"), str(out / "docs"), str(artifacts), chromium],
            capture_output=True, text=True, timeout=600, env={"PATH": "/usr/bin:/bin", "SEARCH_QUERY": query},
        )
        assert run.returncode == 0, run.stderr[-3000:]
        report = json.loads(run.stdout)
        assert report["pages"], "no page opened"
        assert {page: info["errors"] for page, info in report["pages"].items() if info["errors"]} == {}
        assert report["dialogs"] == []  # nothing in a description ran
        search = report["search"]
        assert search["none"] == 0 and search["emptyVisible"] and search["restored"] == search["total"]
        views = type_views(catalog_set)
        assert search["total"] == len(views)
        assert search["shown"] == sum(1 for view in views if query.lower() in view.search_text) >= 1
        for shot in report["screenshots"]:
            assert Path(shot["path"]).stat().st_size > 5000 and not shot["overflow"], shot
