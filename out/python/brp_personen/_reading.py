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

from jiter import from_json

__all__ = [
    "DUPLICATE_WORDS",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_DEPTH",
    "SURROGATE",
    "EventError",
    "Pointer",
    "charset_problem",
    "check_value",
    "deep_pointer",
    "duplicate_name_problem",
    "encoding_problem",
    "essence",
    "integer_problem",
    "is_json",
    "may_hold_long_integers",
    "nesting_problem",
    "one_json_value",
    "read_json",
    "too_deep",
]

MAX_DEPTH = 128  # nesting of a JSON event, data included (evcat's vocabulary.MAX_DEPTH)
# Integers every judge reads exactly: 64 bits, signed (RFC 7493 §2.2 asks for
# IEEE 754 doubles; evcat keeps integers exact to int64, as jsonschema-rs and
# Rust's serde do, and refuses the rest rather than round them).
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
# An integer outside int64 has 19 digits or more, and as a number token it ends
# before ",", "]" or "}" (or the end of the text): after a translation that
# keeps digits (as "0") and those delimiters (as ",") and drops whitespace,
# two byte searches in C find every candidate. Digits inside strings, such as
# an OIN, are not followed by a delimiter but by '"' or ":"; a string that
# looks like one only costs the careful path.
_DIGIT_TABLE = bytes(
    0x30 if 0x30 <= byte <= 0x39 else 0x2C if byte in b",]}" else 0x78
    for byte in range(256)
)
_NINETEEN = b"0" * 19
_NINETEEN_THEN_END = _NINETEEN + b","

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


# --- The bytes of JSON text ---------------------------------------------------
#
# RFC 8259 §8.1: JSON text exchanged between systems MUST be UTF-8, and
# implementations MUST NOT add a byte order mark. Every judge (the generated
# readers, evcat validate, evcat serve, the broker bindings) asks these
# functions, so the same bytes get the same refusal, with the same words.


def encoding_problem(data: bytes | bytearray) -> str | None:
    """Why ``data`` is not UTF-8 JSON text at its start, or None: a byte-order
    mark, or UTF-16/UTF-32 (a NUL among the first four bytes, which no UTF-8
    JSON text has, RFC 8259 §8.1 and RFC 4627 §3)."""
    head = bytes(data[:4])
    if head.startswith(b"\xef\xbb\xbf"):
        return (
            "the text starts with a byte-order mark (U+FEFF); JSON text is UTF-8 "
            "without one (RFC 8259 section 8.1)"
        )
    if head[:2] in (b"\xfe\xff", b"\xff\xfe") or b"\x00" in head:
        return "the text is UTF-16 or UTF-32, not UTF-8 (RFC 8259 section 8.1)"
    return None


def essence(content_type: str) -> str:
    """The media type without parameters, lower case (RFC 9110 §8.3.1)."""
    return content_type.split(";", 1)[0].strip().lower()


def is_json(content_type: str) -> bool:
    """JSON format §3.1.1: a media type of the form ``*/json`` or ``*/*+json``."""
    subtype = essence(content_type).partition("/")[2]
    return subtype == "json" or subtype.endswith("+json")


def charset_problem(content_type: str | None) -> str | None:
    """Why a JSON body under ``content_type`` cannot be read as UTF-8, or
    None: a ``charset`` parameter other than UTF-8 (the HTTP binding §3.1.1
    and the JSON format §3 speak of UTF-8 JSON only; RFC 8259 §11 defines
    no other)."""
    if not content_type or "charset" not in content_type.lower():
        return None
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
            if charset not in ("utf-8", "utf8"):
                shown = value.strip()[:40]
                return f"charset={shown} is not UTF-8: CloudEvents JSON is UTF-8 text"
    return None


def may_hold_long_integers(data: bytes | bytearray) -> bool:
    """Whether ``data`` may hold an integer of 19 digits or more, as every
    integer outside int64 is (so ``check_value`` must look at its numbers)."""
    if len(data) < 19:
        return False
    shape = data.translate(_DIGIT_TABLE, b" \t\r\n")
    return _NINETEEN_THEN_END in shape or shape.endswith(_NINETEEN)


