"""An ``allOf`` whose own properties redefine one of the schema it extends
(issue 26; contract §4.1): JSON Schema asks a value to hold for every
definition (2020-12 §10.2.1.1). datamodel-code-generator makes the
redefinition a subclass's field, which replaced the other definition: an
``enum`` beside a ``pattern`` accepted "ef", which the pattern refuses."""

from __future__ import annotations

from typing import Any

import pytest

from .test_schema_property import ENVELOPE, Judges

BASE = {"type": "object", "description": "Base.", "properties": {
    "code": {"type": "string", "pattern": "^[a-d]+$", "description": "Code."},
    "kind": {"type": "string", "enum": ["red", "green", "blue"], "description": "Kind."},
    "size": {"type": "integer", "minimum": 0, "description": "Size."},
    "mode": {"type": ["string", "null"], "maxLength": 3, "description": "Mode."},
}}
OWN = {"type": "object", "properties": {
    "code": {"type": "string", "enum": ["ab", "ef", "abc"], "description": "An enum over the pattern."},
    "kind": {"type": "string", "pattern": "^[rg]", "description": "A pattern under the enum."},
    "size": {"type": "integer", "maximum": 10, "description": "Bounds of both."},
    "mode": {"const": "fast", "description": "A const over a nullable maxLength."},
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
# (property, value, accepted by JSON Schema: every definition holds)
CASES = [
    ("code", "ab", True), ("code", "abc", True), ("code", "ef", False), ("code", "ad", False),
    ("kind", "red", True), ("kind", "green", True), ("kind", "blue", False), ("kind", "rose", False),
    ("size", 3, True), ("size", 11, False), ("size", -1, False),
    ("mode", "fast", False), ("mode", None, False), ("mode", "fas", False),
]


@pytest.fixture(scope="module")
def judges(tmp_path_factory: pytest.TempPathFactory) -> Judges:
    found = Judges(CATALOG, tmp_path_factory.mktemp("redefined"))
    assert found.errors == []
    found.generate()
    return found


@pytest.mark.parametrize(("name", "value", "accepted"), CASES, ids=[f"{n}={v!r}" for n, v, _ in CASES])
def test_a_redefined_property_holds_for_every_definition(judges: Judges, name: str, value: Any, accepted: bool) -> None:
    event = {**ENVELOPE, "type": "org.example.redefined", "data": {name: value}}
    verdicts = judges.verdicts(event)
    assert verdicts["jsonschema"] is accepted  # the case is what JSON Schema says
    assert set(verdicts.values()) == {accepted}, (verdicts, judges.why)
    if accepted:
        judges.round_trip(event)
