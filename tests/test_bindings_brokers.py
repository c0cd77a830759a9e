"""The generated packages' broker adapters on real brokers (contract §7).

RabbitMQ (Debian's rabbitmq-server: the package's ``rabbitmq`` module on
aio-pika over AMQP 0-9-1, and ``to_amqp``/``from_amqp`` with qpid-proton
over AMQP 1.0), Mosquitto (Debian's mosquitto: the ``mqtt`` module on
paho-mqtt, MQTT 5 and 3.1.1) and Tansu (a Kafka-compatible broker from PyPI:
the ``kafka`` module on aiokafka), all started by the test run on loopback
(``tests/brokers.py``): every example is published in binary and structured
mode and consumed with typed dispatch, then compared; poison messages in
between are rejected with exactly ``parse_event``'s verdict and do not stop
the consumer.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError

from .brokers import Broker, kafka, mosquitto, proton, rabbitmq  # noqa: F401  (fixtures)
from .test_bindings_sdk import CASES, MODES, _verdict
from .test_python_output import generated, package  # noqa: F401  (a fixture)

CATALOG_IDS = sorted({catalog_id for _, catalog_id, _ in CASES})
STRUCTURED = "application/cloudevents+json; charset=utf-8"


def _events(generated: Path, catalog_id: str) -> tuple[ModuleType, list[Any]]:
    module = package(generated, catalog_id)
    return module, [module.parse_event(raw) for _, case_catalog, raw in CASES if case_catalog == catalog_id]


def _invalid_wire(module: ModuleType, events: list[Any]) -> dict[str, dict[str, Any]]:
    """Structured-mode forms of invalid events of this catalog."""
    base = next((e for e in events if type(e).has_data), events[0]).to_dict()
    invalid = {
        "unknown-type": {**base, "type": "io.example.not-in-this-catalog"},
        "no-source": {k: v for k, v in base.items() if k != "source"},
    }
    if "data" in base:
        invalid["data-not-an-object"] = {**base, "data": [1, 2]}
    return invalid


def _expected(module: ModuleType, raw: Any) -> tuple[type[Exception], Any]:
    try:
        return _verdict(lambda: module.parse_event(raw))
    except RecursionError as error:  # parse_event's verdict on JSON nested too deeply
        return type(error), str(error)


class HandlerBug(Exception):
    """What the test's handlers raise for the event with id "handler-raises"."""


DEEP = b"[" * 100_000  # JSON nested deeper than the parser goes


def _error_verdict(error: Exception) -> tuple[type[Exception], Any]:
    if isinstance(error, (ValueError, ValidationError)):

        def again() -> None:
            raise error

        return _verdict(again)
    return type(error), str(error)


def _same_events(received: list[Any], sent: list[Any]) -> None:
    assert len(received) == len(sent)
    by_json = {event.to_json(): event for event in sent}
    assert sorted(e.to_json() for e in received) == sorted(e.to_json() for e in sent)
    for event in received:
        original = by_json[event.to_json()]
        assert type(event) is type(original) and event == original


# --- RabbitMQ --------------------------------------------------------------


