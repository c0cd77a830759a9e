"""Issue 17 loose ends, over real HTTP on 127.0.0.1 (each failed before its fix):

- one verdict for a binary-mode message, whoever reads it: `evcat serve`, the
  generated ``webhook.Receiver`` (``from_http``) and the Kafka, AMQP and MQTT
  bindings all turn it into its structured-mode event with the runtime's one
  ``structured_from_binary``;
- the handshake's callback GET (webhook spec §4.1.3) goes only to public
  addresses unless the operator allows private ones (SSRF), DNS rebinding
  included;
- the rate limit counts by client address, so a client varying
  ``WebHook-Request-Origin`` gets no more, and its memory is bounded.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from generator.commands.lint import lint
from generator.runtime import _webhook
from generator.runtime._webhook import Judged, WebhookApp, refused_address

from .webhook_support import CATALOG, Scripted, Server, importable_packages, start_evcat_serve, start_receiver

ZAKEN = CATALOG / "zaken" / "zaken.yaml"
STRUCTURED = {"content-type": "application/cloudevents+json"}


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with importable_packages(tmp_path_factory.mktemp("hardening-packages")) as root:
        yield root


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory, packages: Path) -> Iterator[dict[str, Server]]:
    """`evcat serve` and the generated zaken ``Receiver``, both with --rate 3 and
    the default callback policy (private addresses refused)."""
    started: dict[str, Server] = {}
    try:
        started["serve"] = start_evcat_serve(tmp_path_factory.mktemp("serve"), "--rate", "3")
        started["receiver"] = start_receiver(tmp_path_factory.mktemp("receiver"), packages, rate="3", package="zaken")
        yield started
    finally:
        for server in started.values():
            server.stop()
    for name, server in started.items():
        assert "Traceback" not in server.stderr.read_text(errors="replace"), name


def _zaken_event() -> dict[str, Any]:
    (event,) = [e for e in lint(str(ZAKEN)).catalog_set.events if e.type.endswith("zaakstatus-gewijzigd")]
    value = event.complete_example(event.examples[0].values)
    value["id"] = "binary-verdict"
    return value


def _client(address: str) -> httpx.Client:
    """A client whose connections come from ``address`` (any of 127.0.0.0/8)."""
    return httpx.Client(timeout=30, transport=httpx.HTTPTransport(local_address=address))


# -- 1. one binary -> structured step, one verdict ------------------------------------

# (attribute changes, content type): every reader must agree on each.
VARIANTS: list[tuple[dict[str, str], str]] = [
    ({}, "application/json"),
    ({"prioriteit": "+3"}, "application/json"),  # the Integer grammar of evcat validate
    ({"prioriteit": "drie"}, "application/json"),
    ({"prioriteit": "99999999999"}, "application/json"),  # beyond int32
    ({"prioriteit": "9" * 5000}, "application/json"),  # no int() of 5000 digits
    ({"spoedeisend": "True"}, "application/json"),  # as the Python SDK writes it
    ({"spoedeisend": "ja"}, "application/json"),
    ({}, "text/json"),  # JSON format §3.1.1: */json is JSON
    ({}, "application/vnd.example+json; charset=utf-8"),
]


def _bindings_verdict(module: Any, attributes: dict[str, str], content_type: str, body: bytes) -> bool:
    """Accepted by each of Kafka, AMQP and MQTT (they must agree among themselves)."""
    calls = {
        "kafka": lambda: module.from_kafka(
            {"content-type": content_type.encode(), **{f"ce_{k}": v.encode() for k, v in attributes.items()}}, body
        ),
        "amqp": lambda: module.from_amqp(content_type, {f"cloudEvents_{k}": v for k, v in attributes.items()}, body),
        "mqtt": lambda: module.from_mqtt(content_type, list(attributes.items()), body),
    }
    verdicts = {}
    for name, call in calls.items():
        try:
            call()
            verdicts[name] = True
        except ValueError:  # EventError, pydantic's ValidationError
            verdicts[name] = False
    assert len(set(verdicts.values())) == 1, verdicts
    return next(iter(verdicts.values()))


def test_every_reader_of_binary_mode_gives_one_verdict(servers: dict[str, Server], packages: Path) -> None:
    import zaken

    base = _zaken_event()
    data = json.dumps(base.pop("data")).encode()
    base.pop("datacontenttype", None)
    verdicts: dict[str, list[bool]] = {}
    with _client("127.0.0.9") as http:
        for number, (changes, content_type) in enumerate(VARIANTS):
            attributes = {name: ("true" if v is True else "false" if v is False else str(v)) for name, v in base.items()}
            attributes.update(changes, id=f"variant-{number}")
            headers = {"content-type": content_type, **{f"ce-{k}": v for k, v in attributes.items()}}
            statuses = [
                http.post(servers[target].url, headers={**headers, "webhook-request-origin": f"v{number}.example"},
                          content=data).status_code
                for target in ("serve", "receiver")
            ]
            assert all(status in (204, 400) for status in statuses), (changes, content_type, statuses)
            verdict = [status == 204 for status in statuses]
            verdict.append(_accepted(zaken, headers, data))
            verdict.append(_bindings_verdict(zaken, attributes, content_type, data))
            verdicts[f"{changes} {content_type}"] = verdict
            time.sleep(0.01)
    disagreements = {name: v for name, v in verdicts.items() if len(set(v)) != 1}
    assert not disagreements, disagreements  # serve, Receiver, from_http, bindings
    accepted = {name for name, v in verdicts.items() if v[0]}
    assert "{} application/json" in accepted and "{'prioriteit': '+3'} application/json" in accepted
    assert "{'spoedeisend': 'True'} application/json" in accepted
    assert "{'prioriteit': 'drie'} application/json" not in accepted
    assert "{'prioriteit': '99999999999'} application/json" not in accepted


def _accepted(module: Any, headers: dict[str, str], body: bytes) -> bool:
    """Whether ``from_http`` accepts the message (else it raises a documented error)."""
    try:
        module.from_http(headers, body)
    except ValueError:
        return False
    return True


def test_serve_reports_binary_mode_diagnostics_with_pointers(servers: dict[str, Server]) -> None:
    """`evcat serve` keeps its diagnostics: an Integer header that is not one is
    named by the checker's rule and pointer, not swallowed as unreadable."""
    base = _zaken_event()
    data = json.dumps(base.pop("data")).encode()
    headers = {f"ce-{k}": ("false" if v is False else str(v)) for k, v in base.items() if k != "datacontenttype"}
    headers.update({"ce-id": "diagnosed", "ce-prioriteit": "drie", "content-type": "application/json"})
    with _client("127.0.0.10") as http:
        response = http.post(servers["serve"].url, headers=headers, content=data)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert any(error["pointer"] == "/prioriteit" and error["rule"] != "CE-FORMAT" for error in errors), errors


