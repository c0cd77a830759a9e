"""Stage 4: renderers. Each reads the model and returns {relative path: bytes}.

A renderer never re-reads YAML and never writes: ``writer.write`` does.
"""

from __future__ import annotations

import json
from typing import Any

from ..formats import semver_key
from ..model import CatalogSet, EventType
from ..naming import safe_file_name

KINDS = ("python", "jsonschema", "asyncapi", "docs")


def dump_json(value: Any) -> bytes:
    """Deterministic JSON: 2-space indent, UTF-8, newline at the end."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def event_order(event: EventType) -> tuple[str, tuple[int, int, int]]:
    """Events by type, then dataversion numerically (1.10.0 after 1.9.0)."""
    return (event.type, semver_key(event.dataversion or ""))


def sorted_events(catalog_set: CatalogSet) -> list[EventType]:
    return sorted(catalog_set.events, key=lambda e: (e.catalog_id, *event_order(e)))


def event_dir(event: EventType) -> str:
    """``<catalog>/<type>/<dataversion>``: every part through safe_file_name."""
    version = event.dataversion or "notification"
    return f"{safe_file_name(event.catalog_id)}/{safe_file_name(event.type)}/{safe_file_name(version)}"
