"""Where this package's events travel: the catalog's channels (catalog-format.md §9).

Part of evcat's runtime (``generator/runtime/``), copied verbatim into every
generated package; its ``channels.py`` lists the catalog's channels
(``CHANNELS``) and the channels each event travels on (``EVENT_CHANNELS``).

    channel_address(event, region="eu")   # "storage.eu.blobs"

An address is a URI template of level 1 (RFC 6570 §1.2; ``_uritemplate``,
the one home of the grammar): each ``{name}`` is replaced by its parameter,
percent-encoded except for the unreserved characters (RFC 6570 §3.2.2,
simple string expansion), so a value cannot add a topic level (``/``);
``.`` is unreserved and kept, as a Kafka topic or an AMQP routing key
writes it.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any

from ._models import CloudEvent
from ._uritemplate import TemplateError, expand
from ._uritemplate import parameters as template_parameters

__all__ = ["Channel", "ChannelError", "channel_address", "event_channels"]


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
    bindings: Mapping[str, Any] = field(default_factory=dict[str, Any], hash=False)
    description: str | None = None

    def __post_init__(self) -> None:
        # Frozen all through: the bindings are a read-only view of a copy.
        object.__setattr__(self, "bindings", MappingProxyType(dict(self.bindings)))

    def expand(self, **parameters: Any) -> str:
        """The address with every ``{parameter}`` given (RFC 6570 §3.2.2)."""
        return _expand(self.address, self.name, parameters)


def _expand(
    template: str,
    name: str,
    parameters: Mapping[str, Any],
    allowed: Collection[str] = (),
) -> str:
    """``template`` (the address or a binding of channel ``name``) with its
    parameters filled in; a parameter neither it nor ``allowed`` names is a
    mistake too."""
    try:
        names = template_parameters(template)
        missing = [key for key in names if key not in parameters]
        if missing:
            raise ChannelError(
                f"channel {name!r} ({template!r}) needs the parameter(s) "
                f"{', '.join(missing)}: channel_address(event, {missing[0]}=...)"
            )
        unknown = sorted(set(parameters) - set(names) - set(allowed))
        if unknown:
            raise ChannelError(
                f"channel {name!r} ({template!r}) has no parameter(s) "
                f"{', '.join(unknown)}"
            )
        return expand(template, **{key: parameters[key] for key in names})
    except TemplateError as error:
        raise ChannelError(f"channel {name!r}: {error}") from None


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
    event: CloudEvent,
    protocol: str,
    parameters: Mapping[str, Any],
    templated: str | None = None,
) -> tuple[str, str | None, Mapping[str, Any]]:
    """The address of ``event``'s one ``protocol`` channel (the broker
    helpers' default when no topic is given), its ``templated`` binding (an
    AMQP routing key), both with ``parameters`` filled in, and its bindings."""
    found = channel_of(event, None, protocol)
    binding = found.bindings.get(templated) if templated else None
    extra = template_parameters(str(binding)) if binding is not None else ()
    address = _expand(found.address, found.name, parameters, extra)
    if binding is None:
        return address, None, found.bindings
    names = template_parameters(found.address)
    return (
        address,
        _expand(str(binding), found.name, parameters, names),
        found.bindings,
    )
