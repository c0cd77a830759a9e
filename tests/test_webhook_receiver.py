"""Contract 6.1 and 6.3, black-box over real HTTP on 127.0.0.1: every row of the
table against `evcat serve` (a subprocess) and against the generated
``webhook.Receiver`` under uvicorn; `evcat send --check` against both and
against a receiver that answers 200 to everything."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import run_evcat
from .webhook_support import (
    BRP,
    CATALOG,
    ORIGIN,
    TOKEN,
    Scripted,
    Server,
    examples,
    generate_packages,
    start_evcat_serve,
    start_receiver,
)

TARGETS = ("serve", "receiver")
AUTH = {"authorization": f"Bearer {TOKEN}", "webhook-request-origin": ORIGIN}
STRUCTURED = {"content-type": "application/cloudevents+json; charset=utf-8"}
BATCH = {"content-type": "application/cloudevents-batch+json"}


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = generate_packages(tmp_path_factory.mktemp("webhook-packages"))
    sys.path.insert(0, str(root))
    return root


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory, packages: Path) -> Iterator[dict[str, Server]]:
    """Both targets with a token and one allowed origin, plus both with --rate 3."""
    started: dict[str, Server] = {}
    try:
        started["serve"] = start_evcat_serve(
            tmp_path_factory.mktemp("serve"), "--token", TOKEN, "--allowed-origin", ORIGIN,
            "--allow-private-callbacks",  # the test's callback listens on 127.0.0.1
        )
        started["receiver"] = start_receiver(
            tmp_path_factory.mktemp("receiver"), packages, tokens=TOKEN, origins=ORIGIN, allow_private=True
        )
        started["serve-rate"] = start_evcat_serve(tmp_path_factory.mktemp("serve-rate"), "--rate", "3")
        started["receiver-rate"] = start_receiver(tmp_path_factory.mktemp("receiver-rate"), packages, rate="3")
        yield started
    finally:
        for server in started.values():
            server.stop()
    for name, server in started.items():  # whatever the tests sent: never a traceback
        assert "Traceback" not in server.stderr.read_text(errors="replace"), name


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as http:
        yield http


def _event(index: int = 0, **changes: Any) -> dict[str, Any]:
    event = dict(examples()[index])
    event.update(changes)
    return {name: value for name, value in event.items() if value is not None}


def _binary(event: dict[str, Any]) -> tuple[dict[str, str], bytes]:
    headers = {f"ce-{name}": str(value) for name, value in event.items() if name not in ("data", "datacontenttype")}
    headers["content-type"] = event.get("datacontenttype", "application/json")
    return headers, json.dumps(event["data"]).encode()


def _problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    document = response.json()
    assert document["status"] == status and document["title"]
    return document


# -- handshake (webhook spec §4) ----------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_handshake_from_an_allowed_origin(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    response = client.options(
        servers[target].url, headers={"webhook-request-origin": ORIGIN, "webhook-request-rate": "120"}
    )
    assert response.status_code == 200
    assert "POST" in response.headers["allow"]
    assert response.headers["webhook-allowed-origin"] == ORIGIN
    assert response.headers["webhook-allowed-rate"] == "*"
    rated = client.options(servers[f"{target}-rate"].url, headers={"webhook-request-origin": "any.example"})
    assert rated.headers["webhook-allowed-origin"] == "*"
    assert rated.headers["webhook-allowed-rate"] == "3"


@pytest.mark.parametrize("target", TARGETS)
def test_handshake_from_another_origin_is_refused(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    response = client.options(servers[target].url, headers={"webhook-request-origin": "intruder.example"})
    assert response.status_code == 403
    assert "webhook-allowed-origin" not in response.headers


@pytest.mark.parametrize("target", TARGETS)
def test_near_miss_origins_are_refused(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    """Only the allowed origin itself: one that ends or starts with it, or
    differs by a dot, is another host (webhook spec §4.1)."""
    for origin in (f"evil-{ORIGIN}", f"evil.{ORIGIN}", f"{ORIGIN}.evil.example", f"{ORIGIN}.", ORIGIN[1:], f"{ORIGIN}x"):
        response = client.options(servers[target].url, headers={"webhook-request-origin": origin})
        assert response.status_code == 403, origin
        assert "webhook-allowed-origin" not in response.headers


@pytest.mark.parametrize("target", TARGETS)
def test_origins_are_dns_names_whatever_their_case(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    """RFC 4343: ``Producer.Example.NL`` is the allowed ``producer.example.nl``;
    the grant names the origin as the sender gave it (webhook spec §4.2.1)."""
    shouted = ORIGIN.upper()
    response = client.options(servers[target].url, headers={"webhook-request-origin": shouted})
    assert response.status_code == 200
    assert response.headers["webhook-allowed-origin"] == shouted


@pytest.mark.parametrize("target", TARGETS)
def test_callback_grant_is_confirmed_by_a_get(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    with Scripted(default=(200, {})) as callback:
        response = client.options(
            servers[target].url,
            headers={"webhook-request-origin": ORIGIN, "webhook-request-callback": callback.url + "?key=abc"},
        )
        assert response.status_code == 200
        deadline = time.monotonic() + 10
        while not callback.seen and time.monotonic() < deadline:
            time.sleep(0.05)
    assert [(seen.method, seen.path) for seen in callback.seen] == [("GET", "/hook?key=abc")]
    assert callback.seen[0].headers["webhook-allowed-rate"] == "*"


# -- deliveries (webhook spec §2, §3) ------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_valid_events_in_every_mode_get_204(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    url = servers[target].url
    event = _event(id="valid-structured")
    assert client.post(url, headers={**AUTH, **STRUCTURED}, content=json.dumps(event)).status_code == 204
    headers, body = _binary(_event(id="valid-binary"))
    assert client.post(url, headers={**AUTH, **headers}, content=body).status_code == 204
    batch = [_event(0, id="valid-batch-0"), _event(1, id="valid-batch-1")]
    assert client.post(url, headers={**AUTH, **BATCH}, content=json.dumps(batch)).status_code == 204
    time.sleep(0.3)  # the receiver's sync handler runs in a worker thread
    seen = {line["id"]: line for line in servers[target].lines()}
    sent = {"valid-structured": event, "valid-binary": event, "valid-batch-0": batch[0], "valid-batch-1": batch[1]}
    for event_id, value in sent.items():
        assert event_id in seen
        if target == "serve":
            assert seen[event_id]["valid"] is True and seen[event_id]["diagnostics"] == []
            assert seen[event_id]["type"] == value["type"]
            assert seen[event_id]["dataversion"] == value.get("dataversion")
        else:
            assert seen[event_id]["class"] != "CloudEvent"  # the typed envelope class


@pytest.mark.parametrize("target", TARGETS)
def test_token_is_required(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    url = servers[target].url
    body = json.dumps(_event(id="token-test"))
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": f"Basic {TOKEN}"}):
        response = client.post(url, headers={**STRUCTURED, **headers}, content=body)
        _problem(response, 401)
        assert response.headers["www-authenticate"].startswith("Bearer")
    response = client.post(url, headers=STRUCTURED, params={"access_token": TOKEN}, content=json.dumps(_event(id="query-token")))
    assert response.status_code == 204
    assert response.headers["cache-control"] == "private"
    if target == "serve":
        line = next(line for line in servers[target].lines() if line["id"] == "query-token")
        assert line["valid"] is True
        assert [(d["rule"], d["severity"]) for d in line["diagnostics"]] == [("WEBHOOK-TOKEN-IN-QUERY", "warning")]


@pytest.mark.parametrize("target", TARGETS)
def test_invalid_event_gets_400_problem_details(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    event = _event(id="invalid-1")
    event["data"] = dict(event["data"], persoon={"burgerservicenummer": "12"})
    response = client.post(servers[target].url, headers={**AUTH, **STRUCTURED}, content=json.dumps(event))
    errors = _problem(response, 400)["errors"]
    assert errors and all(error["index"] == 0 for error in errors)
    pointers = {error["pointer"] for error in errors}
    assert "/data/persoon/burgerservicenummer" in pointers
    assert all(error["rule"] and error["message"] for error in errors)
    if target == "serve":
        line = next(line for line in servers[target].lines() if line["id"] == "invalid-1")
        assert line["valid"] is False
        assert line["diagnostics"][0]["rule"] == "CE-DATA-SCHEMA"


@pytest.mark.parametrize("target", TARGETS)
def test_batch_with_one_invalid_event_is_rejected_whole(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    good, bad = _event(0, id="batch-good"), _event(1, id="batch-bad")
    del bad["source"]
    worse = _event(0, id="batch-worse", type="nl.unknown.type")
    response = client.post(servers[target].url, headers={**AUTH, **BATCH}, content=json.dumps([good, bad, worse]))
    errors = _problem(response, 400)["errors"]
    assert {error["index"] for error in errors} == {1, 2}
    assert any(error["index"] == 1 and "source" in (error["pointer"] + error["message"]) for error in errors)
    time.sleep(0.2)
    lines = {line["id"]: line for line in servers[target].lines()}
    if target == "serve":  # each event is reported; the delivery was refused whole
        assert lines["batch-good"]["valid"] is True and lines["batch-bad"]["valid"] is False
    else:
        assert "batch-good" not in lines  # no handler saw any event of the batch


@pytest.mark.parametrize("target", TARGETS)
def test_hostile_bodies_get_400_not_a_crash(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    url = servers[target].url
    for headers, body in (
        (STRUCTURED, b"[" * 30000 + b"]" * 30000),
        (BATCH, b"[" * 30000 + b"]" * 30000),
        (STRUCTURED, b"\xff\xfe not json"),
        (STRUCTURED, b"[1, 2]"),
        (BATCH, b"{}"),
        ({"ce-specversion": "1.0", "ce-id": "%FF%FE", "ce-type": "x", "ce-source": "/s"}, b"{"),
    ):
        response = client.post(url, headers={**AUTH, **headers}, content=body)
        assert _problem(response, 400)["errors"], body[:20]
    assert client.post(url, headers={**AUTH, **BATCH}, content=b"[]").status_code == 400  # no event


@pytest.mark.parametrize("target", TARGETS)
def test_unknown_content_type_gets_415(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    url = servers[target].url
    for content_type in ("text/plain", "application/json", "application/cloudevents+xml"):
        _problem(client.post(url, headers={**AUTH, "content-type": content_type}, content=b"{}"), 415)
    headers, _ = _binary(_event())
    _problem(client.post(url, headers={**AUTH, **headers, "content-type": "application/xml"}, content=b"<a/>"), 415)


@pytest.mark.parametrize("target", TARGETS)
def test_oversized_request_gets_413(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    event = _event(id="too-big", nlbrppadding="x" * (64 * 1024))
    _problem(client.post(servers[target].url, headers={**AUTH, **STRUCTURED}, content=json.dumps(event)), 413)


@pytest.mark.parametrize("target", TARGETS)
def test_over_the_rate_gets_429_with_retry_after(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    url = servers[f"{target}-rate"].url
    origin = {"webhook-request-origin": f"rate-{target}.example"}
    statuses = [
        client.post(url, headers={**origin, **STRUCTURED}, content=json.dumps(_event(id=f"rate-{n}"))).status_code
        for n in range(3)
    ]
    assert statuses == [204, 204, 204]
    response = client.post(url, headers={**origin, **STRUCTURED}, content=json.dumps(_event(id="rate-3")))
    _problem(response, 429)
    assert 1 <= int(response.headers["retry-after"]) <= 60
    other = client.post(url, headers={"webhook-request-origin": "other.example", **STRUCTURED}, content=json.dumps(_event()))
    assert other.status_code == 204  # the limit is per origin


@pytest.mark.parametrize("target", TARGETS)
def test_other_methods_get_405_with_allow(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    for method in ("GET", "PUT", "DELETE", "PATCH"):
        response = client.request(method, servers[target].url, headers=AUTH)
        _problem(response, 405)
        assert "POST" in response.headers["allow"]


def test_handler_exception_gives_500_and_loses_no_other_event(servers: dict[str, Server], client: httpx.Client) -> None:
    server = servers["receiver"]
    batch = [_event(0, id="boom-1"), _event(1, id="calm-1")]
    response = client.post(server.url, headers={**AUTH, **BATCH}, content=json.dumps(batch))
    _problem(response, 500)
    assert "RuntimeError" in response.json()["detail"]
    after = client.post(server.url, headers={**AUTH, **STRUCTURED}, content=json.dumps(_event(id="calm-2")))
    assert after.status_code == 204
    time.sleep(0.3)
    handled = [line["id"] for line in server.lines()]
    assert {"boom-1", "calm-1", "calm-2"} <= set(handled)  # every other handler ran


def test_module_level_receiver_accepts_every_valid_event(packages: Path) -> None:
    from brp_personen import webhook

    event = _event(id="module-level")
    scope_messages: list[dict[str, Any]] = []

    async def call() -> None:
        body = json.dumps(event).encode()
        messages = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            return messages.pop(0)

        async def send(message: dict[str, Any]) -> None:
            scope_messages.append(message)

        scope = {"type": "http", "method": "POST", "path": "/", "query_string": b"",
                 "headers": [(b"content-type", b"application/cloudevents+json")]}
        await webhook.receiver(scope, receive, send)

    import asyncio

    asyncio.run(call())
    assert scope_messages[0]["status"] == 204


def test_models_import_with_pydantic_alone(packages: Path) -> None:
    code = (
        "import sys; sys.modules['httpx'] = None; sys.modules['uvicorn'] = None\n"
        "import brp_personen, brp_personen.webhook\n"
        "assert 'httpx' not in sys.modules or sys.modules['httpx'] is None\n"
    )
    import subprocess

    result = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": str(packages)}, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("stop_signal", ["SIGINT", "SIGTERM"])
def test_evcat_serve_stops_gracefully(tmp_path: Path, stop_signal: str) -> None:
    import signal

    server = start_evcat_serve(tmp_path)
    assert server.url.startswith("http://127.0.0.1:")
    with httpx.Client(timeout=30) as http:
        assert http.post(server.url, headers=STRUCTURED, content=json.dumps(_event(id="last"))).status_code == 204
    server.process.send_signal(getattr(signal, stop_signal))
    assert server.process.wait(timeout=15) == 0
    assert "stopped serving" in server.stderr.read_text()
    assert [line["id"] for line in server.lines()] == ["last"]


# -- evcat send --check ------------------------------------------------------------


def test_send_check_passes_against_evcat_serve(servers: dict[str, Server]) -> None:
    result = run_evcat("send", str(CATALOG), servers["serve"].url, "--check", "--token", TOKEN, "--origin", ORIGIN)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
    assert "ok   a delivery without a token gets 401" in result.stdout
    assert "ok   handshake: an origin not allowed gets 403" in result.stdout


@pytest.mark.parametrize("target", TARGETS)
def test_send_check_tests_the_rate_limit(servers: dict[str, Server], target: str) -> None:
    catalog = CATALOG if target == "serve" else BRP
    result = run_evcat("send", str(catalog), servers[f"{target}-rate"].url, "--check", "--origin", f"check-{target}.example")
    assert "ok   more than 3 deliveries a minute get 429 with Retry-After" in result.stdout


def test_send_check_passes_against_the_generated_receiver(servers: dict[str, Server]) -> None:
    result = run_evcat("send", str(BRP), servers["receiver"].url, "--check", "--token", TOKEN, "--origin", ORIGIN)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout


class _AlwaysOk(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _ok(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    do_GET = do_POST = do_OPTIONS = _ok


def test_send_check_names_what_a_careless_receiver_gets_wrong() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AlwaysOk)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run_evcat("send", str(CATALOG), f"http://127.0.0.1:{server.server_address[1]}/", "--check")
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 1
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    for expectation in (
        "handshake: OPTIONS answers 200 with WebHook-Allowed-Origin",
        "an event without id is rejected with 400",
        "an event of an unknown type is rejected with 400",
        "a batch with one invalid event is rejected whole",
        "an event with an invalid payload is rejected with 400",
        "a body that is no CloudEvent (text/plain) gets 415",
        "a request over the profile's size limit gets 413",
        "another method (GET) gets 405 with Allow",
    ):
        assert any(expectation in line for line in failed), (expectation, result.stdout)
    assert any(line.startswith("ok   structured mode: a valid event") for line in result.stdout.splitlines())


@pytest.mark.parametrize("mode", ["structured", "binary", "batch"])
def test_send_examples_to_evcat_serve(servers: dict[str, Server], mode: str) -> None:
    result = run_evcat("send", str(CATALOG), servers["serve"].url, "--examples", "--mode", mode,
                       "--token", TOKEN, "--origin", ORIGIN)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines and all(line.startswith("204 ") for line in lines)
    assert f"{len(lines)} of {len(lines)} events accepted" in result.stderr
    refused = run_evcat("send", str(CATALOG), servers["serve"].url, "--examples", "--origin", "intruder.example")
    assert refused.returncode == 1 and "not sent" in refused.stdout


def test_a_body_that_never_arrives_gets_408() -> None:
    """In process: the ASGI app bounds the wait for a trickling body (no hang)."""
    import asyncio

    from generator.runtime._webhook import WebhookApp

    app = WebhookApp(lambda headers, body: [], read_timeout=0.2)
    sent: list[dict[str, Any]] = []

    async def call() -> None:
        async def receive() -> dict[str, Any]:
            await asyncio.sleep(3600)
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/", "query_string": b"",
                 "headers": [(b"content-type", b"application/cloudevents+json")]}
        await asyncio.wait_for(app(scope, receive, send), timeout=5)

    asyncio.run(call())
    assert sent[0]["status"] == 408


@pytest.mark.parametrize("target", TARGETS)
def test_one_token_method_per_request(servers: dict[str, Server], client: httpx.Client, target: str) -> None:
    """RFC 6750 §2 (webhook spec §3): a right query token beside a wrong
    Authorization header, two query tokens, or a wrong query token are
    refused; each alone and right is accepted."""
    url = servers[target].url
    body = json.dumps(_event(id="one-method"))
    refused = [
        ({"authorization": "Bearer wrong"}, {"access_token": TOKEN}),
        ({"authorization": f"Bearer {TOKEN}"}, {"access_token": TOKEN}),
        ({}, [("access_token", TOKEN), ("access_token", TOKEN)]),
        ({}, [("access_token", TOKEN), ("access_token", "wrong")]),
        ({}, {"access_token": "wrong"}),
        ({}, {"access_token": TOKEN + "x"}),
        ({}, {"access_token": TOKEN[:-1]}),
    ]
    for headers, params in refused:
        response = client.post(url, headers={**STRUCTURED, **headers}, params=params, content=body)
        _problem(response, 401)
    assert client.post(url, headers={**STRUCTURED, **AUTH}, content=body).status_code == 204
    assert client.post(url, headers=STRUCTURED, params={"access_token": TOKEN}, content=body).status_code == 204
