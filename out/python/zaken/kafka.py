"""Publish and consume this package's events on Kafka with aiokafka.

Part of evcat's runtime (``generator/runtime/``), copied verbatim into every
generated package; the ``kafka`` extra installs ``aiokafka``. The module
only calls the producer and consumer it is given (``send_and_wait``,
``async for``), so any client with aiokafka's shape fits.

Binary mode by default: ``ce_`` headers, the data as the record value, the
key from ``partitionkey`` or ``subject`` (CloudEvents Kafka binding).

    consumer = Consumer(EVENTS)

    @consumer.on(MeterReadingV1)
    async def store(event: MeterReadingV1) -> None: ...

    await consumer.consume(aiokafka_consumer)   # runs until cancelled
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar

from pydantic import ValidationError

from ._bindings import from_kafka, to_kafka
from ._channels import routed
from ._cloudevents import CloudEvent, EventError

__all__ = ["Consumer", "Producer", "Record", "publish"]

_LOG = logging.getLogger(__name__)
E = TypeVar("E", bound=CloudEvent)


class Producer(Protocol):
    """What ``publish`` needs of a producer (aiokafka's ``AIOKafkaProducer``)."""

    async def send_and_wait(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: list[tuple[str, bytes]] | None = None,
    ) -> Any: ...


class Record(Protocol):
    """What the consumer reads of a record (aiokafka's ``ConsumerRecord``)."""

    @property
    def topic(self) -> str: ...

    @property
    def offset(self) -> int: ...

    @property
    def headers(self) -> Sequence[tuple[str, bytes]]: ...

    @property
    def value(self) -> bytes | None: ...


ErrorHandler = Callable[[Record, Exception], Any]


async def publish(
    producer: Producer,
    topic: str | CloudEvent,
    event: CloudEvent | None = None,
    mode: Literal["structured", "binary"] = "binary",
    **parameters: Any,
) -> Any:
    """Send ``event`` to ``topic`` and wait for the broker's acknowledgement.

    ``publish(producer, event, region="eu")``: to the address of the event's
    Kafka channel (catalog-format.md §9), its ``{parameters}`` filled in and
    the record key the channel's ``key`` attribute; an explicit topic wins.
    """
    bindings: Mapping[str, Any] = {}
    if isinstance(topic, CloudEvent):
        if event is not None:
            raise TypeError(
                "publish(producer, event) or publish(producer, topic, event)"
            )
        event = topic
        topic, _, bindings = routed(event, "kafka", parameters)
    else:
        if event is None:
            raise TypeError("publish(producer, topic, event): the event is missing")
    key, headers, value = to_kafka(event, mode)
    attribute = bindings.get("key")
    if isinstance(attribute, str):
        wire = event.model_dump(mode="json", by_alias=True, exclude_none=True)
        chosen = wire.get(attribute)
        key = None if chosen is None else str(chosen).encode("utf-8")
    return await producer.send_and_wait(
        topic, value, key=key, headers=list(headers.items())
    )


def _report(record: Record, error: Exception) -> None:
    _LOG.warning("record %s@%s skipped: %s", record.topic, record.offset, error)


class Consumer:
    """Typed dispatch of the events of a topic, like the webhook receiver.

    A record that is not a valid event of ``events`` (garbage, an unknown
    type, invalid content) is reported to ``on_error`` with the same error
    ``parse_event`` raises for it, and skipped; so is a record whose handler
    raised. Neither stops the consumer. Offsets are committed as the
    consumer is configured to (aiokafka commits automatically by default).
    """

    def __init__(
        self,
        events: Mapping[tuple[str, str | None], type[CloudEvent]],
        on_error: ErrorHandler | None = None,
    ) -> None:
        self.events = events
        self.on_error: ErrorHandler = on_error or _report
        self._handlers: list[tuple[type[CloudEvent], Callable[[Any], Awaitable[None]]]]
        self._handlers = []

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

    def parse(self, record: Record) -> CloudEvent:
        """The event in ``record`` (raises ``EventError`` or ``ValidationError``)."""
        return from_kafka(record.headers, record.value, self.events)

    async def handle(self, record: Record) -> None:
        """Parse and dispatch one record; never raises."""
        try:
            event = self.parse(record)
            for event_class, handler in self._handlers:
                if isinstance(event, event_class):
                    await handler(event)
                    break
        except (EventError, ValidationError) as error:  # not a valid event
            self._fail(record, error)
        except Exception as error:  # noqa: BLE001
            # A handler bug must not stop the consumer.
            self._fail(record, error)

    def _fail(self, record: Record, error: Exception) -> None:
        try:
            self.on_error(record, error)
        except Exception:  # noqa: BLE001
            # Logged, never raised.
            _LOG.exception("on_error failed")

    async def consume(self, records: AsyncIterator[Any]) -> None:
        """Handle the records of a started consumer until cancelled."""
        async for record in records:
            await self.handle(record)
