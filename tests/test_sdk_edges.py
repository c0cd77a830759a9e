"""What evcat's readers accept from the official CloudEvents SDKs where those
SDKs bend the spec (issue 20: "decide per case, and document it"; README,
"What evcat's readers accept from other CloudEvents SDKs"). The JavaScript SDK
runs in node (tests/node/http-message.mjs); the Python SDK v1 in-process."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError

from generator.commands.generate import render
from generator.commands.lint import lint

from .conftest import ROOT


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ModuleType]]:
    out = tmp_path_factory.mktemp("sdk-edges")
    catalog_set = lint(str(ROOT / "catalog")).catalog_set
    for relative, content in render(catalog_set, ["python"])["python"].items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    sys.path.insert(0, str(out / "python"))
    try:
        for name in [m for m in sys.modules if m.split(".")[0] in ("meter_data", "brp_personen")]:
            del sys.modules[name]
        yield {name: importlib.import_module(name) for name in ("meter_data", "brp_personen")}
    finally:
        sys.path.remove(str(out / "python"))


def _js(node_tools: Path, tmp_path: Path, *arguments: Any) -> dict[str, Any]:
    files = []
    for index, argument in enumerate(arguments):
        if isinstance(argument, dict):
            path = tmp_path / f"arg{index}.json"
            path.write_text(json.dumps(argument), encoding="utf-8")
            files.append(str(path))
        else:
            files.append(str(argument))
    result = subprocess.run(["node", str(node_tools / "http-message.mjs"), *files], cwd=node_tools,
                            capture_output=True, text=True, timeout=60, check=True)
    return json.loads(result.stdout)


METER_REMOVED = {"specversion": "1.0", "id": "js-1", "source": "urn:ean13:8716859000003:cmr", "type": "mdm.meter.removed",
                 "time": "2024-05-01T10:00:00.123456Z", "subject": "E00000000035671400", "datacontenttype": "application/json"}


@pytest.mark.parametrize("mode", ["structured", "binary"])
def test_javascript_sdk_milliseconds_are_refused_under_het_normo_only(
        packages: dict[str, ModuleType], node_tools: Path, tmp_path: Path, mode: str) -> None:
    message = _js(node_tools, tmp_path, "encode", mode, METER_REMOVED)
    body = message["body"].encode("utf-8")
    written = message["headers"].get("ce-time") or json.loads(body)["time"]
    assert written == "2024-05-01T10:00:00.123Z"  # the SDK keeps a Date: microseconds are gone
    with pytest.raises(ValidationError, match="ID06"):
        packages["meter_data"].from_http(message["headers"], body)
    # The same time under NL GOV (any RFC 3339 precision) is accepted, its text kept.
    brp = packages["brp_personen"]
    sent = _valid(brp)
    sent["time"] = "2024-05-01T10:00:00.123456Z"
    sent.pop("datacontenttype", None)  # the SDK writes its own
    message = _js(node_tools, tmp_path, "encode", mode, sent)
    read = brp.from_http(message["headers"], message["body"].encode("utf-8"))
    assert read.to_dict()["time"] == "2024-05-01T10:00:00.123Z"


def _valid(package: ModuleType, event_type: str | None = None) -> dict[str, Any]:
    """The first catalog example (completed) of the package, or of one type."""
    from generator.naming import python_package_name

    catalog_set = lint(str(ROOT / "catalog")).catalog_set
    for event in catalog_set.events:
        if python_package_name(event.catalog_id) == package.__name__ and event.examples \
                and event_type in (None, event.type):
            return dict(event.complete_example(event.examples[0].values))
    raise LookupError(event_type)


def test_header_values_percent_encoding_across_sdks(packages: dict[str, ModuleType], node_tools: Path, tmp_path: Path) -> None:
    meter = packages["meter_data"]
    # The JavaScript SDK writes header values as they are (no percent-encoding):
    # evcat decodes only valid %XX sequences, so such a value is read as written.
    message = _js(node_tools, tmp_path, "encode", "binary", dict(METER_REMOVED, time="2024-05-01T10:00:00.000000Z",
                                                                   subject='meter 7 "oost" 100%'))
    assert message["headers"]["ce-subject"] == 'meter 7 "oost" 100%'
    headers = dict(message["headers"], **{"ce-time": "2024-05-01T10:00:00.000000Z"})  # Het Normo's form
    assert meter.from_http(headers, b"").subject == 'meter 7 "oost" 100%'
    # evcat encodes what HTTP binding §3.1.3.2 requires; the SDKs that do not
    # decode (JavaScript, Python v1) then see the encoded text; plain values pass unchanged.
    event = meter.parse_event(dict(METER_REMOVED, time="2024-05-01T10:00:00.000000Z", subject="meter 7 é"))
    headers, body = meter.to_http(event, mode="binary")
    assert headers["ce-subject"] == "meter%207%20%C3%A9" and headers["ce-source"] == METER_REMOVED["source"]
    assert meter.from_http(headers, body).subject == "meter 7 é"
    read = _js(node_tools, tmp_path, "decode", {"headers": headers, "body": body.decode()})
    assert read["subject"] == "meter%207%20%C3%A9" and read["source"] == METER_REMOVED["source"]
    from cloudevents.v1.http import from_http as v1_from_http

    assert v1_from_http(headers, body)["subject"] == "meter%207%20%C3%A9"


def test_empty_binary_body_is_no_data(packages: dict[str, ModuleType], node_tools: Path, tmp_path: Path) -> None:
    meter = packages["meter_data"]
    event = meter.parse_event(dict(METER_REMOVED, time="2024-05-01T10:00:00.000000Z"))
    headers, body = meter.to_http(event, mode="binary")
    assert body == b""
    # The JavaScript SDK reads an empty body as data "" (and invents a time when none is sent).
    read = _js(node_tools, tmp_path, "decode", {"headers": headers, "body": ""})
    assert read["data"] == ""
    # evcat: no data. A notification is fine; an event whose catalog entry has data misses it.
    assert "data" not in meter.from_http(headers, body).to_dict()
    updated = _valid(meter, "mdm.meter.updated")
    headers, _ = meter.to_http(meter.parse_event(updated), mode="binary")
    with pytest.raises(ValidationError, match="data"):
        meter.from_http(headers, b"")


# --- issue 31: what the SDKs do that the README did not say -----------------

TYPED_EVENTS = """\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    datacontenttype: application/vnd.test+json
    extensions:
      extinteger: {type: Integer, description: A count.}
      extboolean: {type: Boolean, description: A flag.}
    data:
      type: object
      description: The thing.
      required: [thingId]
      properties:
        thingId: {type: string, description: Id of the thing.}
