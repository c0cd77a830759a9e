"""Contract §9 in the docs: per event where it travels, a page per service and
per channel, the catalog's service diagram (inline SVG, measured in Chromium),
and the routes the docs read them from (channels, senders, receivers)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from generator.commands.generate import render
from generator.commands.lint import lint
from generator.render.docs import receiving, sending
from generator.string_formats import in_npm_range

from .conftest import ROOT
from .test_docs import Page

ARTIFACTS = ROOT / "tests" / "artifacts"

# Channels, services and three event versions (a range receives 1.0.0, not 2.0.0).
STORAGE = (ROOT / "tests" / "catalogs" / "services" / "storage.yaml").read_text(encoding="utf-8")


def _site(tmp_path: Path, text: str, name: str = "c.yaml") -> tuple[Any, dict[str, str]]:
    source = tmp_path / "catalog"
    source.mkdir(parents=True, exist_ok=True)
    (source / name).write_text(text, encoding="utf-8")
    result = lint(str(source))
    assert not result.has_errors, [d.message for d in result.diagnostics]
    files = render(result.catalog_set, ["docs"])["docs"]
    for relative, content in files.items():
        path = tmp_path / "out" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return result.catalog_set, {path: content.decode("utf-8") for path, content in files.items()}


def _text(page: str) -> str:
    parser = Page()
    parser.feed(page)
    return " ".join(" ".join(parser.text).split())


def _links(page: str) -> list[str]:
    parser = Page()
    parser.feed(page)
    return parser.links


# -- the routes ---------------------------------------------------------------


@pytest.mark.parametrize(("version", "spec", "expected"), [
    # node-semver's README, "Ranges": https://github.com/npm/node-semver#ranges
    ("1.5.0", ">=1.0.0 <2.0.0", True), ("2.0.0", ">=1.0.0 <2.0.0", False), ("1.0.0", ">=1.0.0 <2.0.0", True),
    ("1.2.7", ">=1.2.7", True), ("1.2.6", ">=1.2.7", False),
    ("1.2.8", "1.2.7 || >=1.2.9 <2.0.0", False), ("1.2.7", "1.2.7 || >=1.2.9 <2.0.0", True),
    ("1.4.2", "1.2.3 - 2.3.4", True), ("2.3.5", "1.2.3 - 2.3.4", False), ("2.3.9", "1.2.3 - 2.3", True),
    ("2.4.0", "1.2.3 - 2.3", False), ("2.9.0", "1.2 - 2", True),
    ("1.9.9", "1.x", True), ("2.0.0", "1.x", False), ("1.2.9", "1.2.*", True), ("1.3.0", "1.2", False),
    ("9.9.9", "*", True), ("9.9.9", "", True),
    ("1.2.9", "~1.2.3", True), ("1.3.0", "~1.2.3", False), ("1.9.0", "~1", True), ("1.3.0", "~1.2", False),
    ("1.9.0", "^1.2.3", True), ("2.0.0", "^1.2.3", False), ("0.2.9", "^0.2.3", True), ("0.3.0", "^0.2.3", False),
    ("0.0.3", "^0.0.3", True), ("0.0.4", "^0.0.3", False), ("0.9.0", "^0.x", True), ("1.0.0", "^0.x", False),
    ("1.2.0", "<=1.2", True), ("1.2.9", "<=1.2", True), ("1.3.0", "<=1.2", False),
    ("1.3.0", ">1.2", True), ("1.2.9", ">1.2", False), ("2.0.0", "=2.0.0", True), ("2.0.0", "2.0.0", True),
    ("2.0.1", "2.0.0", False), ("1.0.0", "v1.0.0", True), ("1.0.0", ">= 1.0.0", True),
])
def test_npm_semver_ranges(version: str, spec: str, expected: bool) -> None:
    """The ranges the docs link a ``receives`` entry's dataversions by (``Link.receives``)."""
    assert in_npm_range(version, spec) is expected


