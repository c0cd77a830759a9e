"""Stage 3: the rule engine. One small function per rule id.

A rule is registered with its id, default severity (MUST -> error, SHOULD ->
warning), the profiles it belongs to and a one-line summary (for SARIF and
the README). Rules read the model (and, for precise locations, the loaded
documents); they return diagnostics and never raise for bad input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..build import Built, file_profile
from ..diagnostics import Diagnostic, Location, Severity
from ..loader import Document, Path
from ..model import EventType, SharedSchema

ALL = frozenset({"cloudevents", "nlgov", "normo"})
NLGOV = frozenset({"nlgov", "normo"})
NORMO = frozenset({"normo"})


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    profiles: frozenset[str]
    summary: str
    # Rules that guard what generation relies on cannot be turned off.
    fixed: bool = False


@dataclass
class Context:
    """What a rule may read: the model, and the documents for locations."""

    built: Built
    documents: dict[str, Document]
    # Work shared between rules (compiled validators and the like).
    cache: dict[str, Any] = field(default_factory=dict)

    def loc(self, file: str, path: Path) -> Location:
        return self.documents[file].loc(path)

    def key_loc(self, file: str, path: Path) -> Location:
        return self.documents[file].key_loc(path)

    def event_loc(self, event: EventType, *sub: str | int, key: bool = False) -> Location:
        path = event.path + sub
        return self.key_loc(event.file, path) if key else self.loc(event.file, path)

    def has(self, file: str, path: Path) -> bool:
        return path in self.documents[file].locations

    def profile(self, file: str) -> str:
        return file_profile(self.documents[file])

    def report(
        self,
        rule_id: str,
        message: str,
        location: Location,
        suggestion: str | None = None,
        related: tuple[Location, ...] = (),
    ) -> Diagnostic:
        return Diagnostic(rule_id, RULES[rule_id].severity, message, location, suggestion, related)


RULES: dict[str, Rule] = {}
EventCheck = Callable[[EventType, Context], Iterable[Diagnostic]]
FileCheck = Callable[[Document, Context], Iterable[Diagnostic]]
SetCheck = Callable[[Context], Iterable[Diagnostic]]


@dataclass
class _Checks:
    event: list[tuple[Rule, EventCheck]] = field(default_factory=list)
    file: list[tuple[Rule, FileCheck]] = field(default_factory=list)
    whole: list[tuple[Rule, SetCheck]] = field(default_factory=list)


CHECKS = _Checks()


def declare(rule_id: str, severity: Severity, profiles: frozenset[str], summary: str, *, fixed: bool = False) -> Rule:
    """Register a rule id; a second check for the same id widens its profiles."""
    known = RULES.get(rule_id)
    if known is not None:
        RULES[rule_id] = Rule(rule_id, known.severity, known.profiles | profiles, known.summary, known.fixed or fixed)
    else:
        RULES[rule_id] = Rule(rule_id, severity, profiles, summary, fixed)
    # The check itself runs for the profiles it was registered with.
    return Rule(rule_id, severity, profiles, summary, fixed)


def event_rule(rule_id: str, severity: Severity, profiles: frozenset[str], summary: str) -> Callable[[EventCheck], EventCheck]:
    def register(check: EventCheck) -> EventCheck:
        CHECKS.event.append((declare(rule_id, severity, profiles, summary), check))
        return check

    return register


def file_rule(rule_id: str, severity: Severity, profiles: frozenset[str], summary: str, *, fixed: bool = False) -> Callable[[FileCheck], FileCheck]:
    def register(check: FileCheck) -> FileCheck:
        CHECKS.file.append((declare(rule_id, severity, profiles, summary, fixed=fixed), check))
        return check

    return register


def set_rule(rule_id: str, severity: Severity, summary: str, *, fixed: bool = False) -> Callable[[SetCheck], SetCheck]:
    def register(check: SetCheck) -> SetCheck:
        CHECKS.whole.append((declare(rule_id, severity, ALL, summary, fixed=fixed), check))
        return check

    return register


def run_rules(context: Context) -> Iterator[Diagnostic]:
    for document in context.documents.values():
        if not isinstance(document.value, dict):
            continue
        profile = context.profile(document.file)
        for rule, file_check in CHECKS.file:
            if profile in rule.profiles:
                yield from file_check(document, context)
    for catalog in context.built.catalog_set.catalogs:
        for event in catalog.events:
            for rule, event_check in CHECKS.event:
                if event.profile in rule.profiles:
                    yield from event_check(event, context)
    for _, set_check in CHECKS.whole:
        yield from set_check(context)


def shared_schemas_of(document: Document, context: Context) -> Iterator[SharedSchema]:
    for schema in context.built.catalog_set.schemas.values():
        if schema.file == document.file:
            yield schema


# Importing the rule modules registers their rules (order = documentation order).
from . import catalog, payload, cloudevents, nlgov, normo  # noqa: E402,F401
