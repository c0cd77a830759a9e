"""A ``oneOf`` whose branches may both take a value (issue 26; contract §4.1).

JSON Schema refuses a value that two branches of a ``oneOf`` take (2020-12
§10.2.1.3); the generated model is a union, which takes it. Found by
test_schema_property: ``oneOf: [number, integer|null]`` with ``-4.6e16``, and
two nullable string branches with ``null``: every schema judge refused,
``parse_event`` and ``from_http`` accepted. Lint refuses such a catalog
(PAY-ONEOF-EXCLUSIVE, at the second branch) and says what both may take;
branches that exclude each other (other types, const or enum values, a
required property with a const of its own) are generated, and every judge
gives one verdict on them.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from .test_schema_property import ENVELOPE, Judges

CARD = {"type": "object", "description": "A card.", "required": ["kind"], "properties": {
    "kind": {"const": "card", "description": "Which."}, "number": {"type": "string", "description": "Number."}}}
BANK = {"type": "object", "description": "A bank account.", "required": ["kind"], "properties": {
    "kind": {"const": "bank", "description": "Which."}, "iban": {"type": "string", "description": "IBAN."}}}
OPEN_CARD = {"type": "object", "description": "A card.", "required": ["number"], "properties": {
    "number": {"type": "string", "description": "Number."}}}
OPEN_BANK = {"type": "object", "description": "A bank account.", "required": ["iban"], "properties": {
    "iban": {"type": "string", "description": "IBAN."}}}


def catalog(branches: list[Any], shared: dict[str, Any] | None = None, *, event_type: str = "org.example.one-of",
            properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """A one-event catalog whose payload has ``amount: {oneOf: branches}`` (or ``properties``)."""
    found = {
        "catalog": "drawn", "title": "One of", "version": "1.0.0", "profile": "cloudevents",
        "producer": {"source": ENVELOPE["source"]}, "defaults": {"datacontenttype": "application/json"},
        "events": [{
            "type": event_type, "dataversion": "1.0.0", "title": "One of", "description": "A payload to judge.",
            "data": {"type": "object", "description": "The payload.", "properties": properties or {
                "amount": {"oneOf": branches, "description": "One of these."}}},
        }],
    }
    if shared:
        found["schemas"] = shared
    return found


# (branches, shared schemas, a value both branches take, what the message says both may take)
REFUSED = {
    "a number and an integer": ([{"type": "number"}, {"type": ["integer", "null"], "maximum": 182}], None,
                                -4.624994217674586e16, "integers"),
    "two nullable strings": ([{"type": ["string", "null"]}, {"type": ["string", "null"], "minLength": 1, "maxLength": 4}],
                             None, None, "null and strings"),
    "two nullable types": ([{"type": ["integer", "null"]}, {"type": ["boolean", "null"]}], None, None, "null"),
    "a const of the other's type": ([{"const": "v1"}, {"type": "string"}], None, "v1", 'the value "v1"'),
    "enums that share a value": ([{"enum": ["a", "b"]}, {"enum": ["b", "c"]}], None, "b", 'the value "b"'),
    "1 and 1.0": ([{"const": 1}, {"const": 1.0}], None, 1, "the value 1"),
    "objects told apart by nothing": ([{"$ref": "#/schemas/Card"}, {"$ref": "#/schemas/Bank"}],
                                      {"Card": OPEN_CARD, "Bank": OPEN_BANK}, {"number": "1", "iban": "NL"}, "objects"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_one_of_whose_branches_may_both_take_a_value_is_refused(case: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    branches, shared, both, words = REFUSED[case]
    judges = Judges(catalog(branches, shared), tmp_path_factory.mktemp("one-of"), refused_too=True)
    assert [d.rule for d in judges.errors] == ["PAY-ONEOF-EXCLUSIVE"], judges.errors
    error = judges.errors[0]
    assert f"branches 1 and 2 may both take {words}:" in error.message, error.message
    lines = (judges.root / "catalog" / "drawn.yaml").read_text(encoding="utf-8").splitlines()
    start = next(number for number, line in enumerate(lines) if line.strip() == "oneOf:")
    items = [number + 1 for number, line in enumerate(lines) if number > start and line.lstrip().startswith("- ")
             and len(line) - len(line.lstrip()) == len(lines[start + 1]) - len(lines[start + 1].lstrip())]
    assert error.location.line == items[1], (error.location, lines)  # at the second branch
    assert lines[error.location.line - 1][:error.location.column - 1].endswith("- "), (error.location, lines)
    # Why: each branch alone takes the value, so JSON Schema refuses it.
    definitions = {"$defs": {name: schema for name, schema in (shared or {}).items()}}
    for branch in branches:
        ref = branch.get("$ref", "")
        alone = {**definitions, **(shared[ref.rsplit("/", 1)[1]] if ref else branch)}
        assert jsonschema.Draft202012Validator(alone).is_valid(both), (branch, both)
    event = {**ENVELOPE, "type": "org.example.one-of", "data": {"amount": both}}
    _, python_judge, rust_judge = judges.schemas["org.example.one-of"]
    assert not python_judge.is_valid(event) and not rust_judge.is_valid(event)


# (branches, shared schemas, [(value, accepted by JSON Schema)])
EXCLUSIVE = {
    "a nullable integer and a boolean": ([{"type": ["integer", "null"]}, {"type": "boolean"}], None,
                                         [(None, True), (2, True), (False, True), (2.0, True), ("x", False)]),
    "a string and a nullable integer": ([{"type": "string"}, {"type": ["integer", "null"], "minimum": 0}], None,
                                        [("a", True), (1, True), (None, True), (-1, False), (1.5, False)]),
    "a number and a string": ([{"type": "number"}, {"type": "string", "maxLength": 2}], None,
                              [(1, True), (1.5, True), ("ab", True), ("abc", False), (None, False)]),
    "two consts": ([{"const": "a"}, {"const": "b"}], None, [("a", True), ("b", True), ("c", False)]),
    "a const and a type it is not": ([{"const": "v1"}, {"type": "integer"}], None,
                                     [("v1", True), (3, True), ("v2", False)]),
    "a true const and an integer": ([{"const": True}, {"type": "integer"}], None,
                                    [(True, True), (1, True), (1.0, True), (0, True), (False, False), ("true", False)]),
    "objects with a discriminator": ([{"$ref": "#/schemas/Card"}, {"$ref": "#/schemas/Bank"}],
                                     {"Card": CARD, "Bank": BANK},
                                     [({"kind": "card", "number": "1"}, True), ({"kind": "bank", "iban": "NL"}, True),
                                      ({"kind": "other"}, False), ({"number": "1"}, False),
                                      ({"kind": "card", "number": 1}, False)]),
}
CASES = [(case, value, accepted) for case, (_, _, values) in EXCLUSIVE.items() for value, accepted in values]


@pytest.fixture(scope="module")
def exclusive_judges(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Judges]:
    found = {}
    for case, (branches, shared, _) in EXCLUSIVE.items():
        judges = Judges(catalog(branches, shared), tmp_path_factory.mktemp("exclusive"))
        assert judges.errors == [], (case, judges.errors)
        judges.generate()
        found[case] = judges
    return found


@pytest.mark.parametrize(("case", "value", "accepted"), CASES, ids=[f"{c}:{v!r}" for c, v, _ in CASES])
def test_a_one_of_whose_branches_exclude_each_other_gets_one_verdict(
        exclusive_judges: dict[str, Judges], case: str, value: Any, accepted: bool) -> None:
    judges = exclusive_judges[case]
    event = {**ENVELOPE, "type": "org.example.one-of", "data": {"amount": value}}
    verdicts = judges.verdicts(event)
    assert verdicts["jsonschema"] is accepted  # the case is what JSON Schema says
    assert set(verdicts.values()) == {accepted}, (verdicts, judges.why)
    if accepted:
        judges.round_trip(event)


# Found by review (issue 26): pydantic's Literal[True] takes 1 and 1.0, and
# Literal[1] takes true, each giving another value back; JSON Schema's const
# and enum compare JSON values (2020-12 §4.2.2: true is no 1, 1.0 is 1).
CONSTS = catalog([], event_type="org.example.consts", properties={
    "flag": {"const": True, "description": "Always true."},
    "one": {"const": 1, "description": "Always 1."},
    "mixed": {"enum": [1, True, "v1"], "description": "One of three kinds."},
})
CONST_CASES = [("flag", True, True), ("flag", 1, False), ("flag", 1.0, False), ("one", 1, True), ("one", 1.0, True),
               ("one", True, False), ("mixed", 1, True), ("mixed", 1.0, True), ("mixed", True, True),
               ("mixed", False, False), ("mixed", "v1", True), ("mixed", "1", False), ("one", 2**63, False)]


@pytest.fixture(scope="module")
def const_judges(tmp_path_factory: pytest.TempPathFactory) -> Judges:
    judges = Judges(CONSTS, tmp_path_factory.mktemp("consts"))
    assert judges.errors == []
    judges.generate()
    return judges


@pytest.mark.parametrize(("name", "value", "accepted"), CONST_CASES, ids=[f"{n}={v!r}" for n, v, _ in CONST_CASES])
def test_consts_and_enums_compare_json_values(const_judges: Judges, name: str, value: Any, accepted: bool) -> None:
    event = {**ENVELOPE, "type": "org.example.consts", "data": {name: value}}
    verdicts = const_judges.verdicts(event)
    assert verdicts.get("jsonschema", accepted) is accepted  # the case is what JSON Schema says (2**63: evcat's limit)
    assert set(verdicts.values()) == {accepted}, (verdicts, const_judges.why)
    if accepted:
        const_judges.round_trip(event)  # 1.0 comes back as 1.0, true as true
