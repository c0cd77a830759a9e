"""The catalog format, declared once (contract: shared/catalog-format.md §1).

The same declaration drives two things:
- ``check_structure``: unknown keys (with the closest known key), missing
  required keys and values of the wrong YAML type, each at its YAML node;
- ``catalog_json_schema``: the JSON Schema of the format that ``evcat schema``
  prints, so editors with the YAML language server complete and check
  catalogs while they are typed.

Payload schemas (``data``, ``schemas``) are JSON Schema 2020-12; their
keywords are checked by the rules (CAT-SCHEMA, CAT-UNKNOWN-KEY), not here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import re

from .diagnostics import Diagnostic, Severity
from .string_formats import is_uri
from .loader import Document, Path
from .naming import did_you_mean
from .profiles import DEFAULT as DEFAULT_PROFILE
from .profiles import NAMES as PROFILES
from .vocabulary import TYPE_NAMES as EXTENSION_TYPES
SEMVER_PATTERN = r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$"
CATALOG_ID_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
PACKAGE_PATTERN = r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$"


class Spec:
    description: str = ""

    def json_schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def type_name(self) -> str:
        raise NotImplementedError

    def accepts(self, value: Any) -> bool:
        raise NotImplementedError


@dataclass
class Str(Spec):
    description: str = ""
    enum: Sequence[str] = ()  # read when checked: profiles.NAMES follows profiles.register
    pattern: str | None = None  # for editors only; the rules give the precise message
    check_enum: bool = True  # False where a rule reports a bad value more precisely
    format: str | None = None  # "uri" or "email": checked, and given to editors

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "string"}
        if self.enum:
            schema["enum"] = list(self.enum)
        if self.pattern:
            schema["pattern"] = self.pattern
        if self.format:
            schema["format"] = self.format
        return _described(schema, self.description)

    def type_name(self) -> str:
        return "a string"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str)


@dataclass
class Bool(Spec):
    description: str = ""

    def json_schema(self) -> dict[str, Any]:
        return _described({"type": "boolean"}, self.description)

    def type_name(self) -> str:
        return "true or false"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)


@dataclass
class Either(Spec):
    options: tuple[Spec, ...] = ()
    description: str = ""

    def json_schema(self) -> dict[str, Any]:
        return _described({"anyOf": [option.json_schema() for option in self.options]}, self.description)

    def type_name(self) -> str:
        return " or ".join(option.type_name() for option in self.options)

    def accepts(self, value: Any) -> bool:
        return any(option.accepts(value) for option in self.options)


@dataclass
class Field:
    spec: Spec
    required: bool = False


@dataclass
class Obj(Spec):
    fields: dict[str, Field] = field(default_factory=dict)
    description: str = ""

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {name: f.spec.json_schema() for name, f in self.fields.items()},
            "additionalProperties": False,
        }
        required = [name for name, f in self.fields.items() if f.required]
        if required:
            schema["required"] = required
        return _described(schema, self.description)

    def type_name(self) -> str:
        return "a mapping"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, dict)


@dataclass
class MapOf(Spec):
    values: Spec
    description: str = ""
    key_pattern: str | None = None

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "additionalProperties": self.values.json_schema()}
        if self.key_pattern:
            schema["propertyNames"] = {"pattern": self.key_pattern}
        return _described(schema, self.description)

    def type_name(self) -> str:
        return "a mapping"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, dict)


@dataclass
class ListOf(Spec):
    items: Spec
    min_items: int = 0
    description: str = ""

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "array", "items": self.items.json_schema()}
        if self.min_items:
            schema["minItems"] = self.min_items
        return _described(schema, self.description)

    def type_name(self) -> str:
        return "a list"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, list)


@dataclass
class PayloadSchema(Spec):
    """A JSON Schema 2020-12 (a mapping, or true/false)."""

    description: str = ""

    def json_schema(self) -> dict[str, Any]:
        return _described({"type": ["object", "boolean"]}, self.description)

    def type_name(self) -> str:
        return "a JSON Schema (a mapping)"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, (dict, bool))


@dataclass
class AnyMapping(Spec):
    description: str = ""

    def json_schema(self) -> dict[str, Any]:
        return _described({"type": "object"}, self.description)

    def type_name(self) -> str:
        return "a mapping"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, dict)


def _described(schema: dict[str, Any], description: str) -> dict[str, Any]:
    if description:
        schema["description"] = description
    return schema


def _text(description: str) -> Str:
    return Str(description)


# YAML 1.1 reads a bare `off` as false: both mean "off".
RULE_SETTING = Either((Str(enum=("error", "warning", "off")), Bool()))

CONTACT = Obj(
    {
        "name": Field(_text("Name of the team or person to contact.")),
        "email": Field(Str("E-mail address.", format="email")),
        "url": Field(Str("Web page (an absolute URI).", format="uri")),
    },
    "Who to contact about these events.",
)

LICENSE = Obj(
    {
        "name": Field(_text("SPDX license identifier, e.g. EUPL-1.2 (or the licence's name)."), required=True),
        "url": Field(Str("Web page of the licence text (an absolute URI).", format="uri")),
    },
    "The licence of the events' definitions (AsyncAPI `info.license`, the docs, EventCatalog).",
)

PRODUCER = Obj(
    {
        "source": Field(
            _text("Default CloudEvents `source` of every event: a URI-reference, or a URI template of level 1 ({name}, catalog-format.md §9)."),
            required=True,
        ),
        "organization": Field(_text("Human name of the producing organization.")),
        "contact": Field(CONTACT),
    },
    "The system that publishes the events.",
)

DEFAULTS = Obj(
    {
        "datacontenttype": Field(_text("Default `datacontenttype` (an RFC 2046 media type).")),
        "time": Field(_text("Meaning of `time` for every event (NL GOV: MUST be documented).")),
        "id": Field(_text("Meaning of `id` for every event (NL GOV: MUST be documented when random).")),
    },
    "Values every event inherits unless it overrides them.",
)

SERVER = Obj(
    {
        "host": Field(_text("Host name, optionally with a port."), required=True),
        "protocol": Field(_text("Protocol, e.g. https, amqp, kafka, mqtt."), required=True),
        "pathname": Field(_text("Path on the host.")),
        "description": Field(_text("What this server is for.")),
    },
    "A server consumers connect to (used for AsyncAPI `servers` and the docs).",
)

EXTENSION = Obj(
    {
        "type": Field(Str("CloudEvents type of the attribute.", enum=EXTENSION_TYPES, check_enum=False), required=True),
        "required": Field(Bool("Whether every event carries it (default false).")),
        "description": Field(_text("Meaning of the attribute.")),
    },
    "An extension context attribute.",
)

EVENT = Obj(
    {
        "type": Field(_text("The CloudEvents `type`."), required=True),
        "dataversion": Field(
            Str("Version of the payload, MAJOR.MINOR.PATCH. Required when the event has data.", pattern=SEMVER_PATTERN)
        ),
        "title": Field(_text("Human title of the event."), required=True),
        "description": Field(_text("What happened, in Markdown.")),
        "source": Field(_text("Overrides producer.source (a URI-reference or a level-1 URI template).")),
        "subject": Field(_text("Meaning of `subject`; absent means the event carries none.")),
        "time": Field(_text("Meaning of `time`; overrides defaults.time.")),
        "id": Field(_text("Meaning of `id`; overrides defaults.id.")),
        "datacontenttype": Field(_text("Overrides defaults.datacontenttype.")),
        "dataschema": Field(_text("Absolute URI of the payload schema.")),
        "dataref": Field(_text("Meaning of `dataref`; absent means the event carries none.")),
        "sequence": Field(_text("The event carries `sequence`; the value is its `sequencetype` (e.g. Integer).")),
        "deprecated": Field(
            Either((Bool(), Str()), "true, or the reason and what to use instead (default false).")
        ),
        "extensions": Field(
            MapOf(EXTENSION, "Extension context attributes, by name ([a-z0-9]+).", key_pattern="^[a-z0-9]+$")
        ),
        "data": Field(PayloadSchema("The payload schema (JSON Schema 2020-12). Absent: a pure notification.")),
        "examples": Field(
            ListOf(AnyMapping("A full or partial event: context attributes and `data`."), description="Example events.")
        ),
        "rules": Field(
            MapOf(RULE_SETTING, "Rule id -> error | warning | off, for this event only (catalog-format.md §9).")
        ),
    },
    "One event type at one dataversion.",
)

CHANNEL_PROTOCOLS = ("kafka", "amqp", "mqtt", "http")

CHANNEL = Obj(
    {
        "protocol": Field(Str("How events travel on it.", enum=CHANNEL_PROTOCOLS), required=True),
        "address": Field(
            _text("Kafka topic, AMQP exchange, MQTT topic filter or URL path; may hold {parameters}."), required=True
        ),
        "description": Field(_text("What travels on this channel.")),
        "bindings": Field(
            AnyMapping("Protocol bindings: kafka key; amqp exchange, routingKey; mqtt qos, retain.")
        ),
    },
    "A channel events travel on (catalog-format.md §9).",
)

SERVICE_LINK = Obj(
    {
        "type": Field(_text("The CloudEvents type sent or received."), required=True),
        "dataversion": Field(_text("The dataversion, or a range in npm semver syntax (receives), e.g. >=1.0.0 <2.0.0.")),
        "channel": Field(_text("The channel it travels on (a key of channels).")),
    },
    "An event type a service sends or receives.",
)

SERVICE = Obj(
    {
        "title": Field(_text("Human title of the service.")),
        "description": Field(_text("What the service does, in Markdown.")),
        "owner": Field(CONTACT),
        "sends": Field(ListOf(SERVICE_LINK, description="Event types it publishes.")),
        "receives": Field(ListOf(SERVICE_LINK, description="Event types it consumes.")),
    },
    "A service that sends or receives events (catalog-format.md §9).",
)

CATALOG = Obj(
    {
        "catalog": Field(Str("Catalog id: lowercase kebab-case.", pattern=CATALOG_ID_PATTERN), required=True),
        "title": Field(_text("Human title of the catalog."), required=True),
        "description": Field(_text("What the catalog covers, in Markdown.")),
        "version": Field(Str("Version of this catalog document, MAJOR.MINOR.PATCH.", pattern=SEMVER_PATTERN), required=True),
        "profile": Field(Str(f"Rule set the catalog follows (default {DEFAULT_PROFILE.name}).", enum=PROFILES)),
        "producer": Field(PRODUCER, required=True),
        "license": Field(LICENSE),
        "defaults": Field(DEFAULTS),
        "servers": Field(MapOf(SERVER, "Servers by name.")),
        "rules": Field(MapOf(RULE_SETTING, "Rule id -> error | warning | off.")),
        "package": Field(
            Str("The generated Python import and distribution name (default: the catalog id with _).",
                pattern=PACKAGE_PATTERN)
        ),
        "channels": Field(MapOf(CHANNEL, "Channels by name: where events travel (catalog-format.md §9).")),
        "services": Field(MapOf(SERVICE, "Services by name: who sends and who receives (catalog-format.md §9).")),
        "schemas": Field(MapOf(PayloadSchema(), "Reusable payload schemas by PascalCase name.")),
        "events": Field(ListOf(EVENT, min_items=1, description="The event types."), required=True),
    },
    "An evcat event catalog.",
)


# A schema library: shared payload schemas (Adres, BSN, KvK-nummer, OIN)
# that catalogs of the directory `$ref` (`types.yaml#/schemas/Adres`). A
# file without `events` and without `catalog` and `producer` is one.
SCHEMA_LIBRARY = Obj(
    {
        "title": Field(_text("Human title of the shared schemas.")),
        "description": Field(_text("What the shared schemas are for, in Markdown.")),
        "version": Field(Str("Version of this file, MAJOR.MINOR.PATCH.", pattern=SEMVER_PATTERN)),
        "profile": Field(Str(f"Rule set the schemas follow (default {DEFAULT_PROFILE.name}).", enum=PROFILES)),
        "rules": CATALOG.fields["rules"],
        "schemas": Field(MapOf(PayloadSchema(), "Shared payload schemas by PascalCase name."), required=True),
    },
    "A schema library: shared payload schemas that the catalogs of the directory $ref; no events.",
)


def is_schema_library(value: Any) -> bool:
    """A file of shared schemas only: ``schemas`` without ``events``, ``catalog`` or ``producer``."""
    return (
        isinstance(value, dict)
        and "schemas" in value
        and not any(key in value for key in ("events", "catalog", "producer"))
    )


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_FORMATS = {"uri": is_uri, "email": lambda value: bool(_EMAIL.match(value))}


def reference_markdown() -> str:
    """Every key of the format as Markdown tables, one per mapping, from the
    declarations above (docs/catalog-format.md embeds it; a test compares)."""
    sections: list[str] = []

    def table(title: str, spec: Obj, prefix: str) -> None:
        rows = [f"### {title}", "", spec.description, "", "| key | required | value | meaning |", "|---|---|---|---|"]
        nested: list[tuple[str, Obj, str]] = []
        for name, entry in spec.fields.items():
            inner = entry.spec
            if isinstance(inner, ListOf) and isinstance(inner.items, Obj):
                nested.append((f"`{prefix}{name}[]`", inner.items, f"{prefix}{name}[]."))
            elif isinstance(inner, MapOf) and isinstance(inner.values, Obj):
                nested.append((f"`{prefix}{name}.<name>`", inner.values, f"{prefix}{name}.<name>."))
            elif isinstance(inner, Obj):
                nested.append((f"`{prefix}{name}`", inner, f"{prefix}{name}."))
            meaning = (inner.description or "").replace("|", "\\|")
            rows.append(f"| `{prefix}{name}` | {'yes' if entry.required else 'no'} | {_value_text(inner)} | {meaning} |")
        sections.append("\n".join(rows))
        for nested_title, nested_spec, nested_prefix in nested:
            table(nested_title, nested_spec, nested_prefix)

    table("A catalog file", CATALOG, "")
    table("A schema library file", SCHEMA_LIBRARY, "")
    return "\n\n".join(sections) + "\n"


def _value_text(spec: Spec) -> str:
    if isinstance(spec, Str) and spec.enum:
        return " \\| ".join(f"`{value}`" for value in spec.enum)
    if isinstance(spec, Str) and spec.pattern == SEMVER_PATTERN:
        return "string, MAJOR.MINOR.PATCH"
    if isinstance(spec, Str) and spec.format:
        return f"string ({spec.format})"
    if isinstance(spec, Str) and spec.pattern:
        return f"string matching `{spec.pattern}`"
    if isinstance(spec, MapOf):
        return f"mapping of {_value_text(spec.values)}" if not isinstance(spec.values, Obj) else "mapping by name"
    if isinstance(spec, ListOf):
        return "list" + (f", at least {spec.min_items}" if spec.min_items else "")
    if isinstance(spec, Either):
        return " or ".join(_value_text(option) for option in spec.options)
    if isinstance(spec, PayloadSchema):
        return "JSON Schema 2020-12"
    return spec.type_name().removeprefix("a ").removeprefix("an ")


def catalog_json_schema() -> dict[str, Any]:
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "https://evcat.dev/schema/catalog.json",
        "title": "evcat event catalog",
        "anyOf": [CATALOG.json_schema(), SCHEMA_LIBRARY.json_schema()],
    }


def check_structure(document: Document) -> Iterator[Diagnostic]:
    if document.value is None and not document.diagnostics:
        yield Diagnostic(
            "CAT-REQUIRED",
            Severity.ERROR,
            "the file is empty; a catalog needs at least catalog, title, version, producer and events",
            document.loc(()),
        )
        return
    if document.value is None:
        return
    if is_schema_library(document.value):
        yield from _check(SCHEMA_LIBRARY, document.value, (), document, "the schema library file")
        return
    yield from _check(CATALOG, document.value, (), document, "the catalog file")


def _check(spec: Spec, value: Any, path: Path, document: Document, what: str) -> Iterator[Diagnostic]:
    if not spec.accepts(value):
        yield _type_error(spec, value, path, document, what)
        return
    if isinstance(spec, Obj):
        # A typo of a required key is one mistake: one diagnostic, at the
        # typo, not a second one for the key it misses.
        meant: set[str] = set()
        for key, child in value.items():
            if key not in spec.fields:
                suggestion = _suggestion(key, [name for name in spec.fields if name not in value])
                required = suggestion is not None and spec.fields[suggestion].required
                if suggestion is not None and required:
                    meant.add(suggestion)
                yield Diagnostic(
                    "CAT-UNKNOWN-KEY",
                    Severity.ERROR,
                    f"unknown key '{key}' in {what}{did_you_mean(key, spec.fields)}"
                    + (f" ({what} needs '{suggestion}')" if required else "")
                    + ("; a comma in an unquoted value inside { } starts a new key: quote the value before it" if " " in key else ""),
                    document.key_loc(path + (key,)),
                    suggestion=suggestion or _suggestion(key, spec.fields),
                )
                continue
            yield from _check(spec.fields[key].spec, child, path + (key,), document, f"'{key}'")
        missing = [name for name, f in spec.fields.items() if f.required and name not in value and name not in meant]
        for name in missing:
            yield Diagnostic(
                "CAT-REQUIRED",
                Severity.ERROR,
                f"{what} is missing the required key '{name}'",
                document.loc(path),
            )
    elif isinstance(spec, MapOf):
        for key, child in value.items():
            yield from _check(spec.values, child, path + (key,), document, f"'{key}'")
    elif isinstance(spec, ListOf):
        if len(value) < spec.min_items:
            yield Diagnostic(
                "CAT-REQUIRED",
                Severity.ERROR,
                f"{what} needs at least {spec.min_items} entr{'y' if spec.min_items == 1 else 'ies'}",
                document.loc(path),
            )
        noun = what.strip("'")
        for index, child in enumerate(value):
            yield from _check(spec.items, child, path + (index,), document, f"{noun}[{index}]")
    elif isinstance(spec, Either):
        for option in spec.options:
            if option.accepts(value):
                yield from _check(option, value, path, document, what)
                break
    elif isinstance(spec, Str) and spec.format and not _FORMATS[spec.format](value):
        yield Diagnostic(
            "CAT-TYPE",
            Severity.ERROR,
            f"{what} '{value}' is not {'an absolute URI (RFC 3986); percent-encode characters such as spaces and <>' if spec.format == 'uri' else 'an e-mail address'}",
            document.loc(path),
        )
    elif isinstance(spec, Str) and spec.enum and spec.check_enum and value not in spec.enum:
        yield Diagnostic(
            "CAT-TYPE",
            Severity.ERROR,
            f"{what} must be one of {', '.join(spec.enum)}, not '{value}'{did_you_mean(value, spec.enum)}",
            document.loc(path),
            suggestion=_suggestion(value, spec.enum),
        )


def _suggestion(name: str, candidates: Any) -> str | None:
    from .naming import closest

    return closest(name, candidates)


def _type_error(spec: Spec, value: Any, path: Path, document: Document, what: str) -> Diagnostic:
    got = _yaml_type(value)
    hint = ""
    suggestion = None
    if isinstance(spec, Str) and spec.pattern == SEMVER_PATTERN and isinstance(value, (int, float)) and not isinstance(value, bool):
        # `version: 1.0` is a number to YAML and not MAJOR.MINOR.PATCH either: one step fixes both.
        fixed = _semver_text(str(document.scalar_text.get(path, value)))
        suggestion = f"'{fixed}'"
        hint = f"; write {suggestion} (MAJOR.MINOR.PATCH, quoted)"
    elif isinstance(spec, Str) and isinstance(value, (int, float)) and not isinstance(value, bool):
        hint = f"; quote it: '{document.scalar_text.get(path, value)}'"
    elif isinstance(spec, Str) and isinstance(value, bool):
        hint = "; quote it (YAML reads yes/no/on/off/true/false as booleans)"
    elif isinstance(spec, Str) and value is None:
        hint = "; give a value or remove the key"
    return Diagnostic(
        "CAT-TYPE",
        Severity.ERROR,
        f"{what} must be {spec.type_name()}, not {got}{hint}",
        document.loc(path),
        suggestion=suggestion,
    )


def _semver_text(text: str) -> str:
    """``1`` -> ``1.0.0``, ``1.0`` -> ``1.0.0``, ``2.1`` -> ``2.1.0``."""
    numbers = [str(int(part)) if part.isdigit() else "0" for part in text.split(".")][:3]
    return ".".join(numbers + ["0"] * (3 - len(numbers)))


def _yaml_type(value: Any) -> str:
    if value is None:
        return "null (empty)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a mapping"
