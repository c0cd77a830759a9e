"""`evcat diff` compares what payload schemas accept, not how they are spelled (issue 26).

``$ref`` is resolved, ``allOf`` merged, ``anyOf``/``oneOf`` compared alternative
by alternative; a change that breaks consumers shows a witness instance. The
property test draws payload schemas and mutations of them and holds every
verdict against ``jsonschema`` (Draft 2020-12, formats asserted):
a change called forward compatible lets the old schema accept every instance
the new producer sends, one called backward compatible lets the new schema
accept every instance the old producer sent, and every witness is accepted by
one side and refused by the other. Producers send the properties their schema
declares and, in an open content model, unknown ones under names neither
version declares (the reading of catalog-format.md's versioning that
tests/test_diff.py fixes). More examples: ``--hypothesis-profile=slow``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from generator.commands.diff import SchemaDiff, diff_events

from .conftest import ROOT, SOURCES, run_evcat
from .test_diff import BASE, catalog, closed, edit, event_yaml

NOTIFICATIE = {
    "type": "object",
    "description": "Een notificatie.",
    "required": ["kanaal", "hoofdObject", "resource", "resourceUrl", "actie", "aanmaakdatum"],
    "properties": {
        "kanaal": {"type": "string", "description": "K."},
        "hoofdObject": {"type": "string", "format": "uri", "description": "H."},
        "resource": {"type": "string", "description": "R."},
        "resourceUrl": {"type": "string", "format": "uri", "description": "U."},
        "actie": {"type": "string", "enum": ["create", "update", "destroy"], "description": "A."},
        "aanmaakdatum": {"type": "string", "format": "date-time", "description": "D."},
    },
}
V1 = {"type": "tst.zaak.created", "dataversion": "1.0.0", "title": "Zaak created", "description": "D.",
      "data": {"$ref": "#/schemas/Notificatie"}}
V11 = {"type": "tst.zaak.created", "dataversion": "1.1.0", "title": "Zaak created", "description": "D.",
       "data": {"type": "object", "allOf": [{"$ref": "#/schemas/Notificatie"}],
                "properties": {"extra": {"type": "string", "description": "E."}}}}


def write_catalog(directory: Path, events: list[dict[str, Any]], schemas: dict[str, Any] | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    document = {
        "catalog": "zaak-events", "title": "Zaak events", "version": "1.0.0", "profile": "normo",
        "producer": {"source": SOURCES["normo"], "organization": "Testorg"},
        "defaults": {"datacontenttype": "application/json", "time": "T.", "id": "I."},
        "schemas": schemas or {"Notificatie": NOTIFICATIE},
        "events": events,
    }
    (directory / "c.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    return directory


def test_allof_of_a_shared_schema_plus_an_optional_property_is_compatible(tmp_path: Path) -> None:
    """The finding: `allOf: [{$ref: Notificatie}]` + one optional property read
    as six required properties removed (exit 1, a false violation)."""
    old = write_catalog(tmp_path / "old", [V1])
    new = write_catalog(tmp_path / "new", [V1, V11])
    result = run_evcat("diff", str(old), str(new))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "breaks consumers" not in result.stdout and "VIOLATION" not in result.stdout, result.stdout
    assert "/data/extra: property added (optional) [compatible]" in result.stdout
    json_result = run_evcat("diff", str(old), str(new), "--format", "json")
    [event] = [e for e in __import__("json").loads(json_result.stdout)["events"] if e["status"] == "added"]
    assert [(c["path"], c["kind"], c["breaking"]) for c in event["changes"]] == [("/data/extra", "property added", False)]
    lint = run_evcat("lint", str(new))
    assert lint.returncode == 0 and "CAT-VERSION-BUMP" not in lint.stdout, lint.stdout


def test_allof_that_really_removes_a_required_property_still_breaks(tmp_path: Path) -> None:
    """The same spelling with a real break: the new version drops `kanaal` from the shared schema it uses."""
    slim = copy.deepcopy(NOTIFICATIE)
    del slim["properties"]["kanaal"]
    slim["required"].remove("kanaal")
    v11 = copy.deepcopy(V11)
    v11["data"]["allOf"] = [{"$ref": "#/schemas/Slim"}]
    old = write_catalog(tmp_path / "old", [V1])
    new = write_catalog(tmp_path / "new", [V1, v11], {"Notificatie": NOTIFICATIE, "Slim": slim})
    result = run_evcat("diff", str(old), str(new))
    assert result.returncode == 1, result.stdout
    assert "/data/kanaal: property removed (was required) [breaks consumers]" in result.stdout
    assert "witness, accepted by the new schema, refused by the old" in result.stdout
    assert "needs a major" in result.stdout


def judge(schema: Any, shared: dict[str, Any]) -> jsonschema.Draft202012Validator:
    root = dict(schema) if isinstance(schema, dict) else {"allOf": [schema]}
    root["$defs"] = shared
    return jsonschema.Draft202012Validator(root, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


# (name, edit of BASE, expected kind); every one breaks consumers in a closed or an open model.
BREAKING = [
    ("required removed", edit(properties__name=None, required=[]), "property removed", "open"),
    ("property added to a closed model", edit(properties__extra={"type": "string", "description": "E."}),
     "property added", "closed"),
    ("type widened", edit(properties__count={"type": "number", "description": "C."}), "type widened", "open"),
    ("nullable", edit(properties__note={"type": ["string", "null"], "description": "N."}), "type widened", "open"),
    ("enum value added", edit(properties__kind__enum=["a", "b", "c"]), "enum values added", "open"),
    ("constraint relaxed", edit(properties__name__maxLength=20), "constraint relaxed", "open"),
    ("format removed", lambda s: s, "constraint relaxed", "format"),
    ("required to optional", edit(required=[]), "required -> optional", "open"),
    ("model opened", lambda s: {k: v for k, v in s.items() if k != "additionalProperties"}, "additionalProperties opened", "closed"),
]
# ... and every one refuses old events (backward incompatible): the witness is an old event the new schema refuses.
REFUSING = [
    ("required added", edit(properties__extra={"type": "string", "description": "E."}, required=["name", "extra"]),
     "property added", "open"),
    ("property removed from a closed model", edit(properties__note=None), "property removed", "closed"),
    ("type narrowed", edit(properties__size={"type": "integer", "description": "S."}), "type narrowed", "open"),
    ("enum value removed", edit(properties__kind__enum=["a"]), "enum values removed", "open"),
    ("constraint tightened", edit(properties__name__maxLength=5), "constraint tightened", "open"),
    ("minimum added", edit(properties__count__minimum=3), "constraint tightened", "open"),
    ("pattern added", edit(properties__note__pattern="^[a-z]+$"), "constraint tightened", "open"),
    ("format added", edit(properties__note__format="date-time"), "constraint tightened", "open"),
    ("model closed", closed, "additionalProperties closed", "open"),
]


def _witness_case(change: Any, kind: str, model: str, accepted_by: str) -> None:
    old_schema = closed(BASE) if model == "closed" else copy.deepcopy(BASE)
    if model == "format":
        old_schema["properties"]["note"] = {"type": "string", "format": "date", "description": "N."}
    new_schema = change(old_schema) if model != "format" else BASE
    catalog_set = catalog("normo", [event_yaml("normo", old_schema, "1.0.0"), event_yaml("normo", new_schema, "2.0.0")])
    old, new = sorted(catalog_set.events, key=lambda e: e.dataversion)
    changes = [c for c in diff_events(old, new, catalog_set, catalog_set, witnesses=True) if c.kind == kind]
    assert changes and changes[0].witness_accepted_by == accepted_by, changes
    other = "old" if accepted_by == "new" else "new"
    schemas = {"old": old_schema, "new": new_schema}
    assert judge(schemas[accepted_by], {}).is_valid(changes[0].witness), changes[0]
    assert not judge(schemas[other], {}).is_valid(changes[0].witness), changes[0]


@pytest.mark.parametrize("name,change,kind,model", BREAKING, ids=[c[0] for c in BREAKING])
def test_a_change_that_breaks_consumers_shows_a_witness(name: str, change: Any, kind: str, model: str) -> None:
    _witness_case(change, kind, model, "new")


@pytest.mark.parametrize("name,change,kind,model", REFUSING, ids=[c[0] for c in REFUSING])
def test_a_change_that_refuses_old_events_shows_a_witness(name: str, change: Any, kind: str, model: str) -> None:
    _witness_case(change, kind, model, "old")


def _verdict(old: Any, new: Any, shared_old: dict[str, Any], shared_new: dict[str, Any] | None = None) -> tuple[bool, bool]:
    diff = SchemaDiff(shared_old, shared_new if shared_new is not None else shared_old)
    diff.compare(old, new, "/data")
    return all(c.backward for c in diff.changes), all(c.forward for c in diff.changes)


ADDRESS = {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}


@pytest.mark.parametrize("old,new,expected", [
    # spelled differently, accepting the same
    ({"$ref": "#/$defs/Address"}, {"allOf": [{"$ref": "#/$defs/Address"}]}, (True, True)),
    ({"type": "string", "enum": ["a"]}, {"const": "a"}, (True, True)),
    ({"type": "integer", "minimum": 1}, {"type": "integer", "allOf": [{"minimum": 0}, {"minimum": 1}]}, (True, True)),
    # allOf that narrows: the properties of both parts meet
    ({"$ref": "#/$defs/Address"}, {"allOf": [{"$ref": "#/$defs/Address"}, {"properties": {"city": {"maxLength": 3}}}]},
     (False, True)),
    # anyOf: an alternative added widens, one removed narrows
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
     (True, False)),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "string"}, (False, True)),
    ({"type": "string"}, {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 2}]}, (False, True)),
    # oneOf with overlapping alternatives is not read as anyOf on the accepting side
    ({"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 2}]}, {"type": "string", "minLength": 5}, (False, False)),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "string", "minLength": 5}, (False, True)),
    # bounds by the values they let through, inclusive or exclusive
    ({"type": "integer", "minimum": 3}, {"type": "integer", "minimum": 1}, (True, False)),
    ({"type": "number", "minimum": 1}, {"type": "number", "exclusiveMinimum": 1}, (False, True)),
    ({"type": "number", "exclusiveMaximum": 5}, {"type": "number", "maximum": 5}, (True, False)),
    ({"type": "number", "maximum": 5}, {"type": "number", "maximum": 9, "exclusiveMaximum": 5}, (False, True)),
    # a recursive schema compared with itself
    ({"$ref": "#/$defs/Node"}, {"$ref": "#/$defs/Node"}, (True, True)),
])
def test_verdicts_by_meaning(old: Any, new: Any, expected: tuple[bool, bool]) -> None:
    shared = {"Address": ADDRESS, "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}
    assert _verdict(old, new, shared) == expected


def test_a_recursive_schema_that_changes_deep_down_is_seen() -> None:
    old = {"Node": {"type": "object", "properties": {"name": {"type": "string"}, "next": {"$ref": "#/$defs/Node"}}}}
    new = {"Node": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 2}, "next": {"$ref": "#/$defs/Node"}}}}
    assert _verdict({"$ref": "#/$defs/Node"}, {"$ref": "#/$defs/Node"}, old, new) == (False, True)


def test_allof_that_cannot_be_merged_is_compared_conservatively_and_says_so() -> None:
    old = {"type": "string", "allOf": [{"pattern": "^a"}, {"pattern": "b$"}]}
    new = {"type": "string", "allOf": [{"pattern": "^a"}, {"pattern": "c$"}]}
    diff = SchemaDiff({}, {})
    diff.compare(old, new, "/data")
    [change] = diff.changes
    assert (change.backward, change.forward) == (False, False) and "compared by spelling" in change.detail
    same = SchemaDiff({}, {})
    same.compare(old, {"allOf": [{"pattern": "^a"}, {"pattern": "b$"}], "type": "string"}, "/data")
    assert same.changes == []


def test_every_report_format_shows_the_witness(tmp_path: Path) -> None:
    import json

    narrowed = copy.deepcopy(V1)
    narrowed["dataversion"] = "2.0.0"
    narrowed["data"] = {"type": "object", "allOf": [{"$ref": "#/schemas/Notificatie"}],
                        "properties": {"actie": {"enum": ["create", "update", "destroy", "patch"]}}}
    widened = copy.deepcopy(NOTIFICATIE)
    widened["properties"]["actie"]["enum"].append("patch")
    old = write_catalog(tmp_path / "old", [V1])
    new = write_catalog(tmp_path / "new", [V1, {**V11, "data": {"$ref": "#/schemas/Wide"}}],
                        {"Notificatie": NOTIFICATIE, "Wide": widened})
    report = json.loads(run_evcat("diff", str(old), str(new), "--format", "json").stdout)
    [change] = [c for e in report["events"] for c in e["changes"] if c["breaking"]]
    assert change["kind"] == "enum values added" and change["witness_accepted_by"] == "new"
    assert change["witness"]["actie"] == "patch"
    assert judge({"$ref": "#/$defs/Wide"}, {"Wide": widened}).is_valid(change["witness"])
    assert not judge({"$ref": "#/$defs/Notificatie"}, {"Notificatie": NOTIFICATIE}).is_valid(change["witness"])
    markdown = run_evcat("diff", str(old), str(new), "--format", "markdown").stdout
    assert "- `/data/actie` witness, accepted by the new schema, refused by the old: `{" in markdown
    text = run_evcat("diff", str(old), str(new)).stdout
    assert '"actie": "patch"' in text.split("/data/actie: enum values added")[1].splitlines()[1]
    # the allOf spelling of the same narrowing is read as the narrowing it is: no change at all
    same = write_catalog(tmp_path / "same", [V1, narrowed])
    [added] = json.loads(run_evcat("diff", str(old), str(same), "--format", "json").stdout)["events"]
    assert (added["new"], added["changes"]) == ("2.0.0", [])


def test_lint_of_the_shipped_catalogs_stays_clean() -> None:
    result = run_evcat("lint", str(ROOT / "catalog"))
    assert result.returncode == 0 and "CAT-VERSION-BUMP" not in result.stdout, result.stdout


# --- the property test ---------------------------------------------------------

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

settings.register_profile("slow", max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings.get_current_profile_name() == "slow"
# a fast default, the same examples every run; the slow profile's own (random) ones otherwise
PROPERTY = settings(deadline=None, suppress_health_check=list(HealthCheck), database=None,
                    **({} if SLOW else {"max_examples": 200, "derandomize": True}))
POOL = ["a", "b", "c", "d"]  # declared property names; unknown ones are drawn outside it
FORMATS = ["date-time", "date", "email", "uuid"]


def scalars() -> st.SearchStrategy[dict[str, Any]]:
    nullable = st.booleans()

    def typed(kind: str, extra: dict[str, Any], null: bool) -> dict[str, Any]:
        return {"type": [kind, "null"] if null else kind, **extra}

    lengths = st.integers(0, 3).map(lambda n: {"minLength": n}) | st.integers(2, 6).map(lambda n: {"maxLength": n})
    string = st.one_of(
        st.just({}), lengths, st.tuples(lengths, lengths).map(lambda p: {**p[0], **p[1]}),
        st.lists(st.sampled_from(["x", "yy", "zzz", "wwww"]), min_size=1, max_size=3, unique=True).map(lambda v: {"enum": v}),
        st.sampled_from(FORMATS).map(lambda f: {"format": f}),
        st.sampled_from(["^[a-z]*$", "^x", "y"]).map(lambda p: {"pattern": p}))
    bounds = st.one_of(*[st.integers(-3, 6).map(lambda n, k=k: {k: n})
                         for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")])
    number = st.one_of(
        st.just({}), bounds, st.tuples(bounds, bounds).map(lambda p: {**p[0], **p[1]}),
        st.lists(st.integers(-2, 5), min_size=1, max_size=3, unique=True).map(lambda v: {"enum": v}))
    return st.one_of(
        st.builds(typed, st.just("string"), string, nullable),
        st.builds(typed, st.sampled_from(["integer", "number"]), number, nullable),
        st.builds(typed, st.just("boolean"), st.just({}), nullable),
        st.builds(lambda v: {"const": v}, st.sampled_from(["x", 1, True, None])),
    )


def objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        properties = draw(st.dictionaries(st.sampled_from(POOL), children, max_size=3))
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        required = draw(st.lists(st.sampled_from(sorted(properties)), unique=True)) if properties else []
        if required:
            schema["required"] = required
        extra = draw(st.sampled_from(["absent", True, False, "schema"]))
        if extra != "absent":
            schema["additionalProperties"] = {"type": "string"} if extra == "schema" else extra
        return schema
    return build()


schemas = st.recursive(
    scalars(),
    lambda children: st.one_of(
        objects(children),
        st.builds(lambda items, low: {"type": "array", "items": items, **({"minItems": low} if low else {})},
                  children, st.integers(0, 2)),
        st.builds(lambda a, b: {"anyOf": [a, b]}, children, children),
        st.builds(lambda a, b: {"oneOf": [a, b]}, children, children),
        st.builds(lambda props: {"allOf": [{"$ref": "#/$defs/S"}], "properties": props},
                  st.dictionaries(st.sampled_from(POOL), children, max_size=2)),
        st.just({"$ref": "#/$defs/S"}),
    ),
    max_leaves=6,
)


def _spots(schema: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of the schema objects within ``schema``."""
    if not isinstance(schema, dict):
        return []
    found = [path]
    for key, value in schema.items():
        if key in ("properties",) and isinstance(value, dict):
            for name, sub in value.items():
                found += _spots(sub, path + (key, name))
        elif key in ("items", "additionalProperties"):
            found += _spots(value, path + (key,))
        elif key in ("anyOf", "allOf", "oneOf"):
            for index, sub in enumerate(value):
                found += _spots(sub, path + (key, index))
    return found


