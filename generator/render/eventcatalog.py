"""An EventCatalog content tree (``evcat generate --only eventcatalog``).

EventCatalog (https://www.eventcatalog.dev, checked against @eventcatalog/core
3.48.4 and its ``content.config.ts``) reads Markdown files with YAML front
matter from a project directory. Under ``OUT/eventcatalog/`` we write:

- ``eventcatalog.config.js``, ``package.json``, ``package-lock.json``,
  ``.nvmrc`` and ``.gitignore``: ``npm install && npx eventcatalog build``
  (``BUILD_COMMAND``) builds the site as it is. EventCatalog 3 runs on Astro
  6, which refuses a Node.js older than 22.12; the project depends on npm's
  ``node`` package (``NODE_VERSION``), so npx runs EventCatalog with that
  Node.js whatever the machine's is. The lock file is evcat's
  (``generator/data/eventcatalog/package-lock.json``, written by npm from
  this ``package.json``: ``python3 -m tests.eventcatalog_lock``);
- ``teams/<catalog>-producer.md``: the producer (organization, contact), the
  owner of everything in its catalog;
- ``domains/<catalog>/index.md``: a domain per catalog;
- ``domains/<catalog>/services/<catalog>-producer/index.md``: the producer as
  the service that sends the catalog's events;
- when the catalog has services (catalog-format.md §9), instead of the
  producer: ``domains/<catalog>/services/<catalog>.<service>/index.md`` per
  service, with its ``sends`` (``to`` its channels) and ``receives`` (``from``
  them; a dataversion range is kept: EventCatalog matches versions with npm's
  semver, as evcat does), its owner a team ``teams/<catalog>.<owner>.md``, and
  the events in ``domains/<catalog>/events/``;
- ``domains/<catalog>/channels/<catalog>.<channel>/index.md`` per channel:
  ``address``, ``protocols`` and the address's ``parameters``, its bindings
  and the event versions on it in the body. Events name no ``channels``
  (EventCatalog 3's old API, which its build migrates into the services,
  overwriting their ``to`` and ``from``). Service and channel ids carry the
  catalog id: EventCatalog's ids are global, evcat's names are per catalog;
- ``.../events/<type>/index.md`` for the latest dataversion of each type and
  ``.../events/<type>/versioned/<dataversion>/index.md`` for the older ones,
  each with ``schema.json`` (shown by EventCatalog's schema viewer),
  ``data.schema.json`` (the exact payload schema) and ``changelog.md``.

Pages are ``.md``, never ``.mdx``: MDX would evaluate ``{...}`` in a
catalog's text as JavaScript at build time. Catalog text goes through the
``md_text`` filter (HTML shown as text) and front matter through a YAML
dumper, so nothing in a catalog can become markup or code. EventCatalog's
schema viewer does not follow ``$ref``; ``schema.json`` has the shared
schemas inlined, a recursive reference (or one deeper than ``MAX_DEPTH``)
replaced by a stub that names the schema (see ``data.schema.json`` for the
exact schema).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from importlib import resources
from typing import Any

import yaml

from .. import __version__
from ..model import Catalog, CatalogSet, Contact, Link, SharedSchema
from ..naming import safe_file_name
from . import Unit, catalog_inputs, dump_json, partial_set, render_all
from .docs import TypeView, VersionView, channel_views, full_views, service_views, type_views
from .templates import md_cell, md_text

EVENTCATALOG_VERSION = "3.48.4"  # the version the tests build with (and the lock file pins)
# Astro 6 (EventCatalog 3) needs Node.js >= 22.12: the project brings its own
# (npm's `node` package puts it first on npx's PATH); `engines` and `.nvmrc` say so.
NODE_VERSION = "22.23.3"
NODE_ENGINES = ">=22.12.0"
# @scalar/api-reference-react 0.9.83 (what EventCatalog's ^0.9.36 picks) needs
# an @scalar/api-reference the registry does not have (ETARGET): the newest that installs.
OVERRIDES = {"@scalar/api-reference-react": "0.9.74"}
BUILD_COMMAND = "npm install && npx eventcatalog build"
LOCK_FILE = "data/eventcatalog/package-lock.json"  # in the generator package
MAX_DEPTH = 8  # shared schemas inlined at most this deep in schema.json
MAX_NODES = 5000  # and at most this many inlined schema objects per event: a stub beyond
NO_DATAVERSION = "0.0.0"  # EventCatalog needs a version; a notification without data has none
ROOT = "eventcatalog"


def event_id(event_type: str) -> str:
    """The EventCatalog id (and folder name) of a CloudEvents type."""
    return safe_file_name(event_type)


def md_code(text: str | None) -> str:
    """A Markdown code span (in a table cell) that shows ``text`` literally,
    whatever backticks, pipes or HTML it holds (CommonMark 6.1: a fence
    longer than any run of backticks inside; GFM tables: ``\\|``)."""
    value = " ".join(str(text or "").split())
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or longest else ""
    return f"{fence}{pad}{value}{pad}{fence}".replace("|", "\\|")


_CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?(?<!`)\1(?!`)")
_DIRECTIVE = re.compile(r":(?=[A-Za-z])")


def no_directives(markdown: str) -> str:
    """EventCatalog's Markdown has remark-directive: ``:name`` in text (as in
    ``urn:nld:oin`` or ``hh:mm:ss``) would become a directive and vanish.
    Such colons are backslash-escaped (CommonMark 2.4), except in code spans."""
    parts, last = [], 0
    for match in _CODE_SPAN.finditer(markdown):
        parts.append(_DIRECTIVE.sub(r"\\:", markdown[last:match.start()]))
        parts.append(match.group(0))
        last = match.end()
    parts.append(_DIRECTIVE.sub(r"\\:", markdown[last:]))
    return "".join(parts)


def ec_text(text: str | None) -> str:
    return no_directives(md_text(text))


def ec_cell(text: str | None) -> str:
    return no_directives(md_cell(text))


def md_fence(text: str | None) -> str:
    """A code fence longer than any run of backticks in ``text`` (CommonMark 4.5)."""
    return "`" * max(3, max((len(run) + 1 for run in re.findall(r"`+", text or "")), default=0))


def team_id(catalog: Catalog) -> str:
    return f"{safe_file_name(catalog.id)}-producer"


def service_id(catalog: Catalog, name: str) -> str:
    """The EventCatalog id (and folder name) of a service of a catalog."""
    return f"{safe_file_name(catalog.id)}.{safe_file_name(name)}"


def channel_id(catalog: Catalog, name: str) -> str:
    """The EventCatalog id (and folder name) of a channel of a catalog."""
    return f"{safe_file_name(catalog.id)}.{safe_file_name(name)}"


def owner_team_id(catalog: Catalog, owner: Contact) -> str:
    return f"{safe_file_name(catalog.id)}.{safe_file_name(owner.name or owner.email or 'owner').lower()}"


ANY_VERSION = "*"  # a link without dataversion: every version (npm semver, as EventCatalog reads it)


def _pointers(catalog: Catalog, links: tuple[Link, ...], known: set[str], direction: str) -> list[dict[str, Any]]:
    """A service's ``sends`` or ``receives`` in EventCatalog's form: one entry per
    (type, dataversion) with every channel it names (``to`` or ``from``). A link
    to a type the catalog does not have is left out (lint reports it)."""
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    channels = {channel.name for channel in catalog.channels}
    for link in links:
        if link.type not in known:
            continue
        key = (event_id(link.type), link.dataversion or ANY_VERSION)
        entry = entries.setdefault(key, {"id": key[0], "version": key[1]})
        if link.channel and link.channel in channels:
            targets = entry.setdefault(direction, [])
            pointer = {"id": channel_id(catalog, link.channel), "version": catalog.version}
            if pointer not in targets:
                targets.append(pointer)
    return list(entries.values())


def viewer_schema(schema: Any, shared: Mapping[str, SharedSchema]) -> Any:
    """The payload schema with shared schemas inlined, recursion and depth bounded."""
    budget = [MAX_NODES]

    def inline(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in shared:
            name = ref[len("#/$defs/"):]
            siblings = {key: inline(value, stack) for key, value in node.items() if key != "$ref"}
            budget[0] -= 1
            if name in stack or len(stack) >= MAX_DEPTH or budget[0] < 0:
                target = shared[name].schema
                stub: dict[str, Any] = {"title": name}
                if isinstance(target, dict) and isinstance(target.get("type"), str):
                    stub["type"] = target["type"]
                why = "recursive" if name in stack else "nested too deep to show"
                stub["description"] = f"{name} ({why}: see {name} above or data.schema.json)."
                return {**stub, **{k: v for k, v in siblings.items() if k != "description"}}
            target = inline(shared[name].schema, (*stack, name))
            merged = dict(target) if isinstance(target, dict) else {"allOf": [target]}
            merged.setdefault("title", name)
            merged.update(siblings)
            return merged
        return {key: inline(value, stack) for key, value in node.items() if key != "$defs"}

    return inline(schema, ())


def _front_matter(data: dict[str, Any], body: str) -> bytes:
    head = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{head}---\n\n{body}".encode()


def _summary(text: str | None, fallback: str) -> str:
    """One line for EventCatalog's lists: the first paragraph, shortened."""
    first = " ".join((text or "").strip().split("\n\n")[0].split()) or fallback
    return first if len(first) <= 240 else first[:239] + "…"


