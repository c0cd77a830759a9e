"""Running the rules (rules/) over a directory: which checks run where.

The rules are functions of their inputs (``rules.Context``); this module
decides how they run. The costly event checks (compiling payload schemas,
checking examples) of the events the memo lacks run in worker processes
while this process runs the other rules (``_start_costly``); their results
are memo entries, which the checks then find in ``MemoContext.memo``. The
outcome is the one of running them here: a memoised check depends only on
its event and the files it reads.

The cheap event checks run again on every check, ``evcat lsp``'s too:
keeping their findings for unchanged events bought nothing (README, Speed
mechanisms).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, diagnostic_from_data, diagnostic_to_data
from ..model import EventType
from ..profiles import Profile
from ..rules import CHECKS, Context, EventCheck, MemoKey, Rule
from ..rules.catalog import prepare_costly
from .workers import claimed


@dataclass
class MemoContext(Context):
    """``rules.Context`` with the memo of the costly checks: their findings
    by the fingerprint of what they read (``Context.memoized``), from earlier
    runs (``memo``: engine.cache.Cache's, or what workers worked out) and
    left in ``memo_used`` (what this run used, kept for the next)."""

    memo: dict[MemoKey, Any] = field(default_factory=dict)
    memo_used: dict[MemoKey, Any] = field(default_factory=dict)

    def remembered(
        self, key: MemoKey | None, compute: Callable[[], tuple[Iterable[Diagnostic], Any]]
    ) -> tuple[list[Diagnostic], Any]:
        if key is None:
            diagnostics, state = compute()
            return list(diagnostics), state
        stored = self.memo.get(key)
        if stored is not None:
            try:
                rows, state = stored
                found = [diagnostic_from_data(row) for row in rows]
            except (TypeError, ValueError):  # an entry of another shape (an older evcat's): work it out again
                stored = None
        if stored is None:
            diagnostics, state = compute()
            found = list(diagnostics)
            stored = ([diagnostic_to_data(d) for d in found], state)
        self.memo_used[key] = stored
        return found, state


# Below this many events to check, starting workers costs more than it saves.
COSTLY_MIN_EVENTS = 200


def run_rules(context: MemoContext, workers: int = 1) -> Iterator[Diagnostic]:
    """Every rule over the directory. With ``workers`` > 1 and enough to do,
    the costly event checks run in worker processes meanwhile."""
    costly = _start_costly(context, workers)
    try:
        yield from _run_rules(context, costly)
    finally:
        close = getattr(costly, "close", None)
        if close is not None:  # stopped early (an error, or the caller stopped reading): the workers go
            close()


def _run_rules(context: MemoContext, costly: Iterator[dict[MemoKey, Any]]) -> Iterator[Diagnostic]:
    for document in context.documents.values():
        if not isinstance(document.value, dict):
            continue
        profile = context.profile(document.file)
        for rule, file_check in CHECKS.file:
            if rule.applies(profile):
                yield from file_check(document, context)
    events = context.built.catalog_set.events
    alone, others = _by_profile(CHECKS.event, lambda check: check not in CHECKS.reading_others), \
        _by_profile(CHECKS.event, lambda check: check in CHECKS.reading_others)
    # A long-running caller keeps the findings of the checks that read their
    # event alone, by the event object: ``build`` hands back an unchanged
    # file's events as they were (the same document, so the same locations).
    kept = context.cache.get("event-findings")
    now: dict[int, tuple[EventType, list[Diagnostic]]] = {}
    for event in events:
        found = kept.get(id(event)) if kept is not None else None
        if found is None or found[0] is not event:
            found = (event, [diagnostic for check in alone(event.profile) for diagnostic in check(event, context)])
        if kept is not None:
            now[id(event)] = found
        yield from found[1]
        for event_check in others(event.profile):
            yield from event_check(event, context)
    if kept is not None:
        kept.clear()
        kept.update(now)
    for _, set_check in CHECKS.whole:
        yield from set_check(context)
    fresh: dict[MemoKey, Any] = {}
    for results in costly:
        fresh.update(results)
    if fresh:  # a new dict: the one read from the cache stays as it was read (engine.cache.Cache.save_memo)
        context.memo = {**context.memo, **fresh}
    # Last: a costly check may leave state for a later one of the same event
    # (a payload that does not compile has no examples to check) or for a
    # late set check.
    applying = _by_profile(CHECKS.costly, lambda check: True)
    for event in events:
        for event_check in applying(event.profile):
            yield from event_check(event, context)
    for _, set_check in CHECKS.late:
        yield from set_check(context)


def _by_profile(
    checks: list[tuple[Rule, EventCheck]], taken: Callable[[EventCheck], bool]
) -> Callable[[Profile], list[EventCheck]]:
    """The checks of ``checks`` that apply under a profile (and are
    ``taken``), worked out once per profile, not once per event and rule;
    by the profile object (hashing a profile hashes all its fields)."""
    known: dict[int, tuple[Profile, list[EventCheck]]] = {}

    def applying(profile: Profile) -> list[EventCheck]:
        found = known.get(id(profile))
        if found is None or found[0] is not profile:
            found = known[id(profile)] = (profile, [check for rule, check in checks if rule.applies(profile) and taken(check)])
        return found[1]

    return applying


def _start_costly(context: MemoContext, workers: int) -> Iterator[dict[MemoKey, Any]]:
    """Start the costly event checks of the events the memo lacks on
    ``workers`` processes; their results are memo entries."""
    if workers < 2:
        return iter(())
    events = context.built.catalog_set.events
    pending = [
        position
        for position, event in enumerate(events)
        if any(
            rule.applies(event.profile) and (key := context.memo_key(rule.id, event)) is not None and key not in context.memo
            for rule, _ in CHECKS.costly
        )
    ]
    if len(pending) < COSTLY_MIN_EVENTS:
        return iter(())
    for position in pending:  # inherited by the workers, not worked out in each
        prepare_costly(events[position], context)
    # This process runs the other rules meanwhile, then claims what the
    # workers have not taken yet: it is one of the ``workers`` cores.
    chunks = [pending[start:start + _CHUNK] for start in range(0, len(pending), _CHUNK)]
    return claimed(_costly_chunk, context, chunks, workers - 1)


# Events per claim of the costly checks: a few milliseconds of work each.
_CHUNK = 8


def _costly_chunk(context: MemoContext, positions: list[int]) -> dict[MemoKey, Any]:
    """The costly checks of the events at ``positions`` (in a worker or in
    this process); hands back their memo entries."""
    used, context.memo_used = context.memo_used, {}
    try:
        events = context.built.catalog_set.events
        for position in positions:
            event = events[position]
            for rule, check in CHECKS.costly:
                if rule.applies(event.profile):
                    for _ in check(event, context):
                        pass
        return context.memo_used
    finally:
        context.memo_used = used
