"""Document symbols for ``evcat lsp``: the events (and shared schemas) of a file."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ..loader import Document
from .text import before, client_column, location_range


def file_symbols(document: Document, lines: list[str], encoding: str) -> list[types.DocumentSymbol]:
    """The events of a file (and its shared schemas), each spanning its block."""
    if not isinstance(document.value, dict):
        return []
    symbols = []
    events = document.value.get("events")
    if isinstance(events, list):
        for index, event in enumerate(events):
            if not isinstance(event, dict):
                continue
            name = str(event.get("type") or f"events[{index}]")
            if isinstance(event.get("dataversion"), str):
                name += f" {event['dataversion']}"
            symbols.append(_symbol(document, lines, ("events", index), ("events", index, "type"), name,
                                   types.SymbolKind.Event, event.get("title"), encoding))
    schemas = document.value.get("schemas")
    if isinstance(schemas, dict):
        for name in schemas:
            symbols.append(_symbol(document, lines, ("schemas", name), ("schemas", name), name,
                                   types.SymbolKind.Struct, None, encoding, key=True))
    return symbols


def _symbol(document: Document, lines: list[str], path: tuple[str | int, ...], selection: tuple[str | int, ...],
            name: str, kind: types.SymbolKind, detail: Any, encoding: str, key: bool = False) -> types.DocumentSymbol:
    start = document.key_loc(path) if key else document.loc(path)
    chosen = document.key_loc(selection) if key else document.loc(selection)
    end_line = _block_end(lines, start.line - 1, start.column - 1, key)
    selection_range = location_range(chosen, lines, encoding)
    first = lines[start.line - 1] if start.line - 1 < len(lines) else ""
    last = lines[end_line] if end_line < len(lines) else ""
    begin = types.Position(start.line - 1, client_column(first, start.column - 1, encoding))
    full = types.Range(begin, types.Position(end_line, client_column(last, len(last), encoding)))
    if before(full.end, selection_range.end):
        full = types.Range(full.start, selection_range.end)
    return types.DocumentSymbol(name=name, kind=kind, range=full, selection_range=selection_range,
                                detail=detail if isinstance(detail, str) else None)


def _block_end(lines: list[str], line: int, column: int, key: bool) -> int:
    """The last line of the block node that starts at (``line``, ``column``):
    a value runs while lines are indented at least to ``column``, a key's
    value while they are indented deeper than the key."""
    last = line
    for index in range(line + 1, len(lines)):
        text = lines[index]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        own = len(text) - len(text.lstrip(" "))
        if own < column or (key and own == column):
            break
        last = index
    return last