"""


@pytest.fixture(scope="module")
def typed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """A package whose event has typed extensions and a `+json` datacontenttype."""
    from generator.naming import python_package_name

    from .conftest import catalog_text

    folder = tmp_path_factory.mktemp("sdk-typed")
    (folder / "catalog").mkdir()
    (folder / "catalog" / "typed.yaml").write_text(catalog_text("nlgov", events=TYPED_EVENTS, catalog_id="sdk-typed"))
    result = lint(str(folder / "catalog"))
    assert not result.has_errors, result.diagnostics
    for relative, content in render(result.catalog_set, ["python"])["python"].items():
        path = folder / "out" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    name = python_package_name("sdk-typed")
    sys.path.insert(0, str(folder / "out" / "python"))
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(str(folder / "out" / "python"))
        for module in [m for m in sys.modules if m.split(".")[0] == name]:
            del sys.modules[module]


def _typed_event(typed: ModuleType) -> Any:
    return typed.parse_event({"specversion": "1.0", "id": "t-1", "source": "urn:nld:oin:00000001823288444000:systeem:test",
                              "type": "nl.test.thing-happened", "dataversion": "1.0.0", "time": "2024-05-01T10:00:00Z",
                              "datacontenttype": "application/vnd.test+json", "extinteger": 5, "extboolean": True,
                              "data": {"thingId": "t"}})


def test_python_sdk_v2_drops_zero_microseconds_and_invents_time(packages: dict[str, ModuleType]) -> None:
    """The Python SDK v2 writes `…00.000000Z` back as `…00Z` (a datetime with
    no microseconds), which Het Normo ID06 refuses; and it sets `time` on every
    event it makes or reads. evcat refuses the first under Het Normo and
    invents nothing."""
    from cloudevents.core.bindings import http as sdk_http
    from cloudevents.core.formats.json import JSONFormat
    from cloudevents.core.v1.event import CloudEvent as SdkEvent

    meter = packages["meter_data"]
    catalog_set = lint(str(ROOT / "catalog")).catalog_set
    examples = [dict(event.complete_example(example.values)) for event in catalog_set.events
                if event.catalog_id == "meter-data" for example in event.examples]
    refused = []
    for example in examples:
        meter.parse_event(example)  # valid as the catalog writes it
        again = json.loads(JSONFormat().write(JSONFormat().read(None, json.dumps(example).encode())))
        if example["time"].endswith(".000000Z"):
            assert again["time"] == example["time"].removesuffix(".000000Z") + "Z"
            with pytest.raises(ValidationError, match="ID06"):
                meter.parse_event(again)
            refused.append(example["type"])
        else:
            assert again["time"] == example["time"] and meter.parse_event(again).to_dict() == meter.parse_event(example).to_dict()
    assert (len(refused), len(examples)) == (5, 6), refused  # issue 31: five of six
    # What the generated package writes keeps the six digits the SDK dropped.
    headers, body = meter.to_http(meter.parse_event(examples[0]))
    assert json.loads(body)["time"] == examples[0]["time"]
    # A time nobody sent: the SDK makes one; evcat reads none.
    brp = packages["brp_personen"]
    assert SdkEvent(attributes={"specversion": "1.0", "id": "1", "source": "urn:x", "type": "x.y"}).get_time() is not None
    sent = _valid(brp)
    sent.pop("time", None)
    headers, body = brp.to_http(brp.parse_event(sent), mode="binary")
    assert "ce-time" not in headers
    assert sdk_http.from_binary_event(sdk_http.HTTPMessage(headers=headers, body=body)).get_time() is not None
    assert brp.from_http(headers, body).to_dict().get("time") is None


def test_javascript_sdk_invents_datacontenttype_without_data(
        packages: dict[str, ModuleType], node_tools: Path, tmp_path: Path) -> None:
    """In binary mode the JavaScript SDK sends `Content-Type: application/json`
    for an event without data (the datacontenttype of HTTP binding §3.1.1);
    evcat keeps what was sent (CloudEvents allows a datacontenttype without
    data), and writes none itself."""
    meter = packages["meter_data"]
    sent = dict(METER_REMOVED, time="2024-05-01T10:00:00.000000Z")
    sent.pop("datacontenttype")
    message = _js(node_tools, tmp_path, "encode", "binary", sent)
    assert message["headers"]["content-type"] == "application/json; charset=utf-8" and message["body"] == ""
    headers = dict(message["headers"], **{"ce-time": sent["time"]})  # Het Normo's form (see above)
    assert meter.from_http(headers, b"").to_dict()["datacontenttype"] == "application/json; charset=utf-8"
    ours, body = meter.to_http(meter.parse_event(sent), mode="binary")
    assert body == b"" and "content-type" not in {name.lower() for name in ours}
    assert "datacontenttype" not in meter.from_http(ours, body).to_dict()


def test_javascript_sdk_keeps_a_plus_json_binary_body_as_text(typed: ModuleType, node_tools: Path, tmp_path: Path) -> None:
    """A binary-mode body of a `+json` media type is JSON (JSON format §3.1.2);
    the JavaScript SDK gives it as a string, and its structured mode then
    sends that string as `data`. evcat reads the binary body as JSON and
    refuses the string where the payload schema wants an object."""
    event = _typed_event(typed)
    headers, body = typed.to_http(event, mode="binary")
    assert headers["content-type"] == "application/vnd.test+json"
    read = _js(node_tools, tmp_path, "decode", {"headers": headers, "body": body.decode()})
    assert read["data"] == body.decode() and isinstance(read["data"], str)
    assert typed.from_http(headers, body).to_dict()["data"] == {"thingId": "t"}
    structured = _js(node_tools, tmp_path, "encode", "structured", read)
    assert json.loads(structured["body"])["data"] == body.decode()
    with pytest.raises(ValidationError, match="data"):
        typed.from_http(structured["headers"], structured["body"].encode())


def test_sdks_stringify_typed_extensions_from_binary_to_structured(
        typed: ModuleType, node_tools: Path, tmp_path: Path) -> None:
    """Binary mode carries every attribute as text (HTTP binding §3.1.3); both
    SDKs keep that text when they write the event in structured mode, where an
    Integer or Boolean is a JSON number or boolean (JSON format §2.2). evcat
    types binary-mode values by the catalog and refuses the strings."""
    from cloudevents.core.bindings import http as sdk_http

    event = _typed_event(typed)
    headers, body = typed.to_http(event, mode="binary")
    assert (headers["ce-extinteger"], headers["ce-extboolean"]) == ("5", "true")
    assert typed.from_http(headers, body).to_dict()["extinteger"] == 5
    read = _js(node_tools, tmp_path, "decode", {"headers": headers, "body": body.decode()})
    javascript = json.loads(_js(node_tools, tmp_path, "encode", "structured", read)["body"])
    python = json.loads(sdk_http.to_structured_event(
        sdk_http.from_binary_event(sdk_http.HTTPMessage(headers=headers, body=body))).body)
    for structured in (javascript, python):
        assert (structured["extinteger"], structured["extboolean"]) == ("5", "true")
        structured["data"] = {"thingId": "t"}  # (the JavaScript SDK's data string: the test above)
        with pytest.raises(ValidationError, match="extinteger|extboolean"):
            typed.parse_event(structured)
        assert typed.parse_event(dict(structured, extinteger=5, extboolean=True)).to_dict()["extinteger"] == 5