# -- 2. the callback GET goes to public addresses only ------------------------------------


@pytest.mark.parametrize("target", ["serve", "receiver"])
def test_callback_to_a_private_address_is_refused(servers: dict[str, Server], target: str) -> None:
    with Scripted(default=(200, {})) as callback, _client("127.0.0.11") as http:
        port = callback.url.split(":")[2].split("/")[0]
        urls = [callback.url, f"http://localhost:{port}/hook", f"http://[::ffff:127.0.0.1]:{port}/hook"]
        for url in urls:
            response = http.options(
                servers[target].url,
                headers={"webhook-request-origin": "p.example", "webhook-request-callback": url + "?key=k"},
            )
            assert response.status_code == 200
        time.sleep(2)
        assert callback.seen == []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and servers[target].stderr.read_text().count("refused") < len(urls):
        time.sleep(0.1)
    log = servers[target].stderr.read_text()
    assert log.count("refused") >= len(urls) and "127.0.0.1 is a loopback address" in log, log


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("127.0.0.1", True), ("10.1.2.3", True), ("172.16.0.1", True), ("192.168.1.1", True),
        ("169.254.169.254", True), ("100.64.0.1", True), ("0.0.0.0", True), ("224.0.0.1", True),
        ("240.0.0.1", True), ("255.255.255.255", True), ("::1", True), ("::", True), ("fe80::1%eth0", True),
        ("fc00::1", True), ("ff02::1", True), ("::ffff:10.0.0.1", True), ("::ffff:127.0.0.1", True),
        ("2002:7f00:1::1", True), ("64:ff9b::a00:1", True), ("2001:db8::1", True),
        ("93.184.215.14", False), ("2a00:1450:4001:80b::200e", False), ("64:ff9b::5db8:d70e", False),
    ],
)
def test_which_addresses_a_callback_may_reach(address: str, refused: bool) -> None:
    assert (refused_address(address) is not None) is refused, refused_address(address)


