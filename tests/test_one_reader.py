"""Issue 26, one reader of bytes: every judge reads JSON text the same way.

UTF-8 only and no byte-order mark (RFC 8259 §8.1), no charset but UTF-8 on a
JSON body, integers within 64 bits (README, Limits): `evcat validate`,
`evcat serve` and the generated ``parse_event``, ``from_http`` (both modes),
the Kafka, AMQP and MQTT readers and the ``Receiver`` give one verdict, and
the readers that word a refusal use the runtime's words (``_reading``).
Each case failed before the fix: `evcat validate` and `evcat serve` read a
byte-order mark, UTF-16 and UTF-32 (the standard library's reader guesses the
encoding), every judge accepted integers beyond 64 bits (orjson reads them as
floats), and no judge looked at the charset.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from generator.commands.lint import lint
INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)  # README, Limits: integers of 64 bits

from .conftest import run_evcat
from .webhook_support import CATALOG, Server, importable_packages, start_evcat_serve, start_receiver

ZAKEN = CATALOG / "zaken" / "zaken.yaml"


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with importable_packages(tmp_path_factory.mktemp("one-reader-packages")) as root:
        yield root


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory, packages: Path) -> Iterator[dict[str, Server]]:
    started: dict[str, Server] = {}
    try:
        started["serve"] = start_evcat_serve(tmp_path_factory.mktemp("serve"))
        started["receiver"] = start_receiver(tmp_path_factory.mktemp("receiver"), packages, package="zaken")
        yield started
    finally:
        for server in started.values():
            server.stop()
    for name, server in started.items():
        assert "Traceback" not in server.stderr.read_text(errors="replace"), name


def _event(**data: Any) -> dict[str, Any]:
    (event,) = [e for e in lint(str(ZAKEN)).catalog_set.events if e.type.endswith("zaakstatus-gewijzigd")]
    value = event.complete_example(event.examples[0].values)
    value["data"].update(data)
    return value


STRUCTURED = "application/cloudevents+json"
BOM = "byte-order mark"
WIDE = "UTF-16 or UTF-32"
BIG = "beyond 64 bits"
TWICE = "appears twice in one object"  # runtime _reading.DUPLICATE_WORDS

# (name, the event's JSON text, the words of the refusal or None: accepted)
def _texts() -> list[tuple[str, bytes, str | None]]:
    plain = json.dumps(_event(), ensure_ascii=False)
    cases: list[tuple[str, bytes, str | None]] = [
        ("utf-8", plain.encode(), None),
        ("byte-order mark", b"\xef\xbb\xbf" + plain.encode(), BOM),
        ("utf-16", plain.encode("utf-16"), WIDE),
        ("utf-16-le", plain.encode("utf-16-le"), WIDE),
        ("utf-16-be", plain.encode("utf-16-be"), WIDE),
        ("utf-32", plain.encode("utf-32"), WIDE),
    ]
    for number, refused in [(INT64_MAX, False), (INT64_MIN, False), (2**63, True), (2**64 + 1, True),
                            (10**30, True), (INT64_MIN - 1, True), (10**200, True)]:
        text = json.dumps(_event(extraGetal=number)).encode()
        cases.append((f"integer {number}" if abs(number) < 10**40 else "integer 10**200", text, BIG if refused else None))
    # 19 digits inside a string are no integer: the careful path accepts them too
    cases.append(("digits in a string", json.dumps(_event(kenmerk="1" * 40)).encode(), None))
    # RFC 8259 §4 / RFC 7493 §2.3: names within an object are unique; every
    # reader kept the last value before (issue 26)
    event = _event()
    envelope = json.dumps(event)
    cases.append(("duplicate type", envelope.replace('"id":', f'"type": {json.dumps(event["type"])}, "id":', 1).encode(), TWICE))
    cases.append(("duplicate id", envelope.replace('"id":', '"id": "first", "id":', 1).encode(), TWICE))
    in_data = json.dumps(_event(extraNaam="b")).replace('"extraNaam": "b"', '"extraNaam": "a", "extraNaam": "b"', 1)
    cases.append(("duplicate in data", in_data.encode(), TWICE))
    cases.append(("escaped duplicate", envelope.replace('"id":', '"\\u0069d": "x", "id":', 1).encode(), TWICE))
    cases.append(("same name in two objects", json.dumps(_event(extraA={"naam": 1}, extraB={"naam": 2})).encode(), None))
    return cases


TEXTS = _texts()


def _generated(packages: Path) -> Any:
    import zaken

    return zaken


def _verdict(call: Any) -> str | None:
    """None: accepted; else the refusal's message."""
    try:
        call()
    except ValueError as error:  # EventError, pydantic's ValidationError
        return str(error)
    return None


