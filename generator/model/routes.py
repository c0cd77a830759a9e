"""Where an event travels and who sends and receives it (catalog-format.md §9).

Read by the docs and the EventCatalog export. ``travels_on`` is the contract's
rule ("an event is published on the channels its sending services name, or on
every channel of its catalog when there are no services"); helper 27d owns the
same rule for AsyncAPI and the generated package: one of the two homes goes
when both are merged.

A ``receives`` link's ``dataversion`` is a range in npm's semver syntax
(https://github.com/npm/node-semver#ranges): comparator sets joined by ``||``,
each of ``<``, ``<=``, ``>``, ``>=``, ``=`` comparators, ``^``/``~`` ranges,
``x``/``*`` wildcards and hyphen ranges. A ``sends`` link's is one version
(itself a range that matches only that version).
"""

from __future__ import annotations

import re

from . import Catalog, Channel, EventType, Link, Service

_VERSION = re.compile(r"v?(?P<major>[0-9]+|[xX*])(?:\.(?P<minor>[0-9]+|[xX*]))?(?:\.(?P<patch>[0-9]+|[xX*]))?"
                      r"(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")
_COMPARATOR = re.compile(r"(?P<op><=|>=|<|>|=|\^|~>?)?\s*(?P<version>[^\s<>=^~]\S*)")
_HYPHEN = re.compile(r"^\s*(\S+)\s+-\s+(\S+)\s*$")

Triple = tuple[int, int, int]


def _parts(text: str) -> list[int | None] | None:
    """A version's numbers; ``None`` for a wildcard or a missing part."""
    match = _VERSION.fullmatch(text)
    if match is None:
        return None
    parts: list[int | None] = []
    for name in ("major", "minor", "patch"):
        value = match[name]
        parts.append(None if value is None or value in "xX*" else int(value))
    for index, value in enumerate(parts):  # after a wildcard everything is one
        if value is None:
            parts[index + 1:] = [None] * (2 - index)
            break
    return parts


def _bounds(op: str, parts: list[int | None]) -> list[tuple[str, Triple]]:
    """One comparator as comparisons against full versions (node-semver's desugaring)."""
    major, minor, patch = parts
    if major is None:
        return []  # `*`: any version
    low = (major, minor or 0, patch or 0)
    if op in ("", "=") and patch is not None and minor is not None:
        return [("=", low)]
    if op in ("", "="):  # a partial version: the whole span
        upper = (major + 1, 0, 0) if minor is None else (major, minor + 1, 0)
        return [(">=", low), ("<", upper)]
    if op.startswith("~"):
        upper = (major + 1, 0, 0) if minor is None else (major, minor + 1, 0)
        return [(">=", low), ("<", upper)]
    if op == "^":
        if major > 0 or minor is None:
            upper = (major + 1, 0, 0)
        elif minor > 0 or patch is None:
            upper = (0, minor + 1, 0)
        else:
            upper = (0, 0, (patch or 0) + 1)
        return [(">=", low), ("<", upper)]
    if op == ">" and (minor is None or patch is None):  # >1.2 is >=1.3.0
        return [(">=", (major + 1, 0, 0) if minor is None else (major, minor + 1, 0))]
    if op == "<=" and (minor is None or patch is None):  # <=1.2 is <1.3.0
        return [("<", (major + 1, 0, 0) if minor is None else (major, minor + 1, 0))]
    return [(op, low)]


def _check(op: str, version: Triple, bound: Triple) -> bool:
    return {"=": version == bound, "<": version < bound, "<=": version <= bound,
            ">": version > bound, ">=": version >= bound}[op]


def satisfies(version: str | None, spec: str | None) -> bool:
    """Whether a dataversion is in an npm semver range (no range: every
    version; a notification without dataversion matches only no range or ``*``)."""
    if spec is None or not spec.strip():
        return True
    if version is None:
        return spec.strip() in ("*", "x", "X")
    parts = _parts(version)
    if parts is None or None in parts:
        return version == spec.strip()
    actual: Triple = (parts[0], parts[1], parts[2])  # type: ignore[assignment]
    for alternative in spec.split("||"):
        hyphen = _HYPHEN.match(alternative)
        if hyphen:
            low, high = _parts(hyphen[1]), _parts(hyphen[2])
            if low is None or high is None:
                continue
            bounds = _bounds(">=", low) + _bounds("<=", high)
        else:
            bounds = []
            comparators = [(match["op"] or "", _parts(match["version"]))
                           for match in _COMPARATOR.finditer(alternative.strip())]
            if any(found is None for _, found in comparators):
                continue  # not a range npm reads: matches nothing
            for op, found in comparators:
                bounds += _bounds(op, found or [])
        if all(_check(op, actual, bound) for op, bound in bounds):
            return True
    return False


def _matches(link: Link, event: EventType) -> bool:
    return link.type == event.type and satisfies(event.dataversion, link.dataversion)


def sending(catalog: Catalog, event: EventType) -> tuple[tuple[Service, Link], ...]:
    """The services that send the event (type and dataversion), with their link."""
    return tuple((service, link) for service in catalog.services for link in service.sends if _matches(link, event))


def receiving(catalog: Catalog, event: EventType) -> tuple[tuple[Service, Link], ...]:
    """The services that receive the event (its dataversion in their range), with their link."""
    return tuple((service, link) for service in catalog.services for link in service.receives if _matches(link, event))


def travels_on(catalog: Catalog, event: EventType) -> tuple[Channel, ...]:
    """The channels an event is published on: those its sending services name
    (in the catalog's channel order), or every channel of the catalog when it
    has no services (catalog-format.md §9, "Channels")."""
    if not catalog.services:
        return catalog.channels
    named = {link.channel for _, link in sending(catalog, event) if link.channel}
    return tuple(channel for channel in catalog.channels if channel.name in named)