def _at(schema: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        schema = schema[key]
    return schema


def _mutate(draw: Any, schema: dict[str, Any]) -> None:
    # the kinds that fit the schema first: hypothesis tries the first ones first
    types = {schema["type"]} if isinstance(schema.get("type"), str) else set(schema.get("type") or [])
    if "object" in types or "properties" in schema:
        kinds = ["add", "remove", "required", "ap", "add", "remove", "required", "ap", "add"]
    elif types & {"string", "integer", "number", "array"}:
        kinds = ["bound", "enum", "bound", "null", "bound", "bound", "enum", "bound", "bound"]
    else:
        kinds = ["enum", "bound", "ap"]
    kinds += ["type", "null", "wrap", "const", "replace"]
    kind = draw(st.sampled_from(kinds))
    properties = schema.setdefault("properties", {}) if kind in ("add", "remove", "required") else {}
    if kind == "add":
        properties[draw(st.sampled_from(POOL))] = copy.deepcopy(draw(schemas))
        if draw(st.booleans()):
            schema["required"] = sorted({*schema.get("required", []), *[n for n in properties][-1:]})
    elif kind == "remove" and properties:
        name = draw(st.sampled_from(sorted(properties)))
        del properties[name]
        if name in schema.get("required", []):
            schema["required"] = [n for n in schema["required"] if n != name] or schema.pop("required")
    elif kind == "required" and properties:
        name = draw(st.sampled_from(sorted(properties)))
        required = set(schema.get("required", [])) ^ {name}
        schema.pop("required", None)
        if required:
            schema["required"] = sorted(required)
    elif kind == "type":
        schema["type"] = draw(st.sampled_from(["string", "integer", "number", "object", ["string", "integer"]]))
    elif kind == "null" and "type" in schema:
        kinds_ = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
        schema["type"] = [k for k in kinds_ if k != "null"] if "null" in kinds_ else kinds_ + ["null"]
    elif kind == "bound":
        fitting = (["minLength", "maxLength", "format", "pattern"] if "string" in types
                   else ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] if types & {"integer", "number"}
                   else ["minItems", "maxItems"] if "array" in types
                   else ["minLength", "minimum", "maximum", "minItems", "format", "pattern"])
        present = [k for k in fitting if k in schema]
        keyword = draw(st.sampled_from(present + fitting))  # a bound it has first
        if keyword == "format":
            schema[keyword] = draw(st.sampled_from([None, *FORMATS]))
        elif keyword == "pattern":
            schema[keyword] = draw(st.sampled_from([None, "^[a-z]*$", "^x", "y"]))
        elif keyword in schema:  # moved either way, or dropped
            step = draw(st.sampled_from([-1, 1, -3, 3, None]))
            schema[keyword] = None if step is None else schema[keyword] + step
        else:
            schema[keyword] = draw(st.integers(-2 if "imum" in keyword else 0, 6))
        if schema.get(keyword, 0) is None or (keyword.startswith(("min", "max")) and "imum" not in keyword
                                               and schema.get(keyword, 0) < 0):
            schema.pop(keyword)
    elif kind == "enum":
        values = list(schema.get("enum", []))
        value = draw(st.sampled_from(["x", "yy", "zzz", 1, 2, None]))
        values = [v for v in values if v != value] if value in values else values + [value]
        if values:
            schema["enum"] = values
        else:
            schema.pop("enum", None)
    elif kind == "const":
        schema["const"] = draw(st.sampled_from(["x", 1, True, None]))
    elif kind == "ap":
        schema["additionalProperties"] = draw(st.sampled_from([True, False, {"type": "string"}]))
    elif kind == "wrap":
        inner = dict(schema)
        schema.clear()
        schema[draw(st.sampled_from(["anyOf", "allOf", "oneOf"]))] = [inner] + (
            [copy.deepcopy(draw(schemas))] if draw(st.booleans()) else [])
    else:
        schema.clear()
        schema.update(copy.deepcopy(draw(schemas)))


