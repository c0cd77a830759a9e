"""Typed Python packages: one per catalog (contract §4), needing only pydantic v2.

- ``models.py``: payload models from datamodel-code-generator (pydantic v2),
  from one JSON Schema per catalog in which every object schema carries a
  title made from its event and its path, so class names do not depend on
  other events or their order.
- ``events.py``: one envelope class per (type, dataversion), from the jinja2
  template ``templates/python/events.py.jinja``.
- the runtime (``generator/runtime/*.py``): the JSON format, the HTTP binding
  and the other modules of evcat's runtime, copied verbatim (real modules,
  tested in place, already black-formatted at the generated packages' width).
- ``pyproject.toml``: the package's name, version and extras, so
  ``pip install out/python/<package>[extra]`` works.
- ``__init__.py``: ``EVENTS``, ``parse_event``, ``to_http``, ``from_http`` ...
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import warnings
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial
from keyword import iskeyword
from types import SimpleNamespace
from typing import Any

from .. import __version__
from .. import vocabulary
from ..diagnostics import Severity
from ..model import Catalog, CatalogSet, ContextAttribute, EventType
from ..patterns import python_patterns
from ..profiles import Profile
from ..naming import (
    envelope_class_names,
    payload_class_name,
    python_field_name,
    schema_class_name,
)
from ..envelope import ATTRIBUTE_NAMES, UNDECLARED_VALUE, accepted_by_every, envelope_schema, listed_values, titled
from ..runtime import EXTRAS, REQUIRES, runtime_files
from . import Unit, catalog_inputs, event_order, partial_set, render_all


@dataclass
class FieldView:
    name: str
    annotation: str
    default: str | None = None
    doc: str | None = None


def _max_size(event: EventType) -> tuple[int, str] | None:
    """The size limit every judge refuses an event over: the profile's largest,
    when its rule is an error (Het Normo ID09, NORMO-SIZE-MAX; evcat validate
    reports the first limit exceeded, largest first, so a warning below it
    never refuses)."""
    from ..rules import RULES

    if not event.profile.sizes:
        return None
    limit = event.profile.sizes[0]
    if RULES[limit.rule].severity is not Severity.ERROR:
        return None
    return limit.bytes, f"{limit.message.format(limit=limit.bytes)} ({limit.rule})"


@dataclass
class EventView:
    event: EventType
    class_name: str
    data_class: str | None
    fields: list[FieldView] = field(default_factory=list)
    attribute_types: dict[str, str] = field(default_factory=dict)
    wire_required: list[str] = field(default_factory=list)
    # (Python name, Python expression) a constructing program gets.
    construct_defaults: list[tuple[str, str]] = field(default_factory=list)
    # What event.schema.json says of the envelope object (envelope_schema):
    # its properties but ``data``, ``propertyNames``, ``additionalProperties``.
    wire_schema: dict[str, Any] = field(default_factory=dict)
    # The catalog's source the class holds ``source`` to (a URI template, or a
    # fixed value when CE-SOURCE-MATCH is an error) and the rule's setting;
    # None: nothing to check (CloudEvent.catalog_source).
    catalog_source: str | None = None
    # CloudEvent.max_size: the profile's largest size limit when its rule is an error.
    max_size: tuple[int, str] | None = None
    source_match: str = "warning"

    @property
    def wire_schema_code(self) -> str:
        """``wire_schema`` as code, the vocabulary's long patterns and the
        envelope's shared parts by their module constants (``WIRE_CONSTANTS``):
        the class reads the same whatever other events the catalog has."""
        return _code(self.wire_schema)

    @property
    def construct_defaults_code(self) -> str:
        return "{" + ", ".join(f"{name!r}: {code}" for name, code in self.construct_defaults) + "}"

    @property
    def wire_required_code(self) -> str:
        return "frozenset({" + ", ".join(repr(name) for name in sorted(self.wire_required)) + "})"

    @property
    def deprecation_message(self) -> str | None:
        """What constructing a deprecated event version warns (None: not deprecated)."""
        event = self.event
        if not event.deprecated:
            return None
        name = f"{event.type} {event.dataversion}" if event.dataversion else event.type
        return f"{name} is deprecated" + (f": {event.deprecation.strip()}" if event.deprecation else "")

    @property
    def docstring(self) -> str:
        event = self.event
        lines = [f"{event.title} ({event.type}{' ' + event.dataversion if event.dataversion else ''})."]
        if event.description:
            lines += ["", event.description.strip()]
        if event.deprecated:
            lines += ["", f"Deprecated: {event.deprecation or 'yes'}"]
        return "\n".join(lines)


# Payload formats whose values keep their text (contract §4.1): the runtime's types.
_FORMAT_TYPES = {"date-time": "DateTime", "date": "Date", "uri": "Uri", "uri-reference": "UriReference",
                 "uuid": "Uuid", "email": "Email", "time": "Time", "ipv4": "Ipv4", "hostname": "Hostname",
                 "duration": "Duration", "ipv6": "Ipv6", "json-pointer": "JsonPointer", "idn-email": "IdnEmail",
                 "idn-hostname": "IdnHostname", "iri": "Iri", "iri-reference": "IriReference",
                 "uri-template": "UriTemplate", "relative-json-pointer": "RelativeJsonPointer"}
_RUNTIME_PATH = "evcat_runtime._cloudevents"  # datamodel-code-generator wants an absolute path; made relative after


@dataclass
class PayloadFacts:
    """What a payload model must know beyond its fields, by class name (wire names)."""

    not_null: dict[str, set[str]] = field(default_factory=dict)
    defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict)  # shared schemas by name, for $ref nullability


def _nullable(schema: Any, facts: PayloadFacts, seen: frozenset[str] = frozenset()) -> bool:
    """Can ``schema`` hold ``null``? (False only where it surely cannot.)"""
    if not isinstance(schema, dict):
        return schema is not False
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref[len("#/$defs/"):]
        if name in seen or name not in facts.shared:
            return True
        if not _nullable(facts.shared[name], facts, seen | {name}):
            return False
    types = schema.get("type")
    if isinstance(types, str) and types != "null":
        return False
    if isinstance(types, list) and "null" not in types:
        return False
    if "enum" in schema and isinstance(schema["enum"], list) and None not in schema["enum"]:
        return False
    if "const" in schema and schema["const"] is not None:
        return False
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list) and not any(_nullable(branch, facts, seen) for branch in schema[keyword]):
            return False
    if isinstance(schema.get("allOf"), list) and not all(_nullable(branch, facts, seen) for branch in schema["allOf"]):
        return False
    return True


def _branch(schema: Any, facts: PayloadFacts) -> Any:
    """An ``allOf`` branch as it reads: a reference to a shared schema resolved."""
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in facts.shared:
        return facts.shared[ref[len("#/$defs/"):]]
    return schema


def _definitions(node: dict[str, Any], facts: PayloadFacts) -> dict[str, list[Any]]:
    """Each property's definitions in an ``allOf`` node, as written: in its
    branches (a shared schema's, the reference resolved) and beside them."""
    definitions: dict[str, list[Any]] = {}
    for schema in [*(_branch(branch, facts) for branch in node["allOf"]), node]:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        for name, child in (properties.items() if isinstance(properties, dict) else ()):
            definitions.setdefault(name, []).append(child)
    return definitions


def _own_branches(node: dict[str, Any], result: dict[str, Any]) -> list[dict[str, Any]]:
    """The copies (in ``result``) of the ``allOf``'s branches that are no
    reference: their properties are fields of the class named after it."""
    return [branch for original, branch in zip(node["allOf"], result["allOf"])
            if isinstance(original, dict) and "$ref" not in original and isinstance(branch, dict)]


def _no_null_where_one_refuses(definitions: dict[str, list[Any]], holders: list[dict[str, Any]], facts: PayloadFacts,
                               title: str) -> None:
    """A property that an ``allOf`` defines in more than one place may be
    ``null`` only where every definition allows it (JSON Schema 2020-12
    §10.2.1.1). datamodel-code-generator's field takes the last definition's
    type, so a nullable redefinition let ``null`` through where the base's
    type refuses it (issue 26, found by the schema property test: a required
    ``amount: string`` redefined as ``[string, "null"]``). The null is taken
    out of each definition the subclass holds, and the property joins the
    class's facts of properties that may not be ``null`` (an optional one
    may be absent, not ``null``)."""
    for name, schemas in definitions.items():
        if len(schemas) < 2 or all(_nullable(schema, facts) for schema in schemas):
            continue
        for holder in holders:
            properties = holder.get("properties")
            if isinstance(properties, dict) and isinstance(properties.get(name), dict):
                properties[name] = _without_null(properties[name])
        facts.not_null.setdefault(title, set()).add(name)


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as handed to datamodel-code-generator, without its ``null``
    (in a type array, an enum, or the ``anyOf`` branch ``_titled`` spells a
    nullable runtime type with)."""
    result = dict(schema)
    types = result.get("type")
    if isinstance(types, list) and "null" in types and len(types) > 1:
        kept = [kind for kind in types if kind != "null"]
        result["type"] = kept[0] if len(kept) == 1 else kept
    values = result.get("enum")
    if isinstance(values, list) and None in values and len(values) > 1:
        result["enum"] = [value for value in values if value is not None]
    branches = result.get("anyOf")
    if isinstance(branches, list) and {"type": "null"} in branches and len(branches) > 1:
        kept_branches = [branch for branch in branches if branch != {"type": "null"}]
        if len(kept_branches) == 1 and isinstance(kept_branches[0], dict):
            del result["anyOf"]
            result = {**kept_branches[0], **result}
        else:
            result["anyOf"] = kept_branches
    return result


def _narrow_redefined_enums(definitions: dict[str, list[Any]], holders: list[dict[str, Any]], facts: PayloadFacts) -> None:
    """A property that an ``allOf`` defines in more than one place must hold
    for each definition (JSON Schema 2020-12 §10.2.1.1); datamodel-code-generator
    makes the last one a subclass's field, which replaces the others. Where
    one definition is an ``enum`` or ``const`` (a ``Literal``), the field's
    values become those that every definition accepts (judged by jsonschema-rs
    on the pinned schemas, as evcat validate judges), written into each
    definition the subclass holds (issue 26: ``enum: [ab, ef]`` over
    ``pattern: ^[a-d]+$`` accepted "ef")."""
    for name, schemas in definitions.items():
        listed = listed_values(schemas)
        if len(schemas) < 2 or listed is None:
            continue
        kept = accepted_by_every(listed, schemas, facts.shared)
        if not kept:
            continue  # only an absent property passes: lint refuses it (PAY-KEYWORD-VERDICT)
        for holder in holders:
            properties = holder.get("properties")
            if isinstance(properties, dict) and isinstance(properties.get(name), dict):
                narrowed = {key: value for key, value in properties[name].items() if key != "const"}
                properties[name] = {**narrowed, "enum": kept}


def _merge_redefined_objects(definitions: dict[str, list[Any]], holders: list[dict[str, Any]], facts: PayloadFacts) -> None:
    """An object property that an ``allOf`` defines in more than one place
    holds for each definition (2020-12 §10.2.1.1), as scalar ones do
    (``_narrow_redefined_enums``). datamodel-code-generator makes the last
    definition a subclass's field of a class that merges the properties of
    all (bounds too, and a closed base stays closed), but its ``required``
    is the last one's alone and its wire facts are only those of the
    properties that definition names: the names every definition requires
    are written into the subclass's definition, and the optional properties
    that some definition says may not be ``null`` join its class's facts
    (issue 26: ``{"unit": "kWh"}`` was accepted where the base requires
    ``id``, and an explicit ``null`` for a property of the base alone)."""
    for name, written in definitions.items():
        schemas = [_branch(schema, facts) for schema in written]
        objects = [schema for schema in schemas if isinstance(schema, dict) and isinstance(schema.get("properties"), dict)]
        if len(schemas) < 2 or len(objects) < 2:
            continue
        required: list[str] = []
        for schema in objects:
            listed = schema.get("required")
            required += [item for item in (listed if isinstance(listed, list) else []) if item not in required]
        for holder in holders:
            properties = holder.get("properties")
            target = properties.get(name) if isinstance(properties, dict) else None
            if not isinstance(target, dict) or not isinstance(target.get("properties"), dict):
                continue
            if required:
                target["required"] = required
            title = target.get("title")
            if not isinstance(title, str):
                continue
            for schema in objects:
                for child_name, child in schema["properties"].items():
                    if child_name not in required and not _nullable(child, facts):
                        facts.not_null.setdefault(title, set()).add(child_name)


def _text_typed(types: Any) -> bool:
    """Whether a node of JSON Schema ``type`` ``types`` holds text (or null)
    only: a format there keeps its text in the runtime's type, the nullable
    form (``[string, "null"]``, issue 26) as well as the plain one."""
    return types is None or _typed(types, "string")


def _typed(types: Any, kind: str) -> bool:
    """Whether JSON Schema ``type`` ``types`` is ``kind``, or ``kind`` or null."""
    return types == kind or isinstance(types, list) and kind in types and set(types) <= {kind, "null"}


def _titled(schema: Any, title: str, facts: PayloadFacts) -> Any:
    """``schema`` titled as ``envelope.titled`` titles it (the classes' names),
    as datamodel-code-generator needs it: object schemas titled (an enum is a
    ``Literal``, no class), ``default``s taken out (they apply only when a
    program constructs a model) and kept in ``facts`` with the optional
    properties that may not be null; payload formats map to the runtime's
    text-keeping types."""

    def wire_facts(object_schema: dict[str, Any], node_title: str) -> None:
        properties = object_schema.get("properties") if isinstance(object_schema.get("properties"), dict) else {}
        required = object_schema.get("required")
        required = set(required) if isinstance(required, list) else set()
        for name, child in properties.items():
            if name not in required and not _nullable(child, facts):
                facts.not_null.setdefault(node_title, set()).add(name)
            if isinstance(child, dict) and "default" in child:
                facts.defaults.setdefault(node_title, {})[name] = child["default"]

    def each(node: dict[str, Any], result: dict[str, Any], node_title: str) -> None:
        result.pop("default", None)
        if not (node.get("type") == "object" or "properties" in node):
            result.pop("title", None)
        else:
            wire_facts(node, node_title)
        if isinstance(node.get("allOf"), list) and isinstance(result.get("allOf"), list):
            # The allOf's own branches are fields of the class named after it.
            for branch in node["allOf"]:
                if isinstance(branch, dict) and "$ref" not in branch:
                    wire_facts(branch, node_title)
            # Each property's definitions, and the copies the subclass holds
            # (its own branches and the node itself), worked out once.
            definitions, holders = _definitions(node, facts), [*_own_branches(node, result), result]
            _narrow_redefined_enums(definitions, holders, facts)
            _merge_redefined_objects(definitions, holders, facts)
            _no_null_where_one_refuses(definitions, holders, facts, node_title)
        custom = None
        if isinstance(node.get("format"), str) and node["format"] in _FORMAT_TYPES and _text_typed(node.get("type")):
            custom = f"{_RUNTIME_PATH}.{_FORMAT_TYPES[node['format']]}"
        elif _typed(node.get("type"), "number"):
            custom = f"{_RUNTIME_PATH}.Number"
        if custom is not None:
            if node.get("format") in ("hostname", "idn-hostname"):
                result.pop("format")  # datamodel-code-generator would add its own pattern: the type checks
            types = node.get("type")
            if isinstance(types, list) and "null" in types:
                # datamodel-code-generator drops the null of a custom type's
                # type array in array items: spelled as anyOf, it keeps it
                kept = {key: result[key] for key in ("description", "title") if key in result}
                typed = {key: value for key, value in result.items() if key not in kept}
                typed.update(type=next(kind for kind in types if kind != "null"), customTypePath=custom)
                result.clear()
                result.update(kept, anyOf=[typed, {"type": "null"}])
            else:
                result["customTypePath"] = custom

    return titled(schema, title, each)


def models_source(catalog: Catalog, catalog_set: CatalogSet, data_names: dict[tuple[str, str | None], str],
                  memo: Memo | None = None) -> str:
    text, facts = _models_input(catalog, catalog_set, data_names)
    if text is None:
        return '"""This catalog has no payloads: every event is a notification."""\n\n__all__: list[str] = []\n'
    models = memo(text, _run_datamodel_codegen) if memo is not None else _run_datamodel_codegen(text)
    return _with_facts(_strip_container(models), facts)


def _models_input(catalog: Catalog, catalog_set: CatalogSet,
                  data_names: dict[tuple[str, str | None], str]) -> tuple[str | None, PayloadFacts]:
    """The JSON Schema text datamodel-code-generator reads for the payloads
    of ``catalog`` (None: it has none), and the wire facts found on the way."""
    used: set[str] = set()
    defs: dict[str, Any] = {}
    facts = PayloadFacts(shared={name: schema.schema for name, schema in catalog_set.schemas.items()})
    for event in catalog.events:
        if event.payload is not None:
            used.update(event.payload.uses)
            data_class = data_names[event.key]
            defs[data_class] = _titled(event.payload.schema, data_class, facts)
    renamed = {name: schema_class_name(name) for name in used if schema_class_name(name) != name}
    for name in sorted(used):
        # A shared schema is a named type whatever its type (an enum: a type
        # alias), under its $defs key: the key is its class name.
        defs[renamed.get(name, name)] = _titled(catalog_set.schemas[name].schema, schema_class_name(name), facts)
    if renamed:
        defs = _renamed_refs(defs, {f"#/$defs/{old}": f"#/$defs/{new}" for old, new in renamed.items()})
    if not defs:
        return None, facts
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": _CONTAINER,
        "$defs": python_patterns(dict(sorted(defs.items()))),  # ECMA-262 patterns, written as pydantic reads them
    }
    return json.dumps(schema, sort_keys=False), facts


def models_text(inputs: tuple[Any, ...]) -> str | None:
    """The JSON Schema text the unit of ``inputs`` (``units``) hands
    datamodel-code-generator (the key of its output in ``Settings.memo``),
    or None: the catalog has no payloads."""
    catalog, schemas = inputs
    _, data_names = _class_names(sorted(catalog.events, key=event_order))
    return _models_input(catalog, partial_set((catalog,), schemas), data_names)[0]


def _class_names(events: list[EventType]) -> tuple[dict[tuple[str, str | None], str], dict[tuple[str, str | None], str]]:
    """The envelope and the payload class name of each of ``events`` (in ``event_order``)."""
    names = envelope_class_names(event.key for event in events)
    return names, {key: payload_class_name(name) for key, name in names.items()}


# datamodel-code-generator allows arbitrary types wherever a custom type
# (customTypePath) is used; the runtime's types are Annotated standard types,
# which pydantic knows, so the models keep only the config their schema asks
# for (extra="forbid" of a closed schema); the rest is Payload's.
_ARBITRARY_TYPES = re.compile(r"^ +arbitrary_types_allowed=True,\n", re.MULTILINE)
_EMPTY_CONFIG = re.compile(r"^ +model_config = ConfigDict\(\n +\)\n", re.MULTILINE)


def _renamed_refs(value: Any, refs: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {key: refs.get(child, child) if key == "$ref" and isinstance(child, str) else _renamed_refs(child, refs)
                for key, child in value.items()}
    if isinstance(value, list):
        return [_renamed_refs(child, refs) for child in value]
    return value


_CLASS_HEADER = re.compile(r"^class (\w+)\(([^)]*)\):\n", re.MULTILINE)
_FORBID = "extra='forbid'"


def _closed_merges(source: str) -> str:
    """datamodel-code-generator's ``source`` with each class of several bases,
    one of which is closed (``extra='forbid'``, itself or through its own
    bases), closed too: JSON Schema applies every branch of an allOf (and a
    chosen anyOf/oneOf branch) to the whole object, so a conjunction with a
    closed branch takes no undeclared property; pydantic would merge the
    bases' configs and let a later, open base (``Payload``: ``extra='allow'``)
    win (one verdict, contract §4.1). A class that sets its own config is
    left as it is."""
    if _FORBID not in source:
        return source
    headers = list(_CLASS_HEADER.finditer(source))
    closed: dict[str, bool] = {}
    insertions = []
    for index, header in enumerate(headers):  # bases come first in the module: one pass settles them
        end = headers[index + 1].start() if index + 1 < len(headers) else len(source)
        name, body = header.group(1), source[header.end():end]
        bases = [base.strip() for base in header.group(2).split(",") if base.strip()]
        own = "\n    model_config = " in "\n" + body  # its own config (a class's body ends at the next class)
        merges_closed = any(closed.get(base, False) for base in bases)
        closed[name] = (own and _FORBID in body.split("\n    )\n", 1)[0]) or merges_closed
        if len(bases) >= 2 and not own and merges_closed:
            docstring = body.index('"""\n', len('    """')) + len('"""\n') if body.startswith('    """') else 0
            insertions.append(header.end() + docstring)
    for at in reversed(insertions):
        source = source[:at] + f"    model_config = ConfigDict(\n        {_FORBID},\n    )\n" + source[at:]
    return source


def _with_facts(source: str, facts: PayloadFacts) -> str:
    """The models as the runtime needs them: the runtime imported relatively,
    no config they do not need, JSON integers (1.0 is one), each class that
    merges a closed branch closed (``_closed_merges``), and each model's
    wire facts set after it."""
    source = _closed_merges(source)
    source = source.replace(f"from {_RUNTIME_PATH} import", "from ._cloudevents import")
    source = _EMPTY_CONFIG.sub("", _ARBITRARY_TYPES.sub("", source))
    if _has_word(source, "StrictInt"):
        source = _replace_word(source, "StrictInt", "JsonInt")
        source = re.sub(r"(from pydantic import [^\n]*?)JsonInt, |, JsonInt(?=[,\n])", r"\1", source)
        source = _with_runtime_import(source, "JsonInt")
    source = _json_literals(source)
    lines = []
    classes = set(re.findall(r"^class (.*?)\(", source, re.MULTILINE))  # one pass (a pattern per title cost a quarter second)
    for title in sorted(set(facts.not_null) | set(facts.defaults)):
        if title not in classes:
            continue
        if title in facts.not_null:
            names = ", ".join(repr(name) for name in sorted(facts.not_null[title]))
            lines.append(f"{title}.evcat_not_null = frozenset({{{names}}})")
        if title in facts.defaults:
            lines.append(f"{title}.evcat_defaults = {facts.defaults[title]!r}")
    if lines:
        source = source.rstrip("\n") + "\n\n# Wire facts of the payload schemas (contract 4.1): optional properties that may not\n# be null, and the defaults a constructing program gets.\n" + "\n".join(lines) + "\n"
    return _with_all(source)


# A Literal's values: quoted strings (which may hold brackets) and the rest.
_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
_LITERAL = re.compile(r"\bLiteral\[((?:" + _QUOTED.pattern + r"|[^\[\]'\"])*)\]")


def _with_runtime_import(source: str, name: str) -> str:
    """``source`` importing ``name`` from the runtime too (its one import line)."""
    return re.sub(r"from \._cloudevents import ([^\n]*)",
                  lambda m: "from ._cloudevents import " + ", ".join(sorted({*m[1].split(", "), name})), source, count=1)


def _json_literals(source: str) -> str:
    """Each ``Literal`` that holds a number or a boolean (a ``const`` or
    ``enum``) takes what JSON Schema's takes, as sent (pydantic's
    ``Literal[1]`` takes ``true``, ``Literal[True]`` takes ``1``, and both
    give another value back): ``Annotated[Literal[1], JsonConst()]``."""

    def exact(match: re.Match[str]) -> str:
        values = _QUOTED.sub("", match[1])
        if not re.search(r"\d|\b(?:True|False)\b", values):
            return match[0]
        return f"Annotated[{match[0]}, JsonConst()]"

    changed = _LITERAL.sub(exact, source)
    if changed == source:
        return source
    changed = _with_runtime_import(changed, "JsonConst")
    if not re.search(r"^from typing import [^\n]*\bAnnotated\b", changed, re.MULTILINE):
        changed = re.sub(r"^from typing import ", "from typing import Annotated, ", changed, count=1, flags=re.MULTILINE)
    return changed


def _with_all(source: str) -> str:
    """``__all__``: every payload model and named shared schema (type alias) of
    the module, after its imports."""
    names = sorted(set(re.findall(r"^class (\w+)\(", source, re.MULTILINE))
                   | set(re.findall(r"^(\w+) = TypeAliasType\(", source, re.MULTILINE)))
    block = "__all__ = [" + "".join(f"\n    {name!r}," for name in names) + "\n]\n"
    imports = list(re.finditer(r"^(?:from \S+ import (?:\([^)]*\)|[^\n]*)|import [^\n]*)\n", source, re.MULTILINE))
    if not imports:
        return source
    end = imports[-1].end()
    return source[:end] + "\n" + block + source[end:]


# The schema that holds every payload under $defs becomes a model or a type alias of its own; drop it.
_CONTAINER = "EvcatPayloadContainer"
_CONTAINER_CLASS = re.compile(rf"\n\nclass {_CONTAINER}\(RootModel\[Any\]\):\n(?:    .*(?:\n|\Z)|\n(?=    ))*")
_CONTAINER_ALIAS = re.compile(
    rf"""\n\n{_CONTAINER} = TypeAliasType\(\s*["']{_CONTAINER}["'],\s*Annotated\[Any, Field\(title=["']{_CONTAINER}["']\)\],?\s*\)(?:\n|\Z)""")


def _strip_container(source: str) -> str:
    stripped = _CONTAINER_ALIAS.sub("\n", _CONTAINER_CLASS.sub("\n", source))
    # Catalog names like modelDump become model_dump_: pydantic's protected
    # namespaces would warn at import, and the names are safe (they end in "_").
    body = stripped.split("from pydantic import", 1)[-1].split("\n\n", 1)[-1]
    # What the patterns below can match lies before the body (the body, a
    # suffix starting a line, has no RootModel, no Any): only that is searched.
    head = stripped[:len(stripped) - len(body)]
    if "RootModel" not in body:
        head = re.sub(r"(from pydantic import [^\n]*?)RootModel, |, RootModel(?=[,\n])", r"\1", head)
    if not _has_word(body, "Any"):  # only the container used it
        head = re.sub(r"(from typing import [^\n]*?)\bAny, |, Any\b(?=[,\n])|^from typing import Any\n", r"\1", head,
                      flags=re.MULTILINE)
    return head + body


# Whole words (as the pattern \bword\b finds them) without a leading \b,
# which keeps the regex engine from looking for the word's text first.
@cache
def _word_pattern(word: str) -> re.Pattern[str]:
    return re.compile(re.escape(word) + r"\b")


def _starts_word(text: str, index: int) -> bool:
    return index == 0 or not (text[index - 1].isalnum() or text[index - 1] == "_")  # re's \w


def _has_word(text: str, word: str) -> bool:
    return any(_starts_word(text, match.start()) for match in _word_pattern(word).finditer(text))


def _replace_word(text: str, word: str, replacement: str) -> str:
    return _word_pattern(word).sub(lambda match: replacement if _starts_word(text, match.start()) else match[0], text)


# How the engine memoises a pure function of text: ``memo(text, function)``
# is ``function(text)``, perhaps kept from before (``engine.store.Memo``).
Memo = Callable[[str, Callable[[str], str]], str]


@dataclass(frozen=True)
class Settings:
    """How Python output is made, handed to the renderer as a value (with each
    unit, to whichever process renders it): not part of a unit's inputs.

    ``formatter``: see ``format_sources``. ``memo``: what the engine gives
    to keep datamodel-code-generator's output for a catalog's payload schemas
    by their content (``Memo``), so a change that leaves every payload alone
    (a title, a description of the event, an example) does not even load
    datamodel-code-generator; None: it runs every time. The output is the
    same either way: the stage is a pure function of the unit's inputs."""

    formatter: str = "ruff"
    memo: Memo | None = field(default=None, compare=False)


def warm_up() -> None:
    """Load datamodel-code-generator and run it once (its first call loads
    most of it), so the next catalog renders at full speed."""
    title = "EvcatWarmUp"
    _run_datamodel_codegen(json.dumps({"title": title, "type": "object", "properties": {"a": {"type": "string"}}}))


def warm_children() -> None:
    """Before a process renders packages of ``--templates`` templates in
    children (``templates.render_unit``): datamodel-code-generator loaded once
    here (``warm_up``), not in every child."""
    warm_up()


def _class_name(name: str) -> str:
    """Titles are class names already (``naming``); anything else datamodel-code-generator
    names (a ``$defs`` key) becomes one the same way."""
    return name if name.isidentifier() and not iskeyword(name) else schema_class_name(name)


def _run_datamodel_codegen(schema_text: str) -> str:
    from datamodel_code_generator import DataModelType, InputFileType, PythonVersion, generate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        output = generate(
            schema_text,
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.PydanticV2BaseModel,
            snake_case_field=True,
            base_class=f"{_RUNTIME_PATH}.Payload",
            strict_types=["str", "int", "float", "bool"],
            use_title_as_name=True,
            enum_field_as_literal="all",
            field_constraints=True,
            use_annotated=True,
            disable_timestamp=True,
            target_python_version=PythonVersion.PY_311,
            use_standard_collections=True,
            use_union_operator=True,
            use_schema_description=True,
            use_field_description=True,
            # Shared schemas that are no object (enums, patterned strings,
            # arrays) become named type aliases (TypeAliasType: pydantic names them
            # in JSON Schema too) that the fields referring to them use, instead
            # of being inlined (collapse_root_models) or wrapped in a RootModel.
            use_type_alias=True,
            keep_model_order=True,
            # Titles are class names already (naming.py): keep them as they are
            # (its own normalisation would drop the underscores of V2_0_0).
            custom_class_name_generator=_class_name,
            custom_file_header=f"# Generated by evcat {__version__} with datamodel-code-generator: payload models.\n# Do not edit; change the catalog and run evcat generate.",
            formatters=[],  # formatted once, in render_catalog
        )
    assert isinstance(output, str)
    return output


# What the envelope schemas repeat, each written once per events module
# (names in the generated code -> value; a later one may use an earlier one).
WIRE_CONSTANTS: dict[str, Any] = {
    "_BAD_CHARS": vocabulary.NO_BAD_CHARS["not"]["pattern"],
    "_MEDIA_TYPE": vocabulary.MEDIA_TYPE_SCHEMA_PATTERN,
    "_NORMO_TIME": vocabulary.NORMO_TIME_SCHEMA_PATTERN,
    "_RFC3339": vocabulary.RFC3339_SCHEMA_PATTERN,
    "_URI": vocabulary.URI_SCHEMA_PATTERN,
    "_URI_REFERENCE": vocabulary.URI_REFERENCE_SCHEMA_PATTERN,
    "_ATTRIBUTE_NAMES": ATTRIBUTE_NAMES,
    "_UNDECLARED_VALUE": UNDECLARED_VALUE,
}


def _code(value: Any, constants: tuple[str, ...] = tuple(WIRE_CONSTANTS)) -> str:
    """A JSON value as a Python expression, the values of ``constants`` by name."""
    for name in constants:
        constant = WIRE_CONSTANTS[name]
        if type(value) is type(constant) and value == constant:
            return name
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_code(item, constants)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_code(item, constants) for item in value) + "]"
    return repr(value)


def wire_constants(views: list[EventView]) -> list[tuple[str, str, str]]:
    """The ``WIRE_CONSTANTS`` a module's event classes use, as (name, ``: annotation`` or "", code), in order."""
    code = " ".join(view.wire_schema_code for view in views)
    names = list(WIRE_CONSTANTS)
    used = [name for name in names if re.search(rf"\b{name}\b", code)]
    for index in range(len(names) - 1, -1, -1):  # and what the used ones use
        if names[index] in used:
            inner = _code(WIRE_CONSTANTS[names[index]], tuple(names[:index]))
            used += [name for name in names[:index] if name not in used and re.search(rf"\b{name}\b", inner)]
    # Strings unannotated: black and ruff format wrap an annotated long one differently.
    return [(name, "" if isinstance(WIRE_CONSTANTS[name], str) else ": dict[str, Any]",
             _code(WIRE_CONSTANTS[name], tuple(names[:index])))
            for index, name in enumerate(names) if name in used]


def _event_view(event: EventType, class_name: str, data_class: str) -> EventView:
    """The envelope class: the event type's ``ContextAttribute``s mapped to
    pydantic fields (contract §4.1: class defaults serve type checkers; a
    constructing program gets ``construct_defaults``; the wire gets nothing)."""
    view = EventView(event, class_name, data_class if event.has_data else None)
    envelope = envelope_schema(event, payload=False)
    view.wire_schema = {
        "properties": {
            name: {key: value for key, value in schema.items() if key not in ("description", "examples")}
            for name, schema in envelope["properties"].items()
            if name != "data"  # the payload class's own schema
        },
        **{key: envelope[key] for key in ("propertyNames", "additionalProperties") if key in envelope},
    }
    view.max_size = _max_size(event)
    for attribute in event.attributes:
        if attribute.name == "source" and (attribute.template or attribute.match):
            view.catalog_source = event.source
            view.source_match = event.rule_setting("CE-SOURCE-MATCH") or "warning"
        if attribute.required:
            view.wire_required.append(attribute.name)
        construct = _construct_default(attribute)
        field_view = _field(event, attribute)
        if construct is not None and attribute.name != "specversion":
            view.construct_defaults.append((field_view.name if field_view else attribute.name, construct))
        if field_view is not None:
            view.fields.append(field_view)
        if attribute.extension and attribute.name not in ("dataversion", "dataref", "sequence", "sequencetype"):
            view.attribute_types[attribute.name] = attribute.type
    if view.data_class:
        # Field(): required. A bare annotation would be required too, but type
        # checkers (pyright) take a field without a default that overrides one
        # with a default (CloudEvent.data = None) for a dataclass ordering error.
        view.fields.append(FieldView("data", f"models.{view.data_class}", "Field()", "The payload."))
    else:
        view.fields.append(FieldView("data", "None", "None", "A notification carries no data."))
    return view


def _construct_default(attribute: ContextAttribute) -> str | None:
    """What a program constructing an event gets for ``attribute`` unless it gives one."""
    if attribute.fixed is not None:
        return repr(attribute.fixed)
    if attribute.name == "id":
        return "new_id"
    if attribute.name == "time":
        return "now"
    if attribute.default is not None:
        return repr(attribute.default)
    return None


def _field(event: EventType, attribute: ContextAttribute) -> FieldView | None:
    """One context attribute as a field; None where the base class's field serves."""
    name = attribute.name
    annotation, class_default = _annotation(attribute, event.profile), None
    if attribute.required:
        if attribute.fixed is not None:
            class_default = repr(attribute.fixed)
        elif name == "id":
            class_default = "Field(default_factory=new_id)"
        elif name == "time":
            class_default = "Field(default_factory=now)"
        elif attribute.default is not None:
            class_default = repr(attribute.default)
    else:
        annotation += " | None"
        class_default = "None"
    if name == "specversion":
        return None  # CloudEvent declares it
    if not event.uses(attribute):
        return None  # the base class's field: the catalog says nothing about it here
    python_name = python_field_name(name) if attribute.extension else name
    if python_name != name:
        annotation = f"Annotated[{annotation}, Field(alias={name!r})]"
    return FieldView(python_name, annotation, class_default, attribute.meaning)


def _annotation(attribute: ContextAttribute, profile: Profile) -> str:
    """The Python type of an attribute (CloudEvents type system §3.2, mapped;
    `time` as its profile has it: the profile's exact form, where it has one)."""
    name = attribute.name
    if attribute.fixed is not None:
        return f"Literal[{attribute.fixed!r}]"
    if name in ("id", "subject") or (name == "sequence" and attribute.pattern is None):
        return "NonEmptyString"
    if name == "sequence":
        return "IntegerSequence"
    if attribute.media_type:
        return "MediaType"
    if name == "source":
        return "NonEmptyUriReference"
    if name == "time":
        return profile.time_class
    return vocabulary.TYPES[attribute.type].python


# The runtime's names events.py may use (besides each profile's ``time_class``).
_RUNTIME_NAMES = ("Base64Binary", "Int32", "IntegerSequence", "MediaType", "NonEmptyString", "NonEmptyUriReference",
                  "String", "Timestamp", "Uri", "UriReference", "new_id", "now", "source_check")


def _event_imports(views: list[EventView]) -> dict[str, Any]:
    """What events.py uses, so it imports nothing more (linters flag unused imports)."""
    code = " ".join(f"{f.annotation} {f.default or ''}" for view in views for f in view.fields)
    code += " ".join(view.construct_defaults_code for view in views)
    code += " ".join("source_check" for view in views if view.catalog_source is not None)
    used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    typing = ["Any", "ClassVar", "TypeAlias", *(name for name in ("Annotated", "Literal") if name in used)]
    return {
        "typing": sorted(typing),
        "deprecated": any(view.event.deprecated for view in views),
        "pydantic": "Field" in used,
        "models": "models" in used,
        "runtime": sorted({"CloudEvent", *(name for name in _RUNTIME_NAMES if name in used),
                           *(view.event.profile.time_class for view in views if view.event.profile.time_class in used)}),
    }


def _channel_context(catalog: Catalog, events: list[EventType]) -> dict[str, Any]:
    """``channels.py``: the catalog's channels, and the ones each event travels on
    (``Catalog.channels_of``, catalog-format.md §9)."""
    channels = [SimpleNamespace(name=channel.name, protocol=channel.protocol, address=channel.address,
                                parameters=channel.parameters, description=channel.description,
                                bindings_code=repr(dict(channel.bindings)))
                for channel in catalog.channels]
    routes = [(event.key, names) for event in events
              for names in [tuple(channel.name for channel in catalog.channels_of(event))] if names]
    return {"channels": channels, "routes": routes}


def render_catalog(catalog: Catalog, catalog_set: CatalogSet, env: Any, settings: Settings = Settings()) -> dict[str, str]:
    package = catalog.package_name  # `package`, or the catalog id with _ (catalog-format.md §9)
    events = sorted(catalog.events, key=event_order)
    names, data_names = _class_names(events)
    views = [_event_view(event, names[event.key], data_names[event.key]) for event in events]
    context = {"catalog": catalog, "package": package, "version": __version__, "events": views,
               "imports": _event_imports(views), "wire_constants": wire_constants(views)}
    sources = {
        "events.py": env.get_template("python/events.py.jinja").render(context),
        "__init__.py": env.get_template("python/__init__.py.jinja").render(context),
        # Thin glue binding the webhook runtime (_webhook, _delivery) to this package.
        "webhook.py": env.get_template("python/webhook.py.jinja").render(
            {**context, "size_limit": catalog.profile.max_event_size}
        ),
        "delivery.py": env.get_template("python/delivery.py.jinja").render(context),
        "channels.py": env.get_template("python/channels.py.jinja").render({**context, **_channel_context(catalog, events)}),
    }
    sources["models.py"] = models_source(catalog, catalog_set, data_names, settings.memo)
    formatted = format_sources(sources, settings.formatter)  # imports sorted, none unused, by ruff's rules
    formatted.update(runtime_files())
    formatted["pyproject.toml"] = env.get_template("python/pyproject.toml.jinja").render(
        {**context, "requires": REQUIRES, "extras": sorted(EXTRAS.items())}
    )
    formatted["py.typed"] = ""
    return {f"python/{package}/{name}": text for name, text in formatted.items()}


# "ruff": ruff's formatter alone; "black": ruff first, then black over its
# output (black has the last word; two to three times slower on the whole run).
FORMATTERS = ("ruff", "black")


def format_sources(sources: dict[str, str], formatter: str = "ruff") -> dict[str, str]:
    """Black-style formatting of one package's modules.

    ruff's formatter is black-compatible by design and ~100x faster, so it is
    the default; black also formats a module whose text has characters the
    two measure differently (``_widths_may_differ``). The output passes ``black --check`` (the tests check every
    generated module of the golden catalogs, 2,000 random catalogs and the
    1,000-type benchmark catalog with black itself). ``--formatter black``
    runs black over ruff's output, for those who want black's last word.
    Without the ruff binary, black does all the work. Imports are sorted,
    and unused ones dropped, by ruff's rules first."""
    preformatted = _ruff(sources)
    if preformatted is not None and formatter == "ruff":
        return {name: _black(source) if _widths_may_differ(source) else source for name, source in preformatted.items()}
    return {name: _black(source) for name, source in (preformatted or sources).items()}


def _widths_may_differ(source: str) -> bool:
    """True when ``source`` holds a character whose display width black and
    ruff may count differently, so a line may fit for one and not the other:
    wide (East Asian W/F), zero-width (combining, format) or not yet assigned
    in Python's Unicode tables (each tool has its own, of its own Unicode
    version). Found by the property test: U+2EE5E, wide since Unicode 15.1.
    Such a module gets black's last word; text in Latin scripts never does."""
    for character in set(source):
        if character < "\u0300":
            continue
        if unicodedata.east_asian_width(character) in ("W", "F") or unicodedata.category(character) in _ZERO_OR_UNKNOWN:
            return True
    return False


_ZERO_OR_UNKNOWN = frozenset({"Cn", "Co", "Cf", "Mn", "Me"})


def _ruff(sources: dict[str, str]) -> dict[str, str] | None:
    """``ruff check --select I,F401,RUF022 --fix`` (imports and ``__all__``
    sorted, no import unused) and
    ``ruff format`` over the modules, a process each (a few milliseconds);
    None when ruff is not installed or refuses a file."""
    try:
        from ruff.__main__ import find_ruff_bin

        ruff = find_ruff_bin()
    except (ImportError, FileNotFoundError):
        return None
    with tempfile.TemporaryDirectory(prefix="evcat-format-") as directory:
        paths = {name: os.path.join(directory, name) for name in sources}
        for name, source in sources.items():
            with open(paths[name], "w", encoding="utf-8", newline="") as handle:
                handle.write(source)
        common = ["--isolated", "--no-cache", "--quiet", "--line-length", "88", "--target-version", "py311"]
        # Imports sorted as isort (ruff's I rules) would, none unused (F401: what
        # the generated code does not use after all), ``__all__`` sorted as ruff's
        # default rules want it (RUF022, issue 31); then the black-style layout.
        sort_imports = [ruff, "check", *common, "--select", "I,F401,RUF022", "--fix", "--exit-zero", *paths.values()]
        command = [ruff, "format", *common, *paths.values()]
        try:
            subprocess.run(sort_imports, check=True, capture_output=True, timeout=120)
            subprocess.run(command, check=True, capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            return None
        result = {}
        for name, path in paths.items():
            with open(path, encoding="utf-8", newline="") as handle:
                result[name] = handle.read()
        return result


@cache
def _black(source: str) -> str:
    """black, once per distinct source (the runtime module is the same in every package).
    Imported here: only rendering needs it, and it takes a tenth of a second to load."""
    import black

    return black.format_str(source, mode=black.Mode(target_versions={black.TargetVersion.PY311}))


def units(catalog_set: CatalogSet, settings: Settings = Settings()) -> list[Unit]:
    """One package per catalog; ``settings`` travel with each unit (bound to its render function)."""
    render_unit = partial(_render_unit, settings=settings)
    return [Unit("python", catalog.id, catalog_inputs(catalog, catalog_set), render_unit) for catalog in catalog_set.catalogs]


def _render_unit(inputs: tuple[Any, ...], env: Any, settings: Settings = Settings()) -> dict[str, bytes]:
    catalog, schemas = inputs
    rendered = render_catalog(catalog, partial_set((catalog,), schemas), env, settings)
    return {path: text.encode("utf-8") for path, text in rendered.items()}


def render(catalog_set: CatalogSet) -> dict[str, bytes]:
    from ..outputs import units as bound_units  # with the built-in templates bound

    return render_all(bound_units("python", catalog_set, {"python": Settings()}))


__all__ = ["FORMATTERS", "Settings", "format_sources", "models_text", "render", "units", "warm_up"]
