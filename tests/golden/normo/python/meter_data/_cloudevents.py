"""CloudEvents 1.0.2 envelope, JSON format and HTTP binding.

Part of evcat's runtime (``generator/runtime/``): copied verbatim into every
generated package, and linted, type-checked and tested in place. Needs only
pydantic v2 at run time.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar, Literal
from urllib.parse import quote, unquote

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    model_validator,
)

__all__ = [
    "CloudEvent",
    "EventError",
    "Int32",
    "Base64Binary",
    "Uri",
    "UriReference",
    "Timestamp",
    "NormoTimestamp",
    "parse_event",
    "parse_batch",
    "to_http",
    "from_http",
    "to_http_batch",
    "from_http_batch",
    "STRUCTURED_CONTENT_TYPE",
    "BATCH_CONTENT_TYPE",
]

STRUCTURED_CONTENT_TYPE = "application/cloudevents+json"
BATCH_CONTENT_TYPE = "application/cloudevents-batch+json"
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# RFC 3986 appendix A, as a regular expression.
_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = r"%[0-9A-Fa-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_SCHEME = r"[A-Za-z][A-Za-z0-9+\-.]*"
_USERINFO = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*"
_IP_LITERAL = r"\[[0-9A-Fa-f:.vV]+\]"
_REG_NAME = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*"
_AUTHORITY = rf"(?:{_USERINFO}@)?(?:{_IP_LITERAL}|{_REG_NAME})(?::[0-9]*)?"
_QUERY = rf"(?:{_PCHAR}|[/?])*"
_HIER = rf"(?://{_AUTHORITY}(?:/{_PCHAR}*)*|/?(?:{_PCHAR}+(?:/{_PCHAR}*)*)?)"
_RELATIVE = rf"(?://{_AUTHORITY}(?:/{_PCHAR}*)*|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?|(?:(?:[{_UNRESERVED}{_SUB_DELIMS}@]|{_PCT})+(?:/{_PCHAR}*)*)?)"
_URI = re.compile(rf"^{_SCHEME}:{_HIER}(?:\?{_QUERY})?(?:#{_QUERY})?\Z")
_URI_REFERENCE = re.compile(
    rf"^(?:{_SCHEME}:{_HIER}|{_RELATIVE})(?:\?{_QUERY})?(?:#{_QUERY})?\Z"
)
_ATTRIBUTE_NAME = re.compile(r"^[a-z0-9]+\Z")
# CloudEvents 1.0.2 §3.2 String: no control characters, noncharacters or lone surrogates.
_BAD_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]")


class EventError(ValueError):
    """An event that is not one of this catalog's, or not a CloudEvent at all."""


def _uri(value: str) -> str:
    if not _URI.match(value):
        raise ValueError(f"{value!r} is not an absolute URI (RFC 3986)")
    return value


def _uri_reference(value: str) -> str:
    if not value or not _URI_REFERENCE.match(value):
        raise ValueError(f"{value!r} is not a non-empty URI-reference (RFC 3986)")
    return value


def _string(value: str) -> str:
    if _BAD_CHARS.search(value):
        raise ValueError(
            "holds a control character, a noncharacter or a lone surrogate"
        )
    return value


def _decode_base64(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as error:
            raise ValueError("not valid base64") from error
    return value


def _rfc3339(value: datetime) -> str:
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _normo_time(value: datetime) -> str:
    # Het Normo ID06: yyyy-mm-ddThh:mm:ss.ffffffZ, in UTC.
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# RFC 3339 §5.6 date-time: seconds and an offset are required.
_RFC3339 = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})\Z"
)


def _rfc3339_text(value: Any) -> Any:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _RFC3339.match(value):
        raise ValueError(
            f"{value!r} is not an RFC 3339 timestamp, e.g. 2024-01-01T00:00:00Z"
        )
    return value


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError(
            "a timestamp needs a time zone (RFC 3339), e.g. 2024-01-01T00:00:00Z"
        )
    return value


def now() -> datetime:
    """The current moment in UTC (the default of ``time``)."""
    return datetime.now(timezone.utc)


def new_id() -> str:
    """A random UUID v4 (the default of ``id``)."""
    return str(uuid.uuid4())


String = Annotated[str, AfterValidator(_string)]
NonEmptyString = Annotated[str, Field(min_length=1), AfterValidator(_string)]
Int32 = Annotated[int, Field(strict=False, ge=INT32_MIN, le=INT32_MAX)]
Uri = Annotated[str, AfterValidator(_uri)]
UriReference = Annotated[str, AfterValidator(_uri_reference)]
Base64Binary = Annotated[
    bytes,
    BeforeValidator(_decode_base64),
    PlainSerializer(
        lambda value: base64.b64encode(value).decode("ascii"),
        return_type=str,
        when_used="json",
    ),
]
Timestamp = Annotated[
    datetime,
    BeforeValidator(_rfc3339_text),
    AfterValidator(_aware),
    PlainSerializer(_rfc3339, return_type=str, when_used="json"),
]
NormoTimestamp = Annotated[
    datetime,
    BeforeValidator(_rfc3339_text),
    AfterValidator(_aware),
    PlainSerializer(_normo_time, return_type=str, when_used="json"),
]
MediaType = Annotated[
    str,
    Field(
        pattern=r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*;.*)?$"
    ),
]
SequenceString = Annotated[str, Field(min_length=1)]

