"""The fast path: one pydantic-core validator per registry of event classes.

Part of evcat's runtime (``generator/runtime/``): copied verbatim into every
generated package. ``_parsing.parse_event`` asks it first; see below for
what it accepts and what it leaves to the careful path.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, cast

from jiter import from_json
from pydantic import BaseModel, ValidationError
from pydantic_core import CoreConfig, SchemaError, SchemaValidator

from ._models import CloudEvent, Events, Payload, by_type, not_null
from ._reading import INT64_MAX, INT64_MIN, MAX_DEPTH, may_hold_long_integers
from ._uritemplate import is_template
from ._values import (
    ATTRIBUTE_NAME,
    DURATION,
    HOSTNAME,
    HOSTNAME_MAX_LENGTH,
    INT32_MAX,
    INT32_MIN,
    IPV4,
    IRI,
    IRI_REFERENCE,
    JSON_POINTER,
    MEDIA_TYPE,
    RELATIVE_JSON_POINTER,
    RUST_NORMO_TIME,
    RUST_TIMESTAMP,
    TIME,
    URI,
    URI_REFERENCE,
    URI_TEMPLATE,
    UUID,
    YEAR,
)

__all__ = [
    "fast_path",
    "parse_fast",
    "parse_fast_mapping",
]

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
# name, nesting past its bound, a run of 19 digits) goes to the careful path, which gives the verdict
# and the error. tests/test_fast_path.py and the differential property test
# (tests/test_one_verdict_property.py) hold both paths to one result.

# Rust patterns (``$`` is the end of the text there, as ``\Z`` is in Python).
_RUST_STRING = (
    "^[^\\u0000-\\u001f\\u007f-\\u009f\\ufdd0-\\ufdef\\ufffe\\uffff"
    + "".join(chr(p * 0x10000 + low) for p in range(1, 17) for low in (0xFFFE, 0xFFFF))
    + "]*$"
)


_RUST_FULL_DATE = rf"^{YEAR}-[0-9]{{2}}-[0-9]{{2}}$"
_RUST_SEQUENCE = r"^[+-]?[0-9]{1,9}$"  # within the int32 range; longer: careful path


def _rust(pattern: re.Pattern[str]) -> str:
    return pattern.pattern.removesuffix(r"\Z") + "$"


def _str(
    pattern: str, min_length: int | None = None, max_length: int | None = None
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "str", "strict": True, "pattern": pattern}
    if min_length is not None:
        schema["min_length"] = min_length
    if max_length is not None:
        schema["max_length"] = max_length
    return schema


def _then(pattern: str, kind: str) -> dict[str, Any]:
    """Text matching ``pattern``, then read as a ``kind`` (date or datetime)."""
    return {
        "type": "chain",
        "steps": [_str(pattern), {"type": kind, "strict": False}],
    }


# This module's plain validators -> the same check in Rust.
_PLAIN: dict[str, dict[str, Any]] = {
    "_uri": _str(_rust(URI)),
    "_uri_reference": _str(_rust(URI_REFERENCE)),
    "_non_empty_uri_reference": _str(_rust(URI_REFERENCE), 1),
    "_media_type": _str(_rust(MEDIA_TYPE)),
    "_uuid": _str(_rust(UUID)),
    "_time": _str(_rust(TIME)),
    "_ipv4": _str(_rust(IPV4)),
    "_hostname": _str(_rust(HOSTNAME), max_length=HOSTNAME_MAX_LENGTH),
    "_duration": _str(_rust(DURATION)),
    "_json_pointer": _str(_rust(JSON_POINTER)),
    "_iri": _str(_rust(IRI)),
    "_iri_reference": _str(_rust(IRI_REFERENCE)),
    "_uri_template": _str(_rust(URI_TEMPLATE)),
    "_relative_json_pointer": _str(_rust(RELATIVE_JSON_POINTER)),
    "_normo_timestamp": _then(RUST_NORMO_TIME, "datetime"),
    "_full_date": _then(_RUST_FULL_DATE, "date"),
}
_URI_PATTERNS = {_rust(URI), _rust(URI_REFERENCE)}  # printable ASCII only
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


# The modules whose checks the fast path knows by name (siblings of this one).
_CHECKS = {
    f"{__name__.rpartition('.')[0]}.{module}" for module in ("_values", "_models")
}


def _ours(function: Any) -> str | None:
    """The name of one of the runtime's checks (methods included), else None."""
    function = getattr(function, "__func__", function)
    if getattr(function, "__module__", None) not in _CHECKS:
        return None
    name = getattr(function, "__name__", None)
    return name if isinstance(name, str) else None