def test_dns_rebinding_does_not_reach_a_private_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """The name is resolved once and the connection goes to the checked address:
    a resolver answering a public address first and 127.0.0.1 afterwards (DNS
    rebinding) never gets the GET to 127.0.0.1. A name with any private answer
    is refused outright."""
    real = socket.getaddrinfo
    answers: list[str] = []

    def rebinding(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in ("rebind.example", "mixed.example"):
            public = "2a00:1450:4001:80b::200e"  # unroutable here: fails fast
            first = [public] if host == "rebind.example" else [public, "127.0.0.1"]
            chosen = first if not answers else ["127.0.0.1"]
            answers.append(host)
            return [item for address in chosen for item in real(address, port, *args, **kwargs)]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    monkeypatch.setattr(_webhook, "CALLBACK_TIMEOUT", 3.0)
    with Scripted(default=(200, {})) as callback:
        port = callback.url.split(":")[2].split("/")[0]
        for host in ("rebind.example", "mixed.example"):
            answers.clear()
            asyncio.run(_webhook.confirm_by_get(f"http://{host}:{port}/hook", "*"))
        time.sleep(0.5)
        assert callback.seen == []
        # allowed explicitly, the same GET to 127.0.0.1 does arrive: the test can see one
        asyncio.run(_webhook.confirm_by_get(f"http://127.0.0.1:{port}/hook?ok", "*", allow_private=True))
        assert [seen.path for seen in callback.seen] == ["/hook?ok"]


def test_callback_follows_no_redirect_and_is_bounded_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_webhook, "CALLBACK_TIMEOUT", 2.0)
    with Scripted(default=(200, {})) as target:
        with Scripted(default=(302, {"location": target.url + "?redirected"})) as redirecting:
            asyncio.run(_webhook.confirm_by_get(redirecting.url, "*", allow_private=True))
            assert [seen.method for seen in redirecting.seen] == ["GET"]
        assert target.seen == []
    # a callback server that accepts the connection and never answers: cut after the timeout
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        started = time.monotonic()
        asyncio.run(_webhook.confirm_by_get(f"http://127.0.0.1:{silent.getsockname()[1]}/", "*", allow_private=True))
        assert time.monotonic() - started < 5


@pytest.mark.parametrize("target", ["serve", "receiver"])
def test_a_malformed_callback_gets_400_not_a_crash(servers: dict[str, Server], target: str) -> None:
    with _client("127.0.0.13") as http:
        for url in ("http://[::1", "http://host:port/", "ftp://example.nl/x", "javascript:alert(1)", "http:///nohost"):
            response = http.options(
                servers[target].url, headers={"webhook-request-origin": "p.example", "webhook-request-callback": url}
            )
            assert response.status_code == 400, (url, response.text)
            assert response.headers["content-type"] == "application/problem+json"
            assert "not an http(s) URL" in response.json()["detail"]


@pytest.mark.parametrize("target", ["serve", "receiver"])
def test_handshake_callbacks_are_limited_per_client(servers: dict[str, Server], target: str) -> None:
    """Each callback is a GET the requester chooses: a few a minute per client
    address, so a flood of handshakes does not make the target a relay."""
    with _client("127.0.0.14") as http:
        statuses = [
            http.options(
                servers[target].url,
                headers={"webhook-request-origin": "p.example",
                         "webhook-request-callback": f"https://callback.invalid/{number}"},
            ).status_code
            for number in range(_webhook.CALLBACKS_PER_MINUTE + 3)
        ]
        plain = http.options(servers[target].url, headers={"webhook-request-origin": "p.example"})
    assert statuses == [200] * _webhook.CALLBACKS_PER_MINUTE + [429] * 3
    assert plain.status_code == 200 and plain.headers["webhook-allowed-origin"] == "*"  # the handshake itself is not limited


