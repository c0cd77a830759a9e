"""One AsyncAPI 3 document per catalog (``asyncapi/<catalog_id>.yaml``).

AsyncAPI 3.0.0 by default: evcat uses nothing that is 3.1-only, and much of
the ecosystem reads only 3.0.0 (EventCatalog's generator pins
``@asyncapi/parser`` 3.4.0, which fails on 3.1.0; Modelina 5 gives ``any``).
3.1.0 on request (``evcat generate --asyncapi-version 3.1.0``, ``Settings``).

Built as data and serialised with the YAML emitter, so no description can
break the document. One channel per event type, one message per (type,
dataversion) and a ``send`` operation per message (an operation with several
messages is a nameless union in Modelina's Python): the structured-mode CloudEvent
(``application/cloudevents+json``) as payload, a trait with the ``ce-``
headers of binary mode (HTTP protocol binding §3.1.3), the catalog's examples,
and EventCatalog's ``x-eventcatalog-*`` extensions. Schemas are AsyncAPI
Schema objects (draft-07 compatible; the parser does not validate a 2020-12
``schemaFormat``); shared schemas live under ``components/schemas`` and are
referenced locally, never remotely.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from ..envelope import envelope_schema, shared_titled, titled
from ..model import Catalog, CatalogSet, Channel, EventType, Service, SharedSchema
from ..naming import envelope_class_names, payload_class_name, safe_file_name
from ..vocabulary import TYPES, header_value
from . import Unit, catalog_inputs, event_order, partial_set, render_all

VERSIONS = ("3.0.0", "3.1.0")  # the first is the default


@dataclass(frozen=True)
class Settings:
    """How AsyncAPI output is made, handed to the renderer as a value (part of
    each unit's inputs, so the render cache keys it by construction)."""

    version: str = VERSIONS[0]

    def __post_init__(self) -> None:
        if self.version not in VERSIONS:
            raise ValueError(f"AsyncAPI version {self.version!r}: evcat writes {' or '.join(VERSIONS)}")

CONTENT_TYPE = "application/cloudevents+json"
_ID = re.compile(r"[^A-Za-z0-9_.-]+")


def component_id(text: str) -> str:
    """AsyncAPI component keys: ``^[a-zA-Z0-9.\\-_]+$``."""
    return _ID.sub("_", text).strip("_") or "_"


def message_id(event: EventType) -> str:
    return component_id(f"{event.type}.{event.dataversion or 'notification'}")


_DROPPED = frozenset(("$schema", "$id", "$defs", "$anchor", "$dynamicAnchor", "$comment"))
_SPECIAL = frozenset(("$ref", "prefixItems", "items", "dependentRequired", "dependentSchemas",
                      "properties", "patternProperties", "definitions", "enum", "const", "default", "examples"))


def to_draft07(schema: Any, shared_names: dict[str, str]) -> Any:
    """A 2020-12 schema as an AsyncAPI Schema object (draft-07 vocabulary).
    (Scalars are taken as they are without a call: most values are.)"""
    if isinstance(schema, list):
        return [to_draft07(item, shared_names) if isinstance(item, (dict, list)) else item for item in schema]
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword not in _SPECIAL:
            if keyword not in _DROPPED:
                result[keyword] = to_draft07(value, shared_names) if isinstance(value, (dict, list)) else value
            continue
        if keyword == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
            result["$ref"] = f"#/components/schemas/{shared_names[value[len('#/$defs/'):]]}"
        elif keyword == "prefixItems":
            result["items"] = to_draft07(value, shared_names)
            if "items" in schema:
                result["additionalItems"] = to_draft07(schema["items"], shared_names)
        elif keyword == "items" and "prefixItems" in schema:
            continue
        elif keyword == "dependentRequired" or keyword == "dependentSchemas":
            result.setdefault("dependencies", {}).update(to_draft07(value, shared_names))
        elif keyword in ("properties", "patternProperties", "definitions"):
            result[keyword] = {name: to_draft07(child, shared_names) for name, child in value.items()}
        elif keyword in ("enum", "const", "default", "examples"):
            result[keyword] = value
        else:
            result[keyword] = to_draft07(value, shared_names)
    return result


def _message(event: EventType, class_name: str, shared_names: dict[str, str]) -> dict[str, Any]:
    """The structured-mode event, titled as the Python classes are (envelope,
    payload, nested objects and enums: ``envelope.titled``)."""
    envelope = envelope_schema(event, payload=False, class_name=class_name)
    if event.payload is not None:
        data = titled(event.payload.schema, payload_class_name(class_name))
        envelope["properties"]["data"] = {**data, "title": payload_class_name(class_name)} if isinstance(data, dict) else data
    payload = to_draft07(envelope, shared_names)
    message: dict[str, Any] = {
        "name": event.type,
        "title": event.title,
        "summary": f"{event.title} ({event.type}{' ' + event.dataversion if event.dataversion else ''})",
    }
    if event.description:
        message["description"] = event.description
    message["contentType"] = CONTENT_TYPE
    message["payload"] = payload
    message["traits"] = [{"$ref": f"#/components/messageTraits/{message_id(event)}.binary"}]
    examples = [
        {"name": f"example-{example.index + 1}", "summary": f"Example {example.index + 1} of {event.title}",
         "payload": event.complete_example(example.values)}
        for example in event.examples
    ]
    if examples:
        message["examples"] = examples
    if event.deprecated:
        message["x-deprecated"] = event.deprecation or True
    message["x-eventcatalog-message-type"] = "event"
    if event.dataversion:
        message["x-eventcatalog-message-version"] = event.dataversion
    return message


def binary_headers(event: EventType, full: dict[str, Any]) -> dict[str, str]:
    """The HTTP headers of ``full`` (a structured-mode event) in binary content mode (§3.1.3)."""
    headers: dict[str, str] = {}
    for name, value in full.items():
        if name in ("data", "data_base64") or value is None:
            continue
        if name == "datacontenttype":
            headers["content-type"] = str(value)
        else:
            headers[f"ce-{name}"] = header_value(value)
    if event.has_data and "content-type" not in headers:
        headers["content-type"] = "application/json"
    return headers


def _binary_trait(event: EventType) -> dict[str, Any]:
    """ce- headers of the HTTP binary content mode (HTTP binding §3.1.3), with
    the catalog's examples as they travel in that mode."""
    properties: dict[str, Any] = {
        "ce-specversion": {"const": "1.0"},
        "ce-id": {"type": "string", "minLength": 1},
        "ce-source": {"type": "string", "format": "uri-reference"},
        "ce-type": {"const": event.type},
    }
    required = ["ce-specversion", "ce-id", "ce-source", "ce-type"]
    if event.dataversion:
        properties["ce-dataversion"] = {"const": event.dataversion}
    properties["ce-time"] = {"type": "string", "format": "date-time"}
    if event.profile.time_required:
        required.append("ce-time")
    if event.subject:
        properties["ce-subject"] = {"type": "string", "description": event.subject}
    if event.dataref:
        properties["ce-dataref"] = {"type": "string", "format": "uri-reference", "description": event.dataref}
    if event.sequencetype:
        properties["ce-sequence"] = {"type": "string"}
        properties["ce-sequencetype"] = {"const": event.sequencetype}
    for extension in event.extensions:
        header = {"type": "string"}
        if extension.type in ("URI", "URI-reference", "Timestamp"):
            header["format"] = TYPES[extension.type].json_schema["format"]
        if extension.description:
            header["description"] = extension.description
        properties[f"ce-{extension.name}"] = header
        if extension.required:
            required.append(f"ce-{extension.name}")
    if event.has_data:
        properties["content-type"] = {"type": "string"}
    examples = [
        (example.index, headers)
        for example in event.examples
        for headers in [binary_headers(event, event.complete_example(example.values))]
        if all(name in headers for name in required)  # examples may leave required extensions out
    ]
    for name, header in properties.items():
        values = list(dict.fromkeys(headers[name] for _, headers in examples if name in headers))
        if values and "const" not in header:
            header["examples"] = values
    if event.has_data and "examples" not in properties["content-type"]:
        properties["content-type"]["examples"] = [event.datacontenttype or "application/json"]
    trait: dict[str, Any] = {
        "summary": "Binary content mode: context attributes as ce- headers, data as the body.",
        "headers": {"type": "object", "properties": properties, "required": required},
    }
    if examples:
        trait["examples"] = [
            {"name": f"example-{index + 1}-binary", "summary": f"Example {index + 1} of {event.title} in binary mode",
             "headers": {name: headers[name] for name in properties if name in headers}}
            for index, headers in examples
        ]
    return trait


def _type_channels(
    catalog: Catalog, events: list[EventType], service: Service | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A catalog without channels: one channel per event type, addressed by the
    type, and one ``send`` operation per message (a service's view: one per
    message it sends, and a ``receive`` operation per message it receives)."""
    channels: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    for event in events:
        channel = component_id(event.type)
        message = message_id(event)
        if channel not in channels:
            channels[channel] = {
                "address": event.type,
                "title": event.title,
                "description": f"CloudEvents of type `{event.type}`, every dataversion the producer publishes.",
                "messages": {},
            }
        channels[channel]["messages"][message] = {"$ref": f"#/components/messages/{message}"}
        # One operation per message, not per channel: Modelina turns an
        # operation with several messages into a union model named after the
        # channel, which its Python generator cannot render (an empty name).
        version = f" {event.dataversion}" if event.dataversion else ""
        if service is None:
            actions = [("send", catalog.producer.organization or "The producer")]
        else:
            actions = [(action, service.title) for action, covered in (
                ("send", any(link.sends(event) for link in service.sends)),
                ("receive", any(link.receives(event.type, event.dataversion) for link in service.receives)),
            ) if covered]
        for action, who in actions:
            operations[component_id(f"{action}.{message}")] = {
                "action": action,
                "channel": {"$ref": f"#/channels/{channel}"},
                "summary": f"{who} {'publishes' if action == 'send' else 'receives'} {event.title}{version}.",
                "description": event.description or event.title,
                "messages": [{"$ref": f"#/channels/{channel}/messages/{message}"}],
            }
    return channels, operations


# Which AsyncAPI server protocols carry a channel of each catalog protocol
# (AsyncAPI 3.0.0 Server Object ``protocol`` values).
SERVER_PROTOCOLS = {
    "kafka": ("kafka", "kafka-secure"),
    "amqp": ("amqp", "amqps"),
    "mqtt": ("mqtt", "secure-mqtt", "mqtts"),
    "http": ("http", "https"),
}
# The versions of the AsyncAPI bindings specifications the objects below follow
# (github.com/asyncapi/bindings: kafka 0.5.0, amqp 0.3.0, mqtt 0.2.0, http 0.3.0).
BINDING_VERSIONS = {"kafka": "0.5.0", "amqp": "0.3.0", "mqtt": "0.2.0", "http": "0.3.0"}
AMQP_EXCHANGE_TYPES = ("topic", "direct", "fanout", "default", "headers")


def _channel_bindings(channel: Channel) -> dict[str, Any] | None:
    """The Channel Bindings Object of ``channel`` (AsyncAPI bindings specs):
    kafka: the topic (a fixed address); amqp: the exchange (the address) and
    its type; mqtt and http define no channel bindings."""
    bindings = dict(channel.bindings)
    version = BINDING_VERSIONS[channel.protocol] if channel.protocol in BINDING_VERSIONS else None
    if channel.protocol == "kafka":
        kafka: dict[str, Any] = {"topic": channel.address} if not channel.parameters else {}
        return {"kafka": {**kafka, "bindingVersion": version}}
    if channel.protocol == "amqp":
        kind = bindings.get("exchange")
        exchange = {"name": channel.address, "type": kind if kind in AMQP_EXCHANGE_TYPES else "topic", "durable": True,
                    "autoDelete": False, "vhost": "/"}
        return {"amqp": {"is": "routingKey", "exchange": exchange, "bindingVersion": version}}
    return None


def _operation_bindings(channel: Channel, action: str) -> dict[str, Any] | None:
    """The Operation Bindings Object: amqp routing key (cc) and persistent
    delivery; mqtt qos and retain; http POST (NL GOV webhook guideline)."""
    bindings = dict(channel.bindings)
    version = BINDING_VERSIONS.get(channel.protocol)
    if channel.protocol == "amqp" and action == "send":
        amqp: dict[str, Any] = {"deliveryMode": 2}
        if isinstance(bindings.get("routingKey"), str):
            amqp["cc"] = [bindings["routingKey"]]
        return {"amqp": {**amqp, "bindingVersion": version}}
    if channel.protocol == "mqtt":
        mqtt: dict[str, Any] = {"qos": bindings.get("qos", 1)}
        if action == "send":
            mqtt["retain"] = bindings.get("retain", False)
        return {"mqtt": {**mqtt, "bindingVersion": version}}
    if channel.protocol == "http":
        return {"http": {"method": "POST", "bindingVersion": version}}
    return None


def _message_bindings(channel: Channel) -> dict[str, Any] | None:
    """kafka: the record key is the event's ``key`` attribute (the channel's binding)."""
    key = dict(channel.bindings).get("key")
    if channel.protocol == "kafka" and isinstance(key, str):
        return {"kafka": {"key": {"type": "string", "description": f"The event's `{key}` attribute."},
                          "bindingVersion": BINDING_VERSIONS["kafka"]}}
    return None


def _catalog_channels(
    catalog: Catalog, events: list[EventType], messages: dict[str, Any], services: tuple[Service, ...]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The catalog's channels (catalog-format.md §9): address, parameters,
    protocol bindings and the messages that travel on each
    (``Catalog.channels_of``); ``send`` and ``receive`` operations per
    service (of ``services``) and channel, one per message it sends or
    receives there. Without services, the producer sends every event on
    every channel."""
    servers = {server.name: server.protocol for server in catalog.servers}
    ids = {channel.name: component_id(channel.name) for channel in catalog.channels}
    carried: dict[str, list[EventType]] = {channel.name: [] for channel in catalog.channels}
    for event in events:
        for channel in catalog.channels_of(event):
            carried[channel.name].append(event)
    channels: dict[str, Any] = {}
    for channel in catalog.channels:
        entry: dict[str, Any] = {"address": channel.address, "title": channel.name}
        entry["description"] = channel.description or f"The {channel.protocol} channel `{channel.address}`."
        on = [component_id(name) for name, protocol in servers.items()
              if protocol in SERVER_PROTOCOLS.get(channel.protocol, ())]
        if on:
            entry["servers"] = [{"$ref": f"#/servers/{server}"} for server in on]
        if channel.parameters:
            entry["parameters"] = {name: {"description": f"The `{name}` part of the address."}
                                   for name in channel.parameters}
        entry["messages"] = {message_id(event): {"$ref": f"#/components/messages/{message_id(event)}"}
                             for event in carried[channel.name]}
        bindings = _channel_bindings(channel)
        if bindings:
            entry["bindings"] = bindings
        message_bindings = _message_bindings(channel)
        if message_bindings:
            for event in carried[channel.name]:
                messages[message_id(event)].setdefault("bindings", message_bindings)
        channels[ids[channel.name]] = entry
    operations: dict[str, Any] = {}

    def add(who: str, title: str, action: str, channel: Channel, chosen: list[EventType]) -> None:
        # One operation per message: Modelina makes a union of an operation's
        # messages, which its Python generator cannot render (issue 31).
        verb = "publishes" if action == "send" else "receives"
        bindings = _operation_bindings(channel, action)
        for event in chosen:
            version = f" {event.dataversion}" if event.dataversion else ""
            operation: dict[str, Any] = {
                "action": action,
                "channel": {"$ref": f"#/channels/{ids[channel.name]}"},
                "summary": f"{title} {verb} {event.title}{version} on {channel.name}.",
                "description": event.description or event.title,
                "messages": [{"$ref": f"#/channels/{ids[channel.name]}/messages/{message_id(event)}"}],
            }
            if bindings:
                operation["bindings"] = bindings
            operations[component_id(f"{who}.{action}.{channel.name}.{message_id(event)}")] = operation

    if not catalog.services:
        for channel in catalog.channels:
            add("producer", catalog.producer.organization or "The producer", "send", channel, carried[channel.name])
    for service in services:
        for channel in catalog.channels:
            sent = [event for event in carried[channel.name]
                    if any(link.channel == channel.name and link.sends(event) for link in service.sends)]
            add(service.name, service.title, "send", channel, sent)
            heard = [event for event in carried[channel.name]
                     if any(link.channel in (None, channel.name) and link.receives(event.type, event.dataversion)
                            for link in service.receives)]
            add(service.name, service.title, "receive", channel, heard)
    return channels, operations


def document(
    catalog: Catalog, catalog_set: CatalogSet, settings: Settings = Settings(), service: Service | None = None
) -> dict[str, Any]:
    """The catalog's document; with ``service``, that service's own view
    (``asyncapi/services/<service>.yaml``): only its operations, and the
    channels and messages they use."""
    events = sorted(catalog.events, key=event_order)
    services = catalog.services if service is None else (service,)
    used: set[str] = set()
    for event in events:
        if event.payload is not None:
            used.update(event.payload.uses)
    shared: dict[str, SharedSchema] = {name: catalog_set.schemas[name] for name in sorted(used)}
    shared_names = {name: component_id(name) for name in catalog_set.schemas}
    class_names = envelope_class_names(event.key for event in events)
    info: dict[str, Any] = {"title": catalog.title, "version": catalog.version}
    if catalog.description:
        info["description"] = catalog.description
    contact = catalog.producer.contact
    info["tags"] = [
        {"name": f"profile:{catalog.profile.name}", "description": catalog.profile.checked_against},
        {"name": f"catalog:{catalog.id}"},
    ]
    if contact:
        info["contact"] = {key: value for key, value in (("name", contact.name), ("url", contact.url), ("email", contact.email)) if value}
    if catalog.license is not None:  # the AsyncAPI 3.0.0 License Object
        info["license"] = {key: value for key, value in (("name", catalog.license.name), ("url", catalog.license.url)) if value}
    doc: dict[str, Any] = {"asyncapi": settings.version, "id": f"urn:evcat:{catalog.id}", "info": info}
    if service is not None:
        doc["id"] = f"urn:evcat:{catalog.id}:service:{service.name}"
        info["title"] = f"{service.title} ({catalog.title})"
        if service.description:
            info["description"] = service.description
        owner = service.owner
        if owner is not None and owner.name and owner.url and owner.email:
            info["contact"] = {"name": owner.name, "url": owner.url, "email": owner.email}
        elif owner is not None and (owner.name or owner.email):
            # An incomplete Contact Object is a Spectral warning: the catalog's contact stays, the owner is said.
            said = " ".join(part for part in (owner.name, f"<{owner.email}>" if owner.email else None) if part)
            info["description"] = f"{info['description']}\n\n" if "description" in info else ""
            info["description"] += f"Owned by {said}."
        info["tags"].append({"name": f"service:{service.name}"})
    if catalog.servers:
        doc["servers"] = {
            component_id(server.name): {
                key: value
                for key, value in (
                    ("host", server.host), ("protocol", server.protocol),
                    ("pathname", server.pathname), ("description", server.description),
                )
                if value
            }
            for server in catalog.servers
        }
    doc["defaultContentType"] = CONTENT_TYPE
    messages: dict[str, Any] = {}
    traits: dict[str, Any] = {}
    for event in events:
        message = message_id(event)
        messages[message] = _message(event, class_names[event.key], shared_names)
        traits[f"{message}.binary"] = _binary_trait(event)
    if catalog.channels:
        channels, operations = _catalog_channels(catalog, events, messages, services)
    else:
        channels, operations = _type_channels(catalog, events, service)
    if service is not None:
        channels, messages, traits = _only_used(channels, operations, messages, traits)
        # and the shared schemas those messages use
        kept = {name for event in events if message_id(event) in messages and event.payload is not None
                for name in event.payload.uses}
        shared = {name: schema for name, schema in shared.items() if name in kept}
    doc["channels"] = channels
    doc["operations"] = operations
    components: dict[str, Any] = {}
    if shared:
        components["schemas"] = {
            shared_names[name]: to_draft07(shared_titled(name, schema.schema), shared_names)
            for name, schema in shared.items()
        }
    components["messages"] = messages
    components["messageTraits"] = traits
    doc["components"] = components
    return doc


def _only_used(
    channels: dict[str, Any], operations: dict[str, Any], messages: dict[str, Any], traits: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A service's view: the channels its operations use, each with the
    messages those operations carry, and those messages' components."""
    kept: dict[str, dict[str, Any]] = {}
    for operation in operations.values():
        channel = operation["channel"]["$ref"].rsplit("/", 1)[1]
        kept.setdefault(channel, {})
        for ref in operation["messages"]:
            kept[channel][ref["$ref"].rsplit("/", 1)[1]] = True
    used_channels = {
        name: {**channels[name], "messages": {m: ref for m, ref in channels[name]["messages"].items() if m in kept[name]}}
        for name in channels if name in kept
    }
    used = {message for names in kept.values() for message in names}
    return (used_channels, {m: body for m, body in messages.items() if m in used},
            {t: body for t, body in traits.items() if t.rsplit(".binary", 1)[0] in used})


_STR, _MAP, _SEQ = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


def _style(value: str) -> str | None:
    """A literal block for multi-line text that survives it; PyYAML decides otherwise."""
    return "|" if "\n" in value and not any(c in value for c in "\r\t") and value == value.rstrip(" ") else None


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Block style, no anchors/aliases (shared objects are written out in full).
    libyaml's emitter when PyYAML has it (10x faster, same output).

    What stays in Python is PyYAML's representer and resolver, most of the
    time of a document: str, dict and list (nearly every node) are made
    into nodes here directly, as ``represent_scalar``/``represent_mapping``/
    ``represent_sequence`` make them with ``default_flow_style=False``, no
    sorting and no aliases; the resolver's verdict on a plain scalar is kept
    per text (the emitter asks twice per scalar). Other values take PyYAML's
    own way; tests/test_asyncapi_output.py compares both on generated values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._resolved: dict[str, str] = {}
        # The options the direct nodes are made for (``dump_yaml``'s); others: PyYAML's way.
        self._direct = self.default_style is None and self.default_flow_style is False and not self.sort_keys

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def represent_data(self, data: Any) -> yaml.Node:
        kind = type(data)
        if self._direct:
            if kind is str:
                return yaml.ScalarNode(_STR, data, style=_style(data))
            if kind is dict:
                node = self.represent_data
                return yaml.MappingNode(_MAP, [(node(key), node(value)) for key, value in data.items()], flow_style=False)
            if kind is list:
                node = self.represent_data
                return yaml.SequenceNode(_SEQ, [node(item) for item in data], flow_style=False)
        return super().represent_data(data)  # type: ignore[no-any-return]

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        # The emitter asks twice per scalar: may it be plain (implicit[0], the
        # implicit resolvers' regular expressions decide; kept per text), and
        # may it be quoted (always the default tag: BaseResolver.resolve).
        if kind is not yaml.ScalarNode or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)  # type: ignore[no-any-return]
        if not implicit[0]:
            return self.DEFAULT_SCALAR_TAG  # type: ignore[no-any-return]
        tag = self._resolved.get(value)
        if tag is None:
            tag = self._resolved[value] = super().resolve(kind, value, implicit)
        return tag


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=_style(value))


