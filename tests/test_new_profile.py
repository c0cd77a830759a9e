"""A fourth profile touches ``profiles.py``, one rules module and its tests
(issue 29). Shown with a throwaway profile, ``acme``, added in process: its
``Profile`` value goes in through ``profiles.register`` (what an entry in
profiles.py does), its rules are one module (``rules/acme.py``, written to a
temporary file); no other evcat source changes, yet every command knows it.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import jsonschema
import pytest

from generator import profiles

from generator import event_checker
from generator.cli import main
from generator.commands.lint import lint
from generator.profiles import Profile, SizeLimit, Starter
from generator.rules import CHECKS, RULES

from .conftest import ROOT

# What rules/acme.py would hold: one small function per rule id.
RULES_MODULE = '''\
"""ACME event rules 1.0 (profile acme)."""

from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Diagnostic, Severity
from ..model import EventType
from . import Context, declare, event_rule

ACME = frozenset({"acme"})

declare("ACME-TIME", Severity.ERROR, ACME, "(instances) time is present (ACME 2).")
declare("ACME-SIZE", Severity.WARNING, ACME, "(instances) an event is at most 32 kB (ACME 3).")


@event_rule("ACME-TYPE-PREFIX", Severity.ERROR, ACME, "type starts with com.acme. (ACME 1).")
def type_prefix(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if event.type and not event.type.startswith("com.acme."):
        yield context.report(
            "ACME-TYPE-PREFIX", f"type '{event.type}' must start with 'com.acme.' (ACME 1)",
            context.event_loc(event, "type"), "com.acme." + event.type,
        )
'''

# What profiles.py would hold: one entry.
ACME = Profile(
    name="acme",
    title="ACME Event Rules 1.0",
    families=frozenset({"cloudevents", "acme"}),
    rule_prefix="ACME",
    starter=Starter(type="com.acme.registration.created", source="urn:acme:registrations"),
    time_required=True,
    time_rule="ACME-TIME",
    sizes=(SizeLimit(32 * 1024, "ACME-SIZE", "ACME 3 allows {limit} bytes: point to data with dataref"),),
)

CATALOG = """\
catalog: acme-orders
title: ACME orders
version: 1.0.0
profile: acme
producer:
  source: urn:acme:orders
  organization: ACME
defaults:
  datacontenttype: application/json
  time: Moment the order was placed, in UTC.
  id: Random UUID v4.
events:
  - type: {type}
    dataversion: 1.0.0
    title: Order placed
    description: An order was placed.
    data:
      type: object
      description: The order.
      required: [orderId]
      properties:
        orderId: {{type: string, description: Id of the order.}}
    examples:
      - data: {{orderId: A-1}}
