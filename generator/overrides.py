"""Where rule overrides are written in a catalog file (catalog-format.md §9).

The settings are read here from a file's data, nearest first; what they
make of a finding is worked out in ``rules.overrides`` (the one home of "the
effective severity of rule R at node P"). evcat's own ``x-evcat-*``
annotations (``EVCAT_PREFIX``) are taken out of the payload schemas the model
holds (model/build.py, in the walk that rewrites their ``$ref``s), so no
output, which is made from the model, has them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .loader import Path
from .schemawalk import IN_LIST, IN_MAP, IN_ONE, SUBSCHEMAS

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


def rule_maps(value: Any) -> Iterator[tuple[Path, Any]]:
    """The ``rules`` maps written in a file's data: the file's, then each
    event's, with the path of the key (their ids and settings are checked
    by rules/catalog.py; ``x-evcat-rules`` maps there too, as the payload
    schemas are walked)."""
    if not isinstance(value, dict):
        return
    if EVENT_KEY in value:
        yield (EVENT_KEY,), value[EVENT_KEY]
    events = value.get("events")
    if isinstance(events, list):
        for index, event in enumerate(events):
            if isinstance(event, dict) and EVENT_KEY in event:
                yield ("events", index, EVENT_KEY), event[EVENT_KEY]