def test_routes_follow_the_contract(tmp_path: Path) -> None:
    """An event travels on the channels its sending services name (that
    dataversion), or on every channel when the catalog has no services."""
    catalog_set, _ = _site(tmp_path, STORAGE)
    (catalog,) = catalog_set.catalogs
    created1, created2, deleted = catalog.events
    assert [c.name for c in catalog.channels_of(created1)] == ["blob-events"]
    assert [c.name for c in catalog.channels_of(created2)] == ["blob-events", "storage-hook"]
    assert [c.name for c in catalog.channels_of(deleted)] == ["blob-events", "audit"]
    assert [s.name for s, _ in sending(catalog, created2)] == ["blob-store", "blob-store"]
    assert [s.name for s, _ in receiving(catalog, created1)] == ["indexer"]
    assert [s.name for s, _ in receiving(catalog, created2)] == ["auditor"]
    bare = STORAGE.split("services:")[0] + "events:\n" + STORAGE.split("\nevents:\n", 1)[1]
    catalog_set, _ = _site(tmp_path / "bare", bare)
    (catalog,) = catalog_set.catalogs
    assert [c.name for c in catalog.channels_of(catalog.events[0])] == ["blob-events", "storage-hook", "audit", "idle"]


# -- the pages ----------------------------------------------------------------


def test_event_page_says_where_it_travels(tmp_path: Path) -> None:
    _, files = _site(tmp_path, STORAGE)
    page = files["docs/events/acme-storage/org.example.storage.blob-created.html"]
    first, second = page.split('id="v2.0.0"')[1].split('id="v1.0.0"')
    # 2.0.0: on blob-events (kafka) and storage-hook (http), sent by blob-store, received by auditor.
    travel = _text(first.split("<h3>Where it travels</h3>")[1].split("<h3>")[0])
    assert "blob-events kafka storage.{region}.blobs" in travel and "storage-hook http /hooks/storage" in travel
    assert "Blob store" in travel and "Auditor" in travel and "Search indexer" not in travel
    travel = _text(second.split("<h3>Where it travels</h3>")[1].split("<h3>")[0])
    assert "blob-events kafka" in travel and "storage-hook" not in travel and "Search indexer" in travel
    links = _links(page)
    for target in ("../../services/acme-storage/blob-store.html", "../../channels/acme-storage/blob-events.html",
                   "../../services/acme-storage/auditor.html", "../../channels/acme-storage/storage-hook.html"):
        assert target in links, target


def test_markdown_copy_says_where_it_travels(tmp_path: Path) -> None:
    _, files = _site(tmp_path, STORAGE)
    page = files["docs/markdown/acme-storage/org.example.storage.blob-created.md"]
    newest = page.split("## Dataversion 1.0.0")[0]
    assert "| `storage-hook` | http | `/hooks/storage` | Blob store | Auditor |" in newest
    assert "| `blob-events` | kafka | `storage.{region}.blobs` | Blob store | Search indexer |" in page.split("## Dataversion 1.0.0")[1]
    index = files["docs/markdown/index.md"]
    assert "| Search indexer (`indexer`) |  | org.example.storage.blob-created |" in index
    assert "| `idle` | mqtt | `idle/topic` |  |" in index


def test_a_page_per_service_and_channel(tmp_path: Path) -> None:
    _, files = _site(tmp_path, STORAGE)
    store = files["docs/services/acme-storage/blob-store.html"]
    text = _text(store)
    assert "Blob store" in text and "Storage team" in text and "storage@example.org" in text and "Keeps the blobs." in text
    assert "Sends" in text and "org.example.storage.blob-deleted" in text
    assert "../../events/acme-storage/org.example.storage.blob-created.html#v2.0.0" in _links(store)
    assert "../../channels/acme-storage/storage-hook.html" in _links(store)
    indexer = files["docs/services/acme-storage/indexer.html"]
    assert "Receives" in _text(indexer) and ">=1.0.0 <2.0.0" in _text(indexer)
    # The range links the versions it takes: 1.0.0, not 2.0.0.
    assert "../../events/acme-storage/org.example.storage.blob-created.html#v1.0.0" in _links(indexer)
    assert "../../events/acme-storage/org.example.storage.blob-created.html#v2.0.0" not in _links(indexer)
    channel = files["docs/channels/acme-storage/blob-events.html"]
    text = _text(channel)
    for wanted in ("kafka", "storage.{region}.blobs", "region", "All blob events of one region.", "key", '"subject"',
                   "org.example.storage.blob-created", "org.example.storage.blob-deleted", "Blob store", "Search indexer"):
        assert wanted in text, wanted
    audit = _text(files["docs/channels/acme-storage/audit.html"])
    assert "routingKey" in audit and '"storage.#"' in audit and "Archive" in audit and "Auditor" in audit
    idle = _text(files["docs/channels/acme-storage/idle.html"])
    assert "No service sends" in idle
    catalog = files["docs/catalogs/acme-storage.html"]
    for target in ("../services/acme-storage/indexer.html", "../channels/acme-storage/idle.html"):
        assert target in _links(catalog)


