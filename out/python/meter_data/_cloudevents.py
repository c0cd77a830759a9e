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
import threading
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, ClassVar, Literal, NamedTuple, cast
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
from pydantic_core import CoreConfig, CoreSchema, SchemaValidator, from_json

from ._reading import MAX_DEPTH, deep_pointer, nesting_problem, too_deep

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
    numbers) and nesting deeper than ``MAX_DEPTH`` (``_reading``: the same
    verdict as ``evcat validate``'s, whatever the parser's own limit). Parsed
    by pydantic-core's JSON reader (three times the standard library's speed
    here). A number too large for a float (1e400) reads as infinity, which
    the models refuse (``allow_inf_nan=False``, ``_finite_extras``)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    try:
        value = from_json(data, allow_inf_nan=False)
    except ValueError as error:
        deep = too_deep(data)
        if deep is not None:
            raise EventError(nesting_problem(deep)) from None
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
            raise EventError(nesting_problem(deep_pointer(value) or ()))
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
    if _CANONICAL_TIMESTAMP.match(value):  # as the fast path reads it (same value)
        return _wire_datetime(value)
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
    if isinstance(value, str) and _CANONICAL_NORMO_TIME.match(value):
        return _wire_datetime(value)  # as the fast path reads it (same value)
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


# --- The fast path: one pydantic-core call per event -------------------------------
#
# ``parse_event`` first hands the JSON bytes to one pydantic-core validator of the
# whole registry: a tagged union on ``type`` (then ``dataversion``) of the event
# classes' own schemas, in which each check of this module written in Python is
# replaced by its equivalent in Rust (a strict string with a regular expression of
# Rust's regex crate, a strict int, a pattern then pydantic's datetime; timestamp
# text a datetime cannot give back still goes to ``_timestamp``, which keeps it).
# What it accepts, the careful path (the Python checks above) accepts with the
# same result; what it refuses or leaves alone (explicit nulls of optional
# attributes, integral floats, undeclared names, keys named like a field's Python
# name, nesting past its bound) goes to the careful path, which gives the verdict
# and the error. tests/test_fast_path.py and the differential property test
# (tests/test_one_verdict_property.py) hold both paths to one result.

# Rust patterns (``$`` is the end of the text there, as ``\Z`` is in Python).
_RUST_STRING = (
    "^[^\\u0000-\\u001f\\u007f-\\u009f\\ufdd0-\\ufdef\\ufffe\\uffff"
    + "".join(chr(p * 0x10000 + low) for p in range(1, 17) for low in (0xFFFE, 0xFFFF))
    + "]*$"
)
_RUST_DATE = (
    rf"{_YEAR}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
)
# Timestamps whose text the serializer gives back from the datetime alone
# (``_rfc3339``: isoformat, six fraction digits unless zero, Z for UTC).
_RUST_TIMESTAMP = (
    rf"^{_RUST_DATE}(?:\.(?:[1-9][0-9]{{5}}|0[1-9][0-9]{{4}}|00[1-9][0-9]{{3}}"
    r"|000[1-9][0-9]{2}|0000[1-9][0-9]|00000[1-9]))?"
    r"(?:Z|[+-](?:0[0-9]:(?:0[1-9]|[1-5][0-9])|(?:0[1-9]|1[0-9]|2[0-3]):[0-5][0-9]))$"
)
# ``_normo_time``: strftime, which writes a year before 1000 with fewer digits.
_RUST_NORMO_TIME = r"^[1-9][0-9]{3}" + _RUST_DATE.removeprefix(_YEAR) + r"\.[0-9]{6}Z$"
_RUST_FULL_DATE = rf"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}}$"
_RUST_SEQUENCE = r"^[+-]?[0-9]{1,9}$"  # within the int32 range; longer: careful path


