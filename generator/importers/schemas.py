"""JSON Schemas from elsewhere as catalog payload schemas (2020-12, §1).

Every ``$ref`` is followed with ``referencing`` (``sources.Refs``) and each
distinct target becomes one shared catalog schema (``#/schemas/Name``):
references are never inlined, so a document whose references fan out (a
"billion laughs" of ``$ref``s) costs what it holds, and recursive schemas
stay recursive. Older dialects are brought to 2020-12 (``definitions`` ->
shared schemas, array ``items`` -> ``prefixItems``, boolean
``exclusiveMinimum``); a keyword that is not JSON Schema 2020-12 is a note.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag

from ..schemawalk import KEYWORDS, LIST_OF_SCHEMAS, MAP_OF_SCHEMAS, ONE_SCHEMA
from . import Note
from .sources import RefError, Refs, parse_pointer

_DROPPED = frozenset(("$schema", "$id", "id", "$anchor", "$dynamicAnchor", "$vocabulary", "$comment"))
MAX_SCHEMA_DEPTH = 200


def _child(uri: str, *parts: str | int) -> str:
    base, fragment = urldefrag(uri)
    return base + "#" + fragment + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass
class SchemaImporter:
    refs: Refs
    notes: list[Note]
    shared: dict[str, Any] = field(default_factory=dict)  # catalog `schemas`, by name
    names: dict[str, str] = field(default_factory=dict)  # target URI -> shared name
    # Names a kind wants for some targets (AsyncAPI components/schemas keys).
    preferred: dict[str, str] = field(default_factory=dict)
    contents: dict[tuple[str, str], str] = field(default_factory=dict)  # (pointer, JSON) -> shared name
    pending: list[tuple[str, str, Any]] = field(default_factory=list)  # shared schemas still to convert
    _draining: bool = False

    def convert(self, schema: Any, uri: str) -> Any:
        """``schema`` (standing at ``uri``, a file URI with a pointer
        fragment) as a catalog payload schema; the shared schemas it reaches
        are converted too, one after the other (a chain of references costs
        no stack)."""
        result = self._convert(schema, uri, 0)
        self._drain()
        return result

    def _drain(self) -> None:
        if self._draining:
            return
        self._draining = True
        try:
            while self.pending:
                name, where, target = self.pending.pop()
                self.shared[name] = self._convert(target, where, 0)
        finally:
            self._draining = False

    def _convert(self, schema: Any, uri: str, depth: int) -> Any:
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, dict):
            self.notes.append(self.refs.note(uri, "not a JSON Schema (neither an object nor a boolean); read as {}"))
            return {}
        if depth > MAX_SCHEMA_DEPTH:
            self.notes.append(self.refs.note(uri, f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels; the rest is left out"))
            return {}
        result: dict[str, Any] = {}
        for keyword, value in schema.items():
            at = _child(uri, keyword)
            if keyword == "$ref":
                name = self._shared_ref(value, uri) if isinstance(value, str) else None
                if name is not None:
                    result["$ref"] = f"#/schemas/{name}"
            elif keyword in ("$defs", "definitions"):
                if isinstance(value, dict):
                    for member in value:  # each one a shared schema, referenced or not
                        self.shared_name(_child(at, member), value[member])
            elif keyword in _DROPPED:
                if keyword in ("$id", "id") and depth == 0 or keyword in ("$schema", "$comment"):
                    continue
                self.notes.append(self.refs.note(at, f"'{keyword}' left out (the catalog names schemas itself)"))
            elif keyword in MAP_OF_SCHEMAS and isinstance(value, dict):
                result[keyword] = {name: self._convert(sub, _child(at, name), depth + 1) for name, sub in value.items()}
            elif keyword == "items" and isinstance(value, list):  # draft 2019 and before: a tuple
                result["prefixItems"] = [self._convert(sub, _child(at, i), depth + 1) for i, sub in enumerate(value)]
                extra = schema.get("additionalItems")
                if extra is not None:
                    result["items"] = self._convert(extra, _child(uri, "additionalItems"), depth + 1)
            elif keyword == "additionalItems":
                if not isinstance(schema.get("items"), list):
                    self.notes.append(self.refs.note(at, "'additionalItems' without an array 'items' means nothing; left out"))
            elif keyword in ONE_SCHEMA:
                result[keyword] = self._convert(value, at, depth + 1)
            elif keyword in LIST_OF_SCHEMAS and isinstance(value, list):
                result[keyword] = [self._convert(sub, _child(at, i), depth + 1) for i, sub in enumerate(value)]
            elif keyword in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
                bound = "minimum" if keyword == "exclusiveMinimum" else "maximum"
                if value and isinstance(schema.get(bound), (int, float)):
                    result[keyword] = schema[bound]
            elif keyword in ("minimum", "maximum") and schema.get("exclusiveM" + keyword[1:]) is True:
                continue  # written as the exclusive bound above
            elif keyword in KEYWORDS or keyword.startswith("x-"):
                result[keyword] = value
            else:
                self.notes.append(self.refs.note(at, f"'{keyword}' is not a JSON Schema 2020-12 keyword; left out"))
        return result

    def shared_ref(self, ref: str, uri: str) -> str | None:
        """The shared schema name of what ``ref`` (written at ``uri``) points at."""
        name = self._shared_ref(ref, uri)
        self._drain()
        return name

    def _shared_ref(self, ref: str, uri: str) -> str | None:
        try:
            target, where = self.refs.resolve(ref, uri)
        except RefError as error:
            self.notes.append(self.refs.note(_child(uri, "$ref"), f"$ref not followed: {error}"))
            return None
        return self.shared_name(where, target)

    def shared_name(self, where: str, target: Any) -> str:
        if where in self.names:
            return self.names[where]
        # The same schema under the same name in several files of one import
        # (AsyncAPI documents of one system, each with its components) is one.
        same = (urldefrag(where)[1], json.dumps(target, sort_keys=True, default=str))
        if same in self.contents:
            self.names[where] = self.contents[same]
            return self.names[where]
        name = self._new_name(where, target)
        self.contents[same] = name
        self.names[where] = name
        self.shared[name] = {}  # reserved; converted by ``convert`` when the schema that reached it is done
        self.pending.append((name, where, target))
        return name

    def _new_name(self, where: str, target: Any) -> str:
        base = self.preferred.get(where)
        if base is None:
            file_uri, fragment = urldefrag(where)
            parts = parse_pointer(fragment) if fragment.startswith("/") else ((fragment,) if fragment else ())
            if parts:
                base = parts[-1]
            elif isinstance(target, dict) and isinstance(target.get("title"), str):
                base = target["title"]
            else:
                base = file_uri.rsplit("/", 1)[-1].split(".", 1)[0]
        base = schema_name(base)
        name, counter = base, 2
        while name in self.shared:
            name, counter = f"{base}{counter}", counter + 1
        return name


def schema_name(text: str) -> str:
    """A shared schema name: the source's name when it is already one
    (letters, digits, ``_``, starting with a letter), else PascalCase of its words."""
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", text):
        return text
    words = re.findall(r"[A-Za-z0-9]+", text)
    name = "".join(word[:1].upper() + word[1:] for word in words)
    if not name or not name[0].isalpha():
        name = "Schema" + name
    return name