def integer_problem(pointer: Pointer = ()) -> str:
    """What every judge says of an integer outside int64 at ``pointer``."""
    where = f"{_pointer_text(pointer)}: " if pointer else ""
    return (
        f"{where}an integer beyond 64 bits ({INT64_MIN} to {INT64_MAX}), which "
        "every judge refuses rather than round (RFC 7493 section 2.2)"
    )


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
        value = from_json(data, allow_inf_nan=False, catch_duplicate_keys=True)
    except ValueError as error:
        problem = encoding_problem(data)
        if problem is not None:
            raise EventError(problem) from None
        deep = too_deep(data)
        if deep is not None:
            raise EventError(nesting_problem(deep)) from None
        if str(error).startswith(_DUPLICATE_ERROR):
            raise EventError(_duplicate_message(data, str(error))) from None
        raise EventError(f"not valid JSON: {error}") from error
    # Else it cannot be that deep, nor hold an integer beyond int64.
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH or may_hold_long_integers(data):
        check_value(value)
    return value


# --- Names within an object are unique -------------------------------------
#
# RFC 8259 §4: "The names within an object SHOULD be unique"; when they are
# not, "the behavior of software that receives such an object is
# unpredictable" (the last value, the first, or an error). I-JSON (RFC 7493
# §2.3) says MUST NOT. Every judge refuses such text rather than keep one of
# the values: jiter (pydantic's own JSON parser, in C speed) finds them.

_DUPLICATE_ERROR = "Detected duplicate key"
DUPLICATE_WORDS = "appears twice in one object"


def duplicate_name_problem(data: bytes | bytearray) -> str | None:
    """The refusal of JSON text whose objects repeat a name, else None
    (also None for text that is not JSON: the reader says why)."""
    text = data if isinstance(data, bytes) else bytes(data)  # jiter reads bytes
    try:
        from_json(text, catch_duplicate_keys=True, cache_mode=False)
    except ValueError as error:
        if str(error).startswith(_DUPLICATE_ERROR):
            return _duplicate_message(data, str(error))
    return None


def one_json_value(data: bytes) -> bool:
    """Whether ``data`` is one JSON value whose objects' names are unique."""
    try:
        from_json(data, catch_duplicate_keys=True, cache_mode=False)
    except ValueError:
        return False
    return True


class _Members(list[tuple[str, Any]]):
    """An object's members in order, names repeated as written."""


def _duplicate_message(data: bytes | bytearray, error: str) -> str:
    """Where the first repeated name is, as a JSON pointer (read again by the
    standard library, keeping every member: rarely asked, for a message)."""
    where = error.removeprefix(_DUPLICATE_ERROR).strip()
    try:
        value = json.loads(data, object_pairs_hook=_Members)
    except (ValueError, RecursionError):
        return f"a name {where}: it {DUPLICATE_WORDS} (RFC 8259 section 4)"
    stack: list[tuple[Any, Pointer]] = [(value, ())]
    while stack:
        item, pointer = stack.pop()
        if isinstance(item, _Members):
            seen: set[str] = set()
            for name, _ in item:
                if name in seen:
                    return (
                        f"{_pointer_text(pointer + (name,))}: the name {name!r} "
                        f"{DUPLICATE_WORDS}; JSON names must be unique (RFC 8259 "
                        "section 4, RFC 7493 section 2.3), and every judge refuses "
                        "rather than keep one of the values"
                    )
                seen.add(name)
            stack.extend((child, pointer + (name,)) for name, child in reversed(item))
        elif isinstance(item, list):
            items = cast("Sequence[Any]", item)
            stack.extend(
                (child, pointer + (index,))
                for index, child in reversed(list(enumerate(items)))
            )
    return f"a name {where}: it {DUPLICATE_WORDS} (RFC 8259 section 4)"


SURROGATE = re.compile("[\ud800-\udfff]")


def check_value(value: Any) -> None:
    """``EventError`` for JSON no UTF-8 text can carry (a lone surrogate in a
    string or a name), a number no JSON number is (NaN, Infinity, 1e400), an
    integer beyond int64 or nesting more than ``MAX_DEPTH`` levels deep."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                raise EventError(f"the number {item} is not a JSON number (too large?)")
        elif isinstance(item, int) and not INT64_MIN <= item <= INT64_MAX:
            raise EventError(integer_problem(_pointer_to(value, item)))
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


def _pointer_to(value: Any, target: object) -> Pointer:
    """The JSON pointer of the first place (in document order) holding the
    very object ``target`` (rarely asked: for a message)."""
    stack: list[tuple[Any, Pointer]] = [(value, ())]
    while stack:
        item, pointer = stack.pop()
        if item is target:
            return pointer
        if isinstance(item, dict):
            members = cast("dict[str, Any]", item)
            stack.extend(
                (child, (*pointer, key)) for key, child in reversed(members.items())
            )
        elif isinstance(item, list):
            items = cast("Sequence[Any]", item)
            stack.extend(
                (items[index], (*pointer, index))
                for index in range(len(items) - 1, -1, -1)
            )
    return ()