async def _rabbitmq_round_trip(generated: Path, broker: Any, catalog_id: str) -> None:
    import aio_pika

    module, events = _events(generated, catalog_id)
    adapter = importlib.import_module(f"{module.__name__}.rabbitmq")
    connection = await aio_pika.connect(broker.url)
    async with connection:
        channel = await connection.channel()
        dead = await channel.declare_queue(exclusive=True)
        queue = await channel.declare_queue(
            exclusive=True, arguments={"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dead.name}
        )
        exchange = channel.default_exchange
        sent: list[Any] = []
        poison: list[tuple[Any, tuple[type[Exception], Any]]] = []  # (body, verdict)

        async def send_poison(message: aio_pika.Message, verdict: tuple[type[Exception], Any]) -> None:
            await exchange.publish(message, routing_key=queue.name)
            poison.append((message.body, verdict))

        await send_poison(aio_pika.Message(b"\x00\xffgarbage"), (module.EventError, None))
        for mode in MODES:
            for event in events:
                await adapter.publish(exchange, event, queue.name, mode)
                sent.append(event)
            await send_poison(aio_pika.Message(b"{not json", content_type=STRUCTURED), _expected(module, b"{not json"))
        await send_poison(aio_pika.Message(DEEP, content_type=STRUCTURED), _expected(module, DEEP))
        for name, wire in _invalid_wire(module, events).items():
            text = json.dumps(wire).encode()
            await send_poison(aio_pika.Message(text, content_type=STRUCTURED), _expected(module, text))
            # the same event in binary mode: the application properties as 0-9-1 headers
            headers = {f"cloudEvents_{k}": v for k, v in wire.items() if k not in ("data", "datacontenttype")}
            body = json.dumps(wire["data"]).encode() if "data" in wire else b""
            await send_poison(
                aio_pika.Message(body, headers=headers, content_type=wire.get("datacontenttype")),
                _expected(module, wire),
            )
        boom = events[0].model_copy(update={"id": "handler-raises"})
        await adapter.publish(exchange, boom, queue.name)
        poison.append((None, (HandlerBug, "handler bug")))
        last = events[-1].model_copy(update={"id": "after-the-poison"})
        await adapter.publish(exchange, last, queue.name)
        sent.append(last)

        received: list[Any] = []
        errors: list[tuple[bytes, Exception]] = []
        done = asyncio.Event()
        expected_count = len(sent) + len(poison)

        def settle() -> None:
            if len(received) + len(errors) == expected_count:
                done.set()

        consumer = adapter.Consumer(
            module.EVENTS, on_error=lambda message, error: (errors.append((message.body, error)), settle())
        )
        for event_class in set(module.EVENTS.values()):

            @consumer.on(event_class)
            async def handle(event: Any) -> None:
                if event.id == "handler-raises":
                    raise HandlerBug("handler bug")
                received.append(event)
                settle()

        task = asyncio.create_task(consumer.consume(queue))
        try:
            await asyncio.wait_for(done.wait(), timeout=60)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

        _same_events(received, sent)
        assert received[-1].id == "after-the-poison"  # the consumer went on after every poison message
        assert len(errors) == len(poison)
        for (body, error), (sent_body, verdict) in zip(errors, poison):
            if sent_body is not None:
                assert body == sent_body
            if verdict[1] is None:
                assert isinstance(error, module.EventError) and "not a CloudEvent" in str(error)
            else:
                assert _error_verdict(error) == verdict, body
        # rejected without requeueing: every poison message is in the dead-letter queue
        dead_letters = []
        for _ in range(100):
            message = await dead.get(fail=False, no_ack=True)
            if message is None:
                if len(dead_letters) == len(poison):
                    break
                await asyncio.sleep(0.05)
                continue
            dead_letters.append(message.body)
        assert len(dead_letters) == len(poison)
        declared = await channel.declare_queue(queue.name, passive=True)
        assert declared.declaration_result.message_count == 0


@pytest.mark.parametrize("catalog_id", CATALOG_IDS)
def test_rabbitmq_publishes_and_consumes_every_example(generated: Path, rabbitmq: Broker, catalog_id: str) -> None:
    asyncio.run(_rabbitmq_round_trip(generated, rabbitmq, catalog_id))


def test_rabbitmq_headers_keep_native_types(generated: Path) -> None:
    module, events = _events(generated, "hostile-names")
    adapter = importlib.import_module(f"{module.__name__}.rabbitmq")
    event = next(e for e in events if "copy" in e.to_dict())
    message = adapter.message(event)
    assert message.headers["cloudEvents_json"] is True
    assert message.headers["cloudEvents_import"] == -(2**31)
    assert message.headers["cloudEvents_copy"] == bytearray(event.copy_)
    if "time" in event.to_dict():
        assert isinstance(message.headers["cloudEvents_time"], str)  # 0-9-1 timestamps hold whole seconds only
    assert message.content_type == "application/json"


def _proton_properties(proton: ModuleType, properties: dict[str, Any]) -> dict[str, Any]:
    """``to_amqp``'s application properties as qpid-proton writes native AMQP types:
    ``datetime`` -> timestamp, ``bytes`` -> binary, ``int`` -> long, ``bool`` -> boolean."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    return {
        name: proton.timestamp((value - epoch) // timedelta(milliseconds=1)) if isinstance(value, datetime) else value
        for name, value in properties.items()
    }


def _content_type(message: Any) -> str | None:
    # qpid-proton 0.40 gives an absent content-type as symbol('None')
    return None if message.content_type in (None, "None") else str(message.content_type)


@pytest.mark.parametrize("catalog_id", CATALOG_IDS)
def test_rabbitmq_amqp10_carries_the_amqp_binding(
    generated: Path, rabbitmq: Broker, proton: ModuleType, catalog_id: str
) -> None:
    """The CloudEvents AMQP binding proper: AMQP 1.0 (qpid-proton) through RabbitMQ's AMQP 1.0 plugin."""
    from proton.utils import BlockingConnection

    module, events = _events(generated, catalog_id)
    on_the_ms = events[0].model_copy(update={"time": datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)})
    events = [*events, on_the_ms]
    connection = BlockingConnection(
        f"amqp://127.0.0.1:{rabbitmq.port}",
        user="guest",
        password="guest",
        allowed_mechs="PLAIN",
        allow_insecure_mechs=True,
        timeout=30,
    )
    try:
        address = f"/queue/evcat-amqp10-{catalog_id}"
        receiver = connection.create_receiver(address)
        sender = connection.create_sender(address)
        sent = []
        for mode in MODES:
            for event in events:
                content_type, properties, body = module.to_amqp(event, mode)
                message = proton.Message(
                    body=body,
                    content_type=content_type or None,
                    properties=_proton_properties(proton, properties) or None,
                    inferred=True,  # the body is the application-data (data) section
                )
                sender.send(message)
                sent.append((mode, event))
        poison = [b"\x00\xffgarbage", b"{not json"]
        sender.send(proton.Message(body=poison[0], inferred=True))
        sender.send(proton.Message(body=poison[1], content_type=STRUCTURED, inferred=True))

        received = []
        for mode, event in sent:
            message = receiver.receive(timeout=30)
            receiver.accept()
            again = module.from_amqp(_content_type(message), message.properties, message.body)
            assert again == event and again.to_dict() == event.to_dict(), (mode, event.type)
            received.append(again)
            if mode == "binary":  # AMQP binding §3.1.3.2: native AMQP types on the wire
                kinds = {**type(event).attribute_types, "time": "Timestamp"}
                typed = event.model_dump(by_alias=True)
                for name, value in message.properties.items():
                    attribute = name.removeprefix("cloudEvents_")
                    kind = kinds.get(attribute)
                    if kind == "Boolean":
                        assert type(value) is bool
                    elif kind == "Integer":
                        assert type(value) is int
                    elif kind == "Binary":
                        assert isinstance(value, (bytes, memoryview))
                    elif kind == "Timestamp":
                        # native when the UTC milliseconds hold it and reading it back gives
                        # the same text (UTC, six fraction digits); else its text, so nothing is lost
                        moment, text = typed[attribute], event.to_dict()[attribute]
                        exact = moment.microsecond % 1000 == 0 and moment.utcoffset() == timedelta(0)
                        exact = exact and text == moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
                        assert isinstance(value, proton.timestamp) if exact else isinstance(value, str), (name, value)
                assert event is not on_the_ms or isinstance(message.properties["cloudEvents_time"], proton.timestamp)
        message = receiver.receive(timeout=30)
        receiver.accept()
        with pytest.raises(module.EventError, match="not a CloudEvent"):
            module.from_amqp(_content_type(message), message.properties, message.body)
        message = receiver.receive(timeout=30)
        receiver.accept()
        got = _verdict(lambda: module.from_amqp(_content_type(message), message.properties, message.body))
        assert got == _expected(module, poison[1])
        assert len(received) == len(sent)
    finally:
        connection.close()


