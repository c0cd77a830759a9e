"""The JSON Schema of an event type's payload and of its whole envelope.

The one builder of envelope schemas: ``render/jsonschema.py`` writes them,
``evcat validate`` compiles them for its fast path and ``render/asyncapi.py``
embeds them. It maps the event type's ``ContextAttribute``s (model.py) with
the CloudEvents vocabulary (vocabulary.py), so the schema gives the verdict
of the detailed checker (instance.py) and of the generated ``parse_event``
(contract §4.1). Grammars are spelled as patterns as well as formats, so a
validator's own reading of ``format`` cannot change the verdict; anchored
patterns are paired with ``vocabulary.NO_BAD_CHARS``, which rules out the
trailing newline that Python's ``$`` would let through.

Sources: CloudEvents 1.0.2 §3 and the JSON format §2-3; contract §4.1, §5.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import vocabulary
from .model import ContextAttribute, EventType, SharedSchema
from .naming import child_class_name, payload_class_name, schema_class_name
from .patterns import schema_pattern
from .schemawalk import LIST_OF_SCHEMAS, MAP_OF_SCHEMAS, ONE_SCHEMA

DRAFT = "https://json-schema.org/draft/2020-12/schema"
PAYLOAD_DEF = "data"  # the payload's key under $defs in event.schema.json


def payload_id(event: EventType) -> str:
    if event.dataschema:
        return event.dataschema
    return f"urn:evcat:{event.catalog_id}:{event.type}:{event.dataversion}:data"


def envelope_id(event: EventType) -> str:
    return f"urn:evcat:{event.catalog_id}:{event.type}:{event.dataversion or 'notification'}:event"


# Payload formats pinned to the vocabulary's grammar (contract §4.1): format
# checkers differ (the ``jsonschema`` package lets a trailing newline through
# ``uri`` and ``date-time``), a pattern beside the format does not.
_FORMAT_GRAMMARS = {
    "date-time": vocabulary.RFC3339_SCHEMA_PATTERN,
    "date": vocabulary.FULL_DATE_SCHEMA_PATTERN,
    "uri": vocabulary.URI_SCHEMA_PATTERN,
    "uri-reference": vocabulary.URI_REFERENCE_SCHEMA_PATTERN,
}


def pinned(schema: Any) -> Any:
    """A payload schema every JSON Schema validator reads alike: patterns end
    where ECMA-262 ends them (``$`` is the end of the input, not also before
    a final newline as in Python's ``re``), and the payload formats the
    runtime types carry their grammar as a pattern too."""
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword in MAP_OF_SCHEMAS and isinstance(value, dict):
            result[keyword] = {name: pinned(child) for name, child in value.items()}
        elif keyword in ONE_SCHEMA:
            result[keyword] = [pinned(child) for child in value] if isinstance(value, list) else pinned(value)
        elif keyword in LIST_OF_SCHEMAS and isinstance(value, list):
            result[keyword] = [pinned(child) for child in value]
        elif keyword == "pattern" and isinstance(value, str):
            result[keyword] = schema_pattern(value)
        else:
            result[keyword] = value
    grammar = _FORMAT_GRAMMARS.get(schema.get("format")) if isinstance(schema.get("format"), str) else None
    if grammar is not None:
        result["allOf"] = [*result.get("allOf", []), {"pattern": schema_pattern(grammar)}]
    return result


def titled(schema: Any, title: str, each: Callable[[dict[str, Any], dict[str, Any], str], None] | None = None) -> Any:
    """A copy of ``schema`` titled as the generated Python package names its
    classes (``naming``): the schema itself ``title`` when it is an object or
    an enum, its nested object and enum schemas by their path
    (``naming.child_class_name``); other titles removed. Code generators that
    name models by ``title`` (Modelina, json-schema-to-typescript) then give
    the names evcat's Python classes have, not ``AnonymousSchema_26``. An enum
    is a ``Literal`` in Python: its title is the class it would be.
    ``each(node, copy, title)``, when given, may change each schema's copy
    (the Python renderer's own additions: one walk, one naming rule)."""
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    if schema.get("type") == "object" or "properties" in schema or "enum" in schema:
        result["title"] = title
    for keyword, value in schema.items():
        if keyword == "title":
            continue
        if keyword in MAP_OF_SCHEMAS and keyword != "$defs" and isinstance(value, dict):
            result[keyword] = {name: titled(child, child_class_name(title, keyword, name), each) for name, child in value.items()}
        elif keyword in ONE_SCHEMA:
            result[keyword] = (
                [titled(child, child_class_name(title, keyword, i), each) for i, child in enumerate(value)]
                if isinstance(value, list) else titled(value, child_class_name(title, keyword), each)
            )
        elif keyword in LIST_OF_SCHEMAS and isinstance(value, list):
            result[keyword] = [titled(child, child_class_name(title, keyword, i), each) for i, child in enumerate(value)]
        else:
            result[keyword] = value
    if each is not None:
        each(schema, result, title)
    return result


def shared_titled(name: str, schema: Any) -> Any:
    """A shared schema, titled by its name in the generated package
    (``naming.schema_class_name``), whatever its type; its children by path."""
    result = titled(schema, schema_class_name(name))
    return {"title": schema_class_name(name), **result} if isinstance(result, dict) else result


def payload_schema(event: EventType, shared: Mapping[str, SharedSchema], class_name: str | None = None) -> dict[str, Any]:
    """data.schema.json: the payload on its own, shared schemas under ``$defs``.
    ``class_name``: the event's envelope class (``naming.envelope_class_names``):
    the payload and its shared schemas are titled as their Python classes."""
    assert event.payload is not None
    bundled = pinned(event.payload.bundled(shared))
    schema: dict[str, Any] = {"$schema": DRAFT, "$id": payload_id(event)}
    if isinstance(bundled, dict):
        if class_name is not None:
            bundled = titled(bundled, payload_class_name(class_name))
            bundled["title"] = payload_class_name(class_name)
            if isinstance(bundled.get("$defs"), dict):
                bundled["$defs"] = {
                    name: shared_titled(name, child) if name in event.payload.uses else child
                    for name, child in bundled["$defs"].items()
                }
        schema.setdefault("title", f"{event.title} ({event.dataversion}) data")
        schema.update({key: value for key, value in bundled.items() if key not in ("$schema", "$id")})
    else:  # a boolean schema
        schema["allOf"] = [bundled]
    return schema


def attribute_schema(attribute: ContextAttribute) -> dict[str, Any]:
    """One context attribute's value, in the JSON format's representation (§2.2)."""
    if attribute.fixed is not None:
        schema: dict[str, Any] = {"const": attribute.fixed}
    else:
        schema = dict(vocabulary.TYPES[attribute.type].json_schema)
    if schema.get("type") == "string" or "const" in schema:
        if attribute.non_empty and "const" not in schema:
            schema["minLength"] = 1
        if attribute.type == "Timestamp":
            schema["pattern"] = attribute.pattern or vocabulary.RFC3339_SCHEMA_PATTERN
        elif attribute.type == "URI":
            schema["pattern"] = vocabulary.URI_SCHEMA_PATTERN
        elif attribute.type == "URI-reference":
            schema["pattern"] = vocabulary.URI_REFERENCE_SCHEMA_PATTERN
        elif attribute.media_type:
            schema["pattern"] = vocabulary.MEDIA_TYPE_SCHEMA_PATTERN
        elif attribute.pattern is not None:
            schema["pattern"] = attribute.pattern
        if "const" not in schema:
            schema.update(vocabulary.NO_BAD_CHARS)
    if attribute.meaning and attribute.fixed is None:
        schema["description"] = attribute.meaning
    if attribute.default is not None and "const" not in schema:
        schema["examples"] = [attribute.default]
    if not attribute.required:
        return or_null(schema)
    return schema


def or_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or ``null`` (JSON format §2.4: null for an optional attribute
    means unset), spelled as code generators read an optional value: a type
    array (``type: [string, "null"]``) or an ``enum`` with null, not ``anyOf``
    (Modelina makes that Java ``Object``). A ``not`` (the bad-character check)
    moves under ``if: {type: <the type>}, then:``, so null passes it as it
    passes the other type-specific keywords, and Modelina, which reads a
    ``not`` holding a ``type`` as "not that type", keeps the type. The verdict
    is that of ``anyOf: [schema, {type: null}]``."""
    if "const" in schema:
        return {("enum" if key == "const" else key): ([value, None] if key == "const" else value) for key, value in schema.items()}
    if not isinstance(schema.get("type"), str) or schema["type"] == "null":
        return {"anyOf": [schema, {"type": "null"}]}
    result: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword == "type":
            result[keyword] = [value, "null"]
        elif keyword == "not":
            result["if"] = {"type": schema["type"]}
            result["then"] = {"not": value}
        else:
            result[keyword] = value
    return result


# Undeclared extension attributes (contract §5): valid names, CloudEvents-typed values.
UNDECLARED_VALUE: dict[str, Any] = {
    "anyOf": [
        {"type": "string", **vocabulary.NO_BAD_CHARS},
        {"type": ["boolean", "null"]},
        {"type": "integer", "minimum": vocabulary.INT32_MIN, "maximum": vocabulary.INT32_MAX},
    ]
}
ATTRIBUTE_NAMES: dict[str, Any] = {
    "anyOf": [
        {"minLength": 1, "not": {"pattern": "[^a-z0-9]"}},  # CloudEvents 1.0.2 §2, with no anchor to misread
        {"enum": list(vocabulary.DATA_MEMBERS)},
    ]
}


def envelope_schema(event: EventType, shared: Mapping[str, SharedSchema] | None = None, *, payload: bool = True,
                    class_name: str | None = None) -> dict[str, Any]:
    """event.schema.json: the whole structured-mode event, self-contained
    (the payload and the shared schemas it uses under ``$defs``). With
    ``payload=False`` the ``data`` member is left to a separate validator
    (``evcat validate``'s fast path) and only its presence is checked.
    ``class_name``: the event's envelope class (``naming.envelope_class_names``),
    the envelope's title; the payload and shared schemas are titled as their
    Python classes too."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for attribute in event.attributes:
        properties[attribute.name] = attribute_schema(attribute)
        if class_name is not None:  # an optional fixed attribute is an enum: titled as its class would be
            properties[attribute.name] = titled(properties[attribute.name], child_class_name(class_name, "properties", attribute.name))
        if attribute.required:
            required.append(attribute.name)
    envelope: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": envelope_id(event),
        "title": class_name or f"{event.title} ({event.type} {event.dataversion or ''})".replace(" )", ")"),
        "type": "object",
        "properties": properties,
        "required": required,
        "propertyNames": ATTRIBUTE_NAMES,
        "additionalProperties": UNDECLARED_VALUE,
    }
    if event.description:
        envelope["description"] = event.description
    if event.payload is not None:
        # Contract §5: data the catalog defines travels as JSON in `data`, never as `data_base64`.
        if payload:
            defs, key = _payload_defs(event, shared or {}, class_name)
            properties["data"] = {"$ref": f"#/$defs/{key}"}
            envelope["$defs"] = defs
        else:
            properties["data"] = {"not": {"type": "null"}}
        properties["data_base64"] = {"type": "null"}  # null is unset (JSON format §2.4)
        required.append("data")
    else:
        properties["data"] = {"type": "null"}
        properties["data_base64"] = {"type": "null"}
    if "dataversion" not in properties:
        # Contract §5: a dataversion names a catalog entry; this type has none.
        properties["dataversion"] = {"type": "null"}
    if event.deprecated:
        envelope["deprecated"] = True
    return envelope


def _payload_defs(event: EventType, shared: Mapping[str, SharedSchema], class_name: str | None = None) -> tuple[dict[str, Any], str]:
    """The payload under ``$defs/data`` and the shared schemas it uses beside it,
    so its ``#/$defs/<Name>`` references resolve inside the envelope document."""
    assert event.payload is not None
    schema = pinned(event.payload.schema)
    defs: dict[str, Any] = {}
    if isinstance(schema, dict):
        root = {key: value for key, value in schema.items() if key not in ("$schema", "$id", "$defs")}
        defs.update(schema.get("$defs", {}) if isinstance(schema.get("$defs"), dict) else {})
    else:
        root = {"allOf": [schema]}
    if class_name is not None:
        root = titled(root, payload_class_name(class_name))
        root["title"] = payload_class_name(class_name)
    root.setdefault("title", f"{event.title} ({event.dataversion}) data")
    for name in event.payload.uses:
        defs[name] = pinned(shared[name].schema) if class_name is None else shared_titled(name, pinned(shared[name].schema))
    key = PAYLOAD_DEF
    while key in defs:  # a shared schema of that name: the payload gets another
        key += "_"
    defs[key] = root
    return dict(sorted(defs.items())), key
