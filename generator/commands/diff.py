"""Compatibility of catalog versions: `evcat diff`, the CAT-VERSION-BUMP lint, changelogs.

Each change is classified like Confluent Schema Registry's JSON Schema rules:
- backward compatible: the new schema accepts every event the old one did;
- forward compatible: the old schema (what existing consumers read with)
  accepts every event the new one allows.
Consumers read events, so a change that is not forward compatible breaks them.
Open content models (``additionalProperties`` not false) tolerate unknown
properties; closed ones do not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..string_formats import semver_key
from ..model import CatalogSet, EventType, SharedSchema
from ..profiles import Profile

UPPER = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties", "maxContains")
LOWER = ("minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties", "minContains")
EXACT = ("pattern", "format", "const", "multipleOf", "uniqueItems", "contentEncoding")
ANNOTATIONS = ("description", "title", "examples", "default", "deprecated", "$comment", "readOnly", "writeOnly")


@dataclass(frozen=True)
class Change:
    path: str
    kind: str
    detail: str
    backward: bool
    forward: bool

    @property
    def breaking(self) -> bool:
        """Breaks existing consumers (not forward compatible)."""
        return not self.forward

    @property
    def documentation_only(self) -> bool:
        return self.kind == "description"


def _types(schema: dict[str, Any]) -> set[str] | None:
    kind = schema.get("type")
    if kind is None:
        return None
    types = {kind} if isinstance(kind, str) else set(kind)
    if "number" in types:
        types.add("integer")
    return types


def _open(schema: dict[str, Any]) -> bool:
    return schema.get("additionalProperties", True) is not False


class SchemaDiff:
    def __init__(self, old_shared: Mapping[str, SharedSchema], new_shared: Mapping[str, SharedSchema]) -> None:
        self.old_shared, self.new_shared = old_shared, new_shared
        self.changes: list[Change] = []
        self._seen: set[tuple[str, str]] = set()

    def add(self, path: str, kind: str, detail: str, backward: bool, forward: bool) -> None:
        self.changes.append(Change(path or "/", kind, detail, backward, forward))

    def _resolve(self, schema: Any, shared: Mapping[str, SharedSchema]) -> tuple[Any, str | None]:
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/$defs/"):
            name = schema["$ref"][len("#/$defs/"):]
            target = shared.get(name)
            if target is not None:
                merged = dict(target.schema) if isinstance(target.schema, dict) else {"allOf": [target.schema]}
                merged.update({k: v for k, v in schema.items() if k != "$ref"})
                return merged, name
        return schema, None

    def compare(self, old: Any, new: Any, path: str = "") -> None:
        old, old_ref = self._resolve(old, self.old_shared)
        new, new_ref = self._resolve(new, self.new_shared)
        if old_ref and new_ref:
            if (old_ref, new_ref) in self._seen:
                return  # recursion: compared already
            self._seen.add((old_ref, new_ref))
        if not isinstance(old, dict) or not isinstance(new, dict):
            if old != new:
                self.add(path, "type changed", f"{json.dumps(old)} -> {json.dumps(new)}", new is True, old is True)
            return
        self._annotations(old, new, path)
        self._type(old, new, path)
        self._enum(old, new, path)
        self._constraints(old, new, path)
        self._properties(old, new, path)
        if isinstance(old.get("items"), (dict, bool)) or isinstance(new.get("items"), (dict, bool)):
            self.compare(old.get("items", True), new.get("items", True), f"{path}/items")
        for keyword in ("anyOf", "oneOf", "allOf", "not", "if", "then", "else", "prefixItems", "patternProperties"):
            if json.dumps(old.get(keyword), sort_keys=True) != json.dumps(new.get(keyword), sort_keys=True):
                self.add(path, "type changed", f"{keyword} changed", False, False)

    def _annotations(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        for keyword in ANNOTATIONS:
            if old.get(keyword) != new.get(keyword):
                self.add(path, "description", f"{keyword} changed", True, True)

    def _type(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        old_types, new_types = _types(old), _types(new)
        if old_types == new_types:
            return
        shown = f"{old.get('type', 'any')} -> {new.get('type', 'any')}"
        if new_types is None or (old_types is not None and old_types < new_types):
            self.add(path, "type widened", shown, True, False)
        elif old_types is None or new_types < old_types:
            self.add(path, "type narrowed", shown, False, True)
        else:
            self.add(path, "type changed", shown, False, False)

    def _enum(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        if "enum" not in old and "enum" not in new:
            return
        old_values = {json.dumps(v, sort_keys=True) for v in old.get("enum", [])} if "enum" in old else None
        new_values = {json.dumps(v, sort_keys=True) for v in new.get("enum", [])} if "enum" in new else None
        if old_values == new_values:
            return
        added = sorted((new_values or set()) - (old_values or set())) if old_values is not None else []
        removed = sorted((old_values or set()) - (new_values or set())) if new_values is not None else []
        if new_values is None or (old_values is not None and added and not removed):
            self.add(path, "enum values added", ", ".join(added) or "enum removed", True, False)
        elif old_values is None or (removed and not added):
            self.add(path, "enum values removed", ", ".join(removed) or "enum added", False, True)
        else:
            self.add(path, "enum values changed", f"added {', '.join(added)}; removed {', '.join(removed)}", False, False)

    def _constraints(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        for keyword in UPPER + LOWER:
            before, after = old.get(keyword), new.get(keyword)
            if before == after:
                continue
            if keyword in UPPER:
                relaxed = after is None or (before is not None and after > before)
            else:
                relaxed = after is None or (before is not None and after < before)
            kind = "constraint relaxed" if relaxed else "constraint tightened"
            self.add(path, kind, f"{keyword} {before} -> {after}", relaxed, not relaxed)
        for keyword in EXACT:
            before, after = old.get(keyword), new.get(keyword)
            if before == after:
                continue
            if after is None:
                self.add(path, "constraint relaxed", f"{keyword} {json.dumps(before)} removed", True, False)
            elif before is None:
                self.add(path, "constraint tightened", f"{keyword} {json.dumps(after)} added", False, True)
            else:
                self.add(path, "constraint changed", f"{keyword} {json.dumps(before)} -> {json.dumps(after)}", False, False)
        if _open(old) != _open(new):
            if _open(new):
                self.add(path, "additionalProperties opened", "unknown properties now allowed", True, False)
            else:
                self.add(path, "additionalProperties closed", "unknown properties now rejected", False, True)

    def _properties(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        old_properties = old.get("properties") if isinstance(old.get("properties"), dict) else {}
        new_properties = new.get("properties") if isinstance(new.get("properties"), dict) else {}
        old_required = set(old.get("required", []) if isinstance(old.get("required"), list) else [])
        new_required = set(new.get("required", []) if isinstance(new.get("required"), list) else [])
        for name in sorted(set(new_properties) - set(old_properties)):
            required = name in new_required
            self.add(
                f"{path}/{name}", "property added", "required" if required else "optional",
                backward=not required, forward=_open(old),
            )
        for name in sorted(set(old_properties) - set(new_properties)):
            self.add(
                f"{path}/{name}", "property removed", "was required" if name in old_required else "was optional",
                backward=_open(new), forward=name not in old_required,
            )
        for name in sorted(set(old_properties) & set(new_properties)):
            was, now = name in old_required, name in new_required
            if was and not now:
                self.add(f"{path}/{name}", "required -> optional", "", True, False)
            elif now and not was:
                self.add(f"{path}/{name}", "optional -> required", "", False, True)
            self.compare(old_properties[name], new_properties[name], f"{path}/{name}")


def diff_events(old: EventType, new: EventType, old_set: CatalogSet, new_set: CatalogSet) -> list[Change]:
    """Every change from ``old`` to ``new`` (payload and context attributes)."""
    schema_diff = SchemaDiff(old_set.schemas, new_set.schemas)
    if (old.payload is None) != (new.payload is None):
        what = "data added" if new.payload is not None else "data removed"
        schema_diff.add("/data", "type changed", what, False, False)
    elif old.payload is not None and new.payload is not None:
        schema_diff.compare(old.payload.schema, new.payload.schema, "/data")
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
            changes = diff_events(old, new, old_set, new_set)
            report = EventReport(key[0], key[1], key[1], "changed" if changes else "unchanged", changes)
            report.violations = version_verdict(new.profile, old, new, changes)
        elif new is not None:
            report = EventReport(key[0], None, key[1], "added")
            previous = latest_old.get(new.type)
            if previous is not None and previous.key != new.key and semver_key(new.dataversion or "") > semver_key(previous.dataversion or ""):
                report.old = previous.dataversion
                report.changes = diff_events(previous, new, old_set, new_set)
                report.violations = version_verdict(new.profile, previous, new, report.changes)
        else:
            assert old is not None
            report = EventReport(key[0], key[1], None, "removed")
            if not old.deprecated:
                report.violations.append("removed without being deprecated first: mark it deprecated in a release before removing it")
        reports.append(report)
    return reports


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
        for violation in report.violations:
            lines.append(f"    VIOLATION: {violation}")
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
        lines += [f"> **Violation:** {violation}" for violation in report.violations]
        if report.violations:
            lines.append("")
    return "\n".join(lines) + "\n"


def format_json(reports: list[EventReport]) -> str:
    return json.dumps({"events": [report.to_dict() for report in reports if report.status != "unchanged"],
                       "violations": sum(len(r.violations) for r in reports)}, indent=2) + "\n"
