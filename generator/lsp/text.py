"""Reading catalog text around a cursor: token ranges, ``$ref`` values, and
the YAML key path a line sits under (for completion).

Plain line-based reading on purpose: it works on half-typed buffers that do
not parse, which is exactly when an editor asks for completion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsprotocol import types

from ..diagnostics import Location

_REF_VALUE = re.compile(r"""(?P<key>["']?\$ref["']?\s*:\s*)(?P<quote>["']?)(?P<ref>[^"'\s,}\]]*)""")
_KEY_LINE = re.compile(r"""^(?P<indent>\s*(?:-\s+)*)(?P<key>[^\s#:'"{}\[\],-][^:#]*?|"[^"]*"|'[^']*')\s*:(?:\s|$)""")
_PLAIN_STOP = re.compile(r":(?:\s|$)|\s#|[,\]}]")


def client_column(line: str, column: int, encoding: str = "utf-16") -> int:
    """A code-point column as the client counts columns (LSP's position
    encoding: UTF-16 code units unless the client chose utf-8 or utf-32)."""
    prefix = line[:column]
    if encoding == "utf-32":
        return len(prefix)
    if encoding == "utf-8":
        return len(prefix.encode("utf-8", errors="surrogatepass"))
    return column + sum(1 for character in prefix if ord(character) > 0xFFFF)


def code_point_column(line: str, column: int, encoding: str = "utf-16") -> int:
    """The client's column on ``line`` as a code-point column."""
    if encoding == "utf-32":
        return min(column, len(line))
    count = 0
    for index, character in enumerate(line):
        if count >= column:
            return index
        if encoding == "utf-8":
            count += len(character.encode("utf-8", errors="surrogatepass"))
        else:
            count += 2 if ord(character) > 0xFFFF else 1
    return len(line)


def token_end(line: str, start: int) -> int:
    """The end (exclusive, code points) of the YAML token at ``start``: a
    quoted string with its quotes, a flow collection to its closing bracket,
    or a plain key or scalar up to ``: ``, `` #``, a flow separator or the
    end of the line."""
    if start >= len(line):
        return start
    first = line[start]
    if first in "\"'":
        index = start + 1
        while index < len(line):
            if line[index] == "\\" and first == '"':
                index += 2
                continue
            if line[index] == first:
                if first == "'" and line[index + 1 : index + 2] == "'":
                    index += 2
                    continue
                return index + 1
            index += 1
        return len(line)
    if first in "{[":
        depth = 0
        for index in range(start, len(line)):
            if line[index] in "{[":
                depth += 1
            elif line[index] in "}]":
                depth -= 1
                if depth == 0:
                    return index + 1
        return len(line.rstrip())
    if first in "|>" or (first == "-" and line[start + 1 : start + 2] in (" ", "")):
        return len(line.rstrip()) or start + 1
    match = _PLAIN_STOP.search(line, start + 1)
    end = match.start() if match else len(line)
    end = len(line[:end].rstrip())
    return max(end, start + 1)


def quoted_like(original: str, replacement: str) -> str:
    """``replacement`` written with the quotes ``original`` had (a suggestion
    that brings its own quotes keeps them)."""
    if replacement[:1] in "\"'" or not original or original[0] not in "\"'":
        return replacement
    quote = original[0]
    if quote == "'":
        return "'" + replacement.replace("'", "''") + "'"
    return '"' + replacement.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class RefAt:
    ref: str
    start: int  # code-point columns of the value on its line
    end: int


def ref_at(line: str, column: int) -> RefAt | None:
    """The ``$ref`` value on ``line`` that ``column`` falls in (key or value)."""
    for match in _REF_VALUE.finditer(line):
        if match.start() <= column <= match.end() + (1 if match["quote"] else 0):
            return RefAt(match["ref"], match.start("ref"), match.end("ref"))
    return None


def ref_prefix(line: str, column: int) -> RefAt | None:
    """A ``$ref`` value being typed: the cursor is inside or right after it."""
    found = ref_at(line, column)
    if found is not None and found.start <= column:
        return RefAt(found.ref[: column - found.start], found.start, found.end)
    before = line[:column]
    match = re.search(r"""["']?\$ref["']?\s*:\s*(["']?)$""", before)
    if match:
        return RefAt("", column, column)
    return None


def key_path(lines: list[str], line_number: int, column: int) -> tuple[list[str | int], bool]:
    """The keys of the mappings that enclose position (``line_number``,
    ``column``), outermost first (an item of a list is ``0``), and whether
    the cursor is where a key is typed (not after ``key:``)."""
    line = lines[line_number] if line_number < len(lines) else ""
    before = line[:column]
    at_key = ":" not in before and "#" not in before
    inner: list[str | int] = []  # innermost first
    if at_key:
        current = len(before) - len(before.lstrip(" -"))
        if before.lstrip(" ").startswith("-"):
            inner.append(0)
            current = _indent_of(before)
    else:
        match = _KEY_LINE.match(line)
        if match:
            inner.append(_unquote(match["key"].strip()))
        current = _key_column(line)
        if line.lstrip(" ").startswith("-"):
            inner.append(0)
            current = _indent_of(line)
    for index in range(line_number - 1, -1, -1):
        if current == 0:
            break
        text = lines[index]
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        own, key_column = _indent_of(text), _key_column(text)
        match = _KEY_LINE.match(text)
        if stripped.startswith("-") and own < current:
            if match and key_column < current:
                inner.append(_unquote(match["key"].strip()))
            inner.append(0)
            current = own
        elif own < current and match:
            inner.append(_unquote(match["key"].strip()))
            current = own
    inner.reverse()
    return inner, at_key


def _key_column(text: str) -> int:
    return len(text) - len(text.lstrip(" -"))


def _indent_of(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _unquote(key: str) -> str:
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "\"'":
        return key[1:-1]
    return key


def location_range(location: Location, lines: list[str], encoding: str) -> types.Range:
    line = max(location.line - 1, 0)
    text = lines[line] if line < len(lines) else ""
    start = min(max(location.column - 1, 0), len(text))
    end = token_end(text, start) if start < len(text) else start
    return types.Range(
        types.Position(line, client_column(text, start, encoding)), types.Position(line, client_column(text, end, encoding))
    )


def overlaps(a: types.Range, b: types.Range) -> bool:
    return not (before(a.end, b.start) or before(b.end, a.start))


def before(p: types.Position, q: types.Position) -> bool:
    return (p.line, p.character) < (q.line, q.character)


def contains(range_: types.Range, position: types.Position) -> bool:
    return not before(position, range_.start) and not before(range_.end, position)


def key_under(line: str, column: int) -> str | None:
    """The mapping key written at the start of ``line`` when ``column`` is on it."""
    match = _KEY_LINE.match(line)
    if match is None or not match.start("key") <= column <= match.end("key"):
        return None
    return _unquote(match["key"].strip())
