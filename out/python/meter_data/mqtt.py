"""Publish and consume this package's events over MQTT with paho-mqtt.

Part of evcat's runtime (``generator/runtime/``), copied verbatim into every
generated package; needs the ``mqtt`` extra (``paho-mqtt`` 2).

With an MQTT 5 client, binary mode carries the attributes as User
Properties and ``datacontenttype`` as the Content Type (CloudEvents MQTT
binding §3.1); structured mode sends the JSON format with Content Type
``application/cloudevents+json``. An MQTT 3.1.1 client can only send and
receive structured mode (§3).

    consumer = Consumer(EVENTS)

    @consumer.on(MeterReadingV1)
    def store(event: MeterReadingV1) -> None: ...

    client.on_message = consumer.on_message
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, TypeVar

from pydantic import ValidationError

from ._bindings import from_mqtt, to_mqtt
from ._channels import routed
from ._cloudevents import CloudEvent, EventError

__all__ = ["Client", "Consumer", "Message", "publish"]

_LOG = logging.getLogger(__name__)
E = TypeVar("E", bound=CloudEvent)
_MQTT_V5 = 5  # paho's MQTTProtocolVersion.MQTTv5 (an IntEnum)

# paho-mqtt is imported when used, never at the module's top: the module
# type-checks (mypy --strict, pyright strict) with only pydantic installed,
# and its types are what it needs of paho's, so paho's own objects fit.


class Client(Protocol):
    """What ``publish`` needs of a client (paho's ``Client``)."""

    @property
    def protocol(self) -> int: ...

    def publish(
        self,
        topic: str,
        payload: bytes,
        qos: int = ...,
        retain: bool = ...,
        properties: Any = ...,
    ) -> Any: ...


class Message(Protocol):
    """What the consumer reads of a message (paho's ``MQTTMessage``)."""

    @property
    def topic(self) -> str: ...

    @property
    def payload(self) -> bytes | bytearray: ...


ErrorHandler = Callable[[Message, Exception], Any]


def publish(
    client: Client,
    topic: str | CloudEvent,
    event: CloudEvent | None = None,
    mode: Literal["structured", "binary"] | None = None,
    qos: int | None = None,
    retain: bool | None = None,
    **parameters: Any,
) -> Any:
    """Publish ``event`` on ``topic``: by default in binary mode with an MQTT 5
    client, in structured mode (the only one it has) with MQTT 3.1.1; returns
    paho's ``MQTTMessageInfo``.

    ``publish(client, event, site="x")``: on the topic of the event's MQTT
    channel (catalog-format.md §9), its ``{parameters}`` filled in, with the
    channel's ``qos`` and ``retain`` (default 1 and false); an explicit topic
    wins."""
    bindings: Mapping[str, Any] = {}
    if isinstance(topic, CloudEvent):
        if event is not None:
            raise TypeError("publish(client, event) or publish(client, topic, event)")
        event = topic
        topic, _, bindings = routed(event, "mqtt", parameters)
    elif event is None:
        raise TypeError("publish(client, topic, event): the event is missing")
    chosen_qos = qos if qos is not None else int(bindings.get("qos", 1))
    chosen_retain = (
        retain if retain is not None else bool(bindings.get("retain", False))
    )
    version5 = client.protocol == _MQTT_V5
    chosen = mode or ("binary" if version5 else "structured")
    content_type, user_properties, payload = to_mqtt(event, chosen)
    if chosen_retain and not payload:
        # A retained PUBLISH with an empty payload deletes the topic's retained
        # message (MQTT 5 §3.3.1.3): an event without data in binary mode.
        if mode is not None:
            raise ValueError(
                "an event without data in binary mode has an empty payload, which "
                "with retain deletes the retained message: use structured mode"
            )
        chosen = "structured"
        content_type, user_properties, payload = to_mqtt(event, chosen)
    mode = chosen
    if not version5:
        if mode != "structured":
            raise ValueError("MQTT 3.1.1 carries CloudEvents in structured mode only")
        return client.publish(topic, payload, qos=chosen_qos, retain=chosen_retain)
    packet_types: Any = importlib.import_module("paho.mqtt.packettypes").PacketTypes
    properties: Any = importlib.import_module("paho.mqtt.properties").Properties(
        packet_types.PUBLISH
    )
    if content_type is not None:
        properties.ContentType = content_type
    if user_properties:
        properties.UserProperty = user_properties
    return client.publish(
        topic, payload, qos=chosen_qos, retain=chosen_retain, properties=properties
    )


class Consumer:
    """Typed dispatch of the events arriving at a paho client, like the
    webhook receiver: set ``client.on_message = consumer.on_message``.

    A message that is not a valid event of ``events`` is reported to
    ``on_error`` with the same error ``parse_event`` raises for it; so is a
    message whose handler raised. Neither stops the client's network loop.
    """

    def __init__(
        self,
        events: Mapping[tuple[str, str | None], type[CloudEvent]],
        on_error: ErrorHandler | None = None,
    ) -> None:
        self.events = events
        self.on_error: ErrorHandler = on_error or _report
        self._handlers: list[tuple[type[CloudEvent], Callable[[Any], Any]]] = []

    def on(
        self, event_class: type[E]
    ) -> Callable[[Callable[[E], Any]], Callable[[E], Any]]:
        """Register a handler for ``event_class`` (and its subclasses)."""

        def register(handler: Callable[[E], Any]) -> Callable[[E], Any]:
            self._handlers.append((event_class, handler))
            return handler

        return register

    def parse(self, message: Message) -> CloudEvent:
        """The event in ``message`` (raises ``EventError`` or ``ValidationError``)."""
        properties = getattr(message, "properties", None)
        content_type = getattr(properties, "ContentType", None)
        user_properties = getattr(properties, "UserProperty", None)
        return from_mqtt(content_type, user_properties, message.payload, self.events)

    def on_message(self, client: Any, userdata: Any, message: Message) -> None:
        """paho's ``on_message`` callback; never raises."""
        try:
            event = self.parse(message)
            for event_class, handler in self._handlers:
                if isinstance(event, event_class):
                    handler(event)
                    break
        except (EventError, ValidationError) as error:  # not a valid event
            self._fail(message, error)
        except Exception as error:  # noqa: BLE001
            # A handler bug must not stop the loop either.
            self._fail(message, error)

    def _fail(self, message: Message, error: Exception) -> None:
        try:
            self.on_error(message, error)
        except Exception:  # noqa: BLE001
            # Logged, never raised.
            _LOG.exception("on_error failed")


def _report(message: Message, error: Exception) -> None:
    _LOG.warning("message on %s rejected: %s", message.topic, error)
