"""Issue 30, the webhook judges under hostile load, over real HTTP on 127.0.0.1
(`evcat serve` and the generated ``Receiver`` under uvicorn); each test failed
before its fix:

- a batch of 20,000 invalid events is answered quickly with a bounded body
  (the first ``MAX_DETAILS`` problems and a count of the rest), and the event
  loop stays free for other requests meanwhile;
- the 64 KiB event limit at its exact boundary, for every judge.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from generator.runtime import _webhook

from .webhook_support import Server, examples, importable_packages, start_evcat_serve, start_receiver

STRUCTURED = {"content-type": "application/cloudevents+json"}
BATCH = {"content-type": "application/cloudevents-batch+json"}
MiB = 1024 * 1024


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with importable_packages(tmp_path_factory.mktemp("limits-packages")) as root:
        yield root


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory, packages: Path) -> Iterator[dict[str, Server]]:
    """`evcat serve` and the generated brp_personen ``Receiver``, default settings."""
    started: dict[str, Server] = {}
    try:
        started["serve"] = start_evcat_serve(tmp_path_factory.mktemp("serve"))
        started["receiver"] = start_receiver(tmp_path_factory.mktemp("receiver"), packages)
        yield started
    finally:
        for server in started.values():
            server.stop()
    for name, server in started.items():
        assert "Traceback" not in server.stderr.read_text(errors="replace"), name


# -- 1. a batch of invalid events is no denial of service ---------------------------


def invalid_batch(count: int) -> bytes:
    """``count`` invalid events of about 200 bytes, six problems each (envelope and data)."""
    items = [
        {"specversion": "1.0", "type": "nl.brp.naamgebruik-gewijzigd.v2", "dataversion": "2.0.0",
         "id": number, "source": "", "time": "yesterday",
         "data": {"persoon": {"burgerservicenummer": 1}, "aanduidingNaamgebruik": "Q", "x": 1}}
        for number in range(count)
    ]
    return json.dumps(items, separators=(",", ":")).encode()


@pytest.mark.parametrize("target", ["serve", "receiver"])
def test_a_batch_of_20000_invalid_events_is_answered_quickly_and_briefly(
    servers: dict[str, Server], target: str
) -> None:
    """Issue 30: 20,000 invalid events in a 4 MiB batch took seconds of the
    event loop and produced a body of about 20 MB. Now: the answer within
    generous bounds (the issue's targets are 2 s and 1 s; bench/batch_bench.py
    measures them), at most 1 MiB with the first MAX_DETAILS problems and the
    count of the rest, and a valid event on another connection meanwhile is
    answered without waiting for the batch."""
    body = invalid_batch(20_000)
    assert 4_000_000 < len(body) <= _webhook.DEFAULT_BATCH_SIZE
    url = servers[target].url
    answer: dict[str, Any] = {}

    def post_batch() -> None:
        started = time.monotonic()
        with httpx.Client(timeout=60) as http:
            answer["response"] = http.post(url, headers=BATCH, content=body)
        answer["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=post_batch)
    thread.start()
    time.sleep(0.3)  # the body is on its way or being judged
    started = time.monotonic()
    with httpx.Client(timeout=60) as http:
        valid = http.post(url, headers=STRUCTURED, content=json.dumps(examples()[0]))
    concurrent = time.monotonic() - started
    thread.join(60)

    response = answer["response"]
    assert valid.status_code == 204, valid.text
    assert response.status_code == 400
    assert len(response.content) <= MiB, len(response.content)
    document = response.json()
    assert len(document["errors"]) == _webhook.MAX_DETAILS
    assert [error["index"] for error in document["errors"][:7]] == [0] * 6 + [1]  # the first problems, in order
    assert document["omitted"] == 6 * 20_000 - _webhook.MAX_DETAILS  # every problem counted
    assert "20000 of 20000 event(s) invalid" in document["detail"]
    assert answer["seconds"] < 10.0, answer["seconds"]  # CPU-bound: generous on a shared machine
    assert concurrent < 1.5, concurrent
    if target == "serve":  # its report: one line per event, details within the same budget
        records = [line for line in servers[target].lines() if line["type"] == "nl.brp.naamgebruik-gewijzigd.v2"]
        assert len(records) == 20_000 and not any(record["valid"] for record in records)
        assert sum(len(record["diagnostics"]) for record in records) == _webhook.MAX_DETAILS
        assert sum(len(record["diagnostics"]) + record.get("omitted", 0) for record in records) == 6 * 20_000


# -- 5. the event size limit at its exact boundary ----------------------------------

LIMIT = _webhook.DEFAULT_EVENT_SIZE  # 64 KiB: CloudEvents 1.0.2 "Size Limits", the NL GOV profile


def sized(size: int, number: int = 0) -> bytes:
    """A valid event (an undeclared extension attribute pads it) whose compact
    UTF-8 JSON is exactly ``size`` bytes."""
    event = dict(examples()[1], id=f"sized-{size}-{number}", padding="")
    bare = len(json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode())
    event["padding"] = "x" * (size - bare)
    body = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
    assert len(body) == size
    return body


def _chunked(body: bytes) -> Iterator[bytes]:
    """The body without a Content-Length (chunked), so only the bytes read count."""
    for start in range(0, len(body), 10_000):
        yield body[start : start + 10_000]


@pytest.mark.parametrize("target", ["serve", "receiver"])
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_an_event_of_exactly_the_limit_is_accepted_one_byte_more_refused(
    servers: dict[str, Server], target: str, declared: bool
) -> None:
    """65,536 bytes pass, 65,537 get 413: by the declared Content-Length and by
    the bytes read (a chunked body), in `evcat serve` and the Receiver."""
    url = servers[target].url
    with httpx.Client(timeout=30) as http:
        statuses = []
        for number, size in enumerate((LIMIT - 1, LIMIT, LIMIT + 1, LIMIT + 2)):
            body = sized(size, number + (10 if declared else 20))
            content: Any = body if declared else _chunked(body)
            statuses.append(http.post(url, headers=STRUCTURED, content=content).status_code)
    assert statuses == [204, 204, 413, 413]


@pytest.mark.parametrize("target", ["serve", "receiver"])
def test_a_batch_item_of_exactly_the_limit_is_accepted_one_byte_more_refused(
    servers: dict[str, Server], target: str
) -> None:
    """Each event of a batch is held to the event limit (its compact JSON)."""
    url = servers[target].url
    with httpx.Client(timeout=30) as http:
        at_limit = b"[" + sized(LIMIT, 1) + b"," + sized(1000, 2) + b"]"
        assert http.post(url, headers=BATCH, content=at_limit).status_code == 204
        over = http.post(url, headers=BATCH, content=b"[" + sized(1000, 3) + b"," + sized(LIMIT + 1, 4) + b"]")
    assert over.status_code == 400, over.text
    (error,) = [e for e in over.json()["errors"] if e["severity"] == "error"]
    assert error["index"] == 1 and str(LIMIT + 1) in error["message"], error
    if target == "serve":  # its report: the size warning (CE-SIZE) exactly past the limit too
        rules = {line["id"]: {d["rule"] for d in line["diagnostics"]} for line in servers[target].lines()}
        assert "CE-SIZE" not in rules[f"sized-{LIMIT}-1"]
        assert "CE-SIZE" in rules[f"sized-{LIMIT + 1}-4"]


# -- 2. forwarding headers are not trusted by default ---------------------------------


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory, packages: Path) -> Iterator[dict[str, Server]]:
    """--rate 3: `evcat serve`, the Receiver served by ``receiver.run()`` and by
    ``uvicorn`` with the flags the README gives, and
    `evcat serve --trusted-proxy 127.0.0.1` (forwarding headers named trusted)."""
    started: dict[str, Server] = {}
    try:
        started["serve"] = start_evcat_serve(tmp_path_factory.mktemp("serve"), "--rate", "3")
        started["receiver"] = start_receiver(tmp_path_factory.mktemp("receiver"), packages, rate="3", run=True)
        started["receiver-cli"] = start_receiver(tmp_path_factory.mktemp("cli"), packages, rate="3", hardened=True)
        started["proxied"] = start_evcat_serve(
            tmp_path_factory.mktemp("proxied"), "--rate", "3", "--trusted-proxy", "127.0.0.1"
        )
        yield started
    finally:
        for server in started.values():
            server.stop()
    for name, server in started.items():
        assert "Traceback" not in server.stderr.read_text(errors="replace"), name


def _from(address: str) -> httpx.Client:
    return httpx.Client(timeout=30, transport=httpx.HTTPTransport(local_address=address))


@pytest.mark.parametrize("target", ["serve", "receiver", "receiver-cli"])
def test_x_forwarded_for_does_not_evade_the_rate_limit(limited: dict[str, Server], target: str) -> None:
    """Issue 30: from 127.0.0.1, uvicorn's default took X-Forwarded-For as the
    client, so 80 deliveries with 80 forwarded addresses were all accepted."""
    event = examples()[1]
    headers = {**STRUCTURED, "webhook-request-origin": "producer.example.nl"}
    with _from("127.0.0.1") as http:
        statuses = [
            http.post(limited[target].url, headers={**headers, "x-forwarded-for": f"198.51.100.{n}"},
                      content=json.dumps(dict(event, id=f"xff-{n}"))).status_code
            for n in range(80)
        ]
    assert statuses.count(204) == 3 and statuses[3:] == [429] * 77, statuses


@pytest.mark.parametrize("target", ["serve", "receiver"])
def test_x_forwarded_for_does_not_evade_the_callback_limit(limited: dict[str, Server], target: str) -> None:
    with _from("127.0.0.1") as http:
        statuses = [
            http.options(
                limited[target].url,
                headers={"webhook-request-origin": "p.example", "x-forwarded-for": f"203.0.113.{n}",
                         "webhook-request-callback": f"https://callback.invalid/{n}"},
            ).status_code
            for n in range(_webhook.CALLBACKS_PER_MINUTE + 4)
        ]
    assert statuses == [200] * _webhook.CALLBACKS_PER_MINUTE + [429] * 4


def test_a_trusted_proxy_names_the_client(limited: dict[str, Server]) -> None:
    """`evcat serve --trusted-proxy 127.0.0.1`: behind that proxy each forwarded
    client has its own budget (and a client not forwarded shares the proxy's)."""
    event = examples()[1]
    headers = {**STRUCTURED, "webhook-request-origin": "producer.example.nl"}
    with _from("127.0.0.1") as http:
        forwarded = [
            http.post(limited["proxied"].url, headers={**headers, "x-forwarded-for": f"198.51.100.{n % 5}"},
                      content=json.dumps(dict(event, id=f"proxied-{n}"))).status_code
            for n in range(20)
        ]
    assert forwarded.count(204) == 15, forwarded  # 3 for each of the 5 clients


# -- 3. slow request headers (slowloris) ------------------------------------------------


def _closed_after(port: int, first: bytes, trickle: bytes, limit: float) -> tuple[float, bytes]:
    """Send ``first`` whole, then ``trickle`` a byte a second; seconds until the
    server closes the connection (or ``limit``), and what it answered."""
    import socket

    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=limit) as sock:
        sock.settimeout(0.05)
        started = time.monotonic()
        if first:
            sock.sendall(first)
        position = 0
        next_byte = started + 1.0
        while time.monotonic() - started < limit:
            now = time.monotonic()
            if position < len(trickle) and now >= next_byte:
                try:
                    sock.sendall(trickle[position : position + 1])
                except OSError:
                    return now - started, answer
                position += 1
                next_byte = now + 1.0
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return time.monotonic() - started, answer
            if not chunk:
                return time.monotonic() - started, answer
            answer += chunk
    return limit, answer