def _version(version: VersionView) -> str:
    return version.event.dataversion or NO_DATAVERSION


def _event_files(view: TypeView, folder: str, team: str, shared: Mapping[str, SharedSchema], env: Any) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for index, version in enumerate(view.versions):
        event = version.event
        base = folder if index == 0 else f"{folder}/versioned/{safe_file_name(_version(version))}"
        data: dict[str, Any] = {
            "id": event_id(view.type),
            "name": event.title,
            "version": _version(version),
            "summary": _summary(event.description, event.title),
            "owners": [team],
        }
        # No ``channels`` on an event: EventCatalog 3 reads that as its old API and
        # "migrates" it at build time (src/migrations/message-channels-to-service-channels.ts),
        # overwriting every sending and receiving service's ``to``/``from`` with
        # the event's channels and rewriting the event's file. The services' ``to``
        # and ``from`` say where each event travels, link by link.
        badges = [{"content": "CloudEvent", "backgroundColor": "blue", "textColor": "blue"}]
        if event.payload is None:
            badges.append({"content": "no data", "backgroundColor": "gray", "textColor": "gray"})
        if event.deprecated:
            badges.append({"content": "deprecated", "backgroundColor": "red", "textColor": "red"})
            data["deprecated"] = {"message": event.deprecation} if event.deprecation else True
        data["badges"] = badges
        if event.payload is not None:
            data["schemaPath"] = "schema.json"
            files[f"{base}/schema.json"] = dump_json(viewer_schema(event.payload.bundled(shared), shared))
            files[f"{base}/data.schema.json"] = dump_json(event.payload.bundled(shared))
        body = env.get_template("eventcatalog/event.md.jinja").render(page=view, version=version, event=event)
        files[f"{base}/index.md"] = _front_matter(data, body)
        if version.previous is not None:
            changelog = env.get_template("eventcatalog/changelog.md.jinja").render(version=version)
            files[f"{base}/changelog.md"] = _front_matter({"version": _version(version)}, changelog)
    return files