def _bounded(
    node: dict[str, Any], bound: str, limit: Any, beside_int: bool = False
) -> dict[str, Any] | None:
    """``node`` (a number, a nullable one, a union of numbers) with pydantic's
    ``bound`` (ge, gt, le, lt, multiple_of) in each of its number schemas,
    comparing as Python compares the value as sent; None: not such a node, or
    a bound one of them cannot hold so. An int schema holds an int bound
    within int64; a float schema a bound that is exactly a float (Rust
    compares in f64: 2**53 + 1 would round), not a multiple_of (pydantic-core's
    has a tolerance, Python's % none). ``beside_int``: the float schema sits
    in a union beside an int schema, so it takes floats only (an int that
    the bounded int schema refuses must not pass as a float)."""
    kind = node["type"]
    if kind == "int":
        exact = type(limit) is int and INT64_MIN <= limit <= INT64_MAX
        return {**node, bound: limit} if exact else None
    if kind == "float":
        try:
            exact = type(limit) in (int, float) and float(limit) == limit
        except OverflowError:  # an int beyond every float
            exact = False
        if bound == "multiple_of" or not exact:
            return None
        bounded = {**node, bound: limit}
        if not beside_int:
            return bounded
        return {
            "type": "chain",
            "steps": [{"type": "is-instance", "cls": float}, bounded],
        }
    if kind == "nullable":
        inner = _bounded(node["schema"], bound, limit)
        return None if inner is None else {**node, "schema": inner}
    if kind == "union" and not any(isinstance(c, tuple) for c in node["choices"]):
        ints = any(choice["type"] == "int" for choice in node["choices"])
        choices = [_bounded(choice, bound, limit, ints) for choice in node["choices"]]
        if any(choice is None for choice in choices):
            return None
        return {**node, "choices": choices}
    return None


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
        for event_type, versions in by_type(events).items():
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
                    "choices": [_then(RUST_TIMESTAMP, "datetime"), node],
                }
            if kind == "function-after" and name == "checked_string":
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
            if kind == "function-after" and name == "_source_checked":
                # CE-SOURCE-MATCH refuses nothing read from the wire unless the
                # event's level is error (_models._source_checked): then in Python
                owner = node["function"]["function"].__self__
                source = owner.catalog_source
                if owner.source_match != "error" or source is None:
                    return self.schema(node["schema"])
                if not is_template(source):  # that source only
                    literal = {"type": "literal", "expected": [source]}
                    return {
                        "type": "chain",
                        "steps": [self.schema(node["schema"]), literal],
                    }
            bound = _CONSTRAINTS.get(
                getattr(node["function"]["function"], "func", None)
            )
            if kind == "function-after" and bound is not None:
                # pydantic's own ge/le/... behind a validator: in the number schema
                # (each number of a union too: Number = StrictInt | StrictFloat)
                inner = self.schema(node["schema"])
                keywords = node["function"]["function"].keywords
                bounded = _bounded(inner, bound, keywords[bound])
                if set(keywords) == {bound} and bounded is not None:
                    return bounded
                return {**node, "schema": inner}
            if kind == "function-before" and name == "integral":
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
            elif issubclass(cls, Payload) and wire in not_null(cls):
                schema = _optional(schema)  # _wire_nulls
            fields[name] = {**field, "schema": schema}
        fast: dict[str, Any] = {**node, "fields": fields}
        # pydantic-core reads no extras_keys_schema from JSON (2.46), and drops a
        # key named like a field's Python name (``meter_id`` beside ``meterId``,
        # an undeclared property the careful path keeps): parse_fast checks
        # undeclared attribute names, and sends text naming one to the careful path.
        self.shadows |= shadows
        if not extra:
            pass
        elif issubclass(cls, CloudEvent):
            fast["extras_schema"] = _EXTENSION
        elif issubclass(cls, Payload):
            # a map (additionalProperties with a schema) keeps its values' type
            typed = node.get("extras_schema")
            fast["extras_schema"] = self.json() if typed is None else self.schema(typed)
        return fast


