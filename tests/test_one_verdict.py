"""Contract §4.1, one verdict: evcat validate (its detailed checker), the
generated ``parse_event``, the event's event.schema.json alone (jsonschema
with format assertion, jsonschema-rs, check-jsonschema) and the catalog
example check agree (issue 15); what is accepted round-trips exactly.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest

import importlib

from generator import profiles, vocabulary
from generator.commands.generate import render
from generator.naming import python_package_name
from generator.envelope import envelope_schema
from generator.event_checker import EventChecker
from generator.commands.lint import lint
from generator.rules import RULES, finding_severity

from .conftest import ROOT, catalog_text, run_evcat

CATALOGS = [ROOT / "catalog", ROOT / "tests" / "catalogs" / "hostile", ROOT / "tests" / "catalogs" / "conformance",
            ROOT / "tests" / "catalogs" / "source-templates"]


def _errors(problems: list[Any]) -> list[Any]:
    """The problems that are errors, as the catalog sets each rule (catalog-format.md §9)."""
    return [p for p in problems if finding_severity(p.rule, p.setting).name == "ERROR" and not p.rule.endswith("SIZE-ADVISED")]


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("one-verdict")
    for directory in CATALOGS:
        for relative, content in render(lint(str(directory)).catalog_set, ["python"])["python"].items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
    sys.path.insert(0, str(root / "python"))
    return root / "python"


def _judges(catalog_dir: Path):
    catalog_set = lint(str(catalog_dir)).catalog_set
    checker = EventChecker(catalog_set)
    for event in catalog_set.events:
        schema = envelope_schema(event, catalog_set.schemas)
        python_judge = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        rust_judge = jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
        yield event, checker, python_judge, rust_judge


def _parse(module: Any, event: dict[str, Any]) -> Any:
    """The generated parse_event's verdict: the event, or None; any other exception fails the test."""
    from pydantic import ValidationError

    try:
        return module.parse_event(json.dumps(event, ensure_ascii=False))
    except (module.EventError, ValidationError):
        return None


CONFORMANCE = ROOT / "tests" / "data" / "cloudevents-json" / "valid-events.json"


def _seeds(event: Any) -> list[tuple[int, dict[str, Any]]]:
    """The catalog's examples, completed; for the conformance catalog the suite's valid events."""
    seeds = [(example.index, event.complete_example(example.values)) for example in event.examples]
    if event.type == "io.cloudevents.test" and CONFORMANCE.is_file():
        cases = json.loads(CONFORMANCE.read_text(encoding="utf-8"))
        for index, case in enumerate(cases.get("tests", [])):
            value = case.get("event", case) if isinstance(case, dict) else case
            if isinstance(value, dict) and "data" not in value and "data_base64" not in value:
                seeds.append((1000 + index, value))
    return seeds