# The careful path reads what the fast path reads into the same values.
_CANONICAL_TIMESTAMP = re.compile(_RUST_TIMESTAMP.removesuffix("$") + r"\Z")
_CANONICAL_NORMO_TIME = re.compile(_RUST_NORMO_TIME.removesuffix("$") + r"\Z")
_DATETIME = SchemaValidator({"type": "datetime"})


def _wire_datetime(text: str) -> datetime:
    """Timestamp text the serializer gives back from the value alone, read as
    pydantic reads it (the fast path's ``datetime`` step)."""
    try:
        parsed: datetime = _DATETIME.validate_python(text)
    except ValidationError as error:  # 30 February and the like
        raise ValueError(f"{text!r} is not a valid date and time") from error
    return parsed


def _rust(pattern: re.Pattern[str]) -> str:
    return pattern.pattern.removesuffix(r"\Z") + "$"


def _str(pattern: str, min_length: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "str", "strict": True, "pattern": pattern}
    if min_length is not None:
        schema["min_length"] = min_length
    return schema


def _then(pattern: str, kind: str) -> dict[str, Any]:
    """Text matching ``pattern``, then read as a ``kind`` (date or datetime)."""
    return {
        "type": "chain",
        "steps": [_str(pattern), {"type": kind, "strict": False}],
    }


# This module's plain validators -> the same check in Rust.
_PLAIN: dict[str, dict[str, Any]] = {
    "_uri": _str(_rust(_URI)),
    "_uri_reference": _str(_rust(_URI_REFERENCE)),
    "_non_empty_uri_reference": _str(_rust(_URI_REFERENCE), 1),
    "_media_type": _str(_rust(_MEDIA_TYPE)),
    "_normo_timestamp": _then(_RUST_NORMO_TIME, "datetime"),
    "_full_date": _then(_RUST_FULL_DATE, "date"),
}
_URI_PATTERNS = {_rust(_URI), _rust(_URI_REFERENCE)}  # printable ASCII only
_NEVER: dict[str, Any] = {"type": "int", "strict": True, "gt": 0, "lt": 0}
_INT32 = {"type": "int", "strict": True, "ge": INT32_MIN, "le": INT32_MAX}
# An undeclared extension attribute (contract §5): String, Boolean or Integer.
_EXTENSION = {
    "type": "union",
    "choices": [
        _str(_RUST_STRING),
        {"type": "bool", "strict": True},
        _INT32,
    ],
}
_JSON_LEVELS = 16  # an undeclared payload property nested deeper: the careful path


def _json_value(levels: int) -> dict[str, Any]:
    """What an open payload keeps: JSON, finite numbers only, at most ``levels``
    arrays or objects deep (unrolled: no recursion, so the depth is known)."""
    choices: list[Any] = [
        {"type": "none"},
        {"type": "bool", "strict": True},
        {"type": "int", "strict": True},
        {"type": "float", "strict": True, "allow_inf_nan": False},
        {"type": "str", "strict": True},
    ]
    if levels > 0:
        inner = {"type": "definition-ref", "schema_ref": f"{__name__}.json{levels - 1}"}
        choices.append({"type": "list", "items_schema": inner})
        choices.append(
            {"type": "dict", "keys_schema": {"type": "str"}, "values_schema": inner}
        )
    return {"type": "union", "choices": choices, "ref": f"{__name__}.json{levels}"}


def _constraints() -> dict[Any, str]:
    """pydantic's own functions for ge/le/... where it cannot put them in a
    number schema (behind a validator), by constraint (private, so guarded:
    without them those checks stay in Python, slower but the same)."""
    try:
        from pydantic._internal import _validators
    except ImportError:
        return {}

    names = {
        "ge": "greater_than_or_equal",
        "gt": "greater_than",
        "le": "less_than_or_equal",
        "lt": "less_than",
        "multiple_of": "multiple_of",
    }
    return {
        getattr(_validators, f"{name}_validator"): key
        for key, name in names.items()
        if hasattr(_validators, f"{name}_validator")
    }


_CONSTRAINTS = _constraints()