REQUEST_START = b"POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/cloudevents+json\r\n"


@pytest.mark.slow
@pytest.mark.parametrize("target", ["serve", "receiver", "receiver-cli"])
def test_slow_request_headers_are_cut_at_the_header_deadline(limited: dict[str, Server], target: str) -> None:
    """Issue 30: headers a byte a second held a connection open forever (uvicorn
    has no header timeout; its keep-alive timer restarts at every byte). Now a
    connection whose headers are not whole HEADER_TIMEOUT (10 s) after it opened,
    or after the previous response, gets 408 and is closed; so is a silent one.
    A body may still come slowly (the body has its own, longer, limit)."""
    from generator.runtime._serving import HEADER_TIMEOUT

    port = int(limited[target].url.rsplit(":", 1)[1].split("/", 1)[0])
    options = b"OPTIONS / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 0\r\n\r\n"
    cases = {
        "trickle": (REQUEST_START, b"x-slow: " + b"a" * 40),
        "silent": (b"", b""),
        "kept-alive": (options, REQUEST_START),  # answered 200, then the next request trickles
        "slow body": (REQUEST_START + b"content-length: 14\r\n\r\n", b'{"id": 123456}'),
    }
    limit = HEADER_TIMEOUT + 8
    results: dict[str, tuple[float, bytes]] = {}

    def attempt(name: str) -> None:
        results[name] = _closed_after(port, *cases[name], limit=limit)

    threads = [threading.Thread(target=attempt, args=(name,)) for name in cases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for name in ("trickle", "silent", "kept-alive"):
        seconds, answer = results[name]
        assert HEADER_TIMEOUT - 1 < seconds < HEADER_TIMEOUT + 4, (name, seconds, answer)
        assert answer.count(b"HTTP/1.1 408 ") == 1, (name, answer)
    assert results["kept-alive"][1].startswith(b"HTTP/1.1 200 ")  # the first request was answered
    seconds, answer = results["slow body"]  # headers whole at once, the body over 14 s
    assert answer.startswith(b"HTTP/1.1 400 ") and b"408" not in answer, answer
