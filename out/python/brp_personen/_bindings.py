"""CloudEvents protocol bindings for Kafka, AMQP and MQTT (contract §7).

Part of evcat's runtime (``generator/runtime/``): copied verbatim into every
generated package. Needs only the standard library and pydantic: every
function maps an event to and from plain values (bytes, str, dicts, lists of
tuples) that any client library can carry.

Every ``from_*`` function turns the message into the structured-mode event
(a JSON format mapping) and hands it to ``parse_event``, so a message is
judged exactly like the same event sent in structured mode: it raises only
``EventError`` or pydantic's ``ValidationError``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast

from ._cloudevents import CloudEvent, EventError, parse_event
from ._http import (
    _CORE_TYPES,  # pyright: ignore[reportPrivateUsage]  # a sibling module's table
    STRUCTURED_CONTENT_TYPE,
    binary_fast,
    binary_sized,
    structured_from_binary,
)
from ._reading import charset_problem, essence

__all__ = [
    "AMQP_PREFIX",
    "KAFKA_PREFIX",
    "from_amqp",
    "from_kafka",
    "from_mqtt",
    "structured_from_binary",
    "to_amqp",
    "to_kafka",
    "to_mqtt",
]

Events = Mapping[tuple[str, str | None], type[CloudEvent]]
Mode = Literal["structured", "binary"]

# Kafka binding §3.2.3.1; AMQP binding §3.1.3.1 (both separators are read).
KAFKA_PREFIX = "ce_"
AMQP_PREFIX = "cloudEvents_"
_AMQP_PREFIXES = ("cloudEvents_", "cloudEvents:")
_STRUCTURED_PREFIX = "application/cloudevents"
_STRUCTURED = f"{STRUCTURED_CONTENT_TYPE}; charset=utf-8"
_JSON_DATA = "application/json"

_REQUIRED = frozenset(("specversion", "id", "source", "type"))


def _check_mode(mode: str) -> None:
    if mode not in ("structured", "binary"):
        raise ValueError(f"mode must be 'structured' or 'binary', not {mode!r}")


def _is_structured(content_type: str | None) -> bool:
    # Kafka §3, AMQP §3, MQTT §3: the CloudEvents media type prefix, matched
    # case-insensitively, means structured mode.
    return bool(content_type) and str(content_type).strip().lower().startswith(
        _STRUCTURED_PREFIX
    )


def _rfc3339(value: datetime) -> str:
    """A native timestamp as RFC 3339 text: UTC with six fraction digits, a
    form every profile accepts (Het Normo ID06 asks for exactly this one)."""
    if value.tzinfo is None:
        # AMQP timestamps are UTC; client libraries that give naive datetimes
        # give them in UTC.
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _binary_attributes(event: CloudEvent) -> tuple[dict[str, Any], bytes]:
    """The event's attributes in JSON form (without data) and its data bytes."""
    wire = event.to_dict()
    payload = b""
    if "data" in wire:
        payload = json.dumps(
            wire.pop("data"), ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8")
        wire.setdefault("datacontenttype", _JSON_DATA)
    return wire, payload


def _canonical(value: Any) -> str:
    # CloudEvents §3.1.1 canonical string forms of JSON-form values.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _bytes(value: object) -> bytes | None:
    """``value``'s bytes when it is bytes-like (bytes, bytearray, memoryview)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, memoryview):
        return value.tobytes()
    return None


def _text(value: Any, where: str) -> str:
    raw = _bytes(value)
    if raw is not None:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise EventError(f"{where} is not UTF-8 text") from error
    return str(value)


def _pairs(
    items: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
) -> list[tuple[str, Any]]:
    if items is None:
        return []
    if isinstance(items, Mapping):
        # (the isinstance narrowing of the Iterable branch knows no key types)
        mapping = cast("Mapping[object, Any]", items)
        return [(str(key), value) for key, value in mapping.items()]
    pairs: list[tuple[str, Any]] = []
    key: object
    value: Any
    for item in items:
        try:
            key, value = item
        except (TypeError, ValueError) as error:
            raise EventError(
                "headers/properties must be (name, value) pairs"
            ) from error
        pairs.append((_text(key, "a header name"), value))
    return pairs


def _payload(value: bytes | bytearray | memoryview | str | None) -> bytes:
    if value is None:
        return b""
    if isinstance(value, str):
        return value.encode("utf-8")
    raw = _bytes(value)
    if raw is not None:
        return raw
    raise EventError(f"a message body is bytes, not {type(value).__name__}")


def _binary(
    attributes: dict[str, Any], content_type: str | None, payload: bytes, events: Events
) -> CloudEvent:
    """A binary-mode message: through the structured fast path where
    ``from_http`` takes it (a JSON payload, attributes as text; a header's
    text here is as sent, never percent-encoded, so a ``%`` in it goes the
    careful way), else the structured-mode event of the same mapping."""
    if all(isinstance(value, str) for value in attributes.values()):
        texts = cast("dict[str, str]", attributes)
        parsed = binary_fast(texts, content_type or "", payload, events)
        if parsed is not None:
            return binary_sized(parsed, texts, content_type or "", payload)
    return parse_event(
        structured_from_binary(attributes, content_type, payload, events), events
    )


def _structured(payload: bytes, content_type: str | None, events: Events) -> CloudEvent:
    if content_type and essence(content_type) != STRUCTURED_CONTENT_TYPE:
        raise EventError(
            f"event format {content_type!r} is not supported; "
            f"structured mode here is {STRUCTURED_CONTENT_TYPE}"
        )
    problem = charset_problem(content_type)
    if problem:
        raise EventError(problem)
    return parse_event(payload, events)


# --- Kafka (kafka-protocol-binding.md) -------------------------------------


def to_kafka(
    event: CloudEvent, mode: Mode = "binary"
) -> tuple[bytes | None, dict[str, bytes], bytes]:
    """``(key, headers, value)`` of a Kafka record carrying ``event``.

    The key (§3.1) is the ``partitionkey`` attribute when the event declares
    it, else ``subject``, else ``None``. Binary mode (§3.2) writes every
    attribute as a ``ce_`` header, ``datacontenttype`` as ``content-type``;
    structured mode (§3.3) writes the JSON format with content type
    ``application/cloudevents+json``. Header values are UTF-8 bytes.
    """
    _check_mode(mode)
    wire, payload = _binary_attributes(event)
    key_text = (
        wire.get("partitionkey")
        if "partitionkey" in type(event).attribute_types
        else None
    )
    if key_text is None:
        key_text = wire.get("subject")
    key = None if key_text is None else _canonical(key_text).encode("utf-8")
    if mode == "structured":
        return key, {"content-type": _STRUCTURED.encode("utf-8")}, event.to_json()
    headers: dict[str, bytes] = {}
    for name, value in wire.items():
        header = "content-type" if name == "datacontenttype" else KAFKA_PREFIX + name
        headers[header] = _canonical(value).encode("utf-8")
    return key, headers, payload


def from_kafka(
    headers: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
    value: bytes | bytearray | memoryview | str | None,
    events: Events,
) -> CloudEvent:
    """The event in a Kafka record (headers as a mapping or (name, value) pairs).

    Structured mode when ``content-type`` starts with
    ``application/cloudevents``, else binary mode (§3).
    """
    content_type: str | None = None
    attributes: dict[str, Any] = {}
    for name, raw in _pairs(headers):
        if raw is None:
            continue
        if name.lower() == "content-type":
            content_type = _text(raw, "the content-type header")
        elif name[: len(KAFKA_PREFIX)].lower() == KAFKA_PREFIX:
            # The name is kept as it is: the model judges it (lower-case a-z0-9).
            attributes[name[len(KAFKA_PREFIX) :]] = _text(raw, f"header {name!r}")
    payload = _payload(value)
    if _is_structured(content_type):
        return _structured(payload, content_type, events)
    return _binary(attributes, content_type, payload, events)


# --- AMQP (amqp-protocol-binding.md) ---------------------------------------

# The AMQP (1.0) timestamp counts milliseconds in UTC: a time with finer
# digits or another UTC offset goes as its canonical string, which the
# binding allows (§3.1.3.2), so nothing is lost.


def _amqp_value(value: Any, kind: str | None) -> Any:
    if kind == "Binary" and isinstance(value, str):
        return base64.b64decode(value)
    if kind == "Timestamp" and isinstance(value, str):
        moment = datetime.fromisoformat(value)
        exact = moment.microsecond % 1000 == 0 and moment.utcoffset() == timedelta(0)
        # Native only when reading it back gives the same text (Het Normo's
        # six fraction digits, for one, do not survive the millisecond form).
        return moment if exact and _rfc3339(moment) == value else value
    return value


def to_amqp(
    event: CloudEvent, mode: Mode = "binary"
) -> tuple[str, dict[str, Any], bytes]:
    """``(content_type, application_properties, body)`` of an AMQP message.

    Binary mode (§3.1): every attribute but ``datacontenttype`` is an
    application property named ``cloudEvents_<name>`` holding its native AMQP
    type (§3.1.3.2): ``bool`` for Boolean, ``int`` (long) for Integer,
    ``bytes`` for Binary, an aware ``datetime`` for a Timestamp that the AMQP
    timestamp (UTC milliseconds) holds exactly, else the canonical string; URIs
    and Strings as ``str``. ``content_type`` is the AMQP ``content-type``
    property; ``body`` the application-data section. Structured mode (§3.2):
    ``application/cloudevents+json`` and the JSON format, no properties.
    """
    _check_mode(mode)
    if mode == "structured":
        return _STRUCTURED, {}, event.to_json()
    wire, payload = _binary_attributes(event)
    types = {**_CORE_TYPES, **type(event).attribute_types}
    content_type = str(wire.pop("datacontenttype", ""))
    properties = {
        AMQP_PREFIX + name: _amqp_value(value, types.get(name))
        for name, value in wire.items()
    }
    return content_type, properties, payload


def from_amqp(
    content_type: str | None,
    application_properties: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
    body: bytes | bytearray | memoryview | str | None,
    events: Events,
) -> CloudEvent:
    """The event in an AMQP message: its ``content-type`` property, its
    application properties (``cloudEvents_`` or ``cloudEvents:`` prefix,
    native AMQP values or canonical strings) and its application data."""
    attributes: dict[str, Any] = {}
    for name, value in _pairs(application_properties):
        for prefix in _AMQP_PREFIXES:
            if name.startswith(prefix):
                attributes[name[len(prefix) :]] = value
                break
    payload = _payload(body)
    content = None if content_type is None else _text(content_type, "content-type")
    if _is_structured(content):
        return _structured(payload, content, events)
    return _binary(attributes, content or None, payload, events)


# --- MQTT (mqtt-protocol-binding.md) ---------------------------------------


def to_mqtt(
    event: CloudEvent, mode: Mode = "structured"
) -> tuple[str | None, list[tuple[str, str]], bytes]:
    """``(content_type, user_properties, payload)`` of an MQTT PUBLISH.

    Binary mode (MQTT 5 only, §3.1): ``datacontenttype`` is the Content Type
    property, every other attribute a User Property named as the attribute,
    holding its canonical string. Structured mode (§3.2): the JSON format,
    Content Type ``application/cloudevents+json``; with MQTT 3.1.1 send the
    payload alone (its content type is implied).
    """
    _check_mode(mode)
    if mode == "structured":
        return _STRUCTURED, [], event.to_json()
    wire, payload = _binary_attributes(event)
    content_type = wire.pop("datacontenttype", None)
    properties = [(name, _canonical(value)) for name, value in wire.items()]
    return (None if content_type is None else str(content_type)), properties, payload


def from_mqtt(
    content_type: str | None,
    user_properties: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
    payload: bytes | bytearray | memoryview | str | None,
    events: Events,
) -> CloudEvent:
    """The event in an MQTT PUBLISH: its Content Type (``None`` with MQTT
    3.1.1), its User Properties and its payload.

    Structured mode when the content type starts with
    ``application/cloudevents``, or when there is neither a content type nor
    a user property named after a required attribute (MQTT 3.1.1 is always
    structured, §3); else binary mode.
    """
    pairs = [
        (name, _text(value, f"user property {name!r}"))
        for name, value in _pairs(user_properties)
    ]
    content = None if content_type is None else _text(content_type, "content-type")
    data = _payload(payload)
    if _is_structured(content):
        return _structured(data, content, events)
    if not {name for name, _ in pairs} & _REQUIRED:
        if content is None:  # MQTT 3.1.1, or MQTT 5 without a content type
            return parse_event(data, events)
        raise EventError(
            f"content type {content!r} is not {STRUCTURED_CONTENT_TYPE} and no user "
            "property holds a CloudEvents attribute: not a CloudEvent"
        )
    attributes: dict[str, Any] = {}
    for name, value in pairs:
        if name == "datacontenttype":
            content = content or value
        else:
            attributes[name] = value
    return _binary(attributes, content, data, events)
