"""A static documentation site (``docs/``) and the same content as Markdown.

Rendered with jinja2 (autoescape on) from the model; descriptions are
CommonMark with raw HTML disabled, so HTML in a catalog is shown, never run.
No network: CSS and the search script are bundled. Deterministic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from itertools import chain
from operator import itemgetter
from typing import Any

from markupsafe import Markup

from .. import __version__
from ..commands.diff import Change, diff_events
from ..model import Catalog, CatalogSet, Channel, EventType, Link, Service, SharedSchema
from ..naming import safe_file_name
from ..profiles import PROFILES, Profile
from ..string_formats import semver_key
from ..vocabulary import header_value
from . import Unit, catalog_inputs, compact_json, dump_json, event_dir, partial_set, render_all
from .asyncapi import message_id
from .servicemap import ServiceMap
from .servicemap import layout as service_map_layout
from .templates import environment, template_set
from .timeline import TypeVersions, layout


class ProfileTitles(Mapping[Profile, str]):
    """The docs templates' ``profiles`` global: each registered profile's
    title (``profiles[catalog.profile]`` in templates written before
    ``catalog.profile.title``), read from the profile itself."""

    def __getitem__(self, profile: Profile) -> str:
        if not isinstance(profile, Profile):
            raise KeyError(profile)
        return profile.title

    def __iter__(self) -> Iterator[Profile]:
        return iter(tuple(PROFILES.values()))

    def __len__(self) -> int:
        return len(PROFILES)


def markdown(text: str | None) -> Markup:
    """CommonMark to HTML; raw HTML in the text is escaped, unsafe links dropped."""
    if text and _PLAIN_PARAGRAPH.fullmatch(text) and text[-1] != " ":
        return Markup(f"<p>{text}</p>\n")  # what the parser makes of it, without parsing
    return Markup(_markdown_parser().render(text or ""))


# One line that is one CommonMark paragraph of plain text (most descriptions):
# it starts with a letter (no list, heading, quote, fence or code block can
# start so) and holds no character that starts an inline construct (escape,
# code, emphasis, link, image, autolink, HTML, entity, line break) or that
# HTML escapes; the paragraph is the text as it is (CommonMark 4.8, 6.9).
_PLAIN_PARAGRAPH = re.compile(r"[A-Za-z][A-Za-z0-9 ,.;:'()/?%+=@#$^{}|-]*")


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
    constraints: list[Constraint]
    description: str | None
    anchor: str = ""
    schema: str | None = None  # the shared schema the field (or its items) refers to

    @property
    def type_prefix(self) -> str:
        """The type text before the shared schema's name, which the page links."""
        if self.schema and self.type.endswith(self.schema):
            return self.type[: -len(self.schema)]
        return self.type


@dataclass
class Attribute:
    name: str
    type: str
    required: str
    meaning: str


@dataclass
class Travel:
    """One channel an event (type, dataversion) travels on, and who sends and
    receives it there (``channel`` None: the services of links that name no channel)."""

    channel: Channel | None
    senders: list[Service]
    receivers: list[Service]


def _unique(services: Iterable[Service]) -> list[Service]:
    return list({service.name: service for service in services}.values())


def sending(catalog: Catalog, event: EventType) -> list[tuple[Service, Link]]:
    """The services whose ``sends`` cover the event, each with that link."""
    return [(service, link) for service in catalog.services for link in service.sends if link.sends(event)]


def receiving(catalog: Catalog, event: EventType) -> list[tuple[Service, Link]]:
    """The services whose ``receives`` cover the event (its dataversion in their range), each with that link."""
    return [(service, link) for service in catalog.services for link in service.receives
            if link.receives(event.type, event.dataversion)]


