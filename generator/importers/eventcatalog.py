"""`evcat import eventcatalog`: an EventCatalog project folder (contract §10).

EventCatalog (https://www.eventcatalog.dev; the collections of
``@eventcatalog/core``'s ``content.config.ts``) keeps each resource as a
Markdown page (``index.md`` or ``index.mdx``) whose YAML front matter says
what it is. What this import reads, by the paths EventCatalog itself globs:

- events: ``**/events/<name>/index.md(x)`` (the latest version) and
  ``**/events/<name>/versioned/<version>/index.md(x)``: one event type per
  version (``dataversion`` = ``version``), the CloudEvents ``type`` being
  the event's ``id`` under ``--type-prefix``; the payload schema from
  ``schemaPath`` (JSON Schema in JSON or YAML; draft-07 and 2019-09 read
  as 2020-12, ``definitions``/``$defs`` moved to the catalog's ``schemas``);
- services: ``**/services/<name>/index.md(x)``: ``sends`` and ``receives``
  of events, with the channels of their ``to``/``from``, and the first
  owner team as ``owner``;
- channels: ``**/channels/**/index.md(x)``: ``address`` (with its
  ``{parameters}``) and the first of ``protocols`` that the catalog format
  knows (kafka, amqp, mqtt, http);
- domains: ``**/domains/<name>/index.md(x)``: one catalog file per domain
  (one catalog id for the project), holding the events and services under
  the domain's folder.

Everything else is a located note (file, line, JSON pointer into the front
matter): commands and queries (EventCatalog messages that are not events),
Avro or Protobuf schemas, channels on protocols the format does not know,
older versions of services and channels, routes and delivery guarantees,
specifications, entities, flows and the rest.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..loader import MAX_FILE_BYTES, UnsafeFile, load_text, read_catalog_bytes
from ..string_formats import is_semver
from . import Imported, Note, Options, SourceError
from .asyncapi import PROTOCOLS as ASYNCAPI_PROTOCOLS
from .schemas import SchemaImporter
from .sources import Refs

PAGES = ("index.md", "index.mdx")
SKIPPED_FOLDERS = frozenset(("node_modules", "dist", ".eventcatalog-core", "public", ".git"))
# A channel page's protocols: EventCatalog's AsyncAPI generator copies the AsyncAPI
# server protocol (kafka-secure, secure-mqtt, amqps ...), so AsyncAPI's names
# (one home: the asyncapi importer) plus EventCatalog's own.
PROTOCOLS = {**ASYNCAPI_PROTOCOLS, "amqp1": "amqp", "rabbitmq": "amqp", "webhook": "http", "webhooks": "http"}
SCHEMA_SUFFIXES = (".json", ".yaml", ".yml")  # JSON Schema files (an Avro schema is .avsc, Protobuf .proto)
EXACT_SCHEMA = "data.schema.json"  # what evcat's export (render/eventcatalog.py) writes beside schema.json
NO_DATA_BADGE = "no data"  # ... and the badge of an event without data
_RANGE = re.compile(r"[\^~<>=*xX| ]")  # an npm semver range rather than one version

# The EventCatalog collections by their folders (content.config.ts globs).
_MESSAGE = re.compile(r"(?:^|/)(events|commands|queries)/([^/]+)/(?:versioned/([^/]+)/)?index\.mdx?$")
_SERVICE = re.compile(r"(?:^|/)services/([^/]+)/(?:versioned/([^/]+)/)?index\.mdx?$")
_CHANNEL = re.compile(r"(?:^|/)channels/(?:[^/]+/)*?(?:versioned/([^/]+)/)?index\.mdx?$")
_DOMAIN = re.compile(r"(?:^|/)domains/([^/]+)/(?:subdomains/([^/]+)/)?(?:versioned/([^/]+)/)?index\.mdx?$")
_TEAM = re.compile(r"(?:^|/)teams/[^/]+\.mdx?$")


@dataclass
class Page:
    """One EventCatalog page: its front matter with the location of each value."""

    file: str  # as shown
    path: Path
    relative: str  # to the project folder, with /
    value: dict[str, Any]
    document: Any  # loader.Document of the front matter

    def note(self, keys: tuple[str | int, ...], message: str, kind: str = "not carried") -> Note:
        location = self.document.loc(keys)
        return Note(self.file, _pointer(keys), message, location.line + 1, location.column, kind)  # +1: the --- line


def _pointer(keys: tuple[str | int, ...]) -> str:
    return "".join("/" + str(key).replace("~", "~0").replace("/", "~1") for key in keys)


def front_matter(text: str) -> tuple[str, str] | None:
    """(YAML front matter, body) of a Markdown page, or None without one
    (front matter: YAML between a first line ``---`` and the next ``---``)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None
    for number in range(1, len(lines)):
        if lines[number].strip() in ("---", "..."):
            return "".join(lines[1:number]), "".join(lines[number + 1:])
    return None