def _binary(event: dict[str, Any]) -> tuple[dict[str, str], bytes]:
    attributes = {name: ("true" if v is True else "false" if v is False else str(v))
                  for name, v in event.items() if name not in ("data", "datacontenttype")}
    return attributes, json.dumps(event["data"]).encode()


@pytest.mark.parametrize(("name", "text", "refusal"), TEXTS, ids=[case[0] for case in TEXTS])
def test_every_reader_reads_the_same_bytes_the_same_way(
    name: str, text: bytes, refusal: str | None, packages: Path, servers: dict[str, Server], tmp_path: Path
) -> None:
    zaken = _generated(packages)
    verdicts: dict[str, str | None] = {
        "parse_event": _verdict(lambda: zaken.parse_event(text)),
        "from_http": _verdict(lambda: zaken.from_http({"content-type": STRUCTURED}, text)),
        "from_kafka": _verdict(lambda: zaken.from_kafka({"content-type": STRUCTURED.encode()}, text)),
        "from_amqp": _verdict(lambda: zaken.from_amqp(STRUCTURED, {}, text)),
        "from_mqtt": _verdict(lambda: zaken.from_mqtt(None, [], text)),
        # as a batch of one: the array around UTF-8 text; the other encodings as they are
        "parse_batch": _verdict(lambda: zaken.parse_batch(b"[" + text + b"]" if text.startswith(b"{") else text)),
    }
    path = tmp_path / "event.json"
    path.write_bytes(text)
    validated = run_evcat("validate", str(CATALOG), str(path))
    verdicts["evcat validate"] = None if validated.returncode == 0 else validated.stdout + validated.stderr
    with httpx.Client(timeout=30) as http:
        for target, server in servers.items():
            answer = http.post(server.url, headers={"content-type": STRUCTURED}, content=text)
            assert answer.status_code in (204, 400), (target, answer.status_code, answer.text)
            verdicts[target] = None if answer.status_code == 204 else answer.text
    if refusal is None:
        assert verdicts == dict.fromkeys(verdicts), verdicts
    else:
        refused = {judge: message for judge, message in verdicts.items() if message is None or refusal not in message}
        assert not refused, refused  # every judge refuses, in the runtime's words


@pytest.mark.parametrize("number", [2**63, 10**30, INT64_MIN - 1])
def test_binary_mode_data_beyond_64_bits_is_refused_by_every_reader(number: int, packages: Path,
                                                                    servers: dict[str, Server]) -> None:
    zaken = _generated(packages)
    attributes, body = _binary(_event(extraGetal=number))
    headers = {"content-type": "application/json", **{f"ce-{k}": v for k, v in attributes.items()}}
    verdicts = {
        "from_http": _verdict(lambda: zaken.from_http(headers, body)),
        "from_kafka": _verdict(lambda: zaken.from_kafka(
            {"content-type": b"application/json", **{f"ce_{k}": v.encode() for k, v in attributes.items()}}, body)),
        "from_amqp": _verdict(lambda: zaken.from_amqp(
            "application/json", {f"cloudEvents_{k}": v for k, v in attributes.items()}, body)),
        "from_mqtt": _verdict(lambda: zaken.from_mqtt("application/json", list(attributes.items()), body)),
    }
    with httpx.Client(timeout=30) as http:
        for target, server in servers.items():
            answer = http.post(server.url, headers=headers, content=body)
            verdicts[target] = None if answer.status_code == 204 else answer.text
    refused = {judge: message for judge, message in verdicts.items() if message is None or BIG not in message}
    assert not refused, refused


