"""Interop: the official CloudEvents SDKs deliver to `evcat serve`, and it accepts.

Python: the SDK's v2 API (``cloudevents.core``: ``CloudEvent``, the HTTP
binding's ``to_structured_event`` / ``to_binary_event``), posted with httpx.
JavaScript: the SDK's own HTTP emitter (``emitterFor(httpTransport(url))``),
pinned in tests/node/package-lock.json."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from cloudevents.core.bindings.http import to_binary_event, to_structured_event
from cloudevents.core.v1.event import CloudEvent

from .conftest import NODE_DIR, ROOT
from .webhook_support import TOKEN, Server, examples, start_evcat_serve


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = start_evcat_serve(tmp_path_factory.mktemp("interop"), "--token", TOKEN)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="session")
def cloudevents_js(node_tools: Path) -> Path:
    """The JavaScript SDK, installed from the lock file when an older node_modules lacks it."""
    if not (node_tools / "node_modules" / "cloudevents" / "package.json").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=NODE_DIR, check=True, timeout=600)
    return node_tools


def _line(server: Server, event_id: str) -> dict[str, Any]:
    return next(line for line in server.lines() if line["id"] == event_id)


def _sdk_event(event_id: str) -> CloudEvent:
    value = dict(examples()[0], id=event_id)
    data = value.pop("data")
    if "time" in value:  # the SDK takes a datetime and writes it itself
        value["time"] = datetime.fromisoformat(value["time"].replace("Z", "+00:00"))
    return CloudEvent(value, data)


@pytest.mark.parametrize("mode", ["structured", "binary"])
def test_python_sdk_delivers_and_is_accepted(server: Server, mode: str) -> None:
    event = _sdk_event(f"python-sdk-{mode}")
    message = to_structured_event(event) if mode == "structured" else to_binary_event(event)
    if mode == "binary":
        assert "ce-id" in {name.lower() for name in message.headers}
    response = httpx.post(
        server.url, headers={**message.headers, "authorization": f"Bearer {TOKEN}"}, content=message.body, timeout=30
    )
    assert response.status_code == 204, response.text
    line = _line(server, f"python-sdk-{mode}")
    assert line["valid"] is True and line["diagnostics"] == []


@pytest.mark.parametrize("mode", ["structured", "binary"])
def test_javascript_sdk_emitter_delivers_and_is_accepted(server: Server, cloudevents_js: Path, tmp_path: Path, mode: str) -> None:
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(dict(examples()[0], id=f"js-sdk-{mode}")), encoding="utf-8")
    result = subprocess.run(
        ["node", str(cloudevents_js / "emit-cloudevents.mjs"), server.url, mode, str(event_file), TOKEN],
        cwd=cloudevents_js, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["body"] == ""  # 204: no problem details
    line = _line(server, f"js-sdk-{mode}")
    assert line["valid"] is True and line["diagnostics"] == []


def test_javascript_sdk_sees_the_problem_details_of_an_invalid_event(server: Server, cloudevents_js: Path, tmp_path: Path) -> None:
    value = dict(examples()[0], id="js-sdk-invalid")
    value["data"] = {"unexpected": True}
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(value), encoding="utf-8")
    result = subprocess.run(
        ["node", str(cloudevents_js / "emit-cloudevents.mjs"), server.url, "binary", str(event_file), TOKEN],
        cwd=cloudevents_js, capture_output=True, text=True, timeout=60, check=True,
    )
    answer = json.loads(result.stdout)
    assert answer["headers"]["content-type"] == "application/problem+json"
    problem = json.loads(answer["body"])
    assert problem["status"] == 400
    assert any(error["rule"] == "CE-DATA-SCHEMA" and error["pointer"].startswith("/data") for error in problem["errors"])


# -- the CloudEvents JSON conformance suite, delivered over HTTP ------------------------

CONFORMANCE = ROOT / "tests" / "data" / "cloudevents-json"


def _suite(name: str) -> list[dict[str, Any]]:
    path = CONFORMANCE / name
    return json.loads(path.read_text(encoding="utf-8"))["tests"]


@pytest.fixture(scope="module")
def conformance_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = start_evcat_serve(tmp_path_factory.mktemp("conformance"), catalog=ROOT / "tests" / "catalogs" / "conformance")
    try:
        yield started
    finally:
        started.stop()


def test_conformance_events_over_http_in_both_modes(conformance_server: Server) -> None:
    """Contract §5: every valid event but validSimpleTextData is accepted, every invalid one refused;
    binary mode carries the same events as ce- headers (Integer and Boolean typed back by the catalog)."""
    with httpx.Client(timeout=30) as http:
        for case in _suite("valid-events.json"):
            if case["id"] == "validSimpleTextData":
                continue
            event = {name: value for name, value in case["event"].items() if value is not None}
            structured = http.post(conformance_server.url, headers={"content-type": "application/cloudevents+json"},
                                   content=json.dumps(event))
            assert structured.status_code == 204, (case["id"], structured.text)
            message = to_binary_event(CloudEvent(_typed(event)))
            binary = http.post(conformance_server.url, headers=message.headers, content=message.body)
            assert binary.status_code == 204, (case["id"], message.headers, binary.text)
        for case in _suite("invalid-events.json"):
            body = case["event"] if isinstance(case["event"], str) else json.dumps(case["event"])
            response = http.post(conformance_server.url, headers={"content-type": "application/cloudevents+json"},
                                 content=body)
            assert response.status_code == 400, (case["id"], response.status_code)


def _typed(event: dict[str, Any]) -> dict[str, Any]:
    """The SDK wants Python values for typed attributes."""
    typed = dict(event)
    for name in ("time", "exttimestamp"):
        if isinstance(typed.get(name), str):
            typed[name] = datetime.fromisoformat(typed[name].replace("Z", "+00:00"))
    return typed
