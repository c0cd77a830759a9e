"""Stage 3: the rule engine. One small function per rule id.

A rule is registered with its id, default severity (MUST -> error, SHOULD ->
warning), the profiles it belongs to and a one-line summary (for SARIF and
the README). Rules read the model (and, for precise locations, the loaded
documents); they return diagnostics and never raise for bad input.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..model.build import Built, file_profile
from ..diagnostics import Diagnostic, Location, Severity
from ..loader import Document, Path
from ..model import EventType, SharedSchema
from ..profiles import PROFILES, Profile, profile_of_rules
from ..schemawalk import subschemas

# The key of a memoised check's findings (``Context.fingerprint``): the rule,
# the path it checks and the content digests of what it reads.
MemoKey = tuple[Any, ...]

# Rule families: a rule belongs to one, and applies under every profile whose
# ``families`` include it, unless that profile ``replaces`` it (profiles.py).
ALL = frozenset({"cloudevents"})
NLGOV = frozenset({"nlgov"})
NORMO = frozenset({"normo"})


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    profiles: frozenset[str]
    summary: str
    # Rules that guard what generation relies on cannot be turned off.
    fixed: bool = False

    def applies(self, profile: Profile) -> bool:
        return profile.applies(self.profiles, self.id)

    @property
    def profile_names(self) -> tuple[str, ...]:
        """The profiles this rule applies under (for listings)."""
        return tuple(name for name, profile in PROFILES.items() if self.applies(profile))


@dataclass
class Context:
    """What a rule may read: the model, and the documents for locations."""

    built: Built
    documents: dict[str, Document]
    # Work shared between rules (compiled validators and the like); a
    # long-running caller hands in the caches it keeps (engine.keep).
    cache: dict[str, Any] = field(default_factory=dict)
    _memo_keys: dict[tuple[str, str, Path], MemoKey | None] = field(default_factory=dict, init=False, repr=False)

    def memoized(
        self, rule_id: str, event: EventType, compute: Callable[[], tuple[Iterable[Diagnostic], Any]]
    ) -> tuple[list[Diagnostic], Any]:
        """``compute()`` for ``event``: its diagnostics and a state the rule
        needs on a memo hit too (plain data), reused while its file and the
        files of the shared schemas it uses are unchanged."""
        return self.remembered(self.memo_key(rule_id, event), compute)

    def remembered(
        self, key: MemoKey | None, compute: Callable[[], tuple[Iterable[Diagnostic], Any]]
    ) -> tuple[list[Diagnostic], Any]:
        """``compute()`` (diagnostics and a plain-data state); ``key``: a
        fingerprint of everything it reads (None: none), by which the engine
        keeps the result (engine.checks.MemoContext). Here: worked out."""
        diagnostics, state = compute()
        return list(diagnostics), state

    def memo_key(self, rule_id: str, event: EventType) -> MemoKey | None:
        """The fingerprint of ``rule_id``'s memoised check of ``event``: the
        content of its file and of the files of the shared schemas it uses
        (None when a document has no content hash, as in tests). Worked out
        once per run (``_start_costly`` asks before the check does)."""
        known = (rule_id, event.file, event.path)
        if known not in self._memo_keys:
            self._memo_keys[known] = self._fingerprint(rule_id, event)
        return self._memo_keys[known]

    def _fingerprint(self, rule_id: str, event: EventType) -> MemoKey | None:
        files = {event.file}
        if event.payload is not None:
            shared = self.built.catalog_set.schemas
            files.update(shared[name].file for name in event.payload.uses)
        return self.fingerprint(rule_id, event.path, files)

    def fingerprint(self, rule_id: str, path: Path, files: Iterable[str], also: str = "") -> MemoKey | None:
        """The memo key of ``rule_id``'s check at ``path`` that reads ``files``:
        their content (None when one has no content hash, as in tests), and
        ``also`` (a digest of what else it reads). The key is the tuple of
        them, not a hash of it: a sha256 of its text per check was a fifth of
        an edit's check in ``evcat lsp`` (the digests are the documents' own
        strings, so a key costs a tuple; marshal keeps each string once)."""
        names = sorted(set(files))
        digests = [self.documents[file].digest for file in names]
        if not all(digests):
            return None
        return (rule_id, path, *digests, also) if also else (rule_id, path, *digests)

    def loc(self, file: str, path: Path) -> Location:
        return self.documents[file].loc(path)

    def key_loc(self, file: str, path: Path) -> Location:
        return self.documents[file].key_loc(path)

    def event_loc(self, event: EventType, *sub: str | int, key: bool = False) -> Location:
        path = event.path + sub
        return self.key_loc(event.file, path) if key else self.loc(event.file, path)

    def has(self, file: str, path: Path) -> bool:
        return path in self.documents[file].locations

    def profile(self, file: str) -> Profile:
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

# Where each family of rules comes from (hover in ``evcat lsp``, ``evcat rules``);
# a profile's own rules (its ``rule_prefix``) come from the specification it is titled by.
RULE_SOURCES = {
    "CAT": "evcat catalog format (docs/catalog-format.md)",
    "PAY": "evcat payload naming (docs/catalog-format.md, Payload naming)",
    "CE": "CloudEvents 1.0.2 core specification (spec.md)",
}


# The section of the CloudEvents 1.0.2 core specification (spec.md) each CE rule checks.
_CE_SECTIONS = {
    "CE-ATTR-NAME": "Attribute Naming Convention", "CE-ATTR-LENGTH": "Attribute Naming Convention",
    "CE-ATTR-RESERVED": "Extension Context Attributes", "CE-EXTENSION-UNDECLARED": "Extension Context Attributes",
    "CE-ATTR-TYPE": "Type System", "CE-INTEGER-RANGE": "Type System", "CE-STRING-CHARS": "Type System",
    "CE-TYPE-EMPTY": "REQUIRED Attributes: type", "CE-TYPE-RDNS": "REQUIRED Attributes: type",
    "CE-SOURCE-URI": "REQUIRED Attributes: source", "CE-SOURCE-ABSOLUTE": "REQUIRED Attributes: source",
    "CE-REQUIRED": "REQUIRED Attributes", "CE-DATASCHEMA-URI": "OPTIONAL Attributes: dataschema",
    "CE-CONTENTTYPE": "OPTIONAL Attributes: datacontenttype", "CE-TIME": "OPTIONAL Attributes: time",
    "CE-SEQUENCE": "Sequence extension (extensions/sequence.md)", "CE-SIZE": "Size Limits",
    "CE-DATA-BOTH": "Event Data", "CE-DATA-MISSING": "Event Data", "CE-DATA-UNEXPECTED": "Event Data",
}


def rule_source(rule_id: str) -> str:
    """The specification (and section, where known) a rule implements; NL GOV and
    Het Normo rules name their section (§3.3.4, ID04) in their summary."""
    if rule_id in _CE_SECTIONS:
        return f"CloudEvents 1.0.2 core specification (spec.md), {_CE_SECTIONS[rule_id]}"
    prefix = rule_id.split("-", 1)[0]
    if prefix in RULE_SOURCES:
        return RULE_SOURCES[prefix]
    profile = profile_of_rules(prefix)
    return profile.title if profile is not None else "evcat"
EventCheck = Callable[[EventType, Context], Iterable[Diagnostic]]
FileCheck = Callable[[Document, Context], Iterable[Diagnostic]]
SetCheck = Callable[[Context], Iterable[Diagnostic]]


@dataclass
class _Checks:
    event: list[tuple[Rule, EventCheck]] = field(default_factory=list)
    # Event checks that are memoised (``Context.memoized``) and cost enough
    # to spread over worker processes (``_start_costly``); not in ``event``.
    costly: list[tuple[Rule, EventCheck]] = field(default_factory=list)
    # Set checks that run after the costly event checks.
    late: list[tuple[Rule, SetCheck]] = field(default_factory=list)
    file: list[tuple[Rule, FileCheck]] = field(default_factory=list)
    whole: list[tuple[Rule, SetCheck]] = field(default_factory=list)
    # The checks of ``event`` that read more than their event and its file's
    # document (other events, the catalog's header, shared schemas, the
    # context's cache): a caller that keeps an unchanged event's findings
    # (engine.checks) runs these again.
    reading_others: list[EventCheck] = field(default_factory=list)


CHECKS = _Checks()


def finding_severity(rule_id: str, setting: str | None = None) -> Severity:
    """The severity of an instance finding of ``rule_id`` (``event_checker.Problem``):
    the catalog's ``setting`` for the event where it changes the rule
    (``error`` | ``warning``, as ``overrides.event_severity`` gives it;
    catalog-format.md §9), else the rule's default; an unknown rule is an
    error. A finding of a rule that is off is never made."""
    from .overrides import severity_of

    rule = RULES.get(rule_id)
    default = rule.severity if rule is not None else Severity.ERROR
    if setting is None or (rule is not None and rule.fixed):
        return default
    return severity_of(setting, default) or default


def declare(rule_id: str, severity: Severity, profiles: frozenset[str], summary: str, *, fixed: bool = False) -> Rule:
    """Register a rule id; a second check for the same id widens its profiles."""
    known = RULES.get(rule_id)
    if known is not None:
        RULES[rule_id] = Rule(rule_id, known.severity, known.profiles | profiles, known.summary, known.fixed or fixed)
    else:
        RULES[rule_id] = Rule(rule_id, severity, profiles, summary, fixed)
    # The check itself runs for the profiles it was registered with.
    return Rule(rule_id, severity, profiles, summary, fixed)


def event_rule(
    rule_id: str, severity: Severity, profiles: frozenset[str], summary: str, *, costly: bool = False,
    reads_others: bool = False,
) -> Callable[[EventCheck], EventCheck]:
    """A check of one event. ``costly``: it is memoised under ``rule_id`` and
    worth running in worker processes on a large catalog (engine.checks).
    ``reads_others``: it reads more than the event and its file's document
    (``context.built``, ``context.cache``, another file): its findings for
    an unchanged event may change (``_Checks.reading_others``)."""

    def register(check: EventCheck) -> EventCheck:
        (CHECKS.costly if costly else CHECKS.event).append((declare(rule_id, severity, profiles, summary), check))
        if reads_others:
            CHECKS.reading_others.append(check)
        return check

    return register


def file_rule(rule_id: str, severity: Severity, profiles: frozenset[str], summary: str, *, fixed: bool = False) -> Callable[[FileCheck], FileCheck]:
    def register(check: FileCheck) -> FileCheck:
        CHECKS.file.append((declare(rule_id, severity, profiles, summary, fixed=fixed), check))
        return check

    return register


def set_rule(
    rule_id: str, severity: Severity, summary: str, *, fixed: bool = False, profiles: frozenset[str] = ALL,
    after_costly: bool = False,
) -> Callable[[SetCheck], SetCheck]:
    """A check over the whole directory; it runs once (all profiles' parts alike).
    ``after_costly``: it reads what the costly event checks leave in ``Context.cache``."""

    def register(check: SetCheck) -> SetCheck:
        rule = declare(rule_id, severity, profiles, summary, fixed=fixed)
        (CHECKS.late if after_costly else CHECKS.whole).append((rule, check))
        return check

    return register


@dataclass(frozen=True)
class PayloadPart:
    """A payload schema (an event's data or a shared schema) and where it sits."""

    file: str
    path: Path
    schema: Any


def payload_parts(context: Context) -> list[PayloadPart]:
    """Every payload schema of the directory, once (cached)."""
    if "parts" not in context.cache:
        catalog_set = context.built.catalog_set
        parts = [PayloadPart(shared.file, shared.path, shared.schema) for shared in catalog_set.schemas.values()]
        parts += [
            PayloadPart(event.file, event.path + ("data",), event.payload.schema)
            for event in catalog_set.events
            if event.payload is not None
        ]
        context.cache["parts"] = parts
    parts: list[PayloadPart] = context.cache["parts"]
    return parts


def schema_nodes(context: Context, part: PayloadPart) -> list[tuple[Path, dict[str, Any]]]:
    """Every schema object inside ``part`` with its path in the file (cached)."""
    cache = context.cache.setdefault("nodes", {})
    key = (part.file, part.path)
    known = cache.get(key)
    # The same schema object (kept between runs, this cache bought nothing
    # once the findings made from the nodes are kept: README, Speed mechanisms).
    if known is None or known[0] is not part.schema:
        known = cache[key] = (part.schema, list(subschemas(part.schema, part.path)))
    nodes: list[tuple[Path, dict[str, Any]]] = known[1]
    return nodes


def part_findings(
    context: Context, rule_id: str, part: PayloadPart, compute: Callable[[], Iterable[Diagnostic]],
    *, follows_refs: bool = False,
) -> list[Diagnostic]:
    """``compute()``: the findings of a check that reads nothing but ``part``
    (cached by the part's schema object, which ``build`` hands back unchanged
    to a long-running caller for an unchanged file, see ``engine.keep``;
    and in the memo of checks by the content of the part's file).
    ``follows_refs``: the check also reads the shared schemas ``part``
    references: where it references any, its findings are kept while no
    shared schema of the directory changes (and by the content of every file
    that holds one)."""
    cache = context.cache.setdefault("part-findings", {})
    key = (rule_id, part.file, part.path)
    known = cache.get(key)
    generation = shared_generation(context) if follows_refs and _references(context, part) else None
    if known is None or known[0] is not part.schema or known[2] != generation:
        # Across runs: by the content of the files its findings' locations and schemas are in.
        also = "" if generation is None else _shared_digest(context)
        memo_key = None if also is None else context.fingerprint(rule_id, part.path, (part.file,), also)
        findings, _ = context.remembered(memo_key, lambda: (compute(), None))
        known = cache[key] = (part.schema, findings, generation)
    findings: list[Diagnostic] = known[1]
    return findings


def _references(context: Context, part: PayloadPart) -> bool:
    """Whether ``part`` has a ``$ref`` (kept by its schema object between checks)."""
    direct = context.cache.setdefault("part-refs", {})
    known = direct.get((part.file, part.path))
    if known is None or known[0] is not part.schema:
        found = any(isinstance(node.get("$ref"), str) for _, node in subschemas(part.schema, part.path))
        known = direct[(part.file, part.path)] = (part.schema, found)
    has: bool = known[1]
    return has


def shared_generation(context: Context) -> int:
    """A number that changes whenever a shared schema of the directory does
    (by object: ``build`` hands back an unchanged file's schemas unchanged)."""
    if "shared-generation" not in context.cache:
        shared = tuple(schema.schema for schema in context.built.catalog_set.schemas.values())
        kept = context.cache.setdefault("part-refs", {})
        before = kept.get("generation")
        same = before is not None and len(before[0]) == len(shared) and all(map(operator.is_, before[0], shared))
        kept["generation"] = (shared, before[1] if same else (before[1] + 1 if before else 0))
        context.cache["shared-generation"] = kept["generation"][1]
    generation: int = context.cache["shared-generation"]
    return generation


def _shared_digest(context: Context) -> str | None:
    """One digest of the content of every file that holds a shared schema
    (once a check; None when one has no content hash, as in tests)."""
    if "shared-digest" not in context.cache:
        files = sorted({schema.file for schema in context.built.catalog_set.schemas.values()})
        digests = [context.documents[file].digest for file in files]
        context.cache["shared-digest"] = hashlib.sha256(repr((files, digests)).encode()).hexdigest() \
            if all(digests) else None
    digest: str | None = context.cache["shared-digest"]
    return digest


def shared_schemas_of(document: Document, context: Context) -> Iterator[SharedSchema]:
    for schema in context.built.catalog_set.schemas.values():
        if schema.file == document.file:
            yield schema


# Importing the rule modules registers their rules: these first (documentation
# order), then any other module of this package, so a new profile's rules
# module (rules/<profile>.py) needs no line here.
def _import_rule_modules() -> None:
    import importlib
    import pkgutil

    first = ("catalog", "payload", "cloudevents", "nlgov", "normo")
    others = sorted(module.name for module in pkgutil.iter_modules(__path__) if module.name not in first)
    for name in (*first, *others):
        importlib.import_module(f"{__name__}.{name}")


_import_rule_modules()
