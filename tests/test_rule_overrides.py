"""Rule overrides where they apply (catalog-format.md §9): ``rules`` on an
event and ``x-evcat-rules`` on any payload schema node; the nearest wins,
in every place lint's findings are used (lint, its cache, generate)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.commands.generate import generate
from generator.commands.lint import lint
from generator.diagnostics import Severity
from generator.engine.config import RunConfig
from generator.loader import load_text
from generator.model.build import build

HEAD = """\
catalog: test-catalog
title: Test catalog
version: 1.0.0
profile: cloudevents
producer:
  source: urn:nld:oin:00000001823288444000:systeem:test
  organization: Testorg
defaults:
  datacontenttype: application/json
  time: Moment of registration, in UTC.
  id: Random UUID v4.
"""


def findings(tmp_path: Path, text: str, name: str = "catalog.yaml", **files: str) -> list[tuple[str, str, int]]:
    (tmp_path / name).write_text(text, encoding="utf-8")
    for other, content in files.items():
        (tmp_path / other).write_text(content, encoding="utf-8")
    result = lint(str(tmp_path))
    return sorted((d.rule, str(d.severity), d.location.line) for d in result.diagnostics)


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


SNAKE = HEAD + """\
events:
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      properties:
        thing_id:
          type: string
          description: Id of the thing.
          x-evcat-rules: {PAY-CAMELCASE: off}
        other_id: {type: string, description: Other.}
"""


def test_a_snake_case_property_with_an_override_is_clean_and_its_sibling_errs(tmp_path: Path) -> None:
    assert findings(tmp_path, SNAKE) == [("PAY-CAMELCASE", "error", line_of(SNAKE, "other_id"))]


DEEP = HEAD + """\
schemas:
  Address:
    type: object
    description: An address.
    x-evcat-rules:
      PAY-CAMELCASE: off
    properties:
      street_name: {type: string, description: Street.}
  Plain:
    type: object
    description: Plain.
    properties:
      plain_name: {type: string, description: Name.}
events:
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      $defs:
        Inner:
          type: object
          description: Inner.
          properties:
            inner_code: {type: string, description: Code., x-evcat-rules: {PAY-CAMELCASE: "off"}}
            inner_bad: {type: string, description: Bad.}
      properties:
        address: {$ref: "#/schemas/Address"}
        plain: {$ref: "#/schemas/Plain"}
        lines:
          type: array
          description: Lines.
          items:
            type: object
            description: A line.
            x-evcat-rules: {PAY-CAMELCASE: warning}
            properties:
              line_no: {type: integer, description: Number.}
        either:
          description: One of two.
          allOf:
            - type: object
              x-evcat-rules: {PAY-CAMELCASE: false}
              properties:
                all_of_name: {type: string, description: Name.}
"""


def test_overrides_at_every_depth_and_in_shared_schemas(tmp_path: Path) -> None:
    assert findings(tmp_path, DEEP) == sorted([
        ("PAY-CAMELCASE", "error", line_of(DEEP, "plain_name")),
        ("PAY-CAMELCASE", "error", line_of(DEEP, "inner_bad")),
        ("PAY-CAMELCASE", "warning", line_of(DEEP, "line_no")),
    ])


TWO_EVENTS = HEAD + """\
events:
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    rules: {PAY-DESCRIPTION: off}
    data:
      type: object
      properties:
        thingId: {type: string}
        loud:
          type: string
          x-evcat-rules: {PAY-DESCRIPTION: error}
  - type: nl.test.other-happened
    dataversion: 1.0.0
    title: Other happened
    data:
      type: object
      description: The other.
      properties:
        otherId: {type: string}
"""


def test_event_rules_silence_that_event_only_and_the_nearest_wins(tmp_path: Path) -> None:
    found = findings(tmp_path, TWO_EVENTS)
    assert found == sorted([
        # the event of its own: its rules say off, but the node's error is nearer
        ("PAY-DESCRIPTION", "error", line_of(TWO_EVENTS, "loud:")),
        # the other event keeps its warnings (no description on the event, on otherId)
        ("PAY-DESCRIPTION", "warning", line_of(TWO_EVENTS, "nl.test.other-happened")),
        ("PAY-DESCRIPTION", "warning", line_of(TWO_EVENTS, "otherId")),
    ])


def test_a_node_setting_beats_the_file_rules(tmp_path: Path) -> None:
    text = SNAKE.replace("events:\n", "rules: {PAY-CAMELCASE: off}\nevents:\n", 1).replace(
        "{PAY-CAMELCASE: off}\n        other_id", "{PAY-CAMELCASE: warning}\n        other_id"
    )
    assert findings(tmp_path, text) == [("PAY-CAMELCASE", "warning", line_of(text, "thing_id"))]


FIXED = HEAD + """\
events:
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    rules: {CAT-REF: off}
    data:
      type: object
      description: The thing.
      x-evcat-rules: {CAT-SCHEMA: off}
      properties:
        thingId: {type: strin, description: Id.}
        otherId: {$ref: "#/schemas/Missing", description: Other.}
