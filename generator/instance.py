"""Checks of event instances: catalog examples now, `evcat validate` later.

One place for every "(instances)" rule of rules.md, applied to a JSON event
in structured mode (CloudEvents JSON format). Each problem carries the JSON
pointer of the offending value, as a tuple of keys and indexes.
Sources: CloudEvents 1.0.2 §3 (context attributes, type system), the JSON
format §2-3, the sequence extension, Het Normo ID06, ID09, ID11.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs

from .formats import NORMO_TIME, is_media_type, is_rfc3339, is_uri, is_uri_reference
from .model import CatalogSet, EventType

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
CE_SIZE = 64 * 1024  # CloudEvents 1.0.2 §"Size Limits"; NL GOV §5
NORMO_SIZE_MAX = 256 * 1024  # Het Normo ID09
_ATTRIBUTE_NAME = re.compile(r"^[a-z0-9]+$")
# Control characters, noncharacters and lone surrogates (CloudEvents 1.0.2 §3.2, String).
_BAD_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]")
_INTEGER = re.compile(r"^[+-]?[0-9]+$")
CORE_STRING = ("id", "source", "specversion", "type")
CORE_OPTIONAL = ("datacontenttype", "dataschema", "subject", "time")
# The NL GOV profile's optional extensions (dataref, sequence/sequencetype) are
# part of every profile's vocabulary here; the catalog says which an event uses.
KNOWN_EXTENSIONS = ("dataref", "sequence", "sequencetype", "dataversion")

Pointer = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    rule: str
    pointer: Pointer
    message: str
    # An attribute the event leaves out (a partial catalog example may).
    absent: bool = False


def pointer_text(pointer: Pointer) -> str:
    """RFC 6901 form: ``/data/tariff/code``."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in pointer) or "/"


class EventChecker:
    """Checks instances against a catalog set; payload validators compiled once."""

    def __init__(self, catalog_set: CatalogSet) -> None:
        self.catalog_set = catalog_set
        self.by_key: dict[tuple[str, str | None], EventType] = {}
        self.by_type: dict[str, list[EventType]] = {}
        for event in catalog_set.events:
            self.by_key.setdefault(event.key, event)
            self.by_type.setdefault(event.type, []).append(event)
        self._validators: dict[tuple[str, str | None], Any] = {}
        profiles = {catalog.profile for catalog in catalog_set.catalogs}
        self.default_profile = profiles.pop() if len(profiles) == 1 else "cloudevents"

    def find(self, event: Mapping[str, Any]) -> tuple[EventType | None, Problem | None]:
        """The catalog entry for an instance (contract §5)."""
        event_type = event.get("type")
        dataversion = event.get("dataversion")
        if not isinstance(event_type, str) or not event_type:
            return None, None  # CE-REQUIRED reports it
        candidates = self.by_type.get(event_type, [])
        if not candidates:
            return None, Problem("CE-UNKNOWN-EVENT", ("type",), f"the catalog has no event of type '{event_type}'")
        if dataversion is not None:
            for candidate in candidates:
                if candidate.dataversion == dataversion:
                    return candidate, None
            known = ", ".join(sorted(str(c.dataversion) for c in candidates))
            return None, Problem(
                "CE-UNKNOWN-EVENT",
                ("dataversion",),
                f"the catalog has no dataversion '{dataversion}' of '{event_type}' (it has {known})",
            )
        if len(candidates) == 1:
            return candidates[0], None
        return None, Problem(
            "CE-UNKNOWN-EVENT",
            ("dataversion",),
            f"'{event_type}' has several dataversions in the catalog; the event must carry 'dataversion'",
        )

    def validator(self, entry: EventType) -> Any:
        key = entry.key
        if key not in self._validators:
            assert entry.payload is not None
            schema = entry.payload.bundled(self.catalog_set.schemas)
            self._validators[key] = jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
        return self._validators[key]

    def check(self, event: Any, entry: EventType | None = None, wire_size: int | None = None) -> list[Problem]:
        if not isinstance(event, dict):
            return [Problem("CE-REQUIRED", (), "an event must be a JSON object")]
        problems: list[Problem] = []
        if entry is None:
            entry, problem = self.find(event)
            if problem:
                problems.append(problem)
        profile = entry.profile if entry else self.default_profile
        problems += _check_envelope(event, entry, profile)
        if entry is not None:
            problems += self._check_data(event, entry)
        if wire_size is None:
            wire_size = len(json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode())
        problems += _check_size(wire_size, profile)
        return problems

    def _check_data(self, event: dict[str, Any], entry: EventType) -> list[Problem]:
        has_data = "data" in event and event["data"] is not None
        has_base64 = "data_base64" in event and event["data_base64"] is not None
        if has_data and has_base64:
            return [Problem("CE-DATA-BOTH", ("data_base64",), "an event carries either 'data' or 'data_base64', not both")]
        if entry.payload is None:
            if has_data or has_base64:
                where = "data" if has_data else "data_base64"
                return [Problem("CE-DATA-UNEXPECTED", (where,), f"'{entry.type}' is a notification without data; remove '{where}'")]
            return []
        if not has_data and not has_base64:
            return [Problem("CE-DATA-MISSING", (), f"'{entry.type}' {entry.dataversion} carries data; the event has none")]
        data, pointer = event.get("data"), ("data",)
        if has_base64:
            pointer = ("data_base64",)
            try:
                data = json.loads(base64.b64decode(event["data_base64"], validate=True))
            except (ValueError, TypeError, binascii.Error):
                return [Problem("CE-DATA-SCHEMA", pointer, "data_base64 does not hold base64-encoded JSON")]
        problems = []
        for error in self.validator(entry).iter_errors(data):
            where = pointer + tuple(error.instance_path)
            problems.append(Problem("CE-DATA-SCHEMA", where, f"{pointer_text(where)}: {error.message}"))
            if len(problems) >= 20:
                break
        return problems