def travel(catalog: Catalog, event: EventType) -> list[Travel]:
    """Where an event travels: each channel it is published on (``Catalog.channels_of``)
    with its sending and receiving services, then the channels only its receivers
    name, then the links that name no channel."""
    if not catalog.channels and not catalog.services:
        return []
    senders, receivers = sending(catalog, event), receiving(catalog, event)
    named = [channel.name for channel in catalog.channels_of(event)]
    named += [link.channel for _, link in receivers if link.channel and link.channel not in named]
    channels = {channel.name: channel for channel in catalog.channels}
    rows = [
        Travel(channels[name],
               _unique(service for service, link in senders if link.channel == name),
               _unique(service for service, link in receivers if link.channel in (name, None)))
        for name in named if name in channels
    ]
    loose = Travel(None, _unique(service for service, link in senders if not link.channel),
                   _unique(service for service, link in receivers if not link.channel))
    if (loose.senders or loose.receivers) and not rows:
        rows.append(loose)
    elif loose.senders:
        rows.append(Travel(None, loose.senders, []))
    return rows


@dataclass
class VersionView:
    event: EventType
    anchor: str
    attributes: list[Attribute]
    rows: list[Row]
    example_json: str | None
    example_http: str | None
    previous: str | None = None  # the dataversion the changelog compares with
    changes: list[Change] = field(default_factory=list)
    travel: list[Travel] = field(default_factory=list)  # where it travels (catalog-format.md §9)

    # The contracts of the version, relative to OUT (asked by its page only:
    # the index and the catalog pages list thousands of versions).
    @property
    def data_schema(self) -> str | None:
        return f"jsonschema/{event_dir(self.event)}/data.schema.json" if self.event.payload is not None else None

    @property
    def event_schema(self) -> str:
        return f"jsonschema/{event_dir(self.event)}/event.schema.json"

    @property
    def asyncapi(self) -> str:
        return f"asyncapi/{safe_file_name(self.event.catalog_id)}.yaml#{message_id(self.event)}"


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


def _schema_type(schema: Any, shared: Mapping[str, SharedSchema]) -> str:
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
    value = _map_value(schema)
    if value is not None:  # "map of string to X" in the place of "object"
        shown = f"map of string to {_schema_type(value, shared)}"
        text = " | ".join(shown if k == "object" else str(k) for k in kind) if isinstance(kind, list) else shown
    if "format" in schema:
        text += f" ({schema['format']})"
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list):
            text = f" {'or' if keyword == 'anyOf' else 'one of'} ".join(_schema_type(option, shared) for option in schema[keyword])
    return text


def _map_value(schema: dict[str, Any]) -> Any:
    """The value schema of a map, or None: an object that lists no properties
    and takes any other name with ``additionalProperties`` (a schema, or
    true: any value). Azure's ``claims``, Stripe's ``metadata``."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    value = schema.get("additionalProperties")
    if ("object" not in kinds and kind is not None) or schema.get("properties") or schema.get("patternProperties"):
        return None
    if value is True or isinstance(value, dict):
        return value
    return None


CONSTRAINTS = (
    ("format", "format"), ("pattern", "pattern"), ("minLength", "min length"), ("maxLength", "max length"),
    ("minimum", "≥"), ("maximum", "≤"), ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<"),
    ("multipleOf", "multiple of"), ("minItems", "min items"), ("maxItems", "max items"),
    ("uniqueItems", "unique items"), ("minProperties", "min properties"), ("maxProperties", "max properties"),
    ("default", "default"), ("const", "always"),
)
_FLAGS = {"uniqueItems"}  # shown by name only


@dataclass(frozen=True)
class Constraint:
    """One constraint of a field: words, and the values (as JSON) a page shows as code."""

    label: str
    values: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.label} {', '.join(self.values)}" if self.values else self.label


def _json_block(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` (by ``dump_json``: faster, the same text)."""
    return dump_json(value).decode("utf-8")[:-1]


# ``json.dumps(value, ensure_ascii=False)`` makes this encoder anew on each call.
_encode_text = json.JSONEncoder(ensure_ascii=False).encode


