"""Catalog structure rules, all profiles (rules.md "Catalog structure")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import jsonschema_rs

from ..diagnostics import Diagnostic, Severity
from ..string_formats import is_semver, semver_key
from ..event_checker import EventChecker, Problem, pointer_text
from ..loader import Document, Path
from ..model import Catalog, EventType
from ..naming import closest, did_you_mean
from ..overrides import EVCAT_PREFIX, SCHEMA_KEY, rule_maps, setting_of
from ..schemawalk import KEYWORDS, subschemas, type_problem
from . import ALL, RULES, Context, PayloadPart, declare, event_rule, file_rule, part_findings, payload_parts, schema_nodes, set_rule, shared_schemas_of

E, W = Severity.ERROR, Severity.WARNING

# Found while loading and shaping the file (loader.py, catalog_format.py, model/build.py).
declare("CAT-YAML", E, ALL, "The file is valid YAML; alias expansion is bounded.", fixed=True)
declare("CAT-DUPLICATE-KEY", E, ALL, "A mapping repeats a key.", fixed=True)
declare("CAT-UNKNOWN-KEY", E, ALL, "A key the format does not know.", fixed=True)
declare("CAT-REQUIRED", E, ALL, "A required key is missing.", fixed=True)
declare("CAT-TYPE", E, ALL, "A value has the wrong YAML type.", fixed=True)
declare("CAT-REF", E, ALL, "A $ref does not resolve.", fixed=True)

FLOW_COMMA_HINT = (
    "; a comma in an unquoted value inside { } starts a new key: quote the value before it"
)
_CATALOG_ID = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_META = jsonschema_rs.Draft202012Validator(
    {"$ref": "https://json-schema.org/draft/2020-12/schema"}, validate_formats=True
)


@file_rule("CAT-ID", E, ALL, "The catalog id is lowercase kebab-case.", fixed=True)
def catalog_id(document: Document, context: Context) -> Iterator[Diagnostic]:
    value = document.value.get("catalog")
    if isinstance(value, str) and not _CATALOG_ID.match(value):
        suggestion = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
        yield context.report(
            "CAT-ID",
            f"catalog id '{value}' must be lowercase kebab-case ([a-z][a-z0-9-]*), e.g. '{suggestion}'",
            document.loc(("catalog",)),
            suggestion,
        )


@file_rule("CAT-SEMVER", E, ALL, "version and dataversion are MAJOR.MINOR.PATCH.", fixed=True)
def catalog_version(document: Document, context: Context) -> Iterator[Diagnostic]:
    value = document.value.get("version")
    if isinstance(value, str) and not is_semver(value):
        yield context.report("CAT-SEMVER", _semver_message("version", value), document.loc(("version",)), _semver_fix(value))


@event_rule("CAT-SEMVER", E, ALL, "version and dataversion are MAJOR.MINOR.PATCH.")
def event_dataversion(event: EventType, context: Context) -> Iterator[Diagnostic]:
    # Under normo an event with data is checked by NORMO-DATAVERSION (ID07).
    if event.dataversion is not None and not is_semver(event.dataversion):
        if not (event.has_data and any(name == "dataversion" for name, _, _ in event.profile.required_with_data)):  # its own rule
            yield context.report(
                "CAT-SEMVER", _semver_message("dataversion", event.dataversion),
                context.event_loc(event, "dataversion"), _semver_fix(event.dataversion),
            )


@event_rule("CAT-REQUIRED", E, ALL, "A required key is missing.")
def dataversion_required(event: EventType, context: Context) -> Iterator[Diagnostic]:
    # Contract §1: dataversion is REQUIRED when the event has data; a profile
    # that requires it on the wire reports it under its own rule (NORMO-DATAVERSION).
    own_rule = any(name == "dataversion" for name, _, _ in event.profile.required_with_data)
    if event.has_data and event.dataversion is None and not own_rule and not context.has(event.file, event.path + ("dataversion",)):
        yield context.report(
            "CAT-REQUIRED",
            f"event '{event.type}' has data, so it needs a dataversion (MAJOR.MINOR.PATCH, e.g. 1.0.0)",
            context.event_loc(event, "type"),
            "1.0.0",
        )


def _semver_message(key: str, value: str) -> str:
    fix = _semver_fix(value)
    hint = f", e.g. '{fix}'" if fix else ""
    return f"{key} '{value}' is not MAJOR.MINOR.PATCH{hint}"


def _semver_fix(value: str) -> str | None:
    numbers = re.findall(r"[0-9]+", value)
    if not numbers or len(numbers) > 3:
        return None
    return ".".join(str(int(n)) for n in (numbers + ["0", "0"])[:3])


@file_rule("CAT-UNKNOWN-KEY", E, ALL, "A key the format does not know.", fixed=True)
def unknown_keys(document: Document, context: Context) -> Iterator[Diagnostic]:
    """Rule ids and settings of the file's and the events' ``rules:`` must be
    known (catalog-format.md §9; ``x-evcat-rules`` of schema nodes: ``unknown_keywords``)."""
    for path, overrides in rule_maps(document.value):
        yield from _override_problems(document, context, path, overrides, check_values=False)


def _override_problems(
    document: Document, context: Context, path: Path, overrides: Any, *, check_values: bool
) -> Iterator[Diagnostic]:
    """The problems of one override map at ``path``: an unknown rule id, a
    bad setting (``check_values``: where the structural check does not look,
    in payload schemas), a fixed rule set below error."""
    if not isinstance(overrides, dict):
        if check_values:
            yield context.report(
                "CAT-TYPE", f"{path[-1]} is a mapping of rule id to error, warning or off, e.g. {{PAY-CAMELCASE: off}}",
                document.loc(path),
            )
        return
    for rule_id, severity in overrides.items():
        if rule_id not in RULES:
            yield context.report(
                "CAT-UNKNOWN-KEY", f"unknown rule id '{rule_id}'{did_you_mean(str(rule_id), RULES)}",
                document.key_loc(path + (rule_id,)), closest(str(rule_id), RULES),
            )
        elif severity is True or (check_values and setting_of(severity) is None):
            yield context.report(
                "CAT-TYPE", f"set {rule_id} to error, warning or off", document.loc(path + (rule_id,)),
            )
        elif RULES[rule_id].fixed and severity != "error":
            yield context.report(
                "CAT-TYPE", f"{rule_id} guards what generation relies on and cannot be set to '{'off' if severity is False else severity}'",
                document.loc(path + (rule_id,)),
            )


@set_rule("CAT-UNKNOWN-KEY", E, "A key the format does not know.", fixed=True)
def unknown_keywords(context: Context) -> Iterator[Diagnostic]:
    """Keywords in payload schemas are JSON Schema 2020-12 keywords (or x- annotations)."""
    for part in payload_parts(context):
        yield from part_findings(context, "CAT-UNKNOWN-KEY", part, lambda part=part: _unknown_keywords(context, part))


def _unknown_keywords(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    yield from _evcat_keywords(context, part)
    for path, subschema in schema_nodes(context, part):
        for keyword in subschema:
            if keyword not in KEYWORDS and not keyword.startswith("x-"):
                yield context.report(
                    "CAT-UNKNOWN-KEY",
                    f"'{keyword}' is not a JSON Schema 2020-12 keyword{did_you_mean(keyword, KEYWORDS)}"
                    + (FLOW_COMMA_HINT if " " in keyword else " (prefix your own annotations with 'x-')"),
                    context.key_loc(part.file, path + (keyword,)),
                    closest(keyword, KEYWORDS),
                )


def _evcat_keywords(context: Context, part: PayloadPart) -> Iterator[Diagnostic]:
    """evcat's own keywords in a payload schema as written (the model holds
    them no more: model/build.py drops them): ``x-evcat-rules`` maps
    of known rule ids and settings (catalog-format.md §9), no other ``x-evcat-`` key."""
    if (part.file, part.path) not in context.built.annotated:
        return  # the model's schema is the one written: it had no x-evcat- key to take out
    document = context.documents[part.file]
    written: Any = document.value
    for step in part.path:
        if isinstance(written, dict):
            written = written.get(step)
        else:
            written = written[step] if isinstance(written, list) and isinstance(step, int) else None
    if not isinstance(written, dict):
        return
    for path, node in subschemas(written, part.path):
        for keyword in node:
            if not (isinstance(keyword, str) and keyword.startswith(EVCAT_PREFIX)):
                continue
            if keyword == SCHEMA_KEY:
                yield from _override_problems(document, context, path + (keyword,), node[keyword], check_values=True)
            else:
                yield context.report(
                    "CAT-UNKNOWN-KEY",
                    f"'{keyword}': keys starting with '{EVCAT_PREFIX}' are evcat's own, and evcat knows only "
                    f"'{SCHEMA_KEY}' (start your own annotations with another 'x-' prefix)",
                    context.key_loc(part.file, path + (keyword,)),
                    SCHEMA_KEY if closest(keyword, (SCHEMA_KEY,)) else None,
                )


def meta_errors(context: Context, part: PayloadPart) -> list[tuple[Path, str, str | None]]:
    """Where ``part`` breaks the JSON Schema 2020-12 meta-schema, why, and a fix (cached)."""
    cache = context.cache.setdefault("meta", {})
    key = (part.file, part.path)
    if key not in cache:
        cache[key] = [_explained(part, tuple(error.instance_path), _short(error.message))
                      for error in _META.iter_errors(part.schema)]
    errors: list[tuple[Path, str, str | None]] = cache[key]
    return errors


def _explained(part: PayloadPart, where: Path, message: str) -> tuple[Path, str, str | None]:
    """(path, message, suggestion) of a meta-schema error; a bad ``type``
    names the valid types and the one probably meant."""
    keyword: Path | None = None
    if where and where[-1] == "type":
        keyword = where
    elif len(where) >= 2 and where[-2] == "type" and isinstance(where[-1], int):
        keyword = where[:-1]  # an item of a list of types
    if keyword is not None:
        node: Any = part.schema
        for step in keyword:
            node = node.get(step) if isinstance(node, dict) else None
        problem = type_problem(node)
        if problem is not None:
            if isinstance(node, list):  # at the item, so a fix replaces just that name
                bad = next(i for i, name in enumerate(node) if type_problem(name) == problem)
                keyword += (bad,)
            return part.path + keyword, problem[0], problem[1]
    return part.path + where, f"not a valid JSON Schema 2020-12: {message}", None


@set_rule("CAT-SCHEMA", E, "data and schemas entries are valid JSON Schema 2020-12.", fixed=True, after_costly=True)
def payload_schema_valid(context: Context) -> Iterator[Diagnostic]:
    # Runs after the event rules: a part that compiled inside an event's
    # bundled schema has passed the meta-schema there already.
    valid = context.cache.get("meta-valid", set())
    for part in payload_parts(context):
        if (part.file, part.path) in valid:
            continue
        for path, message, suggestion in meta_errors(context, part):
            yield context.report("CAT-SCHEMA", message, context.loc(part.file, path), suggestion)


def _short(message: str) -> str:
    return message.splitlines()[0] if message else message


@event_rule("CAT-SCHEMA", E, ALL, "data and schemas entries are valid JSON Schema 2020-12.", costly=True)
def payload_schema_compiles(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if event.payload is None or _unresolved(event, context):
        return
    diagnostics, broken = context.memoized("CAT-SCHEMA", event, lambda: _compile(event, context))
    yield from diagnostics
    if broken:
        context.cache.setdefault("payload-broken", {})[event.key] = True
    else:
        valid = context.cache.setdefault("meta-valid", set())
        valid.update((part.file, part.path) for part in _event_parts(event, context))


def _compile(event: EventType, context: Context) -> tuple[list[Diagnostic], bool]:
    """(diagnostics, whether the payload failed to compile)."""
    try:
        _checker(context).validator(event)
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as error:
        parts = _event_parts(event, context)
        if any(meta_errors(context, part) for part in parts):
            return [], True  # the set rule reports the meta-schema errors, where they are
        # The meta-schema passed, compiling did not (e.g. a pattern the regex engine rejects).
        message = f"the payload schema does not compile: {_short(str(error))}"
        return [context.report("CAT-SCHEMA", message, context.event_loc(event, "data"))], True
    return [], False


def prepare_costly(event: EventType, context: Context) -> None:
    """Work the costly checks of ``event`` read and other rules share (its
    context attributes, whether its payload's references resolve), done
    before workers are forked for them: otherwise each would do it again."""
    event.attributes
    if event.payload is not None:
        _unresolved(event, context)


def _event_parts(event: EventType, context: Context) -> list[PayloadPart]:
    """The event's payload and the shared schemas it uses (once per check)."""
    assert event.payload is not None
    known = context.cache.setdefault("event-parts", {})
    parts: list[PayloadPart] | None = known.get((event.file, event.path))
    if parts is None:
        shared = context.built.catalog_set.schemas
        parts = [PayloadPart(event.file, event.path + ("data",), event.payload.schema)]
        parts += [PayloadPart(shared[name].file, shared[name].path, shared[name].schema) for name in event.payload.uses]
        known[(event.file, event.path)] = parts
    return parts


def _unresolved(event: EventType, context: Context) -> bool:
    """True when a $ref of the payload did not resolve (CAT-REF reports it) or it did not compile."""
    cache = context.cache.setdefault("payload-broken", {})
    if event.key not in cache:
        if any(not _refs_resolved(context, part) for part in _event_parts(event, context)):
            cache[event.key] = True
    return bool(cache.get(event.key))


def _refs_resolved(context: Context, part: PayloadPart) -> bool:
    """Once per part: a shared schema is part of every event that uses it."""
    known = context.cache.setdefault("refs-resolved", {})
    key = (part.file, part.path)
    found = known.get(key)
    # By the schema object (a long-running caller keeps this cache between
    # runs, as ``schema_nodes``'s).
    if found is None or found[0] is not part.schema:
        found = known[key] = (part.schema, all(
            not isinstance(sub.get("$ref"), str) or sub["$ref"].startswith("#/$defs/")
            for _, sub in schema_nodes(context, part)
        ))
    resolved: bool = found[1]
    return resolved


_VALIDATORS_KEPT = 4


def _checker(context: Context) -> EventChecker:
    if "checker" not in context.cache:
        # The costly checks of an event run one after the other (compile, then
        # examples): only its validator is needed, not every one compiled so far.
        context.cache["checker"] = EventChecker(context.built.catalog_set, keep=_VALIDATORS_KEPT)
    checker: EventChecker = context.cache["checker"]
    return checker


@event_rule("CAT-EXAMPLE", E, ALL, "An example validates against its event (envelope + payload).", costly=True)
def examples_valid(event: EventType, context: Context) -> Iterator[Diagnostic]:
    if not event.examples or (event.payload is not None and _unresolved(event, context)):
        return
    diagnostics, _ = context.memoized("CAT-EXAMPLE", event, lambda: (list(_check_examples(event, context)), None))
    yield from diagnostics


def _check_examples(event: EventType, context: Context) -> Iterator[Diagnostic]:
    checker = _checker(context)
    for example in event.examples:
        full = event.complete_example(example.values)
        for problem in _example_problems(checker, full, event):
            path = event.path + ("examples", example.index) + problem.pointer
            rule_note = f" [{problem.rule}]"
            yield context.report(
                "CAT-EXAMPLE",
                f"example {example.index + 1} of '{event.type}': {_strip_pointer(problem)}{rule_note}",
                context.loc(event.file, path),
            )


def _example_problems(checker: EventChecker, full: dict[str, Any], event: EventType) -> Iterator[Problem]:
    if full.get("type") != event.type or full.get("dataversion") != event.dataversion:
        yield Problem("CE-UNKNOWN-EVENT", ("type",), f"the example is of another event ({full.get('type')} {full.get('dataversion')})")
        return
    for problem in checker.check(full, event):
        if RULES[problem.rule].severity is Severity.WARNING and any(limit.rule == problem.rule for limit in event.profile.sizes):
            continue  # size advice (the profile's warning size limits) is for real events; a big example is not an error
        yield problem


def _strip_pointer(problem: Problem) -> str:
    prefix = pointer_text(problem.pointer) + ": "
    return problem.message[len(prefix):] if problem.message.startswith(prefix) else problem.message


@set_rule("CAT-DUPLICATE-EVENT", E, "(type, dataversion) is unique in the catalog directory.", fixed=True)
def duplicate_events(context: Context) -> Iterator[Diagnostic]:
    first: dict[tuple[str, str | None], EventType] = {}
    # (file, path): the order of the files, then of the events in each.
    for event in sorted(context.built.catalog_set.events, key=lambda e: (e.file, e.path)):
        if not event.type:
            continue
        if event.key in first:
            other = first[event.key]
            where = context.event_loc(other)
            version = f" dataversion {event.dataversion}" if event.dataversion else ""
            yield context.report(
                "CAT-DUPLICATE-EVENT",
                f"'{event.type}'{version} is already defined at {where}; give it a new dataversion or remove one",
                context.event_loc(event, "type"),
                related=(where,) if where else (),
            )
        else:
            first[event.key] = event


# shared schemas count as payload schemas for the rules in payload.py
__all__ = ["shared_schemas_of", "semver_key"]


@set_rule("CAT-VERSION-BUMP", W, "Consecutive dataversions of a type bump as much as their change needs (evcat).")
def version_bump(context: Context) -> Iterator[Diagnostic]:
    """Within one catalog: 1.2.0 -> 1.3.0 that is really breaking, and the like (diff.py)."""
    from ..commands.diff import consecutive, version_verdict

    for old, new, changes in consecutive(context.built.catalog_set):
        for violation in version_verdict(new.profile, old, new, changes):
            breaking = [change for change in changes if change.breaking][:3]
            detail = "; ".join(f"{change.path}: {change.kind}" for change in breaking)
            yield context.report(
                "CAT-VERSION-BUMP",
                f"'{new.type}' {violation}" + (f" (breaking: {detail})" if detail else ""),
                context.event_loc(new, "dataversion"),
            )


@set_rule("CAT-PACKAGE-NAME", E, "Each catalog's Python package name is its own and replaces nothing installed.", fixed=True)
def package_names(context: Context) -> Iterator[Diagnostic]:
    """The generated package's name (``package``, or the catalog id with _:
    ``Catalog.package_name``) is taken (catalog-format.md §9): by another
    catalog (``import`` and ``catalog-import`` both become ``catalog_import``),
    or by something installed it would replace (package_names.why_taken: the
    standard library, the generated packages' and evcat's dependencies, the
    most-downloaded PyPI distributions). The suggestion is a free name: a new
    ``package`` where one is written, else a catalog id whose package is free."""
    from ..package_names import free_name, normalise, why_taken

    catalogs = sorted(context.built.catalog_set.catalogs, key=lambda c: (c.files[:1], c.id))
    used = frozenset(normalise(catalog.package_name) for catalog in catalogs)
    first: dict[str, Catalog] = {}
    for catalog in catalogs:
        if not catalog.files:
            continue
        package = catalog.package_name
        written = next((file for file in catalog.files if "package" in _mapping(context.documents[file].value)), None)
        taken = why_taken(package)
        key = normalise(package)
        if taken is None and not (key in first and first[key].id != catalog.id):
            first.setdefault(key, catalog)
            continue
        # located only for a finding: a location parses the file's positions (lint reads without them)
        where = context.loc(written, ("package",)) if written else context.loc(catalog.files[0], ("catalog",))
        if taken is not None:
            free = free_name(package, used)
            if written:
                advice, suggestion = f"use package: {free}", free
            else:
                advice, suggestion = f"add package: {free} (or rename the catalog)", free.replace("_", "-")
            yield context.report(
                "CAT-PACKAGE-NAME",
                f"catalog '{catalog.id}' would generate the Python package '{package}', which is taken by {taken}: "
                f"installing it would replace that; {advice}",
                where,
                suggestion,
            )
            continue
        other = first[key]
        elsewhere = context.loc(other.files[0], ("catalog",))
        yield context.report(
            "CAT-PACKAGE-NAME",
            f"catalog '{catalog.id}' becomes the Python package '{package}', as catalog '{other.id}' at {elsewhere} does; rename one of them",
            where,
            related=(elsewhere,),
        )


def _mapping(value: object) -> dict:
    return value if isinstance(value, dict) else {}