_Dumper.add_representer(str, _str)


def dump_yaml(value: Any) -> bytes:
    return yaml.dump(value, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100).encode("utf-8")


def units(catalog_set: CatalogSet, settings: Settings = Settings()) -> list[Unit]:
    """One document per catalog, and one per service of it
    (``asyncapi/services/<service>.yaml``, catalog-format.md §9); ``settings``
    are part of each unit's inputs (the cache key), and so are the service
    names that more than one catalog of the directory uses (their documents
    go to ``asyncapi/services/<catalog_id>/<service>.yaml``, one per catalog)."""
    seen: dict[str, int] = {}
    for catalog in catalog_set.catalogs:
        for service in catalog.services:
            seen[service.name] = seen.get(service.name, 0) + 1
    shared = frozenset(name for name, count in seen.items() if count > 1)
    return [
        Unit("asyncapi", catalog.id, (*catalog_inputs(catalog, catalog_set), settings,
                                      shared & {service.name for service in catalog.services}), _render_unit)
        for catalog in catalog_set.catalogs
    ]


def service_file(catalog: Catalog, service: Service, shared: frozenset[str] = frozenset()) -> str:
    """Where a service's own document goes: by its name, or under its catalog's
    id when other catalogs of the directory have a service of that name."""
    if service.name in shared:
        return f"asyncapi/services/{safe_file_name(catalog.id)}/{safe_file_name(service.name)}.yaml"
    return f"asyncapi/services/{safe_file_name(service.name)}.yaml"


def _render_unit(inputs: tuple[Any, ...]) -> dict[str, bytes]:
    catalog, schemas, settings, shared = inputs
    catalog_set = partial_set((catalog,), schemas)
    files = {f"asyncapi/{safe_file_name(catalog.id)}.yaml": dump_yaml(document(catalog, catalog_set, settings))}
    for service in catalog.services:
        files[service_file(catalog, service, shared)] = dump_yaml(document(catalog, catalog_set, settings, service))
    return files


def render(catalog_set: CatalogSet) -> dict[str, bytes]:
    return render_all(units(catalog_set))
