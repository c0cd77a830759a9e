"""Reading the documents an import starts from, safely (contract §10).

Shared by the kinds: a source file is read with the catalog loader (the same
limits as catalog files: size, nesting depth, alias expansion, regular files
only; JSON is read as YAML 1.1, of which it is a subset here), every value
keeps its line and column for notes, and ``$ref`` is followed by
``referencing`` (the resolver the ``jsonschema`` package uses), never by a
resolver of our own. References reach only local files inside the source's
folder tree: no ``http:``, no ``file:`` outside it, no symbolic link leading
out of it, at most ``MAX_FILES`` files per import.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

from ..loader import MAX_DEPTH, MAX_FILE_BYTES, Document, load_bytes, read_catalog_bytes
from ..runtime._reading import _STRUCTURE
from . import Note, SourceError

MAX_FILES = 1000  # documents one import reads (the source and the files its $refs reach)
MAX_REF_HOPS = 64  # a $ref to a $ref to ... (a cycle of plain references never ends)


def pointer(path: tuple[str | int, ...]) -> str:
    """RFC 6901 JSON pointer of ``path`` ("" for the whole document)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def parse_pointer(text: str) -> tuple[str, ...]:
    """The reference tokens of a JSON pointer (RFC 6901 §4)."""
    if not text:
        return ()
    return tuple(part.replace("~1", "/").replace("~0", "~") for part in unquote(text).split("/")[1:])


@dataclass
class Source:
    """One read document: its value and where each of its values is."""

    path: Path  # resolved
    display: str  # as shown to the user
    value: Any
    document: Any  # loader.Document, for line and column

    @property
    def uri(self) -> str:
        return self.path.as_uri()

    def note(self, path: tuple[str | int, ...], message: str, kind: str = "not carried", key: bool = False) -> Note:
        location = self.document.key_loc(path) if key else self.document.loc(path)
        return Note(self.display, pointer(path), message, location.line, location.column, kind)


def read_source(path: Path, root: Path, display: str | None = None) -> Source:
    """The document at ``path`` (which must be inside ``root``); raises
    ``SourceError`` with a located note when it cannot be read or parsed."""
    display = display or str(path)
    real = Path(os.path.realpath(path))
    if not _inside(real, root):
        raise SourceError(Note(display, "", f"outside the source folder {root}; evcat reads no file there", kind="error"))
    try:
        raw = read_catalog_bytes(str(path), str(root))
    except OSError as error:
        raise SourceError(Note(display, "", f"cannot read the file: {error.strerror or error}", kind="error")) from None
    if len(raw) > MAX_FILE_BYTES:
        raise SourceError(Note(display, "", f"larger than the limit of {MAX_FILE_BYTES // 2**20} MiB", kind="error"))
    document = load_bytes(raw, display)
    fatal = [d for d in document.diagnostics if d.rule == "CAT-YAML"]
    if fatal and raw.lstrip()[:1] in (b"{", b"[") and _deeper_than(raw, MAX_DEPTH):
        # Too deep for the loader is too deep as JSON too: the one depth rule on
        # every Python version (the standard library's JSON reader recurses, and
        # how deep it gets differs between 3.11 and 3.13; so do libyaml's words).
        raise SourceError(Note(display, "", f"nesting is deeper than the limit of {MAX_DEPTH} levels", 1, 1,
                               kind="error"))
    if fatal and raw.lstrip()[:1] in (b"{", b"["):
        # JSON that YAML 1.1 does not read (a surrogate pair escape such as
        # "\ud83c\udf03"): the JSON reader's value, positions where YAML had them
        again = load_bytes(_SURROGATES.sub(_joined, raw), display)
        if not any(d.rule == "CAT-YAML" for d in again.diagnostics):
            return Source(real, display, again.value, again)
        try:
            value = json.loads(raw)
            json.dumps(value, ensure_ascii=False).encode("utf-8")  # no lone surrogate ("\ud800")
        except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
            pass
        else:
            return Source(real, display, value, Document(display, value))
    if fatal:
        first = fatal[0]
        raise SourceError(Note(display, "", f"not a readable YAML or JSON document: {first.message}",
                               first.location.line, first.location.column, kind="error"))
    return Source(real, display, document.value, document)


def _deeper_than(raw: bytes, limit: int) -> bool:
    """Whether JSON text nests more than ``limit`` levels: its brackets outside
    strings counted by the runtime's scanner, without parsing or recursion."""
    depth = 0
    for token in _STRUCTURE.finditer(raw):
        bracket = token.group()
        if bracket in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif bracket in (b"]", b"}"):
            depth -= 1
    return False


# A JSON surrogate pair escape (not itself escaped): YAML reads it as two
# lone surrogates and refuses; as one \U escape it is the character JSON means.
_SURROGATES = re.compile(rb"(?<!\\)((?:\\\\)*)\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})")


