"""Documents -> the intermediate model (``CatalogSet``).

Resolves ``$ref`` (contract §1: ``#/schemas/<Name>`` in the same file or
``<relative-file>.yaml#/schemas/<Name>``), gives every shared schema a name
that is unique in the directory, and records which shared schemas each
payload uses. Tolerant: values of the wrong type were already reported by
the structural check and are read as absent here.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ..diagnostics import Diagnostic, Location, Severity
from ..catalog_format import is_schema_library
from ..loader import Document, Path
from . import (
    Catalog,
    CatalogSet,
    Channel,
    Contact,
    Example,
    EventType,
    Extension,
    License,
    Link,
    Payload,
    Producer,
    Server,
    Service,
    SharedSchema,
)
from .. import profiles
from ..naming import closest, to_pascal
from ..profiles import Profile
from ..overrides import EVCAT_PREFIX, setting_of
from ..schemawalk import rewrite_refs

DEFAULT_PROFILE = profiles.DEFAULT.name
# A catalog reference (contract §1); evcat lsp reads it too.
REF = re.compile(r"^(?P<file>[^#]*)#/schemas/(?P<name>[^/]+)$")
_REF = REF


@dataclass
class Built:
    catalog_set: CatalogSet
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # The payload schemas, as (file, path), that had x-evcat-* keys the model
    # left out (the rules check them as written: rules/catalog.py).
    annotated: frozenset[tuple[str, Path]] = frozenset()


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def file_profile(document: Document) -> Profile:
    """The profile a file chose (``profile:``); the default for anything else."""
    return profiles.get(_dict(document.value).get("profile"))


class _SchemaIndex:
    """All shared schemas of the directory, by (file, declared name)."""

    def __init__(self, documents: list[Document]) -> None:
        self.documents = {_normal(document.file): document for document in documents}
        declared: list[tuple[str, str]] = []
        for document in documents:
            for name in _dict(_dict(document.value).get("schemas")):
                declared.append((_normal(document.file), name))
        counts = Counter(name for _, name in declared)
        self.names: dict[tuple[str, str], str] = {}
        taken: set[str] = set()
        for file, name in declared:  # documents arrive sorted: names are stable
            unique = name
            if counts[name] > 1:
                stem = posixpath.splitext(posixpath.basename(file))[0]
                unique = to_pascal(stem) + name
            while unique in taken:
                unique += "_"
            taken.add(unique)
            self.names[(file, name)] = unique

    def resolve(self, ref: str, file: str) -> tuple[str | None, str, str | None]:
        """(unique name, or None, why not and the reference probably meant)."""
        match = _REF.match(ref)
        if not match:
            defs = re.match(r"^(?P<file>[^#]*)#/(?:\$defs|definitions|components/schemas)/(?P<name>[^/]+)$", ref)
            if defs:  # JSON Schema's or OpenAPI's place for shared schemas: here they are under schemas
                meant = f"{defs['file']}#/schemas/{defs['name']}"
                return None, f"'{ref}': shared schemas are under schemas in a catalog; write '{meant}'", meant
            return None, (
                f"'{ref}' is not a catalog reference; write '#/schemas/<Name>' for a schema of this file "
                "or '<file>.yaml#/schemas/<Name>' for one in another file of the directory"
            ), None
        target_file = _normal(file)
        if match["file"]:
            target_file = _normal(posixpath.join(posixpath.dirname(target_file), match["file"]))
            if target_file not in self.documents:
                return None, f"'{ref}': no catalog file '{match['file']}' in the directory", None
        name = match["name"].replace("~1", "/").replace("~0", "~")
        unique = self.names.get((target_file, name))
        if unique is None:
            known = [declared for (f, declared) in self.names if f == target_file]
            suggestion = closest(name, known)
            if suggestion is not None:  # the file named (or this one) has it under a similar name
                meant = f"{match['file']}#/schemas/{suggestion.replace('~', '~0').replace('/', '~1')}"
                return None, f"'{ref}': no schema '{name}' under schemas; did you mean '{meant}'?", meant
            elsewhere = self._elsewhere(name, target_file, _normal(file))
            if elsewhere is not None:
                where, declared = elsewhere
                meant = f"{where}#/schemas/{declared.replace('~', '~0').replace('/', '~1')}"
                kind = "that" if declared == name else "a similar"
                return None, (
                    f"'{ref}': no schema '{name}' under schemas of {repr(match['file']) if match['file'] else 'this file'}; '{meant}' is {kind} schema "
                    f"in another file: write '{meant}'"
                ), meant
            return None, f"'{ref}': no schema '{name}' under schemas", None
        return unique, "", None

    def _elsewhere(self, name: str, target_file: str, from_file: str) -> tuple[str, str] | None:
        """A schema of another file named ``name`` (or, failing that, nearly so):
        (its file relative to ``from_file``, its declared name)."""
        others = [(f, declared) for (f, declared) in self.names if f != target_file]
        exact = [(f, declared) for f, declared in others if declared == name]
        if not exact:
            close = closest(name, [declared for _, declared in others])
            if close is None or close in (declared for f, declared in self.names if f == target_file):
                return None
            exact = [(f, declared) for f, declared in others if declared == close]
        other, declared = exact[0]
        relative = posixpath.relpath(other, posixpath.dirname(from_file) or ".")
        return ("" if other == from_file else relative), declared


def _normal(file: str) -> str:
    return posixpath.normpath(file.replace("\\", "/"))


def build(documents: list[Document], memo: dict[Any, Any] | None = None) -> Built:
    """The model of ``documents``. ``memo`` (kept by a long-running caller,
    such as ``evcat lsp``, between builds) holds each schema's rewritten form
    by its file's content (or the schema object), its place and the
    directory's schema names, so an unchanged file's schemas (an unchanged
    event's of an edited buffer) are not walked again; it is left holding
    what this build used."""
    documents = sorted((d for d in documents if isinstance(d.value, dict)), key=lambda d: d.file)
    index = _SchemaIndex(documents)
    diagnostics: list[Diagnostic] = []
    names_key = (
        hashlib.sha256(repr((sorted(index.documents), sorted(index.names.items()))).encode()).hexdigest()
        if memo is not None
        else ""
    )
    used_memo: dict[Any, Any] = {}
    annotated: set[tuple[str, Path]] = set()

    # The memo entries of the schemas rewritten, in order (``_file_events``).
    trail: list[tuple[Any, Any]] | None = None

    def rewritten(schema: Any, document: Document, base: Path) -> tuple[Any, set[str]]:
        # The same file content, or the schema object itself: an unchanged
        # event of an edited buffer keeps its objects (engine.reparse), and
        # its positions with them (a reparse keeps the line count).
        key = (document.file, names_key, base) if memo is not None and document.digest else None
        known = memo.get(key) if memo is not None and key is not None else None
        if known is not None and (known[0] is schema or known[1] == document.digest):
            _, _, new_schema, used, problems, had_annotations = known
            entry = (schema, document.digest, new_schema, used, problems, had_annotations)
            replay(key, entry)
            if trail is not None:
                trail.append((key, entry))
            return new_schema, set(used)
        found: list[Diagnostic] = []
        dropped: list[Path] = []
        new_schema, used = _rewritten(schema, document, base, found, dropped)
        diagnostics.extend(found)
        if dropped:
            annotated.add((document.file, base))
        if key is not None:
            used_memo[key] = entry = (schema, document.digest, new_schema, frozenset(used), tuple(found), bool(dropped))
            if trail is not None:
                trail.append((key, entry))
        return new_schema, used

    def replay(key: Any, entry: Any) -> None:
        """What ``rewritten`` does for a schema found in the memo."""
        used_memo[key] = entry
        diagnostics.extend(entry[4])
        if entry[5]:
            annotated.add((key[0], key[2]))

    def _rewritten(
        schema: Any, document: Document, base: Path, diagnostics: list[Diagnostic], dropped: list[Path]
    ) -> tuple[Any, set[str]]:
        used: set[str] = set()

        def replace(ref: str, path: Path) -> str | None:
            unique, problem, meant = index.resolve(ref, document.file)
            if unique is None:
                diagnostics.append(_ref_error(document, base + path, problem, meant))
                # A reference that looks resolved but is not must not read as resolved
                # later (the payload checks skip a payload with a broken $ref).
                return "#/unresolved" + ref[1:] if ref.startswith("#/$defs/") else None
            used.add(unique)
            return f"#/$defs/{unique}"

        # evcat's own annotations (x-evcat-rules) are read from the documents
        # (rules.overrides); the model, which every output is made from, has none
        # (catalog-format.md §9).
        return rewrite_refs(schema, replace, drop=EVCAT_PREFIX, dropped=dropped), used

    shared: dict[str, SharedSchema] = {}
    direct_uses: dict[str, set[str]] = {}
    for document in documents:
        for name, schema in _dict(_dict(document.value).get("schemas")).items():
            unique = index.names[(_normal(document.file), name)]
            path: Path = ("schemas", name)
            new_schema, used = rewritten(schema, document, path)
            shared[unique] = SharedSchema(unique, name, document.file, new_schema, path)
            direct_uses[unique] = used

    def closure(start: set[str]) -> tuple[str, ...]:
        seen: set[str] = set()
        stack = list(start)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            stack.extend(direct_uses.get(name, ()))
        return tuple(sorted(seen))

    def file_events(document: Document, catalog_id: str) -> tuple[EventType, ...]:
        """The events of ``document``; with a memo, an unchanged file's (the
        same document, catalog, schema names and shared schemas' references)
        as the last build made them: the same objects, so a caller may keep
        what it worked out of them (engine.checks)."""
        nonlocal trail
        if memo is None or not document.digest:
            return tuple(_events(document, catalog_id, rewritten, closure))
        key = ("events", document.file)
        known = memo.get(key)
        if known is not None and known[0] is document and known[1] == (catalog_id, names_key) and known[2] == direct_uses:
            for entry_key, entry in known[3]:
                replay(entry_key, entry)
            used_memo[key] = known
            return known[4]
        trail = []
        try:
            events = tuple(_events(document, catalog_id, rewritten, closure))
            used_memo[key] = (document, (catalog_id, names_key), direct_uses, tuple(trail), events)
        finally:
            trail = None
        return events

    by_id: dict[str, list[Document]] = {}
    for document in documents:
        if is_schema_library(document.value):
            continue  # shared schemas only: indexed above, no catalog of its own
        catalog_id = _str(document.value.get("catalog")) or posixpath.splitext(posixpath.basename(document.file))[0]
        by_id.setdefault(catalog_id, []).append(document)

    catalogs = []
    for catalog_id, group in sorted(by_id.items()):
        head = _merged_head([document.value for document in group])
        producer = _dict(head.get("producer"))
        contact = _dict(producer.get("contact"))
        licence = _dict(head.get("license"))
        events: list[EventType] = []
        for document in group:
            events.extend(file_events(document, catalog_id))
        catalogs.append(
            Catalog(
                id=catalog_id,
                title=_str(head.get("title")) or catalog_id,
                version=_str(head.get("version")) or "0.0.0",
                profile=file_profile(group[0]),
                producer=Producer(
                    source=_str(producer.get("source")) or "",
                    organization=_str(producer.get("organization")),
                    contact=Contact(_str(contact.get("name")), _str(contact.get("email")), _str(contact.get("url")))
                    if contact
                    else None,
                ),
                description=_str(head.get("description")),
                license=License(_str(licence.get("name")) or "", _str(licence.get("url"))) if _str(licence.get("name")) else None,
                servers=tuple(
                    Server(
                        name,
                        _str(server.get("host")) or "",
                        _str(server.get("protocol")) or "",
                        _str(server.get("pathname")),
                        _str(server.get("description")),
                    )
                    for name, server in sorted(_dict(head.get("servers")).items())
                    if isinstance(server, dict)
                ),
                events=tuple(events),
                files=tuple(document.file for document in group),
                package=_str(head.get("package")),
                channels=tuple(_channels(group)),
                services=tuple(_services(group)),
            )
        )
    copies: dict[int, tuple[EventType, EventType]] = {}
    marked = _mark_several_dataversions(catalogs, memo.get(("several",)) if memo is not None else None, copies)
    if memo is not None:
        memo.clear()
        memo.update(used_memo)
        memo[("several",)] = copies
    return Built(CatalogSet(tuple(marked), dict(sorted(shared.items()))), diagnostics, frozenset(annotated))


def _mark_several_dataversions(
    catalogs: list[Catalog], before: dict[int, tuple[EventType, EventType]] | None = None,
    now: dict[int, tuple[EventType, EventType]] | None = None,
) -> list[Catalog]:
    """Contract §5: an event of a type with several dataversions in the
    directory must carry its dataversion (the schemas and classes say so).
    ``before``: the marked copies of the last build, by the event they copy
    (an unchanged event keeps its copy, ``file_events``); ``now`` is left
    holding this build's."""
    counts = Counter(event.type for catalog in catalogs for event in catalog.events if event.dataversion is not None)
    if all(count < 2 for count in counts.values()):
        return catalogs

    def marked(event: EventType) -> EventType:
        known = before.get(id(event)) if before is not None else None
        if known is None or known[0] is not event:
            known = (event, replace(event, several_dataversions=True))
        if now is not None:
            now[id(event)] = known
        return known[1]

    return [
        replace(catalog, events=tuple(
            marked(event) if event.dataversion is not None and counts[event.type] > 1 else event
            for event in catalog.events
        ))
        for catalog in catalogs
    ]


def _merged_head(heads: list[dict[str, Any]]) -> dict[str, Any]:
    """The header of a catalog split across files: each key from the first
    file (in path order) that sets it; producer and servers merged the same way."""
    merged: dict[str, Any] = {}
    for head in heads:
        for key, value in head.items():
            if key in ("producer", "servers") and isinstance(value, dict):
                target = merged.setdefault(key, {})
                if isinstance(target, dict):
                    for inner, inner_value in value.items():
                        target.setdefault(inner, inner_value)
            else:
                merged.setdefault(key, value)
    return merged


def _channels(group: list[Document]) -> Iterator[Channel]:
    """Every file's ``channels``, by name; the first file (in path order) that names one wins."""
    seen: set[str] = set()
    for document in group:
        for name, raw in _dict(_dict(document.value).get("channels")).items():
            if not isinstance(raw, dict) or name in seen:
                continue
            seen.add(name)
            yield Channel(
                name=str(name),
                protocol=_str(raw.get("protocol")) or "",
                address=_str(raw.get("address")) or "",
                description=_str(raw.get("description")),
                bindings=tuple(_dict(raw.get("bindings")).items()),
                file=document.file,
                path=("channels", name),
            )


def _services(group: list[Document]) -> Iterator[Service]:
    seen: set[str] = set()
    for document in group:
        for name, raw in _dict(_dict(document.value).get("services")).items():
            if not isinstance(raw, dict) or name in seen:
                continue
            seen.add(name)
            owner = _dict(raw.get("owner"))
            path: Path = ("services", name)
            yield Service(
                name=str(name),
                title=_str(raw.get("title")) or str(name),
                description=_str(raw.get("description")),
                owner=Contact(_str(owner.get("name")), _str(owner.get("email")), _str(owner.get("url"))) if owner else None,
                sends=tuple(_links(raw.get("sends"), path + ("sends",))),
                receives=tuple(_links(raw.get("receives"), path + ("receives",))),
                file=document.file,
                path=path,
            )


def _settings(value: Any) -> tuple[tuple[str, str], ...]:
    """A ``rules`` map as (rule id, error | warning | off) pairs (catalog-format.md §9); bad entries are left out."""
    return tuple(
        (rule_id, setting) for rule_id, raw in _dict(value).items()
        if isinstance(rule_id, str) and (setting := setting_of(raw)) is not None
    )


def _links(value: Any, path: Path) -> Iterator[Link]:
    for index, raw in enumerate(_list(value)):
        if isinstance(raw, dict) and _str(raw.get("type")):
            yield Link(
                type=_str(raw.get("type")) or "",
                dataversion=_str(raw.get("dataversion")),
                channel=_str(raw.get("channel")),
                path=path + (index,),
            )


def _ref_error(document: Document, path: Path, problem: str, meant: str | None = None) -> Diagnostic:
    return Diagnostic("CAT-REF", Severity.ERROR, f"$ref does not resolve: {problem}", document.loc(path), meant)


def _events(document: Document, catalog_id: str, rewritten: Any, closure: Any) -> Iterator[EventType]:
    head = document.value
    profile = file_profile(document)
    producer_source = _str(_dict(head.get("producer")).get("source")) or ""
    defaults = _dict(head.get("defaults"))
    file_rules = _settings(head.get("rules"))
    for position, raw in enumerate(_list(head.get("events"))):
        if not isinstance(raw, dict):
            continue
        path: Path = ("events", position)
        payload = None
        if "data" in raw and isinstance(raw["data"], (dict, bool)):
            schema, used = rewritten(raw["data"], document, path + ("data",))
            payload = Payload(schema, closure(used))
        deprecated = raw.get("deprecated", False)
        extensions = tuple(
            Extension(
                name,
                _str(spec.get("type")) or "String",
                spec.get("required") is True,
                _str(spec.get("description")),
            )
            for name, spec in sorted(_dict(raw.get("extensions")).items())
            if isinstance(spec, dict)
        )
        examples = tuple(
            Example(i, example)
            for i, example in enumerate(_list(raw.get("examples")))
            if isinstance(example, dict)
        )
        event = EventType(
            type=_str(raw.get("type")) or "",
            title=_str(raw.get("title")) or "",
            catalog_id=catalog_id,
            profile=profile,
            source=_str(raw.get("source")) or producer_source,
            dataversion=_str(raw.get("dataversion")),
            description=_str(raw.get("description")),
            subject=_str(raw.get("subject")),
            time=_str(raw.get("time")) or _str(defaults.get("time")),
            id=_str(raw.get("id")) or _str(defaults.get("id")),
            datacontenttype=_str(raw.get("datacontenttype")) or _str(defaults.get("datacontenttype")),
            dataschema=_str(raw.get("dataschema")),
            dataref=_str(raw.get("dataref")),
            sequencetype=_str(raw.get("sequence")),
            deprecated=bool(deprecated),
            deprecation=deprecated if isinstance(deprecated, str) else None,
            extensions=extensions,
            payload=payload,
            examples=examples,
            rules=_settings(raw.get("rules")),
            file_rules=file_rules,
            file=document.file,
            path=path,
        )
        yield event


__all__ = ["Built", "build", "file_profile", "Location"]
