"""Read a catalog directory and check it: load -> structure -> model -> rules.

Parsed files are cached by content hash under ``.evcat-cache/`` (safe to
delete; never changes results), so a second lint after one file changed
re-parses only that file.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path as FsPath

from . import __version__
from .build import Built, build
from .diagnostics import Diagnostic, Severity, sort_diagnostics
from .format import check_structure
from .loader import MAX_FILE_BYTES, Document, load_bytes
from .model import CatalogSet
from .rules import RULES, Context, run_rules

CATALOG_SUFFIXES = (".yaml", ".yml")
_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv"}
_CACHE_FORMAT = f"{__version__}-1"


class UsageError(Exception):
    """Bad command-line input (exit 2), not a catalog problem."""


@dataclass
class LintResult:
    documents: dict[str, Document]
    built: Built
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def catalog_set(self) -> CatalogSet:
        return self.built.catalog_set

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)


def find_catalog_files(root: str) -> list[str]:
    if os.path.isfile(root):
        return [root]
    if not os.path.isdir(root):
        raise UsageError(f"{root}: no such catalog directory or file")
    found = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIP_DIRS and not d.startswith("."))
        found.extend(os.path.join(directory, name) for name in files if name.endswith(CATALOG_SUFFIXES))
    if not found:
        raise UsageError(f"{root}: no catalog files (*.yaml, *.yml) found")
    return sorted(found)


def display_path(path: str) -> str:
    relative = os.path.relpath(path)
    shown = path if relative.startswith("..") else relative
    return shown.replace(os.sep, "/")


class ParseCache:
    """Parsed documents by (display path, content) hash; pickles under ``root``."""

    def __init__(self, root: str | None) -> None:
        self.root = FsPath(root, "parsed") if root else None

    def load(self, path: str, display: str) -> Document:
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError as error:
            return _unreadable(display, error)
        if self.root is None:
            return load_bytes(raw, display)
        digest = hashlib.sha256(f"{_CACHE_FORMAT}\0{display}\0".encode() + raw).hexdigest()
        entry = self.root / digest[:2] / f"{digest}.pickle"
        try:
            with open(entry, "rb") as handle:
                document: Document = pickle.load(handle)
            return document
        except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError):
            pass
        document = load_bytes(raw, display)
        self._store(entry, document)
        return document

    def _store(self, entry: FsPath, document: Document) -> None:
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            temporary = entry.with_suffix(f".{os.getpid()}.tmp")
            with open(temporary, "wb") as handle:
                pickle.dump(document, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, entry)
        except OSError:
            pass  # a cache that cannot be written is only slower


def _unreadable(display: str, error: OSError) -> Document:
    from .loader import _failed

    return _failed(display, f"cannot read the file: {error.strerror or error}")


def lint(root: str, cache_dir: str | None = None) -> LintResult:
    cache = ParseCache(cache_dir)
    documents = {}
    for path in find_catalog_files(root):
        display = display_path(path)
        documents[display] = cache.load(path, display)
    return check(documents.values())


def check(documents: Iterable[Document]) -> LintResult:
    by_file = {document.file: document for document in documents}
    diagnostics: list[Diagnostic] = []
    for document in by_file.values():
        diagnostics.extend(document.diagnostics)
        diagnostics.extend(check_structure(document))
    built = build(list(by_file.values()))
    diagnostics.extend(built.diagnostics)
    context = Context(built, by_file)
    diagnostics.extend(run_rules(context))
    return LintResult(by_file, built, sort_diagnostics(_apply_overrides(diagnostics, by_file)))


def _apply_overrides(diagnostics: list[Diagnostic], documents: dict[str, Document]) -> list[Diagnostic]:
    """A catalog's ``rules:`` map changes severities in its own file, or turns rules off."""
    overrides: dict[str, dict[str, str]] = {}
    for file, document in documents.items():
        value = document.value.get("rules") if isinstance(document.value, dict) else None
        if isinstance(value, dict):
            overrides[file] = {
                rule_id: "off" if setting is False else setting
                for rule_id, setting in value.items()
                if rule_id in RULES and not RULES[rule_id].fixed and setting in ("error", "warning", "off", False)
            }
    result = []
    for diagnostic in diagnostics:
        setting = overrides.get(diagnostic.location.file, {}).get(diagnostic.rule)
        if setting == "off":
            continue
        if setting:
            diagnostic = replace(diagnostic, severity=Severity[setting.upper()])
        result.append(diagnostic)
    return result
