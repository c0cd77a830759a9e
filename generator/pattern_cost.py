"""How much work a backtracking engine can do on a payload pattern (PAY-PATTERN-BACKTRACK).

rules.md: a ``pattern`` that can backtrack catastrophically, or that needs a
backtracking engine (backreferences, lookaround), is an error: no judge may
take longer than 100 ms on a 64 kB event. Python's ``re`` is such an engine
(the ``jsonschema`` judge reads every pattern with it), so every pattern lint
accepts must stay linear in ``re``.

The measure. A backtracking engine tries the paths of the pattern's automaton
one after the other: its work on a value is the number of (path, prefix)
pairs it walks, that is, summed over the offsets of the value, the number of
paths still alive there. The automaton is the position (Glushkov) automaton
of the pattern, built so that each of its paths is one way ``re`` can take:

* a bounded repetition ``X{n,m}`` is written out (``n`` copies of ``X``, then
  ``m - n`` nested optional ones, as ``re``'s counter takes them); above a
  size it becomes ``X+`` or ``X*``, which has at least as many paths;
* the edges keep their multiplicity: ``(a*)*`` has two edges from its ``a``
  to itself (the inner loop, and a new turn of the outer one), as ``re`` has
  two ways to take the next ``a``;
* an unanchored pattern (no ``^`` first) is searched from every offset, as
  ``re.search`` does: a state before the pattern takes any character. An
  attempt that reaches a state after which the rest of the pattern matches
  the empty string with no condition ends the search with success, so for
  the search those states are ends.

The automaton is run on every value at once (a subset construction that
counts paths per state, whose sets of counts form a finite graph): a pattern
is accepted when on every set that can recur (one a long value can stay in)
at most ``LIVE_PATHS`` paths are alive, so the work is at most that many
times the length of the value, and on the others (a bounded repetition) at
most ``BURST_PATHS``, with at most ``BURST_WORK`` steps in all. Nested or overlapping
quantifiers (``(a+)+``, ``(\\s*a\\s*)*``, ``(a|a)*``: exponential), two
repetitions that can take the same run (``^.*a.*b$``, ``(.*,){12}x``:
polynomial) and a repetition searched from every offset that can then fail
(``[a-z]+$``: quadratic) all make the count grow with the value, so each is
found, with the shortest value that shows it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from re import _constants as _sre  # type: ignore[attr-defined]
from re import _parser as _sre_parser  # type: ignore[attr-defined]

from .patterns import (
    INFINITE,
    Alternation,
    Assertion,
    Backreference,
    CharSet,
    Group,
    Node,
    PatternError,
    Repeat,
    Sequence,
    parse,
)

# Paths alive at an offset of a long value: with 64 kB of input, re walks at
# most this many times 65,536 steps (about a million: some tens of
# milliseconds, 40 ms for a contrived worst case on a shared 2-core machine).
LIVE_PATHS = 16
# Paths alive at any offset, and steps in all, where the paths cannot go on
# for long (a bounded repetition): a constant cost, whatever the value.
BURST_PATHS = 256
BURST_WORK = 65_536
# Positions of the written-out automaton; a larger one is read with X{n,m} as X+ or X*.
_MAX_POSITIONS = 400
# Sets of states the check may visit before it gives up (then the pattern is refused: it cannot be shown fast).
_MAX_STATES = 20_000
# Steps (a state of a set, read with one letter) the check may take: about a second at most.
_MAX_WORK = 3_000_000
_MAX_CODE_POINT = 0x10FFFF


def backtracking(ecma_pattern: str) -> list[str]:
    return list(_backtracking(ecma_pattern))


@cache
def _backtracking(ecma_pattern: str) -> tuple[str, ...]:
    """Why ``ecma_pattern`` can make a backtracking engine (Python's ``re``)
    slow, or needs one. Empty: every judge stays linear on it."""
    try:
        tree = parse(ecma_pattern)
    except PatternError as error:
        # What cannot be read cannot be shown linear: '(?i)^(a+)+$' is read by
        # Python's re, '^(\p{L}+)+$' by JavaScript's backtracking engine.
        return ((f"it cannot be checked ({error}), so it may backtrack catastrophically in a judge that reads it;"
                 " write it with the constructs of I-Regexp (RFC 9485)"),)
    except RecursionError:
        return ("it is nested too deeply to be checked",)
    found = _engine_features(tree)
    if found:
        return tuple(found)
    try:
        return _cost(tree)
    except RecursionError:
        return ("it is nested too deeply to be checked",)


def _engine_features(node: Node) -> list[str]:
    """Backreferences and lookaround: only a backtracking engine reads them
    (Rust's regex, pydantic's default engine, does not), and a backreference
    makes matching NP-hard."""
    found: list[str] = []

    def walk(node: Node) -> None:
        if isinstance(node, Backreference):
            found.append("a backreference needs a backtracking engine (Python's re), which can take exponential time;"
                         " check the repeated text in code, or list the allowed values")
        elif isinstance(node, Group):
            if "look" in node.kind:
                found.append(f"a {node.kind.replace('-', ' ')} needs a backtracking engine (Python's re), which can"
                             " take exponential time; write the condition as separate properties, or as one pattern"
                             " without lookaround")
            walk(node.body)
        elif isinstance(node, Repeat):
            walk(node.body)
        elif isinstance(node, Sequence):
            for item in node.items:
                walk(item)
        elif isinstance(node, Alternation):
            for option in node.options:
                walk(option)

    walk(node)
    return list(dict.fromkeys(found))


# --- character sets as code point ranges ---------------------------------------------------------------------


@cache
def ranges(text: str) -> tuple[tuple[int, int], ...]:
    """The code points a ``CharSet.text`` (a class or one character, as
    ``patterns`` writes it for Python) matches, as sorted disjoint ranges.
    What this cannot read counts as every character (more paths, never fewer)."""
    everything = ((0, _MAX_CODE_POINT),)
    try:
        items = _sre_parser.parse(text).data
    except Exception:  # noqa: BLE001 - a text sre cannot read: assume the worst
        return everything
    if len(items) != 1:
        return everything
    op, argument = items[0]
    if op is _sre.LITERAL:
        return ((argument, argument),)
    if op is _sre.NOT_LITERAL:
        return _complement(((argument, argument),))
    if op is not _sre.IN:
        return everything
    negated, found = False, []
    for item, value in argument:
        if item is _sre.NEGATE:
            negated = True
        elif item is _sre.LITERAL:
            found.append((value, value))
        elif item is _sre.RANGE:
            found.append(value)
        else:
            return everything
    merged = _merge(found)
    return _complement(merged) if negated else merged


def _merge(found: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(found):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)


def _complement(found: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    result, start = [], 0
    for low, high in found:
        if low > start:
            result.append((start, low - 1))
        start = high + 1
    if start <= _MAX_CODE_POINT:
        result.append((start, _MAX_CODE_POINT))
    return tuple(result)


# --- the position automaton, with multiplicities --------------------------------------------------------------


@dataclass
class _Fragment:
    first: dict[int, int]  # position -> ways to start there
    last: dict[int, int]  # position -> ways to end there
    nullable: bool  # matches the empty string (assertions read as empty)
    final: dict[int, int]  # positions after which the fragment is done with no condition (no assertion)
    empty: bool  # matches the empty string with no condition


@dataclass
class _Automaton:
    sets: list[tuple[tuple[int, int], ...]] = field(default_factory=list)  # position -> the code points it takes
    follow: dict[int, dict[int, int]] = field(default_factory=dict)  # position -> position -> ways
    relaxed: bool = False  # X{n,m} read as X+ / X*


def _size(node: Node) -> int:
    """Positions of the written-out automaton."""
    if isinstance(node, CharSet):
        return 1
    if isinstance(node, Group):
        return 0 if "look" in node.kind else _size(node.body)
    if isinstance(node, Repeat):
        copies = node.low + 1 if node.high >= INFINITE else node.high
        return _size(node.body) * max(copies, 1)
    if isinstance(node, Sequence):
        return sum(_size(item) for item in node.items)
    if isinstance(node, Alternation):
        return sum(_size(option) for option in node.options)
    return 0


def _add(into: dict[int, int], source: dict[int, int], times: int = 1) -> None:
    for key, ways in source.items():
        into[key] = min(into.get(key, 0) + ways * times, 1 << 20)


def _concat(automaton: _Automaton, left: _Fragment, right: _Fragment) -> _Fragment:
    for position, ways in left.last.items():
        _add(automaton.follow.setdefault(position, {}), right.first, ways)
    first = dict(left.first)
    if left.nullable:
        _add(first, right.first)
    last = dict(right.last)
    if right.nullable:
        _add(last, left.last)
    final = dict(right.final)
    if right.empty:
        _add(final, left.final)
    return _Fragment(first, last, left.nullable and right.nullable, final, left.empty and right.empty)


def _optional(fragment: _Fragment) -> _Fragment:
    return _Fragment(fragment.first, fragment.last, True, fragment.final, True)


def _star(automaton: _Automaton, fragment: _Fragment) -> _Fragment:
    for position, ways in fragment.last.items():
        _add(automaton.follow.setdefault(position, {}), fragment.first, ways)
    return _optional(fragment)


_EMPTY = _Fragment({}, {}, True, {}, True)


def _build(automaton: _Automaton, node: Node) -> _Fragment:
    if isinstance(node, CharSet):
        position = len(automaton.sets)
        automaton.sets.append(ranges(node.text))
        return _Fragment({position: 1}, {position: 1}, False, {position: 1}, False)
    if isinstance(node, (Assertion, Backreference)) or (isinstance(node, Group) and "look" in node.kind):
        # zero width here (a backreference is refused before); an assertion is a condition
        return _Fragment({}, {}, True, {}, False)
    if isinstance(node, Group):
        return _build(automaton, node.body)
    if isinstance(node, Sequence):
        result = _EMPTY
        for item in node.items:
            result = _concat(automaton, result, _build(automaton, item))
        return result
    if isinstance(node, Alternation):
        parts = [_build(automaton, option) for option in node.options]
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        final: dict[int, int] = {}
        for part in parts:
            _add(first, part.first)
            _add(last, part.last)
            _add(final, part.final)
        return _Fragment(first, last, any(p.nullable for p in parts), final, any(p.empty for p in parts))
    if isinstance(node, Repeat):
        low, high = node.low, node.high
        if automaton.relaxed and high > 1:
            low, high = min(low, 1), INFINITE
        result = _EMPTY
        for _ in range(low):
            result = _concat(automaton, result, _build(automaton, node.body))
        if high >= INFINITE:
            return _concat(automaton, result, _star(automaton, _build(automaton, node.body)))
        # X{0,k}: (X(X(X)?)?)? - after each copy, one more or the end, as re's counter
        copies = [_build(automaton, node.body) for _ in range(high - low)]
        tail = _EMPTY
        for copy in reversed(copies):
            tail = _optional(_concat(automaton, copy, tail))
        return _concat(automaton, result, tail)
    raise AssertionError(node)


def _anchored(node: Node) -> bool:
    """Every way through the pattern starts with ``^``."""
    while isinstance(node, Group) and "look" not in node.kind:
        node = node.body
    if isinstance(node, Alternation):
        return all(_anchored(option) for option in node.options)
    if isinstance(node, Sequence):
        for item in node.items:
            if isinstance(item, Assertion):
                if item.kind == "^":
                    return True
                continue
            return _anchored(item)
        return False
    return isinstance(node, Assertion) and node.kind == "^"


# --- counting the paths alive ----------------------------------------------------------------------------------


def _cost(tree: Node) -> tuple[str, ...]:
    automaton = _Automaton()
    automaton.relaxed = _size(tree) > _MAX_POSITIONS
    root = _build(automaton, tree)
    letters, representative = _letters(automaton.sets)
    start = len(automaton.sets)
    # edges: state -> list of (target, ways); state `start` is before the pattern
    edges: dict[int, list[tuple[int, int]]] = {state: sorted(targets.items()) for state, targets in automaton.follow.items()}
    edges[start] = sorted(root.first.items())
    found: list[str] = []
    slow = _count(edges, letters, start, searched=False, ends=frozenset())
    if slow is not None:
        found.append(_reason(slow, representative, searched=False))
    if not _anchored(tree) and not root.empty and slow is None:
        slow = _count(edges, letters, start, searched=True, ends=frozenset(root.final))
        if slow is not None:
            found.append(_reason(slow, representative, searched=True))
    return tuple(found)


def _letters(sets: list[tuple[tuple[int, int], ...]]) -> tuple[list[int], list[str]]:
    """The alphabet cut into letters, characters no set tells apart: each
    letter as the positions that take it (a bit mask), and one character of it."""
    cuts = {0, _MAX_CODE_POINT + 1}
    for found in sets:
        for low, high in found:
            cuts.update((low, high + 1))
    bounds = sorted(cuts)
    masks: dict[int, tuple[int, int]] = {}  # letter -> (how plain its character is, the character)
    for low, high in pairwise(bounds):
        mask = 0
        for position, found in enumerate(sets):
            if any(a <= low <= b for a, b in found):
                mask |= 1 << position
        if mask:
            masks[mask] = min(masks.get(mask, (9, 0)), _plain(low, high - 1))
    letters = sorted(masks)
    return letters, [chr(masks[letter][1]) for letter in letters]


def _plain(low: int, high: int) -> tuple[int, int]:
    """A character of [low, high] to show, the plainest first: a letter,
    a digit, a space, other printable ASCII, other printable, anything."""
    for rank, candidates in enumerate(("abcxyz", "0123456789", " ", "".join(map(chr, range(0x21, 0x7F))))):
        for candidate in map(ord, candidates):
            if low <= candidate <= high:
                return rank, candidate
    for candidate in range(low, min(high, low + 200) + 1):
        if not 0xD800 <= candidate <= 0xDFFF and chr(candidate).isprintable():
            return 4, candidate
    return 5, low


_Counts = tuple[tuple[int, int], ...]  # (state, paths alive there), sorted


@dataclass
class _Slow:
    word: list[int]  # letters
    paths: int
    too_many_states: bool = False
    recurring: bool = False  # the paths stay that many on a longer value


def _count(edges: dict[int, list[tuple[int, int]]], letters: list[int], start: int, searched: bool,
           ends: frozenset[int]) -> _Slow | None:
    """A value on which a backtracking engine follows too many ways (None:
    there is none): more than LIVE_PATHS paths alive at an offset of a set
    of states that can recur (so at every offset of a long value), more than
    BURST_PATHS at any offset, or more than BURST_WORK steps in all in the
    sets that cannot recur. ``searched``: attempts start at every offset (a
    state before the pattern keeps taking any character), and an attempt
    that reaches one of ``ends`` succeeds (its paths stop counting)."""
    searching = -1
    initial: _Counts = ((searching, 1),) if searched else ((start, 1),)
    alive_in: dict[_Counts, int] = {initial: 0}
    parents: dict[_Counts, tuple[_Counts, int]] = {}
    successors: dict[_Counts, set[_Counts]] = {}
    queue = deque([initial])
    work = 0
    while queue:
        counts = queue.popleft()
        work += len(counts) * len(letters)
        if work > _MAX_WORK:
            worst = max(alive_in, key=alive_in.__getitem__)
            if alive_in[worst] > LIVE_PATHS:
                return _Slow(_word(parents, worst, initial), alive_in[worst])
            return _Slow([], 0, too_many_states=True)
        following_sets = successors.setdefault(counts, set())
        for letter_index, letter in enumerate(letters):
            following: dict[int, int] = {}
            for state, ways in counts:
                if state == searching:
                    following[searching] = 1
                    sources = edges.get(start, ())
                else:
                    sources = edges.get(state, ())
                for target, multiplicity in sources:
                    if letter >> target & 1 and target not in ends:
                        following[target] = min(following.get(target, 0) + ways * multiplicity, BURST_PATHS + 1)
            key = tuple(sorted(following.items()))
            if not key:
                continue  # every path failed
            following_sets.add(key)
            if key in alive_in:
                continue
            alive = sum(ways for state, ways in following.items() if state != searching)
            alive_in[key] = alive
            parents[key] = (counts, letter_index)
            if alive > BURST_PATHS:
                return _Slow(_word(parents, key, initial), alive)
            if len(alive_in) > _MAX_STATES:
                # paths that keep growing give ever new sets: name the most seen, when too many
                worst = max(alive_in, key=alive_in.__getitem__)
                if alive_in[worst] > LIVE_PATHS:
                    return _Slow(_word(parents, worst, initial), alive_in[worst])
                return _Slow(_word(parents, key, initial), alive, too_many_states=True)
            queue.append(key)
    components = _components(list(alive_in), successors)
    recurring: set[_Counts] = set()
    for component in components:
        if len(component) > 1 or component[0] in successors.get(component[0], ()):
            recurring.update(component)
    for counts in recurring:
        if alive_in[counts] > LIVE_PATHS:
            return _Slow(_word(parents, counts, initial), alive_in[counts], recurring=True)
    # The most steps any value spends in sets that cannot recur (components
    # come in reverse topological order: successors first).
    most: dict[_Counts, int] = {}
    for component in components:
        members = set(component)
        beyond = max((most[after] for counts in component for after in successors.get(counts, ())
                      if after not in members), default=0)
        cost = beyond + (0 if component[0] in recurring else alive_in[component[0]])
        for counts in component:
            most[counts] = cost
    if most.get(initial, 0) > BURST_WORK:
        worst = max((counts for counts in alive_in if counts not in recurring), key=alive_in.__getitem__)
        return _Slow(_word(parents, worst, initial), alive_in[worst])
    return None


def _components(nodes: list[_Counts], successors: dict[_Counts, set[_Counts]]) -> list[list[_Counts]]:
    """Strongly connected components (Tarjan, without recursion), each
    after every component it leads to."""
    index: dict[_Counts, int] = {}
    low: dict[_Counts, int] = {}
    stack: list[_Counts] = []
    on_stack: set[_Counts] = set()
    found: list[list[_Counts]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(successors.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors.get(child, ()))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(component)
    return found


def _word(parents: dict[_Counts, tuple[_Counts, int]], key: _Counts, initial: _Counts) -> list[int]:
    word = []
    while key != initial:
        key, letter = parents[key]
        word.append(letter)
    return word[::-1]


def _reason(slow: _Slow, representative: list[str], searched: bool) -> str:
    text = "".join(representative[letter] for letter in slow.word)
    shown = repr(text if len(text) <= 40 else text[:37] + "...")
    if slow.too_many_states:
        return "it is too intricate to be shown linear (its automaton has too many states); write it simpler"
    ways = f"{slow.paths}" if slow.paths <= BURST_PATHS else f"more than {BURST_PATHS}"
    measure = (f"on a value like {shown} a backtracking engine follows {ways} ways at one character (at most"
               f" {LIVE_PATHS} stay linear on a long value)")
    kind = "catastrophic backtracking" if slow.paths > BURST_PATHS else f"{ways} times the work at every character"
    if searched:
        kind = "quadratic backtracking" if slow.paths > BURST_PATHS else kind
        return (f"it is searched from every offset (it has no '^') and a repetition in it can run and then fail: {measure}:"
                f" {kind}; anchor it with '^', or start it with a character its repetitions cannot take")
    return (f"its repetitions can take the same characters in more than one way: {measure}: {kind}; write one"
            " repetition per run of characters, make alternatives start differently, and separate repetitions by a"
            " character only one of them can take")


def alphabet(ecma_pattern: str) -> list[str]:
    """One character of each letter of ``ecma_pattern`` (the characters its
    parts tell apart), the plainest of each: what values built to make a
    backtracking engine work hardest are made of."""
    automaton = _Automaton(relaxed=True)
    _build(automaton, parse(ecma_pattern))
    return _letters(automaton.sets)[1]
