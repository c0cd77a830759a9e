"""Completion items for ``evcat lsp``: catalog keys (from the format's
declaration), ``$ref`` targets, extension types, profile names, JSON Schema
keywords, types and formats."""

from __future__ import annotations

import os

from lsprotocol import types

from ..catalog_format import CATALOG, EXTENSION_TYPES, PROFILES, ListOf, MapOf, Obj, Spec
from ..schemawalk import FORMATS, SCHEMA_TYPES
from .folder import Folder


def ref_items(folder: Folder, display: str) -> list[types.CompletionItem]:
    items = []
    base = os.path.dirname(display)
    for other, document in sorted(folder.documents.items()):
        schemas = document.value.get("schemas") if isinstance(document.value, dict) else None
        if not isinstance(schemas, dict):
            continue
        prefix = "" if other == display else os.path.relpath(other, base or ".").replace(os.sep, "/")
        for name in schemas:
            ref = f"{prefix}#/schemas/{name.replace('~', '~0').replace('/', '~1')}"
            items.append(
                types.CompletionItem(label=ref, kind=types.CompletionItemKind.Reference, detail=f"schema {name} in {other}")
            )
    return items


def _spec_at(path: list[str | int]) -> Spec | None:
    spec: Spec | None = CATALOG
    for part in path:
        if isinstance(spec, Obj) and isinstance(part, str) and part in spec.fields:
            spec = spec.fields[part].spec
        elif isinstance(spec, ListOf) and part == 0:
            spec = spec.items
        elif isinstance(spec, MapOf) and isinstance(part, str):
            spec = spec.values
        else:
            return None
    return spec


def key_items(path: list[str | int]) -> list[types.CompletionItem]:
    spec = _spec_at(path)
    if not isinstance(spec, Obj):
        return _schema_keyword_items(path)
    return [
        types.CompletionItem(
            label=name,
            kind=types.CompletionItemKind.Property,
            detail="required" if field.required else "optional",
            documentation=field.spec.description or None,
            insert_text=f"{name}: ",
        )
        for name, field in spec.fields.items()
    ]


def _schema_keyword_items(path: list[str | int]) -> list[types.CompletionItem]:
    """Inside ``data`` or a ``schemas`` entry: JSON Schema keywords."""
    if "data" not in path and (not path or path[0] != "schemas"):
        return []
    from ..rules.catalog import KEYWORDS

    return [types.CompletionItem(label=word, kind=types.CompletionItemKind.Keyword) for word in sorted(KEYWORDS)]


def value_items(path: list[str | int]) -> list[types.CompletionItem]:
    values: tuple[str, ...] = ()
    if path == ["profile"]:
        values = PROFILES
    elif len(path) >= 2 and path[-1] == "type" and "extensions" in path[-4:-1] and "data" not in path:
        values = EXTENSION_TYPES
    elif path and path[-1] == "type" and ("data" in path or path[0] == "schemas"):
        values = SCHEMA_TYPES
    elif len(path) == 2 and path[0] == "rules":
        values = ("error", "warning", "off")
    elif path and path[-1] == "format" and ("data" in path or path[0] == "schemas"):
        values = FORMATS
    kind = types.CompletionItemKind.EnumMember
    return [types.CompletionItem(label=value, kind=kind) for value in values]


def key_documentation(path: list[str | int], key: str) -> str | None:
    """What the format says about ``key`` in the mapping at ``path`` (hover)."""
    spec = _spec_at(path)
    if not isinstance(spec, Obj) or key not in spec.fields:
        return None
    entry = spec.fields[key]
    return f"**{key}** ({'required' if entry.required else 'optional'}): {entry.spec.description or spec.description}"