def _check_envelope(event: dict[str, Any], entry: EventType | None, profile: str) -> list[Problem]:
    problems: list[Problem] = []
    for name in CORE_STRING:
        value = event.get(name)
        if value is None:
            problems.append(Problem("CE-REQUIRED", (name,) if name in event else (), f"the required attribute '{name}' is missing"))
        elif not isinstance(value, str) or not value:
            problems.append(Problem("CE-REQUIRED", (name,), f"'{name}' must be a non-empty string"))
    specversion = event.get("specversion")
    if isinstance(specversion, str) and specversion and specversion != "1.0":
        rule = "NLGOV-SPECVERSION" if profile in ("nlgov", "normo") else "CE-REQUIRED"
        problems.append(Problem(rule, ("specversion",), f"specversion must be '1.0', not '{specversion}'"))
    source = event.get("source")
    if isinstance(source, str) and source and not is_uri_reference(source):
        problems.append(Problem("CE-SOURCE-URI", ("source",), f"source '{source}' is not a URI-reference (RFC 3986)"))
    declared = {extension.name: extension for extension in entry.extensions} if entry else {}
    for name, value in event.items():
        if name in ("data", "data_base64"):
            continue
        if not _ATTRIBUTE_NAME.match(name):
            problems.append(Problem("CE-ATTR-NAME", (name,), f"attribute name '{name}' must consist of a-z and 0-9 only"))
            continue
        if value is None or name in CORE_STRING:
            continue  # null means unset (JSON format §2.4)
        if isinstance(value, str) and _BAD_CHARS.search(value):
            problems.append(Problem("CE-STRING-CHARS", (name,), f"'{name}' holds a control character, a noncharacter or a lone surrogate"))
        if name in CORE_OPTIONAL:
            problems += _check_core_optional(name, value, profile)
        elif name in declared:
            problems += _check_typed(name, value, declared[name].type)
        elif name in KNOWN_EXTENSIONS:
            if not isinstance(value, str) or not value:
                problems.append(Problem("CE-ATTR-TYPE", (name,), f"'{name}' must be a non-empty string"))
            elif name == "dataref" and not is_uri_reference(value):
                problems.append(Problem("CE-ATTR-TYPE", (name,), f"dataref '{value}' is not a URI-reference"))
        else:
            if isinstance(value, (dict, list)) or (isinstance(value, float) and not value.is_integer()):
                problems.append(Problem("CE-ATTR-TYPE", (name,), f"'{name}' has a value no CloudEvents type can hold"))
            elif isinstance(value, int) and not isinstance(value, bool) and not INT32_MIN <= value <= INT32_MAX:
                problems.append(Problem("CE-INTEGER-RANGE", (name,), f"'{name}' = {value} is outside the signed 32-bit range"))
            if entry is not None:
                problems.append(Problem("CE-EXTENSION-UNDECLARED", (name,), f"the catalog does not declare the extension attribute '{name}' for '{entry.type}'"))
    if entry is not None:
        for extension in entry.extensions:
            if extension.required and event.get(extension.name) is None:
                problems.append(Problem("CE-REQUIRED", (), f"the required extension attribute '{extension.name}' is missing", absent=True))
        if entry.sequencetype:
            if event.get("sequence") is None:
                problems.append(Problem("CE-SEQUENCE", (), f"'{entry.type}' carries 'sequence' ({entry.sequencetype}); it is missing", absent=True))
            else:
                problems += _check_sequence(event, entry.sequencetype)
        if profile == "normo" and entry.has_data:
            if event.get("dataversion") is None:
                problems.append(Problem("NORMO-DATAVERSION", (), "Het Normo ID07: an event with data carries 'dataversion'"))
            if event.get("datacontenttype") is None:
                problems.append(Problem("NORMO-CONTENTTYPE", (), "Het Normo ID05: an event with data carries 'datacontenttype'"))
    elif isinstance(event.get("sequencetype"), str):
        problems += _check_sequence(event, event["sequencetype"])
    if profile == "normo":
        time = event.get("time")
        if time is None:
            problems.append(Problem("NORMO-TIME", (), "Het Normo ID06: 'time' is required"))
        elif isinstance(time, str) and is_rfc3339(time) and not NORMO_TIME.match(time):
            problems.append(Problem("NORMO-TIME", ("time",), f"Het Normo ID06: time '{time}' must be UTC as yyyy-mm-ddThh:mm:ss.ffffffZ"))
    return problems