def test_a_trickling_callback_answer_is_cut_at_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer that comes a byte every 0.3 s never trips a per-read timeout;
    the callback is still cut at CALLBACK_TIMEOUT in all."""
    monkeypatch.setattr(_webhook, "CALLBACK_TIMEOUT", 1.5)
    stop = threading.Event()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)

        def trickle() -> None:
            connection, _ = listener.accept()
            with connection:
                for byte in b"HTTP/1.1 200 OK\r\nx-slow: " + b"a" * 1000:
                    if stop.is_set():
                        return
                    try:
                        connection.sendall(bytes([byte]))
                    except OSError:
                        return
                    time.sleep(0.3)

        thread = threading.Thread(target=trickle, daemon=True)
        thread.start()
        started = time.monotonic()
        asyncio.run(_webhook.confirm_by_get(f"http://127.0.0.1:{listener.getsockname()[1]}/", "*", allow_private=True))
        elapsed = time.monotonic() - started
        stop.set()
        thread.join(5)
    assert 1.0 < elapsed < 3.5, elapsed


# -- 3. the rate limit: by client address, bounded memory ------------------------------


@pytest.mark.parametrize("target", ["serve", "receiver"])
def test_varying_the_origin_does_not_evade_the_rate_limit(servers: dict[str, Server], target: str) -> None:
    event = _zaken_event()
    statuses = []
    with _client("127.0.0.2") as http:
        for number in range(30):
            body = json.dumps(dict(event, id=f"evade-{number}"))
            headers = {**STRUCTURED, "webhook-request-origin": f"origin-{number}.example"}
            statuses.append(http.post(servers[target].url, headers=headers, content=body).status_code)
    accepted = statuses.count(204)
    assert 3 <= accepted <= 3 * _webhook._RateLimit.ORIGINS_PER_PEER, statuses
    assert statuses[-1] == 429
    with _client("127.0.0.3") as http:  # another client has its own budget
        headers = {**STRUCTURED, "webhook-request-origin": "origin-0.example"}
        assert http.post(servers[target].url, headers=headers, content=json.dumps(event)).status_code == 204
        same = [http.post(servers[target].url, headers=headers, content=json.dumps(event)).status_code for _ in range(3)]
        assert same == [204, 204, 429]  # 3 a minute for one origin of one client


class _Uvicorn:
    """A WebhookApp under uvicorn in this process (to look at its limiter)."""

    def __init__(self, app: WebhookApp) -> None:
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> _Uvicorn:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


def test_the_rate_limiter_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many clients (here 150 addresses of 127.0.0.0/8) keep at most ``max_keys``
    keys, and a throttled client stays throttled through the flood."""
    monkeypatch.setattr(_webhook._RateLimit, "MAX_KEYS", 40)
    app = WebhookApp(lambda headers, body: [Judged(0, {}, "x", "t")], rate=1)
    assert app._limit is not None and app._limit.max_keys == 40
    with _Uvicorn(app) as server:
        with _client("127.0.0.4") as http:
            assert [http.post(server.url, headers=STRUCTURED, content=b"{}").status_code for _ in range(2)] == [204, 429]
        for number in range(150):
            with _client(f"127.0.1.{number + 1}") as http:
                assert http.post(server.url, headers=STRUCTURED, content=b"{}").status_code == 204
            assert len(app._limit.log) <= 40
        with _client("127.0.0.4") as http:
            assert http.post(server.url, headers=STRUCTURED, content=b"{}").status_code == 429


def test_a_lone_surrogate_in_a_header_is_an_event_error(packages: Path) -> None:
    """``from_http`` takes str headers from any caller: a lone surrogate is
    refused as the JSON reader refuses it, never an event that cannot be written."""
    import zaken

    event = _zaken_event()
    headers, body = zaken.to_http(zaken.parse_event(json.dumps(event)), "binary")
    for name in ("ce-id", "ce-subject", "ce-nlbrpnationaliteit"):
        with pytest.raises(zaken.EventError, match="lone surrogate"):
            zaken.from_http({**headers, name: "x\ud800"}, body)


@pytest.mark.parametrize(
    ("client", "counted_as"),
    [
        (("127.0.0.5", 50000), "127.0.0.5"),
        (("::ffff:192.0.2.7", 1), "192.0.2.7"),  # IPv4-mapped: the IPv4 client
        (("2001:db8:1:2:aaaa::1", 1), "2001:db8:1:2::/64"),  # an IPv6 client chooses within its /64
        (("2001:db8:1:2:ffff::9", 1), "2001:db8:1:2::/64"),
        (("fe80::1%eth0", 1), "fe80::/64"),
        (None, "unknown"),
    ],
)
def test_the_rate_limit_counts_what_a_client_cannot_choose(client: Any, counted_as: str) -> None:
    assert _webhook.peer_of({"client": client}) == counted_as
