"""What a long-running process (``evcat lsp``) keeps between checks of one
catalog directory: the stages (``catalog_format.check_structure``,
``model.build``, the rules) are pure functions of their inputs, and
``Keep`` runs them with the work of the last check kept by the content (or
the very objects) of what they read.

- each file's structure check, by the file's content;
- ``build``'s steps (``model.build.Build``): each schema's rewritten form,
  by its file's content or the schema object, its place and the
  directory's schema names; an unchanged file's events (the same document,
  catalog, schema names and shared schemas' references) as the same
  objects; the copies of events of a type with several dataversions;
- the rules' caches of ``KEPT_RULE_CACHES`` (``rules.Context.cache``):
  each entry holds the object it was made from or the files' digests, and
  is used only while that still holds.

What each buys: README, Speed mechanisms (``bench/lsp_keep_bench.py``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..diagnostics import Diagnostic
from ..loader import Document, Path
from ..model import EventType
from ..model.build import Build, Built, Rewritten

# The caches of ``rules.Context.cache`` kept between checks: each entry holds
# the schema object it was made from (``rules.part_findings``, ``rules.shared_generation``,
# ``catalog._refs_resolved``, ``payload.property_description`` with the
# descriptions it read) or the
# event object (``engine.checks``'s
# findings of the checks that read their event alone).
KEPT_RULE_CACHES = ("part-findings", "part-refs", "refs-resolved", "event-findings", "described")


class Keep:
    """The work of the last check of a directory, for the next one."""

    def __init__(self) -> None:
        self.structure: dict[tuple[str, str], list[Diagnostic]] = {}
        self.build_memo: dict[Any, Any] = {}
        self.rule_caches: dict[str, dict[Any, Any]] = {name: {} for name in KEPT_RULE_CACHES}

    def structures(self, documents: list[Document]) -> dict[str, list[Diagnostic]]:
        """``check_structure`` of each document, by file; kept by content."""
        from ..catalog_format import check_structure

        before, now = self.structure, {}
        found: dict[str, list[Diagnostic]] = {}
        for document in documents:
            key = (document.file, document.digest)
            known = before.get(key) if document.digest else None
            if known is None:
                known = list(check_structure(document))
            now[key] = found[document.file] = known
        self.structure = now
        return found

    def build(self, documents: list[Document]) -> Built:
        """``model.build.build(documents)``, its steps kept (``_KeptBuild``)."""
        run = _KeptBuild(documents, self.build_memo)
        built = run.run()
        self.build_memo = run.used
        return built


class _KeptBuild(Build):
    """``Build`` with its steps found in the last build's ``memo`` where
    their inputs are the same; ``used``: what this build used (the next
    build's memo)."""

    def __init__(self, documents: list[Document], memo: dict[Any, Any]) -> None:
        super().__init__(documents)
        self.memo = memo
        self.used: dict[Any, Any] = {}
        index = self.index
        self.names_key = hashlib.sha256(repr((sorted(index.documents), sorted(index.names.items()))).encode()).hexdigest()
        # The schemas rewritten while a file's events are built, in order.
        self.trail: list[tuple[Any, tuple[Any, str, Rewritten]]] | None = None
        self.copies: dict[int, tuple[EventType, EventType]] = {}

    def rewrite(self, schema: Any, document: Document, base: Path) -> Rewritten:
        if not document.digest:
            return super().rewrite(schema, document, base)
        # The same file content, or the schema object itself: an unchanged
        # event of an edited buffer keeps its objects (engine.reparse), and
        # its positions with them (a reparse keeps the line count).
        key = (document.file, self.names_key, base)
        known = self.memo.get(key)
        if known is not None and (known[0] is schema or known[1] == document.digest):
            entry = (schema, document.digest, known[2])
        else:
            entry = (schema, document.digest, super().rewrite(schema, document, base))
        self.used[key] = entry
        if self.trail is not None:
            self.trail.append((key, entry))
        return entry[2]

    def file_events(self, document: Document, catalog_id: str) -> tuple[EventType, ...]:
        """An unchanged file's events as the last build made them: the same
        objects, so what was worked out of them is kept too (engine.checks)."""
        if not document.digest:
            return super().file_events(document, catalog_id)
        key = ("events", document.file)
        known = self.memo.get(key)
        if known is not None and known[0] is document and known[1] == (catalog_id, self.names_key) and known[2] == self.direct_uses:
            for entry_key, entry in known[3]:  # what building them did
                self.used[entry_key] = entry
                self.take(document, entry_key[2], entry[2])
            self.used[key] = known
            events: tuple[EventType, ...] = known[4]
            return events
        self.trail = []
        try:
            events = super().file_events(document, catalog_id)
            self.used[key] = (document, (catalog_id, self.names_key), self.direct_uses, tuple(self.trail), events)
        finally:
            self.trail = None
        return events

    def marked(self, event: EventType) -> EventType:
        before = self.memo.get(("several",), {})
        known = before.get(id(event))
        if known is None or known[0] is not event:
            known = (event, super().marked(event))
        self.copies[id(event)] = known
        self.used[("several",)] = self.copies
        return known[1]
