"""Contract §9: the format accepts channels, services, package and rule
overrides on an event, and the model carries them (the features that use them
are tested where they live)."""

from __future__ import annotations

from generator.catalog_format import check_structure
from generator.loader import load_text
from generator.model.build import build

CATALOG = """\
catalog: acme-storage
title: Acme storage
version: 1.0.0
profile: cloudevents
package: acme_storage_events
producer:
  source: /subscriptions/{subscriptionId}/resourceGroups/{resourceGroup}
channels:
  blob-events:
    protocol: kafka
    address: storage.{region}.blobs.{region}
    bindings: {key: subject}
services:
  blob-store:
    title: Blob store
    owner: {name: Storage team, email: storage@example.org}
    sends: [{type: com.acme.storage.blob-created, channel: blob-events}]
  indexer:
    receives: [{type: com.acme.storage.blob-created, dataversion: ">=1.0.0 <2.0.0", channel: blob-events}]
events:
  - type: com.acme.storage.blob-created
    title: Blob created
    dataversion: 1.0.0
    rules: {CE-TYPE-RDNS: off, PAY-DESCRIPTION: warning}
    data:
      type: object
      properties:
        content_type: {type: string, x-evcat-rules: {PAY-CAMELCASE: off}}
"""


def test_the_format_accepts_section_9_keys() -> None:
    document = load_text(CATALOG, "acme.yaml")
    assert list(check_structure(document)) == []


def test_a_misspelt_section_9_key_is_reported_at_its_node() -> None:
    document = load_text(CATALOG.replace("    sends:", "    send:"), "acme.yaml")
    found = list(check_structure(document))
    assert [(d.rule, d.location.line) for d in found] == [("CAT-UNKNOWN-KEY", 17)]
    assert "sends" in found[0].message


def test_the_model_carries_channels_services_package_and_event_rules() -> None:
    catalog = build([load_text(CATALOG, "acme.yaml")]).catalog_set.catalogs[0]
    assert catalog.package_name == "acme_storage_events"
    (channel,) = catalog.channels
    assert (channel.name, channel.protocol, channel.parameters) == ("blob-events", "kafka", ("region",))
    assert dict(channel.bindings) == {"key": "subject"}
    store, indexer = catalog.services
    assert store.title == "Blob store" and store.owner is not None and store.owner.email == "storage@example.org"
    assert [(link.type, link.channel) for link in store.sends] == [("com.acme.storage.blob-created", "blob-events")]
    assert indexer.title == "indexer" and indexer.receives[0].dataversion == ">=1.0.0 <2.0.0"
    assert dict(catalog.events[0].rules) == {"CE-TYPE-RDNS": "off", "PAY-DESCRIPTION": "warning"}
    assert catalog.events[0].source.startswith("/subscriptions/{subscriptionId}")
