"""`evcat validate`: check event instances against the catalog.

Each event goes through a fast path first: jsonschema-rs validators of the
envelope schemas that `evcat generate` writes (envelope.py, the one
builder), compiled once per envelope shape, plus the payload's own validator
and the checks a schema cannot express (undeclared extensions, int32
sequence, size).
Only an event that fails goes through ``instance.EventChecker``, which names
the precise rule and the JSON pointer of the offending value.
"""

from __future__ import annotations

import gc
import json
import os
import re
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema_rs
import orjson

from . import vocabulary
from .diagnostics import Diagnostic, Location
from .envelope import envelope_schema
from .instance import EventChecker, Problem, pointer_text
from .model import CatalogSet, EventType
from .rules import RULES
from .workers import run_shared as parallel
from .workers import worker_count as workers_for

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

    def parse(self) -> None:
        if self.parsed:
            return
        self.parsed = True
        try:
            self.value = loads(self.raw)
        except ValueError as error:
            broken = _broken(self.file, self.raw, error)
            self.error, self.column = broken.error, broken.column


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
                ]
        problems = self.checker.check(event, wire_size=wire_size)
        if isinstance(event, dict) and not any(RULES[p.rule].severity.name == "ERROR" for p in problems):
            entry, _ = self.checker.find(event)
            if entry is not None:  # the schema is stricter than the named rules: report what it says
                for error in self._full(entry).iter_errors(event):
                    pointer = tuple(error.instance_path)
                    rule = "CE-DATA-SCHEMA" if pointer[:1] == ("data",) else "CE-ATTR-TYPE"
                    problems.append(Problem(rule, pointer, error.message))
        return problems

    def _full(self, entry: EventType) -> Any:
        """The whole self-contained envelope schema (for error reports only)."""
        return jsonschema_rs.Draft202012Validator(envelope_schema(entry, self.catalog_set.schemas), validate_formats=True)

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
        sequence = event.get("sequence")
        if isinstance(sequence, str) and entry.sequencetype and entry.sequencetype.lower() == "integer":
            if not -(2**31) <= int(sequence) <= 2**31 - 1:
                return False
        return True


_ANNOTATIONS = ("description", "examples", "title", "$id", "$schema", "deprecated")


def _strip_annotations(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {key: _strip_annotations(value) for key, value in schema.items() if key not in _ANNOTATIONS}
    if isinstance(schema, list):
        return [_strip_annotations(item) for item in schema]
    return schema


def read_sources(arguments: list[str]) -> Iterator[Source]:
    """Events from files, directories (recursively) and ``-`` (stdin)."""
    for argument in arguments:
        if argument == "-":
            yield from _split("<stdin>", sys.stdin.buffer.read())
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
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        yield Source(display, 1, None, b"", error=f"cannot read the file: {error.strerror or error}")
        return
    yield from _split(display, raw)


def loads(raw: bytes) -> Any:
    """orjson (measured 1.7x faster here); the standard library where orjson
    refuses valid JSON (integers beyond 64 bits) and for its error messages."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def _split(file: str, raw: bytes) -> Iterator[Source]:
    """One JSON document (an event or a batch array), or JSON lines."""
    if file.endswith((".jsonl", ".ndjson")):
        yield from _json_lines(file, raw.splitlines())
        return
    try:
        value = loads(raw)
    except UnicodeDecodeError as error:
        yield Source(file, 1, None, raw, error=f"not UTF-8 text: {error.reason}")
        return
    except ValueError as error:
        lines = raw.splitlines()
        if file.endswith((".jsonl", ".ndjson")) or _first_line_is_json(lines):
            yield from _json_lines(file, lines)
        else:
            yield _broken(file, raw, error)
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield Source(file, 1, index, _compact(item), item)
    else:
        yield Source(file, 1, None, raw, value)


def _first_line_is_json(lines: list[bytes]) -> bool:
    """JSON lines: more than one line, and the first one a JSON value by itself."""
    filled = [line for line in lines if line.strip()]
    if len(filled) < 2:
        return False
    try:
        loads(filled[0])
    except ValueError:
        return False
    return True


def _json_lines(file: str, lines: list[bytes]) -> Iterator[Source]:
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield Source(file, number, None, line, parsed=False)


def _broken(file: str, raw: bytes, error: ValueError) -> Source:
    line = getattr(error, "lineno", 1)
    column = getattr(error, "colno", 1)
    message = getattr(error, "msg", str(error))
    return Source(file, line, None, raw, error=f"not valid JSON: {message}", column=column)


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# Below this many events, starting worker processes costs more than it saves.
PARALLEL_MIN_EVENTS = 5_000


def validate(catalog_set: CatalogSet, arguments: list[str]) -> Result:
    """Check every event; a broken file or event never stops the others."""
    validator = FastValidator(catalog_set)
    sources = list(read_sources(arguments))
    collecting = gc.isenabled()
    gc.disable()  # millions of short-lived containers, no cycles
    try:
        return _validate(validator, sources)
    finally:
        if collecting:
            gc.enable()


_TYPE_FIELD = re.compile(rb'"type"\s*:\s*"([^"\\]*)"')


def _validate(validator: FastValidator, sources: list[Source]) -> Result:
    workers = min(workers_for(len(sources)), 8)
    if len(sources) < PARALLEL_MIN_EVENTS or workers < 2:
        return _check_range(validator, sources, list(range(len(sources))))
    # Events of one type go to one worker, so each compiles only its share of
    # the validators. The type is read from the raw bytes; a wrong guess costs
    # speed, never correctness (any worker can check any event).
    # More buckets than workers: the pool hands them out as workers free up.
    buckets: list[list[int]] = [[] for _ in range(workers * 8)]
    for position, source in enumerate(sources):
        match = _TYPE_FIELD.search(source.raw) if not source.parsed else None
        name = match.group(1) if match else str(position).encode()
        buckets[zlib.crc32(name) % len(buckets)].append(position)
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
        where = f"event {source.index}" if source.index is not None else "event"
        if source.error is not None:
            result.invalid += 1
            diagnostic = Diagnostic("CE-FORMAT", RULES["CE-FORMAT"].severity, source.error, Location(source.file, source.line, source.column))
            result.diagnostics.append(diagnostic)
            result.ordered.append((position, diagnostic))
            continue
        problems = validator.check(source.value, len(source.raw))
        if not problems:
            continue
        if any(RULES[p.rule].severity.name == "ERROR" for p in problems):
            result.invalid += 1
        event_id = source.value.get("id") if isinstance(source.value, dict) else None
        for problem in problems:
            label = f"{where} id={event_id!r}" if isinstance(event_id, str) else where
            message = problem.message
            pointer = pointer_text(problem.pointer)
            if not message.startswith(pointer):
                message = f"{pointer}: {message}"
            diagnostic = Diagnostic(
                problem.rule, RULES[problem.rule].severity, f"{label}: {message}",
                Location(source.file, source.line, source.column),
                extra=(("index", source.index), ("id", event_id), ("pointer", pointer)),
            )
            result.diagnostics.append(diagnostic)
            result.ordered.append((position, diagnostic))
    return result
