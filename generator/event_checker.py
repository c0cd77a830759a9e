"""The detailed checker of event instances: catalog examples and `evcat validate`.

One place for every "(instances)" rule of rules.md, applied to a JSON event
in structured mode (CloudEvents JSON format). It maps the event type's
``ContextAttribute``s (model/) and its ``Profile`` (profiles.py) onto
checks, with the grammars of the CloudEvents vocabulary (vocabulary.py), so
its verdict is the verdict of the envelope schema (envelope.py) and of the
generated ``parse_event`` (contract §4.1). Each problem carries the JSON
pointer of the offending value, as a tuple of keys and indexes.
Sources: CloudEvents 1.0.2 §3 (context attributes, type system), the JSON
format §2-3, the sequence extension, Het Normo ID05-ID11.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import jsonschema_rs

from . import profiles, vocabulary
from .envelope import pinned
from .model import CatalogSet, ContextAttribute, EventType
from .profiles import Profile
from .runtime import _uritemplate as uritemplate
from .string_formats import is_uri, is_uri_reference
from .vocabulary import INT32_MAX, INT32_MIN

Pointer = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    rule: str
    pointer: Pointer
    message: str
    # The catalog's setting of the rule where the catalog changes it
    # ("error" | "warning"; catalog-format.md §9); None: the rule's default.
    setting: str | None = None


def _quoted(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def pointer_text(pointer: Pointer) -> str:
    """RFC 6901 form: ``/data/tariff/code``."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in pointer) or "/"


class EventChecker:
    """Checks instances against a catalog set; payload validators compiled once.

    ``keep``: how many compiled validators are held at once (None: all).
    Lint checks the events one after another and needs only the current
    one's: a compiled validator with formats is about 50 KB, held for every
    payload it was most of lint's memory (177 of 335 MiB at 4,000 types)."""

    def __init__(self, catalog_set: CatalogSet, keep: int | None = None) -> None:
        self.catalog_set = catalog_set
        self.keep = keep
        self.by_key: dict[tuple[str, str | None], EventType] = {}
        self.by_type: dict[str, list[EventType]] = {}
        for event in catalog_set.events:
            self.by_key.setdefault(event.key, event)
            self.by_type.setdefault(event.type, []).append(event)
        self._validators: dict[tuple[str, str | None], Any] = {}
        names = {catalog.profile.name for catalog in catalog_set.catalogs}
        # An event of no known type is checked under the catalogs' profile when they share one.
        self.default_profile = profiles.get(names.pop()) if len(names) == 1 else profiles.CLOUDEVENTS

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
                f"the catalog has no dataversion {_quoted(dataversion)} of '{event_type}' (it has {known})",
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
        found = self._validators.get(key)
        if found is None:
            assert entry.payload is not None
            # Pinned as event.schema.json's data is: each format checked by the
            # vocabulary's grammar beside the checker's own (contract §4.1).
            schema = pinned(entry.payload.bundled(self.catalog_set.schemas))
            found = jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
            if self.keep is not None and len(self._validators) >= self.keep:
                del self._validators[next(iter(self._validators))]  # the oldest
            self._validators[key] = found
        return found

    def check(self, event: Any, entry: EventType | None = None, wire_size: int | None = None) -> list[Problem]:
        if not isinstance(event, dict):
            return [Problem("CE-REQUIRED", (), "an event must be a JSON object")]
        problems: list[Problem] = []
        if entry is None:
            entry, problem = self.find(event)
            if problem:
                problems.append(problem)
        profile = entry.profile if entry else self.default_profile
        problems += check_envelope(event, entry, profile)
        if entry is not None:
            problems += self._check_data(event, entry)
        if wire_size is None:
            wire_size = len(json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))
        problems += check_size(wire_size, profile)
        return problems

    def _check_data(self, event: dict[str, Any], entry: EventType) -> list[Problem]:
        # JSON format §3.1; contract §5: data the catalog defines travels as JSON in `data`.
        has_data = event.get("data") is not None
        has_base64 = event.get("data_base64") is not None
        if has_data and has_base64:
            return [Problem("CE-DATA-BOTH", ("data_base64",), "an event carries either 'data' or 'data_base64', not both")]
        if entry.payload is None:
            if has_data or has_base64:
                where = "data" if has_data else "data_base64"
                return [Problem("CE-DATA-UNEXPECTED", (where,), f"'{entry.type}' is a notification without data; remove '{where}'")]
            return []
        if has_base64:
            return [Problem("CE-DATA-MISSING", ("data_base64",), f"'{entry.type}' {entry.dataversion} carries JSON data: send it as 'data', not 'data_base64'")]
        if not has_data:
            return [Problem("CE-DATA-MISSING", (), f"'{entry.type}' {entry.dataversion} carries data; the event has none")]
        problems = []
        for error in self.validator(entry).iter_errors(event["data"]):
            where = ("data",) + tuple(error.instance_path)
            problems.append(Problem("CE-DATA-SCHEMA", where, f"{pointer_text(where)}: {error.message}"))
            if len(problems) >= 20:
                break
        return problems