@st.composite
def changes(draw: Any) -> tuple[Any, Any, dict[str, Any], dict[str, Any]]:
    shared_old = {"S": copy.deepcopy(draw(objects(scalars())))}
    old = copy.deepcopy(draw(schemas))
    new, shared_new = copy.deepcopy(old), copy.deepcopy(shared_old)
    for _ in range(draw(st.integers(1, 2))):
        in_shared = draw(st.booleans()) and "$ref" in repr(new)
        target = shared_new["S"] if in_shared else new
        if not isinstance(target, dict):
            continue
        spot = draw(st.sampled_from(_spots(target)))
        _mutate(draw, _at(target, spot))
    assume("$ref" not in repr(shared_new))  # no shared schema that contains itself: the unit tests have those
    return old, new, shared_old, shared_new


def _declared(schema: Any, shared: dict[str, Any], seen: frozenset[str] = frozenset()) -> set[str]:
    """The property names a schema declares at its own level (through allOf, anyOf, $ref)."""
    if not isinstance(schema, dict):
        return set()
    names = set(schema.get("properties", {}))
    for key in ("allOf", "anyOf", "oneOf"):
        for member in schema.get(key, []):
            names |= _declared(member, shared, seen)
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.split("/")[-1] in shared and ref not in seen:
        names |= _declared(shared[ref.split("/")[-1]], shared, seen | {ref})
    return names