"""


def test_a_fixed_rule_cannot_be_turned_off_where_it_applies(tmp_path: Path) -> None:
    found = findings(tmp_path, FIXED)
    assert ("CAT-SCHEMA", "error", line_of(FIXED, "thingId")) in found
    assert ("CAT-REF", "error", line_of(FIXED, "otherId")) in found
    assert ("CAT-TYPE", "error", line_of(FIXED, "rules: {CAT-REF")) in found
    assert ("CAT-TYPE", "error", line_of(FIXED, "x-evcat-rules: {CAT-SCHEMA")) in found


BAD = HEAD + """\
events:
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    rules: {PAY-DESCRIPTON: off}
    data:
      type: object
      description: The thing.
      properties:
        aId: {type: string, description: A., x-evcat-rules: {PAY-CAMELCAS: off}}
        bId: {type: string, description: B., x-evcat-rules: {PAY-CAMELCASE: fatal}}
        cId: {type: string, description: C., x-evcat-rules: off}
        dId: {type: string, description: D., x-evcat-rule: {PAY-CAMELCASE: off}}
        eId: {type: string, description: E., x-mine: {anything: goes}}
"""


def test_unknown_rule_ids_and_bad_settings_are_reported_at_their_key(tmp_path: Path) -> None:
    (tmp_path / "catalog.yaml").write_text(BAD, encoding="utf-8")
    result = lint(str(tmp_path))
    found = sorted((d.rule, d.location.line, d.suggestion) for d in result.diagnostics)
    assert found == sorted([
        ("CAT-UNKNOWN-KEY", line_of(BAD, "PAY-DESCRIPTON"), "PAY-DESCRIPTION"),
        ("CAT-UNKNOWN-KEY", line_of(BAD, "PAY-CAMELCAS:"), "PAY-CAMELCASE"),
        ("CAT-TYPE", line_of(BAD, "fatal"), None),
        ("CAT-TYPE", line_of(BAD, "x-evcat-rules: off"), None),
        ("CAT-UNKNOWN-KEY", line_of(BAD, "x-evcat-rule:"), "x-evcat-rules"),
    ])


def test_the_effective_severity_function(tmp_path: Path) -> None:
    from generator.rules.overrides import effective_severity, event_severity

    document = load_text(TWO_EVENTS, "catalog.yaml")
    first = ("events", 0, "data", "properties")
    assert effective_severity("PAY-DESCRIPTION", document, first + ("thingId",)) is None
    assert effective_severity("PAY-DESCRIPTION", document, first + ("loud", "type")) is Severity.ERROR
    assert effective_severity("PAY-DESCRIPTION", document, ("events", 1, "data")) is Severity.WARNING
    assert effective_severity("PAY-CAMELCASE", document.value, first + ("loud",)) is Severity.ERROR
    assert effective_severity("CAT-REF", load_text(FIXED, "f.yaml"), ("events", 0, "data")) is Severity.ERROR
    events = build([document]).catalog_set.events
    assert event_severity("PAY-DESCRIPTION", events[0]) is None
    assert event_severity("PAY-DESCRIPTION", events[1]) is Severity.WARNING
    with_file_rules = load_text(TWO_EVENTS.replace("events:\n", "rules: {PAY-DESCRIPTION: error}\nevents:\n", 1), "c.yaml")
    first_event, second_event = build([with_file_rules]).catalog_set.events
    assert event_severity("PAY-DESCRIPTION", first_event) is None  # the event's own beats its file's
    assert event_severity("PAY-DESCRIPTION", second_event) is Severity.ERROR


def test_the_cache_sees_an_edit_of_an_override_only(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    config = RunConfig(cache_dir=str(tmp_path / "cache"), jobs=1)
    library = HEAD.split("defaults:")[0].replace("catalog: test-catalog\n", "").replace("producer:\n  source: urn:nld:oin:00000001823288444000:systeem:test\n  organization: Testorg\n", "")
    library += "schemas:\n  Thing:\n    type: object\n    description: A thing.\n    x-evcat-rules: {PAY-CAMELCASE: off}\n    properties:\n      thing_id: {type: string, description: Id.}\n"
    (catalog / "types.yaml").write_text(library, encoding="utf-8")
    events = HEAD + (
        "events:\n  - type: nl.test.thing-happened\n    dataversion: 1.0.0\n    title: Thing happened\n"
        "    description: A thing happened.\n    data: {$ref: 'types.yaml#/schemas/Thing'}\n"
    )
    (catalog / "catalog.yaml").write_text(events, encoding="utf-8")
    assert lint(str(catalog), config).diagnostics == []
    assert lint(str(catalog), config).diagnostics == []  # from the cache
    (catalog / "types.yaml").write_text(library.replace("PAY-CAMELCASE: off", "PAY-CAMELCASE: warning"), encoding="utf-8")
    assert [(d.rule, d.severity) for d in lint(str(catalog), config).diagnostics] == [("PAY-CAMELCASE", Severity.WARNING)]
    (catalog / "types.yaml").write_text(library.replace("    x-evcat-rules: {PAY-CAMELCASE: off}\n", ""), encoding="utf-8")
    assert [(d.rule, d.severity) for d in lint(str(catalog), config).diagnostics] == [("PAY-CAMELCASE", Severity.ERROR)]
    # and an override of the event alone (the finding is in the shared schema, outside the event: it stays)
    (catalog / "catalog.yaml").write_text(events.replace("    data:", "    rules: {PAY-CAMELCASE: off}\n    data:"), encoding="utf-8")
    assert [(d.rule, d.severity) for d in lint(str(catalog), config).diagnostics] == [("PAY-CAMELCASE", Severity.ERROR)]


def test_generate_follows_the_overrides_and_sees_an_override_edit(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "catalog.yaml").write_text(SNAKE.replace("        other_id: {type: string, description: Other.}\n", ""), encoding="utf-8")
    config = RunConfig(cache_dir=str(tmp_path / "cache"), jobs=1)
    out = tmp_path / "out"
    first = generate(str(catalog), str(out), ["jsonschema"], config)
    assert not first.lint.has_errors
    (catalog / "catalog.yaml").write_text(
        (catalog / "catalog.yaml").read_text().replace("PAY-CAMELCASE: off", "PAY-CAMELCASE: error"), encoding="utf-8"
    )
    second = generate(str(catalog), str(out), ["jsonschema"], config)
    assert [d.rule for d in second.lint.diagnostics] == ["PAY-CAMELCASE"] and second.lint.has_errors


@pytest.mark.parametrize("setting", ["off", "'off'", "false"])
def test_off_is_off_however_yaml_reads_it(tmp_path: Path, setting: str) -> None:
    text = SNAKE.replace("{PAY-CAMELCASE: off}", f"{{PAY-CAMELCASE: {setting}}}")
    assert findings(tmp_path, text) == [("PAY-CAMELCASE", "error", line_of(text, "other_id"))]


EXAMPLES = HEAD + """\
events:
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    rules: {CAT-EXAMPLE: warning}
    data:
      type: object
      description: The thing.
      properties:
        thingId: {type: string, description: Id.}
    examples:
      - data: {thingId: 1}
  - type: nl.test.other-happened
    dataversion: 1.0.0
    title: Other happened
    description: Another thing happened.
    data:
      type: object
      description: The other.
      properties:
        otherId: {type: string, description: Id.}
    examples:
      - data: {otherId: 2}
"""


def test_a_memoised_check_follows_the_overrides_from_the_memo_too(tmp_path: Path) -> None:
    """CAT-EXAMPLE is a costly, memoised check (its findings come back from
    the memo, or from worker processes, as plain data): the YAML path they
    stand on comes back with them."""
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "catalog.yaml").write_text(EXAMPLES, encoding="utf-8")
    config = RunConfig(cache_dir=str(tmp_path / "cache"), jobs=1)
    expected = [("CAT-EXAMPLE", Severity.WARNING, line_of(EXAMPLES, "thingId: 1}")),
                ("CAT-EXAMPLE", Severity.ERROR, line_of(EXAMPLES, "otherId: 2}"))]
    for _ in range(2):  # computed, then from the memo
        found = [(d.rule, d.severity, d.location.line) for d in lint(str(catalog), config).diagnostics]
        assert found == expected