def _map(node: dict[str, Any], function: Callable[[Any], Any]) -> dict[str, Any]:
    """``node`` with ``function`` applied to each schema in it (one level down)."""
    node = dict(node)
    for key in _CHILDREN:
        if isinstance(node.get(key), dict):
            node[key] = function(node[key])
    if isinstance(node.get("steps"), list):
        node["steps"] = [function(step) for step in node["steps"]]
    if node["type"] == "tagged-union":
        tagged: dict[Any, Any] = node["choices"]
        node["choices"] = {tag: function(choice) for tag, choice in tagged.items()}
    elif node["type"] == "union":
        listed: list[Any] = node["choices"]
        node["choices"] = [_choice(choice, function) for choice in listed]
    if node["type"] == "model-fields":
        node["fields"] = {
            name: {**field, "schema": function(field["schema"])}
            for name, field in node["fields"].items()
        }
    return node


def _choice(choice: Any, function: Callable[[Any], Any]) -> Any:
    """A union's choice: a schema, or a (schema, label) pair."""
    if isinstance(choice, tuple):
        schema, label = cast(tuple[Any, Any], choice)
        return (function(schema), label)
    return function(choice)


_CHILDREN = (
    "schema",
    "items_schema",
    "keys_schema",
    "values_schema",
    "extras_schema",
    "extras_keys_schema",
    "lax_schema",
    "strict_schema",
)
_NESTS = ("model-fields", "list", "dict", "set", "frozenset", "tuple", "typed-dict")


class _NoFastPath(Exception):
    """A schema the fast path does not know how to read."""


def _ours(function: Any) -> str | None:
    """The name of one of this module's functions (methods included), else None."""
    function = getattr(function, "__func__", function)
    if getattr(function, "__module__", None) != __name__:
        return None
    name = getattr(function, "__name__", None)
    return name if isinstance(name, str) else None