# --- Integers beyond int64 refused by the validator itself ------------------------
#
# The careful path refuses an integer beyond int64 wherever it is
# (``check_value``). Validating Python values, the fast validator can too: each
# integer schema bounded to int64, each float schema taking a float as it is and
# an int only within int64 (strict float takes any int), and nothing else in the
# registry's schema able to take an int. Then ``parse_fast`` need not look for
# 19-digit numbers in the text (``may_hold_long_integers``); where something
# else could take one (someone else's validator, an enum), it still does.

_INT64_SCHEMA = {"type": "int", "strict": True, "ge": INT64_MIN, "le": INT64_MAX}
# Nodes that take no int, or whose children are bounded below.
_NO_INT = frozenset({"str", "bool", "none", "date", "datetime", "time"})
_CONTAINERS = frozenset(
    {
        "list",
        "dict",
        "nullable",
        "default",
        "union",
        "tagged-union",
        "model",
        "model-fields",
        "definition-ref",
        "custom-error",
        "function-after",  # its schema reads the value first
    }
)
# The runtime's checks of text (``_values``), each refusing what is no str.
_TEXT_CHECKS = frozenset(
    {
        "_uri",
        "_uri_reference",
        "_non_empty_uri_reference",
        "_uuid",
        "_email",
        "_hostname",
        "_ipv6",
        "_time",
        "_ipv4",
        "_duration",
        "_json_pointer",
        "_media_type",
        "_binary",
        "_timestamp",
        "_normo_timestamp",
        "_full_date",
    }
)


class _Int64:
    """A fast schema whose numbers are bounded to int64 (see above), and
    whether nothing else in it may take an int (``bounded``)."""

    def __init__(self) -> None:
        self.bounded = True

    def schema(self, schema: dict[str, Any]) -> Any:  # a CoreSchema
        if schema["type"] == "definitions":
            return {
                **schema,
                "schema": self.node(schema["schema"]),
                "definitions": [self.node(d) for d in schema["definitions"]],
            }
        return self.node(schema)

    def node(self, node: dict[str, Any], raw: bool = True) -> dict[str, Any]:
        """``node`` bounded; ``raw``: it reads the value as sent (not the
        output of a chain's earlier step), so it decides ``bounded``."""
        kind = node["type"]
        if kind == "int":
            low, high = node.get("ge", INT64_MIN), node.get("le", INT64_MAX)
            return {**node, "ge": max(low, INT64_MIN), "le": min(high, INT64_MAX)}
        if kind == "float":
            inner = {k: v for k, v in node.items() if k != "ref"}
            wrapped: dict[str, Any] = {
                "type": "union",
                "mode": "left_to_right",
                "choices": [
                    {
                        "type": "chain",
                        "steps": [{"type": "is-instance", "cls": float}, inner],
                    },
                    {"type": "chain", "steps": [dict(_INT64_SCHEMA), inner]},
                ],
            }
            if "ref" in node:
                wrapped["ref"] = node["ref"]
            return wrapped
        if kind == "chain":
            steps: list[Any] = node["steps"]
            return {
                **node,
                "steps": [
                    self.node(step, raw and not i) for i, step in enumerate(steps)
                ],
            }
        if raw and not self.safe(node):
            self.bounded = False
        return _map(node, lambda child: self.node(child))

    def safe(self, node: dict[str, Any]) -> bool:
        """Whether ``node`` itself takes no int beyond int64 (its children are
        bounded by ``node``)."""
        kind = node["type"]
        if kind in _NO_INT:
            return (
                kind == "str"
                or kind == "bool"
                or kind == "none"
                or (node.get("strict") is not False)
            )
        if kind in _CONTAINERS:
            return True
        if kind == "literal":
            return not any(
                type(value) is int and not INT64_MIN <= value <= INT64_MAX
                for value in node["expected"]
            )
        if kind == "is-instance":
            return node["cls"] is float  # no int is a float
        if kind == "function-wrap":  # JsonConst refuses them itself
            return _ours(node["function"]["function"]) == "_json_const"
        if kind == "function-plain":
            return _ours(node["function"]["function"]) in _TEXT_CHECKS
        return False


