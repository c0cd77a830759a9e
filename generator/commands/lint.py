"""Read a catalog directory and check it: load -> structure -> model -> rules.

Parsed files are cached by content hash under ``.evcat-cache/`` (safe to
delete; never changes results), so a second lint after one file changed
re-parses only that file.
"""

from __future__ import annotations

import hashlib
import os
import marshal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..engine.store import Single, Store
from ..engine.config import RunConfig
from ..diagnostics import Diagnostic, Severity, sort_diagnostics
from ..loader import MAX_EVENTS, Document, load_bytes, read_catalog_bytes
from ..engine.workers import run as parallel
from ..engine.workers import no_collection, worker_count

if TYPE_CHECKING:
    from ..model.build import Built
    from ..model import CatalogSet

CATALOG_SUFFIXES = (".yaml", ".yml")
_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv"}
_CACHE_FORMAT = f"{__version__}-5"


class UsageError(Exception):
    """Bad command-line input (exit 2), not a catalog problem."""


@dataclass
class LintResult:
    documents: dict[str, Document]
    built: Built
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the user, not findings (e.g. a YAML file that is no catalog)

    @property
    def catalog_set(self) -> CatalogSet:
        return self.built.catalog_set

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)


def find_catalog_files(root: str, exclude: Iterable[str | None] = ()) -> list[str]:
    """The catalog files under ``root``; ``exclude``: directories that are
    never read as catalogs (OUT and the cache directory, when under ``root``:
    evcat's own AsyncAPI output is YAML too)."""
    if os.path.isfile(root):
        return [root]
    if not os.path.isdir(root):
        raise UsageError(f"{root}: no such catalog directory or file")
    skipped = {os.path.realpath(path) for path in exclude if path}
    found = []
    for directory, subdirs, files in os.walk(root):
        if skipped:
            subdirs[:] = [d for d in subdirs if os.path.realpath(os.path.join(directory, d)) not in skipped]
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIP_DIRS and not d.startswith("."))
        found.extend(os.path.join(directory, name) for name in files if name.endswith(CATALOG_SUFFIXES))
    if not found:
        raise UsageError(f"{root}: no catalog files (*.yaml, *.yml) found")
    return sorted(found)


def source_digest(display: str, raw: bytes) -> str:
    """The key of a file's parse-cache entry and memoised checks."""
    return hashlib.sha256(f"{_CACHE_FORMAT}\0{display}\0".encode() + raw).hexdigest()


def display_path(path: str) -> str:
    relative = os.path.relpath(path)
    shown = path if relative.startswith("..") else relative
    return shown.replace(os.sep, "/")


class Cache:
    """Parsed files and memoised checks under ``root`` (None: no cache at all).

    Entries are keyed by content hash (and evcat's version), written
    atomically, and read with ``marshal``; a missing, stale or corrupt entry
    is simply recomputed, so deleting the directory is always safe.
    """

    def __init__(self, root: str | None, jobs: int | None = None) -> None:
        self.root = FsPath(root) if root else None
        self.jobs = jobs  # RunConfig.jobs
        self.memo: dict[str, Any] = {}
        self.memo_used: dict[str, Any] = {}
        self.parsed = Store(root, "parsed") if root else None
        self.checks = Single(root, "checks.marshal") if root else None
        # Work a long-running process (evcat lsp) keeps between checks of
        # the same directory: each file's structure check and rewritten
        # schemas, each schema's subschemas; None: nothing is kept.
        self.keep: dict[str, Any] | None = None
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
    data = load_bytes(raw, display, positions=False).to_data()
    packed = marshal.dumps(data)
    if store is not None:
        Store(FsPath(store).parent, FsPath(store).name).put(digest, data)
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


