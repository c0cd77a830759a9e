"""`evcat import events`: a catalog inferred from sample CloudEvents (contract §10).

The samples are read as ``evcat validate`` reads events (JSON files, JSON
arrays as batches, JSON lines, directories; with orjson, and what orjson
refuses, nests too deeply or holds integers beyond 64 bits by validate's own
careful reader, ``commands/validate``), so what this import counts as one
event, or refuses, is what the judge will. Each (``type``, ``dataversion``) seen becomes one event type
whose payload schema accepts every sample of it:

- JSON types as sent: ``integer`` when every number is an integer, else
  ``number``; ``null`` beside a type makes it nullable (``type: [T, "null"]``);
  values of several types become an ``anyOf`` with one branch per type.
- ``required``: the properties present in every sample object.
- ``format``: the first of ``FORMATS`` that every string value matches, as
  the payload judges read it (the pinned schema of ``envelope.pinned``,
  compiled by jsonschema-rs with format assertion, like ``evcat validate``).
- ``enum``: strings with no format, at least ``ENUM_MIN_SAMPLES`` values and
  at most ``ENUM_MAX_VALUES`` distinct ones (a small closed set).
- Nested objects and arrays: the values at one place in every sample are
  merged (array items together). An object whose keys vary a lot (``is_map``)
  is a map: ``additionalProperties`` with the schema of all its values.

Context attributes: the most common ``source`` is the producer's, an event
type whose samples name another one gets it as its ``source``, and varying
sources are a note (with the URI template they suggest); ``subject``,
``dataref``, ``datacontenttype``, ``dataschema``, ``sequence`` and the
extension attributes seen are declared (an extension is required when every
sample carries it). A few small samples are kept as ``examples``.

What cannot be carried is a located note (file, line, JSON pointer): input
that is not JSON or not a CloudEvent, binary data (``data_base64``), samples
of a type that carry data where others do not, a ``dataversion`` that is not
semver, extension values of several types.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson

from .. import vocabulary
from ..engine.workers import no_collection
from ..envelope import pinned
from ..runtime._reading import may_hold_long_integers, nesting_problem, too_deep
from ..string_formats import is_semver, is_uri, is_uri_reference
from . import Imported, Note, Options

FORMATS = ("date-time", "date", "uuid", "email", "uri")  # tried in this order; the first that every value matches
ENUM_MIN_SAMPLES = 20  # an enum needs at least this many values ...
ENUM_MAX_VALUES = 10  # ... and at most this many distinct ones
MAP_MIN_KEYS = 20  # an object is a map when its samples name at least this many distinct keys
MAP_MAX_FILL = 0.5  # ... and one sample holds on average at most this share of them
EXAMPLES = 3  # samples kept as examples per event type: the first ones ...
EXAMPLE_MAX_BYTES = 1024  # ... no larger than this (compact JSON)
MAX_NOTES_PER_KIND = 20  # notes of one kind per file; the rest are counted in one note
DEFAULT_DATAVERSION = "1.0.0"  # for samples with data and no dataversion

# CloudEvents 1.0.2 §3.1 (core) and the attributes the catalog format names
# (§1: dataversion; the dataref and sequence extensions): not extensions here.
CORE = frozenset(("specversion", "id", "source", "type", "datacontenttype", "dataschema", "subject", "time", "data",
                  "data_base64", "dataversion", "dataref", "sequence", "sequencetype"))
_EXTENSION_NAME = re.compile(r"[a-z0-9]+\Z")  # CloudEvents 1.0.2 §3.1.4 (rule CE-ATTR-NAME)
_INT32 = (-(2**31), 2**31 - 1)


# -- payload schemas -------------------------------------------------------

_FORMAT_CHECKS = {
    name: jsonschema_rs.Draft202012Validator(
        {"type": "array", "items": pinned({"type": "string", "format": name})}, validate_formats=True
    )
    for name in FORMATS
}


def string_format(values: Sequence[str]) -> str | None:
    """The first of ``FORMATS`` that every one of ``values`` matches, as the
    payload judges read a schema with that format (one jsonschema-rs call per
    format over all values)."""
    for name in FORMATS:
        check = _FORMAT_CHECKS[name]
        # a few values first: a format that does not fit is ruled out without
        # handing every value to jsonschema-rs (bench/import_events_bench.py)
        if check.is_valid(list(values[:8])) and (len(values) <= 8 or check.is_valid(list(values))):
            return name
    return None


def is_map(distinct: int, total: int, objects: int) -> bool:
    """Whether ``objects`` objects with ``total`` keys, ``distinct`` of them
    different, are a map (keys are data) rather than a record (keys are
    names): many distinct keys, each object holding few of them."""
    return distinct >= MAP_MIN_KEYS and total / objects <= MAP_MAX_FILL * distinct


_NULL = type(None)
_ORDER = (dict, list, str, int, bool)  # branch order in an anyOf (float joins int as "number")


def infer(values: Sequence[Any]) -> dict[str, Any]:
    """A JSON Schema that accepts each of ``values`` (JSON data, at least one)."""
    kinds = set(map(type, values))
    if len(kinds) == 1:
        groups: dict[type, list[Any]] = {kinds.pop(): list(values)}
    else:
        groups = {}
        for value in values:
            groups.setdefault(type(value), []).append(value)
    if float in groups:
        groups[int] = groups.get(int, []) + groups.pop(float)
        numbers = "number"
    else:
        numbers = "integer"
    branches = [_infer_kind(kind, groups[kind], numbers) for kind in _ORDER if kind in groups]
    if _NULL in groups:
        if not branches:
            return {"type": "null"}
        if len(branches) == 1:
            branch = branches[0]
            branch["type"] = [branch["type"], "null"]
            if "enum" in branch:
                branch["enum"] = [*branch["enum"], None]
            return branch
        branches.append({"type": "null"})
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


def _infer_kind(kind: type, values: list[Any], numbers: str) -> dict[str, Any]:
    if kind is dict:
        return _infer_object(values)
    if kind is list:
        items = list(chain.from_iterable(values))
        return {"type": "array", "items": infer(items)} if items else {"type": "array"}
    if kind is str:
        distinct = list(dict.fromkeys(values))
        format_ = string_format(distinct)
        if format_ is not None:
            return {"type": "string", "format": format_}
        if len(values) >= ENUM_MIN_SAMPLES and len(distinct) <= ENUM_MAX_VALUES:
            return {"type": "string", "enum": sorted(distinct)}
        return {"type": "string"}
    if kind is int:
        return {"type": numbers}
    return {"type": "boolean"}


def _infer_object(objects: list[dict[str, Any]]) -> dict[str, Any]:
    keys = list(dict.fromkeys(chain.from_iterable(objects)))  # first seen first (C loops: bench/import_events_bench.py)
    if not keys:
        return {"type": "object"}
    if is_map(len(keys), sum(map(len, objects)), len(objects)):
        return {"type": "object", "additionalProperties": infer(list(chain.from_iterable(map(dict.values, objects))))}
    properties, required = {}, []
    for key in keys:
        try:
            values = list(map(itemgetter(key), objects))  # in every object (most keys): a loop in C
        except KeyError:
            values = [value[key] for value in objects if key in value]
        properties[key] = infer(values)
        if len(values) == len(objects):
            required.append(key)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


# -- reading the samples ---------------------------------------------------


class _Where:
    """(file, line, index in a batch) of each sample of a group, found when asked
    (notes are few; the samples are many)."""

    def __init__(self, samples: _Samples, positions: list[int]) -> None:
        self.samples, self.positions = samples, positions

    def __getitem__(self, item: int) -> tuple[str, int, int | None]:
        return self.samples.where(self.positions[item])

    def __len__(self) -> int:
        return len(self.positions)

    def __iter__(self) -> Iterator[tuple[str, int, int | None]]:
        return map(self.samples.where, self.positions)

    def extend(self, other: _Where) -> None:
        self.positions = self.positions + other.positions

    def files(self) -> list[str]:
        if len(self.samples.files) == 1:
            return [self.samples.files[0][0]]
        return sorted({self.samples.files[bisect_right(self.samples.starts, p) - 1][0] for p in self.positions})


@dataclass
class _Group:
    """The samples of one (type, dataversion)."""

    type: str
    dataversion: str | None
    events: list[dict[str, Any]]
    where: _Where


@dataclass
class _Notes:
    """Notes, at most ``MAX_NOTES_PER_KIND`` per (file, message kind)."""

    notes: list[Note] = field(default_factory=list)
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(self, file: str, line: int | None, index: int | None, pointer: str, message: str, kind: str = "not carried",
            column: int | None = None, family: str | None = None) -> None:
        key = (file, family or message)
        self.counts[key] += 1
        if self.counts[key] <= MAX_NOTES_PER_KIND:
            where = f"event {index} of the batch: " if index is not None else ""
            self.notes.append(Note(file, pointer, where + message, line, column or (1 if line else None), kind))

    def finish(self) -> list[Note]:
        for (file, family), count in self.counts.items():
            if count > MAX_NOTES_PER_KIND:
                self.notes.append(Note(file, "", f"{count - MAX_NOTES_PER_KIND} more like '{family}' not listed"))
        return self.notes


def _pointer(*parts: str | int) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def _not_a_cloudevent(value: Any) -> tuple[str, str] | None:
    """Why ``value`` is not a structured-mode CloudEvent (CloudEvents 1.0.2
    §3.1.1 required attributes, JSON format §3), with the JSON pointer."""
    if not isinstance(value, dict):
        return "", f"not a CloudEvent: a JSON {type(value).__name__.replace('dict', 'object')}, not an object"
    if value.get("specversion") != vocabulary.SPECVERSION:
        return "/specversion", f"not a CloudEvent: specversion is not '{vocabulary.SPECVERSION}'"
    for name in ("id", "source", "type"):
        if not isinstance(value.get(name), str) or not value[name]:
            return f"/{name}", f"not a CloudEvent: no {name} (a non-empty string)"
    return None


def _files(sources: Sequence[Path]) -> Iterator[str]:
    """The files of ``sources``, directories walked as ``evcat validate`` walks them."""
    from ..commands.validate import EVENT_SUFFIXES

    for source in sources:
        if source.is_dir():
            for directory, subdirs, files in os.walk(source):
                subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
                yield from (os.path.join(directory, name) for name in sorted(files) if name.endswith(EVENT_SUFFIXES))
        else:
            yield str(source)


@dataclass
class _Samples:
    """Every event read, in input order, and where each one is."""

    events: list[Any] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # line of each event in its file (1 in a document)
    starts: list[int] = field(default_factory=list)  # position of each file's first event
    files: list[tuple[str, bool]] = field(default_factory=list)  # (file as shown, events are a batch array)

    def add(self, file: str, batch: bool, events: list[Any], lines: list[int]) -> None:
        self.starts.append(len(self.events))
        self.files.append((file, batch))
        self.events.extend(events)
        self.lines.extend(lines)

    def where(self, position: int) -> tuple[str, int, int | None]:
        """(file, line, index in a batch) of the event at ``position``."""
        number = bisect_right(self.starts, position) - 1
        file, batch = self.files[number]
        return file, self.lines[position], position - self.starts[number] if batch else None


def _samples(sources: Sequence[Path], notes: _Notes) -> _Samples:
    """Every event of ``sources``.

    Input that every judge reads (UTF-8 JSON, a document within
    ``MAX_EVENT_BYTES`` or JSON lines) is parsed here with orjson, the
    parser of ``evcat validate``; anything else (a line or file that orjson
    refuses, a document over the limit) is read again by ``evcat validate``'s
    own reader (``read_sources``), which says precisely what is wrong, with
    its line and column: one reading of events, and the speed of the plain
    case (bench/import_events_bench.py)."""
    from ..commands.validate import MAX_EVENT_BYTES, Source, read_sources

    samples = _Samples()
    for path in _files(sources):
        display = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
        lines_file = path.endswith(_LINES)
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError:
            raw = b""
        value: Any = _UNREAD
        if (raw and len(raw) <= MAX_EVENT_BYTES and not lines_file and too_deep(raw) is None
                and not may_hold_long_integers(raw)):
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                pass
        if isinstance(value, list):
            samples.add(display, True, value, [1] * len(value))
            continue
        if value is not _UNREAD:
            samples.add(display, False, [value], [1])
            continue
        if raw and (lines_file or _first_line_is_json(raw)):
            split = raw.split(b"\n")
            numbers = [number for number, line in enumerate(split, 1) if line.strip()]
            try:
                if any(len(split[number - 1]) > MAX_EVENT_BYTES or too_deep(split[number - 1]) is not None
                       or may_hold_long_integers(split[number - 1]) for number in numbers):
                    raise ValueError  # nesting beyond every judge's limit: said by validate's reader, below
                events = [orjson.loads(split[number - 1]) for number in numbers]
            except ValueError:  # one by one: a line that orjson refuses, or one too long
                events, kept = [], []
                for number in numbers:
                    line = split[number - 1]
                    if len(line) > MAX_EVENT_BYTES:
                        notes.add(display, number, None, "", f"larger than {MAX_EVENT_BYTES:,} bytes (the limit of one event)")
                        continue
                    deep = too_deep(line)
                    if deep is not None:  # beyond every judge's nesting limit (the runtime's words)
                        notes.add(display, number, None, _pointer(*deep), nesting_problem(deep), family="too deep")
                        continue
                    source = Source(display, number, None, line[:-1] if line.endswith(b"\r") else line, parsed=False)
                    source.parse()  # validate's careful reader: its words, and valid JSON that orjson refuses
                    if source.error is None:
                        events.append(source.value)
                        kept.append(number)
                    else:
                        _unreadable(notes, source)
                numbers = kept
            samples.add(display, False, events, numbers)
            continue
        events, numbers, indexes = [], [], []
        for source in read_sources([path]):  # the precise diagnosis of what orjson refused
            if not source.parsed:
                source.parse()
            if source.error is not None:
                _unreadable(notes, source)
            else:
                events.append(source.value)
                numbers.append(source.line)
                indexes.append(source.index)
        samples.add(display, any(index is not None for index in indexes), events, numbers)
    return samples


_LINES = (".jsonl", ".ndjson")
_UNREAD = object()


def _first_line_is_json(raw: bytes) -> bool:
    """JSON lines without their file name: the first non-blank line is a JSON
    value by itself and more lines follow (``evcat validate``'s reading)."""
    lines = [line for line in raw.split(b"\n", 64) if line.strip()]
    if len(lines) < 2:
        return False
    try:
        orjson.loads(lines[0])
    except orjson.JSONDecodeError:
        return False
    return True


def _unreadable(notes: _Notes, source: Any) -> None:
    pointer = _pointer(*source.pointer) if source.pointer else ""
    notes.add(source.file, source.line, source.index, pointer, source.error, column=source.column, family="unreadable")


def _read(sources: Sequence[Path], notes: _Notes) -> dict[tuple[str, str | None], _Group]:
    samples = _samples(sources, notes)
    events = samples.events
    keyed: dict[Any, list[int]] = {}
    for position, event in enumerate(events):
        try:
            keyed.setdefault((event["type"], event.get("dataversion")), []).append(position)
        except (TypeError, KeyError, AttributeError):  # not an object, no type, or one that is not a string
            file, line, index = samples.where(position)
            problem = _not_a_cloudevent(event) or ("/type", "not a CloudEvent: no type (a non-empty string)")
            notes.add(file, line, index, problem[0], problem[1])
    groups: dict[tuple[str, str | None], _Group] = {}
    for (event_type, dataversion), positions in keyed.items():
        if not isinstance(event_type, str) or not event_type:
            bad, positions = positions, []
        elif dataversion is not None and (not isinstance(dataversion, str) or not is_semver(dataversion)):
            for position in positions:
                file, line, index = samples.where(position)
                notes.add(file, line, index, "/dataversion", f"dataversion {dataversion!r} is not MAJOR.MINOR.PATCH "
                          "(the catalog format §1): event not carried", family="dataversion")
            continue
        else:
            bad = [p for p in positions if events[p].get("specversion") != vocabulary.SPECVERSION
                   or type(events[p].get("id")) is not str or not events[p]["id"]
                   or type(events[p].get("source")) is not str or not events[p]["source"]]
            if bad:
                dropped = set(bad)
                positions = [p for p in positions if p not in dropped]
        for position in bad:
            file, line, index = samples.where(position)
            problem = _not_a_cloudevent(events[position]) or ("", "not a CloudEvent")
            notes.add(file, line, index, problem[0], problem[1])
        if positions:
            groups[(event_type, dataversion)] = _Group(event_type, dataversion, [events[p] for p in positions],
                                                       _Where(samples, positions))
    return groups


def _settle_dataversions(groups: dict[tuple[str, str | None], _Group], notes: _Notes) -> list[_Group]:
    """Samples without ``dataversion``: the type's only dataversion when it
    has one (contract §5: a reader picks it by type), ``DEFAULT_DATAVERSION``
    when the type has none and the samples carry data; ambiguous otherwise."""
    versions: dict[str, list[str]] = {}
    for event_type, dataversion in groups:
        if dataversion is not None:
            versions.setdefault(event_type, []).append(dataversion)
    result: list[_Group] = []
    for (event_type, dataversion), group in groups.items():
        if dataversion is not None:
            result.append(group)
            continue
        known = versions.get(event_type, [])
        if len(known) == 1:
            target = groups[(event_type, known[0])]
            target.events.extend(group.events)
            target.where.extend(group.where)
        elif known:
            for file, line, index in group.where:
                notes.add(file, line, index, "", f"type {event_type!r} has several dataversions ({', '.join(known)}) and "
                          "this event names none: ambiguous (contract §5), not carried", family="ambiguous dataversion")
        else:
            if any(event.get("data") is not None for event in group.events):
                group.dataversion = DEFAULT_DATAVERSION
                file, line, _ = group.where[0]
                notes.add(file, line, None, "", f"type {event_type!r}: no sample names a dataversion; "
                          f"the catalog says {DEFAULT_DATAVERSION}", kind="derived")
            result.append(group)
    return result


# -- context attributes ----------------------------------------------------


def source_template(sources: Sequence[str]) -> str | None:
    """A level-1 URI template (contract §9) that the varying ``sources``
    suggest: the same number of ``/`` segments, the segments that vary named
    after the segment before them; None when there is no such template."""
    split = [source.split("/") for source in sources]
    if len({len(parts) for parts in split}) != 1:
        return None
    template, names = [], set()
    for position, segment in enumerate(zip(*split)):
        if len(set(segment)) == 1:
            template.append(segment[0])
            continue
        if any(not part or any(c in part for c in "?#{}") for part in segment):
            return None
        before = re.sub(r"[^a-zA-Z0-9]", "", template[-1]) if template else ""
        name = (before[:1].lower() + before[1:] + "Id") if before and not before[0].isdigit() else f"part{position}"
        while name in names:
            name += "X"
        names.add(name)
        template.append("{" + name + "}")
    return "/".join(template)


def _common(counter: Counter[Any]) -> Any:
    return counter.most_common(1)[0][0]


def _extension(name: str, values: list[Any], samples: int) -> tuple[dict[str, Any] | None, str | None]:
    """The catalog declaration of an extension attribute (CloudEvents 1.0.2
    §3.1.4 types), or why it cannot be declared."""
    missing = values.count(None)
    present = values if not missing else [value for value in values if value is not None]
    kinds = set(map(type, present))
    if kinds == {bool}:
        type_ = "Boolean"
    elif kinds == {int} and _INT32[0] <= min(present) and max(present) <= _INT32[1]:
        type_ = "Integer"
    elif kinds == {str}:
        type_ = "String"
    else:
        return None, f"extension {name!r}: values of several or unsupported JSON types ({', '.join(sorted(k.__name__ for k in kinds))})"
    declaration: dict[str, Any] = {"type": type_}
    if len(present) == samples:
        declaration["required"] = True
    declaration["description"] = f"Seen in {len(present)} of {samples} sample events."
    return declaration, None


def _example_of(events: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """The first ``EXAMPLES`` samples from the catalog's ``source`` (lint checks
    an example's source too) that are no larger than ``EXAMPLE_MAX_BYTES``."""
    chosen = []
    for event in events:
        if event["source"] == source and len(orjson.dumps(event)) <= EXAMPLE_MAX_BYTES:
            chosen.append(event)
            if len(chosen) == EXAMPLES:
                break
    return chosen


def _event(group: _Group, producer_source: str, notes: _Notes) -> dict[str, Any] | None:
    events, count = group.events, len(group.events)
    first_file, first_line, _ = group.where[0]
    label = f"type {group.type!r}" + (f" dataversion {group.dataversion}" if group.dataversion else "")
    binaries = list(map(dict.get, events, repeat("data_base64")))  # columns by C loops: one pass per attribute
    binary = [] if binaries.count(None) == count else [i for i, value in enumerate(binaries) if value is not None]
    for i in binary:
        file, line, index = group.where[i]
        notes.add(file, line, index, "/data_base64", "binary data (data_base64): the catalog format describes JSON "
                  "payloads (§1); event not carried", family="data_base64")
    if binary:
        keep = [i for i in range(count) if events[i].get("data_base64") is None]
        if not keep:
            return None
        events = [events[i] for i in keep]
        where = _Where(group.where.samples, [group.where.positions[i] for i in keep])
        count = len(events)
    else:
        where = group.where
    # JSON null for an attribute means unset (contract §5): "data": null is no data
    datas = list(map(dict.get, events, repeat("data")))
    with_data = count - datas.count(None)
    if with_data and with_data < count:
        for i, event in enumerate(events):
            if event.get("data") is None:
                file, line, index = where[i]
                notes.add(file, line, index, "", f"{label}: this sample has no data while others have: the catalog "
                          "gives the type a payload (contract §5), this sample is not carried", family="no data")
        keep = [i for i, event in enumerate(events) if event.get("data") is not None]
        events = [events[i] for i in keep]
        datas = [datas[i] for i in keep]
        where = _Where(where.samples, [where.positions[i] for i in keep])
        count = len(events)

    entry: dict[str, Any] = {"type": group.type}
    if with_data or group.dataversion:  # a notification keeps the dataversion its samples name
        entry["dataversion"] = group.dataversion or DEFAULT_DATAVERSION
    entry["title"] = group.type
    files = where.files()
    entry["description"] = (f"Inferred by `evcat import events` from {count} sample event{'s' * (count != 1)} "
                            f"({', '.join(files[:3])}{', ...' if len(files) > 3 else ''}).")

    sources: Counter[str] = Counter(map(itemgetter("source"), events))
    source = _common(sources)
    if source != producer_source:
        entry["source"] = source
    if len(sources) > 1:
        template = source_template(list(sources))
        suggestion = f"; they suggest the URI template {template!r} (contract §9)" if template else ""
        notes.add(first_file, first_line, None, "/source",
                  f"{label}: the samples name {len(sources)} sources; the catalog says {source!r}{suggestion}",
                  kind="derived")

    subjects = [value for value in map(dict.get, events, repeat("subject")) if type(value) is str]
    if subjects:
        entry["subject"] = f"Seen in {len(subjects)} of {count} sample events, for example {subjects[0][:80]!r}."
    media = set(map(dict.get, events, repeat("datacontenttype")))
    if with_data and len(media) == 1 and isinstance(next(iter(media)), str):
        entry["datacontenttype"] = next(iter(media))
    elif len(media) > 1:
        notes.add(first_file, first_line, None, "/datacontenttype",
                  f"{label}: the samples name several datacontenttypes ({', '.join(sorted(map(str, media)))}): "
                  "the catalog names none", kind="derived")
    schemas = set(map(dict.get, events, repeat("dataschema")))
    if len(schemas) == 1 and isinstance(only := next(iter(schemas)), str) and is_uri(only):
        entry["dataschema"] = only
    datarefs = [value for value in map(dict.get, events, repeat("dataref")) if type(value) is str]
    if datarefs and all(is_uri_reference(value) for value in datarefs):
        entry["dataref"] = f"Seen in {len(datarefs)} of {count} sample events, for example {datarefs[0][:80]!r}."
    sequencetypes = set(map(dict.get, events, repeat("sequencetype")))
    if (len(sequencetypes) == 1 and isinstance(only := next(iter(sequencetypes)), str) and only
            and all("sequence" in event for event in events)):
        entry["sequence"] = only

    extensions: dict[str, Any] = {}
    for name in (name for name in dict.fromkeys(chain.from_iterable(events)) if name not in CORE):
        if not _EXTENSION_NAME.match(name):
            notes.add(first_file, first_line, None, _pointer(name),
                      f"{label}: {name!r} is not a CloudEvents attribute name ([a-z0-9]+, CloudEvents 1.0.2 §3.1.4): "
                      "not declared")
            continue
        declaration, problem = _extension(name, list(map(dict.get, events, repeat(name))), count)
        if declaration is None:
            notes.add(first_file, first_line, None, _pointer(name), f"{label}: {problem}: not declared")
        else:
            extensions[name] = declaration
    if extensions:
        entry["extensions"] = extensions
    if with_data:
        entry["data"] = infer(datas)
    examples = _example_of(events, source)
    if examples:
        entry["examples"] = examples
    return entry


# -- the catalog -------------------------------------------------------------


def catalog_id(sources: Sequence[Path], options: Options) -> str:
    """``--catalog``, or the first source's name in lowercase kebab-case (§1)."""
    if options.catalog_id:
        return options.catalog_id
    stem = sources[0].name.split(".")[0] if sources else "events"
    words = re.findall(r"[a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", stem).lower())
    name = "-".join(words) or "events"
    return name if name[0].isalpha() else f"events-{name}"


def read(sources: Sequence[Path], options: Options) -> Imported:
    with no_collection():  # millions of small containers and no cycles: nothing for the collector to find
        return _import(sources, options)


def _import(sources: Sequence[Path], options: Options) -> Imported:
    notes = _Notes()
    groups = _settle_dataversions(_read(sources, notes), notes)
    all_sources: Counter[str] = Counter()
    for group in groups:
        all_sources.update(map(itemgetter("source"), group.events))
    events = []
    producer_source = _common(all_sources) if all_sources else "urn:example:unknown"
    for group in groups:
        entry = _event(group, producer_source, notes)
        if entry is not None:
            events.append(entry)
    identifier = catalog_id(sources, options)
    documents: dict[str, dict[str, Any]] = {}
    if events:
        documents[f"{identifier}.yaml"] = {
            "catalog": identifier,
            "title": f"Events of {', '.join(path.name for path in sources[:3])}{', ...' if len(sources) > 3 else ''}",
            "description": "Inferred by `evcat import events` from sample events: check the payload schemas, "
                           "add descriptions and loosen what the samples happened to have in common.",
            "version": "1.0.0",
            "profile": options.profile,
            "producer": {"source": producer_source},
            "events": events,
        }
    else:
        notes.add(str(sources[0]) if sources else "", None, None, "", "no CloudEvents found: no catalog written",
                  family="no events")
    return Imported(documents, notes.finish())
