"""An ``allOf`` whose own properties redefine one of the schema it extends
(issue 26; contract §4.1): JSON Schema asks a value to hold for every
definition (2020-12 §10.2.1.1). datamodel-code-generator makes the
redefinition a subclass's field, which replaced the other definition: an
``enum`` beside a ``pattern`` accepted "ef", which the pattern refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.rules import RULES

from .test_schema_property import ENVELOPE, Judges

BASE = {"type": "object", "description": "Base.", "properties": {
    "code": {"type": "string", "pattern": "^[a-d]+$", "description": "Code."},
    "kind": {"type": "string", "enum": ["red", "green", "blue"], "description": "Kind."},
    "size": {"type": "integer", "minimum": 0, "description": "Size."},
    "note": {"type": "string", "minLength": 1, "description": "Note."},
    "at": {"type": "string", "format": "date-time", "description": "At."},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}, "description": "Tags."},
}}
OWN = {"type": "object", "properties": {
    "code": {"type": "string", "enum": ["ab", "ef", "abc"], "description": "An enum over the pattern."},
    "kind": {"type": "string", "pattern": "^[rg]", "description": "A pattern under the enum."},
    "size": {"type": "integer", "maximum": 10, "description": "Bounds of both."},
    # Nullable over a definition that is not (the property test's find): null fails the base.
    "note": {"type": ["string", "null"], "description": "Nullable over a string."},
    "at": {"type": ["string", "null"], "format": "date-time", "description": "Nullable over a date-time."},
    "tags": {"type": ["array", "null"], "items": {"type": "string", "maxLength": 2}, "description": "Nullable over an array."},
}}
CATALOG = {
    "catalog": "drawn", "title": "Redefined", "version": "1.0.0", "profile": "cloudevents",
    "producer": {"source": ENVELOPE["source"]}, "defaults": {"datacontenttype": "application/json"},
    "schemas": {"Base": BASE},
    "events": [{
        "type": "org.example.redefined", "dataversion": "1.0.0", "title": "Redefined",
        "description": "A payload that extends a shared schema and redefines its properties.",
        "data": {"allOf": [{"$ref": "#/schemas/Base"}, OWN]},
    }],
}
def _generated(catalog: dict[str, Any], directory: Path) -> Judges:
    """The judges of a catalog lint accepts, its package generated."""
    found = Judges(catalog, directory)
    assert found.errors == []
    found.generate()
    return found


# (property, value, accepted by JSON Schema: every definition holds)
CASES = [
    ("code", "ab", True), ("code", "abc", True), ("code", "ef", False), ("code", "ad", False),
    ("kind", "red", True), ("kind", "green", True), ("kind", "blue", False), ("kind", "rose", False),
    ("size", 3, True), ("size", 11, False), ("size", -1, False),
    ("note", "x", True), ("note", None, False), ("note", "", False),
    ("at", "2026-11-28T12:00:00Z", True), ("at", None, False),
    ("tags", ["ab"], True), ("tags", None, False), ("tags", ["abc"], False),
]


@pytest.fixture(scope="module")
def judges(tmp_path_factory: pytest.TempPathFactory) -> Judges:
    return _generated(CATALOG, tmp_path_factory.mktemp("redefined"))


@pytest.mark.parametrize(("name", "value", "accepted"), CASES, ids=[f"{n}={v!r}" for n, v, _ in CASES])
def test_a_redefined_property_holds_for_every_definition(judges: Judges, name: str, value: Any, accepted: bool) -> None:
    event = {**ENVELOPE, "type": "org.example.redefined", "data": {name: value}}
    verdicts = judges.verdicts(event)
    assert verdicts["jsonschema"] is accepted  # the case is what JSON Schema says
    assert set(verdicts.values()) == {accepted}, (verdicts, judges.why)
    if accepted:
        judges.round_trip(event)


# An object property redefined (issue 26): both definitions apply, so the
# nested object holds the required names and the properties of both, each
# property as every definition says, and a closed base stays closed.
OBJECT_BASE = {"type": "object", "description": "Base.", "properties": {
    "meter": {"type": "object", "required": ["id"], "description": "Meter.", "properties": {
        "id": {"type": "string", "description": "Id."},
        "size": {"type": "integer", "minimum": 0, "description": "Size."},
        "serial": {"type": "string", "description": "Serial, optional."},
    }},
    "place": {"type": "object", "additionalProperties": False, "description": "Place.", "properties": {
        "city": {"type": "string", "description": "City."},
        "zip": {"type": ["string", "null"], "description": "Zip."},
    }},
    "owner": {"type": ["object", "null"], "description": "Owner.", "properties": {
        "name": {"type": "string", "description": "Name."},
    }},
}}
OBJECT_OWN = {"type": "object", "properties": {
    "meter": {"type": "object", "required": ["unit"], "description": "Meter again.", "properties": {
        "unit": {"type": "string", "description": "Unit."},
        "size": {"type": "integer", "maximum": 10, "description": "Size again."},
    }},
    "place": {"type": "object", "required": ["city"], "description": "Place again.", "properties": {
        "city": {"type": "string", "maxLength": 5, "description": "City again."},
    }},
    "owner": {"type": "object", "required": ["name"], "description": "Owner again.", "properties": {
        "name": {"type": "string", "minLength": 2, "description": "Name again."},
    }},
}}
OBJECT_CATALOG = {**CATALOG, "schemas": {"Base": OBJECT_BASE}, "events": [{
    **CATALOG["events"][0], "data": {"allOf": [{"$ref": "#/schemas/Base"}, OBJECT_OWN]},
}]}
OBJECT_CASES = [
    ("meter", {"id": "m1", "unit": "kWh"}, True),
    ("meter", {"id": "m1", "unit": "kWh", "size": 5}, True),
    ("meter", {"id": "m1", "unit": "kWh", "extra": [1, None]}, True),
    ("meter", {"unit": "kWh"}, False),  # the base's required id
    ("meter", {"id": "m1"}, False),  # the redefinition's required unit
    ("meter", {"id": None, "unit": "kWh"}, False),  # the base's id is no null
    ("meter", {"id": 5, "unit": "kWh"}, False),
    ("meter", {"id": "m1", "unit": "kWh", "serial": "s"}, True),
    ("meter", {"id": "m1", "unit": "kWh", "serial": None}, False),  # the base's optional serial is no null
    ("meter", {"id": "m1", "unit": "kWh", "size": 11}, False),
    ("meter", {"id": "m1", "unit": "kWh", "size": -1}, False),
    ("meter", None, False),
    ("place", {"city": "Ams"}, True),
    ("place", {"city": "Ams", "zip": None}, True),
    ("place", {"city": "Amsterdam"}, False),
    ("place", {}, False),
    ("place", {"city": "Ams", "extra": 1}, False),  # the base is closed
    ("owner", {"name": "Ann"}, True),
    ("owner", {"name": "A"}, False),
    ("owner", {}, False),
    ("owner", None, False),  # the redefinition is no null
]


@pytest.fixture(scope="module")
def object_judges(tmp_path_factory: pytest.TempPathFactory) -> Judges:
    return _generated(OBJECT_CATALOG, tmp_path_factory.mktemp("redefined-objects"))


@pytest.mark.parametrize(("name", "value", "accepted"), OBJECT_CASES,
                         ids=[f"{n}={v!r}" for n, v, _ in OBJECT_CASES])
def test_a_redefined_object_property_holds_for_both_definitions(object_judges: Judges, name: str, value: Any,
                                                                 accepted: bool) -> None:
    event = {**ENVELOPE, "type": "org.example.redefined", "data": {name: value}}
    verdicts = object_judges.verdicts(event)
    assert verdicts["jsonschema"] is accepted  # the case is what JSON Schema says
    assert set(verdicts.values()) == {accepted}, (verdicts, object_judges.why)
    if accepted:
        object_judges.round_trip(event)


# The finding of the schema property (issue 26): a closed branch of an allOf
# (``additionalProperties: false``, or a schema) applies to the names the
# allOf declares elsewhere. JSON Schema's judges refuse every event that
# holds ``closedAt``; the generated model, which subclasses Base and adds
# ``closedAt``, would take it. Lint refuses the catalog (PAY-ALLOF-CLOSED), so
# no package with the split verdict is generated.
CLOSED_BASE = {"type": "object", "description": "A base object.", "additionalProperties": False, "properties": {
    "price": {"type": "number", "description": "Price."},
    "pricePerKwh": {"type": "number", "description": "Per kWh."},
    "note": {"type": "string", "description": "Note."},
    "label": {"type": "string", "description": "Label."},
}}
CLOSED_DATA = {"allOf": [{"$ref": "#/schemas/Base"}], "type": "object", "description": "The payload.",
               "properties": {"closedAt": {"type": ["string", "null"], "format": "date-time", "description": "Closed."}}}
PLACE_AGAIN = {"allOf": [{"$ref": "#/schemas/Base"}], "type": "object", "description": "The payload.", "properties": {
    "place": {"type": "object", "description": "Place again.", "properties": {
        "country": {"type": "string", "description": "Not in the base's closed place."}}}}}
# (base, payload schema, the name left out, an event's data that holds it)
CLOSED_CASES = {
    "additionalProperties false": (CLOSED_BASE, CLOSED_DATA, "closedAt", {"closedAt": None}),
    "additionalProperties a schema": ({**CLOSED_BASE, "additionalProperties": {"type": "integer"}}, CLOSED_DATA,
                                      "closedAt", {"closedAt": "2024-01-01T00:00:00Z"}),
    "a closed object property redefined": (OBJECT_BASE, PLACE_AGAIN, "country",
                                           {"place": {"city": "Ams", "country": "NL"}}),
}


@pytest.mark.parametrize("case", CLOSED_CASES)
def test_a_closed_allof_branch_that_leaves_out_a_declared_property_is_refused(
        case: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    base, schema, name, data = CLOSED_CASES[case]
    catalog = {**CATALOG, "schemas": {"Base": base}, "events": [{**CATALOG["events"][0], "data": schema}]}
    judges = Judges(catalog, tmp_path_factory.mktemp("closed"), refused_too=True)
    assert [d.rule for d in judges.errors] == ["PAY-ALLOF-CLOSED"], judges.errors
    error = judges.errors[0]
    assert f"property '{name}'" in error.message and "'Base" in error.message, error.message
    lines = (judges.root / "catalog" / "drawn.yaml").read_text(encoding="utf-8").splitlines()
    assert lines[error.location.line - 1][error.location.column - 1:].startswith(name), (error.location, lines)
    # Why: every judge that reads the schema refuses the name the closed branch leaves out.
    event = {**ENVELOPE, "type": "org.example.redefined", "data": data}
    _, python_judge, rust_judge = judges.schemas["org.example.redefined"]
    assert not python_judge.is_valid(event) and not rust_judge.is_valid(event)
    def is_error(problem: Any) -> bool:
        return RULES[problem.rule].severity.name == "ERROR"

    assert any(map(is_error, judges.fast.check(event, 100)))
    assert any(map(is_error, judges.checker.check(event, wire_size=100)))


# A required property redefined as nullable (the schema property test's
# find): null fails the definition that is no null, so every judge refuses
# it, written as an allOf branch or beside the allOf (the payload's own
# properties).
NULLABLE_BASE = {"type": "object", "description": "Base.", "required": ["note", "at", "tags"], "properties": {
    "note": {"type": "string", "minLength": 1, "maxLength": 4, "description": "Note."},
    "at": {"type": "string", "format": "date-time", "description": "At."},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}, "description": "Tags."},
}}
NULLABLE_OWN = {
    "note": {"type": ["string", "null"], "description": "Nullable over a string."},
    "at": {"type": ["string", "null"], "format": "date-time", "description": "Nullable over a date-time."},
    "tags": {"type": ["array", "null"], "items": {"type": "string", "maxLength": 2}, "description": "Nullable over an array."},
}
NULLABLE_CATALOG = {**CATALOG, "schemas": {"Base": NULLABLE_BASE}, "events": [
    {**CATALOG["events"][0], "type": "org.example.branch",
     "data": {"allOf": [{"$ref": "#/schemas/Base"}, {"type": "object", "properties": NULLABLE_OWN}]}},
    {**CATALOG["events"][0], "type": "org.example.beside",
     "data": {"allOf": [{"$ref": "#/schemas/Base"}], "type": "object", "properties": NULLABLE_OWN}},
]}
NULLABLE_VALID = {"note": "x", "at": "2026-11-28T12:00:00Z", "tags": ["ab"]}
NULLABLE_CASES = [
    ("note", "y", True), ("note", None, False), ("note", "", False), ("note", "abcde", False),
    ("at", None, False), ("at", "2026-11-28 12:00:00Z", False),
    ("tags", None, False), ("tags", ["abc"], False), ("tags", [], True),
]


@pytest.fixture(scope="module")
def nullable_judges(tmp_path_factory: pytest.TempPathFactory) -> Judges:
    return _generated(NULLABLE_CATALOG, tmp_path_factory.mktemp("nullable"))


@pytest.mark.parametrize("shape", ["branch", "beside"])
@pytest.mark.parametrize(("name", "value", "accepted"), NULLABLE_CASES, ids=[f"{n}={v!r}" for n, v, _ in NULLABLE_CASES])
def test_a_required_property_redefined_as_nullable_is_no_null(nullable_judges: Judges, shape: str, name: str,
                                                                value: Any, accepted: bool) -> None:
    event = {**ENVELOPE, "type": f"org.example.{shape}", "data": {**NULLABLE_VALID, name: value}}
    verdicts = nullable_judges.verdicts(event)
    assert verdicts["jsonschema"] is accepted  # the case is what JSON Schema says
    assert set(verdicts.values()) == {accepted}, (verdicts, nullable_judges.why)
    if accepted:
        nullable_judges.round_trip(event)


def test_enum_values_are_judged_through_the_shared_schemas_a_definition_references() -> None:
    """``envelope.accepted_by_every`` (the renderer's narrowing and lint's
    "may never be sent"): a definition is judged with the shared schemas it
    references, transitively, and a recursive one ends; the others are left
    out of its judge (with a catalog's 1,000 a compile took 10 ms)."""
    from generator.envelope import _referenced, accepted_by_every

    shared = {
        "Code": {"$ref": "#/$defs/Letters"},
        "Letters": {"type": "string", "pattern": "^[a-c]+$"},
        "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}},
        "Other": {"type": "integer"},
    }
    assert accepted_by_every(["ab", "ef", 5], [{"$ref": "#/$defs/Code"}, {"enum": ["ab", "ef", 5]}], shared) == ["ab"]
    assert sorted(_referenced({"$ref": "#/$defs/Code"}, shared)) == ["Code", "Letters"]
    assert sorted(_referenced({"items": {"$ref": "#/$defs/Tree"}}, shared)) == ["Tree"]
