"""The lint rules that keep one verdict where the generated model cannot
follow the schema (PAY-ALLOF-CLOSED, PAY-ONEOF-EXCLUSIVE; issue 26), on
what a reviewer found: keywords beside a ``$ref`` and the other keywords that
close a branch are read; a hostile catalog (a catastrophic pattern, a pattern
nested past Python's recursion limit, a chain of 3,000 ``$ref``s, a recursive
fan-out) gets diagnostics, not a hang or a traceback; and the rules cannot be
turned off, since the package would then carry the split verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from .conftest import run_evcat
from .test_schema_property import ENVELOPE, Judges


def _catalog(data: dict[str, Any], shared: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "catalog": "drawn", "title": "Closed", "version": "1.0.0", "profile": "cloudevents",
        "producer": {"source": ENVELOPE["source"]}, "defaults": {"datacontenttype": "application/json"},
        "schemas": shared, **extra,
        "events": [{"type": "org.example.closed", "dataversion": "1.0.0", "title": "Closed",
                    "description": "A payload over a closed schema.", "data": {"description": "The payload.", **data}}],
    }


BASE = {"type": "object", "description": "A base.", "properties": {"a": {"type": "string", "description": "A."}}}
OWN_B = {"properties": {"b": {"type": "string", "description": "B."}}}
# (shared Base, the payload, a value every schema judge refuses: the closed branch leaves out "b")
CLOSED = {
    "$ref with properties beside it (2020-12 §8.2.3.1)": (
        {**BASE, "additionalProperties": False}, {"$ref": "#/schemas/Base", **OWN_B}),
    "unevaluatedProperties false": (
        {**BASE, "unevaluatedProperties": False}, {"allOf": [{"$ref": "#/schemas/Base"}], **OWN_B}),
    "unevaluatedProperties a schema": (
        {**BASE, "unevaluatedProperties": {"type": "integer"}}, {"allOf": [{"$ref": "#/schemas/Base"}], **OWN_B}),
    "propertyNames an enum": (
        {**BASE, "propertyNames": {"enum": ["a"]}}, {"allOf": [{"$ref": "#/schemas/Base"}], **OWN_B}),
    "propertyNames a pattern": (
        {**BASE, "propertyNames": {"pattern": "^a$"}}, {"allOf": [{"$ref": "#/schemas/Base"}], **OWN_B}),
}


@pytest.mark.parametrize("case", CLOSED)
def test_a_branch_closed_by_any_keyword_is_refused(case: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    base, data = CLOSED[case]
    judges = Judges(_catalog({"type": "object", **data}, {"Base": base}), tmp_path_factory.mktemp("closed"),
                    refused_too=True)
    assert [d.rule for d in judges.errors] == ["PAY-ALLOF-CLOSED"], judges.errors
    assert "property 'b'" in judges.errors[0].message
    # Why: JSON Schema refuses "b" beside "a", which the generated model would take.
    event = {**ENVELOPE, "type": "org.example.closed", "data": {"a": "x", "b": "y"}}
    _, python_judge, rust_judge = judges.schemas["org.example.closed"]
    assert not python_judge.is_valid(event) and not rust_judge.is_valid(event)


def test_property_names_that_allow_the_name_are_no_refusal(tmp_path_factory: pytest.TempPathFactory) -> None:
    base = {**BASE, "propertyNames": {"pattern": "^[a-z]$"}}
    judges = Judges(_catalog({"type": "object", "allOf": [{"$ref": "#/schemas/Base"}], **OWN_B}, {"Base": base}),
                    tmp_path_factory.mktemp("open"))
    assert judges.errors == []
    judges.generate()
    for data, accepted in (({"a": "x", "b": "y"}, True), ({"b": 1}, False)):
        event = {**ENVELOPE, "type": "org.example.closed", "data": data}
        verdicts = judges.verdicts(event)
        assert set(verdicts.values()) == {accepted}, (data, verdicts, judges.why)


@pytest.mark.parametrize("rule", ["PAY-ONEOF-EXCLUSIVE", "PAY-ALLOF-CLOSED"])
@pytest.mark.parametrize("where", ["catalog", "event", "node"])
def test_the_one_verdict_rules_cannot_be_turned_off(rule: str, where: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    data: dict[str, Any] = {"type": "object", "allOf": [{"$ref": "#/schemas/Base"}], **OWN_B} \
        if rule == "PAY-ALLOF-CLOSED" else \
        {"type": "object", "properties": {"n": {"description": "N.", "oneOf": [{"type": "number"}, {"type": "integer"}]}}}
    off = {rule: "off"}
    catalog = _catalog(data, {"Base": {**BASE, "additionalProperties": False}}, **({"rules": off} if where == "catalog" else {}))
    if where == "event":
        catalog["events"][0]["rules"] = off
    if where == "node":
        catalog["events"][0]["data"]["x-evcat-rules"] = off
    judges = Judges(catalog, tmp_path_factory.mktemp("off"), refused_too=True)
    assert sorted(d.rule for d in judges.errors) == sorted(["CAT-TYPE", rule]), judges.errors
    assert [d.message.startswith(f"{rule} guards what generation relies on") for d in judges.errors if d.rule == "CAT-TYPE"] \
        == [True], judges.errors


def _hostile(root: Path, shared: dict[str, Any], data: dict[str, Any]) -> str:
    (root / "catalog").mkdir()
    (root / "catalog" / "c.yaml").write_text(yaml.safe_dump(_catalog(data, shared), sort_keys=False), encoding="utf-8")
    done = run_evcat("lint", str(root / "catalog"))  # run_evcat's timeout (120 s) fails a hang
    assert "Traceback" not in done.stderr and "internal error" not in done.stdout + done.stderr, done.stderr[-2000:]
    return done.stdout


def test_a_catastrophic_pattern_in_a_closed_branch_is_not_run(tmp_path: Path) -> None:
    closed = {"type": "object", "description": "Closed.", "additionalProperties": False,
              "patternProperties": {"^(a|a)+$": {"description": "X."}}}
    out = _hostile(tmp_path, {"Closed": closed}, {"type": "object", "allOf": [{"$ref": "#/schemas/Closed"}],
                                                  "properties": {"a" * 34 + "B": {"type": "string", "description": "X."}}})
    assert "PAY-PATTERN-BACKTRACK" in out, out


def test_a_pattern_nested_past_the_recursion_limit_is_a_diagnostic(tmp_path: Path) -> None:
    pattern = "^" + "(?:" * 1200 + "a" + ")" * 1200 + "$"
    closed = {"type": "object", "description": "Closed.", "additionalProperties": False,
              "patternProperties": {pattern: {"description": "X."}}}
    out = _hostile(tmp_path, {"Closed": closed}, {"type": "object", "allOf": [{"$ref": "#/schemas/Closed"}],
                                                  "properties": {"b": {"type": "string", "description": "X."}}})
    assert "error" in out, out


def test_a_chain_of_3000_refs_is_followed_without_recursion(tmp_path: Path) -> None:
    shared: dict[str, Any] = {f"S{i}": {"description": "S.", "$ref": f"#/schemas/S{i + 1}"} for i in range(3000)}
    shared["S3000"] = {"type": "object", "description": "End.", "additionalProperties": False,
                       "properties": {"a": {"type": "string", "description": "A."}}}
    out = _hostile(tmp_path, shared, {"type": "object", "allOf": [{"$ref": "#/schemas/S0"}], "properties": {
        "b": {"type": "string", "description": "B."},
        "c": {"description": "C.", "oneOf": [{"$ref": "#/schemas/S0"}, {"type": "string"}]}}})
    assert "PAY-ALLOF-CLOSED property 'b'" in out and "PAY-ONEOF-EXCLUSIVE" not in out, out
    # Why (on the last 30 links: jsonschema itself recurses once per $ref): the closed end leaves out "b".
    definitions = {name: {**schema, "$ref": schema["$ref"].replace("/schemas/", "/$defs/")} if "$ref" in schema else schema
                   for name, schema in shared.items() if int(name[1:]) >= 2970}
    assert not jsonschema.Draft202012Validator({"$defs": definitions, "allOf": [{"$ref": "#/$defs/S2970"}], **OWN_B}).is_valid(
        {"a": "x", "b": "y"})

def test_a_recursive_fan_out_ends(tmp_path: Path) -> None:
    def fan(name: str) -> dict[str, Any]:
        return {"type": "object", "description": "Fan.", "properties": {
            key: {"description": "X.", "$ref": f"#/schemas/{name}"} for key in "pqrs"}}

    out = _hostile(tmp_path, {"A": fan("A"), "B": fan("B")},
                   {"type": "object", "allOf": [{"$ref": "#/schemas/A"}, {"$ref": "#/schemas/B"}]})
    # It ends, with the one finding: A and B each define "p" as a $ref of their own.
    assert "'$ref' different values" in out and "1 error, 0 warnings" in out, out


# What the generated model does not check (found by a probe of every keyword of
# the format, issue 26): each was accepted by parse_event and from_http and
# refused by every schema judge. (the property's schema, a value JSON Schema refuses)
UNCHECKED = {
    "not": ({"not": {"type": "string"}}, "s"),
    "if": ({"if": {"type": "integer"}, "then": {"minimum": 5}}, 1),
    "dependentRequired": ({"type": "object", "dependentRequired": {"a": ["b"]}}, {"a": 1}),
    "dependentSchemas": ({"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}}, {"a": 1}),
    "uniqueItems": ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, [1, 1]),
    "contains": ({"type": "array", "contains": {"const": 2}}, [1]),
    "prefixItems": ({"type": "array", "prefixItems": [{"type": "integer"}]}, ["s"]),
    "const": ({"const": {"a": 1}}, {"a": 2}),
    "enum": ({"enum": [0.5, 2]}, 1),
    "required": ({"type": "object", "required": ["a"]}, {"c": 1}),
    "maxLength": ({"maxLength": 1}, "ab"),
    "minimum": ({"minimum": 5}, 1),
    "allOf": ({"allOf": [{"type": "string"}, {"pattern": "^a"}]}, "b"),
}


@pytest.mark.parametrize("keyword", UNCHECKED)
def test_what_the_model_does_not_check_is_refused(keyword: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    schema, refused = UNCHECKED[keyword]
    data = {"type": "object", "properties": {"v": {**schema, "description": "V."}}}
    judges = Judges(_catalog(data, {}), tmp_path_factory.mktemp("unchecked"), refused_too=True)
    assert {d.rule for d in judges.errors} == {"PAY-KEYWORD-VERDICT"}, judges.errors
    assert any(d.message.startswith(f"'{keyword}': ") for d in judges.errors), judges.errors
    # Why: the keyword decides (JSON Schema refuses the value).
    event = {**ENVELOPE, "type": "org.example.closed", "data": {"v": refused}}
    _, python_judge, rust_judge = judges.schemas["org.example.closed"]
    assert not python_judge.is_valid(event) and not rust_judge.is_valid(event)


@pytest.mark.parametrize("schema", [
    {"type": "object", "maxProperties": 1}, {"type": "object", "propertyNames": {"maxLength": 1}},
    {"type": "array", "maxItems": 1, "uniqueItems": False}, {"type": ["string", "null"], "maxLength": 1},
    {"enum": ["a", 1, True]}, {"allOf": [{"$ref": "#/schemas/Base"}], "description": "Annotated."},
    {"$ref": "#/schemas/Base", "required": ["a"]}, {"type": "number", "multipleOf": 0.5},
], ids=str)
def test_what_the_model_checks_is_not_refused(schema: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    data = {"type": "object", "properties": {"v": {"description": "V.", **schema}}}
    judges = Judges(_catalog(data, {"Base": BASE}), tmp_path_factory.mktemp("checked"), refused_too=True)
    assert judges.errors == []


@pytest.mark.parametrize(("base_x", "own_x", "refused"), [
    ({"enum": ["a", "b"]}, {"enum": ["b", "c"]}, "c"),
    ({"type": "string"}, {"type": "integer"}, 1),
    # Two values of one bound: the model kept the redefinition's (found with the top-level case below).
    ({"type": "integer", "minimum": 3}, {"type": "integer", "minimum": 1, "maximum": 10}, 2),
    ({"type": "integer", "multipleOf": 2}, {"type": "integer", "multipleOf": 3}, 3),
], ids=["enum", "type", "minimum", "multipleOf"])
def test_a_property_of_a_redefined_object_property_defined_twice_is_refused(
        base_x: dict[str, Any], own_x: dict[str, Any], refused: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Found by review: the model kept the redefinition's definition of meta.x
    and took {"meta": {"x": "c"}}, which the base's enum refuses."""
    base = {"type": "object", "description": "B.", "properties": {"meta": {
        "type": "object", "description": "M.", "properties": {"x": {**base_x, "description": "X."}}}}}
    data = {"type": "object", "allOf": [{"$ref": "#/schemas/Base"}], "properties": {"meta": {
        "type": "object", "description": "M2.", "properties": {"x": {**own_x, "description": "X2."}}}}}
    judges = Judges(_catalog(data, {"Base": base}), tmp_path_factory.mktemp("nested"), refused_too=True)
    assert [d.rule for d in judges.errors] == ["PAY-KEYWORD-VERDICT"], judges.errors
    assert "one definition of 'meta.x'" in judges.errors[0].message
    event = {**ENVELOPE, "type": "org.example.closed", "data": {"meta": {"x": refused}}}
    _, python_judge, rust_judge = judges.schemas["org.example.closed"]
    assert not python_judge.is_valid(event) and not rust_judge.is_valid(event)


