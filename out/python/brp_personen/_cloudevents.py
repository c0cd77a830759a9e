"""CloudEvents 1.0.2 envelope, JSON format and HTTP binding.

Part of evcat's runtime (``generator/runtime/``): copied verbatim into every
generated package, and linted, type-checked and tested in place. Needs only
pydantic v2 at run time.

Contract §4.1, one verdict: what this module accepts is what ``evcat
validate`` and the event's ``event.schema.json`` accept.

- Reading fills in nothing. ``model_validate`` (and so ``parse_event``,
  ``from_http`` and FastAPI request bodies) is the wire: the catalog's names
  only, JSON types as sent, every required attribute present. Defaults
  (``id``, ``time``, ``source``, ``datacontenttype``, payload ``default``s)
  apply only when a program constructs an event (``__init__``), where
  Python attribute names are accepted too.
- Nothing is lost: timestamps, binary values and URIs keep their text,
  explicit ``null``s inside ``data`` and undeclared properties of open
  payload schemas are kept and written back (``to_dict``).
- Bad input raises ``EventError`` or pydantic's ``ValidationError`` only.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import math
import re
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, ClassVar, Literal, cast
from urllib.parse import unquote

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    PlainSerializer,
    PlainValidator,
    Strict,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, from_json

__all__ = [
    "BATCH_CONTENT_TYPE",
    "STRUCTURED_CONTENT_TYPE",
    "Base64Binary",
    "CloudEvent",
    "Date",
    "DateTime",
    "EventError",
    "Int32",
    "IntegerSequence",
    "JsonInt",
    "MediaType",
    "NonEmptyString",
    "NonEmptyUriReference",
    "NormoTimestamp",
    "Payload",
    "SequenceString",
    "String",
    "Timestamp",
    "Uri",
    "UriReference",
    "ValidationError",
    "from_http",
    "from_http_batch",
    "new_id",
    "now",
    "parse_batch",
    "parse_event",
    "check_value",
    "read_json",
    "structured_from_binary",
    "to_http",
    "to_http_batch",
]

STRUCTURED_CONTENT_TYPE = "application/cloudevents+json"
BATCH_CONTENT_TYPE = "application/cloudevents-batch+json"
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
MAX_DEPTH = 128  # nesting of a JSON event, data included (evcat validate reads alike)

# The grammars of evcat's CloudEvents vocabulary (generator/vocabulary.py),
# copied: tests/test_one_verdict.py checks both read one corpus alike.
# RFC 3986 appendix A.
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
_RELATIVE = (
    rf"(?://{_AUTHORITY}(?:/{_PCHAR}*)*|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?"
    rf"|(?:(?:[{_UNRESERVED}{_SUB_DELIMS}@]|{_PCT})+(?:/{_PCHAR}*)*)?)"
)
_URI = re.compile(rf"^{_SCHEME}:{_HIER}(?:\?{_QUERY})?(?:#{_QUERY})?\Z")
_URI_REFERENCE = re.compile(
    rf"^(?:{_SCHEME}:{_HIER}|{_RELATIVE})(?:\?{_QUERY})?(?:#{_QUERY})?\Z"
)
_ATTRIBUTE_NAME = re.compile(r"^[a-z0-9]+\Z")
# CloudEvents 1.0.2 §3.2 String: no control characters, noncharacters or lone surrogates.
_BAD_CHARS = re.compile(
    "[\\u0000-\\u001f\\u007f-\\u009f\\ufdd0-\\ufdef\\ufffe\\uffff"
    + "".join(chr(p * 0x10000 + low) for p in range(1, 17) for low in (0xFFFE, 0xFFFF))
    + "\\ud800-\\udfff]"
)
# RFC 3339 §5.6 date-time, as evcat's vocabulary spells it (no :60, no year 0000).
_YEAR = r"(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
_RFC3339 = re.compile(
    rf"^{_YEAR}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])[Tt]"
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?"
    r"([Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])\Z"
)
# Het Normo ID06: yyyy-mm-ddThh:mm:ss.ffffffZ, in UTC.
_NORMO_TIME = re.compile(
    rf"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}}T[0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}\.[0-9]{{6}}Z\Z"
)
_FULL_DATE = re.compile(rf"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}}\Z")
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_MEDIA_TYPE = re.compile(
    rf'^{_TOKEN}/{_TOKEN}(?:[ \t]*;[ \t]*{_TOKEN}=(?:{_TOKEN}|"(?:[^"\\]|\\.)*"))*\Z'
)
_BASE64 = re.compile(
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?\Z"
)
_INTEGER = re.compile(r"^[+-]?[0-9]+\Z")
_CONSTRUCT = {"evcat": "construct"}  # validation context of __init__


class EventError(ValueError):
    """An event that is not one of this catalog's, or not a CloudEvent at all."""


