"""One xRegistry document per catalog (``xregistry/<catalog_id>.xreg.json``).

The catalog as the xRegistry message, schema and endpoint registries describe
it (contract §10; xRegistry Message Definitions, Schema and Endpoint specs,
1.0-rc), in the form the xRegistry code generator (``xrcg``) reads:

- ``messagegroups``: one group per catalog (its id), ``envelope:
  CloudEvents/1.0``; one message per (type, dataversion) whose
  ``envelopemetadata`` declares the context attributes the catalog fixes or
  requires (message spec "CloudEvents/1.0" envelope): ``type`` and
  ``dataversion`` with their value, ``source`` as a ``uritemplate`` where the
  catalog's source is a URI template (§9), ``time``, ``subject``,
  ``datacontenttype``, ``dataschema``, ``dataref``, ``sequence`` and the
  extensions with their CloudEvents type and ``required`` flag; the payload by
  ``dataschemaformat`` and ``dataschemauri`` (a JSON pointer into the
  document's own ``schemagroups``).
- ``schemagroups``: one group per catalog, named as its Python package (an
  identifier, like the schema ids: ``xrcg`` makes Python packages and modules
  of them); one schema per event type (its payload), one version per
  dataversion (``versionid`` = the dataversion, ``defaultversionid`` the
  highest), each a self-contained JSON Schema 2020-12
  (the payload as the catalog wrote it, the shared schemas it uses under
  ``$defs``).
- ``endpoints``: one per channel (§9): the protocol (``KAFKA``, ``AMQP/1.0``,
  ``MQTT/5.0``, ``HTTP``), the address as the protocol's option (``topic``,
  ``node``, ``topic``/``topicfilter``, the endpoint URI) with its
  ``{parameters}`` (Endpoint spec "Protocol Options": placeholders are RFC 6570
  level 1), the bindings xRegistry names (Kafka ``key``, MQTT ``qos`` and
  ``retain``), ``usage: [producer]`` and the catalog's message group.

What xRegistry has no place for (the catalog's version, profile, producer,
servers, rules, services, examples, the AMQP exchange and routing key) is not
written; the README lists it. Pure function of the model, like every renderer;
``x-evcat-*`` keys (§9) are never written.
"""

from __future__ import annotations

import re
from typing import Any

from .. import vocabulary
from ..envelope import DRAFT
from ..model import Catalog, CatalogSet, Channel, EventType, SharedSchema
from ..naming import python_class_name, safe_file_name
from ..string_formats import semver_key
from . import Unit, catalog_inputs, dump_json, event_order, partial_set, render_all

ENVELOPE = "CloudEvents/1.0"
SCHEMA_FORMAT = "JsonSchema/draft-2020-12"
# CloudEvents 1.0.2 §3.1 context attribute types as the message spec's
# property `type` spells them ("the types defined in the CloudEvents core
# specification, with some additions"): lower case.
ATTRIBUTE_TYPES = {name: name.lower() for name in vocabulary.TYPES}
# evcat channel protocols (§9) -> Endpoint spec protocol names.
PROTOCOLS = {"kafka": "KAFKA", "amqp": "AMQP/1.0", "mqtt": "MQTT/5.0", "http": "HTTP"}
_TEMPLATE = re.compile(r"\{[^{}]+\}")


def document_path(catalog: Catalog) -> str:
    return f"xregistry/{safe_file_name(catalog.id)}.xreg.json"


def units(catalog_set: CatalogSet) -> list[Unit]:
    return [Unit("xregistry", catalog.id, catalog_inputs(catalog, catalog_set), _render_catalog)
            for catalog in catalog_set.catalogs]


def _render_catalog(inputs: tuple[Any, ...]) -> dict[str, bytes]:
    catalog, schemas = inputs
    shared = {schema.name: schema for schema in partial_set((catalog,), schemas).schemas.values()}
    return {document_path(catalog): dump_json(document(catalog, shared))}


def render(catalog_set: CatalogSet) -> dict[str, bytes]:
    return render_all(units(catalog_set))


def templated(source: str) -> bool:
    """A URI template of level 1 (§9): holds a ``{name}``."""
    return bool(_TEMPLATE.search(source))