def test_binary_mode_data_with_a_repeated_name_is_refused_by_every_reader(packages: Path,
                                                                       servers: dict[str, Server]) -> None:
    zaken = _generated(packages)
    attributes, body = _binary(_event(extraGetal=1))
    body = body.replace(b'"extraGetal"', b'"extraGetal": 2, "extraGetal"', 1)
    assert body.count(b"extraGetal") == 2
    headers = {"content-type": "application/json", **{f"ce-{k}": v for k, v in attributes.items()}}
    verdicts = {
        "from_http": _verdict(lambda: zaken.from_http(headers, body)),
        "from_kafka": _verdict(lambda: zaken.from_kafka(
            {"content-type": b"application/json", **{f"ce_{k}": v.encode() for k, v in attributes.items()}}, body)),
        "from_amqp": _verdict(lambda: zaken.from_amqp(
            "application/json", {f"cloudEvents_{k}": v for k, v in attributes.items()}, body)),
        "from_mqtt": _verdict(lambda: zaken.from_mqtt("application/json", list(attributes.items()), body)),
    }
    with httpx.Client(timeout=30) as http:
        for target, server in servers.items():
            answer = http.post(server.url, headers=headers, content=body)
            verdicts[target] = None if answer.status_code == 204 else answer.text
    refused = {judge: message for judge, message in verdicts.items() if message is None or TWICE not in message}
    assert not refused, refused


CHARSETS = [
    ("utf-8", None), ("UTF-8", None), ('"utf-8"', None),
    ("utf-16", "charset=utf-16"), ("latin-1", "charset=latin-1"), ("bogus", "charset=bogus"),
]


@pytest.mark.parametrize(("charset", "refusal"), CHARSETS, ids=[c for c, _ in CHARSETS])
def test_a_json_body_in_a_charset_other_than_utf_8_is_refused_by_every_judge(
    charset: str, refusal: str | None, packages: Path, servers: dict[str, Server]
) -> None:
    """The body itself is UTF-8 in every case: what is judged is the header
    that says it is not (the HTTP binding §3.1.1 and the JSON format speak of
    UTF-8 JSON only)."""
    zaken = _generated(packages)
    event = _event()
    structured = f"{STRUCTURED}; charset={charset}"
    text = json.dumps(event).encode()
    attributes, body = _binary(event)
    data_type = f"application/json; charset={charset}"
    binary = {"content-type": data_type, **{f"ce-{k}": v for k, v in attributes.items()}}
    verdicts = {
        "from_http structured": _verdict(lambda: zaken.from_http({"content-type": structured}, text)),
        "from_http binary": _verdict(lambda: zaken.from_http(binary, body)),
        "from_http_batch": _verdict(lambda: zaken.from_http_batch(
            {"content-type": f"application/cloudevents-batch+json; charset={charset}"}, b"[" + text + b"]")),
        "from_kafka structured": _verdict(lambda: zaken.from_kafka({"content-type": structured.encode()}, text)),
        "from_kafka binary": _verdict(lambda: zaken.from_kafka(
            {"content-type": data_type.encode(), **{f"ce_{k}": v.encode() for k, v in attributes.items()}}, body)),
        "from_mqtt binary": _verdict(lambda: zaken.from_mqtt(data_type, list(attributes.items()), body)),
    }
    with httpx.Client(timeout=30) as http:
        for target, server in servers.items():
            for mode, headers, content in (("structured", {"content-type": structured}, text), ("binary", binary, body)):
                answer = http.post(server.url, headers=headers, content=content)
                assert answer.status_code in (204, 415), (target, mode, answer.status_code, answer.text)
                verdicts[f"{target} {mode}"] = None if answer.status_code == 204 else answer.text
    if refusal is None:
        assert verdicts == dict.fromkeys(verdicts), verdicts
    else:
        wrong = {judge: message for judge, message in verdicts.items() if message is None or refusal not in message}
        assert not wrong, wrong


