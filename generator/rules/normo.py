"""Het Normo Event Data Specification 1.1 (profile normo).

Guideline numbers (ID03...) are those of specs/normo-event-data-specification-1.1.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..diagnostics import Diagnostic, Severity
from ..string_formats import is_semver
from ..loader import Document
from ..model import EventType
from ..naming import IRREGULAR_PAST, is_past_tense, past_tense
from . import NORMO, Context, declare, event_rule, file_rule
from .cloudevents import sources

E, W = Severity.ERROR, Severity.WARNING
_LABEL = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# urn:<type identifier>:<organization>:<logical name source system>
_SOURCE = re.compile(r"^urn:(?P<identifier>[^:]+):(?P<organization>[^:]+):(?P<system>[^:]+)$")
PREFERRED_IDENTIFIERS = ("ean13", "ean", "kvk", "oin")

for _id, _severity, _summary in (
    ("NORMO-TIME", E, "(instances) time is present, UTC, yyyy-mm-ddThh:mm:ss.ffffffZ (ID06)."),
    ("NORMO-SIZE-ADVISED", W, "(instances) an event is at most 64 kB (ID09)."),
    ("NORMO-SIZE-MAX", E, "(instances) an event is at most 256 kB (ID09)."),
    ("NORMO-SUBJECT", E, "(instances) subject, when present, is non-empty (ID11)."),
):
    declare(_id, _severity, NORMO, _summary)


@event_rule("NORMO-TYPE", E, NORMO, "type is <context>.<object>.<executed command> (ID04).")
def type_form(event: EventType, context: Context) -> Iterator[Diagnostic]:
    labels = event.type.split(".")
    if not event.type or (len(labels) == 3 and all(_LABEL.match(label) for label in labels)):
        return
    if len(labels) != 3:
        why = f"it has {len(labels)} label{'s' * (len(labels) != 1)}"
    else:
        why = "labels must be lowercase letters, digits and hyphens"
    yield context.report(
        "NORMO-TYPE",
        f"type '{event.type}' must be <context>.<object>.<executed command>, exactly three lowercase labels "
        f"(Het Normo ID04), e.g. 'mdm.meter.updated': {why}",
        context.event_loc(event, "type"),
    )


@event_rule("NORMO-TYPE-PAST-TENSE", E, NORMO, "The executed command is in the past tense (ID04).")
def type_past_tense(event: EventType, context: Context) -> Iterator[Diagnostic]:
    labels = event.type.split(".")
    if len(labels) != 3 or not _LABEL.match(labels[2]):
        return  # NORMO-TYPE reports the form
    words = labels[2].split("-")
    verb = words[-1]
    if is_past_tense(verb):
        return
    fixed_verb = past_tense(verb)
    fix = ".".join(labels[:2] + ["-".join(words[:-1] + [fixed_verb])])
    yield context.report(
        "NORMO-TYPE-PAST-TENSE",
        f"the executed command '{labels[2]}' in '{event.type}' must be in the past tense (Het Normo ID04): "
        f"did you mean '{fix}'?",
        context.event_loc(event, "type"),
        fix,
    )


@file_rule("NORMO-SOURCE", E, NORMO, "source is urn:<type identifier>:<organization>:<system> (ID03).")
def source_form(document: Document, context: Context) -> Iterator[Diagnostic]:
    for source, path in sources(document):
        if source and not _SOURCE.match(source):
            yield context.report(
                "NORMO-SOURCE",
                f"source '{source}' must be urn:<type identifier>:<organization>:<logical name source system> "
                "(Het Normo ID03), e.g. 'urn:ean13:8716859000003:cmr'",
                document.loc(path),
            )


@file_rule("NORMO-SOURCE-IDENTIFIER", W, NORMO, "The source's type identifier is EAN, KVK or OIN (ID03).")
def source_identifier(document: Document, context: Context) -> Iterator[Diagnostic]:
    for source, path in sources(document):
        match = _SOURCE.match(source)
        if match and match["identifier"].lower() not in PREFERRED_IDENTIFIERS:
            yield context.report(
                "NORMO-SOURCE-IDENTIFIER",
                f"type identifier '{match['identifier']}' in source '{source}' is not one of the preferred "
                "EAN, KVK, OIN (Het Normo ID03): use ean13, kvk or oin",
                document.loc(path),
            )


@event_rule("NORMO-DATAVERSION", E, NORMO, "An event with data has a MAJOR.MINOR.PATCH dataversion (ID07).")
def dataversion(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if not event.has_data:
        return
    if event.dataversion is None:
        if not context.has(event.file, event.path + ("dataversion",)):
            yield context.report(
                "NORMO-DATAVERSION",
                f"'{event.type}' has data, so it needs a dataversion in MAJOR.MINOR.PATCH form (Het Normo ID07), e.g. 1.0.0",
                context.event_loc(event, "type"),
                "1.0.0",
            )
    elif not is_semver(event.dataversion):
        yield context.report(
            "NORMO-DATAVERSION",
            f"dataversion '{event.dataversion}' must be MAJOR.MINOR.PATCH (Het Normo ID07)",
            context.event_loc(event, "dataversion"),
        )


@event_rule("NORMO-CONTENTTYPE", E, NORMO, "An event with data has a datacontenttype (ID05).")
def content_type(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if event.has_data and not event.datacontenttype:
        yield context.report(
            "NORMO-CONTENTTYPE",
            f"'{event.type}' has data, so it needs a datacontenttype (Het Normo ID05): set defaults.datacontenttype "
            "or the event's, e.g. application/json",
            context.event_loc(event, "data", key=True),
            "application/json",
        )


@event_rule("NORMO-DATA-EMPTY", E, NORMO, "data is an object schema with at least one property (ID08).", reads_others=True)
def data_not_empty(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if event.payload is None:
        return
    schema: Any = event.payload.schema
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/$defs/"):
        target = context.built.catalog_set.schemas.get(schema["$ref"][len("#/$defs/"):])
        schema = target.schema if target else schema
    if isinstance(schema, dict) and schema.get("type") == "object" and isinstance(schema.get("properties"), dict) and schema["properties"]:
        return
    yield context.report(
        "NORMO-DATA-EMPTY",
        f"the data of '{event.type}' must be an object schema (type: object) with at least one property "
        "(Het Normo ID08); an event without payload leaves out data",
        context.event_loc(event, "data"),
    )


__all__ = ["IRREGULAR_PAST"]