def message_ids(events: tuple[EventType, ...]) -> dict[tuple[str, str | None], str]:
    """The message id of each (type, dataversion): the type itself (message
    spec: a message's id SHOULD be its CloudEvents type) where the catalog has
    one dataversion of it, else ``<type>.v<MAJOR>_<MINOR>_<PATCH>``."""
    versions: dict[str, int] = {}
    for event in events:
        versions[event.type] = versions.get(event.type, 0) + 1
    ids: dict[tuple[str, str | None], str] = {}
    taken = {event.type for event in events if versions[event.type] == 1 or event.dataversion is None}
    for event in events:
        if versions[event.type] == 1 or event.dataversion is None:
            ids[event.key] = event.type
            continue
        base = name = f"{event.type}.v{event.dataversion.replace('.', '_')}"
        number = 2
        while name in taken:  # a type of that very name (`a.v1_0_0` beside `a` 1.0.0 and 2.0.0)
            name, number = f"{base}-{number}", number + 1
        ids[event.key] = name
        taken.add(name)
    return ids


def schema_ids(events: tuple[EventType, ...]) -> dict[str, str]:
    """The schema id of each event type's payload: the type in PascalCase plus
    ``Data`` (a Python identifier: the xRegistry code generator makes module
    and class names of schema ids and cannot import a ``-``), unique."""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for event in events:
        if event.type in ids or event.payload is None:
            continue
        base = python_class_name(*event.type.split("."), suffix="Data") + "Data"
        name, number = base, 2
        while name in taken:
            name, number = f"{base}{number}", number + 1
        ids[event.type] = name
        taken.add(name)
    return ids


def document(catalog: Catalog, shared: dict[str, SharedSchema]) -> dict[str, Any]:
    events = tuple(sorted(catalog.events, key=event_order))
    ids = message_ids(events)
    group = catalog.id
    # The schema group: the package name (an identifier; xrcg makes a Python package of it).
    schema_group = catalog.package_name
    payloads = schema_ids(events)
    result: dict[str, Any] = {}
    if catalog.channels:
        result["endpoints"] = {channel.name: _endpoint(channel, group) for channel in catalog.channels}
    messages = {ids[event.key]: _message(event, ids[event.key], schema_group, payloads.get(event.type))
                for event in events}
    message_group: dict[str, Any] = {"messagegroupid": group, "name": catalog.title}
    if catalog.description:
        message_group["description"] = catalog.description
    message_group["envelope"] = ENVELOPE
    message_group["messages"] = messages
    result["messagegroups"] = {group: message_group}
    schemas: dict[str, Any] = {}
    for event in events:
        if event.payload is None or event.dataversion is None:
            continue
        schema_id = payloads[event.type]
        entry = schemas.setdefault(schema_id, {"schemaid": schema_id, "name": event.type, "format": SCHEMA_FORMAT,
                                               "versions": {}})
        entry["versions"][event.dataversion] = _version(event, schema_id, shared)
    for entry in schemas.values():
        entry["defaultversionid"] = max(entry["versions"], key=semver_key)
        entry["versions"] = dict(sorted(entry["versions"].items(), key=lambda item: semver_key(item[0])))
    if schemas:
        result["schemagroups"] = {schema_group: {"schemagroupid": schema_group, "name": catalog.title, "schemas": schemas}}
    return result


def _declared(type_: str, *, value: Any = None, required: bool = False, description: str | None = None) -> dict[str, Any]:
    declared: dict[str, Any] = {"type": type_}
    if value is not None:
        declared["value"] = value
    declared["required"] = required
    if description:
        declared["description"] = description
    return declared


