"""One catalog directory as the editor sees it: the files on disk with the
editor's unsaved buffers in their place, checked exactly as ``evcat lint``
checks the directory (contract §8).

Incremental: a changed buffer is re-parsed alone (other files keep their
parsed ``Document``); the costly checks (payload compilation, examples) are
memoised by the content of the files they read (``rules.Context.memoized``),
so an edit re-runs them only for the events it can affect; the parse cache
and memo of ``.evcat-cache/`` (as ``evcat lint`` leaves them) are read at
start. ``catalog_directory`` says which directory a workspace folder stands for.
"""

from __future__ import annotations

import gc
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..commands.lint import CATALOG_SUFFIXES, LintResult, UsageError, check, find_catalog_files
from ..diagnostics import Diagnostic
from ..engine.cache import Cache, _events_in, default_cache_dir, source_digest
from ..engine.keep import Keep
from ..engine.reparse import parse, reparse
from ..loader import MAX_EVENTS, MAX_FILE_BYTES, Document, load_bytes

_SKIPPED = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv"}


@dataclass
class Folder:
    root: str  # absolute file-system path
    documents: dict[str, Document] = field(default_factory=dict)  # by display name (relative to root)
    buffers: dict[str, bytes] = field(default_factory=dict)  # open files: the editor's text
    parses: dict[str, Any] = field(default_factory=dict)  # what engine.reparse keeps of each buffer
    result: LintResult | None = None
    by_file: dict[str, list[Diagnostic]] = field(default_factory=dict)
    cache: Cache = field(default_factory=lambda: Cache(None, jobs=1))
    keep: Keep = field(default_factory=Keep)  # the work of the last check, for the next (engine.keep)
    touched: set[str] = field(default_factory=set)  # files changed since the last check
    _previous_memo: dict[tuple[Any, ...], Any] = field(default_factory=dict)  # rules.MemoKey -> findings

    pending: list[str] = field(default_factory=list)  # files not read yet (``start``)
    _lines: dict[str, tuple[Document, list[str]]] = field(default_factory=dict)
    _counted: int = 0  # events in the files read so far (``read_next``)

    @classmethod
    def open(cls, root: str) -> "Folder":
        folder = cls.start(root)
        while folder.pending:
            folder.read_next()
        return folder

    @classmethod
    def start(cls, root: str) -> "Folder":
        """The folder with its files found and none read yet (``read_next``
        reads them one by one, so a server can answer in between)."""
        folder = cls(os.path.abspath(root))
        cache_dir = default_cache_dir(folder.root)  # where `evcat lint <root>` leaves it
        # In-process (jobs=1): the server reads its stream on a thread (engine.workers).
        folder.cache = Cache(cache_dir if os.path.isdir(cache_dir) else None, jobs=1)
        try:
            folder.pending = find_catalog_files(folder.root)[::-1]
        except UsageError:
            pass
        return folder

    def read_next(self) -> None:
        """Read the next file not read yet (an open buffer stands in for its file)."""
        path = self.pending.pop()
        display = self.display(path)
        if display not in self.buffers:
            self.documents.update(self.cache.load_all([path], display=self.display))
        self._counted += _events_in(self.documents[display]) if display in self.documents else 0
        # The event limit, as Cache.load_all counts it: past it, the rest is
        # not read (check() reports the limit; the work would be unbounded).
        if self._counted > MAX_EVENTS:
            self.pending.clear()
        if not self.pending:  # in the order evcat lint reads them
            self.documents = {name: self.documents[name] for name in sorted(self.documents)}

    def place_next(self) -> bool:
        """Find the positions of one document read without them (from the
        parse cache or a quick first read: ``loader.Document.positions``);
        False when every document has them. An edit of a schema others use
        places findings in every file that uses it: found beforehand, while
        the editor is idle, that first edit does not parse each such file
        again (half of its time at 1,000 types). About 30 MiB at 1,000 types."""
        for document in self.documents.values():
            if document.positions is None:
                document.locations  # noqa: B018 (found and kept by the loader)
                return True
        return False

    def own_findings(self, display: str) -> list[Diagnostic]:
        """The findings of ``display`` that need no other file (its YAML and
        structure, rule overrides applied): a part of what ``check`` reports
        for it, shown while the folder is still being read."""
        from ..catalog_format import check_structure
        from ..diagnostics import sort_diagnostics
        from ..rules.overrides import apply

        document = self.documents[display]
        value = document.value
        if isinstance(value, dict) and value and not document.diagnostics and not {"catalog", "events", "schemas"} & value.keys():
            return []  # not a catalog: check() skips it
        found = [*document.diagnostics, *check_structure(document)]
        return sort_diagnostics(apply(found, {display: document}))

    def display(self, path: str) -> str:
        return os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")

    def path(self, display: str) -> str:
        return os.path.join(self.root, *display.split("/"))

    def holds(self, path: str) -> bool:
        """Whether ``path`` is a catalog file of this directory, as ``evcat lint`` finds them."""
        relative = os.path.relpath(os.path.abspath(path), self.root)
        parts = relative.split(os.sep)
        if parts[0] == os.pardir or not relative.endswith(CATALOG_SUFFIXES):
            return False
        return not any(part in _SKIPPED or part.startswith(".") for part in parts[:-1])

    def text(self, display: str) -> str:
        """The current text of a file (buffer, else disk; empty when unreadable)."""
        raw = self.buffers.get(display)
        if raw is None:
            try:
                with open(self.path(display), "rb") as handle:
                    raw = handle.read(MAX_FILE_BYTES + 1)
            except OSError:
                return ""
        return raw.decode("utf-8", errors="replace")

    def lines(self, display: str) -> list[str]:
        """``text(display)`` in lines, kept while the file's document is the same
        (a check publishes every file whose findings change)."""
        document = self.documents.get(display)
        known = self._lines.get(display)
        if known is not None and document is not None and known[0] is document:
            return known[1]
        lines = self.text(display).split("\n")
        if document is not None:
            self._lines[display] = (document, lines)
        return lines

    def set_buffer(self, display: str, text: str) -> None:
        # A lone surrogate (valid JSON, not valid text) stays in: the loader reports it.
        raw = text.encode("utf-8", errors="surrogatepass")
        self.buffers[display] = raw
        self.touched.add(display)
        old, kept = self.documents.get(display), self.parses.pop(display, None)
        again = reparse(old, kept, raw, display) if old is not None and kept is not None else None
        if again is not None:  # only the edited event's (or schema's) block parsed again
            document, self.parses[display] = again
        else:
            # Parsed with positions: a buffer being edited usually has diagnostics to place.
            document, kept = parse(raw, display)
            if kept is not None:
                self.parses[display] = kept
        document.digest = source_digest(display, raw)
        self.documents[display] = document

    def close_buffer(self, display: str) -> None:
        """The editor closed the file: its disk content counts again."""
        self.buffers.pop(display, None)
        self.parses.pop(display, None)
        self.reload(display)

    def reload(self, display: str) -> None:
        """Read a file from disk again (changed or deleted outside the editor)."""
        if display in self.buffers:
            return
        self.touched.add(display)
        path = self.path(display)
        if not os.path.isfile(path):
            self.documents.pop(display, None)
            return
        self.documents.update(self.cache.load_all([path], display=self.display))

    def check(self) -> dict[str, list[Diagnostic]]:
        """Check the directory; the diagnostics by file (every file, clean ones empty)."""
        collecting = gc.isenabled()
        gc.disable()  # as in lint.lint: loading and checking make no cycles worth scanning
        try:
            self.cache.memo_used = {}
            ordered = [self.documents[name] for name in sorted(self.documents)]
            self.result = check(ordered, self.cache, self.keep)
            # Keep the entries of this run and the one before (an undo finds them).
            used = self.cache.memo_used
            self.cache.memo = {**self._previous_memo, **used}
            self._previous_memo = used
        finally:
            if collecting:
                gc.enable()
        by_file: dict[str, list[Diagnostic]] = {name: [] for name in self.documents}
        for diagnostic in self.result.diagnostics:
            by_file.setdefault(diagnostic.location.file, []).append(diagnostic)
        self.by_file = by_file
        return by_file


def catalog_directory(root: str) -> str:
    """The catalog directory of a workspace folder: the folder itself, as
    ``evcat lint <folder>`` reads it; but a project folder with no catalog
    files of its own and a ``catalog/`` directory (``evcat init``'s layout,
    and what ``evcat lint`` reads by default) is read as ``catalog/``, so its
    CI files and other YAML are not taken for catalogs."""
    nested = os.path.join(root, "catalog")
    if not os.path.isdir(nested):
        return root
    try:
        names = [name for name in os.listdir(root) if name.endswith((".yaml", ".yml")) and not name.startswith(".")]
    except OSError:
        return root
    return root if any(_looks_like_catalog(os.path.join(root, name)) for name in names) else nested


_CATALOG_KEY = re.compile(rb"^(catalog|events|schemas)\s*:", re.MULTILINE)


def _looks_like_catalog(path: str) -> bool:
    """A top-level ``catalog:``, ``events:`` or ``schemas:`` key in the file's first 64 kB."""
    try:
        with open(path, "rb") as handle:
            return _CATALOG_KEY.search(handle.read(65536)) is not None
    except OSError:
        return False