def test_binary_mode_without_a_content_type_or_with_integer_values_gets_one_verdict(packages: Path,
                                                                                    tmp_path: Path) -> None:
    """Issue 26: "the MQTT and Kafka readers accept a missing content type and
    integer header values that the HTTP reader refuses". Each binding maps a
    missing content type to an absent ``datacontenttype`` and an attribute's
    value to its text, so every reader gives the verdict the same event gets
    in structured mode: a zaken event without ``datacontenttype`` is read (NL
    GOV leaves it optional; JSON data is implied, JSON format §3.1), a
    Het Normo one is refused (NORMO requires it), and an integer where a
    String attribute is expected is read as its text alike by the readers of
    text headers (AMQP's typed properties refuse it)."""
    import importlib
    import sys

    from generator.commands.generate import render

    zaken = _generated(packages)
    catalog_set = lint(str(CATALOG.parent / "normo" / "meter-data.yaml")).catalog_set
    for relative, content in render(catalog_set, ["python"])["python"].items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(content)
    # This package holds one file of the meter-data catalog: imported here
    # and forgotten after (other tests import the whole catalog's).
    kept = {name: module for name, module in sys.modules.items() if name.split(".")[0] == "meter_data"}
    for name in kept:
        del sys.modules[name]
    sys.path.insert(0, str(tmp_path / "python"))
    try:
        meter_data = importlib.import_module("meter_data")
    finally:
        sys.path.remove(str(tmp_path / "python"))
        for name in [name for name in sys.modules if name.split(".")[0] == "meter_data"]:
            del sys.modules[name]
        sys.modules.update(kept)
    (normo,) = [e for e in catalog_set.events if e.type == "mdm.meter.updated" and e.dataversion == "2.0.0"]
    for module, event, expected in ((zaken, _event(), None), (meter_data, normo.complete_example(normo.examples[0].values),
                                                               "'datacontenttype' is missing")):
        attributes, body = _binary(event)
        for integer in (False, True):
            values: dict[str, Any] = dict(attributes)
            if integer:
                values["id"] = 42  # a client library's int header value
            verdicts = {
                "structured": _verdict(lambda: module.parse_event(json.dumps(
                    {**{k: v for k, v in event.items() if k != "datacontenttype"}, **({"id": "42"} if integer else {})}))),
                "from_http": _verdict(lambda: module.from_http({f"ce-{k}": v for k, v in values.items()}, body)),
                "from_kafka": _verdict(lambda: module.from_kafka({f"ce_{k}": v for k, v in values.items()}, body)),
                "from_amqp": _verdict(lambda: module.from_amqp(None, {f"cloudEvents_{k}": v for k, v in values.items()}, body)),
                "from_mqtt": _verdict(lambda: module.from_mqtt(None, list(values.items()), body)),
            }
            if integer:
                # AMQP's application properties are typed: a String attribute is
                # an AMQP string (AMQP binding §3.1.3.2), so a long is refused;
                # headers of HTTP, Kafka and MQTT are text, an int given for one is its text.
                amqp = verdicts.pop("from_amqp")
                assert amqp is not None and ("valid string" in amqp or expected is not None and expected in amqp), amqp
            if expected is None:
                assert verdicts == dict.fromkeys(verdicts), (module.__name__, integer, verdicts)
            else:
                wrong = {judge: message for judge, message in verdicts.items() if message is None or expected not in message}
                assert not wrong, (module.__name__, integer, wrong)