class _FastPath(NamedTuple):
    """What ``parse_fast`` needs of a registry."""

    validator: SchemaValidator | None
    bounded: bool  # what it accepts is at most MAX_DEPTH deep
    shadows: tuple[bytes, ...]  # "name" of each field with another wire name...
    underscored: frozenset[bytes]  # ...and name of those with a "_" in it
    names: frozenset[str]  # all those names (the keys of a mapping)
    converted: frozenset[str]  # the registry's Integer and Boolean attributes
    int64: bool  # the validator refuses every integer beyond int64 (_Int64)


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
    int64 = _Int64()
    if schema is not None:
        schema = int64.schema(schema)
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
            except SchemaError:  # a translation pydantic-core refuses
                validator = None  # the careful path only
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
        frozenset(fast.shadows),
        frozenset(
            name
            for cls in events.values()
            for name, kind in cls.attribute_types.items()
            if kind in ("Integer", "Boolean")
        ),
        int64.bounded and not fast.unbounded,
    )


def _left_to_careful(data: bytes | bytearray, fast: _FastPath) -> bool:
    """Whether JSON text ``data`` holds what the fast path leaves to the
    careful path (see ``_Fast``): nesting it may not bound, an integer
    perhaps beyond int64 (``check_value`` decides), a name perhaps a field's
    Python name (see ``_Fast.model_fields``)."""
    if not fast.bounded and data.count(b"[") + data.count(b"{") > MAX_DEPTH:
        return True
    if not fast.int64 and may_hold_long_integers(data):
        return True
    if data.find(b"\\") >= 0 and _ESCAPED_NAME_CHAR.search(data):  # find: memchr
        return True
    shadows = fast.shadows
    if shadows and any(name in data for name in shadows):
        return True
    underscored = fast.underscored
    return bool(underscored and data.find(b"_") >= 0 and _names_one(data, underscored))


def fast_path(events: Events) -> _FastPath:
    """The fast path of a registry (compiled on first use)."""
    known = _FAST.get(id(events))
    return known[1] if known and known[0] is events else _fast_validator(events)


def parse_fast(data: bytes | bytearray, events: Events) -> CloudEvent | None:
    """``parse_event`` of JSON text in one pydantic-core call; None: left to
    the careful path. The text is read once, as the careful path reads it
    (``read_json``'s parser and options: a name repeated in an object, a
    lone surrogate, NaN are refused there), and its value validated."""
    known = _FAST.get(id(events))
    fast = known[1] if known and known[0] is events else _fast_validator(events)
    if fast.validator is None or _left_to_careful(data, fast):
        return None
    try:
        value = from_json(
            data if type(data) is bytes else bytes(data),
            allow_inf_nan=False,
            catch_duplicate_keys=True,
            cache_mode=False,  # faster here, the same values
        )
    except ValueError:
        return None  # the careful path says why
    return _validated(value, fast)


def parse_fast_mapping(
    event: Mapping[str, Any], payload: bytes, fast: _FastPath
) -> CloudEvent | None:
    """``parse_fast`` for the structured-mode mapping of a binary-mode message
    (``_http.binary_fast``): its attributes as ``structured_from_binary``
    makes them, its ``data`` (if any) read by ``read_json``'s parser from the
    JSON text ``payload``, which the same checks as ``parse_fast``'s look at.
    None: left to the careful path. ``fast``: the registry's ``fast_path``."""
    if fast.validator is None or not fast.names.isdisjoint(event):
        return None
    if payload and _left_to_careful(payload, fast):
        return None
    return _validated(event, fast)


def _validated(value: Any, fast: _FastPath) -> CloudEvent | None:
    """``value`` (JSON's Python values) validated by the fast validator, which
    the careful path, too, reads Python values with (``model_validate``)."""
    try:
        event: CloudEvent = cast(SchemaValidator, fast.validator).validate_python(value)
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
        or not ATTRIBUTE_NAME.match(name)
        for name in event.__pydantic_extra__ or ()
    )
