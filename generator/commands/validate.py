"""`evcat validate`: check event instances against the catalog.

Each event goes through a fast path first: jsonschema-rs validators of the
envelope schemas that `evcat generate` writes (envelope.py, the one
builder), compiled once per envelope shape, plus the payload's own validator
and the checks a schema cannot express (undeclared extensions, size).
Only an event that fails goes through ``instance.EventChecker``, which names
the precise rule and the JSON pointer of the offending value.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import jsonschema_rs
import orjson

from .. import vocabulary
from ..diagnostics import Diagnostic, Location, Severity, bounded
from ..envelope import envelope_schema
from ..event_checker import EventChecker, Problem, check_source, pointer_text
from ..model import CatalogSet, EventType
from ..rules import RULES, finding_severity
from ..engine.config import RunConfig
from ..engine.workers import no_collection
from ..engine.workers import run_shared as parallel
from ..runtime._reading import (
    INT64_MAX, INT64_MIN, deep_pointer, duplicate_name_problem, encoding_problem, integer_problem, may_hold_long_integers, nesting_problem,
    too_deep,
)

EVENT_SUFFIXES = (".json", ".jsonl", ".ndjson")


@dataclass(slots=True)
class Source:
    """One event as read: where it came from and its raw bytes."""

    file: str
    line: int
    index: int | None  # position in a batch array
    raw: bytes
    value: Any = None
    error: str | None = None
    column: int = 1
    parsed: bool = True  # JSON lines are parsed where they are checked (in the workers)
    rule: str = "CE-FORMAT"  # of ``error``
    pointer: tuple[str | int, ...] | None = None  # of ``error``, inside the event, where known

    def parse(self) -> None:
        if self.parsed:
            return
        self.parsed = True
        try:
            self.value = loads(self.raw)
        except ValueError as error:
            broken = _broken(self.file, self.raw, error)
            self.error, self.column, self.rule, self.pointer = broken.error, broken.column, broken.rule, broken.pointer


@dataclass
class Result:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    events: int = 0
    invalid: int = 0
    ordered: list[tuple[int, Diagnostic]] = field(default_factory=list)  # by input position


class FastValidator:
    def __init__(self, catalog_set: CatalogSet) -> None:
        self.catalog_set = catalog_set
        self.checker = EventChecker(catalog_set)
        self._envelopes: dict[tuple[str, str | None], Any] = {}
        self._shapes: dict[str, Any] = {}
        self._payloads: dict[tuple[str, str | None], Any] = {}
        self._declared: dict[tuple[str, str | None], frozenset[str]] = {}
        self._fulls: dict[tuple[str, str | None], Any] = {}

    def envelope(self, entry: EventType) -> Any:
        """The envelope schema of `evcat generate` for ``entry``, compiled once per shape.

        ``type`` and ``dataversion`` are already matched by the catalog lookup,
        descriptions do not validate and ``data`` is checked by the payload's
        own validator: without them, most event types share a few envelope
        shapes, so a catalog of 1,000 types compiles a handful of envelopes.
        """
        key = entry.key
        if key not in self._envelopes:
            schema = _strip_annotations(envelope_schema(entry, payload=False))
            properties = schema["properties"]
            properties["type"] = {"type": "string"}
            if "dataversion" in properties and entry.dataversion is not None:
                required = entry.attribute_map["dataversion"].required
                properties["dataversion"] = {"type": "string"} if required else {"type": ["string", "null"]}
            if entry.payload is not None:
                properties.pop("data", None)
                schema["required"] = [name for name in schema["required"] if name != "data"]
            shape = json.dumps(schema, sort_keys=True)
            if shape not in self._shapes:
                self._shapes[shape] = jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
            self._envelopes[key] = self._shapes[shape]
            self._payloads[key] = self.checker.validator(entry) if entry.payload is not None else None
            self._declared[key] = frozenset(entry.attribute_map) | frozenset(vocabulary.DATA_MEMBERS)
        return self._envelopes[key]

    def check(self, event: Any, wire_size: int) -> list[Problem]:
        if isinstance(event, dict):
            entry, problem = self.checker.find(event)
            if entry is not None and problem is None and self._quick(event, entry, wire_size):
                declared = self._declared[entry.key]
                undeclared = [name for name, value in event.items() if name not in declared and value is not None]
                return [
                    Problem("CE-EXTENSION-UNDECLARED", (name,), f"the catalog does not declare the extension attribute '{name}' for '{entry.type}'")
                    for name in undeclared
                ] + check_source(event.get("source"), entry)
        problems = self.checker.check(event, wire_size=wire_size)
        if isinstance(event, dict) and not any(finding_severity(p.rule, p.setting) is Severity.ERROR for p in problems):
            entry, _ = self.checker.find(event)
            if entry is not None:  # the schema is stricter than the named rules: report what it says
                for error in self._full(entry).iter_errors(event):
                    pointer = tuple(error.instance_path)
                    rule = "CE-DATA-SCHEMA" if pointer[:1] == ("data",) else "CE-ATTR-TYPE"
                    problems.append(Problem(rule, pointer, error.message))
        return problems

    def _full(self, entry: EventType) -> Any:
        """The whole self-contained envelope schema (for error reports only),
        compiled once per event type: 60,000 invalid events compiled it
        60,000 times (issue 30)."""
        if entry.key not in self._fulls:
            self._fulls[entry.key] = jsonschema_rs.Draft202012Validator(
                envelope_schema(entry, self.catalog_set.schemas), validate_formats=True)
        return self._fulls[entry.key]

    def _quick(self, event: dict[str, Any], entry: EventType, wire_size: int) -> bool:
        if any(wire_size > limit.bytes for limit in entry.profile.sizes):
            return False
        envelope = self.envelope(entry)
        payload = self._payloads[entry.key]
        if payload is None:
            if "data" in event or not envelope.is_valid(event):
                return False
        else:
            data = event.get("data")
            if data is None or not payload.is_valid(data):
                return False
            if not envelope.is_valid({name: value for name, value in event.items() if name != "data"}):
                return False
        return True


_ANNOTATIONS = ("description", "examples", "title", "$id", "$schema", "deprecated")


def _strip_annotations(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {key: _strip_annotations(value) for key, value in schema.items() if key not in _ANNOTATIONS}
    if isinstance(schema, list):
        return [_strip_annotations(item) for item in schema]
    return schema


# Limits of the reading layer (README, Limits). An event is nested at most
# MAX_DEPTH deep (the validators recurse; 128 is serde_json's limit too); one
# event (a line, or a whole JSON document) is at most MAX_EVENT_BYTES.
MAX_DEPTH = vocabulary.MAX_DEPTH
MAX_EVENT_BYTES = 16 * 1024 * 1024
MAX_INTEGER_DIGITS = 20  # 64-bit integers: all the judges compare them exactly
_READ_BLOCK = 1 << 20


class InputProblem(ValueError):
    """An event that is JSON but cannot be checked as a CloudEvent as it is
    (I-JSON, RFC 7493: no lone surrogates, numbers of IEEE 754 double range).
    ``pointer``: where in the event, when known (the message starts with it)."""

    def __init__(self, message: str, rule: str = "CE-FORMAT", pointer: tuple[str | int, ...] | None = None) -> None:
        super().__init__(message)
        self.msg = message
        self.rule = rule
        self.pointer = pointer


def read_sources(arguments: list[str]) -> Iterator[Source]:
    """Events from files, directories (recursively) and ``-`` (stdin), read
    as they are checked: memory does not grow with the input (JSON lines are
    read one line at a time; one JSON document is at most MAX_EVENT_BYTES)."""
    for argument in arguments:
        if argument == "-":
            yield from _split("<stdin>", sys.stdin.buffer)
        elif os.path.isdir(argument):
            for directory, subdirs, files in os.walk(argument):
                subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
                for name in sorted(files):
                    if name.endswith(EVENT_SUFFIXES):
                        yield from _read_file(os.path.join(directory, name))
        else:
            yield from _read_file(argument)


def _read_file(path: str) -> Iterator[Source]:
    display = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    try:
        handle = open(path, "rb")
    except OSError as error:
        yield Source(display, 1, None, b"", error=f"cannot read the file: {error.strerror or error}")
        return
    with handle:
        try:
            yield from _split(display, handle)
        except OSError as error:
            yield Source(display, 1, None, b"", error=f"cannot read the file: {error.strerror or error}")


def loads(raw: bytes) -> Any:
    """One JSON value, as the judges can check it. orjson (measured 1.7x
    faster here) for nearly every event; what it refuses is read again by the
    standard library for its error messages and for the valid JSON orjson
    refuses, with the guards that keep every later stage safe: NaN, Infinity
    and numbers beyond a double (1e400), integers beyond 64 bits, lone
    surrogates and nesting deeper than MAX_DEPTH are problems, never values."""
    if may_hold_long_integers(raw):  # orjson reads integers beyond 64 bits as floats
        return _careful_loads(raw)
    try:
        value = orjson.loads(raw)  # deeper than MAX_DEPTH is found by the caller (_check_depth)
    except orjson.JSONDecodeError:
        return _careful_loads(raw)
    _check_names(raw)
    return value


def _check_names(raw: bytes) -> None:
    """Names within an object are unique (RFC 8259 §4): orjson and the standard
    library keep the last value, the runtime's reader refuses (its words)."""
    problem = duplicate_name_problem(raw)
    if problem is not None:
        raise InputProblem(problem)


