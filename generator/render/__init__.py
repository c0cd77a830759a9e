"""Stage 4: renderers. Each reads the model and returns {relative path: bytes}.

A renderer never re-reads YAML and never writes: ``writer.write`` does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from ..string_formats import semver_key
from ..model import Catalog, CatalogSet, EventType, SharedSchema
from ..naming import safe_file_name

# The output kinds, their costs, templates and tools: ``outputs``.


@dataclass(frozen=True)
class Unit:
    """A piece of one output that renders on its own (in a worker process, or
    from the render cache): the output of ``render(catalog_set, name)`` depends
    only on ``inputs``, whose ``repr`` (with the evcat code, the templates
    and tool versions of its kind, see ``outputs.kind_salt``) is the cache key. ``render`` is handed ``inputs`` and nothing
    else, so the key covers all a unit can read, by construction. Most units
    are one catalog; indexes read every catalog."""

    kind: str
    name: str
    inputs: tuple[Any, ...]
    # Called with ``inputs``, nothing else, once ``outputs.units`` has bound
    # the run's templates to it (a kind with templates: ``render(inputs,
    # environment)`` before that; their content is in the key by kind).
    render: Callable[..., dict[str, bytes]]
    local: bool = False  # rendered in evcat's own process (an index: its inputs are every catalog)


def catalog_inputs(catalog: Catalog, catalog_set: CatalogSet) -> tuple[Any, ...]:
    """What a catalog's own outputs read: the catalog and the shared schemas its payloads use."""
    used = sorted({name for event in catalog.events if event.payload is not None for name in event.payload.uses})
    return (catalog, tuple(catalog_set.schemas[name] for name in used))


def render_all(units: list[Unit]) -> dict[str, bytes]:
    """Every unit rendered here, in order (no cache, no workers)."""
    files: dict[str, bytes] = {}
    for unit in units:
        files.update(unit.render(unit.inputs))
    return files


def partial_set(catalogs: tuple[Catalog, ...], schemas: tuple[SharedSchema, ...] = ()) -> CatalogSet:
    """The part of the catalog set a unit reads: some catalogs and the shared schemas they use."""
    return CatalogSet(tuple(catalogs), {schema.name: schema for schema in schemas})


def dump_json(value: Any) -> bytes:
    """Deterministic JSON: 2-space indent, UTF-8, newline at the end.

    ``json.dumps`` with an indent runs the standard library's pure-Python
    encoder; orjson writes the same bytes five times faster for values made
    of dicts with str keys, lists, str, bool, None, 64-bit ints and the
    floats whose repr has no exponent (the two write exponents differently,
    and orjson writes NaN as null), so those go to orjson and any other
    value to the standard library. orjson itself refuses what it cannot
    write alike (a key that is not a str, a lone surrogate, an int beyond
    64 bits, nesting deeper than 255: ``TypeError``); the walk looks for
    the rest (floats, other types)."""
    if _orjson_writes_the_same(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"
        except TypeError:
            pass
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def compact_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, by
    orjson where it writes the same text (as ``dump_json`` decides)."""
    if _orjson_writes_the_same(value):
        try:
            return orjson.dumps(value).decode("utf-8")
        except TypeError:
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _orjson_writes_the_same(value: Any) -> bool:
    """No float orjson writes otherwise, nothing but JSON's types (ints:
    orjson checks their range)."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or kind is bool or item is None or kind is int:
            continue
        if kind is dict:
            push(item.values())
        elif kind is list:
            push(item)
        elif kind is float:
            text = repr(item)
            if "e" in text or "n" in text:  # an exponent, nan, inf
                return False
        else:
            return False
    return True


def event_order(event: EventType) -> tuple[str, tuple[int, int, int]]:
    """Events by type, then dataversion numerically (1.10.0 after 1.9.0)."""
    return (event.type, semver_key(event.dataversion or ""))


def sorted_events(catalog_set: CatalogSet) -> list[EventType]:
    return sorted(catalog_set.events, key=lambda e: (e.catalog_id, *event_order(e)))


def event_dir(event: EventType) -> str:
    """``<catalog>/<type>/<dataversion>``: every part through safe_file_name."""
    version = event.dataversion or "notification"
    return f"{safe_file_name(event.catalog_id)}/{safe_file_name(event.type)}/{safe_file_name(version)}"
