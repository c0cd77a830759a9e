"""Stage 2: the typed intermediate model every later stage reads.

Frozen dataclasses; nothing after this stage touches raw YAML. Payload
schemas are JSON data (JSON Schema 2020-12) whose ``$ref`` values have been
rewritten from the catalog form (``#/schemas/Address``,
``other.yaml#/schemas/Address``) to ``#/$defs/<SchemaName>``, where
``SchemaName`` is unique in the whole catalog directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


JSON = Any
Profile = str  # "cloudevents" | "nlgov" | "normo"


@dataclass(frozen=True)
class Contact:
    name: str | None = None
    email: str | None = None
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
    extensions: tuple[Extension, ...] = ()
    payload: Payload | None = None
    examples: tuple[Example, ...] = ()
    file: str = ""
    # Where it sits in its file, e.g. ("events", 3).
    path: tuple[str | int, ...] = field(default=(), compare=False)

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.type, self.dataversion)

    @property
    def has_data(self) -> bool:
        return self.payload is not None


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


@dataclass(frozen=True)
class CatalogSet:
    """Everything read from one catalog directory."""

    catalogs: tuple[Catalog, ...]
    schemas: Mapping[str, SharedSchema]

    @property
    def events(self) -> tuple[EventType, ...]:
        return tuple(event for catalog in self.catalogs for event in catalog.events)
