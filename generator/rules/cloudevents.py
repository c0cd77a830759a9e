"""CloudEvents 1.0.2 core rules, all profiles (rules.md "CloudEvents 1.0.2 core")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from importlib import resources

from ..diagnostics import Diagnostic, Severity
from ..string_formats import is_media_type, is_uri, is_uri_reference
from ..loader import Document, Path
from ..model import EventType
from ..naming import closest, did_you_mean
from ..profiles import Profile
from ..runtime import _uritemplate as uritemplate
from ..vocabulary import ATTRIBUTE_NAME, ATTRIBUTE_NAME_SOFT_MAX, RESERVED, TYPE_NAMES
from . import ALL, Context, declare, event_rule, file_rule

E, W = Severity.ERROR, Severity.WARNING
# The extensions the catalog format gives keys of their own (an event's `dataref:`, `sequence:`).
_KEYED_EXTENSIONS = ("dataref", "sequence", "sequencetype")
_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")

# Checked on instances only (examples in the catalog, `evcat validate`): event_checker.py.
for _id, _severity, _summary in (
    ("CE-INTEGER-RANGE", E, "An Integer attribute is inside the signed 32-bit range."),
    ("CE-STRING-CHARS", E, "A String attribute holds no control characters, noncharacters or lone surrogates."),
    ("CE-SEQUENCE", E, "With sequencetype Integer, sequence is a string-encoded int32."),
    ("CE-SIZE", W, "An event is at most 64 KB on the wire."),
    ("CE-REQUIRED", E, "specversion, id, source and type are present, non-empty strings."),
    ("CE-TIME", E, "time is an RFC 3339 timestamp."),
    ("CE-DATA-BOTH", E, "An event has data or data_base64, not both."),
    ("CE-DATA-MISSING", E, "An event the catalog defines data for carries data."),
    ("CE-DATA-UNEXPECTED", E, "An event the catalog defines no data for carries none."),
    ("CE-EXTENSION-UNDECLARED", W, "Extension attributes are declared in the catalog."),
    ("CE-SOURCE-MATCH", W, "An event's source is its catalog source: equal to it, or matching it as a URI template (level 1)."),
    ("CE-UNKNOWN-EVENT", E, "The catalog has exactly one entry for the event's type and dataversion."),
    ("CE-DATA-SCHEMA", E, "The event's data validates against the payload schema (evcat)."),
    ("CE-FORMAT", E, "The event is valid JSON in the CloudEvents JSON format (evcat)."),
):
    declare(_id, _severity, ALL, _summary)


@cache
def top_level_domains() -> frozenset[str]:
    text = resources.files("generator").joinpath("data/tlds.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line and not line.startswith("#"))


def reverse_dns_problem(event_type: str, profile: Profile) -> str | None:
    """Why ``event_type`` is not reverse domain name notation, or None; the
    examples are the profile's (``Profile.example_domain``)."""
    labels = event_type.split(".")
    domain = profile.example_domain
    if len(labels) < 2:
        return f"it needs at least two dot-separated labels, e.g. '{domain}.<organization>.<event>'"
    bad = [label for label in labels if not _LABEL.match(label)]
    if bad:
        return f"label '{bad[0]}' must be lowercase letters, digits and inner hyphens"
    if labels[0] not in top_level_domains():
        return f"'{labels[0]}' is not a top-level domain; start with one such as '{domain}'"
    return None


def sources(document: Document) -> Iterator[tuple[str, Path]]:
    """Every `source` a file sets: producer.source and events' own."""
    producer = document.value.get("producer")
    if isinstance(producer, dict) and isinstance(producer.get("source"), str):
        yield producer["source"], ("producer", "source")
    events = document.value.get("events")
    for index, event in enumerate(events if isinstance(events, list) else []):
        if isinstance(event, dict) and isinstance(event.get("source"), str):
            yield event["source"], ("events", index, "source")


def content_types(document: Document) -> Iterator[tuple[str, Path]]:
    defaults = document.value.get("defaults")
    if isinstance(defaults, dict) and isinstance(defaults.get("datacontenttype"), str):
        yield defaults["datacontenttype"], ("defaults", "datacontenttype")
    events = document.value.get("events")
    for index, event in enumerate(events if isinstance(events, list) else []):
        if isinstance(event, dict) and isinstance(event.get("datacontenttype"), str):
            yield event["datacontenttype"], ("events", index, "datacontenttype")


@event_rule("CE-ATTR-NAME", E, ALL, "Extension attribute names are [a-z0-9]+.")
def attribute_name(event: EventType, context: Context) -> Iterator[Diagnostic]:
    for extension in event.extensions:
        if not ATTRIBUTE_NAME.match(extension.name):
            fix = re.sub(r"[^a-z0-9]", "", extension.name.lower())
            yield context.report(
                "CE-ATTR-NAME",
                f"extension name '{extension.name}' must use only a-z and 0-9 (CloudEvents 1.0.2 §3.1.1); e.g. '{fix}'",
                context.event_loc(event, "extensions", extension.name, key=True),
                fix,
            )


