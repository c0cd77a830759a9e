"""Compatibility of catalog versions: `evcat diff`, the CAT-VERSION-BUMP lint, changelogs.

Each change is classified like Confluent Schema Registry's JSON Schema rules:
- backward compatible: the new schema accepts every event the old producer sent;
- forward compatible: the old schema (what existing consumers read with)
  accepts every event the new producer sends.
Consumers read events, so a change that is not forward compatible breaks them.
Open content models (``additionalProperties`` not false) tolerate unknown
properties; closed ones do not. A producer sends the properties its schema
declares and, in an open model, unknown ones only under names that neither
version declares. Schemas are compared by what they accept (diff_schemas.py),
not by their spelling.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from ..model import CatalogSet, EventType
from ..profiles import Profile
from ..string_formats import semver_key
from .diff_schemas import Change, SchemaDiff

__all__ = ["Change", "SchemaDiff", "consecutive", "diff_events", "diff_sets"]


def diff_events(old: EventType, new: EventType, old_set: CatalogSet, new_set: CatalogSet,
                witnesses: bool = False) -> list[Change]:
    """Every change from ``old`` to ``new`` (payload and context attributes);
    with ``witnesses``, each payload change that breaks consumers carries an
    instance that shows it (``Change.witness``)."""
    schema_diff = SchemaDiff(old_set.schemas, new_set.schemas)
    if (old.payload is None) != (new.payload is None):
        what = "data added" if new.payload is not None else "data removed"
        schema_diff.add("/data", "type changed", what, False, False)
    elif old.payload is not None and new.payload is not None:
        schema_diff.compare(old.payload.schema, new.payload.schema, "/data")
        if witnesses:
            schema_diff.find_witnesses(old.payload.schema, new.payload.schema)
    old_extensions = {extension.name: extension for extension in old.extensions}
    new_extensions = {extension.name: extension for extension in new.extensions}
    for name in sorted(set(new_extensions) - set(old_extensions)):
        required = new_extensions[name].required
        schema_diff.add(f"/{name}", "extension added", "required" if required else "optional", not required, True)
    for name in sorted(set(old_extensions) - set(new_extensions)):
        required = old_extensions[name].required
        schema_diff.add(f"/{name}", "extension removed", "was required" if required else "was optional", True, not required)
    for name in sorted(set(old_extensions) & set(new_extensions)):
        before, after = old_extensions[name], new_extensions[name]
        if before.type != after.type:
            schema_diff.add(f"/{name}", "type changed", f"{before.type} -> {after.type}", False, False)
        if before.required != after.required:
            if after.required:
                schema_diff.add(f"/{name}", "optional -> required", "extension", False, True)
            else:
                schema_diff.add(f"/{name}", "required -> optional", "extension", True, False)
        if before.description != after.description:
            schema_diff.add(f"/{name}", "description", "extension description changed", True, True)
    for attribute in ("title", "description", "subject", "time", "id", "dataref"):
        if getattr(old, attribute) != getattr(new, attribute):
            schema_diff.add(f"/{attribute}" if attribute not in ("title", "description") else "/", "description",
                            f"{attribute} changed", True, True)
    if old.datacontenttype != new.datacontenttype:
        schema_diff.add("/datacontenttype", "type changed", f"{old.datacontenttype} -> {new.datacontenttype}", False, False)
    if old.sequencetype != new.sequencetype:
        schema_diff.add("/sequence", "type changed", f"{old.sequencetype} -> {new.sequencetype}", False, False)
    return schema_diff.changes


def required_bump(changes: list[Change]) -> str | None:
    """Het Normo ID07 / semver: major for breaking, minor for additive, patch for documentation."""
    if not changes:
        return None
    if any(change.breaking for change in changes):
        return "major"
    if all(change.documentation_only for change in changes):
        return "patch"
    return "minor"


def actual_bump(old: str | None, new: str | None) -> str | None:
    before, after = semver_key(old or ""), semver_key(new or "")
    if before == after or min(before + after) < 0:
        return None
    if after[0] != before[0]:
        return "major"
    if after[1] != before[1]:
        return "minor"
    return "patch"


_RANK = {None: 0, "patch": 1, "minor": 2, "major": 3}


@dataclass
class EventReport:
    type: str
    old: str | None
    new: str | None
    status: str  # added | removed | changed | unchanged
    changes: list[Change] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    # The services that receive what breaks (catalog-format.md §9): "service (range)".
    receivers: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["changes"] = [{**asdict(change), "breaking": change.breaking} for change in self.changes]
        return data


def version_verdict(profile: Profile, old: EventType, new: EventType, changes: list[Change]) -> list[str]:
    """The versioning rules of the profile for a change from ``old`` to ``new``."""
    needed = required_bump(changes)
    if needed is None:
        return []
    breaking = needed == "major"
    if profile.versioning == "type" and breaking and old.type == new.type:
        return [f"breaking change without a new type: {profile.new_type_source} asks for a new type (e.g. {new.type}.v2) published beside the old one"]
    if old.dataversion == new.dataversion:
        return [f"dataversion {new.dataversion} changed in place ({needed} change); publish it as a new dataversion"] if needed != "patch" else []
    if profile.versioning != "type" or not breaking:
        actual = actual_bump(old.dataversion, new.dataversion)
        if _RANK[actual] < _RANK[needed]:
            source = profile.versioning_source
            return [f"{old.dataversion} -> {new.dataversion} is a {actual or 'no'} bump, but the change needs a {needed} one ({source})"]
    return []


def diff_sets(old_set: CatalogSet, new_set: CatalogSet) -> list[EventReport]:
    old_events = {event.key: event for event in old_set.events}
    new_events = {event.key: event for event in new_set.events}
    reports: list[EventReport] = []
    latest_old: dict[str, EventType] = {}
    for event in old_set.events:
        if event.type not in latest_old or semver_key(event.dataversion or "") > semver_key(latest_old[event.type].dataversion or ""):
            latest_old[event.type] = event
    for key in sorted(set(old_events) | set(new_events), key=lambda k: (k[0], semver_key(k[1] or ""))):
        old, new = old_events.get(key), new_events.get(key)
        if old is not None and new is not None:
            changes = diff_events(old, new, old_set, new_set, witnesses=True)
            report = EventReport(key[0], key[1], key[1], "changed" if changes else "unchanged", changes)
            report.violations = version_verdict(new.profile, old, new, changes)
        elif new is not None:
            report = EventReport(key[0], None, key[1], "added")
            previous = latest_old.get(new.type)
            if previous is not None and previous.key != new.key and semver_key(new.dataversion or "") > semver_key(previous.dataversion or ""):
                report.old = previous.dataversion
                report.changes = diff_events(previous, new, old_set, new_set, witnesses=True)
                report.violations = version_verdict(new.profile, previous, new, report.changes)
        else:
            assert old is not None
            report = EventReport(key[0], key[1], None, "removed")
            if not old.deprecated:
                report.violations.append("removed without being deprecated first: mark it deprecated in a release before removing it")
        report.receivers = _hurt(report, old_set, new_set)
        reports.append(report)
    return reports


def _hurt(report: EventReport, old_set: CatalogSet, new_set: CatalogSet) -> list[str]:
    """The services a report's breaking change reaches (catalog-format.md §9):
    those whose ``receives`` range holds the new (type, dataversion), or the
    old one for a removed event; each as "name (catalog) receives RANGE"."""
    if report.status == "removed":
        catalog_set, version = old_set, report.old
    elif any(change.breaking for change in report.changes):
        catalog_set, version = new_set, report.new
    else:
        return []
    found: list[str] = []
    for catalog in catalog_set.catalogs:
        for service in catalog.receivers_of(report.type, version):
            ranges = sorted({link.dataversion or "*" for link in service.receives
                             if link.receives(report.type, version)})
            found.append(f"{service.name} ({catalog.id}, receives {' or '.join(ranges)})")
    return found


def consecutive(catalog_set: CatalogSet) -> Iterator[tuple[EventType, EventType, list[Change]]]:
    """Consecutive dataversions of each type within one catalog set, diffed."""
    by_type: dict[str, list[EventType]] = {}
    for event in catalog_set.events:
        if event.dataversion:
            by_type.setdefault(event.type, []).append(event)
    for events in by_type.values():
        events.sort(key=lambda e: semver_key(e.dataversion or ""))
        for old, new in zip(events, events[1:]):
            yield old, new, diff_events(old, new, catalog_set, catalog_set)


def _versions(report: EventReport) -> str:
    if report.old == report.new:
        return report.new or "notification"
    return " -> ".join(v for v in (report.old, report.new) if v) or "notification"


def _witness_words(change: Change) -> str:
    other = "old" if change.witness_accepted_by == "new" else "new"
    return f"witness, accepted by the {change.witness_accepted_by} schema, refused by the {other}"


def _witness_text(change: Change) -> str:
    text = json.dumps(change.witness, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 300 else text[:297] + "..."


def format_text(reports: list[EventReport]) -> str:
    lines = []
    for report in reports:
        if report.status == "unchanged":
            continue
        versions = _versions(report)
        lines.append(f"{report.status.upper():9} {report.type} {versions}")
        for change in report.changes:
            verdict = "breaks consumers" if change.breaking else ("compatible" if change.backward else "consumers unaffected; some old events no longer valid")
            lines.append(f"    {change.path}: {change.kind}{' (' + change.detail + ')' if change.detail else ''} [{verdict}]")
            if change.witness_accepted_by is not None:
                lines.append(f"      {_witness_words(change)}: {_witness_text(change)}")
        for violation in report.violations:
            lines.append(f"    VIOLATION: {violation}")
        if report.receivers:
            lines.append(f"    BREAKS RECEIVERS: {'; '.join(report.receivers)}")
    violations = sum(len(report.violations) for report in reports)
    changed = sum(1 for report in reports if report.status != "unchanged")
    lines.append(f"{changed} event(s) changed, {violations} violation(s)")
    return "\n".join(lines) + "\n"


def format_markdown(reports: list[EventReport]) -> str:
    lines = ["# Catalog changes", ""]
    for report in reports:
        if report.status == "unchanged":
            continue
        versions = _versions(report).replace("->", "→")
        lines.append(f"## {report.status}: `{report.type}` {versions}")
        lines.append("")
        if report.changes:
            lines += ["| Where | Change | Breaks consumers |", "|---|---|---|"]
            lines += [
                f"| `{c.path}` | {c.kind}{' (' + c.detail.replace('|', chr(92) + '|') + ')' if c.detail else ''} | {'yes' if c.breaking else 'no'} |"
                for c in report.changes
            ]
            lines.append("")
            shown = [c for c in report.changes if c.witness_accepted_by is not None]
            lines += [f"- `{c.path}` {_witness_words(c)}: `{_witness_text(c).replace('`', chr(92) + '`')}`" for c in shown]
            if shown:
                lines.append("")
        lines += [f"> **Violation:** {violation}" for violation in report.violations]
        if report.violations:
            lines.append("")
        if report.receivers:
            lines += [f"**Breaks receiving services:** {'; '.join(report.receivers)}", ""]
    return "\n".join(lines) + "\n"


def format_json(reports: list[EventReport]) -> str:
    return json.dumps({"events": [report.to_dict() for report in reports if report.status != "unchanged"],
                       "violations": sum(len(r.violations) for r in reports)}, indent=2) + "\n"