def check_envelope(event: dict[str, Any], entry: EventType | None, profile: Profile) -> list[Problem]:
    """The context attributes of ``event``: the declared ones by their
    ``ContextAttribute``, the others as undeclared extensions."""
    problems: list[Problem] = []
    attributes = entry.attribute_map if entry is not None else _unknown_event_attributes(profile)
    for name, value in event.items():
        if name in vocabulary.DATA_MEMBERS:
            continue
        if not vocabulary.ATTRIBUTE_NAME.match(name):
            problems.append(Problem("CE-ATTR-NAME", (name,), f"attribute name {json.dumps(name, ensure_ascii=False)} must consist of a-z and 0-9 only"))
            continue
        attribute = attributes.get(name)
        if attribute is not None:
            problems += _check_attribute(attribute, value, profile)
        elif value is not None:  # null means unset (JSON format §2.4)
            problems += _check_undeclared(name, value, entry)
    for attribute in attributes.values():
        if attribute.required and event.get(attribute.name) is None:
            problems.append(_missing(attribute, attribute.name in event, profile))
    if entry is not None:
        problems += check_source(event.get("source"), entry)
    return problems


def check_source(source: Any, entry: EventType) -> list[Problem]:
    """CE-SOURCE-MATCH (catalog-format.md §9, Source templates): an event's
    ``source`` is its catalog source, equal to it or matching it as a URI
    template of level 1 (RFC 6570 §1.2: ``{name}`` stands for one or more
    characters other than ``/``, ``?`` and ``#``). The catalog's setting of
    the rule for the event decides: ``off``, nobody checks it."""
    setting = entry.rule_setting("CE-SOURCE-MATCH")
    if setting == "off" or not isinstance(source, str) or not source or source_matches(entry.source, source):
        return []
    kind = "the catalog's source template" if uritemplate.is_template(entry.source) else "the catalog's source"
    return [Problem("CE-SOURCE-MATCH", ("source",), f"source {_quoted(source)} is not {kind} '{entry.source}'", setting)]


def source_matches(catalog_source: str, source: str) -> bool:
    """Whether ``source`` is ``catalog_source`` or matches it as a level-1
    template (runtime/_uritemplate.py, the one home of the grammar). A
    malformed template (lint's CE-SOURCE-URI) is matched as plain text."""
    if source == catalog_source:
        return True
    try:
        return uritemplate.matches(catalog_source, source)
    except uritemplate.TemplateError:
        return False


def _missing(attribute: ContextAttribute, sent_null: bool, profile: Profile) -> Problem:
    pointer = (attribute.name,) if sent_null else ()
    for name, rule, message in profile.required_with_data:
        if name == attribute.name:
            return Problem(rule, pointer, message)
    if attribute.name == "time" and profile.time_required:
        return Problem(profile.time_rule, pointer, f"'time' is required ({profile.time_form})")
    kind = "extension attribute" if attribute.extension else "attribute"
    return Problem(attribute.rule or "CE-REQUIRED", pointer, f"the required {kind} '{attribute.name}' is missing")


