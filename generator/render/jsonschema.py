"""JSON Schema draft 2020-12 of every payload and every full CloudEvent envelope.

The envelope schema encodes what CloudEvents 1.0.2 (§3 context attributes,
§3.2 type system, JSON format §2-3) and the event's profile fix; it refers to
the payload schema by ``$id``. Contract §4: ``jsonschema/index.json``.
"""

from __future__ import annotations

from typing import Any

from ..formats import NORMO_TIME
from ..instance import INT32_MAX, INT32_MIN
from ..model import CatalogSet, EventType
from . import Unit, catalog_inputs, dump_json, event_dir, partial_set, render_all, sorted_events

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE64 = r"^[A-Za-z0-9+/]*={0,2}$"
EXTENSION_NAME = r"^[a-z0-9]+$"

# CloudEvents type system (1.0.2 §3.2) as JSON Schema, JSON format representation.
TYPE_SCHEMAS: dict[str, dict[str, Any]] = {
    "Boolean": {"type": "boolean"},
    "Integer": {"type": "integer", "minimum": INT32_MIN, "maximum": INT32_MAX},
    "String": {"type": "string"},
    "Binary": {"type": "string", "contentEncoding": "base64", "pattern": BASE64},
    "URI": {"type": "string", "format": "uri"},
    "URI-reference": {"type": "string", "format": "uri-reference"},
    "Timestamp": {"type": "string", "format": "date-time"},
}


def payload_id(event: EventType) -> str:
    if event.dataschema:
        return event.dataschema
    return f"urn:evcat:{event.catalog_id}:{event.type}:{event.dataversion}:data"


def envelope_id(event: EventType) -> str:
    return f"urn:evcat:{event.catalog_id}:{event.type}:{event.dataversion or 'notification'}:event"


def payload_schema(event: EventType, catalog_set: CatalogSet) -> dict[str, Any]:
    assert event.payload is not None
    bundled = event.payload.bundled(catalog_set.schemas)
    schema: dict[str, Any] = {"$schema": DRAFT, "$id": payload_id(event)}
    if isinstance(bundled, dict):
        schema.setdefault("title", f"{event.title} ({event.dataversion}) data")
        schema.update({key: value for key, value in bundled.items() if key not in ("$schema", "$id")})
    else:  # a boolean schema
        schema["allOf"] = [bundled]
    return schema


def _optional(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional attribute: JSON null means unset (JSON format §2.4)."""
    return {"anyOf": [schema, {"type": "null"}]}


def envelope_schema(event: EventType) -> dict[str, Any]:
    normo = event.profile == "normo"
    properties: dict[str, Any] = {
        "specversion": {"const": "1.0", "description": "CloudEvents specification version."},
        "id": {"type": "string", "minLength": 1, "description": event.id or "Identifies the event."},
        "source": {"type": "string", "minLength": 1, "format": "uri-reference", "examples": [event.source]},
        "type": {"const": event.type},
    }
    required = ["specversion", "id", "source", "type"]
    if event.dataversion is not None:
        properties["dataversion"] = {"const": event.dataversion}
        if normo or event.has_data:
            required.append("dataversion")
    string = {"type": "string", "minLength": 1}
    properties["datacontenttype"] = _optional({**string, "pattern": r"^[^/\s]+/[^/\s]+"})
    properties["dataschema"] = _optional({"type": "string", "format": "uri"})
    if normo:
        # Het Normo ID06: always present, UTC, yyyy-mm-ddThh:mm:ss.ffffffZ.
        properties["time"] = {"type": "string", "format": "date-time", "pattern": NORMO_TIME.pattern}
        required.append("time")
    else:
        properties["time"] = _optional({"type": "string", "format": "date-time"})
    if event.time:
        _describe(properties["time"], event.time)
    properties["subject"] = _optional(dict(string))
    if event.subject:
        _describe(properties["subject"], event.subject)
    if event.dataref:
        properties["dataref"] = _optional({"type": "string", "format": "uri-reference", "description": event.dataref})
    if event.sequencetype:
        sequence: dict[str, Any] = {"type": "string", "minLength": 1}
        if event.sequencetype.lower() == "integer":
            sequence["pattern"] = r"^[+-]?[0-9]+$"
        properties["sequence"] = sequence
        properties["sequencetype"] = _optional({"const": event.sequencetype})
        required.append("sequence")
    for extension in event.extensions:
        schema = dict(TYPE_SCHEMAS.get(extension.type, {"type": "string"}))
        if extension.description:
            schema["description"] = extension.description
        properties[extension.name] = schema if extension.required else _optional(schema)
        if extension.required:
            required.append(extension.name)
    if event.payload is not None:
        properties["data"] = {"$ref": payload_id(event)}
        required.append("data")
        if normo:
            required.append("datacontenttype")
    envelope: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": envelope_id(event),
        "title": f"{event.title} ({event.type} {event.dataversion or ''})".replace(" )", ")"),
        "type": "object",
        "properties": properties,
        "required": required,
        # Undeclared extension attributes: valid names, CloudEvents-typed values.
        "propertyNames": {"anyOf": [{"pattern": EXTENSION_NAME}, {"enum": ["data", "data_base64"]}]},
        "additionalProperties": {
            "anyOf": [
                {"type": ["string", "boolean", "null"]},
                {"type": "integer", "minimum": INT32_MIN, "maximum": INT32_MAX},
            ]
        },
    }
    if event.description:
        envelope["description"] = event.description
    if event.payload is not None:
        envelope["not"] = {"required": ["data_base64"]}
    else:
        envelope["allOf"] = [{"not": {"required": ["data"]}}, {"not": {"required": ["data_base64"]}}]
    if event.deprecated:
        envelope["deprecated"] = True
    return envelope


def _describe(schema: dict[str, Any], text: str) -> None:
    target = schema["anyOf"][0] if "anyOf" in schema else schema
    target["description"] = text


def units(catalog_set: CatalogSet) -> list[Unit]:
    """The schemas of each catalog, and the index of all."""
    result = [Unit("jsonschema", catalog.id, catalog_inputs(catalog, catalog_set), _render_catalog) for catalog in catalog_set.catalogs]
    result.append(Unit("jsonschema", "index.json", (catalog_set.catalogs,), _render_index, local=True))
    return result


def _render_catalog(inputs: tuple[Any, ...]) -> dict[str, bytes]:
    catalog, schemas = inputs
    catalog_set = partial_set((catalog,), schemas)
    files: dict[str, bytes] = {}
    for event in catalog.events:
        folder = event_dir(event)
        if event.payload is not None:
            files[f"jsonschema/{folder}/data.schema.json"] = dump_json(payload_schema(event, catalog_set))
        files[f"jsonschema/{folder}/event.schema.json"] = dump_json(envelope_schema(event))
    return files


def _render_index(inputs: tuple[Any, ...]) -> dict[str, bytes]:
    (catalogs,) = inputs
    index = []
    for event in sorted_events(partial_set(catalogs)):
        folder = event_dir(event)
        entry: dict[str, Any] = {"type": event.type, "dataversion": event.dataversion, "data": None}
        if event.payload is not None:
            entry["data"] = f"{folder}/data.schema.json"
        entry["event"] = f"{folder}/event.schema.json"
        index.append(entry)
    return {"jsonschema/index.json": dump_json(index)}


def render(catalog_set: CatalogSet) -> dict[str, bytes]:
    return render_all(units(catalog_set))
