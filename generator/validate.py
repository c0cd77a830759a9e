"""`evcat validate`: check event instances against the catalog.

Each event goes through a fast path first: jsonschema-rs validators of the
envelope schemas that `evcat generate` writes (render/jsonschema.py),
compiled once per (type, dataversion), plus the few checks a schema cannot
express (undeclared extensions, string characters, int32 sequence, size).
Only an event that fails goes through ``instance.EventChecker``, which names
the precise rule and the JSON pointer of the offending value.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema_rs

from .diagnostics import Diagnostic, Location
from .instance import CE_SIZE, EventChecker, Problem, pointer_text
from .model import CatalogSet, EventType
from .render.jsonschema import envelope_schema, payload_id, payload_schema
from .rules import RULES

EVENT_SUFFIXES = (".json", ".jsonl", ".ndjson")
_BAD_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]")
_CORE = frozenset(
    {"specversion", "id", "source", "type", "datacontenttype", "dataschema", "subject", "time", "data",
     "data_base64", "dataversion", "dataref", "sequence", "sequencetype"}
)


@dataclass
class Source:
    """One event as read: where it came from and its raw bytes."""

    file: str
    line: int
    index: int | None  # position in a batch array
    raw: bytes
    value: Any = None
    error: str | None = None
    column: int = 1


@dataclass
class Result:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    events: int = 0
    invalid: int = 0


class FastValidator:
    def __init__(self, catalog_set: CatalogSet) -> None:
        self.checker = EventChecker(catalog_set)
        resources = [
            (payload_id(event), payload_schema(event, catalog_set))
            for event in catalog_set.events
            if event.payload is not None
        ]
        self.registry = jsonschema_rs.Registry(resources) if resources else None
        self._envelopes: dict[tuple[str, str | None], Any] = {}
        self._declared: dict[tuple[str, str | None], frozenset[str]] = {}

    def envelope(self, entry: EventType) -> Any:
        key = entry.key
        if key not in self._envelopes:
            options: dict[str, Any] = {"validate_formats": True}
            if self.registry is not None:
                options["registry"] = self.registry
            self._envelopes[key] = jsonschema_rs.Draft202012Validator(envelope_schema(entry), **options)
            self._declared[key] = _CORE | {extension.name for extension in entry.extensions}
        return self._envelopes[key]

    def check(self, event: Any, wire_size: int) -> list[Problem]:
        if isinstance(event, dict):
            entry, problem = self.checker.find(event)
            if entry is not None and problem is None and self._quick(event, entry, wire_size):
                undeclared = [name for name in event if name not in self._declared[entry.key]]
                return [
                    Problem("CE-EXTENSION-UNDECLARED", (name,), f"the catalog does not declare the extension attribute '{name}' for '{entry.type}'")
                    for name in undeclared
                ]
        problems = self.checker.check(event, wire_size=wire_size)
        if isinstance(event, dict) and not any(RULES[p.rule].severity.name == "ERROR" for p in problems):
            entry, _ = self.checker.find(event)
            if entry is not None:  # the schema is stricter than the named rules: report what it says
                for error in self.envelope(entry).iter_errors(event):
                    pointer = tuple(error.instance_path)
                    rule = "CE-DATA-SCHEMA" if pointer[:1] == ("data",) else "CE-ATTR-TYPE"
                    problems.append(Problem(rule, pointer, error.message))
        return problems

    def _quick(self, event: dict[str, Any], entry: EventType, wire_size: int) -> bool:
        if wire_size > CE_SIZE or not self.envelope(entry).is_valid(event):
            return False
        for value in event.values():
            if isinstance(value, str) and _BAD_CHARS.search(value):
                return False
        sequence = event.get("sequence")
        if isinstance(sequence, str) and entry.sequencetype and entry.sequencetype.lower() == "integer":
            if not -(2**31) <= int(sequence) <= 2**31 - 1:
                return False
        return True


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


def _split(file: str, raw: bytes) -> Iterator[Source]:
    """One JSON document (an event or a batch array), or JSON lines."""
    try:
        value = json.loads(raw)
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
        json.loads(filled[0])
    except ValueError:
        return False
    return True


def _json_lines(file: str, lines: list[bytes]) -> Iterator[Source]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield Source(file, number, None, line, json.loads(line))
        except ValueError as error:
            source = _broken(file, line, error)
            source.line = number
            yield source


def _broken(file: str, raw: bytes, error: ValueError) -> Source:
    line = getattr(error, "lineno", 1)
    column = getattr(error, "colno", 1)
    message = getattr(error, "msg", str(error))
    return Source(file, line, None, raw, error=f"not valid JSON: {message}", column=column)


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def validate(catalog_set: CatalogSet, arguments: list[str]) -> Result:
    validator = FastValidator(catalog_set)
    result = Result()
    for source in read_sources(arguments):
        result.events += 1
        where = f"event {source.index}" if source.index is not None else "event"
        if source.error is not None:
            result.invalid += 1
            result.diagnostics.append(
                Diagnostic("CE-FORMAT", RULES["CE-FORMAT"].severity, source.error, Location(source.file, source.line, source.column))
            )
            continue
        problems = validator.check(source.value, len(source.raw))
        if any(RULES[p.rule].severity.name == "ERROR" for p in problems):
            result.invalid += 1
        event_id = source.value.get("id") if isinstance(source.value, dict) else None
        for problem in problems:
            label = f"{where} id={event_id!r}" if isinstance(event_id, str) else where
            message = problem.message
            pointer = pointer_text(problem.pointer)
            if not message.startswith(pointer):
                message = f"{pointer}: {message}"
            result.diagnostics.append(
                Diagnostic(
                    problem.rule, RULES[problem.rule].severity, f"{label}: {message}",
                    Location(source.file, source.line, source.column),
                    extra=(("index", source.index), ("id", event_id), ("pointer", pointer)),
                )
            )
    return result
