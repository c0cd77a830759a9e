"""The generated package knows where its events travel (catalog-format.md §9):
``CHANNELS``, ``channel_address(event, **parameters)``, and the broker
helpers publishing to the event's channel on real brokers (RabbitMQ,
Mosquitto, the Kafka-compatible Tansu; tests/brokers.py)."""

from __future__ import annotations

import asyncio
import importlib
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from generator.commands.lint import lint
from generator.commands.generate import render

from .brokers import Broker, kafka, mosquitto, rabbitmq  # noqa: F401  (fixtures)
from .conftest import catalog_text

EVENTS = """\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    subject: Id of the thing.
    data:
      type: object
      description: The thing.
      properties:
        thingId: {type: string, description: Id of the thing.}
  - type: nl.test.thing-removed
    title: Thing removed
    description: A thing was removed.
  - type: nl.test.thing-checked
    title: Thing checked
    description: A thing was checked.
"""

CHANNELS = """\
channels:
  things:
    protocol: kafka
    address: things.{region}
    description: Things of one region.
    bindings: {key: subject}
  thing-hooks:
    protocol: http
    address: /hooks/{tenant}/things
  removals:
    protocol: mqtt
    address: things/{site}/removed
    bindings: {qos: 1, retain: true}
  checks:
    protocol: amqp
    address: evcat-checks
    bindings: {exchange: topic, routingKey: 'check.{kind}'}
services:
  registry:
    sends:
      - {type: nl.test.thing-happened, channel: things}
      - {type: nl.test.thing-happened, channel: thing-hooks}
      - {type: nl.test.thing-removed, channel: removals}
      - {type: nl.test.thing-checked, channel: checks}
"""


@pytest.fixture(scope="module")
def channel_package(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    root = tmp_path_factory.mktemp("channels")
    (root / "catalog").mkdir()
    (root / "catalog" / "c.yaml").write_text(catalog_text("cloudevents", header=CHANNELS, events=EVENTS,
                                                          catalog_id="channel-test"))
    result = lint(str(root / "catalog"))
    assert not result.has_errors, [str(d) for d in result.diagnostics]
    for relative, content in render(result.catalog_set, ["python"])["python"].items():
        path = root / "out" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    sys.path.insert(0, str(root / "out" / "python"))
    return importlib.import_module("channel_test")


def _events(module: ModuleType) -> tuple[Any, Any, Any]:
    happened = module.EVENTS[("nl.test.thing-happened", "1.0.0")](subject="thing-7", data={"thingId": "thing-7"})
    removed = module.EVENTS[("nl.test.thing-removed", None)]()
    checked = module.EVENTS[("nl.test.thing-checked", None)]()
    return happened, removed, checked


def test_channels_and_channel_address(channel_package: ModuleType) -> None:
    module = channel_package
    things = module.CHANNELS["things"]
    assert (things.protocol, things.address, things.parameters, dict(things.bindings), things.description) == (
        "kafka", "things.{region}", ("region",), {"key": "subject"}, "Things of one region.")
    assert sorted(module.CHANNELS) == ["checks", "removals", "thing-hooks", "things"]
    with pytest.raises(TypeError):
        things.bindings["key"] = "id"  # frozen, bindings too
    with pytest.raises(AttributeError):
        things.address = "elsewhere"
    assert hash(things) == hash(module.CHANNELS["things"])
    happened, removed, checked = _events(module)
    assert module.channel_address(removed, site="north") == "things/north/removed"
    # a value is percent-encoded (RFC 6570 §3.2.2): it cannot add a topic level
    assert module.channel_address(removed, site="a/b c") == "things/a%2Fb%20c/removed"
    assert module.channel_address(checked) == "evcat-checks"
    assert module.channel_address(happened, "things", region="eu") == "things.eu"
    assert module.channel_address(happened, "thing-hooks", tenant="t1") == "/hooks/t1/things"
    with pytest.raises(module.ChannelError, match="several channels \\(things, thing-hooks\\)"):
        module.channel_address(happened, region="eu")
    with pytest.raises(module.ChannelError, match="needs the parameter\\(s\\) site"):
        module.channel_address(removed)
    with pytest.raises(module.ChannelError, match="has no parameter\\(s\\) sight"):
        module.channel_address(removed, site="north", sight="x")  # a misspelt parameter is not dropped
    with pytest.raises(module.ChannelError, match="must not be empty"):
        module.channel_address(removed, site="")
    with pytest.raises(module.ChannelError, match="travels on no channel 'things'"):
        module.channel_address(removed, "things")
    assert isinstance(module.ChannelError("x"), LookupError)


def test_an_event_without_a_channel_is_a_clear_error(tmp_path: Path) -> None:
    """A catalog without channels: every event travels on none."""
    root = tmp_path
    (root / "catalog").mkdir()
    (root / "catalog" / "c.yaml").write_text(catalog_text("cloudevents", catalog_id="no-channel-test"))
    result = lint(str(root / "catalog"))
    for relative, content in render(result.catalog_set, ["python"])["python"].items():
        path = root / "out" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    sys.path.insert(0, str(root / "out" / "python"))
    module = importlib.import_module("no_channel_test")
    assert module.CHANNELS == {}
    (event_class,) = module.EVENTS.values()
    event = event_class(data={"thingId": "x"})
    with pytest.raises(module.ChannelError, match="travels on no channel of the catalog"):
        module.channel_address(event)
    kafka_adapter = importlib.import_module("no_channel_test.kafka")
    with pytest.raises(module.ChannelError, match="no kafka channel"):
        asyncio.run(kafka_adapter.publish(object(), event))


@pytest.mark.real
def test_kafka_publish_goes_to_the_channel_topic(channel_package: ModuleType, kafka: Broker) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    module = channel_package
    adapter = importlib.import_module("channel_test.kafka")
    happened, _, _ = _events(module)

    async def run() -> list[Any]:
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka.url)
        await admin.start()
        try:
            await admin.create_topics([NewTopic("things.eu", num_partitions=1, replication_factor=1)])
        finally:
            await admin.close()
        producer = AIOKafkaProducer(bootstrap_servers=kafka.url)
        await producer.start()
        try:
            await adapter.publish(producer, happened, region="eu")  # no topic: the channel's
        finally:
            await producer.stop()
        records = AIOKafkaConsumer("things.eu", bootstrap_servers=kafka.url, auto_offset_reset="earliest")
        await records.start()
        try:
            record = await asyncio.wait_for(records.getone(), 60)
        finally:
            await records.stop()
        return [record]

    (record,) = asyncio.run(run())
    assert record.topic == "things.eu" and record.key == b"thing-7"  # the channel's key binding: subject
    assert module.from_kafka(record.headers, record.value) == happened