def _mutations(event: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Named mutations of a valid event: each case listed in issue 15, and more."""
    result: list[tuple[str, dict[str, Any]]] = [("as is", event)]
    for name in list(event):
        dropped = {k: v for k, v in event.items() if k != name}
        result.append((f"drop {name}", dropped))
        result.append((f"null {name}", {**event, name: None}))
        if isinstance(event[name], str):
            result.append((f"{name} + newline", {**event, name: event[name] + "\n"}))
            result.append((f"{name} empty", {**event, name: ""}))
            result.append((f"{name} as number", {**event, name: 123}))
    for extra, value in (("zzunknown", "x"), ("zzflag", True), ("zzbig", 2**40), ("zzfloat", 1.5), ("zzobj", {"a": 1}), ("Bad_Name", "x")):
        result.append((f"add {extra}", {**event, extra: value}))
    result.append(("datacontenttype garbage", {**event, "datacontenttype": "application/json garbage"}))
    result.append(("time without offset", {**event, "time": "2024-01-01T00:00:00"}))
    result.append(("time leap second", {**event, "time": "2016-12-31T23:59:60Z"}))
    result.append(("time 30 February", {**event, "time": "2024-02-30T00:00:00Z"}))
    result.append(("specversion 0.3", {**event, "specversion": "0.3"}))
    # CE-SOURCE-MATCH (catalog-format.md §9): another source, a longer one, a
    # template's parameter holding '/', the template itself
    source = event.get("source")
    if isinstance(source, str):
        result.append(("source elsewhere", {**event, "source": "urn:example:elsewhere"}))
        result.append(("source longer", {**event, "source": source + "/more"}))
        if "/x/" in source:
            result.append(("source parameter with a slash", {**event, "source": source.replace("/x/", "/x/y/", 1)}))
        result.append(("source parameter empty", {**event, "source": source.replace(":x:", "::").replace("/x/", "//")}))
    result.append(("data_base64", {**event, "data_base64": "e30="}))
    result.append(("id with a control character", {**event, "id": "a\u0001b"}))
    result.append(("dataversion as a number", {**event, "dataversion": 1}))
    data = event.get("data")
    if isinstance(data, dict):
        for key, value in data.items():
            snake = "".join("_" + c.lower() if c.isupper() else c for c in key)
            if snake != key:
                moved = {k: v for k, v in data.items() if k != key}
                moved[snake] = value
                result.append((f"data snake_case {snake}", {**event, "data": moved}))
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                result.append((f"data {key} as string", {**event, "data": {**data, key: str(value)}}))
                result.append((f"data {key} false", {**event, "data": {**data, key: False}}))
            if isinstance(value, str):
                result.append((f"data {key} as number", {**event, "data": {**data, key: 0}}))
                result.append((f"data {key} with a newline", {**event, "data": {**data, key: value + "\n"}}))
                result.append((f"data {key} as the text 0", {**event, "data": {**data, key: "0"}}))
            result.append((f"data {key} null", {**event, "data": {**data, key: None}}))
        result.append(("data with an undeclared property", {**event, "data": {**data, "zzExtra": [1, None]}}))
        result.append(("data null", {**event, "data": None}))
    return result


@pytest.mark.parametrize("catalog_dir", CATALOGS, ids=lambda p: p.name)
def test_every_judge_agrees_on_mutated_examples(catalog_dir: Path, packages: Path) -> None:
    compared = disagreements = 0
    report = []
    settings_seen: set[str] = set()
    for event, checker, python_judge, rust_judge in _judges(catalog_dir):
        module = importlib.import_module(python_package_name(event.catalog_id))
        for index, full in _seeds(event):
            for label, mutated in _mutations(copy.deepcopy(full)):
                found, _ = checker.find(mutated)
                if found is not None and found.key != event.key:
                    continue  # another event's schema judges it
                parsed = _parse(module, mutated)
                verdicts = {
                    "checker": not _errors(checker.check(mutated)),
                    "jsonschema": python_judge.is_valid(mutated),
                    "jsonschema-rs": rust_judge.is_valid(mutated),
                    "parse_event": parsed is not None,
                }
                compared += 1
                if parsed is not None:  # nothing invented, nothing lost (nulls sent for attributes mean unset)
                    sent = {k: v for k, v in mutated.items() if v is not None or k == "data"}
                    dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
                    if dumped != sent:
                        report.append(f"{event.type} {event.dataversion} seed {index}, {label}: round trip {dumped} != {sent}")
                if len(set(verdicts.values())) != 1:
                    disagreements += 1
                    report.append(f"{event.type} {event.dataversion} seed {index}, {label}: {verdicts}")
                if label == "source elsewhere" and not _errors(checker.check(full)):
                    # CE-SOURCE-MATCH as the catalog sets it (catalog-format.md §9): only an error refuses
                    setting = event.rule_setting("CE-SOURCE-MATCH") or "warning"
                    settings_seen.add(setting)
                    if set(verdicts.values()) != {setting != "error"}:
                        report.append(f"{event.type} {event.dataversion} seed {index}, {label} under {setting}: {verdicts}")
    assert compared > 50, "too few events compared (is shared/ beside the project?)"
    if catalog_dir.name == "source-templates":
        assert settings_seen == {"error", "warning", "off"}, settings_seen
    assert not report, "\n".join(report[:40])


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _validate(catalog_dir: Path, tmp_path: Path, event: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    return run_evcat("validate", str(catalog_dir), str(path))


NORMO_EVENT = {
    "specversion": "1.0", "id": "1", "source": "urn:ean13:8716859000003:tst", "type": "tst.thing.happened",
    "dataversion": "1.0.0", "time": "2024-01-01T00:00:00.000000Z", "datacontenttype": "application/json",
    "data": {"thingId": "a"},
}


@pytest.mark.parametrize("value", [None, "application/json garbage", "application/json\n"])
def test_validate_rejects_a_missing_or_malformed_datacontenttype_under_normo(tmp_path: Path, value: Any) -> None:
    catalog_dir = _write(tmp_path, catalog_text("normo"))
    result = _validate(catalog_dir, tmp_path, {**NORMO_EVENT, "datacontenttype": value})
    assert result.returncode == 1, result.stdout
    rule = {None: "NORMO-CONTENTTYPE", "application/json garbage": "CE-CONTENTTYPE"}.get(value, "CE-STRING-CHARS")
    assert rule in result.stdout


def test_a_missing_dataversion_is_read_by_type_under_nlgov(tmp_path: Path) -> None:
    # Contract §5: optional on the wire when the type has one dataversion.
    catalog_dir = _write(tmp_path, catalog_text("nlgov"))
    event = {"specversion": "1.0", "id": "1", "source": "urn:nld:oin:00000001823288444000:systeem:test",
             "type": "nl.test.thing-happened", "data": {"thingId": "a"}}
    result = _validate(catalog_dir, tmp_path, event)
    assert result.returncode == 0, result.stdout


def test_an_example_without_a_required_extension_is_an_error(tmp_path: Path) -> None:
    events = """\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    extensions:
      nlcode: {type: String, required: true, description: A code.}
    data:
      type: object
      description: The thing.
      properties:
        thingId: {type: string, description: Id of the thing.}
    examples:
      - data: {thingId: a}
"""
    result = lint(str(_write(tmp_path, catalog_text("nlgov", events=events))))
    messages = [d.message for d in result.diagnostics if d.rule == "CAT-EXAMPLE"]
    assert messages and "nlcode" in messages[0] and "[CE-REQUIRED]" in messages[0]


def test_check_jsonschema_validates_every_example_with_the_event_schema_alone(tmp_path: Path) -> None:
    """Contract §4.1: event.schema.json is self-contained (no other file, no network).
    check-jsonschema's command runs in this process (click's runner): one
    start-up of the tool, not one per event."""
    from click.testing import CliRunner

    try:
        from check_jsonschema import main as check_jsonschema
    except ImportError:
        pytest.fail("check-jsonschema is a test dependency: pip install -e '.[test]'")
    checked = 0
    for catalog_dir in CATALOGS:
        out = tmp_path / catalog_dir.name
        assert run_evcat("generate", str(catalog_dir), "-o", str(out), "--only", "jsonschema", "--no-cache").returncode == 0
        catalog_set = lint(str(catalog_dir)).catalog_set
        from generator.render import event_dir

        for event in catalog_set.events:
            if not event.examples:
                continue
            schema_dir = tmp_path / "alone" / event_dir(event)
            schema_dir.mkdir(parents=True)
            shutil.copy(out / "jsonschema" / event_dir(event) / "event.schema.json", schema_dir / "event.schema.json")
            instances = []
            for example in event.examples:
                path = schema_dir / f"example-{example.index}.json"
                path.write_text(json.dumps(event.complete_example(example.values)), encoding="utf-8")
                instances.append(str(path))
            result = CliRunner().invoke(check_jsonschema, ["--schemafile", str(schema_dir / "event.schema.json"), *instances])
            assert result.exit_code == 0, f"{event.type} {event.dataversion}: {result.output}"
            checked += len(instances)
    assert checked >= 10


def test_the_vocabulary_grammars_agree_with_the_runtime() -> None:
    """The runtime carries its own copies (it needs only pydantic): same verdicts on one corpus."""
    sys.path.insert(0, str(ROOT))
    from generator.runtime import _http, _reading, _values

    corpus = ["http://x", "urn:nld:oin:1:x", "http://x\n", "a b", "", "/relative", "mailto:a@b", "http://[::1]:80/p?q#f",
              "%zz", "x:%41", "https://example.nl/a b"]
    for value in corpus:
        assert bool(_values.URI.match(value)) == bool(vocabulary.URI.match(value)), value
        assert bool(_values.URI_REFERENCE.match(value) and value) == bool(vocabulary.URI_REFERENCE.match(value) and value), value
    assert _reading.MAX_DEPTH == vocabulary.MAX_DEPTH
    for value in ["ok", "a\x7f", "\ufffe", "\x00", "é", "\u0085"]:
        assert bool(_values._BAD_CHARS.search(value)) == vocabulary.has_bad_chars(value), repr(value)
    for header in ['a "b" 100% é', "urn:x", True, 5, "\t~", "2024-01-01T00:00:00Z"]:
        assert _http._header_value(header) == vocabulary.header_value(header), repr(header)


def test_every_profile_is_one_value() -> None:
    assert set(profiles.NAMES) == {"cloudevents", "nlgov", "normo"}
    for profile in profiles.PROFILES.values():
        assert profile.name in profile.families
        for rule_id in profile.replaces:
            assert rule_id in RULES
    assert profiles.get("nonsense") is profiles.DEFAULT


CONSUMER = '''\
from meter_data import AnyEvent, parse_event
from meter_data.events import MdmMeterRemoved, MdmMeterUpdatedV2_0_0


def handle(raw: bytes) -> str:
    event: AnyEvent = parse_event(raw)
    if isinstance(event, MdmMeterUpdatedV2_0_0):
        return event.data.meter.meter_id + event.type + event.time.isoformat()
    if isinstance(event, MdmMeterRemoved):
        return event.type + (event.subject or "")
    return event.type + event.id
'''


def test_consumer_code_in_the_readme_style_passes_mypy_strict(packages: Path, tmp_path: Path) -> None:
    """parse_event returns the catalog's union: isinstance narrows, then event.data.<field> is typed."""
    (tmp_path / "consumer.py").write_text(CONSUMER, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy"), str(tmp_path / "consumer.py")],
        capture_output=True, text=True, timeout=300, env={**__import__("os").environ, "MYPYPATH": str(packages)},
    )
    assert result.returncode == 0, result.stdout + result.stderr