def test_every_link_of_the_new_pages_resolves(tmp_path: Path) -> None:
    _site(tmp_path, STORAGE)
    docs = tmp_path / "out" / "docs"
    pages = [p for p in docs.rglob("*.html")]
    assert any("/services/" in str(p) for p in pages) and any("/channels/" in str(p) for p in pages)
    for path in pages:
        parser = Page()
        parser.feed(path.read_text(encoding="utf-8"))
        for link in parser.links:
            if link.startswith(("http", "mailto:")):
                continue
            target, _, anchor = link.partition("#")
            resolved = (path.parent / target).resolve() if target else path
            if not resolved.is_relative_to(docs.resolve()):
                continue  # the contracts beside the docs (JSON Schema, AsyncAPI): not rendered here
            assert resolved.exists(), (path, link)
            if anchor and resolved.suffix == ".html":
                other = Page()
                other.feed(resolved.read_text(encoding="utf-8"))
                assert anchor in other.ids, (path, link)


def test_search_and_navigation_include_services_and_channels(tmp_path: Path) -> None:
    _, files = _site(tmp_path, STORAGE)
    index = json.loads(files["docs/assets/search-index.js"].split("=", 1)[1].rstrip().rstrip(";"))
    found = {(entry["kind"], entry["name"]): entry for entry in index}
    assert found[("service", "indexer")]["url"] == "services/acme-storage/indexer.html"
    assert "search indexer" in found[("service", "indexer")]["text"]
    assert found[("channel", "blob-events")]["url"] == "channels/acme-storage/blob-events.html"
    assert "storage.{region}.blobs" in found[("channel", "blob-events")]["text"]
    nav = files["docs/events/acme-storage/org.example.storage.blob-created.html"].split("</nav>")[0]
    assert "../../catalogs/acme-storage.html#services" in nav and "../../catalogs/acme-storage.html#channels" in nav


def test_a_catalog_without_services_is_unchanged_but_for_its_channels(tmp_path: Path) -> None:
    """No services: no diagram; the event travels on every channel."""
    bare = STORAGE.split("services:")[0] + "events:\n" + STORAGE.split("\nevents:\n", 1)[1]
    _, files = _site(tmp_path, bare)
    assert "service-map" not in files["docs/catalogs/acme-storage.html"]
    page = files["docs/events/acme-storage/org.example.storage.blob-deleted.html"]
    travel = _text(page.split("<h3>Where it travels</h3>")[1].split("<h3>")[0])
    assert all(name in travel for name in ("blob-events", "storage-hook", "audit", "idle"))


# -- the diagram ----------------------------------------------------------------


def big_catalog(services: int = 40, channels: int = 12, types: int = 30) -> str:
    """A catalog of a system with ``services`` services: each sends two or three
    event types on one or two channels and receives from others; deterministic."""
    lines = ["catalog: big-system", "title: Big system", "version: 1.0.0", "profile: cloudevents",
             "producer: {source: 'https://big.example.org'}", "channels:"]
    protocols = ("kafka", "amqp", "mqtt", "http")
    for c in range(channels):
        protocol = protocols[c % 4]
        address = f"/hooks/domain-{c}" if protocol == "http" else f"domain{c}.events.{{region}}"
        lines += [f"  channel-{c:02d}-{protocol}:", f"    protocol: {protocol}", f"    address: {address}"]
    names = [f"service-{s:02d}-{'processing' if s % 3 else 'gateway'}" for s in range(services)]
    lines.append("services:")
    for s, name in enumerate(names):
        lines += [f"  {name}:", f"    title: Service {s:02d} {'Processing unit' if s % 3 else 'Gateway'}"]
        sends = [(s * 7 + k) % types for k in range(2 + s % 2)]
        channel = s % channels
        lines.append("    sends:")
        for k, t in enumerate(sends):
            target = channel if k < 2 else (channel + 5) % channels
            lines.append(f"      - {{type: org.example.big.domain.event-{t:02d}, channel: channel-{target:02d}-{protocols[target % 4]}}}")
        lines.append("    receives:")
        for k in range(1 + s % 2):
            source = (s * 11 + 3 + k) % services
            t = (source * 7) % types
            target = source % channels
            lines.append(f"      - {{type: org.example.big.domain.event-{t:02d}, channel: channel-{target:02d}-{protocols[target % 4]}}}")
    lines.append("events:")
    for t in range(types):
        lines += [f"  - type: org.example.big.domain.event-{t:02d}", f"    title: Event {t:02d}",
                  "    dataversion: 1.0.0", f"    description: Event number {t}.",
                  "    data: {type: object, properties: {id: {type: string, description: The id.}}}"]
    return "\n".join(lines) + "\n"


