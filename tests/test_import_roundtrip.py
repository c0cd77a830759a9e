"""Round trip (contract §10): importing the AsyncAPI documents `evcat generate`
wrote gives back an equivalent catalog: the same events and dataversions,
payload schemas of the same meaning (``evcat diff``'s SchemaDiff finds no
change that either side would notice, and instances drawn from one schema
are accepted by the other), the same channels and services.

Example-based on the shipped catalogs (default run); a property test over
random catalogs (tests/test_hypothesis_catalogs.py's strategy, with channels
and services drawn on top) is marked slow."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from generator.commands.diff import diff_events
from generator.commands.generate import render
from generator.commands.import_ import to_yaml
from generator.commands.lint import check, lint
from generator.engine.config import RunConfig
from generator.importers import Options, reader
from generator.importers.settle import settle
from generator.loader import load_text
from generator.model import Catalog, CatalogSet

from .conftest import ROOT


def _import(files: list[Path]) -> Any:
    """The catalog set of what ``evcat import asyncapi FILES`` writes (read, settled, linted clean)."""
    settled = settle(reader("asyncapi")(files, Options()))
    assert settled.remaining == [], [(d.rule, d.message) for _, _, d in settled.remaining]
    documents = [load_text(to_yaml(document), name) for name, document in settled.documents.items()]
    result = check(documents)
    assert not result.has_errors, [(d.rule, d.message) for d in result.diagnostics]
    return result.catalog_set


def _links(catalog: Catalog, service_name: str) -> tuple[set[Any], set[Any]]:
    service = next(service for service in catalog.services if service.name == service_name)
    sends = {(event.key, link.channel) for event in catalog.events for link in service.sends if link.sends(event)}
    receives = {event.key for event in catalog.events for link in service.receives
                if link.receives(event.type, event.dataversion)}
    return sends, receives


# What a binding means when the catalog does not say (the AsyncAPI output and the broker helpers).
BINDING_DEFAULTS = {"amqp": {"exchange": "topic"}, "mqtt": {"qos": 1, "retain": False}}


def _bindings(channel: Any) -> dict[str, Any]:
    return {**BINDING_DEFAULTS.get(channel.protocol, {}), **dict(channel.bindings)}


def assert_equivalent(old_set: CatalogSet, old: Catalog, new_set: CatalogSet, new: Catalog) -> None:
    assert {event.key for event in new.events} == {event.key for event in old.events}
    new_events = {event.key: event for event in new.events}
    for event in old.events:
        other = new_events[event.key]
        changes = diff_events(event, other, old_set, new_set)
        noticed = [(c.path, c.kind, c.detail) for c in changes if not (c.backward and c.forward)]
        assert noticed == [], (event.key, noticed)
        assert other.title == event.title and (other.description or "") == (event.description or "")  # "" is not written
    channels = {c.name: (c.protocol, c.address, _bindings(c)) for c in old.channels}
    assert {c.name: (c.protocol, c.address, _bindings(c)) for c in new.channels} == channels
    assert {s.name: s.title for s in new.services} == {s.name: s.title for s in old.services}
    for service in old.services:
        assert _links(new, service.name) == _links(old, service.name), service.name


@pytest.mark.parametrize("catalog_id", ["meter-data", "brp-personen", "zaken"])
def test_shipped_catalogs_round_trip(tmp_path: Path, catalog_id: str) -> None:
    original = lint(str(ROOT / "catalog"))
    assert not original.has_errors
    outputs = render(original.catalog_set, ["asyncapi"], RunConfig(jobs=1))["asyncapi"]
    files = []
    for path, content in outputs.items():
        document = yaml.safe_load(content)
        if document["id"] == f"urn:evcat:{catalog_id}" or document["id"].startswith(f"urn:evcat:{catalog_id}:service:"):
            target = tmp_path / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            files.append(target)
    assert files
    imported = _import(files)
    old = next(catalog for catalog in original.catalog_set.catalogs if catalog.id == catalog_id)
    (new,) = imported.catalogs
    assert new.id == catalog_id and new.profile == old.profile and new.version == old.version
    assert_equivalent(original.catalog_set, old, imported, new)


# -- the property --------------------------------------------------------------


@st.composite
def catalogs_with_channels(draw: Any) -> dict[str, Any]:
    from .test_hypothesis_catalogs import catalogs

    document = draw(catalogs())
    document["catalog"] = "prop-catalog"
    event = document["events"][0]
    event.pop("examples", None)  # examples are not what the round trip is about (and may not validate)
    if draw(st.booleans()):
        protocol = draw(st.sampled_from(["kafka", "amqp", "mqtt", "http"]))
        address = {"kafka": "events.{region}", "amqp": "events", "mqtt": "events/{region}/+", "http": "/webhooks"}[protocol]
        channel: dict[str, Any] = {"protocol": protocol, "address": address, "description": draw(st.sampled_from(
            ["Every event.", "Events of one region."]))}
        if protocol == "kafka" and draw(st.booleans()):
            channel["bindings"] = {"key": "subject"}
            event["subject"] = "The thing."
        if protocol == "amqp" and draw(st.booleans()):
            channel["bindings"] = {"exchange": draw(st.sampled_from(["topic", "fanout"])), "routingKey": "things.#"}
        if protocol == "mqtt" and draw(st.booleans()):
            channel["bindings"] = {"qos": draw(st.sampled_from([0, 1, 2])), "retain": draw(st.booleans())}
        document["channels"] = {"events": channel}
        if draw(st.booleans()):
            document["services"] = {
                "producer-app": {"title": "Producer app", "sends": [{"type": event["type"], "channel": "events"}]},
                "consumer-app": {"title": "Consumer app",
                                 "receives": [{"type": event["type"], "dataversion": ">=1.0.0", "channel": "events"}]},
            }
    return document


EXAMPLES = int(os.environ.get("EVCAT_HYPOTHESIS_EXAMPLES", "150"))
CHECKED: list[str] = []  # the catalogs that went all the way round


def _accepts(schema: Any, shared: dict[str, Any], instance: Any) -> bool:
    registry = Registry().with_resource("urn:catalog", Resource({"schemas": shared}, DRAFT202012))
    wrapped = {"$id": "urn:catalog", "schemas": shared, **schema} if isinstance(schema, dict) else schema
    validator = jsonschema.Draft202012Validator(wrapped, registry=registry, format_checker=jsonschema.FormatChecker())
    return validator.is_valid(instance)


@pytest.mark.slow
def test_random_catalogs_round_trip(tmp_path: Path) -> None:
    CHECKED.clear()
    check_round_trip(root=tmp_path)
    assert len(CHECKED) >= EXAMPLES // 3


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(document=catalogs_with_channels(), data=st.data())
def check_round_trip(document: dict[str, Any], data: Any, root: Path) -> None:
    from hypothesis_jsonschema import from_schema

    original = check([load_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), "c.yaml")])
    if original.has_errors:
        return  # the strategy draws invalid catalogs too: nothing is generated from them
    outputs = render(original.catalog_set, ["asyncapi"], RunConfig(jobs=1))["asyncapi"]
    folder = root / f"run{len(os.listdir(root)) if root.exists() else 0}"
    files = []
    for path, content in outputs.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        files.append(target)
    imported = _import(files)
    (old,), (new,) = original.catalog_set.catalogs, imported.catalogs
    assert_equivalent(original.catalog_set, old, imported, new)
    CHECKED.append(old.id)
    # what the payload schemas accept, on drawn instances (each side's drawn instance accepted by the other)
    old_event, new_event = old.events[0], new.events[0]
    old_schema, new_schema = old_event.payload.schema, new_event.payload.schema
    for drawn_from, other, shared in ((old_schema, new_schema, dict(imported.schemas)),
                                      (new_schema, old_schema, dict(original.catalog_set.schemas))):
        if isinstance(drawn_from, dict) and "$ref" not in str(drawn_from):
            instance = data.draw(from_schema(drawn_from))
            assert _accepts(other, shared, instance), instance


def test_round_trip_property_fast(tmp_path: Path) -> None:
    """A few examples of the property in the default run."""
    check = settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), database=None)(
        given(document=catalogs_with_channels(), data=st.data())(check_round_trip.hypothesis.inner_test))
    CHECKED.clear()
    check(root=tmp_path)
    assert CHECKED