def _careful_loads(raw: bytes) -> Any:
    # Nesting is judged on the bytes first (runtime/_reading.py, the rule of
    # every judge): the standard library's parser recurses, and how deep it
    # gets depends on the Python version; within MAX_DEPTH it never fails.
    problem = encoding_problem(raw)  # UTF-8 only, no byte-order mark: the runtime's words
    if problem is not None:
        raise InputProblem(problem)
    deep = too_deep(raw)
    if deep is not None:
        raise InputProblem(nesting_problem(deep), pointer=deep)
    try:
        value = json.loads(raw, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except RecursionError:  # within MAX_DEPTH: only under a recursion limit set below it
        raise InputProblem(f"cannot be read within Python's recursion limit ({sys.getrecursionlimit()})") from None
    _check_values(value)
    _check_names(raw)
    return value


class _Refused:
    """A number the careful reader refuses, left in place of its value so that
    ``_check_values`` names its JSON pointer."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def _constant(name: str) -> Any:
    return _Refused(f"{name} is not a JSON number (RFC 8259 section 6)")


def _float(text: str) -> Any:
    number = float(text)
    if math.isinf(number):
        return _Refused(f"the number {text[:40]}{'...' if len(text) > 40 else ''} is beyond the range of a double (RFC 7493 section 2.2)")
    return number


def _int(text: str) -> Any:
    digits = len(text.lstrip("-"))
    number = int(text) if digits <= MAX_INTEGER_DIGITS else None
    if number is None or not INT64_MIN <= number <= INT64_MAX:
        return _Refused(integer_problem())
    return number


def _check_depth(value: Any) -> None:
    """Raise InputProblem when ``value`` nests deeper than MAX_DEPTH (no recursion)."""
    deep = deep_pointer(value)
    if deep is not None:
        raise InputProblem(nesting_problem(deep), pointer=deep)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_values(value: Any) -> None:
    """Raise InputProblem at the first refused number (CE-FORMAT) or lone
    surrogate, in a key or a value (CE-STRING-CHARS), in document order,
    naming its JSON pointer."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, pointer = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                raise InputProblem(
                    f"{pointer_text(pointer)}: holds a lone surrogate (U+{ord(found.group()):04X}), which is not a Unicode character",
                    "CE-STRING-CHARS", pointer,
                )
        elif isinstance(item, _Refused):
            raise InputProblem(f"{pointer_text(pointer)}: {item.message}", "CE-FORMAT", pointer)
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                stack.append((child, (*pointer, key)))
                stack.append((key, pointer))
        elif isinstance(item, list):
            stack.extend((item[index], (*pointer, index)) for index in range(len(item) - 1, -1, -1))


