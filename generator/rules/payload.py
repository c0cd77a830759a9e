"""Payload naming rules, all profiles (rules.md "Payload naming").

Het Normo ID10 and the NL GOV API design rules: payload attributes are
lowerCamelCase, as in the corresponding REST API.
"""

from __future__ import annotations

from collections.abc import Iterator
from ..diagnostics import Diagnostic, Severity
from ..loader import Document, Path
from ..model import EventType
from ..naming import CAMEL_CASE, PASCAL_CASE, to_camel, to_pascal
from . import ALL, Context, event_rule, file_rule, payload_parts, schema_nodes, set_rule, shared_schemas_of

E, W = Severity.ERROR, Severity.WARNING


@set_rule("PAY-CAMELCASE", E, "Payload property names are lowerCamelCase.", profiles=ALL)
def camel_case(context: Context) -> Iterator[Diagnostic]:
    for part in payload_parts(context):
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
    for part in payload_parts(context):
        for path, subschema in schema_nodes(context, part):
            properties = subschema.get("properties")
            if not isinstance(properties, dict):
                continue
            for name, prop in properties.items():
                if not isinstance(prop, dict) or prop.get("description"):
                    continue
                ref = prop.get("$ref")
                if isinstance(ref, str) and ref.startswith("#/$defs/"):
                    target = shared.get(ref[len("#/$defs/"):])
                    if target is not None and target.description:
                        continue
                yield context.report(
                    "PAY-DESCRIPTION",
                    f"property '{name}' has no description; say what it holds (unit, format, source)",
                    context.key_loc(part.file, path + ("properties", name)),
                )


def _patterns(context: Context) -> Iterator[tuple[str, str, Path]]:
    """(file, pattern, path of the pattern's key) of every payload ``pattern`` and ``patternProperties`` key."""
    for part in payload_parts(context):
        for path, subschema in schema_nodes(context, part):
            if isinstance(subschema.get("pattern"), str):
                yield part.file, subschema["pattern"], path + ("pattern",)
            if isinstance(subschema.get("patternProperties"), dict):
                for key in subschema["patternProperties"]:
                    if isinstance(key, str):
                        yield part.file, key, path + ("patternProperties", key)


@set_rule("PAY-PATTERN-PORTABLE", W, "Payload patterns keep to I-Regexp (RFC 9485), which every judge reads alike.", profiles=ALL)
def portable_patterns(context: Context) -> Iterator[Diagnostic]:
    from ..patterns import portability

    for file, pattern, path in _patterns(context):
        for reason in portability(pattern)[:3]:
            yield context.report("PAY-PATTERN-PORTABLE", f"pattern {pattern[:80]!r}: {reason}", context.loc(file, path))


@set_rule("PAY-PATTERN-BACKTRACK", E, "Payload patterns cannot backtrack catastrophically (nested or overlapping quantifiers).",
          profiles=ALL, fixed=True)
def backtracking_patterns(context: Context) -> Iterator[Diagnostic]:
    from ..patterns import backtracking

    for file, pattern, path in _patterns(context):
        for reason in backtracking(pattern)[:2]:
            yield context.report("PAY-PATTERN-BACKTRACK", f"pattern {pattern[:80]!r}: {reason}", context.loc(file, path))