def _producer(schema: Any, shared: dict[str, Any]) -> Any:
    """``schema`` for drawing what a producer sends: unknown properties only
    under names outside POOL (a name is unknown only where it is not declared)."""
    if not isinstance(schema, dict):
        return schema
    result = {}
    for key, value in schema.items():
        if key == "properties":
            result[key] = {name: _producer(sub, shared) for name, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            result[key] = _producer(value, shared)
        elif key in ("anyOf", "allOf", "oneOf"):
            result[key] = [_producer(sub, shared) if key != "allOf" else sub for sub in value]
        else:
            result[key] = value
    declared = sorted(_declared(schema, shared))
    outside = {"not": {"enum": POOL}}
    result["propertyNames"] = {"anyOf": [{"enum": declared}, outside]} if declared else outside
    return result


def _bundle(schema: Any, shared: dict[str, Any]) -> dict[str, Any]:
    root = dict(schema) if isinstance(schema, dict) else {"allOf": [schema]}
    root["$defs"] = shared
    return root


def _inline(schema: Any, shared: dict[str, Any]) -> Any:
    """``schema`` with each ``$ref`` replaced by the (ref-free) shared schema it names."""
    if isinstance(schema, list):
        return [_inline(item, shared) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: _inline(value, shared) if key != "enum" and key != "const" else value
              for key, value in schema.items() if key != "$ref"}
    if "$ref" in schema:
        result = {"allOf": [shared[schema["$ref"].split("/")[-1]], *result.pop("allOf", [])], **result}
    return result


def _instances(draw: Any, schema: Any, shared: dict[str, Any], count: int) -> list[Any]:
    from hypothesis.errors import InvalidArgument
    from hypothesis_jsonschema import from_schema

    producer_shared = {name: _producer(sub, shared) for name, sub in shared.items()}
    try:
        strategy = from_schema(_inline(_producer(schema, shared), producer_shared))
        if strategy.is_empty:
            return []
        return [draw(strategy) for _ in range(count)]
    except InvalidArgument:  # hypothesis-jsonschema on some schemas that accept nothing (minLength > maxLength)
        return []


@(pytest.mark.slow if SLOW else lambda test: test)  # 200 examples take seconds: in the fast loop too
@PROPERTY
@given(st.data())
def test_verdicts_hold_for_drawn_instances(data: st.DataObject) -> None:
    pytest.importorskip("hypothesis_jsonschema")
    old, new, shared_old, shared_new = data.draw(changes())
    diff = SchemaDiff(shared_old, shared_new)
    diff.compare(old, new, "/data")
    diff.find_witnesses(old, new)
    backward, forward = all(c.backward for c in diff.changes), all(c.forward for c in diff.changes)
    judges = {"old": judge(old, shared_old), "new": judge(new, shared_new)}
    if forward:  # the new producer's events are read by the old consumers
        for instance in _instances(data.draw, new, shared_new, 4):
            if judges["new"].is_valid(instance):
                assert judges["old"].is_valid(instance), (instance, diff.changes)
    if backward:  # the old producer's events are valid under the new schema
        for instance in _instances(data.draw, old, shared_old, 4):
            if judges["old"].is_valid(instance):
                assert judges["new"].is_valid(instance), (instance, diff.changes)
    for change in diff.changes:
        if change.witness_accepted_by is not None:
            other = "old" if change.witness_accepted_by == "new" else "new"
            assert judges[change.witness_accepted_by].is_valid(change.witness), change
            assert not judges[other].is_valid(change.witness), change
