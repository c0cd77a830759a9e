"""The fast paths of ``envelope.py`` and ``naming.py`` give exactly what the
plain ones give (issue 16: generate as fast as before, output byte-identical).

``REFERENCE`` below is the plain implementation the fast one replaced (two
walks: ``titled(pinned(...))``; the payload pinned and titled once per
document, a shared schema once per use; every attribute schema walked by
``titled``): the property tests compare the two on generated payload and
shared schemas, and on every context attribute a catalog can yield.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator import envelope, naming, vocabulary
from generator.envelope import (
    attribute_schema,
    envelope_schema,
    event_schemas,
    pinned,
    shared_titled,
    titled,
)
from generator.commands.lint import lint
from generator.model import ContextAttribute, Payload, SharedSchema
from generator.naming import child_class_name, payload_class_name, schema_class_name
from generator.render import dump_json
from generator.schemawalk import LIST_OF_SCHEMAS, MAP_OF_SCHEMAS, ONE_SCHEMA

from .conftest import ROOT

# --- the plain implementation (generator/envelope.py before the fast paths) ---


def ref_pinned(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword in MAP_OF_SCHEMAS and isinstance(value, dict):
            result[keyword] = {name: ref_pinned(child) for name, child in value.items()}
        elif keyword in ONE_SCHEMA:
            result[keyword] = [ref_pinned(child) for child in value] if isinstance(value, list) else ref_pinned(value)
        elif keyword in LIST_OF_SCHEMAS and isinstance(value, list):
            result[keyword] = [ref_pinned(child) for child in value]
        elif keyword == "pattern" and isinstance(value, str):
            result[keyword] = envelope.schema_pattern(value)
        else:
            result[keyword] = value
    if isinstance(result.get("$ref"), str) and any(k not in ("$ref", "title", "$defs", "$schema", "$id") for k in schema):
        reference = {"$ref": result.pop("$ref")}
        result["allOf"] = [reference, *result.get("allOf", [])]
    grammar = envelope._FORMAT_GRAMMARS.get(schema.get("format")) if isinstance(schema.get("format"), str) else None
    if grammar is not None:
        bounds = envelope._FORMAT_BOUNDS.get(schema["format"], {})  # what a pattern cannot say (a length)
        result["allOf"] = [*result.get("allOf", []), {"pattern": envelope.schema_pattern(grammar), **bounds}]
    return result


def ref_titled(schema: Any, title: str, each: Callable[..., None] | None = None) -> Any:
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    if schema.get("type") == "object" or "properties" in schema or "enum" in schema:
        result["title"] = title
    for keyword, value in schema.items():
        if keyword == "title":
            continue
        if keyword in MAP_OF_SCHEMAS and keyword != "$defs" and isinstance(value, dict):
            result[keyword] = {name: ref_titled(child, child_class_name(title, keyword, name), each) for name, child in value.items()}
        elif keyword in ONE_SCHEMA:
            result[keyword] = (
                [ref_titled(child, child_class_name(title, keyword, i), each) for i, child in enumerate(value)]
                if isinstance(value, list) else ref_titled(value, child_class_name(title, keyword), each)
            )
        elif keyword in LIST_OF_SCHEMAS and isinstance(value, list):
            result[keyword] = [ref_titled(child, child_class_name(title, keyword, i), each) for i, child in enumerate(value)]
        else:
            result[keyword] = value
    if each is not None:
        each(schema, result, title)
    return result


def ref_shared_titled(name: str, schema: Any) -> Any:
    result = ref_titled(schema, schema_class_name(name))
    return {"title": schema_class_name(name), **result} if isinstance(result, dict) else result


def ref_payload_schema(event: Any, shared: Mapping[str, SharedSchema], class_name: str | None = None) -> dict[str, Any]:
    bundled = ref_pinned(event.payload.bundled(shared))
    schema: dict[str, Any] = {"$schema": envelope.DRAFT, "$id": envelope.payload_id(event)}
    if isinstance(bundled, dict):
        if class_name is not None:
            bundled = ref_titled(bundled, payload_class_name(class_name))
            bundled["title"] = payload_class_name(class_name)
            if isinstance(bundled.get("$defs"), dict):
                bundled["$defs"] = {
                    name: ref_shared_titled(name, child) if name in event.payload.uses else child
                    for name, child in bundled["$defs"].items()
                }
        schema.setdefault("title", f"{event.title} ({event.dataversion}) data")
        schema.update({key: value for key, value in bundled.items() if key not in ("$schema", "$id")})
    else:
        schema["allOf"] = [bundled]
    return schema


def ref_payload_defs(event: Any, shared: Mapping[str, SharedSchema], class_name: str | None = None) -> tuple[dict[str, Any], str]:
    schema = ref_pinned(event.payload.schema)
    defs: dict[str, Any] = {}
    if isinstance(schema, dict):
        root = {key: value for key, value in schema.items() if key not in ("$schema", "$id", "$defs")}
        defs.update(schema.get("$defs", {}) if isinstance(schema.get("$defs"), dict) else {})
    else:
        root = {"allOf": [schema]}
    if class_name is not None:
        root = ref_titled(root, payload_class_name(class_name))
        root["title"] = payload_class_name(class_name)
    root.setdefault("title", f"{event.title} ({event.dataversion}) data")
    for name in event.payload.uses:
        defs[name] = ref_pinned(shared[name].schema) if class_name is None else ref_shared_titled(name, ref_pinned(shared[name].schema))
    key = envelope.PAYLOAD_DEF
    while key in defs:
        key += "_"
    defs[key] = root
    return dict(sorted(defs.items())), key


def ref_envelope_properties(event: Any, class_name: str | None) -> dict[str, Any]:
    properties = {}
    for attribute in event.attributes:
        properties[attribute.name] = attribute_schema(attribute)
        if class_name is not None:
            properties[attribute.name] = ref_titled(properties[attribute.name], child_class_name(class_name, "properties", attribute.name))
    return properties


# --- generated schemas ---------------------------------------------------------------------------

_NAMES = st.sampled_from(["a", "meterId", "title", "data", "Meter", "EAN_code", "x-y", "1st", "Literal", "$defs", "enum"])
_PATTERNS = st.sampled_from(["^[0-9]+$", r"^\d{4}$", "a$", "(", r"^\w+\s?$", "[a-z]"])
_SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from([0.5, 1e20, "x", "object"])
_LEAF = st.booleans() | st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["object", "string", "integer", "array", ["string", "null"]]),
    "format": st.sampled_from(["date-time", "date", "uri", "uri-reference", "email", 3]),
    "pattern": _PATTERNS,
    "enum": st.lists(_SCALARS, max_size=3),
    "const": _SCALARS,
    "title": st.sampled_from(["Given", 7]),
    "description": st.text(max_size=5),
    "$ref": st.sampled_from(["#/$defs/Meter", "#/$defs/EAN_code"]),
    "default": _SCALARS,
})


def _node(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["object", "array", "string"]),
        "format": st.sampled_from(["date-time", "uri"]),
        "title": st.just("Given"),
        "properties": st.dictionaries(_NAMES, children, max_size=3),
        "$defs": st.dictionaries(_NAMES, children, max_size=2) | st.just([["a", {}]]),
        "items": children | st.lists(children, max_size=2),
        "additionalProperties": children,
        "not": children,
        "allOf": st.lists(children, max_size=2) | st.just({"odd": True}) | st.just("ab"),
        "anyOf": st.lists(children, max_size=2),
        "prefixItems": st.lists(children, max_size=2),
        "patternProperties": st.dictionaries(_PATTERNS, children, max_size=2),
        "enum": st.lists(_SCALARS, max_size=2),
        "$schema": st.just("https://json-schema.org/draft/2020-12/schema"),
        "$id": st.just("urn:x"),
        "examples": st.lists(st.dictionaries(_NAMES, _SCALARS, max_size=2), max_size=2),
    })


SCHEMAS = st.recursive(_LEAF, _node, max_leaves=12)
SHARED_NAMES = ["Meter", "EAN_code", "data", "Literal", "field"]
SHARED = st.fixed_dictionaries({name: SCHEMAS for name in SHARED_NAMES})
USES = st.lists(st.sampled_from(SHARED_NAMES), unique=True).map(lambda names: tuple(sorted(names)))
CLASS_NAMES = st.none() | st.sampled_from(["MeterUpdatedV1_0_0", "Event"])
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def events() -> list[Any]:
    """Real event types (every profile and attribute shape of the shipped catalogs)."""
    return [event for directory in ("catalog", "tests/catalogs/hostile") for event in lint(str(ROOT / directory)).catalog_set.events]


def _equal(fast: Any, slow: Any) -> None:
    """Equal as evcat writes them: the same bytes (key order included)."""
    assert dump_json(fast) == dump_json(slow)


@given(SCHEMAS, st.sampled_from(["Root", "MeterUpdatedV1_0_0Data"]))
@FAST
def test_one_walk_pins_and_titles_as_two_walks_do(schema: Any, title: str) -> None:
    _equal(pinned(schema), ref_pinned(schema))
    _equal(titled(schema, title), ref_titled(schema, title))
    _equal(titled(schema, title, pin=True), ref_titled(ref_pinned(schema), title))
    _equal(shared_titled("Meter", schema, pin=True), ref_shared_titled("Meter", ref_pinned(schema)))
    seen: list[tuple[str, str]] = []
    fast_seen: list[tuple[str, str]] = []

    def each(log: list[tuple[str, str]]) -> Callable[[dict[str, Any], dict[str, Any], str], None]:
        def record(node: dict[str, Any], copy: dict[str, Any], node_title: str) -> None:
            log.append((node_title, json.dumps(node, sort_keys=True, default=str)))
            copy["x-seen"] = node_title
        return record

    _equal(titled(schema, title, each(fast_seen)), ref_titled(schema, title, each(seen)))
    assert fast_seen == seen


@given(SCHEMAS, SHARED, USES, CLASS_NAMES, st.integers(0, 10_000))
@FAST
def test_the_two_documents_of_an_event_are_what_the_plain_builders_make(
        events: list[Any], payload: Any, shared_schemas: dict[str, Any], uses: tuple[str, ...], class_name: str | None,
        pick: int) -> None:
    candidates = [event for event in events if event.payload is not None]
    event = candidates[pick % len(candidates)]
    event = dataclasses.replace(event, payload=Payload(payload, uses))
    shared = {name: SharedSchema(name, name, "f.yaml", schema) for name, schema in shared_schemas.items()}
    try:
        expected_data = ref_payload_schema(event, shared, class_name)
    except (TypeError, ValueError) as error:  # an odd $defs Payload.bundled cannot copy: the same error
        with pytest.raises(type(error)):
            event_schemas(event, shared, class_name)
        return
    expected_defs, key = ref_payload_defs(event, shared, class_name)
    _equal(event_schemas(event, shared, class_name)[0], expected_data)
    whole = envelope_schema(event, shared, class_name=class_name)
    _equal(whole["$defs"], expected_defs)
    assert whole["properties"]["data"] == {"$ref": f"#/$defs/{key}"}
    memo: dict[tuple[str, bool], Any] = {}
    for _ in range(2):  # the memo of one catalog: the same documents the second time
        data, both = event_schemas(event, shared, class_name, memo)
        _equal(data, expected_data)
        _equal(both, whole)


def test_each_attribute_schema_is_as_titled_would_leave_it(events: list[Any]) -> None:
    """Every attribute of the shipped and hostile catalogs: the envelope's
    properties are those of the walk over each of them."""
    for event in events:
        for class_name in (None, "MeterUpdatedV1_0_0"):
            properties = envelope_schema(event, payload=False, class_name=class_name)["properties"]
            expected = ref_envelope_properties(event, class_name)
            _equal({name: properties[name] for name in expected}, expected)


_TEXT = st.none() | st.sampled_from(["", "x", "^[0-9]+$", "application/json", "2024-01-01T00:00:00Z"])


@given(st.builds(
    ContextAttribute, name=st.sampled_from(["id", "time", "sequence", "myext"]), type=st.sampled_from(sorted(vocabulary.TYPES)),
    required=st.booleans(), fixed=_TEXT, default=_TEXT, meaning=_TEXT, pattern=_TEXT, non_empty=st.booleans(),
    media_type=st.booleans(), extension=st.booleans(),
))
@FAST
def test_only_an_enum_attribute_schema_needs_a_title(attribute: ContextAttribute) -> None:
    """The reason the envelope walks no other attribute schema: ``titled``
    leaves it as it is."""
    schema = attribute_schema(attribute)
    if "enum" not in schema:
        _equal(ref_titled(schema, "Title"), schema)


def test_generated_json_schemas_are_byte_identical_to_the_plain_builders(events: list[Any]) -> None:
    """The JSON Schema renderer (shared memo, one payload walk) on the shipped catalogs."""
    from generator.render import jsonschema

    for directory in ("catalog", "tests/catalogs/hostile"):
        catalog_set = lint(str(ROOT / directory)).catalog_set
        files = jsonschema.render(catalog_set)
        for catalog in catalog_set.catalogs:
            names = naming.envelope_class_names(event.key for event in catalog.events)
            for event in catalog.events:
                from generator.render import event_dir

                folder = f"jsonschema/{event_dir(event)}"
                name = names[event.key]
                whole = envelope_schema(event, catalog_set.schemas, class_name=name)
                if event.payload is not None:
                    assert files[f"{folder}/data.schema.json"] == dump_json(ref_payload_schema(event, catalog_set.schemas, name))
                    whole["$defs"] = ref_payload_defs(event, catalog_set.schemas, name)[0]
                whole["properties"].update(ref_envelope_properties(event, name))
                assert files[f"{folder}/event.schema.json"] == dump_json(whole)


@given(st.text(max_size=30))
@settings(max_examples=300, deadline=None)
def test_memoised_names_are_the_names(name: str) -> None:
    for function in (naming.to_pascal, naming.safe_file_name):
        assert function(name) == function.__wrapped__(name)
        assert function.cache_info().maxsize is not None  # bounded: names come from catalogs


class _Colour(enum.IntEnum):
    RED = 1


class _Text(str):
    pass


@pytest.mark.parametrize("value", [
    {"a": (1, 2)}, [_Colour.RED], {"a": _Text("x")}, OrderedDict(a=1), {"n": 2**64}, {"n": -(2**63) - 1},
    {"n": 2**64 - 1}, [1.5, 1e16, float("nan"), float("inf")], [[[[]]]],
])
def test_dump_json_odd_values_are_written_as_the_standard_library_writes_them(value: Any) -> None:
    assert dump_json(value) == (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def test_the_runtime_names_are_told_without_parsing_exactly_as_with_parsing() -> None:
    """``is_generated_module_name`` parses the runtime only for a word its
    source spells: every name parsing finds is such a word (or needs no parsing)."""
    names = naming.generated_module_names()
    words = naming._runtime_words()
    assert words is not None
    assert names - naming._fixed_names() <= words
    assert {"EventError", "CloudEvent", "Field", "str", "kafka"} <= names
    for name in [*names, "MeterUpdatedV1_0_0", "Register", "Event", "Ｅｖｅｎｔ", "Eventé", "validate_event"]:
        assert naming.is_generated_module_name(name) == (name in names), name


@given(st.text(max_size=12) | st.sampled_from(sorted(naming.generated_module_names())))
@settings(max_examples=300, deadline=None)
def test_is_generated_module_name_is_membership(name: str) -> None:
    assert naming.is_generated_module_name(name) == (name in naming.generated_module_names())
