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


def subschemas(schema: Any, path: Path = ()) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every schema object in ``schema`` (itself included), with its path."""
    stack = [(path, schema)]
    while stack:
        current_path, current = stack.pop()
        if not isinstance(current, dict):
            continue
        yield current_path, current
        children = list(_children(current, current_path))
        stack.extend(reversed(children))


def _children(schema: dict[str, Any], path: Path) -> Iterator[tuple[Path, Any]]:
    for keyword, value in schema.items():
        if keyword in MAP_OF_SCHEMAS and isinstance(value, dict):
            for name, child in value.items():
                yield path + (keyword, name), child
        elif keyword in ONE_SCHEMA:
            if isinstance(value, list):  # draft-04..2019-09 tuple form of items
                for index, child in enumerate(value):
                    yield path + (keyword, index), child
            else:
                yield path + (keyword,), value
        elif keyword in LIST_OF_SCHEMAS and isinstance(value, list):
            for index, child in enumerate(value):
                yield path + (keyword, index), child


def rewrite_refs(schema: Any, replace: Callable[[str, Path], str | None], path: Path = ()) -> Any:
    """``schema`` with every ``$ref`` passed through ``replace`` (None keeps it).

    Copy-on-write: parts without a changed ``$ref`` are shared, not copied.
    """
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] | None = None
    for keyword, value in schema.items():
        if keyword == "$ref" and isinstance(value, str):
            new = replace(value, path + (keyword,)) or value
        elif keyword in MAP_OF_SCHEMAS and isinstance(value, dict):
            new = _rewrite_map(value, replace, path + (keyword,))
        elif keyword in ONE_SCHEMA and isinstance(value, list) or keyword in LIST_OF_SCHEMAS and isinstance(value, list):
            new = _rewrite_list(value, replace, path + (keyword,))
        elif keyword in ONE_SCHEMA:
            new = rewrite_refs(value, replace, path + (keyword,))
        else:
            continue
        if new is not value:
            if result is None:
                result = dict(schema)
            result[keyword] = new
    return schema if result is None else result


def _rewrite_map(value: dict[str, Any], replace: Callable[[str, Path], str | None], path: Path) -> dict[str, Any]:
    result: dict[str, Any] | None = None
    for name, child in value.items():
        new = rewrite_refs(child, replace, path + (name,))
        if new is not child:
            if result is None:
                result = dict(value)
            result[name] = new
    return value if result is None else result


def _rewrite_list(value: list[Any], replace: Callable[[str, Path], str | None], path: Path) -> list[Any]:
    new = [rewrite_refs(child, replace, path + (index,)) for index, child in enumerate(value)]
    return value if all(a is b for a, b in zip(new, value)) else new