"""


@pytest.fixture
def acme(tmp_path: Path) -> Iterator[ModuleType]:
    """The fourth profile and its rules module, registered for one test (and gone after it)."""
    saved_profiles, saved_rules = dict(profiles.PROFILES), dict(RULES)
    saved_checks = {name: list(checks) for name, checks in vars(CHECKS).items()}
    (tmp_path / "acme.py").write_text(RULES_MODULE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("generator.rules.acme", tmp_path / "acme.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        profiles.register(ACME)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)
        profiles.PROFILES.clear()
        profiles.PROFILES.update(saved_profiles)
        RULES.clear()
        RULES.update(saved_rules)
        for name, checks in saved_checks.items():
            getattr(CHECKS, name)[:] = checks
        event_checker._unknown_event_attributes.cache_clear()


def _write(directory: Path, event_type: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "orders.yaml").write_text(CATALOG.format(type=event_type), encoding="utf-8")
    return directory


def test_a_fourth_profile_lints_with_its_rules(acme: ModuleType, tmp_path: Path) -> None:
    assert "acme" in profiles.NAMES and profiles.get("acme") is ACME
    assert lint(str(_write(tmp_path / "good", "com.acme.order.placed"))).diagnostics == []
    bad = lint(str(_write(tmp_path / "bad", "org.example.order.placed"))).diagnostics
    assert [(d.rule, d.location.line, d.suggestion) for d in bad] == [("ACME-TYPE-PREFIX", 13, "com.acme.org.example.order.placed")]
    # The rules of the profiles it does not extend stay out (NL GOV asks for a documented id, an nld URN ...).
    assert not any(rule.id.startswith(("NLGOV-", "NORMO-")) and rule.applies(ACME) for rule in RULES.values())


def test_a_fourth_profile_generates_every_output(acme: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog, out = _write(tmp_path / "catalog", "com.acme.order.placed"), tmp_path / "out"
    assert main(["generate", str(catalog), "-o", str(out), "--no-cache"]) == 0, capsys.readouterr()
    # Docs and AsyncAPI name the profile by its title.
    assert "Catalog `acme-orders` version 1.0.0, ACME Event Rules 1.0." in (out / "docs" / "markdown" / "index.md").read_text()
    assert "checked against the ACME Event Rules 1.0" in (out / "docs" / "events" / "acme-orders" / "com.acme.order.placed.html").read_text()
    assert "Checked against the ACME Event Rules 1.0." in (out / "asyncapi" / "acme-orders.yaml").read_text()
    # The JSON Schema is valid and says what the profile asks (time required).
    (schema_file,) = (out / "jsonschema" / "acme-orders").rglob("event.schema.json")
    schema = json.loads(schema_file.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    event = {"specversion": "1.0", "id": "1", "source": "urn:acme:orders", "type": "com.acme.order.placed",
             "dataversion": "1.0.0", "datacontenttype": "application/json", "time": "2024-05-01T12:00:00Z",
             "data": {"orderId": "A-1"}}
    jsonschema.Draft202012Validator(schema).validate(event)
    assert not jsonschema.Draft202012Validator(schema).is_valid({key: value for key, value in event.items() if key != "time"})
    # The generated package imports, constructs an event (time required: set to now) and reads it back.
    script = (
        "import acme_orders as p\n"
        "from acme_orders import models\n"
        "event = next(iter(p.EVENTS.values()))(data=models.__dict__[[n for n in dir(models) if n.endswith('Data')][0]](orderId='A-1'))\n"
        "wire = event.to_dict()\n"
        "assert wire['time'] and wire['type'] == 'com.acme.order.placed', wire\n"
        "assert p.parse_event(wire) == event\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=out / "python", capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.stdout.strip() == "ok", done.stderr


def test_a_fourth_profile_judges_events(acme: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = _write(tmp_path / "catalog", "com.acme.order.placed")
    good = {"specversion": "1.0", "id": "1", "source": "urn:acme:orders", "type": "com.acme.order.placed",
            "dataversion": "1.0.0", "datacontenttype": "application/json", "time": "2024-05-01T12:00:00Z",
            "data": {"orderId": "A-1"}}
    untimed = {key: value for key, value in good.items() if key != "time"}
    unknown = {**untimed, "type": "com.acme.order.lost"}
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(event) + "\n" for event in (good, untimed, unknown)), encoding="utf-8")
    assert main(["validate", str(catalog), str(events), "--format", "json", "--no-cache"]) == 1
    found = capsys.readouterr().out
    # The profile's time rule, for a known type and for an unknown one alike.
    assert found.count('"ACME-TIME"') == 2 and '"CE-UNKNOWN-EVENT"' in found, found


def test_a_fourth_profile_in_the_commands(acme: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--profile", "acme", "--format", "json"]) == 0
    listed = {rule["id"]: rule for rule in json.loads(capsys.readouterr().out)["rules"]}
    assert {"ACME-TYPE-PREFIX", "ACME-TIME", "ACME-SIZE", "CE-TYPE-RDNS", "PAY-CAMELCASE"} <= set(listed)
    assert not any(rule_id.startswith("NLGOV-") for rule_id in listed)
    assert listed["ACME-TYPE-PREFIX"]["source"] == "ACME Event Rules 1.0"
    assert "acme" in listed["CE-TYPE-RDNS"]["profiles"]
    # evcat init offers it (it has a starter), and the starter lints clean under its rules.
    project = tmp_path / "project"
    assert main(["init", str(project), "--profile", "acme"]) == 0
    capsys.readouterr()
    (starter,) = (project / "catalog").glob("*.yaml")
    assert "profile: acme\n" in starter.read_text() and "type: com.acme.registration.created\n" in starter.read_text()
    assert lint(str(project / "catalog")).diagnostics == []
    # The catalog format (editors' schema, `profile:` values) knows it too.
    assert main(["schema"]) == 0
    assert [*profiles.NAMES] in _enums(json.loads(capsys.readouterr().out)) and "acme" in profiles.NAMES


def _enums(schema: object) -> Iterator[list[object]]:
    if isinstance(schema, dict):
        if isinstance(schema.get("enum"), list):
            yield schema["enum"]
        for value in schema.values():
            yield from _enums(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _enums(value)


def test_the_fourth_profile_is_gone_after_its_test() -> None:
    assert "acme" not in profiles.NAMES and not any(rule_id.startswith("ACME-") for rule_id in RULES)


def test_a_profile_with_an_exact_time_form_names_the_type_that_writes_it() -> None:
    """A profile's time pattern without a generated type that keeps to it
    would give generated code that breaks the profile's own rule."""
    with pytest.raises(ValueError, match="time_class"):
        Profile(name="strict", title="Strict", families=frozenset({"cloudevents"}), time_pattern="^[0-9]{4}Z$")


def test_a_name_is_registered_once() -> None:
    with pytest.raises(ValueError, match="exists"):
        profiles.register(profiles.NORMO)


# Outside profiles.py and the rules package, no evcat module names a profile:
# its name, its title, or the prefix of its own rules' ids (the leaks of issue 29:
# `profile == "normo"`, titles restated, "NORMO-SIZE-ADVISED" in the catalog rules).
PROFILE_HOMES = ("generator/profiles.py", "generator/rules/")


def _string_literals(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value) for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and ast.get_docstring(node, clean=False)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def test_only_profiles_py_and_the_rules_modules_name_a_profile() -> None:
    known = profiles.PROFILES.values()
    prefixes = tuple(f"{profile.rule_prefix}-" for profile in known if profile.rule_prefix)
    leaks = []
    for path in sorted((ROOT / "generator").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(PROFILE_HOMES):
            continue
        for line, text in _string_literals(path):
            if text in profiles.PROFILES or any(profile.title in text for profile in known) or text.startswith(prefixes):
                leaks.append(f"{relative}:{line}: {text!r}")
    for path in sorted((ROOT / "templates").rglob("*.jinja")):
        text = path.read_text(encoding="utf-8")
        leaks += [f"{path.relative_to(ROOT).as_posix()}: {name!r}" for name in profiles.PROFILES if f"'{name}'" in text or f'"{name}"' in text]
    assert leaks == [], "ask the Profile (profiles.py) instead:\n" + "\n".join(leaks)
