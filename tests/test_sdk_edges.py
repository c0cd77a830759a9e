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


METER_REMOVED = {"specversion": "1.0", "id": "js-1", "source": "urn:ean:8716871000002", "type": "mdm.meter.removed",
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