def lint(root: str, config: RunConfig = RunConfig(), exclude: Iterable[str | None] = ()) -> LintResult:
    """Lint the catalog directory (or file) ``root`` with the settings of
    ``config``; ``exclude``: directories under ``root`` that are not
    catalogs (OUT; the cache directory always is one of them)."""
    files = find_catalog_files(root, [config.cache_dir, *exclude])
    # Loading builds millions of small containers and no cycles: the cyclic
    # collector would only rescan them (a third of the run time).
    with no_collection():
        cache = Cache(config.cache_dir, config.jobs)
        documents = cache.load_all(files, meanwhile=_rule_engine, root=root if os.path.isdir(root) else None)
        result = check(documents.values(), cache)
        cache.save_memo()
    return result


def _rule_engine() -> None:
    """Import the checking stages (a tenth of a second: jsonschema-rs, the
    format, the rules), done while the workers parse: they need only the loader."""
    from .. import catalog_format, rules  # noqa: F401
    from ..model import build  # noqa: F401


def check(documents: Iterable[Document], cache: Cache | None = None) -> LintResult:
    from ..model.build import build
    from ..catalog_format import check_structure
    from ..engine.checks import run_rules
    from ..rules import Context

    by_file = {document.file: document for document in documents}
    # A YAML file that is plainly not a catalog (a mapping with neither
    # ``catalog:`` nor ``events:``, such as a docker-compose.yml) is skipped.
    notes = []
    for file, document in list(by_file.items()):
        value = document.value
        if (isinstance(value, dict) and value and not document.diagnostics
                and not {"catalog", "events", "schemas"} & value.keys()):  # schemas alone: a schema library
            del by_file[file]
            notes.append(f"skipped {file}: not a catalog (it has no 'catalog:' key)")
    keep = cache.keep if cache is not None else None
    diagnostics: list[Diagnostic] = []
    structure_before = keep.get("structure", {}) if keep is not None else {}
    structure: dict[tuple[str, str], list[Diagnostic]] = {}
    for document in by_file.values():
        diagnostics.extend(document.diagnostics)
        key = (document.file, document.digest)
        found = structure_before.get(key) if document.digest else None
        if found is None:
            found = list(check_structure(document))
        structure[key] = found
        diagnostics.extend(found)
    if keep is not None:
        keep["structure"] = structure
    too_many = _event_limit(by_file)
    if too_many is not None:  # nothing more is checked: the work would be unbounded
        return LintResult(by_file, build([]), sort_diagnostics([*diagnostics, too_many]), notes)
    built = build(list(by_file.values()), memo=keep.setdefault("build", {}) if keep is not None else None)
    diagnostics.extend(built.diagnostics)
    context = Context(built, by_file)
    if keep is not None:
        context.cache["nodes"] = keep.setdefault("nodes", {})
        context.cache["part-findings"] = keep.setdefault("part-findings", {})
    if cache is not None:
        context.memo, context.memo_used = cache.memo, cache.memo_used
    jobs = cache.jobs if cache is not None else None
    diagnostics.extend(run_rules(context, worker_count(len(built.catalog_set.events), jobs)))
    return LintResult(by_file, built, sort_diagnostics(_apply_overrides(diagnostics, by_file)), notes)


def _event_limit(documents: dict[str, Document]) -> Diagnostic | None:
    """At most ``MAX_EVENTS`` event types in one catalog directory (README, Limits)."""
    count = 0
    for file in sorted(documents):
        document = documents[file]
        events = document.value.get("events") if isinstance(document.value, dict) else None
        if not isinstance(events, list):
            continue
        if count + len(events) > MAX_EVENTS:
            location = document.loc(("events", MAX_EVENTS - count))
            return Diagnostic(
                "CAT-YAML", Severity.ERROR,
                f"more than {MAX_EVENTS:,} event types in the catalog directory (the limit); split it into several directories",
                location,
            )
        count += len(events)
    return None


def _apply_overrides(diagnostics: list[Diagnostic], documents: dict[str, Document]) -> list[Diagnostic]:
    """A catalog's ``rules:`` map changes severities in its own file, or turns rules off."""
    from ..rules import RULES

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