def test_rabbitmq_structured_mode_crosses_amqp_0_9_1_and_1_0(
    generated: Path, rabbitmq: Broker, proton: ModuleType
) -> None:
    """RabbitMQ 3.10 does not translate 0-9-1 headers and 1.0 application properties
    into each other, but the content type and body cross: structured mode does."""
    import aio_pika
    from proton.utils import BlockingConnection

    module, events = _events(generated, "meter-data")
    adapter = importlib.import_module(f"{module.__name__}.rabbitmq")
    connection = BlockingConnection(
        f"amqp://127.0.0.1:{rabbitmq.port}",
        user="guest",
        password="guest",
        allowed_mechs="PLAIN",
        allow_insecure_mechs=True,
        timeout=30,
    )
    try:
        to_091 = connection.create_sender("/queue/evcat-cross-to-091")
        from_091 = connection.create_receiver("/queue/evcat-cross-to-10")
        for event in events:
            content_type, _, body = module.to_amqp(event, "structured")
            to_091.send(proton.Message(body=body, content_type=content_type, inferred=True))

        async def cross() -> list[Any]:
            received: list[Any] = []
            async with await aio_pika.connect(rabbitmq.url) as amqp091:
                channel = await amqp091.channel()
                queue = await channel.declare_queue("evcat-cross-to-091", passive=True)
                for _ in events:
                    incoming = await queue.get(timeout=30)
                    received.append(adapter.Consumer(module.EVENTS).parse(incoming))
                    await incoming.ack()
                    await adapter.publish(channel.default_exchange, received[-1], "evcat-cross-to-10", "structured")
            return received

        assert asyncio.run(cross()) == events
        for event in events:
            message = from_091.receive(timeout=30)
            from_091.accept()
            assert module.from_amqp(_content_type(message), message.properties, message.body) == event
    finally:
        connection.close()