def test_diagram_is_inline_accessible_and_deterministic(tmp_path: Path) -> None:
    catalog_set, files = _site(tmp_path, STORAGE)
    page = files["docs/catalogs/acme-storage.html"]
    svg = re.search(r"<svg[^>]*class=\"service-map\".*?</svg>", page, re.DOTALL)
    assert svg is not None
    svg_text = svg.group(0)
    assert re.search(r"<title id=\"[^\"]+\">[^<]+</title>\s*<desc id=\"[^\"]+\">[^<]+</desc>", svg_text)
    assert "<image" not in svg_text and "<foreignObject" not in svg_text
    (catalog,) = catalog_set.catalogs
    for service in catalog.services:
        assert f'href="../services/acme-storage/{service.name}.html"' in svg_text
        assert f">{service.title}<" in svg_text
    for channel in catalog.channels:
        assert f'href="../channels/acme-storage/{channel.name}.html"' in svg_text
    # The event types on the arrows: blob-store -> blob-events carries both types.
    assert re.search(r"<title>[^<]*org\.example\.storage\.blob-created[^<]*org\.example\.storage\.blob-deleted", svg_text)
    assert _site(tmp_path / "again", STORAGE)[1]["docs/catalogs/acme-storage.html"] == page


def test_diagram_shortens_long_label_lists(tmp_path: Path) -> None:
    _, files = _site(tmp_path, big_catalog(services=3, channels=2, types=40).replace(
        "    sends:\n", "    sends:\n" + "".join(
            f"      - {{type: org.example.big.domain.event-{t:02d}, channel: channel-00-kafka}}\n" for t in range(20, 40)), 1))
    svg = re.search(r"<svg[^>]*class=\"service-map\".*?</svg>", files["docs/catalogs/big-system.html"], re.DOTALL)
    assert svg is not None
    label = re.search(r"<title>(Service 00[^<]*event-39[^<]*)</title>\s*<text[^>]*>([^<]*)</text>", svg.group(0))
    assert label is not None, svg.group(0)[:3000]
    full, shown = label.groups()
    assert all(f"event-{t:02d}" in full for t in range(20, 40))  # the full list
    assert re.search(r"\+\d+ more$", shown) and len(shown) < 60  # the arrow's label: shortened


def test_diagram_in_chromium_at_40_services(tmp_path: Path, node_tools: Path, chromium: str) -> None:
    """Every service and channel name is drawn (non-zero box), no two labels
    or boxes overlap at 1280 px, text renders at >= 11 CSS px at 390 px (the
    diagram scrolls inside its box, the page does not)."""
    catalog_set, _ = _site(tmp_path, big_catalog())
    (catalog,) = catalog_set.catalogs
    assert len(catalog.services) == 40
    report = _measure(tmp_path / "out" / "docs" / "catalogs" / "big-system.html", node_tools, chromium, "diagram-40")
    assert report["errors"] == []
    desktop, phone = report["desktop"], report["phone"]
    drawn = {(name["kind"], name["name"]) for name in desktop["names"] if name["rect"]["width"] > 0 and name["rect"]["height"] > 0}
    assert {("service", s.name) for s in catalog.services} <= drawn
    assert {("channel", c.name) for c in catalog.channels} <= drawn
    shown = {name["text"] for name in desktop["names"]}
    assert {s.title for s in catalog.services} <= shown and {c.name for c in catalog.channels} <= shown
    assert desktop["items"] > 200 and desktop["overlaps"] == [] and desktop["outside"] == []
    assert phone["overlaps"] == [] and phone["minFont"] >= 11 and desktop["minFont"] >= 11
    assert phone["scale"] == pytest.approx(1) and phone["scrolls"] and not phone["pageOverflow"]
    assert not desktop["pageOverflow"]
    assert "40 services" in desktop["desc"] and desktop["title"]
    assert len([link for link in desktop["links"] if "/services/" in link]) >= 40


