"""Stage 2: the typed intermediate model every later stage reads.

Frozen dataclasses; nothing after this stage touches raw YAML. Payload
schemas are JSON data (JSON Schema 2020-12) whose ``$ref`` values have been
rewritten from the catalog form (``#/schemas/Address``,
``other.yaml#/schemas/Address``) to ``#/$defs/<SchemaName>``, where
``SchemaName`` is unique in the whole catalog directory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .. import vocabulary
from ..naming import python_package_name
from ..string_formats import in_npm_range
from ..profiles import Profile
from ..runtime._uritemplate import TemplateError, is_template, sample
from ..runtime._uritemplate import parameters as template_parameters

JSON = Any


@dataclass(frozen=True)
class Contact:
    name: str | None = None
    email: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class License:
    """The catalog's ``license``: an SPDX identifier as ``name``, and a URL."""

    name: str
    url: str | None = None


@dataclass(frozen=True)
class Producer:
    source: str
    organization: str | None = None
    contact: Contact | None = None


@dataclass(frozen=True)
class Server:
    name: str
    host: str
    protocol: str
    pathname: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class Channel:
    """Where events travel (catalog-format.md §9): a Kafka topic, an AMQP
    exchange, an MQTT topic filter or a webhook URL path."""

    name: str
    protocol: str  # kafka | amqp | mqtt | http
    address: str  # may hold {parameters} (RFC 6570 level 1)
    description: str | None = None
    bindings: tuple[tuple[str, JSON], ...] = ()  # as written, in order
    file: str = ""
    path: tuple[str | int, ...] = field(default=(), compare=False)

    @property
    def parameters(self) -> tuple[str, ...]:
        """The names of the address's ``{parameters}``, in order, each once."""
        return tuple(dict.fromkeys(_PARAMETER.findall(self.address)))


_PARAMETER = re.compile(r"\{([^{}]+)\}")
def address_problem(address: str) -> str | None:
    """Why ``address`` is not a level-1 URI template (RFC 6570 §1.2, §2;
    runtime/_uritemplate.py, the one home of the grammar), or None."""
    try:
        template_parameters(address)
    except TemplateError as error:
        return str(error)
    return None


@dataclass(frozen=True)
class Link:
    """One entry of a service's ``sends`` or ``receives``."""

    type: str
    dataversion: str | None = None  # sends: a version; receives: an npm semver range
    channel: str | None = None
    path: tuple[str | int, ...] = field(default=(), compare=False)

    def sends(self, event: EventType) -> bool:
        """A ``sends`` entry covers ``event``: same type, and its dataversion
        (absent: every dataversion of the type)."""
        return self.type == event.type and (self.dataversion is None or self.dataversion == event.dataversion)

    def receives(self, type: str, dataversion: str | None) -> bool:
        """A ``receives`` entry covers (type, dataversion): same type, and the
        version in its npm semver range (absent: every dataversion)."""
        if self.type != type:
            return False
        if self.dataversion is None:
            return True
        return dataversion is not None and in_npm_range(dataversion, self.dataversion)