REGISTER = {"registerId": "1.8.1", "direction": "consumption", "tariff": "normal"}


def test_parse_event_fills_in_nothing_and_loses_nothing(packages: Path) -> None:
    from pydantic import ValidationError

    import meter_data
    import zaken

    raw = {"specversion": "1.0", "type": "mdm.meter.updated", "dataversion": "1.0.1", "id": "1",
           "source": "urn:ean13:8716859000003:cmr", "time": "2024-01-01T00:00:00.000000Z",
           "datacontenttype": "application/json", "data": {"meterId": "E00000000035671400", "zzExtra": None}}
    event = meter_data.parse_event(raw)
    assert event.model_dump(mode="json", by_alias=True, exclude_unset=True) == raw
    assert event.data.smart is None  # a default of the schema is not invented on reading
    with pytest.raises(ValidationError):  # Het Normo: time is required, never now()
        meter_data.parse_event({k: v for k, v in raw.items() if k != "time"})
    with pytest.raises(ValidationError):  # the wire uses the catalog's names only
        meter_data.parse_event({**raw, "data": {"meter_id": "E00000000035671400"}})
    with pytest.raises(ValidationError):  # JSON types as sent
        meter_data.parse_event({**raw, "data": {"meterId": 12}})
    with pytest.raises(ValidationError):
        meter_data.parse_event({**raw, "source": raw["source"] + "\n"})
    constructed = meter_data.events.MdmMeterUpdatedV1_0_1(data=meter_data.models.MdmMeterUpdatedV1_0_1Data(meter_id="E00000000035671400"))
    wire = constructed.to_dict()
    assert wire["time"].endswith("Z") and len(wire["time"]) == 27 and wire["id"] and wire["source"]
    meter = meter_data.models.Meter(meter_id="E00000000035671400", product="electricity", registers=[REGISTER])  # defaults applied
    assert meter.model_dump(mode="json", by_alias=True, exclude_unset=True)["smart"] is True
    assert meter_data.models.Meter.model_validate({"meterId": "E00000000035671400", "product": "electricity", "registers": [REGISTER]}).smart is None
    removed = zaken.parse_event if False else meter_data.parse_event(
        {"specversion": "1.0", "type": "mdm.meter.removed", "id": "1", "source": "urn:ean13:8716859000003:cmr",
         "time": "2024-01-01T00:00:00.000000Z"})
    assert removed.data is None and "data" not in removed.to_dict()


