"""The "allow here" quick fix: an override of a finding's rule written on
the nearest node that may hold one (catalog-format.md §9): ``x-evcat-rules``
on the payload schema node the finding stands in, else ``rules`` on its
event, else the file's ``rules``.

The edit is plain text at the node's own indentation, in the node's style:
inside the braces of a flow mapping (``{type: string}``), as a line of its
own at the column of a block mapping's keys (a node that starts on a
``- `` line gets the new key there and its first key moves to the next line,
at the same column). An override map already there gains the rule, or the
rule's setting there becomes ``off``.
"""

from __future__ import annotations

from lsprotocol import types

from ..diagnostics import Diagnostic
from ..loader import Document, Path
from ..overrides import SCHEMA_KEY, homes
from .text import client_column, token_end

_WHERE = {SCHEMA_KEY: "this schema", "rules": "this event"}


def allow_here(diagnostic: Diagnostic, document: Document, lines: list[str], encoding: str) -> tuple[types.TextEdit, str] | None:
    """The edit that turns ``diagnostic``'s rule off where it stands, and
    the action's title; None when the rule cannot be overridden (a fixed
    rule, a finding without a YAML path) or the text is not what the
    document was read from."""
    from ..rules import RULES

    rule = RULES.get(diagnostic.rule)
    path = diagnostic.location.path
    if rule is None or rule.fixed or path is None:
        return None
    found = homes(document.value, path)
    if not found:
        return None
    where, node, key = found[-1]
    place = "this file" if not where else _WHERE[key]
    title = f"Allow here: {rule.id} off for {place} ({key})"
    entry = f"{rule.id}: off"
    settings = node.get(key)
    if key in node and not isinstance(settings, dict):
        return None  # an override that is not a mapping: CAT-TYPE says so; fix that first
    if isinstance(settings, dict):
        edit = _into(document, lines, where + (key,), settings, entry, rule.id, encoding)
    else:
        edit = _into(document, lines, where, node, f"{key}: {{{entry}}}", None, encoding)
    return (edit, title) if edit is not None else None


def _into(
    document: Document, lines: list[str], path: Path, mapping: dict[str, object], entry: str, existing: str | None,
    encoding: str,
) -> types.TextEdit | None:
    """An edit that writes ``entry`` into the mapping at ``path`` (replacing
    the value of ``existing`` when the mapping has that key already)."""
    if existing is not None and existing in mapping:
        at = document.locations.get(path + (existing,))
        if at is None or at[0] >= len(lines):
            return None
        line = lines[at[0]]
        return types.TextEdit(_range(line, at[0], at[1], token_end(line, at[1]), encoding), "off")
    start = document.locations.get(path)
    if start is None or start[0] >= len(lines):
        return None
    line = lines[start[0]]
    if line[start[1] : start[1] + 1] == "{":  # a flow mapping: the entry goes first inside its braces
        column = start[1] + 1
        text = entry + (", " if mapping else "")
        return types.TextEdit(_range(line, start[0], column, column, encoding), text)
    if not mapping:
        return None
    first = document.key_locations.get(path + (next(iter(mapping)),))
    if first is None or first[0] >= len(lines):
        return None
    row, column = first
    line = lines[row]
    if line[:column].strip(" -") or "\t" in line[:column]:
        return None  # not a block key at the start of its line (after "- "): no safe place
    # A line of its own at the keys' column; on a "- " line the entry takes
    # the first key's place and that key moves to the next line, same column.
    return types.TextEdit(_range(line, row, column, column, encoding), f"{entry}\n{' ' * column}")


def _range(line: str, row: int, start: int, end: int, encoding: str) -> types.Range:
    return types.Range(
        types.Position(row, client_column(line, start, encoding)), types.Position(row, client_column(line, end, encoding))
    )