def _message(event: EventType, message_id: str, schema_group: str, schema_id: str | None) -> dict[str, Any]:
    attributes = event.attribute_map
    metadata: dict[str, Any] = {
        "specversion": _declared("string", value=vocabulary.SPECVERSION, required=True),
        "id": _declared("string", required=True, description=event.id),
        "type": _declared("string", value=event.type, required=True),
        # Message spec: `source` is a `uritemplate` or a `string`; a template's
        # placeholders match any value, a string only itself.
        "source": _declared("uritemplate" if templated(event.source) else "string", value=event.source, required=True),
    }
    if event.dataversion is not None:
        metadata["dataversion"] = _declared("string", value=event.dataversion, required=attributes["dataversion"].required,
                                            description="Version of the payload.")
    metadata["time"] = _declared("timestamp", required=attributes["time"].required, description=event.time)
    if event.subject:
        metadata["subject"] = _declared("string", description=event.subject)
    if event.has_data and event.datacontenttype:
        metadata["datacontenttype"] = _declared("string", value=event.datacontenttype,
                                                required=attributes["datacontenttype"].required)
    if event.dataschema:
        metadata["dataschema"] = _declared("uri", value=event.dataschema)
    if event.dataref:
        metadata["dataref"] = _declared("uri-reference", description=event.dataref)
    if event.sequencetype:
        metadata["sequence"] = _declared("string", required=True, description=attributes["sequence"].meaning)
        metadata["sequencetype"] = _declared("string", value=event.sequencetype)
    for extension in event.extensions:
        metadata[extension.name] = _declared(ATTRIBUTE_TYPES.get(extension.type, "string"), required=extension.required,
                                             description=extension.description)
    message: dict[str, Any] = {"messageid": message_id, "name": event.title}
    if event.description:
        message["description"] = event.description
    if event.deprecated:
        # Core spec `deprecated`: without `effective` the entity is deprecated now; the
        # reason has no property of its own, so it is a label.
        message["deprecated"] = {}
        if event.deprecation:
            message["labels"] = {"deprecation": event.deprecation}
    message["envelope"] = ENVELOPE
    message["envelopemetadata"] = metadata
    if event.payload is not None and event.dataversion is not None and schema_id is not None:
        message["dataschemaformat"] = SCHEMA_FORMAT
        message["dataschemauri"] = \
            f"#/schemagroups/{_pointer(schema_group)}/schemas/{_pointer(schema_id)}/versions/{_pointer(event.dataversion)}"
    return message


def _pointer(token: str) -> str:
    """One RFC 6901 reference token."""
    return token.replace("~", "~0").replace("/", "~1")


def _version(event: EventType, schema_id: str, shared: dict[str, SharedSchema]) -> dict[str, Any]:
    assert event.payload is not None and event.dataversion is not None
    bundled = event.payload.bundled(shared)
    schema = {"$schema": DRAFT, **without_evcat_keys(bundled)} if isinstance(bundled, dict) else \
        {"$schema": DRAFT, "allOf": [bundled]}
    version: dict[str, Any] = {"versionid": event.dataversion, "schemaid": schema_id, "name": event.title}
    if event.description:
        version["description"] = event.description
    version["format"] = SCHEMA_FORMAT
    version["schema"] = schema
    return version


def without_evcat_keys(value: Any) -> Any:
    """A copy of a schema without its ``x-evcat-*`` keys (§9: never in outputs)."""
    if isinstance(value, dict):
        return {key: without_evcat_keys(child) for key, child in value.items()
                if not (isinstance(key, str) and key.startswith("x-evcat-"))}
    if isinstance(value, list):
        return [without_evcat_keys(child) for child in value]
    return value


def _endpoint(channel: Channel, group: str) -> dict[str, Any]:
    bindings = dict(channel.bindings)
    protocol = PROTOCOLS.get(channel.protocol, channel.protocol.upper())
    options: dict[str, Any] = {}
    if channel.protocol == "kafka":
        options["topic"] = channel.address
        if isinstance(bindings.get("key"), str):
            # The record key is the value of that context attribute: a placeholder naming it.
            options["key"] = "{" + bindings["key"] + "}"
    elif channel.protocol == "amqp":
        options["node"] = channel.address
    elif channel.protocol == "mqtt":
        # Endpoint spec, MQTT options: `topic` is a concrete name, a filter with + or # is `topicfilter`.
        options["topicfilter" if ("+" in channel.address or "#" in channel.address) else "topic"] = channel.address
        for key in ("qos", "retain"):
            if key in bindings:
                options[key] = bindings[key]
    else:
        options["endpoints"] = [{"uri": channel.address}]
    endpoint: dict[str, Any] = {"endpointid": channel.name}
    if channel.description:
        endpoint["description"] = channel.description
    endpoint.update({
        "usage": ["producer"],
        "channel": channel.name,
        "envelope": ENVELOPE,
        "protocol": protocol,
        "protocoloptions": options,
        "messagegroups": [f"#/messagegroups/{_pointer(group)}"],
    })
    return endpoint
