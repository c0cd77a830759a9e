"""Completion items for ``evcat lsp``: catalog keys (from the format's
declaration), ``$ref`` targets, extension types, profile names, JSON Schema
keywords, types and formats."""

from __future__ import annotations

import os

from lsprotocol import types

from ..catalog_format import CATALOG, EXTENSION_TYPES, PROFILES, ListOf, MapOf, Obj, Spec
from ..overrides import SCHEMA_KEY, SETTINGS
from ..schemawalk import FORMATS, MAP_OF_SCHEMAS, SCHEMA_TYPES
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
    if _overrides_at(path):
        return _rule_items()
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

    return [types.CompletionItem(label=word, kind=types.CompletionItemKind.Keyword) for word in sorted(KEYWORDS)] + [
        types.CompletionItem(
            label=SCHEMA_KEY, kind=types.CompletionItemKind.Keyword, insert_text=f"{SCHEMA_KEY}: ",
            documentation="Rule id -> error | warning | off, for this schema node and what is under it (catalog-format.md §9).",
        )
    ]


def _overrides_at(path: list[str | int]) -> bool:
    """Is ``path`` a map of rule overrides (catalog-format.md §9): the file's or
    an event's ``rules``, a schema node's ``x-evcat-rules`` (not a property of that name)?"""
    if path in (["rules"], ["events", 0, "rules"]):
        return True
    return bool(path) and path[-1] == SCHEMA_KEY and (len(path) < 2 or path[-2] not in MAP_OF_SCHEMAS)


def _rule_items() -> list[types.CompletionItem]:
    """The rule ids an override may name (fixed rules keep their severity)."""
    from ..rules import RULES

    return [
        types.CompletionItem(
            label=rule.id, kind=types.CompletionItemKind.EnumMember, detail=f"{rule.severity} by default",
            documentation=rule.summary, insert_text=f"{rule.id}: ",
        )
        for rule in sorted(RULES.values(), key=lambda rule: rule.id)
        if not rule.fixed
    ]


def value_items(path: list[str | int]) -> list[types.CompletionItem]:
    values: tuple[str, ...] = ()
    if path == ["profile"]:
        values = PROFILES
    elif len(path) >= 2 and path[-1] == "type" and "extensions" in path[-4:-1] and "data" not in path:
        values = EXTENSION_TYPES
    elif path and path[-1] == "type" and ("data" in path or path[0] == "schemas"):
        values = SCHEMA_TYPES
    elif path and _overrides_at(path[:-1]):
        values = SETTINGS
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