def _split(file: str, handle: BinaryIO) -> Iterator[Source]:
    """One JSON document (an event or a batch array), or JSON lines: a
    ``.jsonl``/``.ndjson`` file, or one whose first line is a JSON value by
    itself and is followed by more lines."""
    lines = _lines(handle)
    read: list[tuple[int, bytes]] = []  # every line read before deciding, blank ones too
    filled: list[tuple[int, bytes]] = []  # the first two that are not blank
    wanted = 1 if file.endswith((".jsonl", ".ndjson")) else 2
    for number, line in lines:
        read.append((number, line))
        if line.strip():
            filled.append((number, line))
            if len(filled) == wanted:
                break
    if not filled:
        if wanted == 2:
            yield _broken(file, b"", json.JSONDecodeError("Expecting value", "", 0))
        return
    if wanted == 1 or (len(filled) == 2 and filled[0][1] is not _TOO_LONG and _is_json(filled[0][1])):
        yield from _json_lines(file, itertools.chain(filled, lines))
        return
    # One document: the lines read so far and the rest, up to the limit.
    too_large = f"larger than {MAX_EVENT_BYTES:,} bytes (the limit of one event or batch); split it or write JSON lines"
    parts = [line for _, line in read]
    size = sum(len(part) + 1 for part in parts)
    if any(part is _TOO_LONG for part in parts) or size > MAX_EVENT_BYTES:
        yield Source(file, 1, None, b"", error=too_large)
        return
    for _, line in lines:
        size += len(line) + 1
        if line is _TOO_LONG or size > MAX_EVENT_BYTES:
            yield Source(file, 1, None, b"", error=too_large)
            return
        parts.append(line)
    raw = b"\n".join(parts)  # from the top of the file: line numbers of errors are the file's
    del parts
    try:
        value = loads(raw)
        if not isinstance(value, list):
            _check_depth(value)
    except UnicodeDecodeError as error:
        yield Source(file, 1, None, raw, error=f"not UTF-8 text: {error.reason}")
        return
    except ValueError as error:
        # A batch whose items are JSON but one of them is beyond what can be
        # checked (NaN, 1e400, a 400-digit integer, a lone surrogate, nesting
        # beyond the limit): that item is reported, the others are checked.
        spans = _array_items(raw) if isinstance(error, InputProblem) else None
        if spans is not None:
            yield from _batch_items(file, raw, spans)
        else:
            yield _broken(file, raw, error)
        return
    if isinstance(value, list):
        # Every item at its own line and column (issue 30: an invalid item was
        # reported at 1:1), found from the structure of the batch.
        spans = _array_items(raw)
        positions = _starts(raw, spans) if spans is not None and len(spans) == len(value) else None
        for index, item in enumerate(value):
            source = _batch_item(file, index, item)
            if positions is not None:
                source.line, source.column = next(positions)
            yield source
    else:
        yield Source(file, 1, None, raw, value)


