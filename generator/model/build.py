"""Documents -> the intermediate model (``CatalogSet``).

Resolves ``$ref`` (contract §1: ``#/schemas/<Name>`` in the same file or
``<relative-file>.yaml#/schemas/<Name>``), gives every shared schema a name
that is unique in the directory, and records which shared schemas each
payload uses. Tolerant: values of the wrong type were already reported by
the structural check and are read as absent here.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterator
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


@dataclass(frozen=True)
class Rewritten:
    """A schema with its ``$ref``s rewritten to ``#/$defs/<unique name>``
    (``Build.rewrite``): the shared schemas it names, the CAT-REF findings of
    the references that do not resolve, and whether x-evcat-* keys were left out."""

    schema: Any
    uses: frozenset[str]
    problems: tuple[Diagnostic, ...]
    annotated: bool


class Build:
    """One build of the model of ``documents`` (``build``). A pure function
    of the documents; the steps a long-running caller may keep between
    builds (engine.keep) are methods: ``rewrite`` (a schema's references),
    ``file_events`` (a file's events) and ``marked`` (an event copied as
    one of several dataversions of its type)."""

    def __init__(self, documents: list[Document]) -> None:
        self.documents = sorted((d for d in documents if isinstance(d.value, dict)), key=lambda d: d.file)
        self.index = _SchemaIndex(self.documents)
        self.diagnostics: list[Diagnostic] = []
        self.annotated: set[tuple[str, Path]] = set()
        # Each shared schema's own references (by unique name).
        self.direct_uses: dict[str, set[str]] = {}

    def rewrite(self, schema: Any, document: Document, base: Path) -> Rewritten:
        """``schema`` (at ``base`` in ``document``) with its references rewritten."""
        problems: list[Diagnostic] = []
        dropped: list[Path] = []
        used: set[str] = set()

        def replace(ref: str, path: Path) -> str | None:
            unique, problem, meant = self.index.resolve(ref, document.file)
            if unique is None:
                problems.append(_ref_error(document, base + path, problem, meant))
                # A reference that looks resolved but is not must not read as resolved
                # later (the payload checks skip a payload with a broken $ref).
                return "#/unresolved" + ref[1:] if ref.startswith("#/$defs/") else None
            used.add(unique)
            return f"#/$defs/{unique}"

        # evcat's own annotations (x-evcat-rules) are read from the documents
        # (rules.overrides); the model, which every output is made from, has none
        # (catalog-format.md §9).
        new_schema = rewrite_refs(schema, replace, drop=EVCAT_PREFIX, dropped=dropped)
        return Rewritten(new_schema, frozenset(used), tuple(problems), bool(dropped))

    def take(self, document: Document, base: Path, rewritten: Rewritten) -> None:
        """A rewritten schema's findings into the build's."""
        self.diagnostics.extend(rewritten.problems)
        if rewritten.annotated:
            self.annotated.add((document.file, base))

    def schema(self, schema: Any, document: Document, base: Path) -> tuple[Any, set[str]]:
        rewritten = self.rewrite(schema, document, base)
        self.take(document, base, rewritten)
        return rewritten.schema, set(rewritten.uses)

    def closure(self, start: set[str]) -> tuple[str, ...]:
        """``start`` and every shared schema they use, directly or not."""
        seen: set[str] = set()
        stack = list(start)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            stack.extend(self.direct_uses.get(name, ()))
        return tuple(sorted(seen))

    def file_events(self, document: Document, catalog_id: str) -> tuple[EventType, ...]:
        """The events of ``document`` (their payloads through ``schema``)."""
        return tuple(_events(document, catalog_id, self.schema, self.closure))

    def marked(self, event: EventType) -> EventType:
        """``event`` as one of several dataversions of its type (contract §5)."""
        return replace(event, several_dataversions=True)

    def run(self) -> Built:
        documents, index = self.documents, self.index
        shared: dict[str, SharedSchema] = {}
        for document in documents:
            for name, schema in _dict(_dict(document.value).get("schemas")).items():
                unique = index.names[(_normal(document.file), name)]
                path: Path = ("schemas", name)
                new_schema, used = self.schema(schema, document, path)
                shared[unique] = SharedSchema(unique, name, document.file, new_schema, path)
                self.direct_uses[unique] = used

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
                events.extend(self.file_events(document, catalog_id))
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
        marked = _mark_several_dataversions(catalogs, self.marked)
        return Built(CatalogSet(tuple(marked), dict(sorted(shared.items()))), self.diagnostics, frozenset(self.annotated))


def build(documents: list[Document]) -> Built:
    """The model of ``documents`` (a long-running caller keeps work between
    builds with engine.keep, which runs ``Build`` with its steps kept)."""
    return Build(documents).run()


def _mark_several_dataversions(catalogs: list[Catalog], marked: Callable[[EventType], EventType]) -> list[Catalog]:
    """Contract §5: an event of a type with several dataversions in the
    directory must carry its dataversion (the schemas and classes say so):
    ``marked(event)`` is its copy that says so."""
    counts = Counter(event.type for catalog in catalogs for event in catalog.events if event.dataversion is not None)
    if all(count < 2 for count in counts.values()):
        return catalogs
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


__all__ = ["Build", "Built", "Rewritten", "build", "file_profile", "Location"]
