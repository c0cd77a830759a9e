"""Parsed files by content: the content-addressed caches of ``evcat lint``
(and of ``generate``, ``validate`` and ``evcat lsp``, which lint first).

- Each file is parsed once per content: a sealed entry of the parse store
  (``DIR/parsed/``) under ``source_digest``; the files not found are parsed
  on all cores when there is enough YAML (``PARALLEL_MIN_BYTES``).
- The memo of checks (``DIR/checks.marshal``): the findings of the costly
  checks by the content of the files they read (``rules.Context.memoized``).

What ``evcat lsp`` keeps between keystrokes in memory is ``engine.keep``.

A missing, stale or corrupt entry is worked out again: deleting the
directory is always safe.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path as FsPath
from typing import Any

from .. import __version__
from ..diagnostics import display_path
from ..loader import MAX_EVENTS, Document, load_bytes, read_catalog_bytes
from .store import Single, Store
from .workers import run as parallel
from .workers import worker_count

_CACHE_FORMAT = f"{__version__}-6"  # 6: a diagnostic keeps its YAML path


@functools.cache
def code_digest() -> str:
    """What, besides their inputs, decides every cached result: evcat's
    code (each ``.py`` and ``.json`` file of the package, hashed, so an
    edited checkout or a build from another commit with the same version
    never reuses stale entries: parses, memoised findings, renderings) and
    Python's version. About 6 ms, once per process (``forget_code_digest``)."""
    digest = hashlib.sha256(_CACHE_FORMAT.encode())
    package = FsPath(__file__).resolve().parent.parent  # the whole generator package
    for path in sorted(package.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".json"):
            digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(sys.version.encode())
    return digest.hexdigest()


def forget_code_digest() -> None:
    """For --watch: the code may have changed since the last run."""
    code_digest.cache_clear()

CACHE_NAME = ".evcat-cache"
PROJECT_MARKERS = ("pyproject.toml", ".git")


def default_cache_dir(catalog: str) -> str:
    """Where the cache of ``catalog`` (a directory or file) goes when neither
    ``--cache-dir`` nor ``EVCAT_CACHE_DIR`` says (issue 27): beside the
    catalog's project, the nearest directory from the catalog directory
    upward holding ``pyproject.toml`` or ``.git``; else beside the catalog
    directory (in its parent). Never the working directory as such: one
    project, one cache, wherever the command runs from."""
    start = os.path.abspath(catalog)
    if not os.path.isdir(start):
        start = os.path.dirname(start)
    directory = start
    while True:
        if any(os.path.exists(os.path.join(directory, marker)) for marker in PROJECT_MARKERS):
            return os.path.join(directory, CACHE_NAME)
        parent = os.path.dirname(directory)
        if parent == directory:
            return os.path.join(os.path.dirname(start), CACHE_NAME)
        directory = parent


def source_digest(display: str, raw: bytes) -> str:
    """The key of a file's parse-cache entry and memoised checks."""
    return hashlib.sha256(f"{code_digest()}\0{display}\0".encode() + raw).hexdigest()


