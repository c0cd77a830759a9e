"""Compatibility classification and version verdicts, table-driven (issue 6)."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.commands.diff import diff_events, diff_sets, required_bump
from generator.commands.lint import check
from generator.loader import load_text

from .conftest import SOURCES, TYPES, run_evcat

BASE: dict[str, Any] = {
    "type": "object",
    "description": "P.",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "maxLength": 10, "description": "N."},
        "note": {"type": "string", "description": "An optional note."},
        "count": {"type": "integer", "description": "C."},
        "size": {"type": "number", "description": "S."},
        "kind": {"type": "string", "enum": ["a", "b"], "description": "K."},
    },
}


def event_yaml(profile: str, schema: dict[str, Any], dataversion: str, extensions: dict[str, Any] | None = None,
               deprecated: bool = False, type_: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": type_ or TYPES[profile], "dataversion": dataversion, "title": "Thing", "description": "D.", "data": schema,
    }
    if extensions:
        event["extensions"] = extensions
    if deprecated:
        event["deprecated"] = True
    return event


def catalog(profile: str, events: list[dict[str, Any]]) -> Any:
    document = {
        "catalog": "test-catalog", "title": "T", "version": "1.0.0", "profile": profile,
        "producer": {"source": SOURCES[profile], "organization": "Testorg"},
        "defaults": {"datacontenttype": "application/json", "time": "T.", "id": "I."},
        "rules": {"CAT-VERSION-BUMP": "off", "NLGOV-TYPE-BREAKING": "off"},
        "events": events,
    }
    result = check([load_text(yaml.safe_dump(document, sort_keys=False), "c.yaml")])
    assert not result.has_errors, [str(d.location) + " " + d.message for d in result.diagnostics]
    return result.catalog_set


def closed(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "additionalProperties": False}


def edit(**changes: Any) -> Any:
    def apply(schema: dict[str, Any]) -> dict[str, Any]:
        schema = copy.deepcopy(schema)
        for path, value in changes.items():
            *parents, last = path.split("__")
            target = schema
            for part in parents:
                target = target[part]
            if value is None:
                target.pop(last, None)
            else:
                target[last] = value
        return schema
    return apply


# (name, edit, expected kind, {content model: (backward, forward)})
CASES = [
    ("property added, optional", edit(properties__extra={"type": "string", "description": "E."}), "property added",
     {"open": (True, True), "closed": (True, False)}),
    ("property added, required", edit(properties__extra={"type": "string", "description": "E."}, required=["name", "extra"]),
     "property added", {"open": (False, True), "closed": (False, False)}),
    ("property removed, optional", edit(properties__note=None), "property removed",
     {"open": (True, True), "closed": (False, True)}),
    ("property removed, required", edit(properties__name=None, required=[]), "property removed",
     {"open": (True, False), "closed": (False, False)}),
    ("required to optional", edit(required=[]), "required -> optional", {"open": (True, False), "closed": (True, False)}),
    ("optional to required", edit(required=["name", "note"]), "optional -> required", {"open": (False, True), "closed": (False, True)}),
    ("type widened", edit(properties__count={"type": "number", "description": "C."}), "type widened",
     {"open": (True, False), "closed": (True, False)}),
    ("type widened to nullable", edit(properties__note={"type": ["string", "null"], "description": "An optional note."}),
     "type widened", {"open": (True, False), "closed": (True, False)}),
    ("type narrowed", edit(properties__size={"type": "integer", "description": "S."}), "type narrowed",
     {"open": (False, True), "closed": (False, True)}),
    ("type changed", edit(properties__name={"type": "integer", "description": "N."}), "type changed",
     {"open": (False, False), "closed": (False, False)}),
    ("enum values added", edit(properties__kind__enum=["a", "b", "c"]), "enum values added",
     {"open": (True, False), "closed": (True, False)}),
    ("enum values removed", edit(properties__kind__enum=["a"]), "enum values removed",
     {"open": (False, True), "closed": (False, True)}),
    ("constraint relaxed", edit(properties__name__maxLength=20), "constraint relaxed",
     {"open": (True, False), "closed": (True, False)}),
    ("constraint tightened", edit(properties__name__maxLength=5), "constraint tightened",
     {"open": (False, True), "closed": (False, True)}),
    ("pattern added", edit(properties__note__pattern="^[a-z]+$"), "constraint tightened",
     {"open": (False, True), "closed": (False, True)}),
    ("description only", edit(properties__name__description="The name."), "description",
     {"open": (True, True), "closed": (True, True)}),
]


@pytest.mark.parametrize("model", ["open", "closed"])
@pytest.mark.parametrize("name,change,kind,expected", CASES, ids=[c[0] for c in CASES])
def test_classification(name: str, change: Any, kind: str, expected: dict[str, tuple[bool, bool]], model: str) -> None:
    old_schema = BASE if model == "open" else closed(BASE)
    new_schema = change(old_schema)
    catalog_set = catalog("normo", [event_yaml("normo", old_schema, "1.0.0"), event_yaml("normo", new_schema, "2.0.0")])
    old, new = sorted(catalog_set.events, key=lambda e: e.dataversion)
    changes = [c for c in diff_events(old, new, catalog_set, catalog_set) if c.kind == kind]
    assert changes, diff_events(old, new, catalog_set, catalog_set)
    assert (changes[0].backward, changes[0].forward) == expected[model]


@pytest.mark.parametrize("opening", [True, False])
def test_additional_properties_opened_and_closed(opening: bool) -> None:
    before, after = (closed(BASE), BASE) if opening else (BASE, closed(BASE))
    catalog_set = catalog("normo", [event_yaml("normo", before, "1.0.0"), event_yaml("normo", after, "2.0.0")])
    old, new = sorted(catalog_set.events, key=lambda e: e.dataversion)
    [change] = [c for c in diff_events(old, new, catalog_set, catalog_set) if c.kind.startswith("additionalProperties")]
    assert change.kind == ("additionalProperties opened" if opening else "additionalProperties closed")
    assert (change.backward, change.forward) == ((True, False) if opening else (False, True))


EXTENSION_CASES = [
    ("optional extension added", {}, {"ext": {"type": "String", "description": "E."}}, "extension added", (True, True)),
    ("required extension added", {}, {"ext": {"type": "String", "required": True, "description": "E."}}, "extension added", (False, True)),
    ("optional extension removed", {"ext": {"type": "String", "description": "E."}}, {}, "extension removed", (True, True)),
    ("required extension removed", {"ext": {"type": "String", "required": True, "description": "E."}}, {}, "extension removed", (True, False)),
]


@pytest.mark.parametrize("name,before,after,kind,expected", EXTENSION_CASES, ids=[c[0] for c in EXTENSION_CASES])
def test_extension_changes(name: str, before: dict[str, Any], after: dict[str, Any], kind: str, expected: tuple[bool, bool]) -> None:
    catalog_set = catalog("normo", [event_yaml("normo", BASE, "1.0.0", before), event_yaml("normo", BASE, "2.0.0", after)])
    old, new = sorted(catalog_set.events, key=lambda e: e.dataversion)
    [change] = [c for c in diff_events(old, new, catalog_set, catalog_set) if c.kind == kind]
    assert (change.backward, change.forward) == expected


def _bump(version: str, level: str) -> str:
    major, minor, patch = (int(part) for part in version.split("."))
    return {"major": f"{major + 1}.0.0", "minor": f"{major}.{minor + 1}.0", "patch": f"{major}.{minor}.{patch + 1}"}[level]


LOWER = {"major": "minor", "minor": "patch", "patch": None}


@pytest.mark.parametrize("model", ["open", "closed"])
@pytest.mark.parametrize("name,change,kind,expected", CASES, ids=[c[0] for c in CASES])
def test_verdicts_for_both_profiles(name: str, change: Any, kind: str, expected: Any, model: str) -> None:
    old_schema = BASE if model == "open" else closed(BASE)
    new_schema = change(old_schema)
    breaking = not expected[model][1]
    # normo: the bump the change needs passes; one level less is a violation.
    old_set = catalog("normo", [event_yaml("normo", old_schema, "1.0.0")])
    probe = catalog("normo", [event_yaml("normo", old_schema, "1.0.0"), event_yaml("normo", new_schema, "9.0.0")])
    old, new = sorted(probe.events, key=lambda e: e.dataversion)
    needed = required_bump(diff_events(old, new, probe, probe))
    assert needed == ("major" if breaking else "patch" if kind == "description" else "minor")
    right = catalog("normo", [event_yaml("normo", old_schema, "1.0.0", deprecated=True), event_yaml("normo", new_schema, _bump("1.0.0", needed))])
    assert [r.violations for r in diff_sets(old_set, right) if r.violations] == []
    if LOWER[needed]:
        short = catalog("normo", [event_yaml("normo", old_schema, "1.0.0"), event_yaml("normo", new_schema, _bump("1.0.0", LOWER[needed]))])
        assert any("needs a" in v for r in diff_sets(old_set, short) for v in r.violations)
    # nlgov: a breaking change under the same type is a violation, whatever the bump.
    nl_old = catalog("nlgov", [event_yaml("nlgov", old_schema, "1.0.0")])
    nl_same = catalog("nlgov", [event_yaml("nlgov", old_schema, "1.0.0"), event_yaml("nlgov", new_schema, _bump("1.0.0", needed))])
    nl_violations = [v for r in diff_sets(nl_old, nl_same) for v in r.violations]
    assert bool(nl_violations) == breaking
    if breaking:
        assert "new type" in nl_violations[0]
        nl_new_type = catalog("nlgov", [event_yaml("nlgov", old_schema, "1.0.0"),
                                        event_yaml("nlgov", new_schema, "2.0.0", type_=TYPES["nlgov"] + ".v2")])
        assert [v for r in diff_sets(nl_old, nl_new_type) for v in r.violations] == []


def test_changed_in_place_and_removed_without_deprecation() -> None:
    old_set = catalog("normo", [event_yaml("normo", BASE, "1.0.0"), event_yaml("normo", BASE, "1.0.0", type_="tst.other.happened")])
    new_set = catalog("normo", [event_yaml("normo", edit(properties__extra={"type": "string", "description": "E."})(BASE), "1.0.0")])
    reports = {r.type: r for r in diff_sets(old_set, new_set)}
    assert "changed in place" in reports[TYPES["normo"]].violations[0]
    assert reports["tst.other.happened"].status == "removed"
    assert "without being deprecated" in reports["tst.other.happened"].violations[0]


def test_versions_sort_numerically() -> None:
    catalog_set = catalog("normo", [event_yaml("normo", BASE, v) for v in ("1.10.0", "1.9.0", "1.2.0")])
    from generator.commands.diff import consecutive
    assert [(o.dataversion, n.dataversion) for o, n, _ in consecutive(catalog_set)] == [("1.2.0", "1.9.0"), ("1.9.0", "1.10.0")]


def test_diff_between_two_git_commits(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "catalog").mkdir(parents=True)
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("config", "user.email", "t@example.nl")
    git("config", "user.name", "T")
    document = {
        "catalog": "test-catalog", "title": "T", "version": "1.0.0", "profile": "normo",
        "producer": {"source": SOURCES["normo"], "organization": "Testorg"},
        "defaults": {"datacontenttype": "application/json", "time": "T.", "id": "I."},
        "events": [event_yaml("normo", BASE, "1.0.0")],
    }
    path = repo / "catalog" / "c.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    git("add", ".")
    git("commit", "-qm", "one")
    document["events"].append(event_yaml("normo", edit(properties__name=None, required=[])(BASE), "1.1.0"))
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    git("commit", "-qam", "two")
    path.write_text("broken: [yaml")  # the working tree is not read
    result = run_evcat("diff", "git:HEAD~1:catalog", "git:HEAD:catalog", "--format", "json", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    [event] = report["events"]
    assert (event["old"], event["new"], event["status"]) == ("1.0.0", "1.1.0", "added")
    assert any(c["kind"] == "property removed" and c["breaking"] for c in event["changes"])
    assert "needs a major" in event["violations"][0]
    assert path.read_text() == "broken: [yaml"
    assert run_evcat("diff", "git:nope:catalog", "git:HEAD:catalog", cwd=repo).returncode == 2


def test_docs_show_what_changed_between_dataversions(tmp_path: Path) -> None:
    from generator.commands.generate import render
    from generator.commands.lint import lint
    from .conftest import ROOT

    files = render(lint(str(ROOT / "catalog")).catalog_set, ["docs"])["docs"]
    page = files["docs/events/meter-data/mdm.meter.updated.html"].decode()
    assert "Changes since 1.2.0" in page and "Changes since 1.0.1" in page
    assert "<code>/data/meterId</code>: property removed (was required) <span class=\"badge deprecated\">breaks consumers</span>" in page


@pytest.mark.parametrize("spec", ["git:HEAD:catalog", "git:HEAD:catalog/c.yaml", "git:HEAD:"])
def test_a_git_catalog_with_errors_is_reported_at_its_git_name(tmp_path: Path, spec: str) -> None:
    """Diagnostics of a ``git:REF:PATH`` side name the file as ``git:REF:<path
    in the repository>``, never the private temporary directory it was read into."""
    repo = tmp_path / "repo"
    (repo / "catalog").mkdir(parents=True)
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)
    git("init", "-q")
    git("config", "user.email", "t@example.nl")
    git("config", "user.name", "T")
    document = {
        "catalog": "Bad_Id", "title": "T", "version": "1.0.0", "profile": "normo",
        "producer": {"source": SOURCES["normo"], "organization": "Testorg"},
        "defaults": {"datacontenttype": "application/json", "time": "T.", "id": "I."},
        "events": [event_yaml("normo", BASE, "1.0.0")],
    }
    (repo / "catalog" / "c.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    git("add", ".")
    git("commit", "-qm", "one")
    result = run_evcat("diff", spec, "catalog", cwd=repo)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "evcat-git-" not in result.stdout + result.stderr, result.stdout
    lines = [line for line in result.stdout.splitlines() if " CAT-ID " in line]
    assert lines and lines[0].startswith("git:HEAD:catalog/c.yaml:1:10: error CAT-ID "), result.stdout
    assert f"OLD catalog {spec} has errors" in result.stderr
