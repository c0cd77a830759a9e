"""Publish and consume this package's events on RabbitMQ with aio-pika.

Part of evcat's runtime (``generator/runtime/``), copied verbatim into every
generated package; needs the ``rabbitmq`` extra (``aio-pika``).

aio-pika speaks AMQP 0-9-1; the CloudEvents AMQP binding is written for
AMQP 1.0. This adapter carries the binding's mapping over 0-9-1: the
``cloudEvents_*`` application properties of binary mode are the message's
headers table and ``datacontenttype`` the ``content_type`` property. Values
keep their native types where 0-9-1 has them (boolean, long, byte array); a
Timestamp travels as its canonical string, because a 0-9-1 timestamp counts
whole seconds. RabbitMQ 3.x does not translate 0-9-1 headers and AMQP 1.0
application properties into each other: with AMQP 1.0 clients on the same
queue, use structured mode (or ``to_amqp``/``from_amqp`` on both sides with
an AMQP 1.0 client).

    consumer = Consumer(EVENTS)

    @consumer.on(MeterReadingV1)
    async def store(event: MeterReadingV1) -> None: ...

    await consumer.consume(queue)   # runs until cancelled
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, Protocol, TypeVar

from pydantic import ValidationError

from ._bindings import (
    _rfc3339,  # pyright: ignore[reportPrivateUsage]  # a sibling module's helper
    from_amqp,
    to_amqp,
)
from ._channels import routed
from ._cloudevents import CloudEvent, EventError

__all__ = ["Consumer", "Exchange", "IncomingMessage", "Queue", "message", "publish"]

_LOG = logging.getLogger(__name__)
E = TypeVar("E", bound=CloudEvent)
Handler = Callable[[Any], Awaitable[None]]

# aio-pika is imported when used, never at the module's top: the module
# type-checks (mypy --strict, pyright strict) with only pydantic installed,
# and its types are what it needs of aio-pika's, so aio-pika's own objects
# (``AbstractExchange``, ``AbstractIncomingMessage``, ``AbstractQueue``) fit.


class Exchange(Protocol):
    """What ``publish`` needs of an exchange (aio-pika's ``AbstractExchange``)."""

    async def publish(self, message: Any, routing_key: str) -> Any: ...


class IncomingMessage(Protocol):
    """What the consumer reads of a message (aio-pika's
    ``AbstractIncomingMessage``)."""

    @property
    def body(self) -> bytes: ...

    @property
    def content_type(self) -> str | None: ...

    @property
    def headers(self) -> Mapping[str, Any]: ...

    @property
    def message_id(self) -> str | None: ...

    async def ack(self) -> Any: ...

    async def reject(self, requeue: bool = ...) -> Any: ...


class _QueueIterator(Protocol):
    async def __aenter__(self) -> AsyncIterable[IncomingMessage]: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> Any: ...


class Queue(Protocol):
    """What ``Consumer.consume`` needs of a queue (aio-pika's ``AbstractQueue``)."""

    def iterator(self) -> _QueueIterator: ...


ErrorHandler = Callable[[IncomingMessage, Exception], Any]


def _header(value: Any) -> Any:
    if isinstance(value, datetime):
        return _rfc3339(value)
    if isinstance(value, bytes):
        return bytearray(value)  # the 0-9-1 byte array ('x')
    return value


def message(
    event: CloudEvent,
    mode: Literal["structured", "binary"] = "binary",
    **properties: Any,
) -> Any:
    """The ``aio_pika.Message`` carrying ``event`` (extra message properties,
    e.g. ``delivery_mode``, are passed on)."""
    aio_pika: Any = importlib.import_module("aio_pika")
    content_type, application_properties, body = to_amqp(event, mode)
    headers = {name: _header(value) for name, value in application_properties.items()}
    return aio_pika.Message(
        body,
        content_type=content_type or None,
        headers=headers,
        message_id=event.id,
        **properties,
    )


async def publish(
    exchange: Exchange,
    event: CloudEvent,
    routing_key: str | None = None,
    mode: Literal["structured", "binary"] = "binary",
    **parameters: Any,
) -> None:
    """Publish ``event`` (persistent) on ``exchange`` with ``routing_key``.

    Without a routing key: the ``routingKey`` binding of the event's AMQP
    channel (catalog-format.md §9; the channel's address is the exchange,
    ``channel_address(event)``), its ``{parameters}`` filled in, else the
    event's type."""
    if routing_key is None:
        _, templated, _ = routed(event, "amqp", parameters, "routingKey")
        routing_key = event.type if templated is None else templated
    aio_pika: Any = importlib.import_module("aio_pika")
    await exchange.publish(
        message(event, mode, delivery_mode=aio_pika.DeliveryMode.PERSISTENT),
        routing_key=routing_key,
    )


def _report(incoming: IncomingMessage, error: Exception) -> None:
    _LOG.warning("message %s rejected: %s", incoming.message_id, error)


class Consumer:
    """Typed dispatch of the events of a queue, like the webhook receiver.

    A message that is not a valid event of ``events`` (garbage, an unknown
    type, invalid content) is rejected without requeueing (so it goes to the
    queue's dead-letter exchange, if any) and reported to ``on_error`` with
    the same error ``parse_event`` raises for it; so is a message whose
    handler raised. Neither stops the consumer. A valid event without a
    handler is acknowledged.
    """

    def __init__(
        self,
        events: Mapping[tuple[str, str | None], type[CloudEvent]],
        on_error: ErrorHandler | None = None,
    ) -> None:
        self.events = events
        self.on_error: ErrorHandler = on_error or _report
        self._handlers: list[tuple[type[CloudEvent], Handler]] = []

    def on(
        self, event_class: type[E]
    ) -> Callable[[Callable[[E], Awaitable[None]]], Callable[[E], Awaitable[None]]]:
        """Register an async handler for ``event_class`` (and its subclasses)."""

        def register(
            handler: Callable[[E], Awaitable[None]],
        ) -> Callable[[E], Awaitable[None]]:
            self._handlers.append((event_class, handler))
            return handler

        return register

    def parse(self, incoming: IncomingMessage) -> CloudEvent:
        """The event in ``incoming`` (raises ``EventError`` or ``ValidationError``)."""
        return from_amqp(
            incoming.content_type, incoming.headers, incoming.body, self.events
        )

    async def handle(self, incoming: IncomingMessage) -> None:
        """Parse, dispatch and settle one message; never raises."""
        try:
            event = self.parse(incoming)
        except (EventError, ValidationError) as error:  # not a valid event
            await self._reject(incoming, error)
            return
        except Exception as error:  # noqa: BLE001
            # Whatever a poison message provokes.
            await self._reject(incoming, error)
            return
        try:
            for event_class, handler in self._handlers:
                if isinstance(event, event_class):
                    await handler(event)
                    break
        except Exception as error:  # noqa: BLE001
            # A handler bug must not stop the consumer.
            await self._reject(incoming, error)
            return
        await incoming.ack()

    async def _reject(self, incoming: IncomingMessage, error: Exception) -> None:
        try:
            self.on_error(incoming, error)
        except Exception:  # noqa: BLE001
            # The error callback must not stop the consumer either.
            _LOG.exception("on_error failed")
        await incoming.reject(requeue=False)

    async def consume(self, queue: Queue) -> None:
        """Handle the messages of ``queue`` until cancelled."""
        async with queue.iterator() as messages:
            async for incoming in messages:
                await self.handle(incoming)