@dataclass(frozen=True)
class Service:
    """A service that sends or receives events (catalog-format.md §9)."""

    name: str
    title: str
    description: str | None = None
    owner: Contact | None = None
    sends: tuple[Link, ...] = ()
    receives: tuple[Link, ...] = ()
    file: str = ""
    path: tuple[str | int, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Extension:
    """An extension context attribute (CloudEvents 1.0.2 §3.1, §3.3)."""

    name: str
    type: str
    required: bool = False
    description: str | None = None


@dataclass(frozen=True)
class SharedSchema:
    """An entry of ``schemas``; ``name`` is its unique name in the directory."""

    name: str
    declared_name: str
    file: str
    schema: JSON
    # Where it sits in its file, e.g. ("schemas", "Address").
    path: tuple[str | int, ...] = field(default=(), compare=False)

    @property
    def description(self) -> str | None:
        return self.schema.get("description") if isinstance(self.schema, dict) else None


@dataclass(frozen=True)
class Payload:
    """The payload schema of one event, refs rewritten, with what it uses."""

    schema: JSON
    # Names of the shared schemas reachable from ``schema`` (transitively), sorted.
    uses: tuple[str, ...] = ()

    def bundled(self, shared: Mapping[str, SharedSchema]) -> JSON:
        """One self-contained JSON Schema: the root plus ``$defs`` it needs."""
        if not self.uses:
            return self.schema
        root = dict(self.schema) if isinstance(self.schema, dict) else {"allOf": [self.schema]}
        defs = dict(root.get("$defs", {}))
        for name in self.uses:
            defs[name] = shared[name].schema
        root["$defs"] = defs
        return root


@dataclass(frozen=True)
class Example:
    index: int
    values: Mapping[str, JSON]


@dataclass(frozen=True)
class ContextAttribute:
    """One context attribute of an event type under its profile (CloudEvents 1.0.2 §3).

    Worked out once per event type (``EventType.attributes``); every output
    maps these: the Python annotation, the JSON Schema, the ``ce-`` header,
    the docs row and the instance check."""

    name: str  # on the wire
    type: str  # CloudEvents type (vocabulary.TYPES)
    required: bool  # must be on the wire
    fixed: str | None = None  # the only value it may have (specversion, type, dataversion, sequencetype)
    default: str | None = None  # the catalog's value, set when a program constructs an event
    meaning: str | None = None  # what the catalog says it means
    pattern: str | None = None  # an exact form (JSON Schema pattern): Het Normo time, Integer sequence
    non_empty: bool = False
    media_type: bool = False  # datacontenttype: RFC 2046 grammar
    extension: bool = False  # an extension attribute (not a core one)
    rule: str | None = None  # the rule broken by a missing required value (default CE-REQUIRED)
    # source: the catalog's source when it is a URI template (catalog-format.md
    # §9): a constructing program gives the value, there is no default.
    template: str | None = None
    # source: the catalog's source, fixed or a template, that every judge holds
    # the value to (CE-SOURCE-MATCH set to error for the event); None: not judged.
    match: str | None = None


@dataclass(frozen=True)
class EventType:
    """One (type, dataversion) entry of a catalog."""

    type: str
    title: str
    catalog_id: str
    profile: Profile
    source: str
    dataversion: str | None = None
    description: str | None = None
    subject: str | None = None
    time: str | None = None
    id: str | None = None
    datacontenttype: str | None = None
    dataschema: str | None = None
    dataref: str | None = None
    sequencetype: str | None = None
    deprecated: bool = False
    deprecation: str | None = None
    # The catalog directory has other dataversions of this type: an event must
    # carry dataversion to be told apart (contract §5).
    several_dataversions: bool = False
    extensions: tuple[Extension, ...] = ()
    payload: Payload | None = None
    examples: tuple[Example, ...] = ()
    # The event's own `rules:` (catalog-format.md §9): rule id -> error | warning | off.
    rules: tuple[tuple[str, str], ...] = ()
    # The `rules:` of its file, which its own override (rules.overrides.event_severity).
    file_rules: tuple[tuple[str, str], ...] = ()
    file: str = ""
    # Where it sits in its file, e.g. ("events", 3).
    path: tuple[str | int, ...] = field(default=(), compare=False)

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.type, self.dataversion)

    @property
    def has_data(self) -> bool:
        return self.payload is not None

    def rule_setting(self, rule_id: str) -> str | None:
        """The catalog's setting of ``rule_id`` for this event (``error``,
        ``warning`` or ``off``): its own ``rules``, else its file's (the
        nearest wins, catalog-format.md §9); None: the rule's default."""
        for rules in (self.rules, self.file_rules):
            for known, setting in rules:
                if known == rule_id:
                    return setting
        return None

    @cached_property
    def attributes(self) -> tuple[ContextAttribute, ...]:
        """The context attributes of this event type under its profile, in wire order."""
        return context_attributes(self)

    def uses(self, attribute: ContextAttribute) -> bool:
        """Does the catalog say anything about ``attribute`` for this event type?
        The optional core attributes exist on every event (CloudEvents 1.0.2
        §3.1.2), but a catalog uses ``subject`` only where it gives its
        meaning, ``datacontenttype`` only for events with data and
        ``dataschema`` only where it names one."""
        if attribute.required or attribute.name not in ("subject", "datacontenttype", "dataschema"):
            return True
        return bool({"subject": self.subject, "datacontenttype": self.has_data, "dataschema": attribute.default}[attribute.name])

    @cached_property
    def attribute_map(self) -> dict[str, ContextAttribute]:
        return {attribute.name: attribute for attribute in self.attributes}

    def complete_example(self, values: Mapping[str, JSON]) -> dict[str, JSON]:
        """A catalog example (a partial event) filled up to a full structured-mode
        event: what a program constructing it would send. Fills the attributes
        with a fixed or catalog value, ``id``, and ``time`` where the profile
        requires it; required extensions and ``sequence`` must be in the example."""
        full: dict[str, JSON] = {}
        for attribute in self.attributes:
            if attribute.fixed is not None and attribute.name != "sequencetype":
                full[attribute.name] = attribute.fixed
            elif attribute.name == "id":
                full["id"] = EXAMPLE_ID
            elif attribute.name == "time" and attribute.required:
                full["time"] = EXAMPLE_TIME
            elif attribute.default is not None and attribute.name in ("source", "datacontenttype"):
                full[attribute.name] = attribute.default
            elif attribute.template is not None:  # a templated source: each parameter a sample value
                full[attribute.name] = _sample(attribute.template)
        full.update(values)
        return full


EXAMPLE_ID = "example"
EXAMPLE_TIME = "2024-01-01T00:00:00.000000Z"


def _sample(template: str) -> str:
    """``template`` with sample parameters (a malformed one, which lint
    refuses, as written)."""
    try:
        return sample(template)
    except TemplateError:
        return template


