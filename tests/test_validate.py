"""`evcat validate`: events checked against the catalog, rule by rule."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from generator.commands.lint import lint
from generator.commands.validate import FastValidator, validate

from .conftest import ROOT, run_evcat
from .goldens import CATALOGS

CONFORMANCE = Path(__file__).resolve().parent / "data" / "cloudevents-json"  # vendored (its README: source, licence)
NORMO = lint(str(CATALOGS["normo"])).catalog_set
NLGOV = lint(str(CATALOGS["nlgov"])).catalog_set


def full_event(catalog_set: Any, event_type: str, dataversion: str | None) -> dict[str, Any]:
    event = next(e for e in catalog_set.events if e.type == event_type and e.dataversion == dataversion)
    full = event.complete_example(event.examples[0].values)
    for extension in event.extensions:
        if extension.required and extension.name not in full:
            full[extension.name] = "8716871000002"
    if event.sequencetype and "sequence" not in full:
        full["sequence"] = "1"
    return full


METER = full_event(NORMO, "mdm.meter.updated", "2.0.0")
READING = full_event(NORMO, "mdm.reading.validated", "1.0.0")
REMOVED = full_event(NORMO, "mdm.meter.removed", None)
ZAAK = full_event(NLGOV, "nl.overheid.zaken.zaakstatus-gewijzigd", "1.1.0")


def rules_of(catalog_set: Any, event: Any, tmp_path: Path) -> set[str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    return {d.rule for d in validate(catalog_set, [str(path)]).diagnostics}


def changed(event: dict[str, Any], **updates: Any) -> dict[str, Any]:
    result = copy.deepcopy(event)
    for key, value in updates.items():
        if value is ...:
            result.pop(key, None)
        else:
            result[key] = value
    return result


INSTANCE_CASES = [
    ("CE-REQUIRED", NORMO, changed(METER, id=...)),
    ("CE-REQUIRED", NORMO, changed(METER, source="")),
    ("NLGOV-SPECVERSION", NORMO, changed(METER, specversion="0.3")),
    ("CE-TIME", NLGOV, changed(ZAAK, time="lunchtime")),
    ("NORMO-TIME", NORMO, changed(METER, time="2024-01-01T00:00:00Z")),
    ("NORMO-TIME", NORMO, changed(METER, time=...)),
    ("NORMO-SUBJECT", NORMO, changed(METER, subject="")),
    ("CE-INTEGER-RANGE", NLGOV, changed(ZAAK, prioriteit=2**31)),
    ("CE-ATTR-TYPE", NLGOV, changed(ZAAK, spoedeisend="yes")),
    ("CE-STRING-CHARS", NLGOV, changed(ZAAK, subject="a\u0007b")),
    ("CE-SEQUENCE", NLGOV, changed(ZAAK, sequence="4294967296")),
    ("CE-SEQUENCE", NLGOV, changed(ZAAK, sequence="x")),
    ("CE-DATA-BOTH", NORMO, changed(METER, data_base64="e30=")),
    ("CE-DATA-MISSING", NORMO, changed(METER, data=...)),
    ("CE-DATA-UNEXPECTED", NORMO, changed(REMOVED, data={"a": 1})),
    ("CE-EXTENSION-UNDECLARED", NORMO, changed(METER, nlextra="x")),
    ("CE-ATTR-NAME", NORMO, changed(METER, Bad_Name="x")),
    ("CE-UNKNOWN-EVENT", NORMO, changed(METER, type="mdm.meter.exploded")),
    ("CE-UNKNOWN-EVENT", NORMO, changed(METER, dataversion="9.9.9")),
    ("CE-DATA-SCHEMA", NORMO, changed(METER, data={"meter": {"meterId": 5}})),
    ("NORMO-DATAVERSION", NORMO, changed(READING, dataversion=...)),
    ("NORMO-CONTENTTYPE", NORMO, changed(METER, datacontenttype=...)),
    ("CE-CONTENTTYPE", NORMO, changed(METER, datacontenttype="json")),
    ("CE-SIZE", NLGOV, changed(ZAAK, data={**ZAAK["data"], "status": {**ZAAK["data"]["status"], "toelichting": None}}, nlpad="x" * 70_000)),
    ("NORMO-SIZE-ADVISED", NORMO, changed(METER, data={**METER["data"], "reason": "replacement"}, gridoperator="x" * 70_000)),
    ("NORMO-SIZE-MAX", NORMO, changed(METER, gridoperator="x" * 300_000)),
]


@pytest.mark.parametrize("rule,catalog_set,event", INSTANCE_CASES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(INSTANCE_CASES)])
def test_instance_rule(rule: str, catalog_set: Any, event: dict[str, Any], tmp_path: Path) -> None:
    assert rule in rules_of(catalog_set, event, tmp_path)


@pytest.mark.parametrize("catalog_set,event", [(NORMO, METER), (NORMO, READING), (NORMO, REMOVED), (NLGOV, ZAAK)])
def test_valid_events_pass(catalog_set: Any, event: dict[str, Any], tmp_path: Path) -> None:
    assert rules_of(catalog_set, event, tmp_path) == set()


def test_fast_path_agrees_with_the_detailed_checker() -> None:
    fast = FastValidator(NORMO)
    for rule, catalog_set, event in INSTANCE_CASES:
        if catalog_set is not NORMO:
            continue
        size = len(json.dumps(event, separators=(",", ":")).encode())
        detailed = fast.checker.check(event, wire_size=size)
        assert {p.rule for p in fast.check(event, size)} >= {p.rule for p in detailed}, rule


def test_batch_with_one_bad_event_among_good_ones(tmp_path: Path) -> None:
    bad = changed(METER, data={"meter": {"meterId": "E00000000035671400", "product": "gas", "registers": [{"registerId": "1", "direction": "up", "tariff": "low"}]}})
    (tmp_path / "batch.json").write_text(json.dumps([METER, READING, bad, REMOVED]))
    result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "batch.json"))
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert lines[-1] == "3 of 4 events valid"
    assert "error CE-DATA-SCHEMA event 2 id='example': /data/meter/registers/0/direction" in result.stdout
    assert len(lines) == 2


def test_json_format_reports_index_id_and_pointer(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text(json.dumps([METER, changed(METER, id="e-2", subject="")]))
    result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "b.json"), "--format", "json")
    [diagnostic] = json.loads(result.stdout)["diagnostics"]
    assert diagnostic["rule"] == "NORMO-SUBJECT"
    assert (diagnostic["index"], diagnostic["id"], diagnostic["pointer"]) == (1, "e-2", "/subject")


HOSTILE_ITEMS = {  # (text of the hostile item, rule, JSON pointer inside it)
    "nested 3,000 deep": ('{"specversion": "1.0", "data": ' + "[" * 3000 + "]" * 3000 + "}", "CE-FORMAT", "/data" + "/0" * 127),
    "objects 3,000 deep": ('{"id": "x", "data": ' + '{"a":' * 3000 + "1" + "}" * 3000 + "}", "CE-FORMAT", "/data" + "/a" * 127),
    "nested 200 deep": ('{"data": ' + "[" * 200 + "]" * 200 + "}", "CE-FORMAT", "/data" + "/0" * 127),
    "400-digit integer": ('{"id": "x", "data": {"n": [1, ' + "9" * 400 + "]}}", "CE-FORMAT", "/data/n/1"),
    "lone surrogate": ('{"id": "x", "subject": "a\\ud800b"}', "CE-STRING-CHARS", "/subject"),
    "lone surrogate in a key": ('{"id": "x", "data": {"\\udc00": 1}}', "CE-STRING-CHARS", "/data"),
    "NaN": ('{"id": "x", "data": {"v": NaN}}', "CE-FORMAT", "/data/v"),
    "-Infinity": ('{"id": "x", "data": {"v": -Infinity}}', "CE-FORMAT", "/data/v"),
    "1e400": ('{"id": "x", "data": {"v": 1e400}}', "CE-FORMAT", "/data/v"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_ITEMS))
def test_one_hostile_item_of_a_batch_is_reported_alone(case: str, tmp_path: Path) -> None:
    """A batch (one JSON array) with one item beyond what can be checked:
    only that item is reported, with its index and JSON pointer; the other
    items are checked (one of them is invalid and is reported too)."""
    item, rule, pointer = HOSTILE_ITEMS[case]
    bad = changed(READING, subject="")  # NORMO-SUBJECT
    text = f"[{json.dumps(METER)},\n  {item},\n{json.dumps(bad)}, {json.dumps(REMOVED)}]"
    (tmp_path / "batch.json").write_text(text, encoding="utf-8")
    result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "batch.json"), "--format", "json")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    found = {(d["rule"], d.get("index"), d.get("pointer")) for d in report["diagnostics"]}
    assert found == {(rule, 1, pointer), ("NORMO-SUBJECT", 2, "/subject")}, report
    hostile = next(d for d in report["diagnostics"] if d.get("index") == 1)
    assert hostile["message"].startswith("event 1: ")
    text_result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "batch.json"))
    assert text_result.stdout.strip().endswith("2 of 4 events valid"), text_result.stdout
    assert "batch.json:2:3: error" in text_result.stdout, text_result.stdout


def test_a_batch_with_a_syntax_error_is_reported_whole(tmp_path: Path) -> None:
    """An array that is not JSON at all (here after a NaN) stays one bad input, at its position."""
    (tmp_path / "batch.json").write_text(f'[{json.dumps(METER)},\n {{"v": NaN}},\n {{"id": tru}}]', encoding="utf-8")
    result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "batch.json"))
    assert result.returncode == 1
    assert "batch.json:3:9: error CE-FORMAT not valid JSON" in result.stdout, result.stdout
    assert result.stdout.strip().endswith("0 of 1 events valid"), result.stdout


def test_malformed_json_does_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"specversion": "1.0",\n "id": }')
    (tmp_path / "b.json").write_text(json.dumps(METER))
    result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path))
    assert result.returncode == 1
    assert "a.json:2:8: error CE-FORMAT not valid JSON" in result.stdout
    assert result.stdout.strip().endswith("1 of 2 events valid")


def test_unknown_type_and_dataversion(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text(json.dumps(changed(METER, type="mdm.x.happened")) + "\n" + json.dumps(changed(METER, dataversion="3.0.0")) + "\n")
    result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "e.jsonl"))
    assert "e.jsonl:1:1: error CE-UNKNOWN-EVENT" in result.stdout and "no event of type 'mdm.x.happened'" in result.stdout
    assert "e.jsonl:2:1: error CE-UNKNOWN-EVENT" in result.stdout and "no dataversion '3.0.0'" in result.stdout


def test_event_of_300_kb(tmp_path: Path) -> None:
    big = changed(METER, gridoperator="x" * 300_000)
    (tmp_path / "big.json").write_text(json.dumps(big))
    result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "big.json"))
    assert result.returncode == 1 and "NORMO-SIZE-MAX" in result.stdout and "bytes" in result.stdout


def test_stdin_json_lines() -> None:
    text = json.dumps(METER) + "\n" + json.dumps(REMOVED) + "\n"
    result = run_evcat("validate", str(CATALOGS["normo"]), "-", stdin=text)
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "2 of 2 events valid"


def test_undeclared_extension_is_only_a_warning(tmp_path: Path) -> None:
    (tmp_path / "e.json").write_text(json.dumps(changed(METER, nlextra="x")))
    result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "e.json"))
    assert result.returncode == 0 and "warning CE-EXTENSION-UNDECLARED" in result.stdout


def _suite(name: str) -> list[dict[str, Any]]:
    path = CONFORMANCE / f"{name}.json"
    return json.loads(path.read_text())["tests"]


def test_conformance_suite(tmp_path: Path) -> None:
    catalog_set = lint(str(CATALOGS["conformance"])).catalog_set
    for name, valid in (("valid-events", True), ("invalid-events", False)):
        for test in _suite(name):
            if test["id"] == "validSimpleTextData":
                continue  # carries data; the catalog's io.cloudevents.test has none (contract §5)
            path = tmp_path / f"{test['id']}.json"
            path.write_text(json.dumps(test["event"]))
            result = validate(catalog_set, [str(path)])
            assert (result.invalid == 0) == valid, (test["id"], [d.message for d in result.diagnostics])
    for name, valid in (("valid-batches", True), ("invalid-batches", False)):
        for test in _suite(name):
            path = tmp_path / f"{test['id']}.json"
            path.write_text(json.dumps(test["batch"]))
            result = validate(catalog_set, [str(path)])
            assert (result.invalid == 0) == valid, (test["id"], [d.message for d in result.diagnostics])


def test_catalog_argument_is_optional(tmp_path: Path) -> None:
    (tmp_path / "e.json").write_text(json.dumps(METER))
    result = run_evcat("validate", str(tmp_path / "e.json"), cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_parallel_path_gives_the_serial_result_in_input_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.commands.validate as module

    lines = []
    for index in range(6000):
        template = (METER, READING, REMOVED)[index % 3]
        event = changed(template, id=f"e{index}")
        if index % 1000 == 7:
            event["subject"] = ""
        lines.append(json.dumps(event))
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(module, "PARALLEL_MIN_EVENTS", 10**9)
    serial = validate(NORMO, [str(path)])
    monkeypatch.setattr(module, "PARALLEL_MIN_EVENTS", 100)
    parallel = validate(NORMO, [str(path)])
    assert (parallel.events, parallel.invalid) == (serial.events, serial.invalid) == (6000, 6)
    assert parallel.diagnostics == serial.diagnostics
    assert [d.location.line for d in parallel.diagnostics] == [8 + 1000 * i for i in range(6)]


def test_a_source_other_than_the_catalogs_is_a_warning_on_every_path(tmp_path: Path) -> None:
    """CE-SOURCE-MATCH (rules.md; catalog-format.md §9): an event's source is
    compared with its catalog source, on the fast path and the detailed one."""
    other = changed(METER, source="urn:ean13:0000000000000:elsewhere")
    broken = changed(other, subject="")  # the detailed path (NORMO-SUBJECT)
    (tmp_path / "events.jsonl").write_text("\n".join(json.dumps(e) for e in (METER, other, broken)) + "\n")
    result = run_evcat("validate", str(CATALOGS["normo"]), str(tmp_path / "events.jsonl"), "--format", "json")
    report = json.loads(result.stdout)
    found = sorted((d["rule"], d["severity"], d["line"]) for d in report["diagnostics"])
    assert found == [("CE-SOURCE-MATCH", "warning", 2), ("CE-SOURCE-MATCH", "warning", 3), ("NORMO-SUBJECT", "error", 3)], report
    assert "is not the catalog's source" in next(d["message"] for d in report["diagnostics"] if d["line"] == 2)


def test_a_source_matches_its_catalog_source_as_a_level_1_uri_template() -> None:
    from generator.event_checker import source_matches

    template = "/subscriptions/{subscriptionId}/resourceGroups/{group}"
    assert source_matches(template, "/subscriptions/42/resourceGroups/rg-1")
    assert not source_matches(template, "/subscriptions/4/2/resourceGroups/rg-1")  # a variable holds no '/'
    assert not source_matches(template, "/subscriptions//resourceGroups/rg-1")  # one character at least
    assert not source_matches(template, "/subscriptions/42/resourceGroups/rg-1?x")
    assert source_matches("urn:x:a.b", "urn:x:a.b") and not source_matches("urn:x:a.b", "urn:x:aXb")  # '.' is literal