def _check_core_optional(name: str, value: Any, profile: str) -> list[Problem]:
    if not isinstance(value, str):
        rule = {"time": "CE-TIME", "datacontenttype": "CE-CONTENTTYPE", "dataschema": "CE-DATASCHEMA-URI"}.get(name, "CE-REQUIRED")
        return [Problem(rule, (name,), f"'{name}' must be a string")]
    if name == "time" and not is_rfc3339(value):
        return [Problem("CE-TIME", (name,), f"time '{value}' is not an RFC 3339 timestamp")]
    if name == "datacontenttype" and not is_media_type(value):
        return [Problem("CE-CONTENTTYPE", (name,), f"datacontenttype '{value}' is not an RFC 2046 media type")]
    if name == "dataschema" and not is_uri(value):
        return [Problem("CE-DATASCHEMA-URI", (name,), f"dataschema '{value}' is not an absolute URI")]
    if name == "subject" and not value:
        rule = "NORMO-SUBJECT" if profile == "normo" else "CE-REQUIRED"
        return [Problem(rule, (name,), "subject, when present, must be a non-empty string")]
    return []


def _check_typed(name: str, value: Any, type_name: str) -> list[Problem]:
    """CloudEvents 1.0.2 §3.2 type system, in the JSON format's representation."""
    if type_name == "Boolean":
        ok = isinstance(value, bool)
    elif type_name == "Integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not value.is_integer()):
            return [Problem("CE-ATTR-TYPE", (name,), f"'{name}' must be an Integer (a JSON number without fraction)")]
        if not INT32_MIN <= value <= INT32_MAX:
            return [Problem("CE-INTEGER-RANGE", (name,), f"'{name}' = {value:g} is outside the signed 32-bit range")]
        return []
    elif not isinstance(value, str):
        ok = False
    elif type_name == "Binary":
        ok = _is_base64(value)
    elif type_name == "URI":
        ok = is_uri(value)
    elif type_name == "URI-reference":
        ok = is_uri_reference(value)
    elif type_name == "Timestamp":
        if not is_rfc3339(value):
            return [Problem("CE-TIME", (name,), f"'{name}' = '{value}' is not an RFC 3339 timestamp")]
        ok = True
    else:
        ok = True
    return [] if ok else [Problem("CE-ATTR-TYPE", (name,), f"'{name}' must be a {type_name}")]


def _check_sequence(event: dict[str, Any], sequencetype: str) -> list[Problem]:
    if sequencetype.lower() != "integer":
        return []
    sequence = event.get("sequence")
    if sequence is None:
        return []
    if not isinstance(sequence, str) or not _INTEGER.match(sequence) or not INT32_MIN <= int(sequence) <= INT32_MAX:
        return [Problem("CE-SEQUENCE", ("sequence",), f"sequence {json.dumps(sequence)} must be a string-encoded signed 32-bit integer (sequencetype Integer)")]
    return []


def _check_size(size: int, profile: str) -> list[Problem]:
    if profile == "normo":
        if size > NORMO_SIZE_MAX:
            return [Problem("NORMO-SIZE-MAX", (), f"the event is {size} bytes; Het Normo ID09 allows at most {NORMO_SIZE_MAX}")]
        if size > CE_SIZE:
            return [Problem("NORMO-SIZE-ADVISED", (), f"the event is {size} bytes; Het Normo ID09 advises at most {CE_SIZE}: point to data with dataref")]
    elif size > CE_SIZE:
        return [Problem("CE-SIZE", (), f"the event is {size} bytes; intermediaries need only forward {CE_SIZE}: point to data with dataref")]
    return []


def _is_base64(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True
