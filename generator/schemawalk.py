"""Where the subschemas of a JSON Schema 2020-12 are (JSON Schema Core §10).

Only these positions hold schemas; ``enum``, ``const``, ``default`` and
``examples`` hold instance data and are never walked as schemas.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .loader import Path

MAP_OF_SCHEMAS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
ONE_SCHEMA = (
    "additionalProperties", "unevaluatedProperties", "items", "contains", "propertyNames", "not",
    "if", "then", "else", "unevaluatedItems", "additionalItems", "contentSchema",
)
LIST_OF_SCHEMAS = ("allOf", "anyOf", "oneOf", "prefixItems")

KEYWORDS = frozenset(
    {
        "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment",
        "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
        "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains",
        "minContains", "maxProperties", "minProperties", "required", "dependentRequired", "dependencies",
        "format", "contentEncoding", "contentMediaType", "title", "description", "default", "deprecated",
        "readOnly", "writeOnly", "examples",
    }
    | set(MAP_OF_SCHEMAS)
    | set(ONE_SCHEMA)
    | set(LIST_OF_SCHEMAS)
)

# JSON Schema Validation 2020-12 §6.1.1: the primitive types.
SCHEMA_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
# What newcomers write instead (programming-language type names).
TYPE_ALIASES = {
    "int": "integer", "long": "integer", "short": "integer", "int32": "integer", "int64": "integer",
    "float": "number", "double": "number", "decimal": "number", "bool": "boolean", "str": "string",
    "text": "string", "date": "string", "datetime": "string", "dict": "object", "map": "object",
    "list": "array", "none": "null",
}
# JSON Schema Validation 2020-12 §7.3: the defined formats.
FORMATS = (
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
    "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer",
    "relative-json-pointer", "regex",
)

FORMAT_ALIASES = {"datetime": "date-time", "timestamp": "date-time", "url": "uri", "guid": "uuid", "e-mail": "email", "ip": "ipv4"}


def type_problem(value: Any) -> tuple[str, str | None] | None:
    """Why ``value`` is not a valid ``type`` keyword value, and the type meant."""
    from .naming import closest

    names = value if isinstance(value, list) else [value]
    for name in names:
        if isinstance(name, str) and name not in SCHEMA_TYPES:
            meant = TYPE_ALIASES.get(name.lower()) or closest(name, SCHEMA_TYPES)
            hint = f"; did you mean '{meant}'?" if meant else ""
            if name.lower() in ("date", "datetime"):
                hint = "; write type: string with format: date or date-time"
            return f"'{name}' is not a JSON Schema type: use one of {', '.join(SCHEMA_TYPES)}{hint}", meant
    return None


# For membership tests (a tuple is searched one item at a time).
# Where the subschemas of a keyword are, for one dict look-up a keyword (envelope's walks).
IN_MAP, IN_ONE, IN_LIST = 1, 2, 3
SUBSCHEMAS = {**dict.fromkeys(MAP_OF_SCHEMAS, IN_MAP), **dict.fromkeys(ONE_SCHEMA, IN_ONE), **dict.fromkeys(LIST_OF_SCHEMAS, IN_LIST)}

_MAPS = frozenset(MAP_OF_SCHEMAS)
_ONES = frozenset(ONE_SCHEMA)
_LISTS = frozenset(LIST_OF_SCHEMAS)


def subschemas(schema: Any, path: Path = ()) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every schema object in ``schema`` (itself included), with its path,
    parents before children, in document order."""
    found: list[tuple[Path, dict[str, Any]]] = []
    _collect(schema, path, found)
    return iter(found)


def _collect(schema: Any, path: Path, found: list[tuple[Path, dict[str, Any]]]) -> None:
    if not isinstance(schema, dict):
        return
    found.append((path, schema))
    for keyword, value in schema.items():
        if keyword in _MAPS:
            if isinstance(value, dict):
                for name, child in value.items():
                    _collect(child, path + (keyword, name), found)
        elif keyword in _ONES:
            if isinstance(value, list):  # draft-04..2019-09 tuple form of items
                for index, child in enumerate(value):
                    _collect(child, path + (keyword, index), found)
            else:
                _collect(value, path + (keyword,), found)
        elif keyword in _LISTS and isinstance(value, list):
            for index, child in enumerate(value):
                _collect(child, path + (keyword, index), found)


def rewrite_refs(
    schema: Any, replace: Callable[[str, Path], str | None], path: Path = (), drop: str | None = None,
    dropped: list[Path] | None = None,
) -> Any:
    """``schema`` with every ``$ref`` passed through ``replace`` (None keeps it),
    and, with ``drop``, without the keys of its schema objects that start with
    ``drop`` (evcat's own annotations, ``overrides.EVCAT_PREFIX``: model/build.py),
    their paths added to ``dropped``.

    Copy-on-write: parts without a changed ``$ref`` are shared, not copied.
    """
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] | None = None
    for keyword, value in schema.items():
        if keyword == "$ref" and isinstance(value, str):
            new = replace(value, path + (keyword,)) or value
        elif keyword in _MAPS and isinstance(value, dict):
            new = _rewrite_map(value, replace, path + (keyword,), drop, dropped)
        elif keyword in _ONES and isinstance(value, list) or keyword in _LISTS and isinstance(value, list):
            new = _rewrite_list(value, replace, path + (keyword,), drop, dropped)
        elif keyword in _ONES:
            new = rewrite_refs(value, replace, path + (keyword,), drop, dropped)
        elif drop is not None and keyword.startswith(drop):
            new = _DROPPED
            if dropped is not None:
                dropped.append(path + (keyword,))
        else:
            continue
        if new is not value:
            if result is None:
                result = dict(schema)
            if new is _DROPPED:
                del result[keyword]
            else:
                result[keyword] = new
    return schema if result is None else result


_DROPPED = object()


def _rewrite_map(
    value: dict[str, Any], replace: Callable[[str, Path], str | None], path: Path, drop: str | None,
    dropped: list[Path] | None,
) -> dict[str, Any]:
    result: dict[str, Any] | None = None
    for name, child in value.items():
        new = rewrite_refs(child, replace, path + (name,), drop, dropped)
        if new is not child:
            if result is None:
                result = dict(value)
            result[name] = new
    return value if result is None else result


def _rewrite_list(
    value: list[Any], replace: Callable[[str, Path], str | None], path: Path, drop: str | None,
    dropped: list[Path] | None,
) -> list[Any]:
    new = [rewrite_refs(child, replace, path + (index,), drop, dropped) for index, child in enumerate(value)]
    return value if all(a is b for a, b in zip(new, value)) else new