def lock_file() -> bytes:
    """The project's ``package-lock.json``, as npm wrote it for ``package_json()``."""
    return resources.files("generator").joinpath(LOCK_FILE).read_bytes()


def package_json() -> dict[str, Any]:
    """The project's ``package.json``: exact versions, and the Node.js it runs on."""
    return {
        "name": "evcat-eventcatalog", "private": True, "type": "module",
        "engines": {"node": NODE_ENGINES},
        "scripts": {"dev": "eventcatalog dev", "build": "eventcatalog build", "preview": "eventcatalog preview"},
        "dependencies": {"@eventcatalog/core": EVENTCATALOG_VERSION, "node": NODE_VERSION},
        "overrides": dict(OVERRIDES),
    }


def units(catalog_set: CatalogSet) -> list[Unit]:
    result = [Unit("eventcatalog", catalog.id, catalog_inputs(catalog, catalog_set), _render_catalog) for catalog in catalog_set.catalogs]
    catalogs = tuple((c.id, c.title, c.producer.organization) for c in catalog_set.catalogs)
    result.append(Unit("eventcatalog", "index", (catalogs, lock_file()), _render_index, local=True))  # the lock in the key
    return result


def _environment(env: Any) -> Any:
    """``env`` with the EventCatalog export's filters."""
    env.filters["ec_text"] = ec_text
    env.filters["ec_cell"] = ec_cell
    env.filters["md_code"] = md_code
    env.filters["md_fence"] = md_fence
    return env