def _read_page(path: Path, root: Path, notes: list[Note]) -> Page | None:
    display = str(path)
    try:  # the catalog loader's checks: a regular file, no link out of the project, bounded size
        raw = read_catalog_bytes(str(path), str(root))
        if len(raw) > MAX_FILE_BYTES:
            raise UnsafeFile(f"larger than the limit of {MAX_FILE_BYTES // 2**20} MiB")
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        notes.append(Note(display, "", f"page not read: {getattr(error, 'strerror', None) or error}"))
        return None
    split = front_matter(text)
    if split is None:
        notes.append(Note(display, "", "no front matter (YAML between --- lines): not an EventCatalog resource", 1, 1))
        return None
    document = load_text(split[0], display)
    problems = [d for d in document.diagnostics if d.rule in ("CAT-YAML", "CAT-DUPLICATE-KEY")]
    if problems or not isinstance(document.value, dict):
        first = problems[0] if problems else None
        message = first.message if first else "the front matter is not a mapping"
        line = first.location.line + 1 if first else 2
        notes.append(Note(display, "", f"front matter not read: {message}", line, first.location.column if first else 1))
        return None
    return Page(display, path, path.relative_to(root).as_posix(), document.value, document)


def _pages(root: Path, notes: list[Note]) -> list[Page]:
    pages: list[Page] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_FOLDERS and not d.startswith("."))
        for name in sorted(files):
            path = Path(directory) / name
            relative = path.relative_to(root).as_posix()
            if name in PAGES or _TEAM.search(relative):
                page = _read_page(path, root, notes)
                if page is not None:
                    pages.append(page)
    return pages


# -- names and versions ------------------------------------------------------


def kebab(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", text).lower())
    name = "-".join(words)
    return name if name and name[0].isalpha() else f"c-{name}" if name else "eventcatalog"


def semver(value: Any) -> str | None:
    """``value`` as MAJOR.MINOR.PATCH: ``1`` and ``1.2`` filled in with zeros; None when it is no version."""
    text = str(value).strip() if isinstance(value, (str, int, float)) and not isinstance(value, bool) else ""
    if re.fullmatch(r"(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)){0,2}", text):
        parts = text.split(".")
        return ".".join(parts + ["0"] * (3 - len(parts)))
    return text if is_semver(text) else None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


# -- payload schemas -----------------------------------------------------------


def _payload(page: Page, event_id: str, refs: Refs, importer: SchemaImporter, notes: list[Note]) -> dict[str, Any]:
    """The catalog ``data`` of an event page: its JSON Schema file converted
    by the importers' one converter (``schemas.SchemaImporter``: ``$ref``s
    followed with ``referencing`` inside the project folder, older dialects
    brought to 2020-12), or ``{}`` (any JSON) with a note when the page has
    no schema the catalog can carry."""
    schema_path = page.value.get("schemaPath")
    pointers = [p for p in page.value.get("schemas") or [] if isinstance(p, dict) and isinstance(p.get("path"), str)]
    if not isinstance(schema_path, str) and pointers:  # `schemas: [{path, format, default}]` (content.config.ts)
        chosen = next((p for p in pointers if p.get("default") is True), pointers[0])
        schema_path = chosen["path"]
        if len(pointers) > 1:
            notes.append(page.note(("schemas",), f"event {event_id!r} has {len(pointers)} schemas: {schema_path!r} "
                                   "is its payload, the others are not carried"))
    folder = page.path.parent
    if (folder / EXACT_SCHEMA).is_file():  # evcat's own export: the exact payload schema beside the viewer's
        schema_path = EXACT_SCHEMA
    if not isinstance(schema_path, str):
        candidates = [name for name in ("schema.json", "schema.yaml", "schema.yml") if (folder / name).is_file()]
        if not candidates:
            notes.append(page.note(("id",), f"event {event_id!r} has no schema (schemaPath): the payload is not "
                                   "described, the catalog's data accepts any JSON", kind="derived"))
            return {}
        schema_path = candidates[0]
    where = ("schemaPath",) if "schemaPath" in page.value else ("schemas",) if pointers else ("id",)
    if not schema_path.endswith(SCHEMA_SUFFIXES):
        notes.append(page.note(where, f"schema {schema_path!r} is not JSON Schema (Avro, Protobuf and other formats "
                               "cannot be carried): the catalog's data accepts any JSON"))
        return {}
    try:
        source = refs.load(folder / schema_path, str(folder / schema_path))
    except SourceError as error:  # outside the project, missing, not YAML or JSON: said where, and carried on
        notes.append(replace(error.note, kind="not carried"))
        notes.append(page.note(where, f"schema {schema_path!r} not read (see the note on it): the catalog's data "
                               "accepts any JSON"))
        return {}
    if not isinstance(source.value, dict):
        notes.append(page.note(where, f"schema {schema_path!r} is not a JSON Schema object: the catalog's data "
                               "accepts any JSON"))
        return {}
    data = importer.convert(source.value, source.uri + "#")
    return data if isinstance(data, dict) else {}


def merge_equal_schemas(shared: dict[str, Any], roots: list[Any]) -> None:
    """One shared schema for equal ones: each event file's ``$defs`` become
    shared schemas of their own (``EanCode``, ``EanCode2``, ...); those that
    are equal, once their own references are merged, are one (in place)."""
    while True:
        first: dict[str, str] = {}
        alias: dict[str, str] = {}
        for name, schema in shared.items():
            key = json.dumps(schema, sort_keys=True)
            if key in first:
                alias[f"#/schemas/{name}"] = f"#/schemas/{first[key]}"
            else:
                first[key] = name
        if not alias:
            return
        for ref in alias:
            del shared[ref[len("#/schemas/"):]]

        for schema in [*shared.values(), *roots]:
            _rename_refs(schema, alias)


def _rename_refs(node: Any, alias: dict[str, str]) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str) and node["$ref"] in alias:
            node["$ref"] = alias[node["$ref"]]
        for key, value in node.items():
            if key not in ("enum", "const", "examples", "default"):
                _rename_refs(value, alias)
    elif isinstance(node, list):
        for item in node:
            _rename_refs(item, alias)


