"""NL GOV profile for CloudEvents 1.1 (profiles nlgov and normo).

Sections cited are those of specs/nl-gov-cloudevents-profile-1.1.md.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from ..diagnostics import Diagnostic, Severity
from ..string_formats import SEMVER, is_json_media_type
from ..loader import Document
from ..model import EventType
from . import NLGOV, Context, declare, event_rule, file_rule
from .cloudevents import content_types, reverse_dns_problem, sources

E, W = Severity.ERROR, Severity.WARNING
NLGOV_ONLY = NLGOV  # rules normo replaces (profiles.NORMO.replaces)
_VERSION_LIKE = re.compile(r"^v?[0-9]+([._-]?[0-9]+)*$|-v[0-9]+$")
_VERSION_LABEL = re.compile(r"^v[1-9][0-9]*$")

declare("NLGOV-SPECVERSION", E, NLGOV, "(instances) specversion MUST be 1.0 (§3.3.3).")


@event_rule("NLGOV-TYPE-RDNS", E, NLGOV_ONLY, "type MUST be reverse domain name notation (§3.3.4).")
def type_reverse_dns(event: EventType, context: Context) -> Iterator[Diagnostic]:
    problem = event.type and reverse_dns_problem(event.type, event.profile)
    if problem:
        yield context.report(
            "NLGOV-TYPE-RDNS",
            f"type '{event.type}' MUST be reverse domain name notation (NL GOV §3.3.4): {problem}",
            context.event_loc(event, "type"),
        )


@event_rule("NLGOV-TYPE-VERSION", E, NLGOV, "A version in type is one 'vN' as the last label (§3.3.4).")
def type_version(event: EventType, context: Context) -> Iterator[Diagnostic]:
    labels = event.type.split(".")
    versions = [i for i, label in enumerate(labels) if _VERSION_LIKE.search(label)]
    if not versions:
        return
    last = len(labels) - 1
    if versions == [last] and _VERSION_LABEL.match(labels[last]):
        return
    base = ".".join(label for i, label in enumerate(labels) if i not in versions)
    number = re.findall(r"[0-9]+", labels[versions[-1]])
    fix = f"{base}.v{number[0] if number else 2}"
    yield context.report(
        "NLGOV-TYPE-VERSION",
        f"type '{event.type}' MUST carry at most one version, as 'v<major>' in the last label (NL GOV §3.3.4), e.g. '{fix}'",
        context.event_loc(event, "type"),
        fix,
    )


@event_rule("NLGOV-TYPE-BREAKING", W, NLGOV_ONLY, "A backward-incompatible change SHOULD change the type (§3.3.4).", reads_others=True)
def type_breaking(event: EventType, context: Context) -> Iterator[Diagnostic]:
    match = SEMVER.match(event.dataversion or "")
    if not match:
        return
    majors = context.cache.setdefault("majors-by-type", {})
    if not majors:
        for other in context.built.catalog_set.events:
            other_match = SEMVER.match(other.dataversion or "")
            if other_match:
                majors.setdefault(other.type, set()).add(int(other_match[1]))
    lower = sorted(m for m in majors.get(event.type, ()) if m < int(match[1]))
    if lower:
        labels = event.type.split(".")
        base = ".".join(labels[:-1]) if _VERSION_LABEL.match(labels[-1]) else event.type
        fix = f"{base}.v{match[1]}"
        yield context.report(
            "NLGOV-TYPE-BREAKING",
            f"'{event.type}' has dataversion {event.dataversion} beside major {lower[0]}: a backward-incompatible "
            f"change SHOULD get a new type (NL GOV §3.3.4), e.g. '{fix}', published beside the old one",
            context.event_loc(event, "dataversion"),
            fix,
        )


@functools.lru_cache(maxsize=8192)
def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@event_rule("NLGOV-TYPE-ORGANIZATION", W, NLGOV, "type SHOULD NOT contain organization names (§3.3.4).", reads_others=True)
def type_organization(event: EventType, context: Context) -> Iterator[Diagnostic]:
    organization = context.cache.setdefault("organization", {}).get(event.catalog_id)
    if organization is None:
        catalog = next(c for c in context.built.catalog_set.catalogs if c.id == event.catalog_id)
        organization = _normal(catalog.producer.organization or "")
        context.cache["organization"][event.catalog_id] = organization
    if len(organization) < 3:
        return
    for label in event.type.split("."):
        parts = [label, *label.split("-")]
        if any(_normal(part) == organization for part in parts):
            yield context.report(
                "NLGOV-TYPE-ORGANIZATION",
                f"type '{event.type}' contains the organization name '{label}'; names of organizations SHOULD NOT be "
                "used because they change (NL GOV §3.3.4): name the data source, domain or law instead",
                context.event_loc(event, "type"),
            )
            return


@file_rule("NLGOV-SOURCE-URN", W, NLGOV_ONLY, "source SHOULD be a URN with namespace nld (§3.3.2).")
def source_urn(document: Document, context: Context) -> Iterator[Diagnostic]:
    for source, path in sources(document):
        if source and not source.lower().startswith("urn:nld:"):
            yield context.report(
                "NLGOV-SOURCE-URN",
                f"source '{source}' SHOULD be a URN in the 'nld' namespace (NL GOV §3.3.2), "
                "e.g. 'urn:nld:oin:<OIN>:systeem:<system>'",
                document.loc(path),
            )


@file_rule("NLGOV-SOURCE-LOCATION", E, NLGOV, "source MUST NOT reference a data location (§3.3.2).")
def source_location(document: Document, context: Context) -> Iterator[Diagnostic]:
    for source, path in sources(document):
        if source.lower().startswith(("http://", "https://")):
            yield context.report(
                "NLGOV-SOURCE-LOCATION",
                f"source '{source}' MUST NOT reference an external data location (NL GOV §3.3.2); "
                "identify the organization and system, and use dataref for the data",
                document.loc(path),
            )


@event_rule("NLGOV-TIME-DOC", E, NLGOV, "The meaning of time MUST be documented (§3.4.4).")
def time_documented(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if not event.time:
        yield context.report(
            "NLGOV-TIME-DOC",
            f"the meaning of 'time' for '{event.type}' MUST be documented: add defaults.time or the event's time, "
            "e.g. 'Moment the change was registered in the source system, in UTC.'",
            context.event_loc(event, "type"),
        )


@event_rule("NLGOV-ID-DOC", E, NLGOV, "The meaning of a random id MUST be documented (§3.3.1).")
def id_documented(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if not event.id:
        yield context.report(
            "NLGOV-ID-DOC",
            f"the meaning of 'id' for '{event.type}' MUST be documented (NL GOV §3.3.1): add defaults.id or the "
            "event's id, e.g. 'Random UUID v4; identifies the message only, not the occurrence.'",
            context.event_loc(event, "type"),
        )


@file_rule("NLGOV-CONTENTTYPE-JSON", W, NLGOV, "datacontenttype SHOULD be JSON (§3.4.1).")
def content_type_json(document: Document, context: Context) -> Iterator[Diagnostic]:
    for value, path in content_types(document):
        if not is_json_media_type(value):
            yield context.report(
                "NLGOV-CONTENTTYPE-JSON",
                f"datacontenttype '{value}' SHOULD be JSON (NL GOV §3.4.1): application/json or a +json type",
                document.loc(path),
                "application/json",
            )