@pytest.mark.real
def test_mqtt_publish_goes_to_the_channel_topic(channel_package: ModuleType, mosquitto: Broker) -> None:
    import paho.mqtt.client as mqtt

    module = channel_package
    adapter = importlib.import_module("channel_test.mqtt")
    _, removed, _ = _events(module)
    got: list[Any] = []
    ready, subscribed = threading.Event(), threading.Event()
    subscriber = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    subscriber.on_connect = lambda *args: ready.set()
    subscriber.on_subscribe = lambda *args: subscribed.set()
    subscriber.on_message = lambda client, userdata, message: got.append(message)
    subscriber.connect("127.0.0.1", mosquitto.port)
    subscriber.loop_start()
    publisher = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    connected = threading.Event()
    publisher.on_connect = lambda *args: connected.set()
    publisher.connect("127.0.0.1", mosquitto.port)
    publisher.loop_start()
    try:
        assert ready.wait(20) and connected.wait(20)
        subscriber.subscribe("things/+/removed", qos=1)
        assert subscribed.wait(20)
        adapter.publish(publisher, removed, site="north").wait_for_publish(20)
        deadline = time.monotonic() + 30
        while not got:
            assert time.monotonic() < deadline, "nothing arrived on the channel's topic"
            time.sleep(0.02)
    finally:
        for client in (subscriber, publisher):
            client.disconnect()
            client.loop_stop()
    (message,) = got
    assert message.topic == "things/north/removed" and message.qos == 1
    properties = message.properties
    assert module.from_mqtt(getattr(properties, "ContentType", None), getattr(properties, "UserProperty", None),
                            message.payload) == removed
    # the channel says retain: a new subscriber gets the message the broker kept (an event
    # without data goes in structured mode then: an empty retained payload would delete it)
    late: list[Any] = []
    again = threading.Event()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.on_connect = lambda *args: again.set()
    client.on_message = lambda c, u, message: late.append(message)
    client.connect("127.0.0.1", mosquitto.port)
    client.loop_start()
    try:
        assert again.wait(20)
        client.subscribe("things/north/removed", qos=1)
        deadline = time.monotonic() + 30
        while not late:
            assert time.monotonic() < deadline, "the broker kept no retained message"
            time.sleep(0.02)
        assert late[0].retain
    finally:
        client.disconnect()
        client.loop_stop()


@pytest.mark.real
def test_rabbitmq_publish_uses_the_channel_exchange_and_routing_key(channel_package: ModuleType, rabbitmq: Broker) -> None:
    import aio_pika

    module = channel_package
    adapter = importlib.import_module("channel_test.rabbitmq")
    _, _, checked = _events(module)

    async def run() -> Any:
        connection = await aio_pika.connect(rabbitmq.url)
        async with connection:
            channel = await connection.channel()
            exchange = await channel.declare_exchange(module.channel_address(checked), aio_pika.ExchangeType.TOPIC)
            queue = await channel.declare_queue(exclusive=True)
            await queue.bind(exchange, routing_key="check.big")
            await adapter.publish(exchange, checked, kind="big")  # the channel's routingKey
            incoming = await queue.get(timeout=30, fail=True)
            await incoming.ack()
            return incoming

    incoming = asyncio.run(run())
    assert incoming.exchange == "evcat-checks" and incoming.routing_key == "check.big"
    assert module.from_amqp(incoming.content_type, incoming.headers, incoming.body) == checked