# --- Reading JSON --------------------------------------------------------------


def read_json(raw: str | bytes | bytearray) -> Any:
    """JSON text as Python values, within bounds: ``EventError`` for invalid
    JSON (a lone surrogate is not Unicode text, NaN and Infinity are not
    numbers) and nesting deeper than ``MAX_DEPTH``. Parsed by pydantic-core's
    JSON reader (three times the standard library's speed here). A number too
    large for a float (1e400) reads as infinity, which the models refuse
    (``allow_inf_nan=False``, ``_finite_extras``)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    try:
        value = from_json(data, allow_inf_nan=False)
    except ValueError as error:
        raise EventError(f"not valid JSON: {error}") from error
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH:  # else it cannot be that deep
        check_value(value)
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_value(value: Any) -> None:
    """``EventError`` for JSON no UTF-8 text can carry (a lone surrogate in a
    string or a name), a number no JSON number is (NaN, Infinity, 1e400) or
    nesting more than ``MAX_DEPTH`` levels deep."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                raise EventError(f"the number {item} is not a JSON number (too large?)")
        elif isinstance(item, str):
            if _SURROGATE.search(item):
                raise EventError("a string holds a lone surrogate (not Unicode text)")
        elif depth >= MAX_DEPTH and isinstance(item, (dict, list)):
            raise EventError(f"the JSON is nested more than {MAX_DEPTH} levels deep")
        elif isinstance(item, dict):
            for key, child in cast("dict[object, Any]", item).items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    raise EventError("a name holds a lone surrogate (not Unicode text)")
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in cast("Sequence[Any]", item))


# --- Values: CloudEvents types (§3.2) and payload formats ------------------------


class WireDateTime(datetime):
    """A timestamp read from the wire: a ``datetime`` that keeps its text."""

    text: str


class WireBytes(bytes):
    """Binary data read from the wire: ``bytes`` that keep their base64 text."""

    text: str


def _string(value: str) -> str:
    if _BAD_CHARS.search(value):
        raise ValueError(
            "holds a control character, a noncharacter or a lone surrogate"
        )
    return value


def _uri(value: Any) -> str:
    if not isinstance(value, str) or not _URI.match(value):
        raise ValueError(f"{value!r} is not an absolute URI (RFC 3986)")
    return value


def _uri_reference(value: Any) -> str:
    if not isinstance(value, str) or not _URI_REFERENCE.match(value):
        raise ValueError(f"{value!r} is not a URI-reference (RFC 3986)")
    return value


def _non_empty_uri_reference(value: Any) -> str:
    if value == "":
        raise ValueError("must be a non-empty URI-reference")
    return _uri_reference(value)


def _media_type(value: Any) -> str:
    if not isinstance(value, str) or not _MEDIA_TYPE.match(value):
        raise ValueError(f"{value!r} is not a media type (RFC 2046)")
    return value


def _timestamp(value: Any) -> datetime:
    if isinstance(value, datetime):  # a program constructing an event
        if value.tzinfo is None:
            raise ValueError("a timestamp needs a time zone, e.g. 2024-01-01T00:00:00Z")
        return value
    if not isinstance(value, str):
        raise ValueError("a timestamp is an RFC 3339 string")
    match = _RFC3339.match(value)
    if match is None:
        raise ValueError(
            f"{value!r} is not an RFC 3339 timestamp, e.g. 2024-01-01T00:00:00Z"
        )
    fraction, offset = match.group(1) or "", match.group(2)
    zone = "+00:00" if offset in ("Z", "z") else offset
    try:  # fromisoformat: at most 6 fraction digits (the rest is below a microsecond)
        parsed = WireDateTime.fromisoformat(
            value[:10] + "T" + value[11:19] + fraction[:7] + zone
        )
    except ValueError as error:  # 30 February and the like
        raise ValueError(f"{value!r} is not a valid date and time") from error
    parsed.text = value
    return parsed


