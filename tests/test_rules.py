"""One catalog per rule that breaks only that rule, at a known line; and a clean counterpart.

The expected line is marked in the YAML with a ``#<`` comment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from generator.rules import RULES

from .conftest import TYPES, catalog_text, marked_line


def event(
    type_: str = "nl.test.thing-happened",
    *,
    extra: str = "",
    data: str | None = None,
    dataversion: str | None = "1.0.0",
    title: str = "Thing happened",
) -> str:
    lines = [f"  - type: {type_}"]
    if dataversion is not None:
        lines.append(f"    dataversion: {dataversion}")
    lines += [f"    title: {title}", "    description: A thing happened."]
    text = "\n".join(lines) + "\n" + extra
    if data is None:
        data = (
            "    data:\n      type: object\n      description: The thing.\n      properties:\n"
            "        thingId: {type: string, description: Id of the thing.}\n"
        )
    return text + data


NORMO_EVENT = dict(type_=TYPES["normo"])


@dataclass
class Case:
    rule: str
    bad: str
    good: str = field(default_factory=catalog_text)
    note: str = ""  # for instance rules: the rule named in the CAT-EXAMPLE message
    extra_files: dict[str, str] = field(default_factory=dict)


def with_example(example: str, *, extra: str = "", profile: str = "nlgov", data: str | None = None) -> str:
    ev = event(TYPES[profile], extra=extra, data=data) + "    examples:\n" + example
    return catalog_text(profile, events=ev)


CASES = [
    Case("CAT-YAML", catalog_text(events=event(title="a: b #<"))),
    Case("CAT-DUPLICATE-KEY", catalog_text(events=event(extra="    title: Again #<\n"))),
    Case("CAT-UNKNOWN-KEY", catalog_text(events=event(extra="    titel: Thing happened #<\n"))),
    Case("CAT-REQUIRED", catalog_text(events="  - type: nl.test.thing-happened #<\n    description: A thing happened.\n")),
    Case("CAT-TYPE", catalog_text(header="description: [not, text] #<\n")),
    Case(
        "CAT-DUPLICATE-EVENT",
        catalog_text(events=event() + event().replace("  - type: nl.test.thing-happened", "  - type: nl.test.thing-happened #<")),
    ),
    Case(
        "CAT-REF",
        catalog_text(
            events=event(
                data="    data:\n      type: object\n      description: The thing.\n      properties:\n"
                "        thingId: {$ref: '#/schemas/Missing', description: Id.} #<\n"
            )
        ),
    ),
    Case("CAT-SCHEMA", catalog_text(events=event().replace("{type: string,", "{type: strin,").replace("thing.}\n", "thing.} #<\n"))),
    Case("CAT-SEMVER", catalog_text(events=event(dataversion='"1.0" #<'))),
    Case("CAT-ID", catalog_text(catalog_id="Test_Catalog #<")),
    Case("PAY-CAMELCASE", catalog_text(events=event().replace("        thingId:", "        thing_id:").replace("thing.}\n", "thing.} #<\n"))),
    Case("PAY-SCHEMA-NAME", catalog_text(header="schemas:\n  thing_ref: {type: string, description: A thing.} #<\n")),
    Case("PAY-DESCRIPTION", catalog_text(events=event().replace("{type: string, description: Id of the thing.}", "{type: string} #<"))),
    Case("CE-ATTR-NAME", catalog_text(events=event(extra="    extensions:\n      my_ext: {type: String, description: X.} #<\n"))),
    Case("CE-ATTR-LENGTH", catalog_text(events=event(extra="    extensions:\n      averyveryverylongextension: {type: String, description: X.} #<\n"))),
    Case("CE-ATTR-RESERVED", catalog_text(events=event(extra="    extensions:\n      subject: {type: String, description: X.} #<\n"))),
    Case("CE-ATTR-TYPE", catalog_text(events=event(extra="    extensions:\n      prio: {type: Integr, description: X.} #<\n"))),
    Case("CE-TYPE-EMPTY", catalog_text(events=event(type_='"" #<'))),
    Case("CE-TYPE-RDNS", catalog_text("cloudevents", events=event("mdm.meter.updated #<")), catalog_text("cloudevents")),
    Case("CE-SOURCE-URI", catalog_text(source='"urn:nld:a b" #<')),
    Case("CE-SOURCE-ABSOLUTE", catalog_text("cloudevents", source="/sensors/tn-1234 #<"), catalog_text("cloudevents")),
    Case("CE-DATASCHEMA-URI", catalog_text(events=event(extra="    dataschema: schemas/thing.json #<\n"))),
    Case("CE-CONTENTTYPE", catalog_text("cloudevents", events=event(extra="    datacontenttype: json #<\n")), catalog_text("cloudevents")),
    Case("NLGOV-TYPE-RDNS", catalog_text(events=event("mdm.meter.updated #<"))),
    Case("NLGOV-TYPE-VERSION", catalog_text(events=event("nl.test.v2.thing-happened #<"))),
    Case("NLGOV-TYPE-BREAKING", catalog_text(events=event() + event(dataversion="2.0.0 #<"))),
    Case("NLGOV-TYPE-ORGANIZATION", catalog_text(events=event("nl.testorg.thing-happened #<"))),
    Case("NLGOV-SOURCE-URN", catalog_text(source="urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66 #<")),
    Case("NLGOV-SOURCE-LOCATION", catalog_text(source="https://api.example.nl/things #<", header="rules:\n  NLGOV-SOURCE-URN: off\n")),
    Case("NLGOV-TIME-DOC", catalog_text(events=event("nl.test.thing-happened #<"), defaults="defaults:\n  id: Random UUID v4.\n")),
    Case("NLGOV-ID-DOC", catalog_text(events=event("nl.test.thing-happened #<"), defaults="defaults:\n  time: Registration, UTC.\n")),
    Case("NLGOV-CONTENTTYPE-JSON", catalog_text(events=event(extra="    datacontenttype: application/xml #<\n"))),
    Case("NORMO-TYPE", catalog_text("normo", events=event("mdm.meter #<")), catalog_text("normo")),
    Case("NORMO-TYPE-PAST-TENSE", catalog_text("normo", events=event("tst.thing.create #<")), catalog_text("normo")),
    Case("NORMO-SOURCE", catalog_text("normo", source="urn:ean13:8716859000003 #<"), catalog_text("normo")),
    Case("NORMO-SOURCE-IDENTIFIER", catalog_text("normo", source="urn:gln:8716859000003:tst #<"), catalog_text("normo")),
    Case("NORMO-DATAVERSION", catalog_text("normo", events=event("tst.thing.happened #<", dataversion=None)), catalog_text("normo")),
    Case(
        "NORMO-CONTENTTYPE",
        catalog_text("normo", events=event(**NORMO_EVENT).replace("    data:\n", "    data: #<\n"), defaults="defaults:\n  time: Registration.\n  id: Random UUID.\n"),
        catalog_text("normo"),
    ),
    Case("NORMO-DATA-EMPTY", catalog_text("normo", events=event(**NORMO_EVENT, data="    data: {type: object, description: Nothing.} #<\n")), catalog_text("normo")),
    Case(
        "CAT-VERSION-BUMP",
        catalog_text("normo", events=event(TYPES["normo"], data="    data:\n      type: object\n      description: T.\n      required: [thingId]\n      properties:\n        thingId: {type: string, description: Id.}\n")
                     + event(TYPES["normo"], dataversion="1.1.0 #<", data="    data:\n      type: object\n      description: T.\n      properties:\n        name: {type: string, description: N.}\n")),
        catalog_text("normo"),
    ),
    # Instance rules, checked on the catalog's examples (reported as CAT-EXAMPLE naming the rule).
    Case("CAT-EXAMPLE", with_example("      - data: {thingId: 5} #<\n"), note="CE-DATA-SCHEMA"),
    Case("CAT-EXAMPLE", with_example("      - {prio: 3000000000, data: {thingId: a}} #<\n", extra="    extensions:\n      prio: {type: Integer, description: P.}\n"), note="CE-INTEGER-RANGE"),
    Case("CAT-EXAMPLE", with_example("      - {subject: \"a\\u0001b\", data: {thingId: a}} #<\n", extra="    subject: Thing id.\n"), note="CE-STRING-CHARS"),
    Case("CAT-EXAMPLE", with_example("      - {sequence: x1, data: {thingId: a}} #<\n", extra="    sequence: Integer\n"), note="CE-SEQUENCE"),
    Case("CAT-EXAMPLE", with_example("      - {id: '', data: {thingId: a}} #<\n"), note="CE-REQUIRED"),
    Case("CAT-EXAMPLE", with_example("      - {time: lunchtime, data: {thingId: a}} #<\n"), note="CE-TIME"),
    Case("CAT-EXAMPLE", with_example("      - {data_base64: e30=, data: {thingId: a}} #<\n"), note="CE-DATA-BOTH"),
    Case("CAT-EXAMPLE", with_example("      - {time: '2024-01-01T00:00:00Z'} #<\n"), note="CE-DATA-MISSING"),
    Case("CAT-EXAMPLE", catalog_text(events=event(data="") + "    examples:\n      - {data: {thingId: a}} #<\n"), note="CE-DATA-UNEXPECTED"),
    Case("CAT-EXAMPLE", with_example("      - {nlfoo: bar, data: {thingId: a}} #<\n"), note="CE-EXTENSION-UNDECLARED"),
    Case("CAT-EXAMPLE", with_example("      - {my_ext: bar, data: {thingId: a}} #<\n"), note="CE-ATTR-NAME"),
    Case("CAT-EXAMPLE", with_example("      - {type: nl.test.other-thing, data: {thingId: a}} #<\n"), note="CE-UNKNOWN-EVENT"),
    Case("CAT-EXAMPLE", with_example("      - {specversion: '0.3', data: {thingId: a}} #<\n"), note="NLGOV-SPECVERSION"),
    Case("CAT-EXAMPLE", with_example("      - {time: '2024-01-01T00:00:00Z', data: {thingId: a}} #<\n", profile="normo"), catalog_text("normo"), note="NORMO-TIME"),
    Case("CAT-EXAMPLE", with_example("      - {subject: '', data: {thingId: a}} #<\n", profile="normo", extra="    subject: Thing id.\n"), catalog_text("normo"), note="NORMO-SUBJECT"),
    Case("CAT-EXAMPLE", with_example("      - {data: {thingId: " + "x" * 300_000 + "}} #<\n", profile="normo"), catalog_text("normo"), note="NORMO-SIZE-MAX"),
    Case("CAT-EXAMPLE", with_example("      - {source: 'urn:nld:elsewhere', data: {thingId: a}} #<\n"), note="CE-SOURCE-MATCH"),
    Case("PAY-REQUIRED", catalog_text(events=event(data=(
        "    data:\n      type: object\n      description: The thing.\n      additionalProperties: false\n"
        "      properties:\n        thingId: {type: string, description: Id of the thing.}\n"
        "      required: [thingId, thingName] #<\n")))),
    Case("PAY-FORMAT", catalog_text(events=event().replace("{type: string, description: Id of the thing.}", "{type: string, format: zipcode, description: Id of the thing.} #<"))),
    Case("PAY-FORMAT-VERDICT", catalog_text(events=event().replace("{type: string, description: Id of the thing.}", "{type: string, format: regex, description: Id of the thing.} #<"))),
    Case("PAY-ALLOF-CLOSED", catalog_text(
        header="schemas:\n  Thing:\n    type: object\n    description: A thing.\n    additionalProperties: false\n"
               "    properties:\n      thingId: {type: string, description: Id of the thing.}\n",
        events=event(data=(
            "    data:\n      type: object\n      description: The thing, closed.\n      allOf:\n        - $ref: '#/schemas/Thing'\n"
            "      properties:\n        closedAt: {type: [string, 'null'], description: When. } #<\n")))),
    Case("PAY-PATTERN-PORTABLE", catalog_text(events=event().replace("{type: string, description: Id of the thing.}", "{type: string, pattern: '^\\d{4}$', description: Id of the thing.} #<"))),
    Case("PAY-PATTERN-BACKTRACK", catalog_text(events=event().replace("{type: string, description: Id of the thing.}", "{type: string, pattern: '^(a+)+$', description: Id of the thing.} #<"))),
    Case("CAT-PACKAGE-NAME", catalog_text(catalog_id="catalog-import").replace("catalog: catalog-import", "catalog: catalog-import #<"),
         extra_files={"a.yaml": catalog_text(catalog_id="import", events=event("nl.test.other-happened"))}),  # read first
]


def _id(case: Case) -> str:
    return f"{case.rule}-{case.note}" if case.note else case.rule


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_rule_fires_alone_at_its_line(case: Case, lint_files) -> None:
    diagnostics = lint_files({"catalog.yaml": case.bad, **case.extra_files})
    assert diagnostics, f"{case.rule} did not fire"
    assert {d.rule for d in diagnostics} == {case.rule}, [f"{d.rule} {d.location} {d.message}" for d in diagnostics]
    assert diagnostics[0].location.line == marked_line(case.bad)
    assert diagnostics[0].severity is RULES[case.rule].severity
    assert diagnostics[0].message
    if case.note:
        assert any(f"[{case.note}]" in d.message for d in diagnostics)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_clean_counterpart_passes(case: Case, lint_files) -> None:
    assert lint_files({"catalog.yaml": case.good}) == []


def test_every_catalog_rule_of_rules_md_has_a_case() -> None:
    import re
    from pathlib import Path

    rules_md = (Path(__file__).resolve().parents[2] / "shared" / "rules.md")
    if not rules_md.exists():
        pytest.skip("shared/rules.md is not beside the project")
    documented = set(re.findall(r"^\| ([A-Z]+-[A-Z0-9-]+) \|", rules_md.read_text(), re.MULTILINE))
    assert documented <= set(RULES), documented - set(RULES)
    covered = {case.rule for case in CASES} | {case.note for case in CASES}
    # Size warnings are advice for real events: examples are exempt; `evcat validate` checks them.
    instance_only = {"CE-SIZE", "NORMO-SIZE-ADVISED"}
    assert documented - instance_only <= covered, sorted(documented - instance_only - covered)


def test_severities_follow_rules_md() -> None:
    """Every rule's severity is the one rules.md gives it (read from the
    document, never from the code under test)."""
    import re
    from pathlib import Path

    rules_md = Path(__file__).resolve().parents[2] / "shared" / "rules.md"
    if not rules_md.exists():
        pytest.skip("shared/rules.md is not beside the project")
    rows = re.findall(r"^\| ([A-Z]+-[A-Z0-9-]+) \| (error|warning) \|", rules_md.read_text(), re.MULTILINE)
    assert len(rows) >= 60
    assert {rule_id: str(RULES[rule_id].severity) for rule_id, _ in rows} == dict(rows)


def test_suggestions() -> None:
    from generator.commands.lint import check
    from generator.loader import load_text

    text = catalog_text(
        "normo",
        events=event("mdm.meter.update", data="    data:\n      type: object\n      description: M.\n      properties:\n"
                     "        meter_id: {type: string, description: Meter.}\n"),
    ).replace("events:", "evnets:\n  - x\nevents:")
    diagnostics = check([load_text(text, "c.yaml")]).diagnostics
    by_rule = {d.rule: d for d in diagnostics}
    assert by_rule["PAY-CAMELCASE"].suggestion == "meterId"
    assert "meterId" in by_rule["PAY-CAMELCASE"].message
    assert by_rule["NORMO-TYPE-PAST-TENSE"].suggestion == "mdm.meter.updated"
    assert by_rule["CAT-UNKNOWN-KEY"].suggestion == "events"
    assert "did you mean 'events'" in by_rule["CAT-UNKNOWN-KEY"].message
