"""The base models of generated events and payloads.

Part of evcat's runtime (``generator/runtime/``): copied verbatim into every
generated package. Reading fills in nothing: ``model_validate`` is the wire
(the catalog's names only, JSON types as sent, every required attribute
present); defaults and Python attribute names apply only when a program
constructs an event (``__init__``). ``event_class`` picks the class of a JSON
event by (type, dataversion), contract §5.
"""

from __future__ import annotations

import copy
import json
import math
import warnings
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from ._reading import EventError
from ._uritemplate import TemplateError, expand, is_template, matches
from ._values import (
    ATTRIBUTE_NAME,
    CONSTRUCT,
    INT32_MAX,
    INT32_MIN,
    MediaType,
    NonEmptyString,
    NonEmptyUriReference,
    Uri,
    checked_string,
    integral,
    new_id,
)

__all__ = [
    "CloudEvent",
    "Events",
    "Payload",
    "by_type",
    "event_class",
    "not_null",
    "source_check",
]

# --- Models ----------------------------------------------------------------------


def _constructing(info: ValidationInfo) -> bool:
    return info.context is CONSTRUCT


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


class _Shadowing:
    """The value of an undeclared property named like a field's Python name
    (``meter_id`` beside the field ``meterId``), marked on its way through
    validation with whether the field itself was sent: pydantic files both
    under the one name in the set fields, so that a field sent as ``null``
    and one not sent could not be told apart (issue 26). Shown as the value
    (in pydantic's error messages)."""

    __slots__ = ("field_sent", "value")

    def __init__(self, value: Any, field_sent: bool) -> None:
        self.value = value
        self.field_sent = field_sent

    def __repr__(self) -> str:
        return repr(self.value)


def _mark_shadowing(
    cls: type[BaseModel], value: Mapping[str, Any]
) -> Mapping[str, Any]:
    """``value`` with each property named like a field's Python name (not its
    wire name) marked; ``value`` itself when there is none."""
    shadowing = {
        name: alias
        for alias, name in _python_names(cls).items()
        if alias != name and name in value
    }
    if not shadowing:
        return value
    return {
        key: _Shadowing(item, shadowing[key] in value) if key in shadowing else item
        for key, item in value.items()
    }


def _unmark_shadowing(model: BaseModel, extra: dict[str, Any]) -> None:
    for key, item in extra.items():
        if isinstance(item, _Shadowing):
            extra[key] = item.value
            if not item.field_sent:
                model.__pydantic_fields_set__.discard(key)


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
        data, self_instance=model, by_name=True, context=CONSTRUCT
    )


_NOT_NULL: dict[type[BaseModel], frozenset[str]] = {}