@event_rule("CE-ATTR-LENGTH", W, ALL, f"Attribute names are at most {ATTRIBUTE_NAME_SOFT_MAX} characters.")
def attribute_length(event: EventType, context: Context) -> Iterator[Diagnostic]:
    for extension in event.extensions:
        if len(extension.name) > ATTRIBUTE_NAME_SOFT_MAX:
            yield context.report(
                "CE-ATTR-LENGTH",
                f"extension name '{extension.name}' has {len(extension.name)} characters; keep it to {ATTRIBUTE_NAME_SOFT_MAX} or fewer",
                context.event_loc(event, "extensions", extension.name, key=True),
            )


@event_rule("CE-ATTR-RESERVED", E, ALL, "Extensions do not reuse a core attribute name.")
def attribute_reserved(event: EventType, context: Context) -> Iterator[Diagnostic]:
    for extension in event.extensions:
        if extension.name in RESERVED:
            yield context.report(
                "CE-ATTR-RESERVED",
                f"'{extension.name}' is a core or profile attribute; choose another extension name"
                + (" (use the event's 'dataref'/'sequence' keys instead)" if extension.name in _KEYED_EXTENSIONS else ""),
                context.event_loc(event, "extensions", extension.name, key=True),
            )


@event_rule("CE-ATTR-TYPE", E, ALL, "Extension types are CloudEvents types.")
def attribute_type(event: EventType, context: Context) -> Iterator[Diagnostic]:
    for extension in event.extensions:
        if extension.type not in TYPE_NAMES:
            yield context.report(
                "CE-ATTR-TYPE",
                f"extension type '{extension.type}' is not one of {', '.join(TYPE_NAMES)}"
                + did_you_mean(extension.type, TYPE_NAMES),
                context.event_loc(event, "extensions", extension.name, "type"),
                closest(extension.type, TYPE_NAMES),
            )


@event_rule("CE-TYPE-EMPTY", E, ALL, "type is not empty.")
def type_empty(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if not event.type.strip() and context.has(event.file, event.path + ("type",)):
        yield context.report("CE-TYPE-EMPTY", "type must not be empty", context.event_loc(event, "type"))


# Under nlgov the MUST of NLGOV-TYPE-RDNS replaces this SHOULD; under normo ID04 does.
@event_rule("CE-TYPE-RDNS", W, frozenset({"cloudevents"}), "type is prefixed with a reverse-DNS name.")
def type_reverse_dns(event: EventType, context: Context) -> Iterator[Diagnostic]:
    problem = event.type and reverse_dns_problem(event.type, event.profile)
    if problem:
        yield context.report(
            "CE-TYPE-RDNS", f"type '{event.type}' SHOULD start with a reverse-DNS name: {problem}",
            context.event_loc(event, "type"),
        )


def template_problem(source: str) -> str | None:
    """Why ``source``, read as a level-1 URI template (catalog-format.md §9;
    RFC 6570 §1.2), is malformed; None when it is not (or holds no braces)."""
    if not uritemplate.is_template(source):
        return None
    try:
        uritemplate.parameters(source)
    except uritemplate.TemplateError as error:
        return str(error)
    return None


def sample_source(source: str) -> str:
    """``source`` as a URI: a template with each parameter replaced by a
    sample value (a well-formed template; others are returned as written)."""
    if uritemplate.is_template(source) and template_problem(source) is None:
        return uritemplate.sample(source)
    return source


@file_rule("CE-SOURCE-URI", E, ALL, "source is a non-empty URI-reference (or a level-1 URI template of one).")
def source_uri(document: Document, context: Context) -> Iterator[Diagnostic]:
    for source, path in sources(document):
        problem = template_problem(source)
        if problem is not None:
            yield context.report(
                "CE-SOURCE-URI",
                f"source '{source}' is not a URI template of level 1 (RFC 6570; catalog-format.md §9): {problem}",
                document.loc(path),
            )
        elif not source or not is_uri_reference(sample_source(source)):
            templated = " (with each {parameter} replaced by a value)" if uritemplate.is_template(source) else ""
            yield context.report(
                "CE-SOURCE-URI",
                f"source '{source}'{templated} is not a non-empty URI-reference (RFC 3986); "
                "percent-encode spaces and special characters",
                document.loc(path),
            )


@file_rule("CE-SOURCE-ABSOLUTE", W, ALL, "source is an absolute URI.")
def source_absolute(document: Document, context: Context) -> Iterator[Diagnostic]:
    for source, path in sources(document):
        expanded = sample_source(source)
        if source and template_problem(source) is None and is_uri_reference(expanded) and not is_uri(expanded):
            example = context.profile(document.file).example_source
            yield context.report(
                "CE-SOURCE-ABSOLUTE",
                f"source '{source}' SHOULD be an absolute URI, e.g. '{example}'",
                document.loc(path),
            )


@event_rule("CE-DATASCHEMA-URI", E, ALL, "dataschema is an absolute URI.")
def dataschema_uri(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if event.dataschema is not None and not is_uri(event.dataschema):
        yield context.report(
            "CE-DATASCHEMA-URI", f"dataschema '{event.dataschema}' must be an absolute URI (e.g. https://...)",
            context.event_loc(event, "dataschema"),
        )


@file_rule("CE-CONTENTTYPE", E, ALL, "datacontenttype is an RFC 2046 media type.")
def content_type(document: Document, context: Context) -> Iterator[Diagnostic]:
    for value, path in content_types(document):
        if not is_media_type(value):
            yield context.report(
                "CE-CONTENTTYPE", f"datacontenttype '{value}' is not an RFC 2046 media type (type/subtype, e.g. application/json)",
                document.loc(path),
            )