def _optional(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its ``nullable`` (inside a ``default`` too)."""
    if schema["type"] == "default":
        return {**schema, "schema": _optional(schema["schema"])}
    return schema["schema"] if schema["type"] == "nullable" else schema


class _Fast:
    """The fast schema of a registry (see above)."""

    def __init__(self) -> None:
        self.definitions: dict[str, Any] = {}
        self.classes: list[type[BaseModel]] = []
        self.depths: dict[str, float] = {}
        self.unbounded = False  # a function of Python reads a value: any depth
        self.pending: list[tuple[str, int]] = []
        self.shadows: set[str] = set()

    def registry(self, events: Events) -> Any:
        choices: dict[str, Any] = {}
        for event_type, versions in _by_type(events).items():
            if len(versions) == 1:
                choices[event_type] = self.schema(
                    next(iter(versions.values())).__pydantic_core_schema__
                )
            else:  # by dataversion; without one: the careful path's error
                choices[event_type] = {
                    "type": "tagged-union",
                    "discriminator": "dataversion",
                    "choices": {
                        version: self.schema(cls.__pydantic_core_schema__)
                        for version, cls in versions.items()
                        if version is not None
                    },
                }
        union = self.bounded(
            {"type": "tagged-union", "discriminator": "type", "choices": choices},
            MAX_DEPTH,
        )
        while self.pending:
            ref, budget = self.pending.pop()
            bounded = self.bounded(self.definitions[ref], budget)
            self.definitions[f"{ref}@{budget}"] = {**bounded, "ref": f"{ref}@{budget}"}
        definitions = list(self.definitions.values())
        return {"type": "definitions", "schema": union, "definitions": definitions}

    def depth(self, node: Any, active: frozenset[str] = frozenset()) -> float:
        """How many arrays and objects deep JSON this schema accepts can be
        (infinity: a recursive model; a value a function of Python reads)."""
        kind = node["type"]
        if kind == "definition-ref":
            ref = node["schema_ref"]
            if ref in active:
                return math.inf
            if ref not in self.depths:
                self.depths[ref] = self.depth(self.definitions[ref], active | {ref})
            return self.depths[ref]
        children: list[Any] = []
        _map(node, children.append)
        deepest = max((self.depth(child, active) for child in children), default=0)
        return deepest + 1 if kind in _NESTS else deepest

    def bounded(self, node: dict[str, Any], budget: int) -> dict[str, Any]:
        """``node`` accepting JSON at most ``budget`` arrays and objects deep
        (``MAX_DEPTH``): a recursive model unrolled, one copy per depth left;
        deeper: the careful path (which refuses it)."""
        kind = node["type"]
        if kind == "definition-ref":
            ref = node["schema_ref"]
            depth = self.depth(node)
            if depth <= budget:
                return node
            if ref.startswith(f"{__name__}.json"):
                return {**node, "schema_ref": f"{__name__}.json{budget}"}
            if depth < math.inf:
                return _NEVER
            copy = f"{ref}@{budget}"  # compiled by registry (no deep recursion here)
            if copy not in self.definitions:
                self.definitions[copy] = None
                self.pending.append((ref, budget))
            return {"type": "definition-ref", "schema_ref": copy}
        if kind in _NESTS:
            if budget == 0:
                return _NEVER
            return _map(node, lambda child: self.bounded(child, budget - 1))
        return _map(node, lambda child: self.bounded(child, budget))

    def json(self) -> dict[str, Any]:
        for levels in range(_JSON_LEVELS + 1):
            self.schema(_json_value(levels))
        return {
            "type": "definition-ref",
            "schema_ref": f"{__name__}.json{_JSON_LEVELS}",
        }

    def schema(self, node: Any) -> dict[str, Any]:
        ref = node.get("ref")
        if ref is not None:  # every definition once, at the top
            if ref not in self.definitions:
                self.definitions[ref] = None
                self.definitions[ref] = {**self.node(node), "ref": ref}
            return {"type": "definition-ref", "schema_ref": ref}
        return self.node(node)

    def node(self, node: dict[str, Any]) -> dict[str, Any]:
        kind = node["type"]
        node = {k: v for k, v in node.items() if k not in ("ref", "serialization")}
        name = None
        if kind == "definitions":
            for definition in node["definitions"]:
                self.schema(definition)
            return self.schema(node["schema"])
        if kind == "model":
            return self.model(node)
        if kind == "any":  # from JSON: JSON; bounded, see depth
            return self.json()
        if kind.startswith("function-"):
            name = _ours(node["function"]["function"])
            if kind == "function-plain" and name in _PLAIN:
                return dict(_PLAIN[name])
            if kind == "function-plain" and name == "_timestamp":
                # Text the datetime cannot give back (2024-01-01T00:00:00.000000Z):
                # this module's check, which keeps it.
                return {
                    "type": "union",
                    "mode": "left_to_right",
                    "choices": [_then(_RUST_TIMESTAMP, "datetime"), node],
                }
            if kind == "function-after" and name == "_string":
                inner = self.schema(node["schema"])
                if inner["type"] == "str" and "pattern" not in inner:
                    return {**inner, "pattern": _RUST_STRING}
                if inner["type"] == "str" and inner["pattern"] in _URI_PATTERNS:
                    return inner  # a URI is printable ASCII
                return {**node, "schema": inner}
            if kind == "function-after" and name == "_integer_sequence":
                inner = self.schema(node["schema"])
                if inner["type"] == "str" and "pattern" not in inner:
                    return {**inner, "pattern": _RUST_SEQUENCE}
                return {**node, "schema": inner}
            bound = _CONSTRAINTS.get(
                getattr(node["function"]["function"], "func", None)
            )
            if kind == "function-after" and bound is not None:
                # pydantic's own ge/le/... behind a validator: in the number schema
                inner = self.schema(node["schema"])
                keywords = node["function"]["function"].keywords
                if inner["type"] in ("int", "float") and set(keywords) == {bound}:
                    return {**inner, bound: keywords[bound]}
                return {**node, "schema": inner}
            if kind == "function-before" and name == "_integral":
                return self.schema(node["schema"])  # 1.0: the careful path
            if kind == "function-after" and name == "_wire_shadowed":
                return self.schema(node["schema"])  # see model_fields
        if kind in ("function-plain", "function-wrap") and name is None:
            self.unbounded = True  # someone else's validator reads the value
        return _map(node, self.schema)

    def model(self, node: dict[str, Any]) -> dict[str, Any]:
        cls, inner = node["cls"], node["schema"]
        self.classes.append(cls)
        while inner["type"] == "function-before" and _ours(
            inner["function"]["function"]
        ) in ("_read_wire", "_wire_nulls"):
            inner = inner["schema"]  # their checks: see model_fields
        if inner["type"] != "model-fields" or node.get("post_init"):
            raise _NoFastPath(cls.__name__)
        config = {**node.get("config", {}), "strict": True}
        extra = inner.get("extra_behavior", config.get("extra_fields_behavior"))
        fields = self.model_fields(cls, inner, extra == "allow")
        return {**node, "config": config, "schema": fields}

    def model_fields(
        self, cls: type[BaseModel], node: dict[str, Any], extra: bool
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        shadows: set[str] = set()
        for name, field in node["fields"].items():
            wire = field.get("validation_alias", name)
            if not isinstance(wire, str):
                raise _NoFastPath(f"{cls.__name__}.{name}")
            if wire != name:
                shadows.add(name)
            schema = self.schema(field["schema"])
            if issubclass(cls, CloudEvent):
                # _read_wire: the wire's required attributes; a null attribute
                # (unset) or data beside a notification: the careful path.
                if wire in cls.wire_required and schema["type"] == "default":
                    schema = schema["schema"]
                if wire == "data" and not cls.has_data:
                    schema = {"type": "default", "default": None, "schema": _NEVER}
                elif wire != "data":
                    schema = _optional(schema)
            elif issubclass(cls, Payload) and wire in cls.evcat_not_null:
                schema = _optional(schema)  # _wire_nulls
            fields[name] = {**field, "schema": schema}
        fast: dict[str, Any] = {**node, "fields": fields}
        # pydantic-core reads no extras_keys_schema from JSON (2.46), and drops a
        # key named like a field's Python name (``meter_id`` beside ``meterId``,
        # an undeclared property the careful path keeps): _parse_fast checks
        # undeclared attribute names, and sends text naming one to the careful path.
        self.shadows |= shadows
        if not extra:
            pass
        elif issubclass(cls, CloudEvent):
            fast["extras_schema"] = _EXTENSION
        elif issubclass(cls, Payload):
            fast["extras_schema"] = self.json()
        return fast


class _FastPath(NamedTuple):
    """What ``_parse_fast`` needs of a registry."""

    validator: SchemaValidator | None
    bounded: bool  # what it accepts is at most MAX_DEPTH deep
    shadows: tuple[bytes, ...]  # "name" of each field with another wire name...
    underscored: frozenset[bytes]  # ...and name of those with a "_" in it


_FAST: dict[int, tuple[Events, _FastPath]] = {}
_FAST_BY_CONTENT: dict[frozenset[Any], _FastPath] = {}
_FAST_KEPT = 64
_ESCAPED_NAME_CHAR = re.compile(rb"\\u00[2-7]")  # a JSON escape of [ -~]
_FAST_LOCK = threading.Lock()


def _fast_validator(events: Events) -> _FastPath:
    """The fast path of a registry: compiled once for its content, found by its
    identity (``parse_event``'s lookup); validator None if there is none."""
    known = _FAST.get(id(events))
    if known is None or known[0] is not events:
        try:
            content: frozenset[Any] | None = frozenset(events.items())
        except TypeError:  # a registry of unhashable things: compiled each time
            content = None
        path = _FAST_BY_CONTENT.get(content) if content is not None else None
        if path is None:
            path = _compile(events)
            if content is not None:
                if len(_FAST_BY_CONTENT) >= _FAST_KEPT:
                    _FAST_BY_CONTENT.clear()
                _FAST_BY_CONTENT[content] = path
        if len(_FAST) >= _FAST_KEPT:  # registries made on the fly: bounded
            _FAST.clear()
        known = (events, path)
        _FAST[id(events)] = known
    return known[1]


def _compile(events: Events) -> _FastPath:
    validator: SchemaValidator | None = None
    fast = _Fast()
    try:
        schema = fast.registry(events)
    except _NoFastPath:
        schema = None
    if schema is not None:
        # pydantic-core reuses a complete model's own validator for a "model"
        # schema of its class (its Python checks included): say it is not one
        # while the fast schema is compiled.
        with _FAST_LOCK:
            complete = {
                cls: cls.__dict__.get("__pydantic_complete__") for cls in fast.classes
            }
            try:
                for cls in complete:
                    cls.__pydantic_complete__ = False
                validator = SchemaValidator(schema, CoreConfig(strict=True))
            finally:
                for cls, value in complete.items():
                    if value is None:
                        delattr(cls, "__pydantic_complete__")
                    else:
                        cls.__pydantic_complete__ = value
    names = [name.encode() for name in sorted(fast.shadows)]
    return _FastPath(
        validator,
        not fast.unbounded,
        tuple(b'"' + name + b'"' for name in names if b"_" not in name),
        frozenset(name for name in names if b"_" in name),
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
    if isinstance(raw, (bytes, bytearray, str)):
        data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
        event = _parse_fast(data, events)
        return _parse_careful(data, events) if event is None else event
    return _parse_careful(raw, events)


def _parse_fast(data: bytes | bytearray, events: Events) -> CloudEvent | None:
    """``parse_event`` in one pydantic-core call; None: left to the careful path."""
    known = _FAST.get(id(events))
    fast = known[1] if known and known[0] is events else _fast_validator(events)
    validator, bounded, shadows, underscored = fast
    if validator is None:
        return None
    if not bounded and data.count(b"[") + data.count(b"{") > MAX_DEPTH:
        return None
    # perhaps a key named like a field's Python name (see _Fast.model_fields)
    if data.find(b"\\") >= 0 and _ESCAPED_NAME_CHAR.search(data):  # find: memchr
        return None
    if shadows and any(name in data for name in shadows):
        return None
    if underscored and data.find(b"_") >= 0 and _names_one(data, underscored):
        return None
    try:
        event: CloudEvent = validator.validate_json(data)
    except ValidationError:
        return None  # the careful path says why (or accepts what it was left)
    if event.__pydantic_extra__ and not _undeclared_ok(event):
        return None
    return event


def _names_one(data: bytes | bytearray, names: frozenset[bytes]) -> bool:
    """Whether a JSON string in ``data`` around a "_" is one of ``names`` (which
    hold a "_"): one byte search per "_" rather than a search per name."""
    at = data.find(b"_")
    while at >= 0:
        end = data.find(b'"', at)
        if end < 0 or data[data.rfind(b'"', 0, at) + 1 : end] in names:
            return True
        at = data.find(b"_", end)
    return False


def _undeclared_ok(event: CloudEvent) -> bool:
    """Undeclared attributes the fast path may keep (_read_wire): names of
    a-z and 0-9, none a field's Python name, ``data`` or ``dataversion``."""
    fields = type(event).__pydantic_fields__
    return not any(
        name in fields
        or name in ("data", "dataversion")
        or not _ATTRIBUTE_NAME.match(name)
        for name in event.__pydantic_extra__ or ()
    )


def _parse_careful(
    raw: bytes | bytearray | Mapping[str, Any], events: Events
) -> CloudEvent:
    """``parse_event`` by the Python checks alone: what the fast path leaves here."""
    if isinstance(raw, (bytes, bytearray)):
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
