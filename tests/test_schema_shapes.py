"""Issue 26: the shapes real APIs use (GitHub's nullable ``closed_at``, Stripe's
nullable fields, prices sent as whole numbers, open payloads with snake_case
keys beside camelCase fields) keep contract §4.1: one verdict, and round trips
that keep the text of every value.

Each test failed before its fix:
- ``type: [string, "null"]`` with ``format: date-time`` / ``uri`` became
  pydantic's ``AwareDatetime`` / ``AnyUrl``: ``parse_event`` accepted
  ``2019-05-15 15:20:18Z`` and ``https://example.org/ä`` (which `evcat validate`
  and event.schema.json refuse) and rewrote ``.1234567Z`` and
  ``https://example.org``;
- a ``number`` sent as ``1`` came back as ``1.0`` and integers beyond 2**53
  lost digits;
- ``pricePerKwh: null`` beside an undeclared ``price_per_kwh`` lost
  ``pricePerKwh`` in the round trip.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest

from generator.commands.generate import render
from generator.commands.lint import lint
from generator.envelope import envelope_schema

from .conftest import run_evcat

CATALOG = """\
catalog: shapes
title: Shapes of real APIs
version: 1.0.0
profile: cloudevents
producer:
  source: https://github.com/example
events:
  - type: com.example.issue.closed
    dataversion: 1.0.0
    title: Issue closed
    description: An issue was closed.
    data:
      type: object
      description: The issue, as GitHub sends it.
      required: [closedAt]
      properties:
        closedAt: {type: [string, "null"], format: date-time, description: When it closed.}
        url: {type: [string, "null"], format: uri, description: Where it is.}
        dueOn: {type: [string, "null"], format: date, description: When it is due.}
        price: {type: number, description: A price.}
        pricePerKwh: {type: [number, "null"], description: Price per kWh.}
        low: {type: number, minimum: 0, multipleOf: 0.5, description: Low.}
    examples:
      - data: {closedAt: "2019-05-15T15:20:18Z", url: "https://example.org", price: 1, pricePerKwh: null}
"""

BASE = {"specversion": "1.0", "id": "x", "source": "https://github.com/example",
        "type": "com.example.issue.closed", "dataversion": "1.0.0", "datacontenttype": "application/json"}


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path, Any]]:
    root = tmp_path_factory.mktemp("shapes")
    catalog = root / "catalog"
    catalog.mkdir()
    (catalog / "shapes.yaml").write_text(CATALOG, encoding="utf-8")
    result = lint(str(catalog))
    assert not result.diagnostics, result.diagnostics
    for relative, content in render(result.catalog_set, ["python"])["python"].items():
        path = root / "out" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    sys.path.insert(0, str(root / "out" / "python"))
    (event,) = result.catalog_set.events
    schema = envelope_schema(event, result.catalog_set.schemas)
    yield importlib.import_module("shapes"), catalog, schema
    sys.path.remove(str(root / "out" / "python"))
    sys.modules.pop("shapes", None)


def _verdicts(shapes: tuple[Any, Path, Any], data: dict[str, Any], tmp_path: Path) -> dict[str, bool]:
    """Accepted (True) or refused by each judge."""
    module, catalog, schema = shapes
    event = {**BASE, "data": data}
    text = json.dumps(event, ensure_ascii=False)
    verdicts: dict[str, bool] = {}
    try:
        module.parse_event(text)
        verdicts["parse_event"] = True
    except ValueError:
        verdicts["parse_event"] = False
    path = tmp_path / "event.json"
    path.write_text(text, encoding="utf-8")
    verdicts["evcat validate"] = run_evcat("validate", str(catalog), str(path)).returncode == 0
    checker = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    verdicts["jsonschema"] = checker.is_valid(event)
    verdicts["jsonschema-rs"] = jsonschema_rs.Draft202012Validator(schema, validate_formats=True).is_valid(event)
    return verdicts


@pytest.mark.parametrize("data", [
    {"closedAt": "2019-05-15 15:20:18Z"},  # a space for the T: not RFC 3339
    {"closedAt": None, "url": "https://example.org/ä"},  # not an RFC 3986 URI
    {"closedAt": None, "dueOn": "2019-02-30"},
], ids=["date-time with a space", "uri with a non-ASCII letter", "date that is no day"])
def test_nullable_formats_are_refused_by_every_judge(shapes: Any, data: dict[str, Any], tmp_path: Path) -> None:
    verdicts = _verdicts(shapes, data, tmp_path)
    assert not any(verdicts.values()), verdicts


@pytest.mark.parametrize("data", [
    {"closedAt": "2019-05-15T15:20:18.1234567Z"},  # seven fraction digits
    {"closedAt": "2019-05-15T17:20:18+02:00", "url": "https://example.org"},  # no slash added
    {"closedAt": None, "url": None, "dueOn": "2019-05-15"},
    {"closedAt": None, "price": 1, "low": 2},  # whole numbers stay whole
    {"closedAt": None, "price": 1.0, "low": 1.5},  # and fractions fractions
    {"closedAt": None, "price": 9007199254740993},  # beyond 2**53, exactly
    {"closedAt": None, "pricePerKwh": None, "price_per_kwh": None},  # a Python name as undeclared key
    {"closedAt": None, "closed_at": False},
    {"closedAt": None, "price_per_kwh": 3},
])
def test_accepted_values_round_trip_with_their_text(shapes: Any, data: dict[str, Any], tmp_path: Path) -> None:
    module = shapes[0]
    verdicts = _verdicts(shapes, data, tmp_path)
    assert all(verdicts.values()), verdicts
    raw = json.dumps({**BASE, "data": data}, ensure_ascii=False, separators=(",", ":"))
    event = module.parse_event(raw)
    dumped = event.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert dumped["data"] == data
    _, body = module.to_http(event)
    # the text of every value: compare the JSON texts, not Python's 1 == 1.0
    assert json.dumps(json.loads(body)["data"], sort_keys=True) == json.dumps(data, sort_keys=True)
    assert json.dumps(event.to_dict()["data"], sort_keys=True) == json.dumps(data, sort_keys=True)


def test_a_number_field_keeps_its_python_type(shapes: Any) -> None:
    module = shapes[0]
    whole = module.parse_event(json.dumps({**BASE, "data": {"closedAt": None, "price": 3}}))
    assert type(whole.data.price) is int
    fraction = module.parse_event(json.dumps({**BASE, "data": {"closedAt": None, "price": 2.5}}))
    assert type(fraction.data.price) is float
    with pytest.raises(ValueError):
        module.parse_event(json.dumps({**BASE, "data": {"closedAt": None, "price": True}}))
    with pytest.raises(ValueError):
        module.parse_event(json.dumps({**BASE, "data": {"closedAt": None, "low": 1.25}}))  # multipleOf 0.5