def _check_attribute(attribute: ContextAttribute, value: Any, profile: Profile) -> list[Problem]:
    """One declared attribute against its CloudEvents type (§3.2) and its constraints."""
    name = attribute.name
    pointer = (name,)
    if value is None:
        return []  # unset; a required one is reported as missing
    if attribute.type == "Boolean":
        return [] if isinstance(value, bool) else [Problem("CE-ATTR-TYPE", pointer, f"'{name}' must be a Boolean (true or false)")]
    if attribute.type == "Integer":
        return _check_integer(name, value)
    if not isinstance(value, str):
        rule = {"time": "CE-TIME", "datacontenttype": "CE-CONTENTTYPE", "dataschema": "CE-DATASCHEMA-URI",
                "source": "CE-REQUIRED", "id": "CE-REQUIRED", "specversion": "CE-REQUIRED", "type": "CE-REQUIRED",
                "sequence": "CE-SEQUENCE"}.get(name, "CE-ATTR-TYPE")
        return [Problem(rule, pointer, f"'{name}' must be a string")]
    if attribute.non_empty and not value:
        rule = {"subject": profile.subject_rule, "sequence": "CE-SEQUENCE"}.get(name, "CE-REQUIRED")
        return [Problem(rule, pointer, f"'{name}' must be a non-empty string")]
    if vocabulary.has_bad_chars(value):
        return [Problem("CE-STRING-CHARS", pointer, f"'{name}' holds a control character, a noncharacter or a lone surrogate")]
    if attribute.fixed is not None and value != attribute.fixed:
        if name == "specversion":
            return [Problem(profile.specversion_rule, pointer, f"specversion must be '1.0', not {json.dumps(value, ensure_ascii=False)}")]
        return [Problem("CE-ATTR-TYPE", pointer, f"'{name}' must be {json.dumps(attribute.fixed, ensure_ascii=False)}")]
    if attribute.type == "Timestamp":
        if not vocabulary.is_rfc3339(value):
            return [Problem("CE-TIME", pointer, f"{name} {json.dumps(value, ensure_ascii=False)} is not an RFC 3339 timestamp")]
        if attribute.pattern is not None and not _grammar(attribute.pattern).match(value):
            return [Problem(profile.time_rule, pointer, f"time {json.dumps(value, ensure_ascii=False)} must be {profile.time_form}")]
        return []
    if attribute.media_type and not vocabulary.is_media_type(value):
        return [Problem("CE-CONTENTTYPE", pointer, f"datacontenttype {json.dumps(value, ensure_ascii=False)} is not an RFC 2046 media type")]
    if attribute.type == "URI" and not is_uri(value):
        rule = "CE-DATASCHEMA-URI" if name == "dataschema" else "CE-ATTR-TYPE"
        return [Problem(rule, pointer, f"{name} {json.dumps(value, ensure_ascii=False)} is not an absolute URI (RFC 3986)")]
    if attribute.type == "URI-reference" and not is_uri_reference(value):
        rule = "CE-SOURCE-URI" if name == "source" else "CE-ATTR-TYPE"
        return [Problem(rule, pointer, f"{name} {json.dumps(value, ensure_ascii=False)} is not a URI-reference (RFC 3986)")]
    if attribute.type == "Binary" and not _BASE64.match(value):
        return [Problem("CE-ATTR-TYPE", pointer, f"'{name}' must be Binary: base64 (RFC 4648 §4) with padding")]
    if name == "sequence" and attribute.pattern is not None:
        if not _grammar(attribute.pattern).match(value):  # the int32 range, spelled out
            return [Problem("CE-SEQUENCE", pointer, f"sequence {json.dumps(value)} must be a string-encoded signed 32-bit integer (sequencetype Integer)")]
    return []


@cache
def _grammar(schema_pattern: str) -> re.Pattern[str]:
    """A JSON Schema pattern of the vocabulary (anchored with ``^...$``) for
    Python: ``$`` made the end of the text, as ECMA-262 has it."""
    return re.compile(schema_pattern[:-1] + r"\Z" if schema_pattern.endswith("$") else schema_pattern)


_BASE64 = _grammar(vocabulary.BASE64_PATTERN)


def _check_integer(name: str, value: Any) -> list[Problem]:
    # JSON format §2.2: Integer is a JSON number without a fractional part (1.0 counts, as in JSON Schema).
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not value.is_integer()):
        return [Problem("CE-ATTR-TYPE", (name,), f"'{name}' must be an Integer (a JSON number without fraction)")]
    if not INT32_MIN <= value <= INT32_MAX:
        return [Problem("CE-INTEGER-RANGE", (name,), f"'{name}' = {int(value)} is outside the signed 32-bit range")]
    return []


def _check_undeclared(name: str, value: Any, entry: EventType | None) -> list[Problem]:
    """An extension the catalog does not declare (contract §5): valid name, a CloudEvents-typed value."""
    problems: list[Problem] = []
    if isinstance(value, str):
        if vocabulary.has_bad_chars(value):
            problems.append(Problem("CE-STRING-CHARS", (name,), f"'{name}' holds a control character, a noncharacter or a lone surrogate"))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        problems += _check_integer(name, value)
    elif not isinstance(value, bool):
        problems.append(Problem("CE-ATTR-TYPE", (name,), f"'{name}' has a value no CloudEvents type can hold"))
    if entry is not None:
        problems.append(Problem("CE-EXTENSION-UNDECLARED", (name,), f"the catalog does not declare the extension attribute '{name}' for '{entry.type}'"))
    return problems


@cache
def _unknown_event_attributes(profile: Profile) -> dict[str, ContextAttribute]:
    """The core attributes, for an event whose type the catalog does not know
    (worked out once per profile; callers only read it)."""
    return {
        "specversion": ContextAttribute("specversion", "String", True, fixed=vocabulary.SPECVERSION),
        "id": ContextAttribute("id", "String", True, non_empty=True),
        "source": ContextAttribute("source", "URI-reference", True, non_empty=True),
        "type": ContextAttribute("type", "String", True, non_empty=True),
        "time": ContextAttribute("time", "Timestamp", profile.time_required, pattern=profile.time_pattern),
        "subject": ContextAttribute("subject", "String", False, non_empty=True),
        "datacontenttype": ContextAttribute("datacontenttype", "String", False, media_type=True),
        "dataschema": ContextAttribute("dataschema", "URI", False),
    }




def check_size(size: int, profile: Profile) -> list[Problem]:
    """CloudEvents 1.0.2 §Size Limits, Het Normo ID09: the first limit exceeded, largest first."""
    for limit in profile.sizes:
        if size > limit.bytes:
            return [Problem(limit.rule, (), f"the event is {size} bytes; {limit.message.format(limit=limit.bytes)}")]
    return []