def test_diagram_in_chromium_small_catalog(tmp_path: Path, node_tools: Path, chromium: str) -> None:
    _site(tmp_path, STORAGE)
    report = _measure(tmp_path / "out" / "docs" / "catalogs" / "acme-storage.html", node_tools, chromium, "diagram-small")
    assert report["errors"] == []
    for width in ("desktop", "phone"):
        measured = report[width]
        assert measured["overlaps"] == [] and measured["outside"] == [] and measured["minFont"] >= 11
        names = {(name["kind"], name["name"]) for name in measured["names"] if name["rect"]["width"] > 0}
        assert names >= {("service", "blob-store"), ("service", "auditor"), ("channel", "idle"), ("channel", "audit")}
        assert not measured["pageOverflow"]


def test_diagram_in_chromium_shipped_catalogs(tmp_path: Path, node_tools: Path, chromium: str) -> None:
    """The shipped catalogs' diagrams (catalog/ has services): every service and
    channel drawn, nothing overlaps, text >= 11 px at both widths."""
    result = lint(str(ROOT / "catalog"))
    assert not result.has_errors
    for relative, content in render(result.catalog_set, ["docs"])["docs"].items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    drawn_catalogs = 0
    for catalog in result.catalog_set.catalogs:
        if not catalog.services:
            continue
        drawn_catalogs += 1
        report = _measure(tmp_path / "docs" / "catalogs" / f"{catalog.id}.html", node_tools, chromium, f"diagram-{catalog.id}")
        assert report["errors"] == []
        for width in ("desktop", "phone"):
            measured = report[width]
            assert measured["overlaps"] == [] and measured["outside"] == [] and measured["minFont"] >= 11, (catalog.id, width)
            names = {(name["kind"], name["name"]) for name in measured["names"] if name["rect"]["width"] > 0}
            assert names >= {("service", s.name) for s in catalog.services} | {("channel", c.name) for c in catalog.channels}
            assert not measured["pageOverflow"]
    assert drawn_catalogs >= 2


def _measure(page: Path, node_tools: Path, chromium: str, name: str) -> dict[str, Any]:
    run = subprocess.run(
        ["node", str(node_tools / "check-diagram.mjs"), str(page), str(ARTIFACTS / name), chromium],
        check=False, capture_output=True, text=True, timeout=300, env={"PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def test_hostile_names_stay_text_and_inside_docs(tmp_path: Path) -> None:
    """Service and channel names, titles, owners and descriptions from a catalog
    are shown as text on every new page and in the SVG, and a name cannot put a
    page outside its folder."""
    hostile = STORAGE.replace("title: Blob store", "title: \"<script>alert(1)</script> & co\"").replace(
        "description: Keeps the blobs.", "description: \"<img src=x onerror=alert(2)> keeps\"").replace(
        "  archive:\n", "  \"../../evil\":\n").replace(
        "description: All blob events of one region.", "description: \"<b>bold</b> region\"")
    _, files = _site(tmp_path, hostile)
    assert "docs/services/acme-storage/evil.html" in files
    assert all(path.startswith("docs/") and ".." not in path for path in files)
    for path, page in files.items():
        if path.endswith(".html"):
            assert "<script>alert" not in page and "<img" not in page and "<b>bold" not in page, path
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in files["docs/catalogs/acme-storage.html"]


def _crossings(service_map: Any) -> int:
    """Pairs of arrows that cross between two columns (their ends in opposite
    order): each arrow's curve is ``C mid y1 mid y2 x2 y2``, ``mid`` the same
    for every arrow between the same two columns."""
    spans: dict[float, list[tuple[float, float]]] = {}
    for arrow in service_map.arrows:
        mid, y1, _, _, _, y2 = (float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", arrow.path.split("C", 1)[1])[:6])
        spans.setdefault(mid, []).append((y1, y2))
    assert len(spans) == 2  # senders -> channels, channels -> receivers
    return sum((a1 - b1) * (a2 - b2) < 0 for ends in spans.values()
               for i, (a1, a2) in enumerate(ends) for b1, b2 in ends[i + 1:])


def test_barycentre_order_crosses_less_than_the_catalog_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.render import servicemap
    from generator.render.docs import service_map

    catalog_set, _ = _site(tmp_path, big_catalog())
    (catalog,) = catalog_set.catalogs
    ordered = _crossings(service_map(catalog))
    monkeypatch.setattr(servicemap, "SWEEPS", 0)
    unordered = _crossings(service_map(catalog))
    assert ordered < unordered * 0.8, (ordered, unordered)