def _json_text(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return _encode_text(value)


def _nullable(schema: Any) -> bool:
    """Whether JSON ``null`` is a valid value (a ``null`` type, enum value or option)."""
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        return True
    return ("anyOf" in schema or "oneOf" in schema) and any(
        isinstance(option, dict) and option.get("type") == "null"
        for keyword in ("anyOf", "oneOf") if isinstance(schema.get(keyword), list)
        for option in schema[keyword]
    )


def _constraints(schema: Any, shown_type: str = "") -> list[Constraint]:
    """What a value must satisfy, in words: enum values, bounds, pattern,
    format (unless the type column shows it), default, nullability."""
    if not isinstance(schema, dict):
        return []
    found = [Constraint("may be null")] if _nullable(schema) and "null" not in shown_type.split(" | ") else []
    for keyword, label in CONSTRAINTS:
        if keyword in schema:
            if keyword == "format" and f"({schema['format']})" in shown_type:
                continue
            found.append(Constraint(label) if keyword in _FLAGS else Constraint(label, (_json_text(schema[keyword]),)))
    if isinstance(schema.get("enum"), list):
        found.append(Constraint("one of", tuple(_json_text(value) for value in schema["enum"])))
    if schema.get("additionalProperties") is False:
        found.append(Constraint("no other properties"))
    if schema.get("deprecated"):
        found.append(Constraint("deprecated"))
    return found


def _resolve(node: Any, shared: Mapping[str, SharedSchema]) -> tuple[Any, str | None]:
    """A ``$ref`` to a shared schema replaced by that schema (keywords next to
    the ``$ref``, such as a description, win), and the schema's name."""
    if isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
        name = node["$ref"][len("#/$defs/"):]
        target = shared.get(name)
        if target is not None:
            merged = dict(target.schema) if isinstance(target.schema, dict) else {}
            merged.update({k: v for k, v in node.items() if k != "$ref"})
            return merged, name
    return node, None


def _description(node: Any, shared: Mapping[str, SharedSchema]) -> Any:
    """``_resolve(node, shared)[0].get("description")``, without merging the
    two schemas (a description next to the ``$ref`` wins)."""
    if not isinstance(node, dict):
        return None
    if "description" not in node and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
        target = shared.get(node["$ref"][len("#/$defs/"):])
        if target is not None:
            return target.schema.get("description") if isinstance(target.schema, dict) else None
    return node.get("description")


def _field_constraints(child: Any, resolved: Any, shown_type: str, shared: Mapping[str, SharedSchema]) -> list[Constraint]:
    found = _constraints(resolved, shown_type)
    items = resolved.get("items") if isinstance(resolved, dict) else None
    if isinstance(items, dict):  # an array: what each item must be (enum values through a $ref too)
        items_resolved, _ = _resolve(items, shared)
        found += [Constraint(f"each {item.label}", item.values) for item in _constraints(items_resolved, shown_type)]
    return found


def payload_rows(schema: Any, shared: Mapping[str, SharedSchema], *, details: bool = True) -> list[Row]:
    """The rows of a payload's field table; ``details=False`` leaves out each
    field's type and constraints (the search index reads names and descriptions only)."""
    rows: list[Row] = []

    def walk(node: Any, depth: int, trail: tuple[str, ...], seen: frozenset[str]) -> None:
        walk_resolved(*_resolve(node, shared), depth, trail, seen)

    def walk_resolved(node: Any, name: str | None, depth: int, trail: tuple[str, ...], seen: frozenset[str]) -> None:
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
            target = _target_name(child)
            if details:
                resolved, resolved_name = _resolve(child, shared)
                shown_type = _schema_type(child, shared)
                row = Row(
                    depth, field_name, shown_type, field_name in required,
                    _field_constraints(child, resolved, shown_type, shared),
                    resolved.get("description") if isinstance(resolved, dict) else None, "-".join(trail + (field_name,)),
                    target if target in shared else None,
                )
            else:
                row = Row(depth, field_name, "", field_name in required, [], _description(child, shared), "", None)
            rows.append(row)
            if target in seen:
                row.constraints.append(Constraint(f"recursive: {target}, as above"))
                continue
            if details:
                walk_resolved(resolved, resolved_name, depth + 1, trail + (field_name,), seen)
            else:
                walk(child, depth + 1, trail + (field_name,), seen)

    walk(schema, 0, (), frozenset())
    return rows


# Keywords next to a ``$ref`` that change which fields a walk finds: without
# them the fields under a shared schema are the same wherever it is used.
_WALKED = frozenset(("type", "items", "properties"))


def search_fields(schema: Any, shared: Mapping[str, SharedSchema],
                  memo: dict[tuple[str, frozenset[str]], list[tuple[str, Any]]]) -> list[tuple[str, Any]]:
    """(name, description) of each row ``payload_rows`` lists for ``schema``,
    in its order: what the search index reads. The fields under a shared
    schema are found once per ``memo`` (an index walks every payload, and
    payloads share their schemas)."""
    found: list[tuple[str, Any]] = []

    def walk(node: Any, seen: frozenset[str], into: list[tuple[str, Any]]) -> None:
        ref = node.get("$ref") if isinstance(node, dict) else None
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in shared \
                and _WALKED.isdisjoint(node):
            name = ref[len("#/$defs/"):]
            if name in seen:
                return
            key = (name, seen)
            known = memo.get(key)
            if known is None:
                known = []
                walk_resolved(shared[name].schema if isinstance(shared[name].schema, dict) else {}, seen | {name}, known)
                memo[key] = known
            into.extend(known)
            return
        node, name = _resolve(node, shared)
        if name is not None:
            if name in seen:
                return
            seen = seen | {name}
        walk_resolved(node, seen, into)

    def walk_resolved(node: Any, seen: frozenset[str], into: list[tuple[str, Any]]) -> None:
        if not isinstance(node, dict):
            return
        if node.get("type") == "array" or "items" in node:
            walk(node.get("items"), seen, into)
            return
        properties = node.get("properties")
        if not isinstance(properties, dict):
            return
        for field_name, child in properties.items():
            if isinstance(child, dict) and "$ref" not in child and "items" not in child:  # the common case, in short
                into.append((field_name, child.get("description")))
                if "properties" in child:
                    walk_resolved(child, seen, into)
                continue
            into.append((field_name, _description(child, shared)))
            if _target_name(child) in seen:
                continue
            walk(child, seen, into)

    walk(schema, frozenset(), found)
    return found


def _target_name(node: Any) -> str | None:
    """The shared schema a property (or its array items) refers to."""
    while isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return ref[len("#/$defs/"):]
        node = node.get("items")
    return None


def schema_path(name: str) -> str:
    """The page of a shared schema, relative to docs/."""
    return f"schemas/{safe_file_name(name)}.html"


def attributes(event: EventType) -> list[Attribute]:
    """The context attribute table: the event type's ``ContextAttribute``s, as rows."""
    rows = []
    for attribute in event.attributes:
        if not event.uses(attribute):
            continue
        if attribute.fixed is not None:
            text = attribute.fixed if attribute.name != "specversion" else "Always 1.0."
        else:
            text = attribute.meaning or attribute.default or ("When the event happened." if attribute.name == "time" else "Extension attribute.")
            if attribute.name == "datacontenttype":
                text = attribute.default or "application/json"
            if attribute.name == "time" and event.profile.time_required:
                text += f" Format: {event.profile.time_form}."
        rows.append(Attribute(attribute.name, attribute.type, "required" if attribute.required else "optional", text))
    return rows


def http_request(wire: dict[str, Any], path: str) -> str:
    """The example as a binary-mode HTTP request (HTTP binding §3.1)."""
    lines = [f"POST {path} HTTP/1.1"]
    for name, value in wire.items():
        if name in ("data", "datacontenttype"):
            continue
        lines.append(f"ce-{name}: {header_value(value)}")  # HTTP binding §3.1.3.2
    if "data" in wire:
        lines.append(f"content-type: {wire.get('datacontenttype', 'application/json')}")
        return "\n".join(lines) + "\n\n" + _json_block(wire["data"])
    return "\n".join(lines) + "\n"


def type_views(catalog_set: CatalogSet, only: Catalog | None = None, *, full: bool = True) -> list[TypeView]:
    """The event types of ``only`` (or of every catalog); ``full=False`` leaves
    out the attribute and payload tables, examples and changes (the index needs none)."""
    return _views(catalog_set, only.events if only is not None else catalog_set.events, full)


def full_views(catalog_set: CatalogSet, light: list[TypeView]) -> Iterator[TypeView]:
    """Each type of ``light`` (``full=False`` views) with its tables, one at a
    time: a page is rendered and its tables dropped before the next are made,
    so memory (and the garbage collector's work) does not grow with the catalog."""
    for view in light:
        yield _views(catalog_set, [version.event for version in view.versions], True)[0]


def _views(catalog_set: CatalogSet, events: Iterable[EventType], full: bool) -> list[TypeView]:
    views: dict[tuple[str, str], TypeView] = {}
    shared = catalog_set.schemas
    catalogs = {catalog.id: catalog for catalog in catalog_set.catalogs}
    for event in events:
        catalog = catalogs[event.catalog_id]
        key = (catalog.id, event.type)
        if key not in views:
            base = f"{safe_file_name(catalog.id)}/{safe_file_name(event.type)}"
            views[key] = TypeView(catalog, event.type, f"events/{base}.html", f"{base}.md")
        example_json = example_http = None
        if event.examples and full:
            wire = event.complete_example(event.examples[0].values)
            example_json = _json_block(wire)
            # the first webhook server (a catalog may list its Kafka or MQTT brokers too)
            server = next((server for server in catalog.servers if server.protocol in ("http", "https")), None)
            example_http = http_request(wire, (server.pathname if server and server.pathname else "/"))
        views[key].versions.append(
            VersionView(
                event,
                anchor=f"v{event.dataversion}" if event.dataversion else "notification",
                attributes=attributes(event) if full else [],
                rows=payload_rows(event.payload.schema, shared) if event.payload is not None and full else [],
                example_json=example_json,
                example_http=example_http,
                travel=travel(catalog, event) if full else [],
            )
        )
    for view in views.values():
        view.versions.sort(key=lambda v: semver_key(v.event.dataversion or ""), reverse=True)
        for newer, older in zip(view.versions, view.versions[1:]):
            newer.previous = older.event.dataversion
            if full:
                newer.changes = diff_events(older.event, newer.event, catalog_set, catalog_set)
    return sorted(views.values(), key=lambda v: (v.catalog.id, v.type))


def catalog_path(catalog_id: str) -> str:
    """The page of a catalog, relative to docs/."""
    return f"catalogs/{safe_file_name(catalog_id)}.html"


def link_url(url: str | None) -> str | None:
    """A contact URL as a link target: only http(s), anything else stays text."""
    return url if url and re.match(r"https?://", url, re.IGNORECASE) else None


@dataclass
class UsedBy:
    """One event (type, dataversion) that uses a shared schema."""

    event: EventType
    path: str  # relative to docs/, with the version's anchor


@dataclass
class SchemaView:
    schema: SharedSchema
    path: str
    type: str
    constraints: list[Constraint]
    rows: list[Row]
    json: str
    used_by: list[UsedBy]


def schema_views(catalog_set: CatalogSet) -> list[SchemaView]:
    """A page per shared schema, each listing the events that use it (directly or through another schema)."""
    users: dict[str, list[UsedBy]] = {name: [] for name in catalog_set.schemas}
    for event in catalog_set.events:
        if event.payload is None:
            continue
        anchor = f"v{event.dataversion}" if event.dataversion else "notification"
        page = f"events/{safe_file_name(event.catalog_id)}/{safe_file_name(event.type)}.html#{anchor}"
        for name in event.payload.uses:
            if name in users:
                users[name].append(UsedBy(event, page))
    views = []
    for name, schema in sorted(catalog_set.schemas.items()):
        shown_type = _schema_type(schema.schema, catalog_set.schemas)
        views.append(SchemaView(
            schema, schema_path(name), shown_type, _constraints(schema.schema, shown_type),
            payload_rows(schema.schema, catalog_set.schemas),
            _json_block(schema.schema),
            sorted(users[name], key=lambda used: (used.event.catalog_id, used.event.type, semver_key(used.event.dataversion or ""))),
        ))
    return views


def service_path(catalog_id: str, name: str) -> str:
    """The page of a service, relative to docs/."""
    return f"services/{safe_file_name(catalog_id)}/{safe_file_name(name)}.html"


def channel_path(catalog_id: str, name: str) -> str:
    """The page of a channel, relative to docs/."""
    return f"channels/{safe_file_name(catalog_id)}/{safe_file_name(name)}.html"


@dataclass
class EventLink:
    """One ``sends`` or ``receives`` entry of a service, with the event
    versions it names (a range: those in it) and its channel."""

    link: Link
    title: str | None  # the event type's title; None: not in the catalog
    versions: list[tuple[str, str]]  # (dataversion or "no data", page#anchor relative to docs/)
    channel: Channel | None


@dataclass
class ServiceView:
    service: Service
    path: str
    sends: list[EventLink]
    receives: list[EventLink]

    @property
    def search_text(self) -> str:
        service = self.service
        owner = service.owner.name if service.owner and service.owner.name else ""
        types = [entry.link.type for entry in self.sends + self.receives]
        return " ".join(filter(None, [service.name, service.title, service.description or "", owner, *types])).lower()


@dataclass
class ChannelView:
    channel: Channel
    path: str
    events: list[tuple[TypeView, list[VersionView]]]  # the (type, dataversions) published on it
    senders: list[Service]
    receivers: list[Service]

    @property
    def bindings(self) -> list[tuple[str, str]]:
        return [(str(key), _json_text(value)) for key, value in self.channel.bindings]

    @property
    def search_text(self) -> str:
        channel = self.channel
        return " ".join(filter(None, [channel.name, channel.protocol, channel.address, channel.description or "",
                                      *(view.type for view, _ in self.events)])).lower()


def _event_link(link: Link, sends: bool, views: Mapping[str, TypeView], channels: Mapping[str, Channel]) -> EventLink:
    view = views.get(link.type)
    versions = []
    if view is not None:
        versions = [(version.event.dataversion or "no data", f"{view.path}#{version.anchor}")
                    for version in view.versions
                    if (link.sends(version.event) if sends else link.receives(view.type, version.event.dataversion))]
    return EventLink(link, view.latest.event.title if view else None, versions,
                     channels.get(link.channel) if link.channel else None)


def service_views(catalog: Catalog, types: list[TypeView]) -> list[ServiceView]:
    """A page per service of the catalog: what it sends and receives, where."""
    views = {view.type: view for view in types}
    channels = {channel.name: channel for channel in catalog.channels}
    return [
        ServiceView(service, service_path(catalog.id, service.name),
                    [_event_link(link, True, views, channels) for link in service.sends],
                    [_event_link(link, False, views, channels) for link in service.receives])
        for service in catalog.services
    ]


def channel_views(catalog: Catalog, types: list[TypeView]) -> list[ChannelView]:
    """A page per channel of the catalog: the events on it, who sends and receives there."""
    result = []
    # Each event's channels, asked once (not once per channel: a catalog of hundreds of services and channels).
    travels = {id(version): {c.name for c in catalog.channels_of(version.event)} for view in types for version in view.versions}
    for channel in catalog.channels:
        events = []
        for view in types:
            on = [version for version in view.versions if channel.name in travels[id(version)]]
            if on:
                events.append((view, on))
        senders = _unique(service for service in catalog.services for link in service.sends if link.channel == channel.name)
        receivers = _unique(service for service in catalog.services for link in service.receives
                            if link.channel == channel.name)
        result.append(ChannelView(channel, channel_path(catalog.id, channel.name), events, senders, receivers))
    return result


def service_map(catalog: Catalog) -> ServiceMap | None:
    """The catalog's service diagram (none without services)."""
    if not catalog.services:
        return None
    return service_map_layout(catalog, lambda name: service_path(catalog.id, name),
                              lambda name: channel_path(catalog.id, name))


def timeline(catalog: Catalog, types: list[TypeView], root: str) -> Any:
    producer = catalog.producer
    return layout(
        producer.organization or catalog.title, producer.source,
        [TypeVersions(view.type, root + view.path, tuple((v.event.dataversion, v.event.deprecated) for v in view.versions))
         for view in types],
    )


def search_index(catalog_set: CatalogSet, types: list[TypeView], schemas: list[SchemaView]) -> str:
    """The search index, a script that sets one global (``fetch`` of a file
    next to the page does not work from the file system): per event type and
    shared schema its page, what a result shows, and the lowercase text a
    query searches (types, titles, descriptions, field names and the words
    of field descriptions)."""
    titles = {catalog.id: catalog.title for catalog in catalog_set.catalogs}
    memo: dict[tuple[str, frozenset[str]], list[tuple[str, Any]]] = {}
    entries = []
    # A text's lowercase words, once per text: field descriptions repeat
    # across payloads, and a dict takes the same word objects faster (their
    # hash is kept). (Lowering texts one by one gives the words of lowering
    # them joined by spaces: a space is neither cased nor case-ignorable, so
    # no final sigma changes.)
    known_words: dict[str, list[str]] = {}

    def words_of(text: str) -> list[str]:
        found = known_words.get(text)
        if found is None:
            found = known_words[text] = text.lower().split()
        return found

    for view in types:
        fields: dict[str, Any] = {}  # the names, in order, each once (as keys)
        texts: list[str] = []  # their words, in order, each once
        for version in view.versions:
            event = version.event
            texts += (event.title, event.description or "")
            if event.payload is not None:
                found = search_fields(event.payload.schema, catalog_set.schemas, memo)
                fields.update(found)
                texts += filter(None, map(itemgetter(1), found))
        words = dict.fromkeys(chain.from_iterable(map(words_of, texts)))
        entries.append({
            "kind": "event", "title": view.latest.event.title, "name": view.type, "catalog": titles[view.catalog.id],
            "url": view.path, "versions": [v.event.dataversion or "no data" for v in view.versions],
            "deprecated": view.latest.event.deprecated, "fields": list(fields),
            "text": " ".join([view.type.lower(), view.catalog.id, *map(str.lower, fields), *words]),
        })
    for catalog in catalog_set.catalogs:
        if not catalog.services and not catalog.channels:
            continue
        own = [view for view in types if view.catalog.id == catalog.id]
        for service in service_views(catalog, own):
            entries.append({
                "kind": "service", "title": service.service.title, "name": service.service.name,
                "catalog": f"{titles[catalog.id]} · service", "url": service.path, "versions": [], "deprecated": False,
                "fields": [], "text": service.search_text,
            })
        for channel in channel_views(catalog, own):
            entries.append({
                "kind": "channel", "title": channel.channel.name, "name": channel.channel.name,
                "catalog": f"{titles[catalog.id]} · {channel.channel.protocol} channel {channel.channel.address}",
                "url": channel.path,
                "versions": [], "deprecated": False, "fields": [], "text": channel.search_text,
            })
    for schema in schemas:
        fields = dict.fromkeys(row.name for row in schema.rows)
        description = schema.schema.description or ""
        entries.append({
            "kind": "schema", "title": schema.schema.name, "name": schema.type, "catalog": "shared schema",
            "url": schema.path, "versions": [], "deprecated": False, "fields": list(fields),
            "text": " ".join([schema.schema.name.lower(), *(name.lower() for name in fields), *dict.fromkeys(description.lower().split())]),
        })
    return "window.EVCAT_SEARCH_INDEX = " + compact_json(entries) + ";\n"


def units(catalog_set: CatalogSet) -> list[Unit]:
    """The pages of each catalog (its own page and its event types), and the
    index: the overview, the shared schema pages and the search index (every
    catalog and schema is their input)."""
    result = [Unit("docs", catalog.id, catalog_inputs(catalog, catalog_set), _render_catalog) for catalog in catalog_set.catalogs]
    schemas = tuple(schema for _, schema in sorted(catalog_set.schemas.items()))
    result.append(Unit("docs", "index", (catalog_set.catalogs, schemas), _render_index, local=True))
    return result


def _environment(env: Any) -> Any:
    """``env`` with the docs' filters and globals."""
    env.filters["markdown"] = markdown
    env.globals.update(catalog_path=catalog_path, schema_path=schema_path, link_url=link_url, profiles=ProfileTitles(),
                       version=__version__, service_path=service_path, channel_path=channel_path)
    return env


def warm_up(code: Any = None) -> None:
    """Compile the docs templates (what the first page of a process would
    otherwise wait for): done by ``evcat generate`` before its workers fork,
    so they inherit them. In the environment the docs units render in (that
    of the docs templates, ``outputs.units``; a ``--templates`` directory
    makes another). Not the Markdown parser: most descriptions are plain
    text that ``markdown`` renders without it, and a process that meets
    another imports it then."""
    from ..outputs import RENDERERS

    env = _environment(environment(template_set(RENDERERS["docs"].templates), code))
    for name in env.list_templates():
        if name.startswith("docs/"):
            env.get_template(name)


def warm_children() -> None:
    """Before a process renders pages of ``--templates`` templates in children
    (``templates.render_unit``): the Markdown parser, made once here instead
    of in every child."""
    _markdown_parser()


def _by_domain(types: list[TypeView]) -> list[tuple[str, list[TypeView]]]:
    domains: dict[str, list[TypeView]] = {}
    for view in types:
        domains.setdefault(view.domain, []).append(view)
    return sorted(domains.items())


def _render_index(inputs: tuple[Any, ...], env: Any) -> dict[str, bytes]:
    catalogs, schemas = inputs
    env = _environment(env)
    catalog_set = partial_set(catalogs, schemas)
    types = type_views(catalog_set, full=False)
    shared = schema_views(catalog_set)
    by_catalog: dict[str, list[TypeView]] = {catalog.id: [] for catalog in catalogs}
    for view in types:
        by_catalog[view.catalog.id].append(view)
    context = {"catalogs": sorted(catalogs, key=lambda c: c.id), "types": types, "by_catalog": by_catalog, "schemas": shared}
    files = {
        "docs/index.html": env.get_template("docs/index.html.jinja").render(context, root="", nav_catalog=None),
        "docs/assets/style.css": env.get_template("docs/style.css").render(),
        "docs/assets/search.js": env.get_template("docs/search.js").render(),
        "docs/assets/docs.js": env.get_template("docs/docs.js").render(),
        "docs/assets/search-index.js": search_index(catalog_set, types, shared),
        "docs/markdown/index.md": env.get_template("docs/index.md.jinja").render(context),
    }
    schema_template = env.get_template("docs/schema.html.jinja")
    for view in shared:
        files[f"docs/{view.path}"] = schema_template.render(page=view, root="../", nav_catalog=None)
    return {path: text.encode("utf-8") for path, text in files.items()}


def _render_catalog(inputs: tuple[Any, ...], env: Any) -> dict[str, bytes]:
    catalog, schemas = inputs
    env = _environment(env)
    catalog_set = partial_set((catalog,), schemas)
    types = type_views(catalog_set, catalog, full=False)
    files: dict[str, str] = {}
    page_path = catalog_path(catalog.id)
    services, channels = service_views(catalog, types), channel_views(catalog, types)
    files[f"docs/{page_path}"] = env.get_template("docs/catalog.html.jinja").render(
        catalog=catalog, types=types, domains=_by_domain(types), timeline=timeline(catalog, types, "../"),
        root="../", nav_catalog=catalog, services=services, channels=channels, map=service_map(catalog),
    )
    service_template = env.get_template("docs/service.html.jinja")
    for service in services:
        files[f"docs/{service.path}"] = service_template.render(page=service, catalog=catalog, root="../../",
                                                                nav_catalog=catalog)
    channel_template = env.get_template("docs/channel.html.jinja")
    for channel in channels:
        files[f"docs/{channel.path}"] = channel_template.render(page=channel, catalog=catalog, root="../../",
                                                                nav_catalog=catalog)
    event_template = env.get_template("docs/event.html.jinja")
    markdown_template = env.get_template("docs/event.md.jinja")
    for view in full_views(catalog_set, types):
        files[f"docs/{view.path}"] = event_template.render(page=view, root="../" * view.path.count("/"), nav_catalog=catalog)
        files[f"docs/markdown/{view.markdown_path}"] = markdown_template.render(
            page=view, root="../" * (view.markdown_path.count("/") + 2)
        )
    return {path: text.encode("utf-8") for path, text in files.items()}


def render(catalog_set: CatalogSet) -> dict[str, bytes]:
    from ..outputs import units as bound_units  # with the built-in templates bound

    return render_all(bound_units("docs", catalog_set))