def _render_catalog(inputs: tuple[Any, ...], env: Any) -> dict[str, bytes]:
    catalog, schemas = inputs
    catalog_set = partial_set((catalog,), schemas)
    env = _environment(env)
    domain = f"{ROOT}/domains/{safe_file_name(catalog.id)}"
    team = team_id(catalog)
    views = type_views(catalog_set, catalog, full=False)
    contact = catalog.producer.contact
    files: dict[str, bytes] = {}
    team_data: dict[str, Any] = {"id": team, "name": (contact.name if contact and contact.name else None) or catalog.producer.organization or catalog.title}
    team_data["summary"] = _summary(f"Producer of {catalog.title} ({catalog.producer.source}).", catalog.title)
    if contact and contact.email:
        team_data["email"] = contact.email
    files[f"{ROOT}/teams/{team}.md"] = _front_matter(team_data, env.get_template("eventcatalog/team.md.jinja").render(catalog=catalog))
    if catalog.services:  # the catalog's own services send and receive (catalog-format.md §9)
        services = [{"id": service_id(catalog, service.name)} for service in catalog.services]
        events = f"{domain}/events"
        files.update(_services(catalog, views, domain, team, env))
    else:  # the producer is the one service: it sends every event
        services = [{"id": team}]
        service = f"{domain}/services/{team}"
        events = f"{service}/events"
        files[f"{service}/index.md"] = _front_matter(
            {"id": team, "name": catalog.producer.organization or catalog.producer.source, "version": catalog.version,
             "summary": _summary(f"Produces the events of {catalog.title}.", catalog.title), "owners": [team],
             "sends": [{"id": event_id(view.type), "version": _version(view.latest)} for view in views]},
            env.get_template("eventcatalog/service.md.jinja").render(catalog=catalog),
        )
    files.update(_channels(catalog, views, domain, team, env))
    files[f"{domain}/index.md"] = _front_matter(
        {"id": safe_file_name(catalog.id), "name": catalog.title, "version": catalog.version,
         "summary": _summary(catalog.description, catalog.title), "owners": [team],
         "services": services},
        env.get_template("eventcatalog/domain.md.jinja").render(catalog=catalog, views=views),
    )
    for view in full_views(catalog_set, views):
        files.update(_event_files(view, f"{events}/{event_id(view.type)}", team, catalog_set.schemas, env))
    return files


