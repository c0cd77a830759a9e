"""Reading JSON text: ``read_json``, ``EventError`` and the one depth rule of every judge.

Part of evcat's runtime (``generator/runtime/``): copied verbatim into every
generated package. ``evcat validate`` and ``evcat serve`` read with it too,
so a file, an HTTP body and a broker message nested too deeply get the same
error, with the same JSON pointer, on every Python version.

The rule is applied to the bytes, by a scan that neither parses nor
recurses: what a JSON parser does with deep nesting (orjson stops at 1,024
levels, pydantic-core at 200, the standard library where the interpreter's
recursion limit or C stack ends, which differs between Python 3.11, 3.12
and 3.13) never decides the verdict. Parsed values (a mapping handed to
``parse_event``, a value a parser accepted) are walked without recursion to
the same pointer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import Any, cast

from pydantic_core import from_json

__all__ = [
    "MAX_DEPTH",
    "SURROGATE",
    "EventError",
    "Pointer",
    "check_value",
    "deep_pointer",
    "nesting_problem",
    "read_json",
    "too_deep",
]

MAX_DEPTH = 128  # nesting of a JSON event, data included (evcat's vocabulary.MAX_DEPTH)

Pointer = tuple[str | int, ...]

_NOT_BRACKET = bytes(set(range(256)) - set(b"[]{}"))
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
# The tokens that give JSON text its structure: strings (whole, so that
# brackets inside them do not count; a lone quote is one that does not end),
# brackets, commas and colons.
_STRUCTURE = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[][{},:"]', re.DOTALL)


def too_deep(data: bytes | bytearray) -> Pointer | None:
    """The JSON pointer of the first array or object of ``data`` (in document
    order) nested deeper than ``MAX_DEPTH`` levels, the outermost being level
    1; None when no bracket is that deep. Read from the structure of the
    bytes alone: valid JSON or not, any depth, no recursion."""
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return None
    # Outside the strings: an escaped quote is one after an odd number of
    # backslashes; what is left between two quotes is a string, and after a
    # quote that does not end, the rest is.
    unescaped = bytes(data).replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[::2])
    brackets = outside.translate(None, _NOT_BRACKET)
    if max(accumulate(map(_STEP.__getitem__, brackets)), default=0) <= MAX_DEPTH:
        return None  # the common case, decided in C; the pointer below is rarely asked
    return _pointer_of_deep(data)


class _Level:
    """An open bracket of ``_pointer_of_deep``: the item it is at."""

    __slots__ = ("index", "key", "wants_key")

    def __init__(self, is_object: bool) -> None:
        self.index = 0  # of an array
        self.key: tuple[int, int] | None = None  # span of the name, in an object
        self.wants_key = is_object  # after "{" or ",": the next string is a name


def _pointer_of_deep(data: bytes | bytearray) -> Pointer | None:
    levels: list[_Level] = []
    for match in _STRUCTURE.finditer(data):
        token = data[match.start()]
        if token == 0x22:  # '"'
            if match.end() - match.start() == 1:
                return None  # a string that does not end
            if levels and levels[-1].wants_key:
                levels[-1].key, levels[-1].wants_key = match.span(), False
        elif token in (0x5B, 0x7B):  # '[', '{'
            if len(levels) >= MAX_DEPTH:
                return tuple(_part(data, level) for level in levels)
            levels.append(_Level(is_object=token == 0x7B))
        elif token in (0x5D, 0x7D):  # ']', '}'
            if levels:
                levels.pop()
        elif token == 0x2C and levels:  # ',' between two items or members
            levels[-1].index += 1
            levels[-1].wants_key = levels[-1].key is not None
    return None


def _part(data: bytes | bytearray, level: _Level) -> str | int:
    """The index, or the member name, an open bracket is at."""
    if level.key is None:
        return level.index
    text = bytes(data[level.key[0] : level.key[1]]).decode("utf-8", "replace")
    try:
        return cast(str, json.loads(text))
    except ValueError:  # an escape that is not JSON's: the name as written
        return text[1:-1]


def deep_pointer(value: Any) -> Pointer | None:
    """``too_deep`` for parsed values: the pointer of the first dict or list
    (in document order) nested deeper than ``MAX_DEPTH`` levels, or None."""
    if not _deeper_than_limit(value):
        return None
    stack: list[tuple[Any, Pointer]] = [(value, ())]
    while stack:
        item, pointer = stack.pop()
        if len(pointer) >= MAX_DEPTH:
            return pointer
        if isinstance(item, dict):
            members = cast("dict[str, Any]", item)
            stack.extend(
                (child, (*pointer, key))
                for key, child in reversed(members.items())
                if _nests(child)
            )
        else:
            items = cast("list[Any]", item)
            stack.extend(
                (items[index], (*pointer, index))
                for index in range(len(items) - 1, -1, -1)
                if _nests(items[index])
            )
    return None


def _deeper_than_limit(value: Any) -> bool:
    """Whether ``value`` nests deeper than ``MAX_DEPTH``: depths only, no
    pointers (asked of every event)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = cast("dict[str, Any]", item).values()
        elif isinstance(item, list):
            children = cast("Sequence[Any]", item)
        else:
            continue
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children if _nests(child))
    return False


