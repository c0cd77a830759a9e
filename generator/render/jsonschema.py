"""JSON Schema draft 2020-12 of every payload and every full CloudEvent envelope.

The schemas come from ``envelope.py``, the one builder: ``event.schema.json``
is self-contained (contract §4.1: the payload and the shared schemas it uses
under ``$defs``), ``data.schema.json`` is the payload alone. Contract §4:
``jsonschema/index.json``.
"""

from __future__ import annotations

from typing import Any

from ..envelope import event_schemas
from ..model import CatalogSet
from ..naming import envelope_class_names
from . import Unit, catalog_inputs, dump_json, event_dir, partial_set, render_all, sorted_events


def units(catalog_set: CatalogSet) -> list[Unit]:
    """The schemas of each catalog, and the index of all."""
    result = [Unit("jsonschema", catalog.id, catalog_inputs(catalog, catalog_set), _render_catalog) for catalog in catalog_set.catalogs]
    result.append(Unit("jsonschema", "index.json", (catalog_set.catalogs,), _render_index, local=True))
    return result


def _render_catalog(inputs: tuple[Any, ...]) -> dict[str, bytes]:
    catalog, schemas = inputs
    catalog_set = partial_set((catalog,), schemas)
    files: dict[str, bytes] = {}
    names = envelope_class_names(event.key for event in catalog.events)  # titles: the Python class names
    memo: dict[tuple[str, bool], Any] = {}  # each shared schema titled once for the catalog
    for event in catalog.events:
        folder = event_dir(event)
        data, envelope = event_schemas(event, catalog_set.schemas, names[event.key], memo)
        if data is not None:
            files[f"jsonschema/{folder}/data.schema.json"] = dump_json(data)
        files[f"jsonschema/{folder}/event.schema.json"] = dump_json(envelope)
    return files


def _render_index(inputs: tuple[Any, ...]) -> dict[str, bytes]:
    (catalogs,) = inputs
    index = []
    for event in sorted_events(partial_set(catalogs)):
        folder = event_dir(event)
        entry: dict[str, Any] = {"type": event.type, "dataversion": event.dataversion, "data": None}
        if event.payload is not None:
            entry["data"] = f"{folder}/data.schema.json"
        entry["event"] = f"{folder}/event.schema.json"
        index.append(entry)
    return {"jsonschema/index.json": dump_json(index)}


def render(catalog_set: CatalogSet) -> dict[str, bytes]:
    return render_all(units(catalog_set))
