"""`evcat lint`: read a catalog directory and check it: load -> structure ->
model -> rules.

Parsed files and the findings of the costly checks are kept by content
(``engine.cache``), so a second lint after one file changed re-parses only
that file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, Severity, sort_diagnostics
from ..engine.cache import Cache
from ..engine.config import RunConfig
from ..engine.workers import no_collection, worker_count
from ..loader import MAX_EVENTS, Document, Path

if TYPE_CHECKING:  # the model is imported while the workers parse (``_rule_engine``), not before
    from ..engine.keep import Keep
    from ..model import CatalogSet
    from ..model.build import Built

CATALOG_SUFFIXES = (".yaml", ".yml")
_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv"}


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


def check(documents: Iterable[Document], cache: Cache | None = None, keep: Keep | None = None) -> LintResult:
    """Check ``documents`` as ``evcat lint`` does; ``cache``: the memo of the
    costly checks (and ``RunConfig.jobs``); ``keep``: the work of the last
    check of the same directory, kept by a long-running caller (evcat lsp)."""
    from ..catalog_format import check_structure
    from ..engine.checks import MemoContext, run_rules
    from ..model.build import build

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
    diagnostics: list[Diagnostic] = []
    structure = keep.structures(list(by_file.values())) if keep is not None else {}
    for document in by_file.values():
        diagnostics.extend(document.diagnostics)
        diagnostics.extend(structure[document.file] if keep is not None else check_structure(document))
    too_many = _event_limit(by_file)
    if too_many is not None:  # nothing more is checked: the work would be unbounded
        return LintResult(by_file, build([]), sort_diagnostics([*diagnostics, too_many]), notes)
    built = keep.build(list(by_file.values())) if keep is not None else build(list(by_file.values()))
    diagnostics.extend(built.diagnostics)
    context = MemoContext(built, by_file)
    if keep is not None:
        context.cache.update(keep.rule_caches)
    if cache is not None:
        context.memo, context.memo_used = cache.memo, cache.memo_used
    jobs = cache.jobs if cache is not None else None
    diagnostics.extend(run_rules(context, worker_count(len(built.catalog_set.events), jobs)))
    return LintResult(by_file, built, sort_diagnostics(_apply_overrides(diagnostics, by_file, built.annotated)), notes)


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


def _apply_overrides(
    diagnostics: list[Diagnostic], documents: dict[str, Document], annotated: Iterable[tuple[str, Path]] | None = None
) -> list[Diagnostic]:
    """Rule overrides where they apply (catalog-format.md §9): ``x-evcat-rules``
    on a schema node, an event's ``rules``, the file's ``rules``; nearest wins."""
    from ..rules.overrides import apply

    return apply(diagnostics, documents, annotated)