def _joined(match: re.Match[bytes]) -> bytes:
    high, low = int(match.group(2), 16), int(match.group(3), 16)
    return match.group(1) + b"\\U%08x" % (0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def _inside(path: Path, root: Path) -> bool:
    root = Path(os.path.realpath(root))
    return path == root or root in path.parents


@dataclass
class Refs:
    """``$ref`` resolution over the local files of one source folder tree.

    ``resolve(ref, base)`` gives the target's value and its absolute URI
    (file URI with a ``#pointer`` fragment), or raises ``RefError`` whose
    message says why (not local, outside the folder, missing, unreadable)."""

    root: Path
    sources: dict[str, Source] = field(default_factory=dict)  # by file URI
    _registry: Registry = field(init=False)
    _reasons: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = Path(os.path.realpath(self.root))
        self._registry = Registry(retrieve=self._retrieve)  # type: ignore[call-arg]

    def add(self, source: Source) -> None:
        self.sources[source.uri] = source
        self._registry = self._registry.with_resource(source.uri, _resource(source.value))

    def load(self, path: Path, display: str | None = None) -> Source:
        uri = Path(os.path.realpath(path)).as_uri()
        if uri not in self.sources:
            self._count()
            self.add(read_source(path, self.root, display))
        return self.sources[uri]

    def _count(self) -> None:
        if len(self.sources) >= MAX_FILES:
            raise SourceError(Note(str(self.root), "", f"more than {MAX_FILES} files in one import (the limit)",
                                   kind="error"))

    def _retrieve(self, uri: str) -> Resource:
        parts = urlsplit(uri)
        if parts.scheme != "file":
            reason = f"'{uri}' is not a local file; evcat fetches nothing over the network"
            self._reasons[uri] = reason
            raise NoSuchResource(ref=uri)
        path = Path(unquote(parts.path))
        try:
            source = self.load(path, _shown(path, self.root))
        except SourceError as error:
            self._reasons[uri] = error.note.message
            raise NoSuchResource(ref=uri) from None
        return _resource(source.value)

    def resolve(self, ref: str, base: str) -> tuple[Any, str]:
        target = urljoin(base, ref)
        file_uri, fragment = urldefrag(target)
        try:
            # The base without its fragment: with one, referencing looks the
            # document up anew (crawling the registry) for every "#/..." reference.
            resolved = self._registry.resolver(base_uri=urldefrag(base)[0]).lookup(ref)
        except Unresolvable:
            reason = self._reasons.get(file_uri)
            if reason is None:
                reason = f"'{ref}' points at nothing in {self._shown_uri(file_uri)}"
            raise RefError(reason) from None
        except Exception as error:  # noqa: BLE001 - a resolver complaint about the document itself
            raise RefError(f"'{ref}' cannot be resolved: {error}") from None
        return resolved.contents, file_uri + ("#" + fragment if fragment else "")

    def follow(self, value: Any, base: str) -> tuple[Any, str]:
        """``value`` with any chain of ``{"$ref": ...}`` followed: the value
        and the URI (with fragment) of where it stands."""
        where = base
        for _ in range(MAX_REF_HOPS):
            if not (isinstance(value, dict) and isinstance(value.get("$ref"), str)):
                return value, where
            value, where = self.resolve(value["$ref"], where)
        raise RefError(f"more than {MAX_REF_HOPS} $refs in a chain (a cycle?)")

    def location(self, uri: str) -> tuple[Source | None, tuple[str, ...]]:
        """The source file and path of an absolute URI with fragment."""
        file_uri, fragment = urldefrag(uri)
        return self.sources.get(file_uri), parse_pointer(fragment) if fragment.startswith("/") or not fragment else ()

    def note(self, uri: str, message: str, kind: str = "not carried") -> Note:
        source, path = self.location(uri)
        if source is None:
            return Note(self._shown_uri(urldefrag(uri)[0]), urldefrag(uri)[1], message, kind=kind)
        return source.note(path, message, kind)

    def _shown_uri(self, file_uri: str) -> str:
        source = self.sources.get(file_uri)
        if source is not None:
            return source.display
        parts = urlsplit(file_uri)
        return _shown(Path(unquote(parts.path)), self.root) if parts.scheme == "file" else file_uri


class RefError(Exception):
    """A ``$ref`` that is not followed; the message says why."""


def _shown(path: Path, root: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def _resource(value: Any) -> Resource:
    """A document as a ``referencing`` resource: its own ``$schema`` dialect
    when it names a known one, else 2020-12 (AsyncAPI documents, schema files
    without ``$schema``)."""
    if isinstance(value, dict) and "$schema" in value:
        with contextlib.suppress(Exception):  # an unknown dialect: read as 2020-12
            return Resource.from_contents(value, default_specification=DRAFT202012)
    return Resource(contents=value, specification=DRAFT202012)