# --- Kafka (Tansu, a Kafka-compatible broker) ------------------------------


async def _kafka_round_trip(generated: Path, broker: Broker, catalog_id: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    module, events = _events(generated, catalog_id)
    adapter = importlib.import_module(f"{module.__name__}.kafka")
    topic = f"evcat-{catalog_id}"
    sent: list[Any] = []
    keys: list[bytes | None] = []  # the key of every record, in order
    poison: list[tuple[bytes, tuple[type[Exception], Any]]] = []
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.url)
    await admin.start()
    try:  # one partition: the records come back in the order they were sent
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=broker.url)
    await producer.start()
    try:

        async def send_poison(
            value: bytes, headers: list[tuple[str, bytes]], verdict: tuple[type[Exception], Any]
        ) -> None:
            await producer.send_and_wait(topic, value, headers=headers)
            keys.append(None)
            poison.append((value, verdict))

        await send_poison(b"\x00\xffgarbage", [], (module.EventError, None))
        for mode in MODES:
            for event in events:
                await adapter.publish(producer, topic, event, mode)
                sent.append(event)
                keys.append(module.to_kafka(event)[0])
            await send_poison(b"{not json", [("content-type", STRUCTURED.encode())], _expected(module, b"{not json"))
        await send_poison(DEEP, [("content-type", STRUCTURED.encode())], _expected(module, DEEP))
        for wire in _invalid_wire(module, events).values():
            text = json.dumps(wire).encode()
            await send_poison(text, [("content-type", STRUCTURED.encode())], _expected(module, text))
            headers = [
                (f"ce_{k}", (v if isinstance(v, str) else json.dumps(v)).encode())
                for k, v in wire.items()
                if k not in ("data", "datacontenttype")
            ]
            if "datacontenttype" in wire:
                headers.append(("content-type", wire["datacontenttype"].encode()))
            body = json.dumps(wire["data"]).encode() if "data" in wire else b""
            await send_poison(body, headers, _expected(module, wire))
        boom = events[0].model_copy(update={"id": "handler-raises"})
        await adapter.publish(producer, topic, boom)
        keys.append(module.to_kafka(boom)[0])
        last = events[-1].model_copy(update={"id": "after-the-poison"})
        await adapter.publish(producer, topic, last)
        sent.append(last)
        keys.append(module.to_kafka(last)[0])
    finally:
        await producer.stop()

    received: list[Any] = []
    errors: list[tuple[bytes, Exception]] = []
    consumer = adapter.Consumer(module.EVENTS, on_error=lambda record, error: errors.append((record.value, error)))
    for event_class in set(module.EVENTS.values()):

        @consumer.on(event_class)
        async def handle(event: Any) -> None:
            if event.id == "handler-raises":
                raise HandlerBug("handler bug")
            received.append(event)

    seen: list[bytes | None] = []
    records = AIOKafkaConsumer(topic, bootstrap_servers=broker.url, auto_offset_reset="earliest")
    await records.start()

    async def tap() -> Any:
        async for record in records:
            seen.append(record.key)
            yield record

    task = asyncio.create_task(consumer.consume(tap()))
    try:
        deadline = time.monotonic() + 60
        while len(received) < len(sent) or len(errors) < len(poison) + 1:
            assert time.monotonic() < deadline, "timed out waiting for the broker"
            await asyncio.sleep(0.05)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await records.stop()

    assert received == sent and [e.to_dict() for e in received] == [
        e.to_dict() for e in sent
    ]  # one partition: in order
    assert seen == keys  # partitionkey, else subject, else no key
    rejected = [(value, error) for value, error in errors if not isinstance(error, HandlerBug)]
    assert [str(e) for _, e in errors if isinstance(e, HandlerBug)] == ["handler bug"]
    assert len(rejected) == len(poison)
    for (value, error), (sent_value, verdict) in zip(rejected, poison):
        assert value == sent_value, value
        if verdict[1] is None:
            assert isinstance(error, module.EventError) and "not a CloudEvent" in str(error)
        else:
            assert _error_verdict(error) == verdict, value