def _source_attribute(event: EventType) -> ContextAttribute:
    """``source``: the catalog's value as the default, or, where it is a URI
    template (catalog-format.md §9), no default; held to the catalog's source
    by every judge where CE-SOURCE-MATCH is an error (its default severity is
    a warning: rules.md)."""
    templated = is_template(event.source)
    return ContextAttribute(
        "source", "URI-reference", True, default=None if templated else event.source,
        meaning="Where the event comes from.", non_empty=True,
        template=event.source if templated else None,
        match=event.source if event.rule_setting("CE-SOURCE-MATCH") == "error" else None,
    )


def context_attributes(event: EventType) -> tuple[ContextAttribute, ...]:
    """CloudEvents 1.0.2 §3.1 core attributes, the catalog's documented
    extensions and its own, under the event's profile (contract §5)."""
    profile = event.profile
    with_data = {name: rule for name, rule, _ in profile.required_with_data} if event.has_data else {}
    attributes = [
        ContextAttribute("specversion", "String", True, fixed=vocabulary.SPECVERSION, meaning="CloudEvents specification version."),
        ContextAttribute("type", "String", True, fixed=event.type, meaning="The CloudEvents type."),
    ]
    if event.dataversion is not None:
        # NL GOV dataversion extension: optional on the wire unless the profile requires it (Het Normo ID07).
        required = "dataversion" in with_data or event.several_dataversions
        rule = with_data.get("dataversion") or ("CE-UNKNOWN-EVENT" if event.several_dataversions else None)
        attributes.append(
            ContextAttribute("dataversion", "String", required, fixed=event.dataversion,
                             meaning="Version of the payload.", extension=True, rule=rule)
        )
    attributes += [
        ContextAttribute("id", "String", True, meaning=event.id or "Identifies the event.", non_empty=True),
        _source_attribute(event),
    ]
    attributes.append(
        ContextAttribute("time", "Timestamp", profile.time_required, meaning=event.time, pattern=profile.time_pattern,
                         rule=profile.time_rule if profile.time_required else None)
    )
    attributes.append(ContextAttribute("subject", "String", False, meaning=event.subject, non_empty=True))
    attributes.append(
        ContextAttribute("datacontenttype", "String", "datacontenttype" in with_data,
                         default=event.datacontenttype if event.has_data else None, meaning="Media type of data.",
                         media_type=True, rule=with_data.get("datacontenttype"))
    )
    attributes.append(ContextAttribute("dataschema", "URI", False, default=event.dataschema, meaning="Schema of data."))
    if event.dataref:
        attributes.append(ContextAttribute("dataref", "URI-reference", False, meaning=event.dataref, extension=True))
    if event.sequencetype:
        integer = event.sequencetype.lower() == "integer"
        attributes.append(
            ContextAttribute("sequence", "String", True, meaning=f"Position in the sequence ({event.sequencetype}).",
                             pattern=vocabulary.INT32_STRING_SCHEMA_PATTERN if integer else None, non_empty=True, extension=True,
                             rule="CE-SEQUENCE")
        )
        attributes.append(ContextAttribute("sequencetype", "String", False, fixed=event.sequencetype, extension=True))
    for extension in event.extensions:
        attributes.append(
            ContextAttribute(extension.name, extension.type if extension.type in vocabulary.TYPES else "String",
                             extension.required, meaning=extension.description, extension=True)
        )
    return tuple(attributes)


@dataclass(frozen=True)
class Catalog:
    """All documents of the directory that share one ``catalog`` id."""

    id: str
    title: str
    version: str
    profile: Profile
    producer: Producer
    description: str | None = None
    servers: tuple[Server, ...] = ()
    events: tuple[EventType, ...] = ()
    files: tuple[str, ...] = ()
    license: License | None = None
    package: str | None = None  # as written; None: the catalog id with _ (catalog-format.md §9)
    channels: tuple[Channel, ...] = ()
    services: tuple[Service, ...] = ()

    @property
    def package_name(self) -> str:
        """The generated package's import and distribution name."""
        return self.package or python_package_name(self.id)

    def channels_of(self, event: EventType) -> tuple[Channel, ...]:
        """The channels ``event`` travels on (catalog-format.md §9): those its
        sending services name, or every channel of the catalog when it has no
        services. The one answer every stage asks (lint, AsyncAPI, the
        generated package, docs)."""
        if not self.services:
            return self.channels
        named = {
            link.channel for service in self.services for link in service.sends if link.channel and link.sends(event)
        }
        return tuple(channel for channel in self.channels if channel.name in named)

    def senders_of(self, event: EventType) -> tuple[Service, ...]:
        """The services whose ``sends`` cover ``event``."""
        return tuple(service for service in self.services if any(link.sends(event) for link in service.sends))

    def receivers_of(self, type: str, dataversion: str | None) -> tuple[Service, ...]:
        """The services whose ``receives`` cover (type, dataversion)."""
        return tuple(
            service for service in self.services if any(link.receives(type, dataversion) for link in service.receives)
        )


@dataclass(frozen=True)
class CatalogSet:
    """Everything read from one catalog directory."""

    catalogs: tuple[Catalog, ...]
    schemas: Mapping[str, SharedSchema]

    @property
    def events(self) -> tuple[EventType, ...]:
        return tuple(event for catalog in self.catalogs for event in catalog.events)
