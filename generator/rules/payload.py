"""Payload naming rules, all profiles (rules.md "Payload naming").

Het Normo ID10 and the NL GOV API design rules: payload attributes are
lowerCamelCase, as in the corresponding REST API.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any
from ..diagnostics import Diagnostic, Severity
from ..envelope import accepted_by_every, listed_values
from ..loader import Document, Path
from ..model import EventType, SharedSchema
from ..naming import CAMEL_CASE, PASCAL_CASE, closest, did_you_mean, to_camel, to_pascal
from ..schemawalk import FORMAT_ALIASES, FORMATS
from . import ALL, Context, PayloadPart, event_rule, file_rule, part_findings, payload_parts, schema_nodes, set_rule, shared_schemas_of

E, W = Severity.ERROR, Severity.WARNING


@set_rule("PAY-CAMELCASE", E, "Payload property names are lowerCamelCase.", profiles=ALL)
def camel_case(context: Context) -> Iterator[Diagnostic]:
    for part in payload_parts(context):
        yield from part_findings(context, "PAY-CAMELCASE", part, lambda part=part: _camel_case(context, part))


def _camel_case(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    for path, subschema in schema_nodes(context, part):
        properties = subschema.get("properties")
        if isinstance(properties, dict):
            for name in properties:
                if not CAMEL_CASE.match(name):
                    fix = to_camel(name)
                    yield context.report(
                        "PAY-CAMELCASE",
                        f"property '{name}' is not lowerCamelCase; rename it to '{fix}'",
                        context.key_loc(part.file, path + ("properties", name)),
                        fix,
                    )
        required = subschema.get("required")
        if isinstance(required, list):
            for index, name in enumerate(required):
                if isinstance(name, str) and not CAMEL_CASE.match(name):
                    fix = to_camel(name)
                    yield context.report(
                        "PAY-CAMELCASE",
                        f"required property '{name}' is not lowerCamelCase; rename it to '{fix}'",
                        context.loc(part.file, path + ("required", index)),
                        fix,
                    )


@file_rule("PAY-SCHEMA-NAME", W, ALL, "Names under schemas are PascalCase.")
def schema_names(document: Document, context: Context) -> Iterator[Diagnostic]:
    for shared in shared_schemas_of(document, context):
        if not PASCAL_CASE.match(shared.declared_name):
            fix = to_pascal(shared.declared_name)
            yield context.report(
                "PAY-SCHEMA-NAME",
                f"schema name '{shared.declared_name}' is not PascalCase; rename it to '{fix}' (and its $refs)",
                context.key_loc(document.file, shared.path),
                fix,
            )


@event_rule("PAY-DESCRIPTION", W, ALL, "Events and payload properties have a description.")
def event_description(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if not event.description:
        yield context.report(
            "PAY-DESCRIPTION",
            f"event '{event.type}' has no description; say what happened and when it is sent",
            context.event_loc(event, "type", key=True),
        )


@set_rule("PAY-DESCRIPTION", W, "Events and payload properties have a description.", profiles=ALL)
def property_description(context: Context) -> Iterator[Diagnostic]:
    shared = context.built.catalog_set.schemas
    # By the part's schema object (as ``part_findings``) and whether each
    # shared schema its properties refer to has a description: a
    # long-running caller keeps this cache between runs (engine.keep).
    cache = context.cache.setdefault("described", {})
    for part in payload_parts(context):
        key = (part.file, part.path)
        known = cache.get(key)
        if known is None or known[0] is not part.schema or any(
            _undescribed(shared, name) != undescribed for name, undescribed in known[2]
        ):
            targets: dict[str, bool] = {}
            known = cache[key] = (part.schema, list(_property_description(context, part, targets)), tuple(targets.items()))
        yield from known[1]


def _undescribed(shared: dict[str, SharedSchema], name: str) -> bool:
    target = shared.get(name)
    return target is not None and not target.description


def _property_description(context: Context, part: PayloadPart, targets: dict[str, bool]) -> Iterator[Diagnostic]:
    """PAY-DESCRIPTION's findings in ``part``; ``targets`` is left holding
    the shared schemas read (whether each lacked a description)."""
    shared = context.built.catalog_set.schemas
    for path, subschema in schema_nodes(context, part):
        properties = subschema.get("properties")
        if not isinstance(properties, dict):
            continue
        for name, prop in properties.items():
            if not isinstance(prop, dict) or prop.get("description"):
                continue
            ref = prop.get("$ref")
            if isinstance(ref, str):
                if not ref.startswith("#/$defs/"):
                    continue  # a broken $ref (CAT-REF says so)
                target = ref[len("#/$defs/"):]
                undescribed = targets[target] = _undescribed(shared, target)
                if not undescribed:
                    continue  # described where it points, or a broken $ref (CAT-REF says so)
            yield context.report(
                "PAY-DESCRIPTION",
                f"property '{name}' has no description; say what it holds (unit, format, source)",
                context.key_loc(part.file, path + ("properties", name)),
            )


# Keywords next to `required` that can bring in properties `properties` does not list.
_OPEN_ENDED = ("allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "patternProperties", "dependentSchemas", "if")


@set_rule("PAY-REQUIRED", E, "Names under required are properties of the same schema.", profiles=ALL)
def required_properties(context: Context) -> Iterator[Diagnostic]:
    for part in payload_parts(context):
        yield from part_findings(context, "PAY-REQUIRED", part, lambda part=part: _required_properties(context, part))


def _required_properties(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    for path, subschema in schema_nodes(context, part):
        required, properties = subschema.get("required"), subschema.get("properties")
        if not isinstance(required, list) or not isinstance(properties, dict):
            continue
        if any(keyword in subschema for keyword in _OPEN_ENDED):
            continue  # the property may come from a combined schema
        for index, name in enumerate(required):
            if isinstance(name, str) and name not in properties and to_camel(name) not in properties:
                fix = closest(name, [known for known in properties if known not in required])
                yield context.report(
                    "PAY-REQUIRED",
                    f"required property '{name}' is not under properties{did_you_mean(name, properties)}"
                    + ("" if fix else "; add it to properties or remove it from required"),
                    context.loc(part.file, path + ("required", index)),
                    fix,
                )


@set_rule("PAY-FORMAT", W, "format is one of the formats JSON Schema 2020-12 defines.", profiles=ALL)
def known_formats(context: Context) -> Iterator[Diagnostic]:
    for part in payload_parts(context):
        yield from part_findings(context, "PAY-FORMAT", part, lambda part=part: _known_formats(context, part))


def _known_formats(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    for path, subschema in schema_nodes(context, part):
        value = subschema.get("format")
        if isinstance(value, str) and value not in FORMATS:
            fix = closest(value.lower(), FORMATS) or FORMAT_ALIASES.get(value.lower())
            yield context.report(
                "PAY-FORMAT",
                f"format '{value}' is not a JSON Schema 2020-12 format, so validators do not check it"
                + (f"; did you mean '{fix}'?" if fix else f" (known: {', '.join(FORMATS)})"),
                context.loc(part.file, path + ("format",)),
                fix,
            )


# Formats no grammar gives one verdict (contract §4.1): a ``regex`` value is
# compiled by each judge in its own dialect (Python's re for ``jsonschema``,
# ECMA-262 for jsonschema-rs; "(?P<x>a)" and "\\p{L}" split them), and a
# regular expression's syntax nests, so no pattern beside the format can
# name the values both accept (README, formats).
SPLIT_FORMATS = {"regex": "Python's re and ECMA-262 engines read a regular expression's syntax differently"}


@set_rule("PAY-FORMAT-VERDICT", E, "A payload format gets one verdict from every judge (not regex).", profiles=ALL, fixed=True)
def format_verdict(context: Context) -> Iterator[Diagnostic]:
    for part in payload_parts(context):
        yield from part_findings(context, "PAY-FORMAT-VERDICT", part, lambda part=part: _format_verdict(context, part))


def _format_verdict(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    for path, subschema in schema_nodes(context, part):
        value = subschema.get("format")
        if isinstance(value, str) and value in SPLIT_FORMATS:
            yield context.report(
                "PAY-FORMAT-VERDICT",
                f"format '{value}' cannot get one verdict from every judge ({SPLIT_FORMATS[value]}); "
                "leave it out: the value is then a plain string to every judge",
                context.loc(part.file, path + ("format",)),
            )


def _patterns(context: Context, part: PayloadPart) -> Iterator[tuple[str, Path]]:
    """(pattern, path of the pattern's key) of every ``pattern`` and ``patternProperties`` key of ``part``."""
    for path, subschema in schema_nodes(context, part):
        if isinstance(subschema.get("pattern"), str):
            yield subschema["pattern"], path + ("pattern",)
        if isinstance(subschema.get("patternProperties"), dict):
            for key in subschema["patternProperties"]:
                if isinstance(key, str):
                    yield key, path + ("patternProperties", key)


@set_rule("PAY-PATTERN-PORTABLE", W, "Payload patterns keep to I-Regexp (RFC 9485), which every judge reads alike.", profiles=ALL)
def portable_patterns(context: Context) -> Iterator[Diagnostic]:
    for part in payload_parts(context):
        yield from part_findings(context, "PAY-PATTERN-PORTABLE", part, lambda part=part: _portable(context, part))


def _portable(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    from ..patterns import portability

    for pattern, path in _patterns(context, part):
        for reason in portability(pattern)[:3]:
            yield context.report("PAY-PATTERN-PORTABLE", f"pattern {pattern[:80]!r}: {reason}", context.loc(part.file, path))


@set_rule("PAY-PATTERN-BACKTRACK", E, "Payload patterns cannot backtrack catastrophically (nested or overlapping quantifiers)"
          " and need no backtracking engine (backreferences, lookaround).",
          profiles=ALL, fixed=True)
def backtracking_patterns(context: Context) -> Iterator[Diagnostic]:
    for part in payload_parts(context):
        yield from part_findings(context, "PAY-PATTERN-BACKTRACK", part, lambda part=part: _backtracking(context, part))


def _backtracking(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    from ..pattern_cost import backtracking

    for pattern, path in _patterns(context, part):
        for reason in backtracking(pattern)[:2]:
            yield context.report("PAY-PATTERN-BACKTRACK", f"pattern {pattern[:80]!r}: {reason}", context.loc(part.file, path))


# --- allOf with a closed branch (issue 26) -----------------------------------
#
# JSON Schema applies every branch of an ``allOf`` to the whole object: a
# branch with ``additionalProperties: false`` refuses every name it does not
# list in ``properties`` (or match by ``patternProperties``), also the names
# another branch declares, and ``additionalProperties: <schema>`` applies its
# schema to them as well. The generated model subclasses the branches and
# takes such a name as the declaring branch says (a split verdict, contract
# §4.1), so the catalog refuses the schema. The same holds one level down:
# a property declared by two branches is their conjunction (an object
# property redefined in an allOf).

_CONJUNCTION_DEPTH = 16  # nested redefinitions followed at most this deep (a recursive $ref ends sooner)


class _Member:
    """One schema that the conjunction applies: its schema and where to point
    (``site``: its path in the part's file, or the ``$ref`` that brought it in)."""

    __slots__ = ("label", "local", "schema", "site")

    def __init__(self, schema: dict, site: Path, local: bool, label: str) -> None:
        self.schema, self.site, self.local, self.label = schema, site, local, label


_MEMBERS_AT_MOST = 10_000  # schemas one conjunction gathers (a long $ref chain or fan-out ends there)


def _members(schema: Any, site: Path, local: bool, label: str, shared: dict, seen: set[int]) -> list[_Member]:
    """``schema`` and every schema its ``allOf`` and ``$ref`` (transitively) make
    apply to the same value, in document order (no recursion: a chain of
    references may be as long as the catalog is)."""
    found: list[_Member] = []
    stack = [(schema, site, local, label)]
    while stack and len(found) < _MEMBERS_AT_MOST:
        schema, site, local, label = stack.pop()
        if not isinstance(schema, dict) or id(schema) in seen:
            continue
        seen.add(id(schema))
        found.append(_Member(schema, site, local, label))
        after: list[tuple[Any, Path, bool, str]] = []
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = shared.get(ref[len("#/$defs/"):])
            if target is not None:
                after.append((target.schema, site, False, target.declared_name))
        branches = schema.get("allOf")
        if isinstance(branches, list):
            after += [(branch, site + ("allOf", index) if local else site, local,
                       f"{label}allOf[{index}]" if local else label) for index, branch in enumerate(branches)]
        stack.extend(reversed(after))
    return found


def _matches(pattern: Any, name: str) -> bool:
    """Whether the catalog's ``pattern`` (ECMA-262) finds ``name``; True for a
    pattern lint refuses or cannot read (other rules say so: no finding is
    built on it). Only a pattern PAY-PATTERN-BACKTRACK accepts is run, so the
    search is linear in the name."""
    import re

    from ..pattern_cost import backtracking
    from ..patterns import python_pattern

    if not isinstance(pattern, str):
        return True
    try:
        if backtracking(pattern):
            return True
        return re.search(python_pattern(pattern), name) is not None
    except Exception:  # noqa: BLE001  (re.error, RecursionError of a deeply nested pattern: unreadable)
        return True


def _listed(member: dict, name: str) -> bool:
    """Whether ``member``'s ``properties`` or ``patternProperties`` cover ``name``."""
    properties = member.get("properties")
    if isinstance(properties, dict) and name in properties:
        return True
    patterns = member.get("patternProperties")
    return any(_matches(pattern, name) for pattern in (patterns if isinstance(patterns, dict) else ()))


def _name_allowed(names: dict, name: str) -> bool:
    """Whether the ``propertyNames`` schema ``names`` surely takes ``name``
    (its const, enum or pattern say so; any other keyword is not followed)."""
    if set(names) - {"const", "enum", "pattern", "type", "description", "title"} or names.get("type", "string") != "string":
        return False
    if "const" in names and names["const"] != name:
        return False
    if "enum" in names and not (isinstance(names["enum"], list) and name in names["enum"]):
        return False
    return "pattern" not in names or _matches(names["pattern"], name)


def _refusal(closed: dict, name: str) -> str | None:
    """Why the branch ``closed`` refuses (or constrains) a name another branch
    declares, or None: it takes it as the declaring branch says."""
    names = closed.get("propertyNames")
    if isinstance(names, dict) and names and not _name_allowed(names, name):
        return "its propertyNames applies to every name of the object"
    if _listed(closed, name):
        return None
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        extra = closed.get(keyword, True)
        if extra is False:
            return f"its {keyword}: false refuses it"
        if isinstance(extra, dict) and extra:
            return f"its {keyword} schema applies to it too"
    return None  # open (absent, true, {}), or not a schema (CAT-SCHEMA says so)


_ALTERNATIVES = frozenset({"anyOf", "oneOf"})


def _alternatives(members: list[_Member], shared: dict) -> list[_Member]:
    """The schemas of the anyOf and oneOf branches of ``members`` (each
    with what its allOf and ``$ref`` apply, and their own branches in
    turn): a chosen branch applies to the whole object too, so a closed one
    refuses what the conjunction declares beside it (2020-12 §10.2.1.2-3)."""
    found: list[_Member] = []
    stack = list(members)
    seen = {id(member.schema) for member in members}
    while stack and len(found) < _MEMBERS_AT_MOST:
        member = stack.pop()
        for keyword in _ALTERNATIVES & member.schema.keys():
            branches = member.schema[keyword]
            for index, branch in enumerate(branches if isinstance(branches, list) else ()):
                site = member.site + (keyword, index) if member.local else member.site
                label = f"{member.label}{'.' if member.label else ''}{keyword}[{index}]"
                gathered = _members(branch, site, member.local, label, shared, seen)
                found += gathered
                stack += gathered
    return found


def _declared(members: list[_Member]) -> dict[str, list[_Member]]:
    """The property names ``members`` declare, each with the members that do."""
    declared: dict[str, list[_Member]] = {}
    for member in members:
        properties = member.schema.get("properties")
        if isinstance(properties, dict):
            for name in properties:
                if isinstance(name, str):
                    declared.setdefault(name, []).append(member)
    return declared


def _closed_conjunction(context: Context, part: PayloadPart, members: list[_Member], shared: dict,
                        depth: int, reported: set[tuple[Path, str]], walked: set[frozenset[int]]) -> Iterator[Diagnostic]:
    key = frozenset(id(member.schema) for member in members)
    if key in walked:
        return  # the same schemas again (a recursive $ref): nothing new below
    walked.add(key)
    declared = _declared(members)
    alternatives = _alternatives(members, shared)
    # A chosen anyOf/oneOf branch, like an allOf branch, applies to the whole
    # object: a closed one refuses what the conjunction declares beside it,
    # and a closed conjunct refuses what a branch declares (found by the
    # schema property test: a Base closed, or whose additionalProperties is a
    # schema, took no 'amount' that an anyOf branch declared; the model did).
    in_alternatives = _declared(alternatives)
    for closed in [*members, *alternatives]:
        beside = closed in alternatives
        names = declared if beside else {**in_alternatives, **declared}
        for name, declaring in names.items():
            what = _refusal(closed.schema, name)
            if what is None:
                continue
            where = next((m for m in declaring if m.local), declaring[0])
            path = where.site + ("properties", name) if where.local else where.site
            if (path, name) in reported:
                continue
            reported.add((path, name))
            where_declared = ("beside an anyOf or oneOf" if beside else
                              "in an allOf" if name in declared else "in an anyOf or oneOf branch beside an allOf")
            branch = f"'{closed.label}'" if closed.label else "the allOf's own schema"
            yield context.report(
                "PAY-ALLOF-CLOSED",
                f"property '{name}' is declared {where_declared} whose branch {branch} does not allow it as declared, and {what} "
                "(JSON Schema applies every branch to the whole object; the generated model would not): "
                f"list '{name}' under the properties of {branch}, or leave out what closes it",
                context.key_loc(part.file, path) if where.local else context.loc(part.file, path),
            )
    if depth >= _CONJUNCTION_DEPTH:
        return
    for name, declaring in declared.items():
        if len(declaring) < 2:
            continue  # one definition: no conjunction below it
        nested: list[_Member] = []
        seen: set[int] = set()
        for member in declaring:
            value = member.schema["properties"][name]
            nested += _members(value, member.site + ("properties", name) if member.local else member.site,
                               member.local, f"{member.label}.{name}" if member.label else name, shared, seen)
        yield from _closed_conjunction(context, part, nested, shared, depth + 1, reported, walked)


def _per_part_following_refs(context: Context, rule_id: str,
                             check: Callable[[Context, PayloadPart], Iterable[Diagnostic]]) -> Iterator[Diagnostic]:
    """``check`` of every payload part, whose findings are kept as
    ``part_findings`` keeps them; it reads the shared schemas the part
    references too (an allOf's or oneOf's branch may sit in another file)."""
    for part in payload_parts(context):
        yield from part_findings(context, rule_id, part, lambda part=part: check(context, part), follows_refs=True)


# Keywords beside a $ref that make it a conjunction of its own (2020-12 §8.2.3.1: $ref is an applicator).
_BESIDE_REF = ("properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames")


@set_rule("PAY-ALLOF-CLOSED", E, "An allOf's branches allow every property the allOf declares "
          "(no closed branch that leaves one out).", profiles=ALL, fixed=True)
def allof_closed(context: Context) -> Iterator[Diagnostic]:
    return _per_part_following_refs(context, "PAY-ALLOF-CLOSED", _allof_closed)


def _allof_closed(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    shared = context.built.catalog_set.schemas
    reported: set[tuple[Path, str]] = set()
    walked: set[frozenset[int]] = set()
    for path, node in schema_nodes(context, part):
        if not any(isinstance(node.get(keyword), list) for keyword in ("allOf", "anyOf", "oneOf")) and not (
                isinstance(node.get("$ref"), str) and any(keyword in node for keyword in _BESIDE_REF)):
            continue
        members = _members(node, path, True, "", shared, set())
        if len(members) > 1 or _ALTERNATIVES & node.keys():
            yield from _closed_conjunction(context, part, members, shared, 0, reported, walked)


# --- oneOf whose branches may take one value twice (issue 26) ------------------
#
# A value is valid against a oneOf when exactly one branch takes it (JSON
# Schema 2020-12 §10.2.1.3): a value two branches take is refused. The
# generated model is a union, which takes a value any member fits, so it
# cannot count (a split verdict, contract §4.1). The catalog's oneOf branches
# must therefore exclude each other, and lint shows it from what each branch
# says at its top (followed through $ref and allOf): its types (an integer is
# a number too), its const or enum values, or a property every branch
# requires whose const or enum values differ (a discriminator). What the
# reading cannot show (bounds, patterns, formats, other required names) is
# refused: anyOf says "one or more" and gets one verdict from every judge.

_KINDS = {"null": ("null",), "boolean": ("boolean",), "object": ("object",), "array": ("array",),
          "string": ("string",), "integer": ("integer",), "number": ("integer", "fraction")}
_EVERY_KIND = frozenset(kind for kinds in _KINDS.values() for kind in kinds)
_KIND_WORDS = {"null": "null", "boolean": "booleans", "object": "objects", "array": "arrays", "string": "strings",
               "integer": "integers", "fraction": "numbers"}


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "fraction"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "object")


def _value_key(value: Any) -> str:
    """One text for equal JSON values (1 and 1.0 are one value, true and 1 two)."""
    import json

    def plain(item: Any) -> Any:
        if isinstance(item, float) and item.is_integer():
            return int(item)
        if isinstance(item, list):
            return [plain(child) for child in item]
        if isinstance(item, dict):
            return {str(key): plain(child) for key, child in item.items()}
        return item

    return json.dumps(plain(value), sort_keys=True, default=str)


def _values_of(schema: dict) -> dict[str, Any] | None:
    """The values ``schema``'s const or enum allows (by ``_value_key``), or None: any."""
    if "const" in schema:
        return {_value_key(schema["const"]): schema["const"]}
    if isinstance(schema.get("enum"), list):
        return {_value_key(value): value for value in schema["enum"]}
    return None


class _Branch:
    """What a oneOf branch surely says: the kinds of value it may take, the
    values (None: any of those kinds), and the values of its discriminating
    properties (required, with const or enum)."""

    __slots__ = ("kinds", "tags", "values")

    def __init__(self, branch: Any, shared: dict) -> None:
        self.kinds, self.values, self.tags = set(_EVERY_KIND), None, {}
        if branch is False:
            self.kinds = set()
        required: set[str] = set()
        tags: dict[str, dict[str, Any]] = {}
        for member in _members(branch, (), False, "", shared, set()):
            schema = member.schema
            kinds = schema.get("type")
            kinds = [kinds] if isinstance(kinds, str) else kinds
            if isinstance(kinds, list):
                self.kinds &= {kind for name in kinds if isinstance(name, str) for kind in _KINDS.get(name, ())}
            values = _values_of(schema)
            if values is not None:
                self.values = values if self.values is None else \
                    {key: value for key, value in self.values.items() if key in values}
            if isinstance(schema.get("required"), list):
                required.update(name for name in schema["required"] if isinstance(name, str))
            properties = schema.get("properties")
            for name, prop in properties.items() if isinstance(properties, dict) else ():
                values = _values_of(prop) if isinstance(prop, dict) else None
                if values is not None:
                    tags[name] = values if name not in tags else \
                        {key: value for key, value in tags[name].items() if key in values}
        if self.values is not None:
            self.values = {key: value for key, value in self.values.items() if _kind_of(value) in self.kinds}
            self.kinds = {_kind_of(value) for value in self.values.values()}
        self.tags = {name: set(values) for name, values in tags.items() if name in required}

    def overlap(self, other: _Branch) -> str | None:
        """What both may take (words for a message), or None: they exclude each other."""
        kinds = self.kinds & other.kinds
        if not kinds:
            return None
        if self.values is not None and other.values is not None:
            both = [value for key, value in self.values.items() if key in other.values]
            return f"the value {_value_key(both[0])}" if both else None
        if self.values is not None or other.values is not None:
            values = self.values if self.values is not None else other.values
            return f"the value {_value_key(next(iter(values.values())))}"
        if kinds == {"object"} and any(not self.tags[name] & other.tags[name] for name in self.tags.keys() & other.tags.keys()):
            return None  # a required property whose const or enum values differ
        return " and ".join(_KIND_WORDS[kind] for kind in sorted(kinds, key=list(_KIND_WORDS).index))


@set_rule("PAY-ONEOF-EXCLUSIVE", E, "A oneOf's branches exclude each other (other types, const or enum values, "
          "or a required property with its own const).", profiles=ALL, fixed=True)
def oneof_exclusive(context: Context) -> Iterator[Diagnostic]:
    return _per_part_following_refs(context, "PAY-ONEOF-EXCLUSIVE", _oneof_exclusive)


def _oneof_exclusive(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    shared = context.built.catalog_set.schemas
    for path, node in schema_nodes(context, part):
        branches = node.get("oneOf")
        if not isinstance(branches, list) or len(branches) < 2:
            continue
        read = [_Branch(branch, shared) for branch in branches]
        found = next(((first, second, what) for second in range(len(read)) for first in range(second)
                      if (what := read[first].overlap(read[second])) is not None), None)
        if found is None:
            continue
        first, second, what = found
        yield context.report(
            "PAY-ONEOF-EXCLUSIVE",
            f"oneOf branches {first + 1} and {second + 1} may both take {what}: JSON Schema refuses a value "
            "two branches take (2020-12 §10.2.1.3), the generated model would accept it; write anyOf if a "
            "value may fit both, or make the branches exclude each other (other types, const or enum values, "
            "or a property both require with a const of its own)",
            context.loc(part.file, path + ("oneOf", second)),
        )


# --- what the generated model cannot check (issue 26) ---------------------------
#
# Each construct below is one the generated model (datamodel-code-generator's
# pydantic classes, evcat's types) does not check, while `evcat validate`,
# the example check and event.schema.json's validators do: a split verdict
# (contract §4.1), shown by tests/test_one_verdict_lint.py for each. The
# catalog refuses them until the model checks them too.

# Keywords the model ignores (JSON Schema 2020-12 §10.2.2, §10.3.1, §6.4, §6.5).
_UNCHECKED = {
    "not": "a value a 'not' schema refuses", "if": "an 'if'/'then'/'else' condition",
    "then": "an 'if'/'then'/'else' condition", "else": "an 'if'/'then'/'else' condition",
    "dependentRequired": "names another name requires", "dependencies": "names another name requires",
    "dependentSchemas": "a schema another name brings in", "prefixItems": "the schemas of the first items",
    "contains": "what some item must be", "minContains": "how many items must match 'contains'",
    "maxContains": "how many items may match 'contains'",
}
_STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format")
_NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def _types(schema: dict) -> set[str] | None:
    kinds = schema.get("type")
    if isinstance(kinds, str):
        return {kinds}
    if isinstance(kinds, list):
        return {kind for kind in kinds if isinstance(kind, str)}
    values = _values_of(schema)
    return {_kind_of(value).replace("fraction", "number") for value in values.values()} if values is not None else None


def _unchecked(node: dict, shared: dict, names: bool) -> Iterator[tuple[str, str]]:
    """(keyword, why) for each construct of ``node`` the model does not check
    (``names``: ``node`` is a ``propertyNames`` schema, whose values are strings)."""
    for keyword, what in _UNCHECKED.items():
        if keyword in node:
            yield keyword, f"the generated model does not check {what}"
    if node.get("uniqueItems") is True:
        yield "uniqueItems", "the generated model does not check that items differ"
    for keyword in ("const", "enum"):
        values = [node[keyword]] if keyword == "const" and keyword in node else node.get(keyword)
        for value in values if isinstance(values, list) else ():
            if isinstance(value, (dict, list)) or isinstance(value, float) and not value.is_integer():
                yield keyword, f"the generated model does not compare {'an object or array' if isinstance(value, (dict, list)) else 'a fraction'} as a {keyword} value"
                break
    if isinstance(node.get("required"), list) and node["required"] and not any(
            keyword in node for keyword in ("properties", "allOf", "anyOf", "oneOf", "$ref", "patternProperties")):
        yield "required", "the generated model sees no property that the names under required could be"
    if "$ref" not in node and not names and not any(keyword in node for keyword in ("allOf", "anyOf", "oneOf")):
        kinds = _types(node)
        for keywords, kind in ((_STRING_KEYWORDS, "string"), (_NUMBER_KEYWORDS, "number")):
            present = [keyword for keyword in keywords if keyword in node]
            if present and kinds is None:
                yield present[0], f"the generated model checks '{present[0]}' only beside a type ({kind}): add 'type: {kind}'"
    branches = node.get("allOf")
    beside = bool(_ALTERNATIVES & node.keys()) and isinstance(node.get("properties"), dict)
    if not isinstance(branches, list) and not beside:
        return
    members = _members(node, (), False, "", shared, set())
    if isinstance(branches, list):
        scalar = [member for member in members[1:] if not _object_like(member.schema)]
        asserting = [member for member in members if set(member.schema) - _ANNOTATIONS - {"allOf", "$ref"}]
        if scalar and len(asserting) > 1:
            yield "allOf", "the generated model takes one of the allOf's non-object schemas, not all of them"
        twice = _redefined_inside(members)
        if twice is not None:
            yield "allOf", (f"the generated model keeps one definition of '{twice}' (a property of an object property "
                            "that more than one branch defines), not every one")
        clash = _redefined_here(members, shared)
        if clash is not None:
            name, why = clash
            yield "allOf", (f"the generated model keeps one definition of '{name}', not every one: {why}; define it "
                            "in one place, or alike where the definitions meet")
    again = _redefined_in_alternative(members, _alternatives(members, shared))
    if again is not None:
        keyword = "allOf" if isinstance(branches, list) else min(_ALTERNATIVES & node.keys())
        yield keyword, (f"the generated model checks an anyOf or oneOf branch's definition of '{again}' alone "
                        "(that branch's class comes first; declare it in one place, or alike in both and required "
                        "in the branch where it is required beside it), not also the one beside it")


# What datamodel-code-generator keeps of only one definition of a property of a
# redefined object property (its bounds it merges: README, one verdict).
_ONE_DEFINITION = ("type", "enum", "const", "format", "pattern", "$ref", "items", "properties", "allOf", "anyOf", "oneOf")


def _redefined_inside(members: list[_Member]) -> str | None:
    """``object.property`` where definitions of an object property that the
    allOf's members define more than once disagree on what the model keeps
    once, or give one keyword two values."""
    declared: dict[str, list[Any]] = {}
    for member in members:
        properties = member.schema.get("properties")
        for name, child in properties.items() if isinstance(properties, dict) else ():
            declared.setdefault(name, []).append(child)
    for name, children in declared.items():
        inner: dict[str, list[Any]] = {}
        for child in children:
            if isinstance(child, dict) and isinstance(child.get("properties"), dict):
                for child_name, schema in child["properties"].items():
                    inner.setdefault(child_name, []).append(schema)
        for child_name, schemas in inner.items():
            facts = [{key: schema.get(key) for key in _ONE_DEFINITION} if isinstance(schema, dict) else schema
                     for schema in schemas]
            if any(fact != facts[0] for fact in facts[1:]) or _two_values(schemas) is not None:
                return f"{name}.{child_name}"
    return None


# What the Python renderer reconciles itself where an allOf defines a
# property more than once (render/python.py: a null some definition refuses
# is taken out, an enum or const keeps the values every definition accepts, an
# object property's definitions are merged); annotations say nothing of a value.
_RECONCILED = frozenset({"type", "enum", "const", "properties", "required", "additionalProperties"})
# String keywords that datamodel-code-generator applies to a format's
# runtime type (a date-time is no str: pydantic's min_length raised TypeError).
_TEXT_KEYWORDS = ("minLength", "maxLength", "pattern")


def _redefined_here(members: list[_Member], shared: dict) -> tuple[str, str] | None:
    """(name, why) for a property that the allOf's members define more than
    once in a way the generated model cannot hold the value to every
    definition (JSON Schema 2020-12 §10.2.1.1). datamodel-code-generator
    makes the last definition the subclass's field and merges into it the
    keywords only the others have, so definitions that differ in type, give
    one keyword two values (two minimums: the last wins), put a format's
    type beside another's string keyword, or leave no value of an enum or
    const that every definition accepts, split the verdict (found by the
    schema property test: Base's ``amount: {enum: [open]}`` redefined as a
    number took 0). None when there is none."""
    for name, holders in _declared(members).items():
        if len(holders) < 2:
            continue
        schemas = [member.schema["properties"][name] for member in holders]
        definitions = [schema for schema in schemas if isinstance(schema, dict)]
        kinds = {frozenset(found - {"null"}) for found in map(_types, definitions) if found is not None}
        if len(kinds) > 1:
            return str(name), "its definitions give it different types"
        keyword = _two_values(definitions)
        if keyword is not None:
            return str(name), f"its definitions give '{keyword}' different values"
        formats = {schema.get("format") for schema in definitions}
        if len(formats) > 1 and any(keyword in schema for schema in definitions for keyword in _TEXT_KEYWORDS):
            return str(name), "one definition has a format, another a string keyword the format's type cannot take"
        listed = listed_values(definitions)
        if listed is not None and not accepted_by_every(listed, definitions, {k: v.schema for k, v in shared.items()}):
            return str(name), "no value of its enum or const fits every definition, so it may never be sent"
    return None


def _two_values(schemas: list[Any]) -> str | None:
    """A keyword (not one the renderer reconciles) that two of ``schemas``
    give different values, annotations aside; None when there is none."""
    seen: dict[str, Any] = {}
    for schema in schemas:
        for keyword, value in (schema.items() if isinstance(schema, dict) else ()):
            if keyword in _RECONCILED or keyword in _ANNOTATIONS:
                continue
            if keyword in seen and _asserting(seen[keyword]) != _asserting(value):
                return str(keyword)
            seen.setdefault(keyword, value)
    return None


def _redefined_in_alternative(members: list[_Member], alternatives: list[_Member]) -> str | None:
    """A property that an anyOf or oneOf branch in a conjunction declares
    again, whose definitions differ (annotations aside) or which the branch
    leaves optional where the conjunction requires it: the generated class
    of the chosen branch merges the branch's class first, whose field wins
    (found by the schema property test: Base's required 'amount' was
    optional in the model). None when there is none."""
    declared = _declared(members)
    required = {name for member in members for name in _required_names(member.schema)}
    for alternative in alternatives:
        properties = alternative.schema.get("properties")
        for name, schema in properties.items() if isinstance(properties, dict) else ():
            if name not in declared or any(alternative.schema is member.schema for member in members):
                continue
            mine = _asserting(schema)
            if any(_asserting(member.schema["properties"][name]) != mine for member in declared[name]):
                return str(name)
            if name in required and name not in _required_names(alternative.schema):
                return str(name)
    return None


def _required_names(schema: dict) -> list[Any]:
    names = schema.get("required")
    return names if isinstance(names, list) else []


def _asserting(schema: Any) -> Any:
    """``schema`` without its annotations (at any depth): what it asserts."""
    if isinstance(schema, list):
        return [_asserting(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        if keyword in ("properties", "patternProperties") and isinstance(value, dict):
            kept[keyword] = {name: _asserting(child) for name, child in value.items()}  # names, not keywords
        else:
            kept[keyword] = _asserting(value)
    return kept


# What does not assert anything about a value (JSON Schema 2020-12 §9, core §8).
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
                          "$comment", "$id", "$schema", "$anchor", "$defs", "contentEncoding", "contentMediaType"})


def _object_like(schema: dict) -> bool:
    kinds = _types(schema)
    return "properties" in schema or kinds is not None and kinds <= {"object"} or \
        kinds is None and not set(schema) - _ANNOTATIONS - {"allOf", "$ref", "required", "additionalProperties"}


@set_rule("PAY-KEYWORD-VERDICT", E, "A payload schema uses only what the generated model checks too "
          "(no not, if, dependentRequired, contains, prefixItems, uniqueItems, ...).", profiles=ALL, fixed=True)
def keyword_verdict(context: Context) -> Iterator[Diagnostic]:
    return _per_part_following_refs(context, "PAY-KEYWORD-VERDICT", _keyword_verdict)


def _keyword_verdict(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    shared = context.built.catalog_set.schemas
    for path, node in schema_nodes(context, part):
        for keyword, why in _unchecked(node, shared, path[-1:] == ("propertyNames",)):
            yield context.report(
                "PAY-KEYWORD-VERDICT",
                f"'{keyword}': {why}, while `evcat validate` and the JSON Schemas do (one verdict, contract §4.1); "
                "leave it out, or say it in the description",
                context.key_loc(part.file, path + (keyword,)),
            )
