"""FastAPI sees the constraints of ``event.schema.json`` (issue 31).

A FastAPI app takes each generated envelope class as its request body. Its
OpenAPI document is what client generators read: a body that document allows
must be accepted by the server, and a body ``event.schema.json`` refuses
(Het Normo's ``time`` form, URI and media-type grammars, control characters,
payload patterns and formats) must not be allowed by it. Every body below is
judged three ways: the OpenAPI schema (jsonschema, 2020-12, formats
asserted), event.schema.json, and the running app (FastAPI's TestClient).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from generator.commands.lint import lint
from generator.envelope import event_schemas
from generator.model import EventType
from generator.naming import envelope_class_names

from .goldens import CATALOGS
from .test_python_output import generated, package  # noqa: F401  (generated: the shared fixture)

FORMATS = Draft202012Validator.FORMAT_CHECKER

TIMES = [
    "2024-01-01T00:00:00Z",
    "2024-01-01T00:00:00.000000Z",
    "2024-01-01T00:00:00.123456Z",
    "2024-01-01T00:00:00.123456+01:00",
    "2024-01-01T00:00:00.123Z",
    "2024-01-01 00:00:00.123456Z",
    "2024-13-01T00:00:00.123456Z",
    "2024-01-01T00:00:00.123456Z\n",
    "24-01-01T00:00:00Z",
]
STRINGS = ["", "x", "a b", "a\u0001b", "urn:x:y", "/relative/path", "https://example.nl/a", "http://[bad",
           "application/json", "application/json; charset=utf-8", "json", "text/plain\n", "2024-01-01",
           "E00000000035671400", "871685900000000001"]


def _mutations(event: EventType, full: dict[str, Any], data_schema: dict[str, Any] | None) -> list[dict[str, Any]]:
    bodies = [full]
    for name in ("time", *(a.name for a in event.extensions if a.type == "Timestamp")):
        bodies += [{**full, name: value} for value in TIMES]
    for name in ("id", "source", "subject", "datacontenttype", "dataschema",
                 *(a.name for a in event.extensions if a.type in ("String", "URI", "URI-reference"))):
        bodies += [{**full, name: value} for value in STRINGS]
    # Undeclared extension attributes (contract §5): valid names, CloudEvents-typed values.
    for extra in ({"Bad_Name": "x"}, {"bad-name": "x"}, {"ext": {"a": 1}}, {"ext": [1]}, {"ext": 1.5}, {"ext": 2**31},
                  {"ext": "a\u0001b"}, {"ext": "x"}, {"ext": 7}, {"ext": True}, {"data_base64": "aGk="}):
        bodies.append({**full, **extra})
    data = full.get("data")
    if isinstance(data, dict) and data_schema is not None:
        for name, value in data.items():
            if isinstance(value, str):
                for text in [*STRINGS, *TIMES]:
                    changed = copy.deepcopy(full)
                    changed["data"][name] = text
                    bodies.append(changed)
    return bodies


def _app_and_openapi(classes: list[type[Any]]) -> tuple[Any, dict[str, Any]]:
    from fastapi import FastAPI, Response

    app = FastAPI()
    for index, cls in enumerate(classes):
        def handler(event: Any) -> Response:
            return Response(status_code=204)

        handler.__annotations__ = {"event": cls, "return": Response}
        app.post(f"/{index}", status_code=204, response_class=Response)(handler)
    return app, app.openapi()


@pytest.mark.parametrize("catalog_name", sorted(CATALOGS))
def test_fastapi_openapi_allows_what_the_server_accepts_and_refuses_what_event_schema_refuses(
    generated: Path, catalog_name: str,
) -> None:
    from fastapi.testclient import TestClient

    catalog_set = lint(str(CATALOGS[catalog_name])).catalog_set
    checked = disagreements = 0
    problems: list[str] = []
    for catalog in catalog_set.catalogs:
        module = package(generated, catalog.id)
        names = envelope_class_names(event.key for event in catalog.events)
        events = list(catalog.events)
        classes = [module.EVENTS[event.key] for event in events]
        app, openapi = _app_and_openapi(classes)
        client = TestClient(app)
        for index, event in enumerate(events):
            operation = openapi["paths"][f"/{index}"]["post"]
            body_schema = operation["requestBody"]["content"]["application/json"]["schema"]
            allowed = Draft202012Validator({**body_schema, "components": openapi.get("components", {})},
                                           format_checker=FORMATS)
            data_schema, envelope = event_schemas(event, catalog_set.schemas, names[event.key])
            judge = Draft202012Validator(envelope, format_checker=FORMATS)
            for values in [example.values for example in event.examples] or [{}]:
                full = event.complete_example(values)
                for extension in event.extensions:
                    if extension.required and extension.name not in full:
                        full[extension.name] = 7 if extension.type == "Integer" else "x" if extension.type == "String" else "https://example.nl/x"
                for body in _mutations(event, full, data_schema):
                    in_openapi = allowed.is_valid(body)
                    in_schema = judge.is_valid(body)
                    accepted = client.post(f"/{index}", json=body).status_code == 204
                    checked += 1
                    if in_openapi and not accepted:
                        problems.append(f"{event.type} {event.dataversion}: OpenAPI allows, server refuses: {body}")
                    if not in_schema and in_openapi:
                        problems.append(f"{event.type} {event.dataversion}: event.schema.json refuses, OpenAPI allows: {body}")
                    disagreements += in_schema != accepted
    assert checked >= 40 * len(catalog_set.events), checked
    assert problems == [], f"{len(problems)} of {checked}:\n" + "\n".join(problems[:25])


def test_the_payload_format_types_carry_the_patterns_event_schema_json_pins() -> None:
    """The runtime's copies of the payload formats' patterns are the generator's
    (``envelope.pinned``): a payload property of a format has the same
    pattern in the classes' JSON Schema as in event.schema.json."""
    from pydantic import TypeAdapter

    from generator.envelope import _format_grammar
    from generator.runtime import _values

    for format_, annotation in (("date-time", _values.DateTime), ("date", _values.Date), ("uri", _values.Uri),
                                ("uri-reference", _values.UriReference), ("uuid", _values.Uuid),
                                ("email", _values.Email), ("time", _values.Time), ("ipv4", _values.Ipv4),
                                ("hostname", _values.Hostname), ("duration", _values.Duration),
                                ("ipv6", _values.Ipv6), ("json-pointer", _values.JsonPointer),
                                ("idn-email", _values.IdnEmail), ("idn-hostname", _values.IdnHostname),
                                ("iri", _values.Iri), ("iri-reference", _values.IriReference),
                                ("uri-template", _values.UriTemplate),
                                ("relative-json-pointer", _values.RelativeJsonPointer)):
        schema = TypeAdapter(annotation).json_schema()
        assert schema == {"type": "string", "format": format_, **(_format_grammar({"format": format_}) or {})}, format_