def _nests(value: object) -> bool:
    return isinstance(value, (dict, list))


def nesting_problem(pointer: Pointer) -> str:
    """What every judge says of JSON nested too deeply at ``pointer`` (its
    middle left out: such a pointer is long)."""
    if len(pointer) <= 6:
        shown = _pointer_text(pointer)
    else:
        shown = f"{_pointer_text(pointer[:3])}/...{_pointer_text(pointer[-2:])}"
    return f"{shown}: nested deeper than {MAX_DEPTH} levels (the limit)"


def _pointer_text(pointer: Pointer) -> str:
    """RFC 6901 form: ``/data/tariff/code``."""
    return "".join(
        "/" + str(part).replace("~", "~0").replace("/", "~1") for part in pointer
    )


class EventError(ValueError):
    """An event that is not one of this catalog's, or not a CloudEvent at all."""


# --- Reading JSON --------------------------------------------------------------


def read_json(raw: str | bytes | bytearray) -> Any:
    """JSON text as Python values, within bounds: ``EventError`` for invalid
    JSON (a lone surrogate is not Unicode text, NaN and Infinity are not
    numbers) and nesting deeper than ``MAX_DEPTH`` (``_reading``: the same
    verdict as ``evcat validate``'s, whatever the parser's own limit). Parsed
    by pydantic-core's JSON reader (three times the standard library's speed
    here). A number too large for a float (1e400) reads as infinity, which
    the models refuse (``allow_inf_nan=False``, ``_finite_extras``)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    try:
        value = from_json(data, allow_inf_nan=False)
    except ValueError as error:
        deep = too_deep(data)
        if deep is not None:
            raise EventError(nesting_problem(deep)) from None
        raise EventError(f"not valid JSON: {error}") from error
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH:  # else it cannot be that deep
        check_value(value)
    return value


SURROGATE = re.compile("[\ud800-\udfff]")


def check_value(value: Any) -> None:
    """``EventError`` for JSON no UTF-8 text can carry (a lone surrogate in a
    string or a name), a number no JSON number is (NaN, Infinity, 1e400) or
    nesting more than ``MAX_DEPTH`` levels deep."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                raise EventError(f"the number {item} is not a JSON number (too large?)")
        elif isinstance(item, str):
            if SURROGATE.search(item):
                raise EventError("a string holds a lone surrogate (not Unicode text)")
        elif depth >= MAX_DEPTH and isinstance(item, (dict, list)):
            raise EventError(nesting_problem(deep_pointer(value) or ()))
        elif isinstance(item, dict):
            for key, child in cast("dict[object, Any]", item).items():
                if isinstance(key, str) and SURROGATE.search(key):
                    raise EventError("a name holds a lone surrogate (not Unicode text)")
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in cast("Sequence[Any]", item))
