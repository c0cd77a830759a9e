"""Where this package's events travel: the catalog's channels (catalog-format.md §9).

Part of evcat's runtime (``generator/runtime/``), copied verbatim into every
generated package; its ``channels.py`` lists the catalog's channels
(``CHANNELS``) and the channels each event travels on (``EVENT_CHANNELS``).

    channel_address(event, region="eu")   # "storage.eu.blobs"

An address is a URI template of level 1 (RFC 6570 §1.2): each ``{name}`` is
replaced by its parameter, percent-encoded except for the unreserved
characters (RFC 6570 §3.2.2, simple string expansion), so a value cannot
add a topic level (``/``) or a routing-key word (``.`` is unreserved and
kept, as a Kafka topic or an AMQP routing key writes it).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import quote

from ._models import CloudEvent

__all__ = ["Channel", "ChannelError", "channel_address", "event_channels"]

_PARAMETER = re.compile(r"\{([^{}]+)\}")


class ChannelError(LookupError):
    """An event has no channel (of a protocol), or an address misses a parameter."""


@dataclass(frozen=True)
class Channel:
    """One channel of the catalog: a Kafka topic, an AMQP exchange, an MQTT
    topic or a webhook URL path."""

    name: str
    protocol: str  # kafka | amqp | mqtt | http
    address: str  # a level-1 URI template
    parameters: tuple[str, ...] = ()
    bindings: Mapping[str, Any] = field(default_factory=dict[str, Any])
    description: str | None = None

    def expand(self, **parameters: Any) -> str:
        """The address with every ``{parameter}`` given (RFC 6570 §3.2.2)."""
        return _expand(self.address, self.name, parameters)


def _expand(template: str, name: str, parameters: Mapping[str, Any]) -> str:
    missing = [key for key in _PARAMETER.findall(template) if key not in parameters]
    if missing:
        needed = ", ".join(dict.fromkeys(missing))
        raise ChannelError(
            f"channel {name!r} ({template!r}) needs the parameter(s) {needed}: "
            f"channel_address(event, {missing[0]}=...)"
        )

    def value(match: re.Match[str]) -> str:
        return quote(str(parameters[match[1]]), safe="")

    return _PARAMETER.sub(value, template)


@cache
def _routes(package: str) -> tuple[dict[str, Channel], dict[Any, tuple[str, ...]]]:
    """The package's ``CHANNELS`` and ``EVENT_CHANNELS`` (its ``channels``
    module), read when first asked for: this module is imported by it."""
    try:
        module = importlib.import_module(f"{package}.channels")
    except ImportError:
        return {}, {}
    channels: dict[str, Channel] = getattr(module, "CHANNELS", {})
    routes: dict[Any, tuple[str, ...]] = getattr(module, "EVENT_CHANNELS", {})
    return channels, routes


def _key(event: CloudEvent) -> tuple[str, str | None]:
    return (type(event).event_type or event.type, type(event).event_dataversion)


def event_channels(
    event: CloudEvent, protocol: str | None = None
) -> tuple[Channel, ...]:
    """The channels ``event`` travels on (of ``protocol``, when given)."""
    channels, routes = _routes(__package__ or "")
    found = tuple(channels[name] for name in routes.get(_key(event), ()))
    return tuple(c for c in found if protocol is None or c.protocol == protocol)


def channel_of(
    event: CloudEvent, channel: str | None = None, protocol: str | None = None
) -> Channel:
    """The one channel ``event`` travels on (named ``channel``, of ``protocol``)."""
    found = list(event_channels(event, protocol))
    event_type, dataversion = _key(event)
    name = f"{event_type} {dataversion}" if dataversion else event_type
    what = f" {protocol}" if protocol else ""
    if channel is not None:
        found = [c for c in found if c.name == channel]
        if not found:
            raise ChannelError(f"{name} travels on no{what} channel {channel!r}")
    if not found:
        raise ChannelError(
            f"{name} travels on no{what} channel of the catalog: "
            "name the topic or address yourself"
        )
    if len(found) > 1:
        names = ", ".join(c.name for c in found)
        raise ChannelError(
            f"{name} travels on several{what} channels ({names}): "
            "name one, channel_address(event, 'name', ...)"
        )
    return found[0]


def channel_address(
    event: CloudEvent, channel: str | None = None, /, **parameters: Any
) -> str:
    """The address ``event`` is published to: its channel's address with the
    ``parameters`` filled in (``channel``: which one, when it travels on several).

    Raises ``ChannelError`` when the event travels on no channel (or on
    several, and none is named) or a parameter of the address is missing."""
    return channel_of(event, channel).expand(**parameters)


def routed(
    event: CloudEvent, protocol: str, parameters: Mapping[str, Any]
) -> tuple[str, Mapping[str, Any]]:
    """The address and bindings of ``event``'s one ``protocol`` channel (the
    broker helpers' default when no topic is given)."""
    found = channel_of(event, None, protocol)
    return _expand(found.address, found.name, parameters), found.bindings


def expand_binding(value: Any, name: str, parameters: Mapping[str, Any]) -> str:
    """A binding's text (an AMQP routing key) with its ``{parameters}`` filled in."""
    return _expand(str(value), name, parameters)
