"""The CloudEvents HTTP protocol binding: structured, binary and batch mode.

Part of evcat's runtime (``generator/runtime/``): copied verbatim into every
generated package.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast
from urllib.parse import unquote

from jiter import from_json

from ._fastpath import fast_path, parse_fast_mapping
from ._models import CloudEvent, Events, event_class
from ._parsing import check_size, compact_size, parse_batch, parse_event, validated
from ._reading import (
    SURROGATE,
    EventError,
    charset_problem,
    essence,
    is_json,
    read_json,
)
from ._values import INTEGER

__all__ = [
    "BATCH_CONTENT_TYPE",
    "STRUCTURED_CONTENT_TYPE",
    "AttributeTypes",
    "Headers",
    "from_http",
    "from_http_batch",
    "structured_from_binary",
    "to_http",
    "to_http_batch",
]

STRUCTURED_CONTENT_TYPE = "application/cloudevents+json"
BATCH_CONTENT_TYPE = "application/cloudevents-batch+json"


# --- HTTP binding ----------------------------------------------------------------

# HTTP protocol binding §3.1.3.2: percent-encode space, '"', '%' and all
# characters outside printable ASCII in ce- header values.
_HEADER_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"%')
Headers = Mapping[str, str] | Iterable[tuple[str, str]]


def _header_value(value: Any) -> str:
    from urllib.parse import quote

    if isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    return quote(text, safe=_HEADER_SAFE)


def to_http(
    event: CloudEvent, mode: Literal["structured", "binary"] = "structured"
) -> tuple[dict[str, str], bytes]:
    """``(headers, body)`` for an HTTP request, per the CloudEvents HTTP binding."""
    if mode == "structured":
        content_type = f"{STRUCTURED_CONTENT_TYPE}; charset=utf-8"
        return {"content-type": content_type}, event.to_json()
    if mode != "binary":
        raise ValueError(f"mode must be 'structured' or 'binary', not {mode!r}")
    wire = event.to_dict()
    headers: dict[str, str] = {}
    body = b""
    for name, value in wire.items():
        if name == "data":
            continue
        if name == "datacontenttype":
            headers["content-type"] = str(value)
            continue
        headers[f"ce-{name}"] = _header_value(value)
    if "data" in wire:
        headers.setdefault("content-type", "application/json")
        text = json.dumps(wire["data"], ensure_ascii=False, separators=(",", ":"))
        return headers, text.encode("utf-8")
    return headers, body


def _lower(headers: Headers) -> dict[str, str]:
    items = cast(
        "Iterable[tuple[object, object]]",
        headers.items() if isinstance(headers, Mapping) else headers,
    )
    try:
        return {str(key).lower(): str(value) for key, value in items}
    except (TypeError, ValueError) as error:
        raise EventError(
            f"headers are a mapping or (name, value) pairs: {error}"
        ) from error


# CloudEvents 1.0.2 §3.1: the types of the core attributes (§3.2 type system).
_CORE_TYPES = {
    "specversion": "String",
    "id": "String",
    "type": "String",
    "subject": "String",
    "time": "Timestamp",
    "source": "URI-reference",
    "dataschema": "URI",
}
AttributeTypes = Callable[[Mapping[str, Any]], Mapping[str, str]]


def structured_from_binary(
    attributes: Mapping[str, Any],
    content_type: str | None,
    payload: bytes | None,
    events: Events | AttributeTypes,
    *,
    percent_encoded: bool = False,
    read: Callable[[bytes], Any] = read_json,
) -> dict[str, Any]:
    """The structured-mode (JSON format) mapping of a binary-mode message: the
    one home of this step for every binding (HTTP, Kafka, AMQP, MQTT) and for
    ``evcat serve``, so a binary-mode message is judged exactly like the same
    event in structured mode.

    ``attributes``: the CloudEvents attributes without their protocol prefix,
    as canonical strings (HTTP §3.1.3, Kafka §3.2.3, MQTT §3.1.3; with
    ``percent_encoded`` they are percent-decoded first, HTTP §3.1.3.2) or
    native values (AMQP §3.1.3.2: bool, int, bytes, datetime, or an int of
    epoch milliseconds for a Timestamp). Integer and Boolean attributes in
    their canonical string form (CloudEvents §3.1.1; ``True``/``False`` as
    some SDKs write them too) become JSON numbers and booleans; any other
    value stays as it is, for the judge (the model, or ``evcat validate``'s
    checker) to refuse. ``events``: the registry whose class gives the
    declared attribute types, or a function giving them for the attributes.
    ``content_type`` becomes ``datacontenttype``; a payload of a JSON media
    type (or none, JSON format §3.1.1) becomes ``data``, read by ``read``,
    any other ``data_base64``. Raises ``EventError`` (or what ``read``
    raises, a ``ValueError``) for a message that is no event at all.
    """
    if not attributes:
        raise EventError(
            "no CloudEvents attributes and no structured-mode content type: "
            "not a CloudEvent"
        )
    values: dict[str, Any] = {}
    for name, value in attributes.items():
        if percent_encoded and isinstance(value, str):
            try:
                value = unquote(value, errors="strict")
            except UnicodeDecodeError as error:
                raise EventError(
                    f"attribute {name!r} is not percent-encoded UTF-8: {error}"
                ) from error
        if value is not None:
            values[name] = value
    types = dict(_CORE_TYPES)
    if callable(events):
        types.update(events(values))
    else:
        try:
            types.update(event_class(values, events).attribute_types)
        except EventError:
            pass  # parse_event gives the verdict on the same mapping
    event: dict[str, Any] = {}
    for name, value in values.items():
        kind = types.get(name)
        if isinstance(value, str):
            if SURROGATE.search(value):
                raise EventError(f"attribute {name!r} holds a lone surrogate")
            if kind == "Integer" and len(value) <= 20 and INTEGER.match(value):
                value = int(value)  # longer digit strings stay text, refused
            elif kind == "Boolean" and value.lower() in ("true", "false"):
                value = value.lower() == "true"
        elif isinstance(value, bool) or isinstance(value, int) and kind != "Timestamp":
            pass
        elif isinstance(value, int):  # AMQP timestamp: ms since the epoch (§1.6.18)
            try:
                moment = datetime(1970, 1, 1, tzinfo=UTC)
                value = moment + timedelta(milliseconds=value)
            except OverflowError as error:
                raise EventError(
                    f"attribute {name!r}: timestamp {value} is out of range"
                ) from error
        elif isinstance(value, (bytes, bytearray, memoryview)):
            if kind not in (None, "Binary"):
                raise EventError(f"attribute {name!r} holds binary, not a {kind}")
            binary = cast("bytes | bytearray | memoryview[int]", value)
            value = base64.b64encode(bytes(binary)).decode("ascii")
        if isinstance(value, datetime):
            # AMQP timestamps are UTC; client libraries give naive ones in UTC.
            aware = value if value.tzinfo else value.replace(tzinfo=UTC)
            value = aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        # Anything else (a float, a list, ...) goes to the judge, which refuses it.
        event[name] = value
    if content_type:
        event["datacontenttype"] = content_type
    if payload:
        media = str(content_type or event.get("datacontenttype") or "")
        if not essence(media) or is_json(media):
            problem = charset_problem(content_type)
            if problem:
                raise EventError(problem)
            event["data"] = read(bytes(payload))
        else:
            event["data_base64"] = base64.b64encode(payload).decode("ascii")
    return event


def from_http(headers: Headers, body: bytes | str, events: Events) -> CloudEvent:
    """The event in an HTTP message, structured or binary mode."""
    lowered = _lower(headers)
    content_type = lowered.get("content-type", "")
    kind = essence(content_type)
    raw = body.encode("utf-8") if isinstance(body, str) else body
    if kind == STRUCTURED_CONTENT_TYPE:
        _check_charset(content_type)
        return parse_event(raw, events)
    if kind == BATCH_CONTENT_TYPE:
        raise EventError("this is a batch: use from_http_batch")
    attributes = {key[3:]: value for key, value in lowered.items() if key[:3] == "ce-"}
    parsed = binary_fast(attributes, content_type, raw, events)
    if parsed is None:
        event = structured_from_binary(
            attributes, content_type or None, raw, events, percent_encoded=True
        )
        # parse_event less its check_value: structured_from_binary checked the
        # attributes' text, and read_json the data.
        parsed = validated(event_class(event, events), event)
    return binary_sized(parsed, attributes, content_type, raw)


def binary_sized(
    parsed: CloudEvent, attributes: Mapping[str, str], content_type: str, payload: bytes
) -> CloudEvent:
    """``parsed``, read from a binary-mode message, unless the same event in
    JSON (``compact_size``) is over its profile's limit; measured only when
    it may be (``_size_bound``)."""
    limit = type(parsed).max_size
    if limit is not None and _size_bound(attributes, content_type, payload) > limit[0]:
        check_size(type(parsed), compact_size(parsed.to_dict()))
    return parsed


def _size_bound(
    attributes: Mapping[str, str], content_type: str, payload: bytes
) -> int:
    """More than the compact JSON of a binary-mode event can take: a JSON token
    grows at most 4.5 times when written again (``1e15`` is
    ``1000000000000000.0``; strings only lose escapes), a header value at most
    6 times (a control character as ``\\u0000``), plus the names and quotes."""
    head = sum(map(len, attributes)) + 6 * sum(map(len, attributes.values()))
    head += 6 * len(attributes)
    return 5 * len(payload) + head + 6 * len(content_type) + 64


# Attributes binary_fast leaves to structured_from_binary: ``data`` beside the
# payload, a ``datacontenttype`` that may say what the payload is.
_PLAIN_NAMES = frozenset({"data", "data_base64", "datacontenttype"})
_JSON = "application/json"  # the usual content type, known to be JSON


def binary_fast(
    attributes: Mapping[str, str], content_type: str, payload: bytes, events: Events
) -> CloudEvent | None:
    """A binary-mode message through the fast path (``parse_fast_mapping``:
    one pydantic-core call, no JSON text written): the mapping
    ``structured_from_binary`` makes of it, made here where that is simple
    (the headers' text as sent, an Integer or Boolean attribute converted as
    there, the payload one JSON value read by ``read_json``'s parser with
    its checks, or no payload). None where it is not (percent-encoded text,
    a ``data`` or ``datacontenttype`` attribute, a lone surrogate, a payload
    that is not JSON) or the fast path leaves the verdict to the careful
    path."""
    if not _PLAIN_NAMES.isdisjoint(attributes):
        return None
    if payload and content_type not in ("", _JSON) and not is_json(content_type):
        return None  # data_base64
    if ";" in content_type and charset_problem(content_type):
        return None
    event: dict[str, Any] = dict(attributes)
    text = "".join(event.values())
    if "%" in text or not text.isascii() and SURROGATE.search(text):
        return None
    fast = fast_path(events)
    if not fast.converted.isdisjoint(event):
        try:
            cls = event_class(event, events)
        except EventError:
            return None
        for name, kind in cls.attribute_types.items():
            value = event.get(name)
            if value is None:
                continue
            if kind == "Integer" and len(value) <= 20 and INTEGER.match(value):
                event[name] = int(value)
            elif kind == "Boolean" and value.lower() in ("true", "false"):
                event[name] = value.lower() == "true"
    if content_type:
        event["datacontenttype"] = content_type
    if payload:
        try:
            event["data"] = from_json(
                payload,
                allow_inf_nan=False,
                catch_duplicate_keys=True,
                cache_mode=False,
            )
        except ValueError:
            return None
    return parse_fast_mapping(event, payload, fast)


def _check_charset(content_type: str) -> None:
    problem = charset_problem(content_type)
    if problem:
        raise EventError(problem)


def to_http_batch(events: Iterable[CloudEvent]) -> tuple[dict[str, str], bytes]:
    """``(headers, body)`` for a batch (``application/cloudevents-batch+json``)."""
    body = "[" + ",".join(event.to_json().decode("utf-8") for event in events) + "]"
    return {"content-type": f"{BATCH_CONTENT_TYPE}; charset=utf-8"}, body.encode()


def from_http_batch(
    headers: Headers, body: bytes | str, events: Events
) -> list[CloudEvent]:
    content_type = _lower(headers).get("content-type", "")
    if essence(content_type) != BATCH_CONTENT_TYPE:
        raise EventError(
            f"a batch has content type {BATCH_CONTENT_TYPE}, not {content_type!r}"
        )
    _check_charset(content_type)
    return parse_batch(body, events)