def _normo_timestamp(value: Any) -> datetime:
    if isinstance(value, str) and not _NORMO_TIME.match(value):
        raise ValueError(
            f"{value!r} is not UTC as yyyy-mm-ddThh:mm:ss.ffffffZ (Het Normo ID06)"
        )
    return _timestamp(value)


def _rfc3339(value: datetime) -> str:
    text = getattr(value, "text", None)
    if isinstance(text, str):
        return text
    iso = value.isoformat()
    return iso[:-6] + "Z" if iso.endswith("+00:00") else iso


def _normo_time(value: datetime) -> str:
    text = getattr(value, "text", None)
    if isinstance(text, str) and _NORMO_TIME.match(text):
        return text
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _full_date(value: Any) -> date:
    if isinstance(value, datetime):
        raise ValueError("a date, not a date and time")
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not _FULL_DATE.match(value):
        raise ValueError(f"{value!r} is not an RFC 3339 full-date, e.g. 2024-01-31")
    try:
        return date.fromisoformat(value)
    except ValueError as error:
        raise ValueError(f"{value!r} is not a valid date") from error


def _binary(value: Any) -> bytes:
    if isinstance(value, bytes) and not isinstance(value, WireBytes):
        return value  # a program constructing an event
    text = value.text if isinstance(value, WireBytes) else value
    if not isinstance(text, str) or not _BASE64.match(text):
        raise ValueError("not base64 (RFC 4648 §4) with padding")
    try:
        decoded = WireBytes(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError) as error:
        raise ValueError("not base64 (RFC 4648 §4)") from error
    decoded.text = text
    return decoded


def _binary_text(value: bytes) -> str:
    text = getattr(value, "text", None)
    return text if isinstance(text, str) else base64.b64encode(value).decode("ascii")


def _integral(value: Any) -> Any:
    # JSON Schema and the JSON format: 1.0 is an integer (a number without fraction).
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _integer_sequence(value: str) -> str:
    if not _INTEGER.match(value) or not INT32_MIN <= int(value) <= INT32_MAX:
        raise ValueError("must be a string-encoded signed 32-bit integer")
    return value


def now() -> datetime:
    """The current moment in UTC (the default of ``time``)."""
    return datetime.now(UTC)


def new_id() -> str:
    """A random UUID v4 (the default of ``id``)."""
    return str(uuid.uuid4())