_CORE = (
    "specversion",
    "id",
    "source",
    "type",
    "datacontenttype",
    "dataschema",
    "subject",
    "time",
)


class CloudEvent(BaseModel):
    """A structured-mode CloudEvent (JSON format). Subclasses fix ``type``,
    ``dataversion``, the declared extensions and the type of ``data``."""

    model_config = ConfigDict(
        extra="allow", populate_by_name=True, validate_assignment=True
    )

    # Filled in by each generated event class.
    event_type: ClassVar[str] = ""
    event_dataversion: ClassVar[str | None] = None
    has_data: ClassVar[bool] = False
    # Attribute name on the wire -> CloudEvents type, for the binary HTTP mode.
    attribute_types: ClassVar[dict[str, str]] = {}

    specversion: Literal["1.0"] = "1.0"
    id: NonEmptyString = Field(default_factory=new_id)
    source: UriReference
    subject: NonEmptyString | None = None
    datacontenttype: MediaType | None = None
    dataschema: Uri | None = None

    @model_validator(mode="before")
    @classmethod
    def _read_wire(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        # JSON format §2.4: null for an optional attribute means unset.
        cleaned = {
            key: item
            for key, item in value.items()
            if item is not None or key == "data"
        }
        for name, item in cleaned.items():
            if name in ("data", "data_base64") or name in cls.model_fields:
                continue
            if not _ATTRIBUTE_NAME.match(name):
                raise ValueError(
                    f"attribute name {name!r} must consist of a-z and 0-9 only"
                )
            if isinstance(item, bool) or isinstance(item, str):
                continue
            if isinstance(item, int) and INT32_MIN <= item <= INT32_MAX:
                continue
            raise ValueError(
                f"extension attribute {name!r} holds a value no CloudEvents type can hold"
            )
        if "data_base64" in cleaned:
            if "data" in cleaned:
                raise ValueError(
                    "an event carries either 'data' or 'data_base64', not both"
                )
            if not cls.has_data:
                raise ValueError(f"{cls.event_type!r} is a notification without data")
            raw = cleaned.pop("data_base64")
            try:
                cleaned["data"] = json.loads(base64.b64decode(raw, validate=True))
            except (binascii.Error, ValueError, TypeError) as error:
                raise ValueError(
                    "data_base64 does not hold base64-encoded JSON"
                ) from error
        if "data" in cleaned and not cls.has_data:
            raise ValueError(f"{cls.event_type!r} is a notification without data")
        return cleaned

    def to_json(self) -> bytes:
        """The structured-mode JSON form (what ``to_http`` sends)."""
        return json.dumps(
            self.to_dict(), ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the catalog's attribute names; unset attributes left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def _parse_json(raw: str | bytes | Mapping[str, Any] | list[Any]) -> Any:
    if isinstance(raw, (str, bytes, bytearray)):
        try:
            return json.loads(raw)
        except ValueError as error:
            raise EventError(f"not valid JSON: {error}") from error
    return raw


def _event_class(
    event: Mapping[str, Any], events: Mapping[tuple[str, str | None], type[CloudEvent]]
) -> type[CloudEvent]:
    """Contract §5: by (type, dataversion); without dataversion only when the type has one."""
    event_type = event.get("type")
    if not isinstance(event_type, str) or not event_type:
        raise EventError(
            "the required attribute 'type' is missing or not a non-empty string"
        )
    for name in ("specversion", "id", "source"):
        if not isinstance(event.get(name), str) or not event.get(name):
            raise EventError(
                f"the required attribute {name!r} is missing or not a non-empty string"
            )
    if event.get("specversion") != "1.0":
        raise EventError(f"specversion must be '1.0', not {event.get('specversion')!r}")
    candidates = {
        version: cls for (known, version), cls in events.items() if known == event_type
    }
    if not candidates:
        raise EventError(
            f"unknown event type {event_type!r}; known: {', '.join(sorted({t for t, _ in events}))}"
        )
    dataversion = event.get("dataversion")
    if dataversion is not None:
        if dataversion not in candidates:
            known = ", ".join(sorted(str(v) for v in candidates))
            raise EventError(
                f"unknown dataversion {dataversion!r} of {event_type!r}; known: {known}"
            )
        return candidates[dataversion]
    if len(candidates) == 1:
        return next(iter(candidates.values()))
    raise EventError(
        f"{event_type!r} has several dataversions; the event must carry 'dataversion'"
    )


def parse_event(
    raw: str | bytes | Mapping[str, Any],
    events: Mapping[tuple[str, str | None], type[CloudEvent]],
) -> CloudEvent:
    """A structured-mode event (JSON text or a mapping) as the matching event class.

    Raises ``EventError`` for JSON that is not an event of this catalog and
    pydantic's ``ValidationError`` (naming the catalog's field names) for
    invalid content.
    """
    event = _parse_json(raw)
    if not isinstance(event, Mapping):
        raise EventError("an event must be a JSON object")
    return _event_class(event, events).model_validate(event)


def parse_batch(
    raw: str | bytes | list[Any],
    events: Mapping[tuple[str, str | None], type[CloudEvent]],
) -> list[CloudEvent]:
    """A JSON batch (``application/cloudevents-batch+json``): an array of events."""
    batch = _parse_json(raw)
    if not isinstance(batch, list):
        raise EventError("a batch must be a JSON array")
    return [parse_event(item, events) for item in batch]


# HTTP protocol binding §3.1.3.2: percent-encode space, '"', '%' and all
# characters outside printable ASCII in ce- header values.
_HEADER_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"%')


def _header_value(value: Any) -> str:
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
        return {
            "content-type": f"{STRUCTURED_CONTENT_TYPE}; charset=utf-8"
        }, event.to_json()
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
        body = json.dumps(
            wire["data"], ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8")
    return headers, body


def _lower(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    items = headers.items() if isinstance(headers, Mapping) else headers
    return {str(key).lower(): str(value) for key, value in items}


def _essence(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def from_http(
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    body: bytes | str,
    events: Mapping[tuple[str, str | None], type[CloudEvent]],
) -> CloudEvent:
    """The event in an HTTP message, structured or binary mode."""
    lowered = _lower(headers)
    content_type = lowered.get("content-type", "")
    raw = body.encode("utf-8") if isinstance(body, str) else body
    if _essence(content_type) == STRUCTURED_CONTENT_TYPE:
        return parse_event(raw, events)
    if _essence(content_type) == BATCH_CONTENT_TYPE:
        raise EventError("this is a batch: use from_http_batch")
    attributes: dict[str, Any] = {}
    for key, value in lowered.items():
        if key.startswith("ce-"):
            attributes[key[3:]] = unquote(value)
    if not attributes:
        raise EventError(
            "neither a structured-mode content type nor ce- headers: not a CloudEvent"
        )
    event_class = _event_class(attributes, events)
    for name, value in list(attributes.items()):
        kind = event_class.attribute_types.get(name)
        if kind == "Integer":
            try:
                attributes[name] = int(value)
            except ValueError as error:
                raise EventError(
                    f"ce-{name} must be an Integer, not {value!r}"
                ) from error
        elif kind == "Boolean":
            # Canonical form is true/false; some SDKs write True/False: accept both.
            if value.lower() not in ("true", "false"):
                raise EventError(f"ce-{name} must be true or false, not {value!r}")
            attributes[name] = value.lower() == "true"
    if content_type:
        attributes["datacontenttype"] = content_type
    if raw:
        if not event_class.has_data:
            raise EventError(
                f"{event_class.event_type!r} is a notification without data, but the body is not empty"
            )
        essence = _essence(content_type or "application/json")
        if essence != "application/json" and not essence.endswith("+json"):
            raise EventError(f"data of content type {content_type!r} is not JSON")
        try:
            attributes["data"] = json.loads(raw)
        except ValueError as error:
            raise EventError(f"the body is not valid JSON: {error}") from error
    return event_class.model_validate(attributes)


def to_http_batch(events: Iterable[CloudEvent]) -> tuple[dict[str, str], bytes]:
    """``(headers, body)`` for a batch (``application/cloudevents-batch+json``)."""
    body = "[" + ",".join(event.to_json().decode("utf-8") for event in events) + "]"
    return {"content-type": f"{BATCH_CONTENT_TYPE}; charset=utf-8"}, body.encode(
        "utf-8"
    )


def from_http_batch(
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    body: bytes | str,
    events: Mapping[tuple[str, str | None], type[CloudEvent]],
) -> list[CloudEvent]:
    content_type = _lower(headers).get("content-type", "")
    if _essence(content_type) != BATCH_CONTENT_TYPE:
        raise EventError(
            f"a batch has content type {BATCH_CONTENT_TYPE}, not {content_type!r}"
        )
    return parse_batch(body, events)


# Re-exported for the generated modules.
__all__ += [
    "String",
    "NonEmptyString",
    "MediaType",
    "SequenceString",
    "now",
    "new_id",
    "ValidationError",
]
