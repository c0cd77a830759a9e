"""A static documentation site (``docs/``) and the same content as Markdown.

Rendered with jinja2 (autoescape on) from the model; descriptions are
CommonMark with raw HTML disabled, so HTML in a catalog is shown, never run.
No network: CSS and the search script are bundled. Deterministic.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from .. import __version__
from ..diff import Change, diff_events
from ..formats import semver_key
from ..model import Catalog, CatalogSet, EventType, SharedSchema
from ..naming import safe_file_name
from ..rules.catalog import completed_example
from . import Unit, catalog_inputs, event_dir, partial_set, render_all
from .asyncapi import message_id
from .templates import environment

PROFILE_NAMES = {
    "cloudevents": "CloudEvents 1.0.2",
    "nlgov": "NL GOV profile for CloudEvents 1.1",
    "normo": "Het Normo Event Data Specification 1.1",
}
_HEADER_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"%')


def markdown(text: str | None) -> Markup:
    """CommonMark to HTML; raw HTML in the text is escaped, unsafe links dropped."""
    return Markup(_markdown_parser().render(text or ""))


@cache
def _markdown_parser() -> Any:
    from markdown_it import MarkdownIt  # imported when a page needs it: startup stays fast

    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


@dataclass
class Row:
    """One line of the nested payload table."""

    depth: int
    name: str
    type: str
    required: bool
    constraints: list[str]
    description: str | None
    anchor: str = ""


@dataclass
class Attribute:
    name: str
    type: str
    required: str
    meaning: str


@dataclass
class VersionView:
    event: EventType
    anchor: str
    attributes: list[Attribute]
    rows: list[Row]
    example_json: str | None
    example_http: str | None
    data_schema: str | None
    event_schema: str
    asyncapi: str
    previous: str | None = None  # the dataversion the changelog compares with
    changes: list[Change] = field(default_factory=list)


@dataclass
class TypeView:
    catalog: Catalog
    type: str
    path: str  # relative to docs/
    markdown_path: str  # relative to docs/markdown/
    versions: list[VersionView] = field(default_factory=list)

    @property
    def latest(self) -> VersionView:
        return self.versions[0]

    @property
    def domain(self) -> str:
        """The type without its last label (and without a version label)."""
        labels = self.type.split(".")
        if len(labels) > 2 and re.fullmatch(r"v[0-9]+", labels[-1]):
            labels = labels[:-1]
        return ".".join(labels[:-1]) if len(labels) > 1 else self.type

    @property
    def search_text(self) -> str:
        latest = self.latest.event
        return " ".join(filter(None, [self.type, latest.title, latest.description or "", self.catalog.id])).lower()


def _schema_type(schema: Any, shared: dict[str, SharedSchema]) -> str:
    if not isinstance(schema, dict):
        return "any" if schema is True else "nothing"
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return ref[len("#/$defs/"):]
    kind = schema.get("type")
    if isinstance(kind, list):
        text = " | ".join(str(k) for k in kind)
    else:
        text = str(kind) if kind else ("enum" if "enum" in schema else "const" if "const" in schema else "any")
    if kind == "array" and isinstance(schema.get("items"), dict):
        text = f"array of {_schema_type(schema['items'], shared)}"
    if "format" in schema:
        text += f" ({schema['format']})"
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list):
            text = f" {'or' if keyword == 'anyOf' else 'one of'} ".join(_schema_type(option, shared) for option in schema[keyword])
    return text


CONSTRAINTS = (
    ("pattern", "pattern {}"), ("minLength", "min length {}"), ("maxLength", "max length {}"),
    ("minimum", "≥ {}"), ("maximum", "≤ {}"), ("exclusiveMinimum", "> {}"), ("exclusiveMaximum", "< {}"),
    ("multipleOf", "multiple of {}"), ("minItems", "min items {}"), ("maxItems", "max items {}"),
    ("uniqueItems", "unique items"), ("default", "default {}"), ("const", "always {}"),
)


def _constraints(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    found = []
    for keyword, text in CONSTRAINTS:
        if keyword in schema:
            value = schema[keyword]
            found.append(text.format(json.dumps(value, ensure_ascii=False) if not isinstance(value, (int, float)) or isinstance(value, bool) else value))
    if "enum" in schema:
        found.append("one of " + ", ".join(json.dumps(value, ensure_ascii=False) for value in schema["enum"]))
    if schema.get("additionalProperties") is False:
        found.append("no other properties")
    if schema.get("deprecated"):
        found.append("deprecated")
    return found


def payload_rows(schema: Any, shared: dict[str, SharedSchema]) -> list[Row]:
    rows: list[Row] = []

    def resolve(node: Any) -> tuple[Any, str | None]:
        if isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
            name = node["$ref"][len("#/$defs/"):]
            target = shared.get(name)
            if target is not None:
                merged = dict(target.schema) if isinstance(target.schema, dict) else {}
                merged.update({k: v for k, v in node.items() if k != "$ref"})
                return merged, name
        return node, None

    def walk(node: Any, depth: int, trail: tuple[str, ...], seen: frozenset[str]) -> None:
        node, name = resolve(node)
        if name is not None:
            if name in seen:
                return  # a recursive schema: its fields are listed above
            seen = seen | {name}
        if not isinstance(node, dict):
            return
        if node.get("type") == "array" or "items" in node:
            walk(node.get("items"), depth, trail, seen)
            return
        required = set(node.get("required", [])) if isinstance(node.get("required"), list) else set()
        properties = node.get("properties")
        if not isinstance(properties, dict):
            return
        for field_name, child in properties.items():
            resolved, ref_name = resolve(child)
            row = Row(
                depth, field_name, _schema_type(child, shared), field_name in required, _constraints(resolved),
                resolved.get("description") if isinstance(resolved, dict) else None, "-".join(trail + (field_name,)),
            )
            rows.append(row)
            target = _target_name(child)
            if target in seen:
                row.constraints.append(f"recursive: {target}, as above")
                continue
            walk(child, depth + 1, trail + (field_name,), seen)

    walk(schema, 0, (), frozenset())
    return rows


def _target_name(node: Any) -> str | None:
    """The shared schema a property (or its array items) refers to."""
    while isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return ref[len("#/$defs/"):]
        node = node.get("items")
    return None


def attributes(event: EventType) -> list[Attribute]:
    normo = event.profile == "normo"
    rows = [
        Attribute("specversion", "String", "required", "Always 1.0."),
        Attribute("type", "String", "required", event.type),
        Attribute("source", "URI-reference", "required", event.source),
        Attribute("id", "String", "required", event.id or "Identifies the event."),
        Attribute("time", "Timestamp", "required" if normo else "optional",
                  (event.time or "When the event happened.") + (" Format: yyyy-mm-ddThh:mm:ss.ffffffZ, UTC." if normo else "")),
    ]
    if event.dataversion:
        rows.append(Attribute("dataversion", "String", "required" if normo or event.has_data else "optional", event.dataversion))
    if event.subject:
        rows.append(Attribute("subject", "String", "optional", event.subject))
    if event.has_data:
        rows.append(Attribute("datacontenttype", "String", "required" if normo else "optional", event.datacontenttype or "application/json"))
    if event.dataschema:
        rows.append(Attribute("dataschema", "URI", "optional", event.dataschema))
    if event.dataref:
        rows.append(Attribute("dataref", "URI-reference", "optional", event.dataref))
    if event.sequencetype:
        rows.append(Attribute("sequence", "String", "required", f"Position in the sequence; sequencetype {event.sequencetype}."))
    for extension in event.extensions:
        rows.append(Attribute(extension.name, extension.type, "required" if extension.required else "optional", extension.description or "Extension attribute."))
    return rows


def http_request(wire: dict[str, Any], path: str) -> str:
    """The example as a binary-mode HTTP request (HTTP binding §3.1)."""
    lines = [f"POST {path} HTTP/1.1"]
    for name, value in wire.items():
        if name in ("data", "datacontenttype"):
            continue
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        lines.append(f"ce-{name}: {quote(text, safe=_HEADER_SAFE)}")
    if "data" in wire:
        lines.append(f"content-type: {wire.get('datacontenttype', 'application/json')}")
        return "\n".join(lines) + "\n\n" + json.dumps(wire["data"], indent=2, ensure_ascii=False)
    return "\n".join(lines) + "\n"


def type_views(catalog_set: CatalogSet, only: Catalog | None = None, *, full: bool = True) -> list[TypeView]:
    """The event types of ``only`` (or of every catalog); ``full=False`` leaves
    out the attribute and payload tables, examples and changes (the index needs none)."""
    views: dict[tuple[str, str], TypeView] = {}
    shared = dict(catalog_set.schemas)
    catalogs = {catalog.id: catalog for catalog in catalog_set.catalogs}
    for event in (only.events if only is not None else catalog_set.events):
        catalog = catalogs[event.catalog_id]
        key = (catalog.id, event.type)
        if key not in views:
            base = f"{safe_file_name(catalog.id)}/{safe_file_name(event.type)}"
            views[key] = TypeView(catalog, event.type, f"events/{base}.html", f"{base}.md")
        folder = event_dir(event)
        example_json = example_http = None
        if event.examples and full:
            wire = completed_example(event, dict(event.examples[0].values))
            example_json = json.dumps(wire, indent=2, ensure_ascii=False)
            server = catalog.servers[0] if catalog.servers else None
            example_http = http_request(wire, (server.pathname if server and server.pathname else "/"))
        views[key].versions.append(
            VersionView(
                event,
                anchor=f"v{event.dataversion}" if event.dataversion else "notification",
                attributes=attributes(event) if full else [],
                rows=payload_rows(event.payload.schema, shared) if event.payload is not None and full else [],
                example_json=example_json,
                example_http=example_http,
                data_schema=f"jsonschema/{folder}/data.schema.json" if event.payload is not None else None,
                event_schema=f"jsonschema/{folder}/event.schema.json",
                asyncapi=f"asyncapi/{safe_file_name(catalog.id)}.yaml#{message_id(event)}",
            )
        )
    for view in views.values():
        view.versions.sort(key=lambda v: semver_key(v.event.dataversion or ""), reverse=True)
        for newer, older in zip(view.versions, view.versions[1:]):
            newer.previous = older.event.dataversion
            if full:
                newer.changes = diff_events(older.event, newer.event, catalog_set, catalog_set)
    return sorted(views.values(), key=lambda v: (v.catalog.id, v.type))


# The navigation of an event page names at most this many catalogs: its own
# and its neighbours in id order (the index names them all). Naming every
# catalog on every page made the site grow with catalogs x pages (10,000
# one-event catalogs: 7 GB).
NAV_CATALOGS = 50


def units(catalog_set: CatalogSet) -> list[Unit]:
    """The pages of each catalog (their navigation names the catalogs around
    it, so those ids and titles are inputs too), and the index pages (every
    catalog is their input)."""
    titles = tuple(sorted((catalog.id, catalog.title) for catalog in catalog_set.catalogs))
    position = {catalog_id: index for index, (catalog_id, _) in enumerate(titles)}

    def near(catalog_id: str) -> tuple[tuple[str, str], ...]:
        if len(titles) <= NAV_CATALOGS:
            return titles
        start = min(max(0, position[catalog_id] - NAV_CATALOGS // 2), len(titles) - NAV_CATALOGS)
        return titles[start:start + NAV_CATALOGS]

    result = [
        Unit("docs", catalog.id, (*catalog_inputs(catalog, catalog_set), near(catalog.id)), _render_catalog)
        for catalog in catalog_set.catalogs
    ]
    result.append(Unit("docs", "index", (catalog_set.catalogs,), _render_index, local=True))
    return result


def _environment() -> Any:
    env = environment()
    env.filters["markdown"] = markdown
    return env


@dataclass(frozen=True)
class NavCatalog:
    """What the navigation of an event page shows of another catalog."""

    id: str
    title: str


def _context(catalogs: list[Any], types: list[TypeView]) -> dict[str, Any]:
    catalogs = sorted(catalogs, key=lambda c: c.id)
    # Grouped here, not filtered in the templates: that would be quadratic in the number of types.
    by_catalog: dict[str, list[TypeView]] = {catalog.id: [] for catalog in catalogs}
    domains: dict[str, dict[str, list[TypeView]]] = {catalog.id: {} for catalog in catalogs}
    for view in types:
        by_catalog[view.catalog.id].append(view)
        domains[view.catalog.id].setdefault(view.domain, []).append(view)
    return {
        "catalogs": catalogs, "types": types, "version": __version__, "profiles": PROFILE_NAMES,
        "by_catalog": by_catalog,
        "domains": {catalog_id: sorted(groups.items()) for catalog_id, groups in domains.items()},
    }


def _render_index(inputs: tuple[Any, ...]) -> dict[str, bytes]:
    (catalogs,) = inputs
    env = _environment()
    context = _context(list(catalogs), type_views(partial_set(catalogs), full=False))
    files = {
        "docs/index.html": env.get_template("docs/index.html.jinja").render(context, root="", page=None),
        "docs/assets/style.css": env.get_template("docs/style.css").render(),
        "docs/assets/search.js": env.get_template("docs/search.js").render(),
        "docs/markdown/index.md": env.get_template("docs/index.md.jinja").render(context),
    }
    return {path: text.encode("utf-8") for path, text in files.items()}


def _render_catalog(inputs: tuple[Any, ...]) -> dict[str, bytes]:
    catalog, schemas, titles = inputs
    env = _environment()
    types = type_views(partial_set((catalog,), schemas), catalog)
    context = _context([NavCatalog(catalog_id, title) for catalog_id, title in titles], types)
    files: dict[str, str] = {}
    for view in types:
        depth = view.path.count("/")
        page = {"root": "../" * depth, "page": view}
        files[f"docs/{view.path}"] = env.get_template("docs/event.html.jinja").render(context, **page)
        files[f"docs/markdown/{view.markdown_path}"] = env.get_template("docs/event.md.jinja").render(
            context, page=view, root="../" * (view.markdown_path.count("/") + 2)
        )
    return {path: text.encode("utf-8") for path, text in files.items()}


def render(catalog_set: CatalogSet) -> dict[str, bytes]:
    return render_all(units(catalog_set))