class Cache:
    """Parsed files and memoised checks under ``root`` (None: no cache at all).

    Entries are keyed by content hash (and evcat's version), written
    atomically, and read with ``marshal``; a missing, stale or corrupt entry
    is simply recomputed, so deleting the directory is always safe.
    """

    def __init__(self, root: str | None, jobs: int | None = None) -> None:
        self.root = FsPath(root) if root else None
        self.jobs = jobs  # RunConfig.jobs
        self.memo: dict[tuple[Any, ...], Any] = {}  # rules.MemoKey -> findings
        self.memo_used: dict[tuple[Any, ...], Any] = {}
        self.parsed = Store(root, "parsed") if root else None
        self.checks = Single(root, "checks.marshal") if root else None
        if self.checks is not None:
            memo = self.checks.get()
            self.memo = memo if isinstance(memo, dict) else {}

    def load_all(
        self, paths: list[str], meanwhile: Callable[[], object] | None = None,
        root: str | None = None, display: Callable[[str], str] = display_path,
    ) -> dict[str, Document]:
        """Every file, from the cache where it holds it; the rest parsed,
        on all cores when there is enough work (``meanwhile()`` runs here
        while the workers parse). ``display`` names a file in diagnostics."""
        documents: dict[str, Document] = {}
        misses: list[tuple[str, bytes, str]] = []
        for path in paths:
            documents.update(self._load_one(path, display(path), misses, root))
        entries = {digest: str(self.parsed.directory) if self.parsed is not None else None for _, _, digest in misses}
        parsed = _parse_all(misses, entries, self.jobs)  # the workers start now
        if meanwhile is not None:
            meanwhile()
        sources = {display: raw for display, raw, _ in misses}
        # The event limit, counted as files come in: past it, the rest is not
        # parsed (check() then reports the limit; the work would be unbounded).
        count = sum(_events_in(document) for document in documents.values())
        try:
            for display, packed, digest in parsed:
                documents[display] = Document.from_data(display, marshal.loads(packed), digest, sources[display])
                count += _events_in(documents[display])
                del sources[display]
                if count > MAX_EVENTS:
                    for unparsed in sources:  # never read: nothing to report about them
                        del documents[unparsed]
                    break
        finally:
            if hasattr(parsed, "close"):
                parsed.close()  # stops the workers still parsing
        return documents

    def _load_one(
        self, path: str, display: str, misses: list[tuple[str, bytes, str]], root: str | None = None
    ) -> dict[str, Document]:
        try:
            raw = read_catalog_bytes(path, root)
        except OSError as error:
            return {display: _unreadable(display, error)}
        digest = source_digest(display, raw)
        cached = self._cached(display, digest, raw)
        if cached is not None:
            return {display: cached}
        misses.append((display, raw, digest))
        return {display: Document(display)}  # keeps the order; filled by load_all

    def _cached(self, display: str, digest: str, raw: bytes) -> Document | None:
        if self.parsed is None:
            return None
        data = self.parsed.get(digest)
        if data is None:
            return None
        try:
            return Document.from_data(display, data, digest, raw)
        except (TypeError, ValueError):
            return None  # an entry of another shape: parse again

    def save_memo(self) -> None:
        """Keep what this run used (the memo never grows without bound)."""
        if self.checks is not None and self.memo_used != self.memo:
            self.checks.put(self.memo_used)


# Below this much YAML, starting worker processes costs more than it saves.
PARALLEL_MIN_BYTES = 512 * 1024


def _parse(item: tuple[str, bytes, str, str | None]) -> tuple[str, bytes, str]:
    """Parse one file (positions are found later, if ever asked for); write
    its cache entry; hand back marshal bytes (cheap to move)."""
    display, raw, digest, store = item
    packed = marshal.dumps(load_bytes(raw, display, positions=False).to_data())
    if store is not None:  # the entry is the same marshal bytes
        Store(FsPath(store).parent, FsPath(store).name).put_marshalled(digest, packed)
    return display, packed, digest


def _parse_all(items: list[tuple[str, bytes, str]], entries: dict[str, str | None],
               jobs: int | None) -> Iterator[tuple[str, bytes, str]]:
    work = [(display, raw, digest, entries[digest]) for display, raw, digest in items]
    workers = worker_count(len(work), jobs)
    if sum(len(raw) for _, raw, _ in items) < PARALLEL_MIN_BYTES:
        workers = 1
    return parallel(_parse, work, workers, chunksize=max(1, len(work) // (workers * 4)))


def _events_in(document: Document) -> int:
    events = document.value.get("events") if isinstance(document.value, dict) else None
    return len(events) if isinstance(events, list) else 0


def _unreadable(display: str, error: OSError) -> Document:
    from ..loader import _failed

    return _failed(display, f"cannot read the file: {error.strerror or error}")