A_OR_C = [{"type": "object", "description": "Only a.", "properties": {"a": {"type": "string", "description": "A."}},
           "additionalProperties": False},
          {"type": "object", "description": "Only c.", "properties": {"c": {"type": "string", "description": "C."}},
           "additionalProperties": False}]


@pytest.mark.parametrize("keyword", ["anyOf", "oneOf"])
@pytest.mark.parametrize("shape", ["allOf", "beside"])
def test_a_closed_branch_of_an_alternative_in_a_conjunction_is_refused(
        keyword: str, shape: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A chosen anyOf/oneOf branch applies to the whole object too (2020-12
    §10.2.1.2-3): closed, it refuses what the conjunction declares beside it,
    while the generated model (the branch's class merged with the rest) takes
    it. Found by review: the closed branch under an alternative was not read."""
    alternative = {"type": "object", "description": "One of two.", keyword: A_OR_C}
    data = {"type": "object", "allOf": [alternative], **OWN_B} if shape == "allOf" else {**alternative, **OWN_B}
    judges = Judges(_catalog(data, {}), tmp_path_factory.mktemp("alternative"), refused_too=True)
    closed = [d for d in judges.errors if d.rule == "PAY-ALLOF-CLOSED"]
    assert closed and all("property 'b'" in d.message for d in closed), judges.errors
    assert f"{keyword}[0]" in closed[0].message
    # Why: every schema judge refuses "b" beside "a", which the model would take.
    event = {**ENVELOPE, "type": "org.example.closed", "data": {"a": "x", "b": "y"}}
    _, python_judge, rust_judge = judges.schemas["org.example.closed"]
    assert not python_judge.is_valid(event) and not rust_judge.is_valid(event)


AMOUNT_EITHER_WAY = [
    {"type": "object", "description": "Nullable.", "properties": {"amount": {"type": ["string", "null"], "description": "A."}}},
    {"type": "object", "description": "Text.", "properties": {"amount": {"type": "string", "description": "A."}}},
]


@pytest.mark.parametrize("extra", [False, {"type": "integer"}], ids=["closed", "a schema"])
@pytest.mark.parametrize("keyword", ["anyOf", "oneOf"])
def test_a_closed_conjunct_refuses_what_an_alternative_declares(
        extra: Any, keyword: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The schema property test's find: Base (additionalProperties false, or
    a schema) beside an anyOf whose branches declare 'amount'. Base applies
    to the whole object, so every schema judge refuses any 'amount' that is
    not an integer; the model (the chosen branch's class) took it."""
    base = {**BASE, "additionalProperties": extra}
    data = {"type": "object", "allOf": [{"$ref": "#/schemas/Base"},
                                        {"type": "object", "description": "Two shapes.", keyword: AMOUNT_EITHER_WAY}]}
    judges = Judges(_catalog(data, {"Base": base}), tmp_path_factory.mktemp("conjunct"), refused_too=True)
    closed = [d for d in judges.errors if d.rule == "PAY-ALLOF-CLOSED"]
    assert closed and all("property 'amount'" in d.message and "'Base'" in d.message for d in closed), judges.errors
    event = {**ENVELOPE, "type": "org.example.closed", "data": {"amount": "x"}}
    _, python_judge, rust_judge = judges.schemas["org.example.closed"]
    assert not python_judge.is_valid(event) and not rust_judge.is_valid(event)


REQUIRING_BASE = {"type": "object", "description": "A base.", "required": ["label", "amount"], "properties": {
    "amount": {"type": ["string", "null"], "description": "A."},
    "label": {"type": "integer", "minimum": 5, "description": "L."}}}


def _shapes(amount: dict[str, Any], required: list[str]) -> dict[str, Any]:
    branch = {"type": "object", "description": "Amount again.", "properties": {"amount": amount}}
    if required:
        branch["required"] = required
    return {"type": "object", "allOf": [{"$ref": "#/schemas/Base"}, {"type": "object", "description": "Two shapes.",
            "anyOf": [branch, {"type": "object", "description": "A note.",
                               "properties": {"note": {"type": "string", "description": "N."}}}]}]}


@pytest.mark.parametrize(("amount", "required"), [
    ({"type": ["string", "null"], "description": "Optional here."}, []),
    ({"type": "string", "description": "Another definition."}, ["amount"]),
], ids=["optional in the branch", "another definition"])
def test_a_property_an_alternative_declares_again_unlike_beside_it_is_refused(
        amount: dict[str, Any], required: list[str], tmp_path_factory: pytest.TempPathFactory) -> None:
    """The schema property test's find: Base requires 'amount', an anyOf
    branch beside it declares 'amount' as optional. The generated class of
    that branch merges the branch's class first, whose optional field won:
    {label: 5} passed parse_event, which every schema judge refuses."""
    judges = Judges(_catalog(_shapes(amount, required), {"Base": REQUIRING_BASE}), tmp_path_factory.mktemp("again"),
                    refused_too=True)
    assert [d.rule for d in judges.errors] == ["PAY-KEYWORD-VERDICT"], judges.errors
    assert "definition of 'amount'" in judges.errors[0].message


def test_a_property_an_alternative_declares_again_beside_own_properties_is_refused(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The same beside the schema's own properties (no allOf): the chosen
    branch's class is merged with the schema's, the branch's first."""
    data = {"type": "object", "required": ["amount"],
            "properties": {"amount": {"type": ["string", "null"], "description": "A."}},
            "anyOf": [{"type": "object", "description": "Amount again.",
                       "properties": {"amount": {"type": ["string", "null"], "description": "Optional here."}}},
                      {"type": "object", "description": "A note.",
                       "properties": {"note": {"type": "string", "description": "N."}}}]}
    judges = Judges(_catalog(data, {}), tmp_path_factory.mktemp("again-beside"), refused_too=True)
    assert [(d.rule, d.message.split(":")[0]) for d in judges.errors] == [("PAY-KEYWORD-VERDICT", "'anyOf'")], judges.errors


def test_a_property_an_alternative_declares_alike_is_one_verdict(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Declared alike, and required in the branch as beside it: no refusal,
    and every judge agrees."""
    judges = Judges(_catalog(_shapes({"type": ["string", "null"], "description": "Alike."}, ["amount"]),
                             {"Base": REQUIRING_BASE}), tmp_path_factory.mktemp("alike"))
    assert judges.errors == []
    judges.generate()
    for value, accepted in (({"label": 5}, False), ({"label": 5, "amount": None}, True), ({"label": 4, "amount": "x"}, False),
                            ({"label": 6, "amount": "x", "note": "n"}, True)):
        verdicts = judges.verdicts({**ENVELOPE, "type": "org.example.closed", "data": value})
        assert set(verdicts.values()) == {accepted}, (value, verdicts, judges.why)


def test_closed_alternatives_with_nothing_beside_them_are_no_refusal(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each closed branch declares its own properties: a name one branch
    declares is no conjunction's, so the other branch may leave it out."""
    data = {"type": "object", "allOf": [{"type": "object", "description": "One of two.", "anyOf": A_OR_C}]}
    judges = Judges(_catalog(data, {}), tmp_path_factory.mktemp("alternatives"))
    assert judges.errors == []
    judges.generate()
    for value, accepted in (({"a": "x"}, True), ({"c": "y"}, True), ({"a": "x", "c": "y"}, False), ({"b": "z"}, False)):
        verdicts = judges.verdicts({**ENVELOPE, "type": "org.example.closed", "data": value})
        assert set(verdicts.values()) == {accepted}, (value, verdicts, judges.why)


# A property that the allOf's members define twice, unlike where the
# definitions meet (issue 26, found by the schema property test: Base's
# ``amount: {enum: [open]}`` redefined as ``[number, "null"]`` took 0).
# datamodel-code-generator made the last definition the field and merged in
# the keywords only the other has: each case is (Base's, the redefinition's,
# a value every schema judge refuses that the model took, why); a format
# beside the other's minLength made parse_event raise TypeError on a valid value.
UNLIKE = {
    "two types": ({"type": "string", "enum": ["open"]}, {"type": ["number", "null"]}, 0, "different types"),
    "integer and number": ({"type": "integer"}, {"type": "number"}, 1.5, "different types"),
    "two patterns": ({"type": "string", "pattern": "^[a-z]+$"}, {"type": "string", "pattern": "^[a-c0-9]+$"}, "123",
                     "'pattern' different values"),
    "two minimums": ({"type": "integer", "minimum": 3}, {"type": "integer", "minimum": 1}, 2,
                     "'minimum' different values"),
    "two multipleOfs": ({"type": "integer", "multipleOf": 2}, {"type": "integer", "multipleOf": 3}, 3,
                        "'multipleOf' different values"),
    "two formats": ({"type": "string", "format": "date"}, {"type": "string", "format": "uri"}, "https://x.org",
                    "'format' different values"),
    "two item schemas": ({"type": "array", "items": {"type": "string"}}, {"type": "array", "items": {"type": "integer"}},
                         [1], "'items' different values"),
    "a format beside minLength": ({"type": "string", "format": "date-time"}, {"type": "string", "minLength": 1},
                                  "2026-11-28T12:00:00Z", "a string keyword the format's type cannot take"),
    "an enum no other definition takes": ({"type": "string", "enum": ["x"]}, {"type": "string", "pattern": "^[0-9]+$"},
                                          "x", "may never be sent"),
    "a const over a shorter maxLength": ({"type": ["string", "null"], "maxLength": 3}, {"const": "fast"}, "fast",
                                         "may never be sent"),
    # The const's type is the integer its value is: the model merged the base's number type and took 2.
    "a const over a number": ({"type": "number", "maximum": 5}, {"const": 1}, 2, "different types"),
}


def _redefined(base_p: dict[str, Any], own_p: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    base = {"type": "object", "description": "B.", "properties": {"p": {**base_p, "description": "P."}}}
    return {"type": "object", "allOf": [{"$ref": "#/schemas/Base"}], "properties": {"p": {**own_p, "description": "P2."}}}, base


@pytest.mark.parametrize("case", UNLIKE)
def test_a_property_defined_twice_unlike_is_refused(case: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    base_p, own_p, value, why = UNLIKE[case]
    data, base = _redefined(base_p, own_p)
    judges = Judges(_catalog(data, {"Base": base}), tmp_path_factory.mktemp("unlike"), refused_too=True)
    assert [d.rule for d in judges.errors] == ["PAY-KEYWORD-VERDICT"], judges.errors
    assert "one definition of 'p', not every one" in judges.errors[0].message and why in judges.errors[0].message
    event = {**ENVELOPE, "type": "org.example.closed", "data": {"p": value}}
    _, python_judge, rust_judge = judges.schemas["org.example.closed"]
    # What the model took, which the schema judges refuse; a valid date-time
    # the model could not read (pydantic's min_length raised TypeError on it).
    accepted = case == "a format beside minLength"
    assert python_judge.is_valid(event) is accepted and rust_judge.is_valid(event) is accepted


# Defined twice alike where the definitions meet: the model merges the rest
# (each keyword only one definition has, a null one refuses, the values of an
# enum every definition takes), so every judge agrees.
ALIKE = {
    "a bound each": ({"type": "integer", "minimum": 3}, {"type": "integer", "maximum": 10}, [(2, False), (5, True), (11, False)]),
    "a length and a pattern": ({"type": "string", "pattern": "^[a-z]+$"}, {"type": "string", "maxLength": 3},
                               [("ab", True), ("AB", False), ("abcd", False)]),
    "a format and its type": ({"type": "string", "format": "date-time"}, {"type": "string"},
                              [("2026-11-28T12:00:00Z", True), ("nope", False)]),
    "a description only": ({"type": "string", "maxLength": 2}, {"description": "Again."}, [("ab", True), ("abc", False), (5, False)]),
    "nullable and not": ({"type": ["string", "null"]}, {"type": "string", "maxLength": 3}, [(None, False), ("ab", True)]),
    "an enum over a pattern": ({"type": "string", "enum": ["ab", "ef"]}, {"type": "string", "pattern": "^[a-d]+$"},
                               [("ab", True), ("ef", False)]),
    "items and minItems": ({"type": "array", "items": {"type": "string"}, "maxItems": 2}, {"type": "array", "minItems": 1},
                           [([], False), (["a"], True), (["a", "b", "c"], False), ([1], False)]),
}


@pytest.mark.parametrize("case", ALIKE)
def test_a_property_defined_twice_alike_is_one_verdict(case: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    base_p, own_p, values = ALIKE[case]
    data, base = _redefined(base_p, own_p)
    judges = Judges(_catalog(data, {"Base": base}), tmp_path_factory.mktemp("alike"))
    assert judges.errors == []
    judges.generate()
    for value, accepted in values:
        verdicts = judges.verdicts({**ENVELOPE, "type": "org.example.closed", "data": {"p": value}})
        assert set(verdicts.values()) == {accepted}, (value, verdicts, judges.why)