@pytest.mark.parametrize("catalog_id", CATALOG_IDS)
def test_kafka_publishes_and_consumes_every_example(generated: Path, kafka: Broker, catalog_id: str) -> None:
    asyncio.run(_kafka_round_trip(generated, kafka, catalog_id))


# --- Mosquitto (MQTT 5 and 3.1.1) -------------------------------------------


class _Client:
    """A paho client on its own network thread, connected and subscribed."""

    def __init__(self, broker: Broker, protocol: Any, topic: str | None = None) -> None:
        import paho.mqtt.client as mqtt

        self.connected = threading.Event()
        self.subscribed = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=protocol)
        self.client.on_connect = lambda *args: self.connected.set()
        self.client.on_subscribe = lambda *args: self.subscribed.set()
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        assert self.connected.wait(20), "no CONNACK from mosquitto"
        if topic:
            self.client.subscribe(topic, qos=1)
            assert self.subscribed.wait(20), "no SUBACK from mosquitto"

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _wait(condition: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the broker"
        time.sleep(0.02)


@pytest.mark.parametrize("catalog_id", CATALOG_IDS)
def test_mosquitto_mqtt5_publishes_and_consumes_every_example(
    generated: Path, mosquitto: Broker, catalog_id: str
) -> None:
    import paho.mqtt.client as mqtt
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    module, events = _events(generated, catalog_id)
    adapter = importlib.import_module(f"{module.__name__}.mqtt")
    topic = f"evcat/test/{catalog_id}"
    received: list[Any] = []
    errors: list[tuple[bytes, Exception]] = []
    consumer = adapter.Consumer(module.EVENTS, on_error=lambda message, error: errors.append((message.payload, error)))
    for event_class in set(module.EVENTS.values()):

        @consumer.on(event_class)
        def handle(event: Any) -> None:
            if event.id == "handler-raises":
                raise HandlerBug("handler bug")
            received.append(event)

    subscriber = _Client(mosquitto, mqtt.MQTTv5, topic)
    subscriber.client.on_message = consumer.on_message
    publisher = _Client(mosquitto, mqtt.MQTTv5)
    try:
        sent: list[Any] = []
        poison: list[tuple[bytes, tuple[type[Exception], Any]]] = []

        def send_poison(payload: bytes, verdict: tuple[type[Exception], Any], **props: Any) -> None:
            properties = Properties(PacketTypes.PUBLISH)
            for name, value in props.items():
                setattr(properties, name, value)
            publisher.client.publish(topic, payload, qos=1, properties=properties).wait_for_publish(10)
            poison.append((payload, verdict))

        send_poison(b"\x00\xffgarbage", _expected(module, b"\x00\xffgarbage"))
        for mode in MODES:
            for event in events:
                adapter.publish(publisher.client, topic, event, mode).wait_for_publish(10)
                sent.append(event)
        send_poison(b"{not json", _expected(module, b"{not json"), ContentType=STRUCTURED)
        send_poison(DEEP, _expected(module, DEEP), ContentType=STRUCTURED)
        for name, wire in _invalid_wire(module, events).items():
            text = json.dumps(wire).encode()
            send_poison(text, _expected(module, text), ContentType=STRUCTURED)
            user = [
                (k, v if isinstance(v, str) else json.dumps(v))
                for k, v in wire.items()
                if k not in ("data", "datacontenttype")
            ]
            body = json.dumps(wire["data"]).encode() if "data" in wire else b""
            extra = {"ContentType": wire["datacontenttype"]} if "datacontenttype" in wire else {}
            send_poison(body, _expected(module, wire), UserProperty=user, **extra)
        adapter.publish(
            publisher.client, topic, events[0].model_copy(update={"id": "handler-raises"})
        ).wait_for_publish(10)
        last = events[-1].model_copy(update={"id": "after-the-poison"})
        adapter.publish(publisher.client, topic, last).wait_for_publish(10)
        sent.append(last)

        _wait(lambda: len(received) == len(sent) and len(errors) == len(poison) + 1)
        _same_events(received, sent)
        assert any(e.id == "after-the-poison" for e in received)
        handler_errors = [error for _, error in errors if isinstance(error, HandlerBug)]
        assert [str(e) for e in handler_errors] == ["handler bug"]
        rejected = [(payload, error) for payload, error in errors if not isinstance(error, HandlerBug)]
        assert len(rejected) == len(poison)
        for (payload, error), (sent_payload, verdict) in zip(rejected, poison):  # QoS 1 on one topic: in order
            assert payload == sent_payload and _error_verdict(error) == verdict, payload
        assert subscriber.client.is_connected()  # the network loop survived every poison message
    finally:
        subscriber.close()
        publisher.close()


def test_mosquitto_mqtt311_carries_structured_mode(generated: Path, mosquitto: Broker) -> None:
    import paho.mqtt.client as mqtt

    module, events = _events(generated, "meter-data")
    adapter = importlib.import_module(f"{module.__name__}.mqtt")
    topic = "evcat/test/v311"
    received: list[Any] = []
    errors: list[Exception] = []
    consumer = adapter.Consumer(module.EVENTS, on_error=lambda message, error: errors.append(error))
    consumer.on(module.CloudEvent)(received.append)  # every event class at once
    subscriber = _Client(mosquitto, mqtt.MQTTv311, topic)
    subscriber.client.on_message = consumer.on_message
    publisher = _Client(mosquitto, mqtt.MQTTv311)
    try:
        with pytest.raises(ValueError, match="structured mode only"):
            adapter.publish(publisher.client, topic, events[0], "binary")
        publisher.client.publish(topic, b"not an event", qos=1).wait_for_publish(10)
        for event in events:  # structured by default with MQTT 3.1.1
            adapter.publish(publisher.client, topic, event).wait_for_publish(10)
        _wait(lambda: len(received) == len(events) and len(errors) == 1)
        _same_events(received, events)
        assert _error_verdict(errors[0]) == _expected(module, b"not an event")
        assert isinstance(errors[0], (module.EventError, ValidationError))
    finally:
        subscriber.close()
        publisher.close()