_STRING_SCHEMA = {"type": "string"}
String = Annotated[str, Strict(), AfterValidator(_string)]
NonEmptyString = Annotated[str, Strict(), Field(min_length=1), AfterValidator(_string)]
Int32 = Annotated[
    int, BeforeValidator(_integral), Strict(), Field(ge=INT32_MIN, le=INT32_MAX)
]
JsonInt = Annotated[int, BeforeValidator(_integral), Strict()]
Uri = Annotated[
    str,
    PlainValidator(_uri),
    AfterValidator(_string),
    WithJsonSchema({"type": "string", "format": "uri"}),
]
UriReference = Annotated[
    str,
    PlainValidator(_uri_reference),
    AfterValidator(_string),
    WithJsonSchema({"type": "string", "format": "uri-reference"}),
]
NonEmptyUriReference = Annotated[
    str,
    PlainValidator(_non_empty_uri_reference),
    AfterValidator(_string),
    WithJsonSchema({"type": "string", "format": "uri-reference", "minLength": 1}),
]
MediaType = Annotated[str, PlainValidator(_media_type), WithJsonSchema(_STRING_SCHEMA)]
Base64Binary = Annotated[
    bytes,
    PlainValidator(_binary),
    PlainSerializer(_binary_text, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "contentEncoding": "base64"}),
]
Timestamp = Annotated[
    datetime,
    PlainValidator(_timestamp),
    PlainSerializer(_rfc3339, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
NormoTimestamp = Annotated[
    datetime,
    PlainValidator(_normo_timestamp),
    PlainSerializer(_normo_time, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
# Payload formats (JSON Schema 2020-12 §7.3), text kept as sent.
DateTime = Timestamp
Date = Annotated[
    date,
    PlainValidator(_full_date),
    PlainSerializer(date.isoformat, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date"}),
]
SequenceString = NonEmptyString
IntegerSequence = Annotated[
    str, Strict(), Field(min_length=1), AfterValidator(_integer_sequence)
]


# --- Models ----------------------------------------------------------------------


def _constructing(info: ValidationInfo) -> bool:
    return info.context is _CONSTRUCT


_PYTHON_NAMES: dict[type[BaseModel], dict[str, str]] = {}


def _python_names(model: type[BaseModel]) -> dict[str, str]:
    """Wire name -> Python name of each field of ``model`` (worked out once per class)."""
    names = _PYTHON_NAMES.get(model)
    if names is None:
        names = {
            field.alias or name: name for name, field in model.model_fields.items()
        }
        _PYTHON_NAMES[model] = names
    return names


def _unset_shadowed(model: BaseModel, extra: Mapping[str, Any]) -> None:
    """An undeclared property named like a field's Python name (``meter_id``
    beside the field ``meterId``) is kept as such; pydantic also counts the
    field as set, which would write it back as ``null``: it was not sent.
    (Pydantic passes no input to an "after" validator, and drops ``by_name``
    behind a "wrap" one: a field left ``None`` is taken as not sent.)"""
    for alias, name in _python_names(type(model)).items():
        if alias != name and name in extra and getattr(model, name) is None:
            model.__pydantic_fields_set__.discard(name)


def _finite_extras(extra: Mapping[str, Any]) -> None:
    """Undeclared properties are kept as sent, but only as JSON can send them."""
    stack: list[Any] = list(extra.values())
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError("a number too large for JSON (or NaN, Infinity)")
        if isinstance(item, dict):
            stack.extend(cast("dict[str, Any]", item).values())
        elif isinstance(item, list):
            stack.extend(cast("Sequence[Any]", item))


def _construct(
    model: BaseModel, data: dict[str, Any], defaults: Mapping[str, Any]
) -> None:
    """``model.__init__``: a program constructing it. Each default (by wire or
    Python name; a function gives the value) fills a field given under
    neither name; Python names are accepted."""
    names = _python_names(type(model))
    given = {names.get(key, key) for key in data}
    for name, default in defaults.items():
        if names.get(name, name) not in given:
            data[name] = default() if callable(default) else copy.deepcopy(default)
    model.__pydantic_validator__.validate_python(
        data, self_instance=model, by_name=True, context=_CONSTRUCT
    )


class Payload(BaseModel):
    """Base of every payload model: an open content model unless the schema
    closes it (``extra="forbid"``), the catalog's names on the wire.

    Each generated model may set ``evcat_not_null`` (optional properties the
    schema does not let be ``null``) and ``evcat_defaults`` (the schema's
    ``default``s, by wire name, applied only by a constructing program)."""

    model_config = ConfigDict(
        extra="allow",
        validate_by_alias=True,
        validate_by_name=False,
        protected_namespaces=(),
        allow_inf_nan=False,
    )

    evcat_not_null: ClassVar[frozenset[str]] = frozenset()
    evcat_defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, /, **data: Any) -> None:
        """A program constructs a payload: Python names accepted, defaults applied."""
        _construct(self, data, self.evcat_defaults)

    # Marks this __init__ as pydantic's own: model_validate (the wire) does not call it.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @model_validator(mode="before")
    @classmethod
    def _wire_nulls(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, Mapping) and not _constructing(info):
            for name in cls.evcat_not_null:
                if name in value and value[name] is None:
                    raise ValueError(f"{name!r} may be left out, but not null")
        # As it came; pyright's isinstance narrowing left it Mapping[Unknown, Unknown].
        return value  # pyright: ignore[reportUnknownVariableType]

    @model_validator(mode="after")
    def _wire_shadowed(self, info: ValidationInfo) -> Payload:
        if self.__pydantic_extra__:
            _finite_extras(self.__pydantic_extra__)
            if not _constructing(info):
                _unset_shadowed(self, self.__pydantic_extra__)
        return self


class CloudEvent(BaseModel):
    """A structured-mode CloudEvent (JSON format). Each generated event class
    fixes ``type``, ``dataversion``, the declared extensions and ``data``."""

    model_config = ConfigDict(
        extra="allow",
        validate_by_alias=True,
        validate_by_name=False,
        validate_assignment=True,
        protected_namespaces=(),
        allow_inf_nan=False,
    )

    # Filled in by each generated event class.
    event_type: ClassVar[str] = ""
    event_dataversion: ClassVar[str | None] = None
    has_data: ClassVar[bool] = False
    # Declared extension attributes on the wire -> CloudEvents type (binary modes).
    attribute_types: ClassVar[dict[str, str]] = {}
    # Attributes every event of the class carries on the wire.
    wire_required: ClassVar[frozenset[str]] = frozenset(
        {"specversion", "id", "source", "type"}
    )
    # Python name -> value (or a function giving it) a constructing program gets.
    construct_defaults: ClassVar[dict[str, Any]] = {}

    specversion: Literal["1.0"] = "1.0"
    id: NonEmptyString = Field(default_factory=new_id)
    source: NonEmptyUriReference
    type: str
    time: datetime | None = None
    subject: NonEmptyString | None = None
    datacontenttype: MediaType | None = None
    dataschema: Uri | None = None
    data: Any = None

    def __init__(self, /, **data: Any) -> None:
        """A program constructs an event: defaults applied, Python names accepted.
        A deprecated event version (``@deprecated(message, category=None)``:
        marked for type checkers only, so parsing one never warns) warns here."""
        deprecation = getattr(type(self), "__deprecated__", None)
        if deprecation is not None:
            warnings.warn(str(deprecation), DeprecationWarning, stacklevel=2)
        _construct(self, data, {"specversion": "1.0", **self.construct_defaults})

    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @model_validator(mode="before")
    @classmethod
    def _read_wire(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, Mapping) or _constructing(info):
            # As it came (see _wire_nulls).
            return value  # pyright: ignore[reportUnknownVariableType]
        fields = _python_names(cls)
        # JSON format §2.4: null for an optional attribute means unset; JSON
        # null data is data, and a notification has none.
        wire: dict[Any, Any] = {}
        undeclared: list[object] = []
        for name, item in cast("Mapping[object, Any]", value).items():
            if name in fields:
                if item is not None or (name == "data" and cls.has_data):
                    wire[name] = item
            elif name == "data_base64":
                if item is not None:
                    if not cls.has_data:
                        raise ValueError(
                            f"{cls.event_type!r} is a notification without data"
                        )
                    raise ValueError("this event's data is JSON: send it as 'data'")
            elif not isinstance(name, str) or not _ATTRIBUTE_NAME.match(name):
                # CloudEvents 1.0.2 §2: names of attributes, set or null
                raise ValueError(
                    f"attribute name {name!r} must consist of a-z and 0-9 only"
                )
            elif item is not None:
                undeclared.append(name)
                wire[name] = item
        if "data" in wire and not cls.has_data:
            raise ValueError(f"{cls.event_type!r} is a notification without data")
        if not cls.wire_required <= wire.keys():
            missing = sorted(cls.wire_required - wire.keys())[0]
            raise ValueError(f"the required attribute {missing!r} is missing")
        for name in undeclared:
            # An undeclared extension (contract §5): String, Boolean or Integer.
            item = wire[name]
            if isinstance(item, str):
                _string(item)
                continue
            if isinstance(item, bool):
                continue
            item = _integral(item)
            if not isinstance(item, int):
                raise ValueError(
                    f"extension attribute {name!r} holds a value no CloudEvents type can hold"
                )
            if not INT32_MIN <= item <= INT32_MAX:
                raise ValueError(
                    f"extension attribute {name!r} is outside the signed 32-bit range"
                )
            wire[name] = item
        return wire

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The JSON Schema of the wire (OpenAPI for FastAPI): the attributes the
        class gives a constructing program are still required on the wire."""
        schema = handler.resolve_ref_schema(handler(core_schema))
        required = list(schema.get("required", []))
        required += sorted(cls.wire_required - set(required))
        schema["required"] = required
        return schema

    def to_dict(self) -> dict[str, Any]:
        """The structured-mode JSON form as a dict: what was set, under the
        catalog's names; attributes set to None are left out (unset)."""
        wire = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return {
            name: value
            for name, value in wire.items()
            if value is not None or (name == "data" and self.has_data)
        }

    def to_json(self) -> bytes:
        """The structured-mode JSON form (what ``to_http`` sends)."""
        return json.dumps(
            self.to_dict(), ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8")


Events = Mapping[tuple[str, str | None], type[CloudEvent]]


_BY_TYPE: dict[int, tuple[Events, dict[str, dict[str | None, type[CloudEvent]]]]] = {}


def _by_type(events: Events) -> dict[str, dict[str | None, type[CloudEvent]]]:
    """The event classes by type, then dataversion (worked out once per registry)."""
    known = _BY_TYPE.get(id(events))
    if known is None or known[0] is not events:
        index: dict[str, dict[str | None, type[CloudEvent]]] = {}
        for (event_type, version), cls in events.items():
            index.setdefault(event_type, {})[version] = cls
        known = (events, index)
        _BY_TYPE[id(events)] = known
    return known[1]


def _event_class(event: Mapping[str, Any], events: Events) -> type[CloudEvent]:
    """Contract §5: by (type, dataversion); without dataversion only when the type has one."""
    event_type = event.get("type")
    if not isinstance(event_type, str) or not event_type:
        raise EventError(
            "the required attribute 'type' is missing or not a non-empty string"
        )
    candidates = _by_type(events).get(event_type, {})
    if not candidates:
        known_types = ", ".join(sorted({t for t, _ in events}))
        raise EventError(f"unknown event type {event_type!r}; known: {known_types}")
    dataversion = event.get("dataversion")
    if dataversion is not None:
        if not isinstance(dataversion, str) or dataversion not in candidates:
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


def _validate(cls: type[CloudEvent], event: Mapping[str, Any]) -> CloudEvent:
    try:
        return cls.model_validate(event, strict=True)
    except RecursionError as error:
        raise EventError("the event is nested too deeply") from error


def parse_event(raw: str | bytes | Mapping[str, Any], events: Events) -> CloudEvent:
    """A structured-mode event (JSON text or a mapping) as the matching event class.

    Raises ``EventError`` for JSON that is not an event of this catalog and
    pydantic's ``ValidationError`` (naming the catalog's field names) for
    invalid content.
    """
    if isinstance(raw, (str, bytes, bytearray)):
        event = read_json(raw)
    else:
        event = raw
        check_value(event)
    if not isinstance(event, Mapping):
        raise EventError("an event must be a JSON object")
    mapping = cast("Mapping[str, Any]", event)
    return _validate(_event_class(mapping, events), mapping)


def parse_batch(raw: str | bytes | list[Any], events: Events) -> list[CloudEvent]:
    """A JSON batch (``application/cloudevents-batch+json``): an array of events."""
    batch = read_json(raw) if isinstance(raw, (str, bytes, bytearray)) else raw
    if not isinstance(batch, list):
        raise EventError("a batch must be a JSON array")
    return [parse_event(item, events) for item in cast("Sequence[Any]", batch)]


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


def _essence(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


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
            types.update(_event_class(values, events).attribute_types)
        except EventError:
            pass  # parse_event gives the verdict on the same mapping
    event: dict[str, Any] = {}
    for name, value in values.items():
        kind = types.get(name)
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise EventError(f"attribute {name!r} holds a lone surrogate")
            if kind == "Integer" and len(value) <= 20 and _INTEGER.match(value):
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
        media = _essence(str(content_type or event.get("datacontenttype") or ""))
        subtype = media.partition("/")[2]
        if not media or subtype == "json" or subtype.endswith("+json"):
            event["data"] = read(bytes(payload))
        else:
            event["data_base64"] = base64.b64encode(payload).decode("ascii")
    return event


def from_http(headers: Headers, body: bytes | str, events: Events) -> CloudEvent:
    """The event in an HTTP message, structured or binary mode."""
    lowered = _lower(headers)
    content_type = lowered.get("content-type", "")
    raw = body.encode("utf-8") if isinstance(body, str) else body
    if _essence(content_type) == STRUCTURED_CONTENT_TYPE:
        return parse_event(raw, events)
    if _essence(content_type) == BATCH_CONTENT_TYPE:
        raise EventError("this is a batch: use from_http_batch")
    attributes = {
        key[3:]: value for key, value in lowered.items() if key.startswith("ce-")
    }
    event = structured_from_binary(
        attributes, content_type or None, raw, events, percent_encoded=True
    )
    # parse_event less its check_value: structured_from_binary checked the
    # attributes' text, and read_json the data.
    return _validate(_event_class(event, events), event)


def to_http_batch(events: Iterable[CloudEvent]) -> tuple[dict[str, str], bytes]:
    """``(headers, body)`` for a batch (``application/cloudevents-batch+json``)."""
    body = "[" + ",".join(event.to_json().decode("utf-8") for event in events) + "]"
    return {"content-type": f"{BATCH_CONTENT_TYPE}; charset=utf-8"}, body.encode()


def from_http_batch(
    headers: Headers, body: bytes | str, events: Events
) -> list[CloudEvent]:
    content_type = _lower(headers).get("content-type", "")
    if _essence(content_type) != BATCH_CONTENT_TYPE:
        raise EventError(
            f"a batch has content type {BATCH_CONTENT_TYPE}, not {content_type!r}"
        )
    return parse_batch(body, events)