def _batch_item(file: str, index: int, item: Any) -> Source:
    """Item ``index`` of a batch, parsed: written out again (``_compact``,
    for its size on the wire) unless it nests deeper than the limit."""
    try:
        _check_depth(item)
    except InputProblem as problem:
        return Source(file, 1, index, b"", error=problem.msg, rule=problem.rule, pointer=problem.pointer)
    return Source(file, 1, index, _compact(item), item)


def _batch_items(file: str, raw: bytes, spans: list[tuple[int, int]]) -> Iterator[Source]:
    """The items of a batch at ``spans`` (see ``_array_items``), each read by
    itself: a broken one is reported at its own line, with its index."""
    positions = _starts(raw, spans)
    for index, (start, end) in enumerate(spans):
        line, column = next(positions)
        item = raw[start:end]
        try:
            value = loads(item)
        except ValueError as error:
            broken = _broken(file, item, error)
            broken.index = index
            if broken.line == 1:
                broken.column += column - 1
            broken.line += line - 1
            yield broken
            continue
        source = _batch_item(file, index, value)
        source.line, source.column = line, column
        yield source


def _starts(raw: bytes, spans: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """(line, column) of the start of each span, in one pass over ``raw``
    (a batch on one line of 16 MiB stays linear); the column counts
    characters, as the JSON decoder's does."""
    line, column, counted = 1, 1, 0
    for start, _ in spans:
        newlines = raw.count(b"\n", counted, start)
        if newlines:
            line += newlines
            line_start = raw.rfind(b"\n", counted, start) + 1
            column = 1 + len(raw[line_start:start].decode("utf-8", "replace"))
        else:
            column += len(raw[counted:start].decode("utf-8", "replace"))
        counted = start
        yield line, column


# The tokens that give a JSON text its structure: strings (whole, so that
# brackets inside them do not count), brackets and commas; a lone quote is
# a string that does not end.
_STRUCTURE = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[][{},"]', re.DOTALL)
_BLANK = b" \t\r\n"


def _array_items(raw: bytes) -> list[tuple[int, int]] | None:
    """(start, end) of each item of the JSON array ``raw``, found from its
    structure alone (no value is parsed, no recursion: any depth), or None
    when ``raw`` is no array of that shape (its error is then the file's)."""
    start = len(raw) - len(raw.lstrip(_BLANK))
    if raw[start:start + 1] != b"[":
        return None
    spans: list[tuple[int, int]] = []
    closing: list[int] = []  # the bracket each open one needs
    item = start + 1
    for match in _STRUCTURE.finditer(raw, start):
        at = match.start()
        token = raw[at]
        if token == 0x22:  # '"'
            if match.end() - at == 1:
                return None  # a string that does not end
        elif token in (0x5B, 0x7B):  # '[', '{'
            closing.append(token + 2)
        elif token in (0x5D, 0x7D):  # ']', '}'
            if not closing or closing.pop() != token:
                return None
            if not closing:  # the end of the array
                if raw[at + 1:].strip(_BLANK):
                    return None
                last = raw[item:at].strip(_BLANK)
                if last:
                    spans.append(_span(raw, item, at))
                elif spans:
                    return None  # a comma before the closing bracket
                return spans
        elif len(closing) == 1:  # a comma between two items
            if not raw[item:at].strip(_BLANK):
                return None
            spans.append(_span(raw, item, at))
            item = at + 1
    return None


def _span(raw: bytes, start: int, end: int) -> tuple[int, int]:
    """``start``..``end`` without the blanks around the item."""
    while start < end and raw[start] in _BLANK:
        start += 1
    while end > start and raw[end - 1] in _BLANK:
        end -= 1
    return start, end


_TOO_LONG = bytes(bytearray(b"<too long>"))  # a distinct object: a line longer than MAX_EVENT_BYTES (its bytes are not kept)


def _lines(handle: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(line number, line without its line feed) of ``handle``, read in
    blocks; a line longer than MAX_EVENT_BYTES is read past, never held, and
    given as ``_TOO_LONG``."""
    number = 0
    rest = b""
    skipping = False
    while True:
        block = handle.read(_READ_BLOCK)
        if not block:
            break
        lines = (rest + block).split(b"\n") if rest else block.split(b"\n")
        rest = lines.pop()
        for line in lines:
            number += 1
            if skipping:
                skipping = False
                yield number, _TOO_LONG
            elif len(line) > MAX_EVENT_BYTES:
                yield number, _TOO_LONG
            else:
                yield number, line
        if len(rest) > MAX_EVENT_BYTES:
            skipping, rest = True, b""
    if skipping:
        yield number + 1, _TOO_LONG
    elif rest:
        yield number + 1, rest


def _is_json(line: bytes) -> bool:
    try:
        loads(line)
    except ValueError:
        return False
    return True


def _json_lines(file: str, lines: Iterable[tuple[int, bytes]]) -> Iterator[Source]:
    for number, line in lines:
        if line is _TOO_LONG:
            yield Source(file, number, None, b"", error=f"larger than {MAX_EVENT_BYTES:,} bytes (the limit of one event)")
        elif line.strip():
            yield Source(file, number, None, line[:-1] if line.endswith(b"\r") else line, parsed=False)


def _broken(file: str, raw: bytes, error: ValueError) -> Source:
    if isinstance(error, InputProblem):
        return Source(file, 1, None, raw, error=error.msg, rule=error.rule, pointer=error.pointer)
    line = getattr(error, "lineno", 1)
    column = getattr(error, "colno", 1)
    message = getattr(error, "msg", str(error))
    return Source(file, line, None, raw, error=f"not valid JSON: {message}", column=column)


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# An event id longer than this is shown by its prefix and length (CloudEvents
# ids are short; a long one is reported by CE-ID rules, not repeated).
MAX_ID_SHOWN = 256

# Below this many events, starting worker processes costs more than it saves.
PARALLEL_MIN_EVENTS = 5_000


# Events are read and checked in chunks of this many (or CHUNK_BYTES of
# input): memory depends on the chunk, not on the input.
CHUNK_EVENTS = 50_000
CHUNK_BYTES = 16 * 1024 * 1024


def validate(catalog_set: CatalogSet, arguments: list[str], config: RunConfig = RunConfig(),
             emit: Callable[[list[Diagnostic]], None] | None = None) -> Result:
    """Check every event; a broken file or event never stops the others.

    ``emit``: called with each chunk's diagnostics, in input order, as soon
    as the chunk is checked; they are then not kept in the result (memory
    stays that of one chunk however many events are invalid, issue 30)."""
    validator = FastValidator(catalog_set)
    result = Result()
    with no_collection():  # millions of short-lived containers, no cycles
        offset = 0
        for chunk in _chunks(read_sources(arguments)):
            part = _validate(validator, chunk, config)
            result.events += part.events
            result.invalid += part.invalid
            if emit is not None:
                emit(part.diagnostics)
            else:
                result.diagnostics.extend(part.diagnostics)
                result.ordered.extend((offset + position, diagnostic) for position, diagnostic in part.ordered)
            offset += len(chunk)
            del chunk, part
            _give_back()
    return result


def _give_back() -> None:
    """Return the memory of a checked chunk to the system (glibc keeps freed
    blocks in its heap): the workers forked for the next chunk then do not
    carry it in their resident size (issue 30: all processes count)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


def _chunks(sources: Iterator[Source]) -> Iterator[list[Source]]:
    chunk: list[Source] = []
    size = 0
    for source in sources:
        chunk.append(source)
        size += len(source.raw)
        if len(chunk) >= CHUNK_EVENTS or size >= CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


_TYPE_FIELD = re.compile(rb'"type"\s*:\s*"([^"\\]*)"')


def _validate(validator: FastValidator, sources: list[Source], config: RunConfig) -> Result:
    workers = min(config.workers(len(sources)), 8)
    if len(sources) < PARALLEL_MIN_EVENTS or workers < 2:
        return _check_range(validator, sources, list(range(len(sources))))
    # Events of one type go to one worker, so each compiles only its share of
    # the validators. The type is read from the raw bytes; a wrong guess costs
    # speed, never correctness (any worker can check any event).
    # More buckets than workers: the pool hands them out as workers free up.
    buckets: list[list[int]] = [[] for _ in range(workers * 8)]
    seen: set[bytes] = set()
    for position, source in enumerate(sources):
        match = _TYPE_FIELD.search(source.raw) if not source.parsed else None
        name = match.group(1) if match else str(position).encode()
        if match:
            seen.add(name)
        buckets[zlib.crc32(name) % len(buckets)].append(position)
    # Input comes in chunks, each checked by newly forked workers: the
    # validators of the types seen are compiled here, once for the whole run
    # (a type's validators once per chunk and worker would cost more).
    for entry in validator.catalog_set.events:
        if entry.type.encode() in seen:
            validator.envelope(entry)
    # fork: workers share the events and the catalog copy-on-write; only
    # positions go out and (few) diagnostics come back.
    parts = list(parallel(_check_shared, (validator, sources), [bucket for bucket in buckets if bucket], workers))
    result = Result()
    ordered: list[tuple[int, Diagnostic]] = []
    for part in parts:
        ordered.extend(part.ordered)
        result.events += part.events
        result.invalid += part.invalid
    result.diagnostics = [diagnostic for _, diagnostic in sorted(ordered, key=lambda item: item[0])]
    return result


def _check_shared(shared: tuple[FastValidator, list[Source]], positions: list[int]) -> Result:
    validator, sources = shared
    result = _check_range(validator, sources, positions)
    result.diagnostics = []  # the ordered copy travels back
    return result


def _check_range(validator: FastValidator, sources: list[Source], positions: list[int]) -> Result:
    result = Result()
    for position in positions:
        source = sources[position]
        source.parse()
        result.events += 1
        _check_one(validator, source, position, result)
        source.value = None  # checked: its parsed value is not kept (memory stays that of one chunk)
    return result


def _check_one(validator: FastValidator, source: Source, position: int, result: Result) -> None:
    """One event's findings into ``result``."""
    where = f"event {source.index}" if source.index is not None else "event"
    if source.error is not None:
        result.invalid += 1
        labelled = source.rule != "CE-FORMAT" or source.index is not None  # "event 3: ..." for an item of a batch
        extra = (("index", source.index), ("id", None), ("pointer", pointer_text(source.pointer))) if source.pointer is not None else ()
        diagnostic = Diagnostic(source.rule, RULES[source.rule].severity, bounded(f"{where}: {source.error}" if labelled else source.error),
                                Location(source.file, source.line, source.column), extra=extra)
        result.diagnostics.append(diagnostic)
        result.ordered.append((position, diagnostic))
        return
    try:
        problems = validator.check(source.value, len(source.raw))
    except (RecursionError, ValueError, OverflowError, UnicodeError) as error:  # one event never stops the others
        try:
            _check_depth(source.value)  # the usual cause: nesting the validators do not follow
            problems = [Problem("CE-FORMAT", (), f"cannot be checked: {error}")]
        except InputProblem as deep:
            problems = [Problem("CE-FORMAT", (), deep.msg)]
    if not problems:
        return
    if any(finding_severity(p.rule, p.setting) is Severity.ERROR for p in problems):
        result.invalid += 1
    event_id = source.value.get("id") if isinstance(source.value, dict) else None
    if isinstance(event_id, str) and len(event_id) > MAX_ID_SHOWN:  # a hostile id is not repeated per problem
        event_id = f"{event_id[:MAX_ID_SHOWN]}... ({len(event_id):,} characters)"
    for problem in problems:
        label = f"{where} id={event_id!r}" if isinstance(event_id, str) else where
        message = problem.message
        pointer = pointer_text(problem.pointer)
        if not message.startswith(pointer):
            message = f"{pointer}: {message}"
        diagnostic = Diagnostic(
            problem.rule, finding_severity(problem.rule, problem.setting), bounded(f"{label}: {message}"),
            Location(source.file, source.line, source.column),
            extra=(("index", source.index), ("id", event_id), ("pointer", pointer)),
        )
        result.diagnostics.append(diagnostic)
        result.ordered.append((position, diagnostic))
