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
    """A copy of ``schema`` with every ``$ref`` passed through ``replace``.

    ``replace`` returns the new reference, or None to keep the old one.
    """
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword == "$ref" and isinstance(value, str):
            result[keyword] = replace(value, path + (keyword,)) or value
        elif keyword in MAP_OF_SCHEMAS and isinstance(value, dict):
            result[keyword] = {
                name: rewrite_refs(child, replace, path + (keyword, name)) for name, child in value.items()
            }
        elif keyword in ONE_SCHEMA and isinstance(value, list):
            result[keyword] = [rewrite_refs(child, replace, path + (keyword, i)) for i, child in enumerate(value)]
        elif keyword in ONE_SCHEMA:
            result[keyword] = rewrite_refs(value, replace, path + (keyword,))
        elif keyword in LIST_OF_SCHEMAS and isinstance(value, list):
            result[keyword] = [rewrite_refs(child, replace, path + (keyword, i)) for i, child in enumerate(value)]
        else:
            result[keyword] = value
    return result