def _services(catalog: Catalog, views: list[TypeView], domain: str, team: str, env: Any) -> dict[str, bytes]:
    """A page per service of the catalog, and a team per owner."""
    files: dict[str, bytes] = {}
    known = {view.type for view in views}
    template = env.get_template("eventcatalog/catalog-service.md.jinja")
    for view in service_views(catalog, views):
        service = view.service
        owners = [team]
        if service.owner is not None and (service.owner.name or service.owner.email):
            owner = owner_team_id(catalog, service.owner)
            owners = [owner]
            owner_data: dict[str, Any] = {"id": owner, "name": service.owner.name or service.owner.email}
            if service.owner.email:
                owner_data["email"] = service.owner.email
            files[f"{ROOT}/teams/{owner}.md"] = _front_matter(
                owner_data, f"Owns services of **{ec_text(catalog.title)}**.\n")
        data: dict[str, Any] = {
            "id": service_id(catalog, service.name), "name": service.title, "version": catalog.version,
            "summary": _summary(service.description, service.title), "owners": owners,
        }
        sends = _pointers(catalog, service.sends, known, "to")
        receives = _pointers(catalog, service.receives, known, "from")
        if sends:
            data["sends"] = sends
        if receives:
            data["receives"] = receives
        body = template.render(catalog=catalog, page=view)
        files[f"{domain}/services/{service_id(catalog, service.name)}/index.md"] = _front_matter(data, body)
    return files


def _channels(catalog: Catalog, views: list[TypeView], domain: str, team: str, env: Any) -> dict[str, bytes]:
    """A page per channel of the catalog: address, protocol, parameters, bindings."""
    files: dict[str, bytes] = {}
    template = env.get_template("eventcatalog/channel.md.jinja")
    for view in channel_views(catalog, views):
        channel = view.channel
        data: dict[str, Any] = {
            "id": channel_id(catalog, channel.name), "name": channel.name, "version": catalog.version,
            "summary": _summary(channel.description, f"{channel.protocol} {channel.address}"), "owners": [team],
            "address": channel.address, "protocols": [channel.protocol],
        }
        if channel.parameters:
            data["parameters"] = {name: {"description": f"The {name} part of the address, filled in when an event is published."}
                                  for name in channel.parameters}
        files[f"{domain}/channels/{channel_id(catalog, channel.name)}/index.md"] = _front_matter(
            data, template.render(catalog=catalog, page=view))
    return files


def _render_index(inputs: tuple[Any, ...], env: Any) -> dict[str, bytes]:
    """The project's config, package.json and lock file (``env``: unused, as every unit of a kind with templates gets one)."""
    catalogs, lock = inputs
    ids = ",".join(catalog_id for catalog_id, _, _ in catalogs)
    title = catalogs[0][1] if len(catalogs) == 1 else "Event catalog"
    organization = sorted({org for _, _, org in catalogs if org}) or ["Event catalog"]
    config = {
        "cId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"urn:evcat:{ids}")),  # fixed: EventCatalog writes one when missing
        "title": title,
        "tagline": f"Generated by evcat {__version__} from the event catalog.",
        "organizationName": ", ".join(organization),
        "homepageLink": "https://eventcatalog.dev/",
        "output": "static",
        "trailingSlash": False,
        "base": "/",
    }
    text = "// Generated by evcat: an EventCatalog project for the event catalog.\n" \
        f"// Build it with: {BUILD_COMMAND} (needs npm; it installs Node.js {NODE_VERSION} for the build)\n" \
        f"export default {json.dumps(config, indent=2, ensure_ascii=False)};\n"
    return {
        f"{ROOT}/eventcatalog.config.js": text.encode("utf-8"),
        f"{ROOT}/package.json": dump_json(package_json()),
        f"{ROOT}/package-lock.json": lock,
        f"{ROOT}/.nvmrc": f"{NODE_VERSION.split('.')[0]}\n".encode(),
        f"{ROOT}/.gitignore": b"node_modules/\ndist/\n.eventcatalog-core/\n",
    }


def render(catalog_set: CatalogSet) -> dict[str, bytes]:
    from ..outputs import units as bound_units  # with the built-in templates bound

    return render_all(bound_units("eventcatalog", catalog_set))
