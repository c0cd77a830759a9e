"""The JSON Schema of an event type's payload and of its whole envelope.

The one builder of envelope schemas: ``render/jsonschema.py`` writes them,
``evcat validate`` compiles them for its fast path and ``render/asyncapi.py``
embeds them. It maps the event type's ``ContextAttribute``s (model/) with
the CloudEvents vocabulary (vocabulary.py), so the schema gives the verdict
of the detailed checker (event_checker.py) and of the generated ``parse_event``
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
from .runtime import _uritemplate as uritemplate
from .schemawalk import IN_MAP, IN_ONE, SUBSCHEMAS, subschemas

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
    "uuid": vocabulary.UUID_SCHEMA_PATTERN,
    "email": vocabulary.EMAIL_SCHEMA_PATTERN,
    "time": vocabulary.TIME_SCHEMA_PATTERN,
    "ipv4": vocabulary.IPV4_SCHEMA_PATTERN,
    "hostname": vocabulary.HOSTNAME_SCHEMA_PATTERN,
    "duration": vocabulary.DURATION_SCHEMA_PATTERN,
    "json-pointer": vocabulary.JSON_POINTER_SCHEMA_PATTERN,
    "idn-email": vocabulary.IDN_EMAIL_SCHEMA_PATTERN,
    "idn-hostname": vocabulary.IDN_HOSTNAME_SCHEMA_PATTERN,
    "iri": vocabulary.IRI_SCHEMA_PATTERN,
    "iri-reference": vocabulary.IRI_REFERENCE_SCHEMA_PATTERN,
    "uri-template": vocabulary.URI_TEMPLATE_SCHEMA_PATTERN,
    "relative-json-pointer": vocabulary.RELATIVE_JSON_POINTER_SCHEMA_PATTERN,
}
# What a grammar says beside its pattern (a length needs no lookahead).
_EMAIL_SIZES = {"not": {"anyOf": [{"type": "string", "pattern": pattern} for pattern in vocabulary.EMAIL_TOO_LONG_PATTERNS]}}
_FORMAT_BOUNDS: dict[str, dict[str, Any]] = {
    "hostname": {"maxLength": vocabulary.HOSTNAME_MAX_LENGTH}, "email": _EMAIL_SIZES, "idn-email": _EMAIL_SIZES,
    "idn-hostname": {"maxLength": vocabulary.HOSTNAME_MAX_LENGTH},
}




def pinned(schema: Any) -> Any:
    """A payload schema every JSON Schema validator reads alike: patterns end
    where ECMA-262 ends them (``$`` is the end of the input, not also before
    a final newline as in Python's ``re``), and the payload formats the
    runtime types carry their grammar as a pattern too."""
    return _walk(schema, None, None, True)


def listed_values(definitions: list[Any]) -> list[Any] | None:
    """The values of the first ``enum`` or ``const`` among a property's
    ``definitions`` (None: none lists values)."""
    for schema in definitions:
        if isinstance(schema, dict) and isinstance(schema.get("enum"), list):
            return list(schema["enum"])
        if isinstance(schema, dict) and "const" in schema:
            return [schema["const"]]
    return None


def accepted_by_every(values: list[Any], definitions: list[Any], shared: Mapping[str, Any]) -> list[Any]:
    """Those of ``values`` that every one of a property's ``definitions``
    accepts (an ``allOf`` applies each: JSON Schema 2020-12 §10.2.1.1),
    judged by jsonschema-rs on the pinned schemas, as `evcat validate`
    judges; ``shared``: the shared schemas by name (``#/$defs/<name>``), of
    which each judge holds those the definition references (with all of a
    catalog's 1,000 it took 10 ms to compile). A definition that does not
    compile (other rules report it) refuses nothing."""
    import jsonschema_rs

    judges = []
    for schema in definitions:
        if not isinstance(schema, dict):
            continue
        try:
            bundled = {"$defs": _referenced(schema, shared), **pinned(schema)}
            judges.append(jsonschema_rs.Draft202012Validator(bundled, validate_formats=True))
        except (ValueError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError):
            continue
    return [value for value in values if all(judge.is_valid(value) for judge in judges)]


def _referenced(schema: Any, shared: Mapping[str, Any]) -> dict[str, Any]:
    """The shared schemas ``schema`` references (``#/$defs/<name>``), and
    those they reference in turn."""
    found: dict[str, Any] = {}
    pending = [schema]
    while pending:
        for _, node in subschemas(pending.pop()):
            ref = node.get("$ref")
            name = ref[len("#/$defs/"):] if isinstance(ref, str) and ref.startswith("#/$defs/") else None
            if name is not None and name in shared and name not in found:
                found[name] = shared[name]
                pending.append(shared[name])
    return found


def _format_grammar(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The pattern ``pinned`` adds to a schema of a payload format, if any."""
    format_ = schema.get("format")
    grammar = _FORMAT_GRAMMARS.get(format_) if isinstance(format_, str) else None
    return None if grammar is None else {"pattern": schema_pattern(grammar), **_FORMAT_BOUNDS.get(format_, {})}


def _beside_a_ref(schema: dict[str, Any]) -> bool:
    """Whether ``schema`` (as written) has keywords beside its ``$ref`` other
    than those every walk adds or moves (``title``, ``$defs``, ``$schema``,
    ``$id``): the pinned form then puts the reference in an ``allOf``."""
    return any(keyword not in ("$ref", "title", "$defs", "$schema", "$id") for keyword in schema)


def titled(schema: Any, title: str, each: Callable[[dict[str, Any], dict[str, Any], str], None] | None = None,
           *, pin: bool = False) -> Any:
    """A copy of ``schema`` titled as the generated Python package names its
    classes (``naming``): the schema itself ``title`` when it is an object or
    an enum, its nested object and enum schemas by their path
    (``naming.child_class_name``); other titles removed. Code generators that
    name models by ``title`` (Modelina, json-schema-to-typescript) then give
    the names evcat's Python classes have, not ``AnonymousSchema_26``. An enum
    is a ``Literal`` in Python: its title is the class it would be.
    ``each(node, copy, title)``, when given, may change each schema's copy
    (the Python renderer's own additions: one walk, one naming rule).
    ``pin``: ``titled(pinned(schema), ...)`` in one walk (``each`` is handed
    the node as it was before pinning)."""
    return _walk(schema, title, each, pin)


def _walk(schema: Any, title: str | None, each: Callable[[dict[str, Any], dict[str, Any], str], None] | None,
          pin: bool) -> Any:
    """The one walk of ``pinned`` (``title`` None: titles kept, nothing
    named) and ``titled``."""
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    if title is not None and (schema.get("type") == "object" or "properties" in schema or "enum" in schema):
        result["title"] = title
    for keyword, value in schema.items():
        walk = SUBSCHEMAS.get(keyword)
        if walk is None:
            if keyword == "title" and title is not None:
                continue
            result[keyword] = schema_pattern(value) if pin and keyword == "pattern" and isinstance(value, str) else value
        elif walk is IN_MAP:
            if not isinstance(value, dict):
                result[keyword] = value
            elif keyword == "$defs" and title is not None:  # named, not nested: titled by the one who uses them
                result[keyword] = {name: _walk(child, None, None, True) for name, child in value.items()} if pin else value
            else:
                result[keyword] = {name: _walk(child, _child(title, keyword, name), each, pin) for name, child in value.items()}
        elif walk is IN_ONE:
            result[keyword] = (
                [_walk(child, _child(title, keyword, i), each, pin) for i, child in enumerate(value)]
                if isinstance(value, list) else _walk(value, _child(title, keyword), each, pin)
            )
        else:
            result[keyword] = (
                [_walk(child, _child(title, keyword, i), each, pin) for i, child in enumerate(value)]
                if isinstance(value, list) else value
            )
    if pin and isinstance(result.get("$ref"), str) and _beside_a_ref(schema):
        # A `$ref` beside other keywords (a `description`, a `default`): the
        # same assertions with the reference alone in an `allOf` (2020-12 core
        # §10.2.1.1), which json-schema-to-typescript names as its target, not
        # as a numbered copy of it (`Adres1`).
        reference = {"$ref": result.pop("$ref")}
        result["allOf"] = [reference, *result.get("allOf", [])]
    if pin:
        grammar = _format_grammar(schema)
        if grammar is not None:
            branches = [*result.get("allOf", [])]
            result["allOf"] = [*branches, _walk(grammar, _child(title, "allOf", len(branches)), each, False)]
    if each is not None and title is not None:
        each(schema, result, title)
    return result


def _child(title: str | None, *path: str | int) -> str | None:
    return None if title is None else child_class_name(title, *path)


def shared_titled(name: str, schema: Any, *, pin: bool = False) -> Any:
    """A shared schema, titled by its name in the generated package
    (``naming.schema_class_name``), whatever its type; its children by path.
    ``pin``: the shared schema ``pinned`` too (one walk)."""
    result = titled(schema, schema_class_name(name), pin=pin)
    return {"title": schema_class_name(name), **result} if isinstance(result, dict) else result


class _Payload:
    """What an event's data.schema.json and the ``$defs`` of its
    event.schema.json are made of, each pinned and titled once: the root
    (``titled(pinned(...))`` without ``$schema``, ``$id`` and ``$defs``), the
    payload's own ``$defs`` (pinned) and the shared schemas it uses (pinned
    and titled as their classes; once per ``memo``, which a renderer keeps
    for one catalog). The two documents share these values: they are written
    out, not changed."""

    def __init__(self, event: EventType, shared: Mapping[str, SharedSchema], class_name: str | None = None,
                 memo: dict[tuple[str, bool], Any] | None = None) -> None:
        assert event.payload is not None
        self.event, self.payload, self.shared, self.memo = event, event.payload, shared, memo
        self.title = payload_class_name(class_name) if class_name is not None else None
        schema = self.payload.schema
        # Not a dict: a boolean schema, which the envelope (and a bundle with $defs) wraps.
        self.schema: dict[str, Any] = schema if isinstance(schema, dict) else {"allOf": [schema]}
        root = {key: value for key, value in self.schema.items() if key not in ("$schema", "$id", "$defs")}
        self.root: dict[str, Any] = titled(root, self.title, pin=True) if self.title is not None else pinned(root)
        own = self.schema.get("$defs")
        self.own: dict[str, Any] = {name: pinned(child) for name, child in own.items()} if isinstance(own, dict) else {}

    def shared_schema(self, name: str) -> Any:
        """A shared schema the payload uses, as ``$defs`` holds it."""
        key = (name, self.title is not None)
        if self.memo is not None and key in self.memo:
            return self.memo[key]
        schema = self.shared[name].schema
        value = shared_titled(name, schema, pin=True) if self.title is not None else pinned(schema)
        if self.memo is not None:
            self.memo[key] = value
        return value

    def document(self) -> dict[str, Any]:
        """data.schema.json: the payload on its own, the shared schemas it
        uses under ``$defs``, titled as their Python classes when the event's
        envelope class is known."""
        event, uses, schema = self.event, self.payload.uses, self.schema
        document: dict[str, Any] = {"$schema": DRAFT, "$id": payload_id(event)}
        if not isinstance(self.payload.schema, dict) and not uses:  # a boolean schema
            document["allOf"] = [self.payload.schema]
            return document
        document["title"] = self.title if self.title is not None else schema.get("title", f"{event.title} ({event.dataversion}) data")
        defs: Any = None
        if uses:  # Payload.bundled: the payload's $defs and the shared schemas
            own = schema.get("$defs", {})
            defs = dict(self.own) if isinstance(own, dict) else {name: pinned(child) for name, child in dict(own).items()}
            for name in uses:
                defs[name] = self.shared_schema(name)
        elif "$defs" in schema:
            defs = self.own if isinstance(schema["$defs"], dict) else schema["$defs"]
        for key in schema:
            if key == "$defs":
                document[key] = defs
            elif key not in ("$schema", "$id", "title") and key in self.root:  # ($ref: perhaps in an allOf now)
                document[key] = self.root[key]
        if defs is not None and "$defs" not in schema:
            document["$defs"] = defs
        for key, value in self.root.items():  # the grammar of a format, a $ref beside others (pinned)
            if key not in document:
                document[key] = value
        return document

    def defs(self) -> tuple[dict[str, Any], str]:
        """The payload under ``$defs/data`` and the shared schemas it uses beside it,
        so its ``#/$defs/<Name>`` references resolve inside the envelope document."""
        root = dict(self.root)
        if self.title is not None:
            root["title"] = self.title
        root.setdefault("title", f"{self.event.title} ({self.event.dataversion}) data")
        defs = dict(self.own)
        for name in self.payload.uses:
            defs[name] = self.shared_schema(name)
        key = PAYLOAD_DEF
        while key in defs:  # a shared schema of that name: the payload gets another
            key += "_"
        defs[key] = root
        return dict(sorted(defs.items())), key


def event_schemas(event: EventType, shared: Mapping[str, SharedSchema], class_name: str | None = None,
                  memo: dict[tuple[str, bool], Any] | None = None) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """data.schema.json (None without a payload) and event.schema.json of
    ``event``: ``_Payload.document`` and ``envelope_schema``, the payload pinned
    and titled once for both, a shared schema once per ``memo`` (one dict for
    one catalog's events). The documents share parts: write them, do not
    change them."""
    if event.payload is None:
        return None, envelope_schema(event, shared, class_name=class_name)
    parts = _Payload(event, shared, class_name, memo)
    return parts.document(), envelope_schema(event, shared, class_name=class_name, parts=parts)


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
        if attribute.match is not None:
            schema["allOf"] = [source_match_schema(attribute.match)]
    if attribute.meaning and attribute.fixed is None:
        schema["description"] = attribute.meaning
    if attribute.default is not None and "const" not in schema:
        schema["examples"] = [attribute.default]
    if not attribute.required:
        return or_null(schema)
    return schema


def source_match_schema(catalog_source: str) -> dict[str, Any]:
    """CE-SOURCE-MATCH as an error (catalog-format.md §9): the value is the
    catalog's source or matches it as a level-1 URI template, a ``pattern``
    every JSON Schema validator reads alike (runtime/_uritemplate.py); a
    malformed template (lint's CE-SOURCE-URI) only equals itself."""
    try:
        return {"pattern": uritemplate.pattern(catalog_source)}
    except uritemplate.TemplateError:
        return {"const": catalog_source}


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
                    class_name: str | None = None, parts: _Payload | None = None) -> dict[str, Any]:
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
        # An optional fixed attribute is an enum: titled as its class would be.
        # No attribute schema holds an object, a title or an enum below its
        # top, so the others are as ``titled`` would leave them (a test checks).
        if class_name is not None and "enum" in properties[attribute.name]:
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
            defs, key = (parts or _Payload(event, shared or {}, class_name)).defs()
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