def not_null(cls: type[BaseModel]) -> frozenset[str]:
    """The optional properties of payload model ``cls`` that may not be null:
    its own ``evcat_not_null`` and those of the models it extends (``allOf``
    of a shared schema is a subclass, which sets its own)."""
    names = _NOT_NULL.get(cls)
    if names is None:
        found: set[str] = set()
        for base in cls.__mro__:
            own: frozenset[str] = getattr(base, "evcat_not_null", frozenset[str]())
            found.update(own)
        names = _NOT_NULL[cls] = frozenset(found)
    return names


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
            for name in not_null(cls):
                if name in value and value[name] is None:
                    raise ValueError(f"{name!r} may be left out, but not null")
            if cls.model_config.get("extra") == "allow":
                return _mark_shadowing(cls, cast("Mapping[str, Any]", value))
        # As it came; pyright's isinstance narrowing left it Mapping[Unknown, Unknown].
        return value  # pyright: ignore[reportUnknownVariableType]

    @model_validator(mode="after")
    def _wire_shadowed(self, info: ValidationInfo) -> Payload:
        if self.__pydantic_extra__:
            if not _constructing(info):
                _unmark_shadowing(self, self.__pydantic_extra__)
            _finite_extras(self.__pydantic_extra__)
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
    # The catalog's source where the class holds ``source`` to it (a level-1
    # URI template, or a fixed value when CE-SOURCE-MATCH is an error:
    # catalog-format.md §9), with the rule's setting for the event type:
    # "error", every reader refuses a source that does not match; "warning",
    # readers accept it and a constructing program is held to a template;
    # "off", nobody checks it. None: nothing to check (``source_check``).
    catalog_source: ClassVar[str | None] = None
    source_match: ClassVar[str] = "warning"
    # The envelope object as event.schema.json has it (its properties but
    # ``data``, ``propertyNames``, ``additionalProperties``): what OpenAPI sees.
    wire_schema: ClassVar[dict[str, Any]] = {}

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
            elif not isinstance(name, str) or not ATTRIBUTE_NAME.match(name):
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
            missing = min(cls.wire_required - wire.keys())
            raise ValueError(f"the required attribute {missing!r} is missing")
        for name in undeclared:
            # An undeclared extension (contract §5): String, Boolean or Integer.
            item = wire[name]
            if isinstance(item, str):
                checked_string(item)
                continue
            if isinstance(item, bool):
                continue
            item = integral(item)
            if not isinstance(item, int):
                # ValueError, not TypeError: pydantic reports it as a validation error.
                raise ValueError(  # noqa: TRY004
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
        # Each attribute constrained as event.schema.json constrains it (the
        # time form, URI and media-type grammars, undeclared extensions): a
        # body the schema allows is one the class accepts. Title, description
        # and default stay pydantic's.
        wire = copy.deepcopy(cls.wire_schema)
        properties = schema.setdefault("properties", {})
        for name, constraint in wire.pop("properties", {}).items():
            kept = {
                key: value
                for key, value in properties.get(name, {}).items()
                if key in ("title", "description", "default")
            }
            properties[name] = {**constraint, **kept}
        schema.update(wire)
        return schema

    @classmethod
    def source_for(cls, /, **parameters: object) -> str:
        """The source of an event of this class whose catalog source is a URI
        template (catalog-format.md §9): each ``{name}`` replaced by the value
        given for it, percent-encoded (RFC 6570 level 1). A ``TemplateError``
        (a ``ValueError``) names a missing or unknown parameter."""
        template = cls.catalog_source
        if template is None or not is_template(template):
            raise TemplateError(f"{cls.__name__} has no source template")
        return expand(template, **parameters)

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


def _source_checked(cls: type[CloudEvent], value: str, info: ValidationInfo) -> str:
    """CE-SOURCE-MATCH (rules.md; catalog-format.md §9) for ``source``."""
    template = cls.catalog_source
    if template is None or cls.source_match == "off" or value == template:
        return value
    try:
        matched = matches(template, value)
    except TemplateError:  # malformed (lint refuses it): equal or not
        matched = False
    if matched:
        return value
    if cls.source_match == "error" or (_constructing(info) and is_template(template)):
        kind = "source template" if is_template(template) else "source"
        raise ValueError(
            f"source {value!r} is not the catalog's {kind} {template!r} "
            "(CE-SOURCE-MATCH)"
        )
    return value


def source_check() -> Any:
    """The validator of ``source`` that an event class with a ``catalog_source``
    declares (``_source = source_check()``); other classes pay nothing."""
    return field_validator("source")(_source_checked)


Events = Mapping[tuple[str, str | None], type[CloudEvent]]


_BY_TYPE: dict[int, tuple[Events, dict[str, dict[str | None, type[CloudEvent]]]]] = {}


def by_type(events: Events) -> dict[str, dict[str | None, type[CloudEvent]]]:
    """The event classes by type, then dataversion (worked out once per registry)."""
    known = _BY_TYPE.get(id(events))
    if known is None or known[0] is not events:
        index: dict[str, dict[str | None, type[CloudEvent]]] = {}
        for (event_type, version), cls in events.items():
            index.setdefault(event_type, {})[version] = cls
        known = (events, index)
        _BY_TYPE[id(events)] = known
    return known[1]


def event_class(event: Mapping[str, Any], events: Events) -> type[CloudEvent]:
    """Contract §5: by (type, dataversion); without dataversion only when the type has one."""
    event_type = event.get("type")
    if not isinstance(event_type, str) or not event_type:
        raise EventError(
            "the required attribute 'type' is missing or not a non-empty string"
        )
    candidates = by_type(events).get(event_type, {})
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
