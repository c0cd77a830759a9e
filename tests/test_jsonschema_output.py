"""The JSON Schema output, checked by the independent `jsonschema` package."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from generator.commands.generate import render
from generator.commands.lint import lint

from .conftest import ROOT

CATALOG = lint(str(ROOT / "catalog"))
FILES = render(CATALOG.catalog_set, ["jsonschema"])["jsonschema"]
SCHEMAS = {path: json.loads(content) for path, content in FILES.items() if path.endswith(".schema.json")}
INDEX = json.loads(FILES["jsonschema/index.json"])
REGISTRY = Registry().with_resources(
    (schema["$id"], Resource.from_contents(schema)) for schema in SCHEMAS.values()
)
FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER


def envelope_validator(event_type: str, dataversion: str | None) -> jsonschema.Draft202012Validator:
    entry = next(e for e in INDEX if e["type"] == event_type and e["dataversion"] == dataversion)
    schema = SCHEMAS[f"jsonschema/{entry['event']}"]
    return jsonschema.Draft202012Validator(schema, registry=REGISTRY, format_checker=FORMATS)


HOSTILE = render(lint(str(ROOT / "tests" / "catalogs" / "hostile")).catalog_set, ["jsonschema"])["jsonschema"]
ALL_SCHEMAS = {**SCHEMAS, **{f"hostile:{p}": json.loads(c) for p, c in HOSTILE.items() if p.endswith(".schema.json")}}


@pytest.mark.parametrize("path", sorted(ALL_SCHEMAS))
def test_every_schema_is_valid_2020_12(path: str) -> None:
    schema = ALL_SCHEMAS[path]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"]


def test_index_lists_every_event_with_existing_paths() -> None:
    assert len(INDEX) == len(CATALOG.catalog_set.events)
    for entry in INDEX:
        assert f"jsonschema/{entry['event']}" in SCHEMAS
        assert entry["data"] is None or f"jsonschema/{entry['data']}" in SCHEMAS
    assert [e for e in INDEX if e["type"] == "mdm.meter.updated"] == sorted(
        [e for e in INDEX if e["type"] == "mdm.meter.updated"], key=lambda e: [int(p) for p in e["dataversion"].split(".")]
    )


def test_dataschema_becomes_the_payload_id() -> None:
    entry = next(e for e in INDEX if e["type"] == "mdm.meter.updated" and e["dataversion"] == "2.0.0")
    assert SCHEMAS[f"jsonschema/{entry['data']}"]["$id"] == "https://schemas.edsn.example.nl/mdm/meter-updated/2.0.0"


def _examples() -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for event in CATALOG.catalog_set.events:
        for example in event.examples:
            full = event.complete_example(example.values)
            for extension in event.extensions:  # examples may leave required extensions out
                if extension.required and extension.name not in full:
                    full[extension.name] = "x" if extension.type == "String" else "https://example.nl/x"
            cases.append((f"{event.type}@{event.dataversion}#{example.index}", full))
    return cases


EXAMPLES = _examples()


@pytest.mark.parametrize("name,event", EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_every_example_validates_against_its_envelope(name: str, event: dict[str, Any]) -> None:
    validator = envelope_validator(event["type"], event.get("dataversion"))
    errors = [e.message for e in validator.iter_errors(event)]
    assert not errors, errors


def _mutations(event: dict[str, Any]) -> dict[str, dict[str, Any]]:
    mutated: dict[str, dict[str, Any]] = {}
    missing_id = copy.deepcopy(event)
    del missing_id["id"]
    mutated["missing id"] = missing_id
    mutated["other type"] = {**copy.deepcopy(event), "type": event["type"] + "x"}
    if "dataversion" in event:
        mutated["wrong dataversion"] = {**copy.deepcopy(event), "dataversion": "9.9.9"}
    mutated["bad specversion"] = {**copy.deepcopy(event), "specversion": "0.3"}
    mutated["invalid extension name"] = {**copy.deepcopy(event), "My_Ext": "x"}
    mutated["extension out of int32"] = {**copy.deepcopy(event), "someext": 2**31}
    if "data" in event:
        mutated["data and data_base64"] = {**copy.deepcopy(event), "data_base64": "e30="}
    else:
        mutated["data on a notification"] = {**copy.deepcopy(event), "data": {"a": 1}}
    return mutated


@pytest.mark.parametrize("name,event", EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_mutated_events_are_rejected(name: str, event: dict[str, Any]) -> None:
    validator = envelope_validator(event["type"], event.get("dataversion"))
    for what, mutated in _mutations(event).items():
        assert not validator.is_valid(mutated), f"{what} was accepted"


def test_normo_time_must_have_microseconds_and_z() -> None:
    name, event = next((n, e) for n, e in EXAMPLES if n.startswith("mdm.meter.updated@2.0.0"))
    validator = envelope_validator(event["type"], event["dataversion"])
    assert validator.is_valid(event)
    for bad in ("2024-01-01T00:00:00Z", "2024-01-01T01:00:00.000000+01:00", "2024-01-01T00:00:00.000Z"):
        assert not validator.is_valid({**event, "time": bad}), bad
    without_time = dict(event)
    del without_time["time"]
    assert not validator.is_valid(without_time)


def test_payload_field_of_the_wrong_type_is_rejected() -> None:
    name, event = next((n, e) for n, e in EXAMPLES if n.startswith("mdm.meter.updated@2.0.0"))
    validator = envelope_validator(event["type"], event["dataversion"])
    bad = copy.deepcopy(event)
    bad["data"]["meter"]["registers"][0]["tariff"] = 5
    paths = [list(error.absolute_path) for error in validator.iter_errors(bad)]
    assert ["data", "meter", "registers", 0, "tariff"] in paths, paths


def test_required_extension_is_required() -> None:
    name, event = next((n, e) for n, e in EXAMPLES if n.startswith("mdm.meter.updated@2.0.0"))
    validator = envelope_validator(event["type"], event["dataversion"])
    without = dict(event)
    del without["gridoperator"]
    assert not validator.is_valid(without)


def test_optional_attributes_are_type_arrays_with_the_verdict_of_any_of_null() -> None:
    """Nullable as ``type: [X, "null"]`` (what Modelina reads as an optional X),
    judging every value as ``anyOf: [X, {type: null}]`` did (contract 4.1)."""
    from generator.envelope import attribute_schema

    values = [None, "", "x", "a\nb", "\u0000", "2024-01-01T00:00:00.000000Z", "https://x.nl/a b", 0, 2**31, True, 1.5, [], {}]
    seen = 0
    for catalog in (CATALOG, lint(str(ROOT / "tests" / "catalogs" / "hostile"))):
        for event in catalog.catalog_set.events:
            for attribute in event.attributes:
                if attribute.required:
                    continue
                schema = attribute_schema(attribute)
                assert "anyOf" not in schema, (event.type, attribute.name, schema)
                assert "null" in schema.get("type", []) or None in schema.get("enum", []), schema
                required = dataclasses.replace(attribute, required=True)
                old = {"anyOf": [attribute_schema(required), {"type": "null"}]}
                for value in [*values, *(attribute.default,), *([attribute.fixed] if attribute.fixed else [])]:
                    verdict = jsonschema.Draft202012Validator(schema, format_checker=FORMATS).is_valid(value)
                    assert verdict == jsonschema.Draft202012Validator(old, format_checker=FORMATS).is_valid(value), (
                        attribute.name, value)
                seen += 1
    assert seen > 20


def test_schemas_are_titled_as_the_python_classes() -> None:
    """The envelope, its payload, nested objects and enums, and shared schemas
    carry the names of the generated package's classes (naming.py)."""
    entry = next(e for e in INDEX if e["type"] == "mdm.meter.updated" and e["dataversion"] == "2.0.0")
    event, data = SCHEMAS[f"jsonschema/{entry['event']}"], SCHEMAS[f"jsonschema/{entry['data']}"]
    assert event["title"] == "MdmMeterUpdatedV2_0_0"
    assert event["$defs"]["data"]["title"] == data["title"] == "MdmMeterUpdatedV2_0_0Data"
    assert event["$defs"]["Meter"]["title"] == data["$defs"]["Meter"]["title"] == "Meter"
    assert data["$defs"]["EanCode"]["title"] == "EanCode"
    assert data["properties"]["reason"]["title"] == "MdmMeterUpdatedV2_0_0DataReason"
    entry = next(e for e in INDEX if e["type"] == "mdm.reading.validated")
    data = SCHEMAS[f"jsonschema/{entry['data']}"]
    assert data["properties"]["registers"]["items"]["title"] == "MdmReadingValidatedV1_0_0DataRegistersItem"
