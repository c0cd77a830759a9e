"""`evcat import jsonschema FILE|FOLDER...` (contract §10).

One event type per schema file (``*.json``, ``*.yaml``, ``*.yml``; folders
searched recursively): the CloudEvents ``type`` is ``--type-prefix`` plus
the schema's ``title`` (or the file's name) in kebab-case; ``title``,
``description`` and ``examples`` carried over. ``$defs`` (and draft-07
``definitions``) become the catalog's shared ``schemas``, references
rewritten to ``#/schemas/Name``; a file that holds only definitions is a
library of shared schemas, not an event type. ``$ref`` reaches only files
inside the folder given (or the folder of the file given).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import Imported, Note, Options, SourceError
from .schemas import SchemaImporter
from .settle import catalog_id
from .sources import Refs

SUFFIXES = (".json", ".yaml", ".yml")
_LIBRARY_KEYS = frozenset(("$schema", "$id", "id", "$defs", "definitions", "title", "description", "$comment"))
_SCHEMA_HINTS = frozenset(("type", "properties", "$ref", "allOf", "anyOf", "oneOf", "items", "enum", "const",
                           "$defs", "definitions", "$schema", "required", "not", "if"))


def read(sources: Sequence[Path], options: Options) -> Imported:
    notes: list[Note] = []
    events: list[dict[str, Any]] = []
    shared: dict[str, Any] = {}
    types: set[str] = set()
    for source in sources:
        root = source if source.is_dir() else source.parent
        files = _schema_files(source) if source.is_dir() else [source]
        if not files:
            raise SourceError(Note(str(source), "", "no schema files (*.json, *.yaml, *.yml) in this folder", kind="error"))
        refs = Refs(root)
        importer = SchemaImporter(refs, notes, shared=shared)
        for file in files:
            document = refs.load(file, str(file))
            schema = document.value
            if not isinstance(schema, (dict, bool)) or isinstance(schema, dict) and schema and not _SCHEMA_HINTS & schema.keys():
                if len(files) == 1 and len(sources) == 1:
                    raise SourceError(document.note((), "not a JSON Schema (an object with schema keywords)", kind="error"))
                notes.append(document.note((), "not a JSON Schema; skipped"))
                continue
            if isinstance(schema, dict) and schema.keys() <= _LIBRARY_KEYS and ("$defs" in schema or "definitions" in schema):
                importer.convert(schema, document.uri + "#")  # its definitions become shared schemas
                continue
            data = importer.convert(schema, document.uri + "#")
            title = schema.get("title") if isinstance(schema, dict) and isinstance(schema.get("title"), str) else None
            name = _type_name(title or file.stem)
            event_type = f"{options.type_prefix.rstrip('.')}.{name}" if options.type_prefix else name
            if event_type in types:
                counter = 2
                while f"{event_type}-{counter}" in types:
                    counter += 1
                notes.append(document.note((), f"type '{event_type}' is taken by another schema; this one is "
                                           f"'{event_type}-{counter}'", kind="derived"))
                event_type = f"{event_type}-{counter}"
            types.add(event_type)
            event: dict[str, Any] = {"type": event_type, "title": title or _title(file.stem)}
            if isinstance(schema, dict) and isinstance(schema.get("description"), str):
                event["description"] = schema["description"]
            event["dataversion"] = _version(schema)
            event["data"] = data
            if isinstance(schema, dict) and isinstance(schema.get("examples"), list) and schema["examples"]:
                event["examples"] = [{"data": example} for example in schema["examples"][:5]]
            events.append(event)
    if not events:
        raise SourceError(Note(str(sources[0]), "", "no event schemas found (only definitions or no schemas)", kind="error"))
    identifier = options.catalog_id or catalog_id(sources[0].resolve().stem if sources[0].is_file() else sources[0].resolve().name)
    document: dict[str, Any] = {"catalog": identifier}
    if len(sources) == 1 and sources[0].is_file() and isinstance(title := _first_title(events), str):
        document["title"] = title
    if shared:
        document["schemas"] = shared
    document["events"] = events
    return Imported({f"{identifier}.yaml": document}, notes)


def _schema_files(folder: Path) -> list[Path]:
    found = []
    for directory, subdirs, files in os.walk(folder):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d != "node_modules")
        found.extend(Path(directory) / name for name in sorted(files) if name.endswith(SUFFIXES) and not name.startswith("."))
    return found


def _type_name(text: str) -> str:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return "-".join(re.findall(r"[a-z0-9]+", words.lower())) or "event"


def _title(stem: str) -> str:
    return " ".join(re.findall(r"[A-Za-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", stem))).capitalize() or stem


def _version(schema: Any) -> str:
    from .settle import semver

    for key in ("x-version", "version"):
        value = schema.get(key) if isinstance(schema, dict) else None
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return semver(str(value))
    return "1.0.0"


def _first_title(events: list[dict[str, Any]]) -> str | None:
    return events[0].get("title") if len(events) == 1 else None
