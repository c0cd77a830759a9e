"""Where rule overrides are written in a catalog file (catalog-format.md §9).

The settings are read here from a file's data, nearest first; what they
make of a finding is worked out in ``rules.overrides`` (the one home of "the
effective severity of rule R at node P"). Also ``without_evcat_keys``: evcat's
own ``x-evcat-*`` annotations are taken out of the payload schemas the model
holds, so no output has them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .loader import Path
from .schemawalk import IN_LIST, IN_MAP, IN_ONE, SUBSCHEMAS, subschemas

SCHEMA_KEY = "x-evcat-rules"  # on a payload schema node
EVENT_KEY = "rules"  # on an event, and at the top of a file
# evcat's own annotations in payload schemas: read by evcat, never written to an output.
EVCAT_PREFIX = "x-evcat-"
SETTINGS = ("error", "warning", "off")


def setting_of(value: Any) -> str | None:
    """``error``, ``warning`` or ``off`` (YAML's false is ``off``); None for anything else."""
    if value is False:
        return "off"
    return value if isinstance(value, str) and value in SETTINGS else None


def scopes(value: Any, path: Path) -> list[tuple[Path, Mapping[str, Any]]]:
    """The override maps that apply to a finding at ``path`` of a file whose
    data is ``value``, nearest first, each with its own path (the path of the
    ``x-evcat-rules`` or ``rules`` key)."""
    return [
        (where + (key,), node[key]) for where, node, key in reversed(homes(value, path)) if isinstance(node.get(key), dict)
    ]


def homes(value: Any, path: Path) -> list[tuple[Path, dict[str, Any], str]]:
    """The nodes that hold ``path`` (ancestor-or-self) and may hold an
    override, outermost first: (their path, the node, the key its settings go
    under): the file (``rules``), the event (``rules``), every payload schema
    node (``x-evcat-rules``). The last is where an override of a finding at
    ``path`` goes (``evcat lsp``'s "allow here")."""
    if not isinstance(value, dict):
        return []
    found: list[tuple[Path, dict[str, Any], str]] = [((), value, EVENT_KEY)]
    node: Any = value
    state = "root"
    for depth, step in enumerate(path):
        if isinstance(node, dict):
            node = node.get(step) if isinstance(step, str) else None
        elif isinstance(node, list):
            node = node[step] if isinstance(step, int) and 0 <= step < len(node) else None
        else:
            node = None
        if node is None:
            break
        here = tuple(path[: depth + 1])
        if state == "root":
            state = {"events": "events", "schemas": "map"}.get(str(step), "")
        elif state == "events":
            state = "event" if isinstance(step, int) and isinstance(node, dict) else ""
            if state:
                found.append((here, node, EVENT_KEY))
        elif state == "event":
            state = "schema" if step == "data" else ""
        elif state in ("map", "list"):
            state = "schema"
        elif state == "schema":
            kind = SUBSCHEMAS.get(step) if isinstance(step, str) else None
            if kind == IN_MAP:
                state = "map"
            elif kind == IN_LIST or (kind == IN_ONE and isinstance(node, list)):  # the old tuple form of items
                state = "list"
            elif kind == IN_ONE:
                state = "schema"
            else:
                state = ""  # a keyword's value (required, enum, ...): the finding is on this schema node
        if not state:
            break
        if state == "schema" and isinstance(node, dict):
            found.append((here, node, SCHEMA_KEY))
    return found


def override_maps(value: Any, *, schemas: bool = True) -> Iterator[tuple[Path, Any, bool]]:
    """Every override map written in a file's data: (path of the key, its
    value, whether it is an ``x-evcat-rules`` of a schema node), the file's
    first, then per event its ``rules`` and those in its payload, then
    those in shared schemas. ``schemas=False``: the ``rules`` maps only."""
    if not isinstance(value, dict):
        return
    if EVENT_KEY in value:
        yield (EVENT_KEY,), value[EVENT_KEY], False
    events = value.get("events")
    if isinstance(events, list):
        for index, event in enumerate(events):
            if isinstance(event, dict):
                if EVENT_KEY in event:
                    yield ("events", index, EVENT_KEY), event[EVENT_KEY], False
                if schemas and "data" in event:
                    yield from schema_overrides(event["data"], ("events", index, "data"))
    shared = value.get("schemas")
    if schemas and isinstance(shared, dict):
        for name, schema in shared.items():
            yield from schema_overrides(schema, ("schemas", name))


def schema_overrides(schema: Any, path: Path) -> Iterator[tuple[Path, Any, bool]]:
    """The ``x-evcat-rules`` maps of the payload schema ``schema`` at ``path``."""
    for where, node in subschemas(schema, path):
        if SCHEMA_KEY in node:
            yield where + (SCHEMA_KEY,), node[SCHEMA_KEY], True


def without_evcat_keys(schema: Any) -> Any:
    """``schema`` without evcat's own annotations (``x-evcat-*`` keys of its
    schema objects): what every output is made from (catalog-format.md §9:
    they never reach an output). Copy-on-write: untouched parts are shared."""
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] | None = None
    for keyword, value in schema.items():
        if isinstance(keyword, str) and keyword.startswith(EVCAT_PREFIX):
            new: Any = _DROP
        else:
            kind = SUBSCHEMAS.get(keyword) if isinstance(keyword, str) else None
            if kind == IN_MAP and isinstance(value, dict):
                new = _each_value(value)
            elif kind in (IN_ONE, IN_LIST) and isinstance(value, list):
                new = _each_item(value)
            elif kind == IN_ONE:
                new = without_evcat_keys(value)
            else:
                continue
        if new is not value:
            if result is None:
                result = dict(schema)
            if new is _DROP:
                del result[keyword]
            else:
                result[keyword] = new
    return schema if result is None else result


_DROP = object()


def _each_value(value: dict[str, Any]) -> dict[str, Any]:
    new = {name: without_evcat_keys(child) for name, child in value.items()}
    return value if all(new[name] is child for name, child in value.items()) else new


def _each_item(value: list[Any]) -> list[Any]:
    new = [without_evcat_keys(child) for child in value]
    return value if all(a is b for a, b in zip(new, value)) else new
