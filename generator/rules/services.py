"""Channels and services (catalog-format.md §9), all profiles: every
reference of a service resolves, every channel carries something, addresses
are level-1 URI templates and bindings fit the protocol."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..diagnostics import Diagnostic, Severity
from ..model import Catalog, Channel, Link, Service, address_problem
from ..naming import closest, did_you_mean
from ..string_formats import is_npm_range
from . import Context, set_rule

E, W = Severity.ERROR, Severity.WARNING

# What each protocol's ``bindings`` may hold (catalog-format.md §9) and a
# check of its value: (what it is, is the value one).
BINDINGS: dict[str, dict[str, tuple[str, Any]]] = {
    "kafka": {"key": ("the name of the context attribute that is the message key", lambda v: isinstance(v, str) and v != "")},
    "amqp": {
        "exchange": ("an exchange name", lambda v: isinstance(v, str)),
        "routingKey": ("a routing key", lambda v: isinstance(v, str)),
    },
    "mqtt": {
        "qos": ("0, 1 or 2", lambda v: type(v) is int and 0 <= v <= 2),
        "retain": ("true or false", lambda v: type(v) is bool),
    },
    "http": {},
}


def _catalogs(context: Context) -> Iterator[Catalog]:
    for catalog in context.built.catalog_set.catalogs:
        if catalog.channels or catalog.services:
            yield catalog


@set_rule(
    "CAT-SERVICE-REF", E,
    "A service's sends and receives name a channel and an event type of its catalog, at a dataversion "
    "(sends) or npm semver range (receives) one of its events has (catalog-format.md §9).",
    fixed=True,
)
def service_references(context: Context) -> Iterator[Diagnostic]:
    for catalog in _catalogs(context):
        channels = {channel.name for channel in catalog.channels}
        versions: dict[str, list[str | None]] = {}
        for event in catalog.events:
            versions.setdefault(event.type, []).append(event.dataversion)
        for service in catalog.services:
            for kind, links in (("sends", service.sends), ("receives", service.receives)):
                for link in links:
                    yield from _link_problems(context, service, kind, link, channels, versions)


def _link_problems(
    context: Context, service: Service, kind: str, link: Link, channels: set[str], versions: dict[str, list[str | None]]
) -> Iterator[Diagnostic]:
    where = f"service '{service.name}' {kind}"
    if link.type not in versions:
        yield context.report(
            "CAT-SERVICE-REF",
            f"{where} '{link.type}', which is no event type of this catalog{did_you_mean(link.type, versions)}",
            context.loc(service.file, link.path + ("type",)),
            closest(link.type, versions),
        )
    elif link.dataversion is not None:
        known = [version for version in versions[link.type] if version is not None]
        listed = ", ".join(known) or "none: it is a notification without data"
        if kind == "receives" and not is_npm_range(link.dataversion):
            yield context.report(
                "CAT-SERVICE-REF",
                f"{where} '{link.type}' at '{link.dataversion}', which is not an npm semver range "
                f"(e.g. '>=1.0.0 <2.0.0', '^1.2.0', '1.x'); its dataversions: {listed}",
                context.loc(service.file, link.path + ("dataversion",)),
            )
        elif not any(link.receives(link.type, version) if kind == "receives" else link.dataversion == version
                     for version in known):
            yield context.report(
                "CAT-SERVICE-REF",
                f"{where} '{link.type}' at '{link.dataversion}', which no dataversion of it "
                f"{'satisfies' if kind == 'receives' else 'is'} (its dataversions: {listed})",
                context.loc(service.file, link.path + ("dataversion",)),
                closest(link.dataversion, known) if kind == "sends" else None,
            )
    if link.channel is not None and link.channel not in channels:
        known_channels = ", ".join(sorted(channels)) or "the catalog has no channels"
        yield context.report(
            "CAT-SERVICE-REF",
            f"{where} on channel '{link.channel}', which is not a channel of this catalog"
            f"{did_you_mean(link.channel, channels)} (channels: {known_channels})",
            context.loc(service.file, link.path + ("channel",)),
            closest(link.channel, channels),
        )


@set_rule(
    "CAT-CHANNEL-UNUSED", W,
    "Some event travels on every channel: a service sends on it, or the catalog has no services (catalog-format.md §9).",
)
def unused_channels(context: Context) -> Iterator[Diagnostic]:
    for catalog in _catalogs(context):
        if not catalog.services:
            continue  # every event travels on every channel
        # Named in a sends entry (one naming an unknown event type is CAT-SERVICE-REF's,
        # and so is a misspelt name: the channel it meant is not reported twice).
        names = {channel.name for channel in catalog.channels}
        used = {link.channel for service in catalog.services for link in service.sends}
        used |= {closest(name, names) for name in used - names if name}
        for channel in catalog.channels:
            if channel.name not in used:
                receivers = [service.name for service in catalog.services
                             if any(link.channel == channel.name for link in service.receives)]
                heard = f" (yet {', '.join(receivers)} receive{'s' if len(receivers) == 1 else ''} on it)" if receivers else ""
                yield context.report(
                    "CAT-CHANNEL-UNUSED",
                    f"no event travels on channel '{channel.name}': no service sends on it{heard}; "
                    f"name it in a service's sends or remove it",
                    context.key_loc(channel.file, channel.path),
                )


@set_rule(
    "CAT-CHANNEL-ADDRESS", E,
    "A channel address is an RFC 6570 level-1 template ({name} parameters); an http channel's is a URL path.",
    fixed=True,
)
def channel_addresses(context: Context) -> Iterator[Diagnostic]:
    for catalog in _catalogs(context):
        for channel in catalog.channels:
            if not channel.address:
                continue  # CAT-REQUIRED / CAT-TYPE
            problem = address_problem(channel.address)
            where = context.loc(channel.file, channel.path + ("address",))
            if problem is not None:
                yield context.report("CAT-CHANNEL-ADDRESS", f"channel '{channel.name}': {problem}", where)
            elif channel.protocol == "http" and not channel.address.startswith("/"):
                yield context.report(
                    "CAT-CHANNEL-ADDRESS",
                    f"channel '{channel.name}' (http): the address is a URL path and starts with '/'",
                    where, "/" + channel.address.lstrip("/"),
                )


@set_rule(
    "CAT-CHANNEL-BINDINGS", E,
    "A channel's bindings fit its protocol: kafka key; amqp exchange, routingKey; mqtt qos 0-2, retain true|false; http none.",
    fixed=True,
)
def channel_bindings(context: Context) -> Iterator[Diagnostic]:
    for catalog in _catalogs(context):
        for channel in catalog.channels:
            yield from _binding_problems(context, channel)


def _binding_problems(context: Context, channel: Channel) -> Iterator[Diagnostic]:
    allowed = BINDINGS.get(channel.protocol)
    if allowed is None:
        return  # an unknown protocol: CAT-TYPE
    for key, value in channel.bindings:
        path = channel.path + ("bindings", key)
        if key not in allowed:
            fits = ", ".join(allowed) if allowed else "none"
            yield context.report(
                "CAT-CHANNEL-BINDINGS",
                f"channel '{channel.name}' ({channel.protocol}): '{key}' is no {channel.protocol} binding"
                f"{did_you_mean(key, allowed)} (it has: {fits})",
                context.key_loc(channel.file, path),
                closest(key, allowed),
            )
        elif not allowed[key][1](value):
            yield context.report(
                "CAT-CHANNEL-BINDINGS",
                f"channel '{channel.name}' ({channel.protocol}): {key} is {allowed[key][0]}, not {json.dumps(value, default=str)}",
                context.loc(channel.file, path),
            )