def test_patterns_mean_what_ecma_262_means_for_every_judge(tmp_path: Path) -> None:
    """\\d is ASCII and $ is the end of the input (JSON Schema: ECMA-262), for
    evcat validate, parse_event and event.schema.json under both validators."""
    events = """\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      required: [code]
      properties:
        code: {type: string, pattern: '^\\d+\\w?$', description: A code.}
"""
    catalog_dir = tmp_path / "catalog"
    catalog_dir.mkdir()
    (catalog_dir / "c.yaml").write_text(catalog_text("nlgov", events=events), encoding="utf-8")
    out = tmp_path / "out"
    assert run_evcat("generate", str(catalog_dir), "-o", str(out), "--no-cache").returncode == 0
    schema = json.loads((out / "jsonschema" / "test-catalog" / "nl.test.thing-happened" / "1.0.0" / "event.schema.json").read_text())
    python_judge = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    rust_judge = jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
    sys.path.insert(0, str(out / "python"))
    try:
        module = importlib.import_module("test_catalog")
        for code, valid in (("123", True), ("12a", True), ("\u0663\u0663", False), ("12\n", False), ("12\u00e9", False)):
            event = {"specversion": "1.0", "id": "1", "source": "urn:nld:oin:00000001823288444000:systeem:test",
                     "type": "nl.test.thing-happened", "data": {"code": code}}
            path = tmp_path / "event.json"
            path.write_text(json.dumps(event), encoding="utf-8")
            verdicts = {
                "evcat validate": run_evcat("validate", str(catalog_dir), str(path)).returncode == 0,
                "parse_event": _parse(module, event) is not None,
                "jsonschema": python_judge.is_valid(event),
                "jsonschema-rs": rust_judge.is_valid(event),
            }
            assert set(verdicts.values()) == {valid}, (code, verdicts)
    finally:
        sys.path.remove(str(out / "python"))
        sys.modules.pop("test_catalog", None)