# -- the project -----------------------------------------------------------------


@dataclass
class _Event:
    page: Page
    id: str
    version: str
    latest: bool
    domain: str | None


def _domain_of(relative: str, domains: dict[str, str]) -> str | None:
    """The id of the innermost domain whose folder holds ``relative``."""
    best, depth = None, -1
    for folder, domain_id in domains.items():
        if relative.startswith(folder + "/") and folder.count("/") > depth:
            best, depth = domain_id, folder.count("/")
    return best


def _config(root: Path) -> dict[str, str]:
    """``title`` and ``organizationName`` of ``eventcatalog.config.js`` (read as text: it is JavaScript)."""
    try:
        text = (root / "eventcatalog.config.js").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found = {}
    for key in ("title", "organizationName"):
        match = re.search(rf"(?<![\w$])(['\"]?){key}\1\s*:\s*(['\"])(.*?)\2", text)
        if match:
            found[key] = match.group(3)
    return found


def read(sources: Sequence[Path], options: Options) -> Imported:
    imported = Imported()
    for root in sources:
        one = _project(Path(root), options)
        for name, document in one.documents.items():
            imported.documents[name if name not in imported.documents else f"{Path(root).name}-{name}"] = document
        imported.notes.extend(one.notes)
    return imported


def _project(root: Path, options: Options) -> Imported:
    notes: list[Note] = []
    if not root.is_dir():
        raise SourceError(Note(str(root), "", "not a folder: an EventCatalog project is a folder", kind="error"))
    pages = _pages(root, notes)
    config = _config(root)
    catalog_id = options.catalog_id or kebab(config.get("title") or root.resolve().name)
    prefix = options.type_prefix
    teams = {page.value.get("id"): page for page in pages if _TEAM.search(page.relative) and page.value.get("id")}

    domains: dict[str, str] = {}  # folder -> domain id
    domain_pages: dict[str, Page] = {}
    events: list[_Event] = []
    services: list[tuple[Page, str]] = []
    channels: list[Page] = []
    for page in pages:
        relative = page.relative
        match = _MESSAGE.search(relative)
        if match:
            collection, folder, versioned = match.groups()
            page_id = _text(page.value.get("id")) or folder
            if collection != "events":
                notes.append(page.note(("id",), f"{collection[:-1] if collection != 'queries' else 'query'} "
                                       f"{page_id!r}: EventCatalog {collection} are not events; not carried"))
                continue
            version = semver(page.value.get("version", versioned))
            if version is None:
                notes.append(page.note(("version",), f"event {page_id!r}: version {page.value.get('version')!r} is "
                                       "not MAJOR.MINOR.PATCH: not carried"))
                continue
            events.append(_Event(page, page_id, version, versioned is None, None))
            continue
        match = _SERVICE.search(relative)
        if match:
            if match.group(2) is not None:
                notes.append(page.note(("version",), f"service {page.value.get('id')!r}: older version "
                                       f"{page.value.get('version')!r} not carried (the catalog keeps the latest)"))
            else:
                services.append((page, _text(page.value.get("id")) or match.group(1)))
            continue
        match = _CHANNEL.search(relative)
        if match:
            if match.group(1) is not None:
                notes.append(page.note(("version",), f"channel {page.value.get('id')!r}: older version not carried"))
            else:
                channels.append(page)
            continue
        match = _DOMAIN.search(relative)
        if match and match.group(3) is None:
            domain_id = kebab(_text(page.value.get("id")) or match.group(2) or match.group(1))
            domains[relative.rsplit("/", 1)[0]] = domain_id
            domain_pages[domain_id] = page
            continue
        if _TEAM.search(relative):
            continue
        kind = relative.split("/")[-3] if relative.count("/") >= 2 else "page"
        notes.append(Note(page.file, "", f"{kind} page not carried (the catalog has events, services and channels)", 1, 1))

    # Event types: one per (id, version); the type is the id under --type-prefix.
    def type_of(event_id: str) -> str:
        if not prefix:
            return event_id
        return prefix + event_id if prefix.endswith(".") else f"{prefix}.{event_id}"

    refs = Refs(root)
    schemas: dict[str | None, SchemaImporter] = {}  # by domain: a $ref is to the schemas of its own file (§1)
    versions: dict[str, list[str]] = {}
    by_domain: dict[str | None, list[dict[str, Any]]] = {}
    seen: set[tuple[str, str]] = set()
    for event in events:
        if (event.id, event.version) in seen:
            notes.append(event.page.note(("version",), f"event {event.id!r} version {event.version} appears twice: "
                                         "the second not carried"))
            continue
        seen.add((event.id, event.version))
        value = event.page.value
        badges = {b.get("content") for b in value.get("badges") or [] if isinstance(b, dict)}
        notification = NO_DATA_BADGE in badges and "schemaPath" not in value
        versions.setdefault(event.id, [])
        if not notification:  # a notification has no dataversion (§1): links to it name none
            versions[event.id].append(event.version)
        entry: dict[str, Any] = {"type": type_of(event.id)}
        if not notification:
            entry["dataversion"] = event.version
        entry["title"] = _text(value.get("name")) or event.id
        summary = _text(value.get("summary"))
        entry["description"] = summary or f"The EventCatalog event {event.id!r}."
        deprecated = value.get("deprecated")
        if deprecated:
            message = deprecated.get("message") if isinstance(deprecated, dict) else None
            entry["deprecated"] = _text(message) or True
        domain = _domain_of(event.page.relative, domains)
        if not notification:
            importer = schemas.get(domain) or schemas.setdefault(domain, SchemaImporter(refs, notes))
            entry["data"] = _payload(event.page, event.id, refs, importer, notes)
        for key in ("channels", "producers", "consumers", "specifications", "operation"):
            if key in value:
                notes.append(event.page.note((key,), f"event {event.id!r}: {key} not carried"
                                             + (" (channels come from the services' sends and receives)"
                                                if key == "channels" else "")))
        by_domain.setdefault(domain, []).append(entry)

    # Channels: the ones the catalog format can carry.
    channel_entries: dict[str, dict[str, Any]] = {}
    for page in channels:
        value = page.value
        channel_id = _text(value.get("id")) or page.path.parent.name
        protocols = [p for p in value.get("protocols") or [] if isinstance(p, str)]
        protocol = next((PROTOCOLS[p.lower()] for p in protocols if p.lower() in PROTOCOLS), None)
        if protocol is None:
            notes.append(page.note(("protocols",) if protocols else ("id",),
                                   f"channel {channel_id!r}: protocol {', '.join(protocols) or '(none)'} is not one of "
                                   "kafka, amqp, mqtt, http: channel not carried"))
            continue
        entry = {"protocol": protocol}
        address = _text(value.get("address"))
        if address is None:
            notes.append(page.note(("id",), f"channel {channel_id!r} has no address: its id is the address",
                                   kind="derived"))
        entry["address"] = address or channel_id
        description = _text(value.get("summary"))
        if description:
            entry["description"] = description
        for key in ("parameters", "routes", "deliveryGuarantee", "messages"):
            if key in value:
                what = "descriptions of the address parameters" if key == "parameters" else key
                notes.append(page.note((key,), f"channel {channel_id!r}: {what} not carried"))
        channel_entries[channel_id] = entry

    # Services: their sends and receives of the events imported.
    service_entries: dict[str | None, dict[str, Any]] = {}
    for page, service_id in services:
        value = page.value
        service: dict[str, Any] = {"title": _text(value.get("name")) or service_id}
        summary = _text(value.get("summary"))
        if summary:
            service["description"] = summary
        owners = [o if isinstance(o, str) else o.get("id") if isinstance(o, dict) else None for o in value.get("owners") or []]
        team = next((teams[o] for o in owners if o in teams), None)
        if team is not None:
            owner = {"name": _text(team.value.get("name")) or str(team.value.get("id"))}
            if _text(team.value.get("email")):
                owner["email"] = team.value["email"].strip()
            service["owner"] = owner
        for direction, channel_key in (("sends", "to"), ("receives", "from")):
            links: list[dict[str, Any]] = []
            for index, pointer in enumerate(value.get(direction) or []):
                if not isinstance(pointer, dict) or not isinstance(pointer.get("id"), str):
                    continue
                message_id = pointer["id"]
                if message_id not in versions:
                    notes.append(page.note((direction, index, "id"), f"service {service_id!r} {direction} "
                                           f"{message_id!r}, not an event of this project (a command, a query or "
                                           "another catalog's): not carried"))
                    continue
                link: dict[str, Any] = {"type": type_of(message_id)}
                version = pointer.get("version")
                if version not in (None, "latest") and versions[message_id]:
                    exact = semver(version)
                    if exact is not None and exact in versions[message_id]:
                        link["dataversion"] = exact
                    elif direction == "receives" and isinstance(version, str) and _RANGE.search(version):
                        link["dataversion"] = version
                    else:
                        notes.append(page.note((direction, index, "version"), f"version {version!r} of {message_id!r} "
                                               "is not one of its versions: any version"))
                targets = [c.get("id") for c in pointer.get(channel_key) or [] if isinstance(c, dict)]
                carried = [c for c in targets if c in channel_entries]
                for position, channel in enumerate(targets):
                    if channel not in channel_entries:
                        notes.append(page.note((direction, index, channel_key, position),
                                               f"channel {channel!r} is not carried (see its note): the link has no channel"))
                if carried:
                    links.extend({**link, "channel": channel} for channel in carried)
                else:
                    links.append(link)
            if links:
                service[direction] = links
        domain = _domain_of(page.relative, domains)
        service_entries.setdefault(domain, {})[service_id] = service

    # Documents: one per domain with events (and one for events outside any domain).
    producer = {"source": f"urn:eventcatalog:{catalog_id}"}
    if config.get("organizationName"):
        producer["organization"] = config["organizationName"]
    notes.append(Note(str(root), "", f"the events' source is {producer['source']!r} (EventCatalog does not name "
                      "CloudEvents sources); set producer.source to the real one", kind="derived"))
    documents: dict[str, dict[str, Any]] = {}
    homes = [d for d in by_domain if d is not None] + ([None] if None in by_domain else [])
    for domain in homes:
        home = domain_pages.get(domain) if domain else None
        document: dict[str, Any] = {"catalog": catalog_id, "title": config.get("title") or catalog_id}
        description = _text(home.value.get("summary")) if home else None
        if home is not None:
            document["description"] = (f"Domain {_text(home.value.get('name')) or domain}"
                                       + (f": {description}" if description else "."))
        document["version"] = "1.0.0"
        document["profile"] = options.profile
        document["producer"] = dict(producer)
        documents[f"{domain or catalog_id}.yaml"] = document
    if not documents:
        notes.append(Note(str(root), "", "no events found: no catalog written", kind="error"))
        return Imported({}, notes)
    first = next(iter(documents.values()))
    for domain, importer in schemas.items():
        merge_equal_schemas(importer.shared, [event["data"] for event in by_domain[domain] if "data" in event])
        if importer.shared:
            documents[f"{domain or catalog_id}.yaml"]["schemas"] = importer.shared
    if channel_entries:
        first["channels"] = channel_entries
    for domain, entries in service_entries.items():
        target = documents.get(f"{domain}.yaml") if domain else documents.get(f"{catalog_id}.yaml")
        (target or first).setdefault("services", {}).update(entries)
    for domain in homes:
        documents[f"{domain or catalog_id}.yaml"]["events"] = by_domain[domain]
    return Imported(documents, notes)
