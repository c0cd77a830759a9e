"""`evcat import asyncapi FILE|FOLDER...` (contract §10, §9).

AsyncAPI 2.x and 3.x documents (YAML or JSON); a folder imports every
AsyncAPI document in it (one document per application, as AsyncAPI 3 has it),
and ``$ref`` reaches the other files of the folder (``sources.Refs``, with
``referencing``; never a file outside it, never the network).

- Messages become event types (one per message object, however many channels
  and operations name it): ``type`` is ``--type-prefix`` + the message's
  ``name`` (else its ``messageId``, else its key), ``dataversion`` the
  document's ``info.version`` unless the message says otherwise
  (``x-eventcatalog-message-version``, ``x-version``), ``title``,
  ``description`` (else ``summary``) and examples carried. A message whose
  payload is a structured-mode CloudEvent (``application/cloudevents+json``
  with a ``type`` const, as ``evcat generate`` writes) gives that type,
  dataversion, data schema and the meaning of its attributes. Payloads are
  JSON Schema (``schemaFormat`` absent or a JSON Schema / AsyncAPI schema
  media type); any other format (Avro, Protobuf, RAML) is a note and the
  message is not imported.
- ``components.schemas`` (and every other schema a ``$ref`` reaches) become
  the catalog's shared ``schemas``.
- Channels become ``channels`` (address with its parameters, protocol from
  the channel's bindings or servers: kafka, amqp, mqtt, http) and operations
  ``services``: in 3.x each document is one application that sends or
  receives (``action``); in 2.x ``subscribe`` means the application sends
  and ``publish`` that it receives (AsyncAPI 2.6.0, Operation Object).
- Servers, contact and licence go to ``servers``, ``producer.contact`` and
  ``license``. Whatever else a message or channel says (headers,
  correlation ids, tags, unmodelled bindings) is a note.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import Imported, Note, Options, SourceError
from .schemas import SchemaImporter, _child
from .settle import catalog_id, semver
from .sources import RefError, Refs, Source, parse_pointer

SUFFIXES = (".yaml", ".yml", ".json")
CE_CONTENT_TYPE = "application/cloudevents+json"
JSON_SCHEMA_FORMATS = (
    "application/schema+json", "application/schema+yaml",
    "application/vnd.aai.asyncapi", "application/vnd.aai.asyncapi+json", "application/vnd.aai.asyncapi+yaml",
)
# AsyncAPI server protocols -> catalog channel protocols (§9).
PROTOCOLS = {
    "kafka": "kafka", "kafka-secure": "kafka", "amqp": "amqp", "amqps": "amqp", "mqtt": "mqtt", "mqtts": "mqtt",
    "secure-mqtt": "mqtt", "mqtt5": "mqtt", "http": "http", "https": "http",
}
MODELLED_BINDINGS = ("kafka", "amqp", "mqtt", "http")
# The attributes of a structured-mode CloudEvent that are not extensions.
CE_CORE = frozenset(("specversion", "type", "source", "id", "time", "subject", "datacontenttype", "dataschema",
                     "data", "data_base64", "dataversion", "dataref", "sequence", "sequencetype"))
CE_TYPES = {"boolean": "Boolean", "integer": "Integer", "string": "String"}
# Message fields carried over (the rest is a note).
_CARRIED = frozenset(("name", "messageId", "title", "summary", "description", "payload", "examples", "contentType",
                      "schemaFormat", "traits", "x-eventcatalog-message-version", "x-version",
                      "x-eventcatalog-message-type"))


@dataclass
class _Message:
    value: dict[str, Any]
    uri: str  # where the message object stands (after $refs)
    key: str  # its key in components/messages or the channel's messages, or a made-up one
    document: _Document


@dataclass
class _Document:
    source: Source
    refs: Refs
    schemas: SchemaImporter
    major: int
    evcat: str | None  # "catalog" or "service:<name>" for documents evcat wrote
    default_content_type: str | None
    servers: dict[str, str] = field(default_factory=dict)  # server name -> catalog protocol
    protocols: dict[str, str] = field(default_factory=dict)  # server name -> its protocol as written


@dataclass
class _State:
    options: Options
    notes: list[Note]
    shared: dict[str, Any] = field(default_factory=dict)
    contents: dict[tuple[str, str], str] = field(default_factory=dict)  # SchemaImporter.contents, across sources
    events: list[dict[str, Any]] = field(default_factory=list)
    by_message: dict[str, tuple[str, str | None] | None] = field(default_factory=dict)  # message URI -> (type, dataversion)
    keys: set[tuple[str, str | None]] = field(default_factory=set)
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    channel_names: dict[str, str | None] = field(default_factory=dict)  # channel URI -> catalog channel name
    services: dict[str, dict[str, Any]] = field(default_factory=dict)
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    catalog: dict[str, Any] = field(default_factory=dict)


def read(sources: Sequence[Path], options: Options) -> Imported:
    state = _State(options, [])
    documents: list[_Document] = []
    for source in sources:
        root = source if source.is_dir() else source.parent
        refs = Refs(root)
        if source.is_dir():
            found = [refs.load(path, str(path)) for path in _files(source)]
            found = [document for document in found if isinstance(document.value, dict) and "asyncapi" in document.value]
            if not found:
                raise SourceError(Note(str(source), "", "no AsyncAPI document (a file with an 'asyncapi' key) in this folder",
                                       kind="error"))
        else:
            document = refs.load(source, str(source))
            if not isinstance(document.value, dict) or "asyncapi" not in document.value:
                raise SourceError(document.note((), "not an AsyncAPI document (it has no 'asyncapi' key)", kind="error"))
            found = [document]
        importer = SchemaImporter(refs, state.notes, shared=state.shared, contents=state.contents)
        for document in found:
            version = str(document.value.get("asyncapi"))
            major = int(version.split(".", 1)[0]) if re.match(r"^[23]\.", version) else 0
            if not major:
                raise SourceError(document.note(("asyncapi",), f"AsyncAPI {version}: evcat reads AsyncAPI 2.x and 3.x",
                                                kind="error"))
            identifier = document.value.get("id")
            evcat = None
            if isinstance(identifier, str) and identifier.startswith("urn:evcat:"):
                rest = identifier[len("urn:evcat:"):]
                evcat = "service:" + rest.split(":service:", 1)[1] if ":service:" in rest else "catalog"
                if evcat == "catalog":
                    state.catalog.setdefault("catalog", rest)
            default = document.value.get("defaultContentType")
            documents.append(_Document(document, refs, importer, major, evcat, default if isinstance(default, str) else None))
    # The catalog's own document (evcat's) first: its info is the catalog's.
    documents.sort(key=lambda d: d.evcat != "catalog")
    for document in documents:
        _prepare(state, document)
        _servers(state, document)
    for document in documents:
        _messages(state, document)
    for document in documents:
        _channels(state, document)
    for document in documents:
        _services(state, document)
    return Imported({f"{_catalog_id(state, documents)}.yaml": _catalog(state, documents)}, state.notes)


def _files(folder: Path) -> list[Path]:
    found = []
    for directory, subdirs, files in os.walk(folder):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d != "node_modules")
        found.extend(Path(directory) / name for name in sorted(files) if name.endswith(SUFFIXES) and not name.startswith("."))
    return found


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _follow(document: _Document, value: Any, uri: str, what: str) -> tuple[Any, str] | None:
    try:
        return document.refs.follow(value, uri)
    except RefError as error:
        _note(document, _child(uri, "$ref"), f"{what} not imported: $ref not followed: {error}")
        return None


def _note(document: _Document, uri: str, message: str, kind: str = "not carried") -> None:
    document.schemas.notes.append(document.refs.note(uri, message, kind))


def _base(document: _Document) -> str:
    return document.source.uri + "#"


# -- catalog-level information --------------------------------------------------


def _prepare(state: _State, document: _Document) -> None:
    value = document.source.value
    info = value.get("info") if isinstance(value.get("info"), dict) else {}
    if document.evcat is not None and document.evcat.startswith("service:"):
        return  # a service's view: its info is the service's (see _services)
    catalog = state.catalog
    for key in ("title", "description"):
        if isinstance(info.get(key), str) and key not in catalog:
            catalog[key] = info[key]
    if "version" in info and "version" not in catalog:
        catalog["version"] = semver(str(info["version"]))
        catalog["info_version"] = str(info["version"])
    contact = info.get("contact")
    if isinstance(contact, dict) and "contact" not in catalog:
        kept = {key: contact[key] for key in ("name", "email", "url") if isinstance(contact.get(key), str)}
        if kept:
            catalog["contact"] = kept
    for tag in info.get("tags") if isinstance(info.get("tags"), list) else []:
        name = _get(tag, "name")
        if document.evcat is not None and isinstance(name, str) and name.startswith("profile:"):
            catalog.setdefault("profile", name[len("profile:"):])
    licence = info.get("license")
    if isinstance(licence, dict) and isinstance(licence.get("name"), str) and "license" not in catalog:
        catalog["license"] = {key: licence[key] for key in ("name", "url") if isinstance(licence.get(key), str)}


def _servers(state: _State, document: _Document) -> None:
    servers = document.source.value.get("servers")
    if not isinstance(servers, dict):
        return
    base = _base(document) + "/servers"
    for name, server in servers.items():
        followed = _follow(document, server, _child(base, name), f"server '{name}'")
        if followed is None or not isinstance(followed[0], dict):
            continue
        server, uri = followed
        protocol = server.get("protocol") if isinstance(server.get("protocol"), str) else None
        if protocol is not None:
            document.protocols[name] = protocol
        if protocol is not None and protocol.lower() in PROTOCOLS:
            document.servers[name] = PROTOCOLS[protocol.lower()]
        host = server.get("host")
        pathname = server.get("pathname")
        if document.major == 2 and isinstance(server.get("url"), str):
            url = server["url"]
            parts = urlsplit(url if "://" in url else "//" + url)
            host, pathname = parts.netloc or url, parts.path or None
        if not isinstance(host, str) or protocol is None or name in state.servers:
            continue
        entry: dict[str, Any] = {"host": host, "protocol": protocol}
        if isinstance(pathname, str) and pathname:
            entry["pathname"] = pathname
        if isinstance(server.get("description"), str):
            entry["description"] = server["description"]
        state.servers[name] = entry
        left = sorted(set(server) - {"host", "protocol", "pathname", "description", "url", "title", "summary"})
        if left:
            _note(document, uri, f"server '{name}': {', '.join(left)} not carried")


# -- messages -> events ---------------------------------------------------------


def _message_refs(document: _Document) -> list[tuple[Any, str, str]]:
    """Every message the document declares: (value as written, URI, key)."""
    value = document.source.value
    base = _base(document)
    found: list[tuple[Any, str, str]] = []
    channels = value.get("channels") if isinstance(value.get("channels"), dict) else {}
    for channel_key, channel in channels.items():
        channel_uri = _child(base + "/channels", channel_key)
        followed = _follow(document, channel, channel_uri, f"channel '{channel_key}'")
        if followed is None or not isinstance(followed[0], dict):
            continue
        channel, channel_uri = followed
        if document.major == 3:
            messages = channel.get("messages") if isinstance(channel.get("messages"), dict) else {}
            found.extend((message, _child(channel_uri, "messages", key), key) for key, message in messages.items())
        else:
            for action in ("subscribe", "publish"):
                operation = channel.get(action)
                if isinstance(operation, dict) and "message" in operation:
                    found.extend(_v2_messages(operation, _child(channel_uri, action), channel_key))
    components = value.get("components") if isinstance(value.get("components"), dict) else {}
    messages = components.get("messages") if isinstance(components.get("messages"), dict) else {}
    found.extend((message, _child(base + "/components/messages", key), key) for key, message in messages.items())
    return found


def _v2_messages(operation: dict[str, Any], uri: str, channel_key: str) -> list[tuple[Any, str, str]]:
    message = operation["message"]
    at = _child(uri, "message")
    stem = operation.get("operationId") if isinstance(operation.get("operationId"), str) else channel_key
    if isinstance(message, dict) and isinstance(message.get("oneOf"), list):
        return [(item, _child(at, "oneOf", index), f"{stem}{index + 1}") for index, item in enumerate(message["oneOf"])]
    return [(message, at, stem)]


def _messages(state: _State, document: _Document) -> None:
    for written, uri, key in _message_refs(document):
        followed = _follow(document, written, uri, f"message '{key}'")
        if followed is None:
            continue
        message, where = followed
        if where in state.by_message:
            continue
        if isinstance(written, dict) and "$ref" in written and "#/" in where:  # named by its key where it is defined
            key = parse_pointer(where.split("#", 1)[1])[-1]
        if not isinstance(message, dict):
            _note(document, where, f"message '{key}' is not an object; not imported")
            state.by_message[where] = None
            continue
        state.by_message[where] = _event(state, _Message(_with_traits(document, message, where), where, key, document))


def _with_traits(document: _Document, message: dict[str, Any], uri: str) -> dict[str, Any]:
    """The message with its traits applied (the message's own fields win)."""
    traits = message.get("traits")
    if not isinstance(traits, list):
        return message
    merged = dict(message)
    for index, trait in enumerate(traits):
        followed = _follow(document, trait, _child(uri, "traits", index), "message trait")
        if followed is None or not isinstance(followed[0], dict):
            continue
        for key, value in followed[0].items():
            merged.setdefault(key, value)
    return merged


def _event(state: _State, message: _Message) -> tuple[str, str | None] | None:
    value, uri, document = message.value, message.uri, message.document
    payload = value.get("payload")
    schema_format = value.get("schemaFormat")
    payload_uri = _child(uri, "payload")
    if document.major == 3 and isinstance(payload, dict) and "schemaFormat" in payload and "schema" in payload:
        schema_format, payload, payload_uri = payload["schemaFormat"], payload["schema"], _child(payload_uri, "schema")
    name = next((value[key] for key in ("name", "messageId") if isinstance(value.get(key), str) and value[key]), message.key)
    if schema_format is not None and not (isinstance(schema_format, str) and schema_format.split(";", 1)[0].strip().lower()
                                          in JSON_SCHEMA_FORMATS):
        _note(document, _child(uri, "schemaFormat") if "schemaFormat" in value else payload_uri,
              f"message '{name}' not imported: its payload is in {schema_format}, not JSON Schema")
        return None
    content_type = value.get("contentType") if isinstance(value.get("contentType"), str) else document.default_content_type
    if payload is not None:
        followed = _follow(document, payload, payload_uri, f"the payload of message '{name}'")
        if followed is None:
            return None
    if content_type == CE_CONTENT_TYPE and _ce_payload(document, payload, payload_uri) is not None:
        return _cloudevent(state, message, _ce_payload(document, payload, payload_uri))  # type: ignore[arg-type]
    prefix = state.options.type_prefix
    event_type = f"{prefix.rstrip('.')}.{name}" if prefix else name
    version = next((value[key] for key in ("x-eventcatalog-message-version", "x-version") if key in value), None)
    info_version = _get(document.source.value.get("info"), "version")
    dataversion = semver(str(version if version is not None else info_version)) if payload is not None else None
    event_type = _unique_type(state, document, uri, event_type, dataversion)
    event: dict[str, Any] = {"type": event_type}
    title = value.get("title")
    event["title"] = title if isinstance(title, str) else _title(name)
    description = value.get("description") if isinstance(value.get("description"), str) else value.get("summary")
    if isinstance(description, str):
        event["description"] = description
    if content_type and content_type != CE_CONTENT_TYPE and payload is not None:
        event["datacontenttype"] = content_type  # the same for every event becomes defaults.datacontenttype
    if payload is not None:
        event["dataversion"] = dataversion
        event["data"] = document.schemas.convert(payload, payload_uri) if not (
            isinstance(payload, dict) and set(payload) == {"$ref"}) else _shared_ref(document, payload, payload_uri)
    examples = _examples(value)
    if examples:
        event["examples"] = examples
    left = sorted(key for key in value if key not in _CARRIED and key != "$ref")
    if left:
        _note(document, uri, f"message '{name}': {', '.join(left)} not carried")
    state.events.append(event)
    return event_type, event.get("dataversion")


def _shared_ref(document: _Document, payload: dict[str, Any], uri: str) -> dict[str, Any]:
    name = document.schemas.shared_ref(payload["$ref"], uri)
    return {"$ref": f"#/schemas/{name}"} if name is not None else {}


def _unique_type(state: _State, document: _Document, uri: str, event_type: str, dataversion: str | None) -> str:
    if (event_type, dataversion) not in state.keys:
        state.keys.add((event_type, dataversion))
        return event_type
    counter = 2
    while (f"{event_type}{counter}", dataversion) in state.keys:
        counter += 1
    chosen = f"{event_type}{counter}"
    _note(document, uri, f"type '{event_type}' (dataversion {dataversion}) is another message's; this one is '{chosen}'",
          kind="derived")
    state.keys.add((chosen, dataversion))
    return chosen


def _title(name: str) -> str:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").replace("-", " ").replace(".", " ").split()
    return " ".join(words).capitalize() or name


def _examples(message: dict[str, Any]) -> list[dict[str, Any]]:
    examples = message.get("examples")
    result = []
    for example in examples if isinstance(examples, list) else []:
        if isinstance(example, dict) and "payload" in example:
            result.append({"data": example["payload"]})
    return result[:5]


# -- structured-mode CloudEvents (what evcat generate writes) ---------------------


def _ce_payload(document: _Document, payload: Any, uri: str) -> tuple[dict[str, Any], str] | None:
    followed = _follow(document, payload, uri, "payload") if payload is not None else None
    if followed is None:
        return None
    schema, where = followed
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or "specversion" not in properties:
        return None
    if not isinstance(_get(properties.get("type"), "const"), str):
        return None
    return schema, where


def _cloudevent(state: _State, message: _Message, payload: tuple[dict[str, Any], str]) -> tuple[str, str | None]:
    schema, where = payload
    document, value = message.document, message.value
    properties = schema["properties"]
    required = set(schema.get("required") or ())
    event_type = properties["type"]["const"]
    versions = [_get(properties.get("dataversion"), "const"), *(_get(properties.get("dataversion"), "enum") or [])]
    dataversion = next((version for version in versions if isinstance(version, str)), None)  # enum: [v, null] when optional
    event: dict[str, Any] = {"type": event_type}
    if dataversion is not None:
        event["dataversion"] = dataversion
    event["title"] = value["title"] if isinstance(value.get("title"), str) else _title(event_type)
    if isinstance(value.get("description"), str):
        event["description"] = value["description"]
    source = properties.get("source")
    for key in ("const",):
        if isinstance(_get(source, key), str):
            event["source"] = source[key]
    if "source" not in event and isinstance(_get(source, "examples"), list) and source["examples"]:
        event["source"] = source["examples"][0]
    for attribute in ("subject", "time", "id", "dataref"):
        described = properties.get(attribute)
        if isinstance(described, dict) and isinstance(described.get("description"), str) and attribute not in (
            "time", "id") or attribute in ("time", "id") and isinstance(_get(described, "description"), str):
            event[attribute] = described["description"]
    content = properties.get("datacontenttype")
    if isinstance(_get(content, "const"), str):
        event["datacontenttype"] = content["const"]
    elif isinstance(_get(content, "examples"), list) and content["examples"]:  # evcat writes the catalog's value there
        event["datacontenttype"] = content["examples"][0]
    dataschema = properties.get("dataschema")
    if isinstance(_get(dataschema, "const"), str):
        event["dataschema"] = dataschema["const"]
    sequence = properties.get("sequencetype")
    kinds = [_get(sequence, "const")] + list(_get(sequence, "enum") or [])
    kinds = [kind for kind in kinds if isinstance(kind, str)]
    if kinds and "sequence" in properties:
        event["sequence"] = kinds[0]
    extensions = {}
    for name, attribute in properties.items():
        if name in CE_CORE or not isinstance(attribute, dict):
            continue
        kind = attribute.get("x-cloudevents-type") or _extension_type(attribute)
        extension: dict[str, Any] = {"type": kind}
        if name in required:
            extension["required"] = True
        if isinstance(attribute.get("description"), str):
            extension["description"] = attribute["description"]
        extensions[name] = extension
    if extensions:
        event["extensions"] = extensions
    if "data" in properties and dataversion is not None:
        event["data"] = document.schemas.convert(properties["data"], _child(where, "properties", "data"))
        event["data"].pop("title", None)  # evcat's class name, not the catalog's
    examples = []
    for example in value.get("examples") if isinstance(value.get("examples"), list) else []:
        if isinstance(_get(example, "payload"), dict):
            examples.append({k: v for k, v in example["payload"].items() if k not in ("specversion", "type", "dataversion")})
    if examples:
        event["examples"] = examples
    if (event_type, dataversion) in state.keys:
        if document.evcat is None:  # evcat's documents repeat the catalog's messages in each service's view
            _note(document, message.uri, f"a second message for type '{event_type}' dataversion {dataversion}; not imported")
        return event_type, dataversion
    state.keys.add((event_type, dataversion))
    state.events.append(event)
    return event_type, dataversion


def _extension_type(attribute: dict[str, Any]) -> str:
    kind = attribute.get("type")
    kinds = [k for k in (kind if isinstance(kind, list) else [kind]) if k != "null"]
    if len(kinds) == 1 and kinds[0] in CE_TYPES:
        if kinds[0] == "string":
            fmt = attribute.get("format")
            return {"uri": "URI", "uri-reference": "URI-reference", "date-time": "Timestamp"}.get(fmt, "String")
        return CE_TYPES[kinds[0]]
    return "String"


# -- channels -------------------------------------------------------------------


def _channel_name(key: str, major: int) -> str:
    if major == 3:
        return key
    return re.sub(r"[^A-Za-z0-9_.{}-]+", "-", key).strip("-") or "channel"


def _channels(state: _State, document: _Document) -> None:
    channels = document.source.value.get("channels")
    if not isinstance(channels, dict):
        return
    base = _base(document) + "/channels"
    for key, channel in channels.items():
        followed = _follow(document, channel, _child(base, key), f"channel '{key}'")
        if followed is None or not isinstance(followed[0], dict):
            continue
        channel, uri = followed
        if uri in state.channel_names:
            continue
        if document.evcat is not None and _type_channel(channel):
            state.channel_names[uri] = None  # evcat's channel per event type of a catalog without channels
            continue
        name = channel.get("title") if document.evcat is not None and isinstance(channel.get("title"), str) else (
            _channel_name(key, document.major))
        address = channel.get("address") if document.major == 3 else key
        if not isinstance(address, str):
            address = key
        protocol, bindings = _protocol(state, document, channel, uri, name)
        if protocol is None:
            state.channel_names[uri] = None
            continue
        if protocol == "http" and not address.startswith("/"):  # a URL path (§9); AsyncAPI's is relative to the server
            _note(document, uri, f"channel '{name}': http address '{address}' written as the path '/{address}'",
                  kind="derived")
            address = "/" + address
        entry: dict[str, Any] = {"protocol": protocol, "address": address}
        description = channel.get("description")
        if isinstance(description, str) and not (document.evcat and description == f"The {protocol} channel `{address}`."):
            entry["description"] = description
        if bindings:
            entry["bindings"] = bindings
        same = next((other for other, known in state.channels.items()
                     if (known["protocol"], known["address"]) == (protocol, address)), None)
        if same is not None and same != name:  # another document's name for the same channel
            state.channel_names[uri] = same
            continue
        if name in state.channels and state.channels[name] != entry:
            _note(document, uri, f"channel '{name}' is declared differently in another document; the first is kept")
        state.channels.setdefault(name, entry)
        state.channel_names[uri] = name
        parameters = channel.get("parameters")
        if isinstance(parameters, dict) and parameters and document.evcat is None:
            said = sorted({key for parameter in parameters.values() if isinstance(parameter, dict)
                           for key in parameter if key != "$ref"} | ({"description"} if any(
                               isinstance(_get(parameter, "$ref"), str) for parameter in parameters.values()) else set()))
            if said:
                _note(document, _child(uri, "parameters"), f"channel '{name}': what its parameters say "
                      f"({', '.join(said)}) is not carried; they stay in the address")
        left = sorted(set(channel) - {"address", "messages", "description", "title", "summary", "parameters", "servers",
                                      "bindings", "subscribe", "publish"})
        if left:
            _note(document, uri, f"channel '{key}': {', '.join(left)} not carried")


def _type_channel(channel: dict[str, Any]) -> bool:
    """A channel of evcat's catalog without channels: addressed by the one event type it carries."""
    description = channel.get("description")
    return isinstance(description, str) and description.startswith("CloudEvents of type `") and description.endswith(
        "every dataversion the producer publishes.")


def _protocol(state: _State, document: _Document, channel: dict[str, Any], uri: str,
              name: str) -> tuple[str | None, dict[str, Any]]:
    bindings = channel.get("bindings") if isinstance(channel.get("bindings"), dict) else {}
    modelled = [key for key in bindings if key in MODELLED_BINDINGS]
    protocols: list[str] = list(dict.fromkeys(modelled))
    if not protocols:  # the bindings of the operations on the channel
        for _action, on, _messages, operation_bindings in _operations(document, with_bindings=True):
            if on == uri and isinstance(operation_bindings, dict):
                protocols.extend(key for key in operation_bindings if key in MODELLED_BINDINGS)
        protocols = list(dict.fromkeys(protocols))
    if not protocols:
        named = channel.get("servers")
        if isinstance(named, list) and named:
            for server in named:
                server_name = server if isinstance(server, str) else (
                    server["$ref"].rsplit("/", 1)[1] if isinstance(_get(server, "$ref"), str) else None)
                if server_name in document.servers:
                    protocols.append(document.servers[server_name])
        else:
            protocols.extend(document.servers.values())
        protocols = list(dict.fromkeys(protocols))
    others = sorted(key for key in bindings if key not in MODELLED_BINDINGS)
    if others:
        _note(document, _child(uri, "bindings"), f"channel '{name}': {', '.join(others)} bindings not carried "
              f"(evcat models {', '.join(MODELLED_BINDINGS)})")
    if not protocols:
        named = channel.get("servers")
        names = [server if isinstance(server, str) else str(_get(server, "$ref")).rsplit("/", 1)[-1]
                 for server in named] if isinstance(named, list) and named else list(document.protocols)
        used = sorted({document.protocols[name] for name in names if name in document.protocols})
        why = f"its servers use {', '.join(used)}" if used else "no server or binding says its protocol"
        _note(document, uri, f"channel '{name}' not carried: {why} (evcat models {', '.join(MODELLED_BINDINGS)})")
        return None, {}
    if len(protocols) > 1:
        _note(document, uri, f"channel '{name}' travels over {', '.join(protocols)}; carried as {protocols[0]}")
    protocol = protocols[0]
    carried: dict[str, Any] = {}
    if protocol == "kafka":
        key = _kafka_key(document, channel, uri)
        if key is not None:
            carried["key"] = key
    binding = bindings.get(protocol) if isinstance(bindings.get(protocol), dict) else {}
    exchange = _get(binding.get("exchange"), "type")
    # evcat writes "topic" when the catalog names no exchange type
    if protocol == "amqp" and isinstance(exchange, str) and not (document.evcat is not None and exchange == "topic"):
        carried["exchange"] = exchange
    carried.update(_operation_bindings(document, uri, protocol))
    return protocol, carried


def _operation_bindings(document: _Document, channel_uri: str, protocol: str) -> dict[str, Any]:
    """What the send operations on a channel say that the catalog keeps on the
    channel (§9): amqp routing key (``cc``); mqtt ``qos`` and ``retain``
    (beyond the values evcat writes when the catalog says nothing: qos 1, retain false)."""
    carried: dict[str, Any] = {}
    for action, on, _messages, bindings in _operations(document, with_bindings=True):
        if on != channel_uri or action != "send" or not isinstance(_get(bindings, protocol), dict):
            continue
        binding = bindings[protocol]
        if protocol == "amqp" and isinstance(binding.get("cc"), list) and len(binding["cc"]) == 1:
            carried["routingKey"] = binding["cc"][0]
        if protocol == "mqtt":
            qos, retain = binding.get("qos"), binding.get("retain")
            if qos in (0, 1, 2) and not (document.evcat is not None and qos == 1):
                carried["qos"] = qos
            if isinstance(retain, bool) and not (document.evcat is not None and retain is False):
                carried["retain"] = retain
    return carried


def _kafka_key(document: _Document, channel: dict[str, Any], uri: str) -> str | None:
    """The event attribute a kafka channel keys its records by: the one its
    messages' kafka ``key`` binding names (as evcat writes it: "The event's
    `subject` attribute.")."""
    messages = channel.get("messages") if isinstance(channel.get("messages"), dict) else {}
    keys = set()
    for name, message in messages.items():
        try:
            value, _ = document.refs.follow(message, _child(uri, "messages", name))
        except RefError:
            continue
        description = _get(_get(_get(value, "bindings"), "kafka"), "key")
        found = re.fullmatch(r"The event's `([a-z0-9]+)` attribute\.", str(_get(description, "description")))
        if found:
            keys.add(found.group(1))
    return keys.pop() if len(keys) == 1 else None


# -- operations -> services -----------------------------------------------------


def _services(state: _State, document: _Document) -> None:
    value = document.source.value
    if document.evcat == "catalog":
        return  # the catalog's view: its services have documents of their own (asyncapi/services/)
    info = value.get("info") if isinstance(value.get("info"), dict) else {}
    if document.evcat is not None:
        name = document.evcat.split(":", 1)[1]
        title = info.get("title")
        catalog_title = state.catalog.get("title")
        if isinstance(title, str) and isinstance(catalog_title, str) and title.endswith(f" ({catalog_title})"):
            title = title[: -len(f" ({catalog_title})")]
    else:
        title = info.get("title") if isinstance(info.get("title"), str) else document.source.path.stem
        name = catalog_id(title)
    links: dict[str, list[dict[str, Any]]] = {"sends": [], "receives": []}
    for action, channel_uri, messages in _operations(document):
        channel = state.channel_names.get(channel_uri)
        for message_uri in messages:
            key = state.by_message.get(message_uri)
            if key is None:
                continue
            link: dict[str, Any] = {"type": key[0]}
            if key[1] is not None:
                link["dataversion"] = key[1]
            if channel is not None:
                link["channel"] = channel
            group = links["sends" if action == "send" else "receives"]
            if link not in group:
                group.append(link)
    if not links["sends"] and not links["receives"]:
        return
    service: dict[str, Any] = {"title": title}
    if document.evcat is not None and isinstance(info.get("description"), str):
        service["description"] = info["description"]
    contact = info.get("contact")
    if document.evcat is not None and isinstance(contact, dict):
        owner = {key: contact[key] for key in ("name", "email", "url") if isinstance(contact.get(key), str)}
        if owner and owner != state.catalog.get("contact"):  # evcat writes the catalog's contact without an owner
            service["owner"] = owner
    service.update({key: group for key, group in links.items() if group})
    if name in state.services:
        _note(document, _base(document), f"a second application named '{name}'; its operations are not carried")
        return
    state.services[name] = service


def _operations(document: _Document, with_bindings: bool = False) -> list[Any]:
    """(send | receive, channel URI, message URIs) of each operation (and its
    bindings, with ``with_bindings``)."""
    value = document.source.value
    base = _base(document)
    result = []
    if document.major == 3:
        operations = value.get("operations") if isinstance(value.get("operations"), dict) else {}
        for key, operation in operations.items():
            followed = _follow(document, operation, _child(base + "/operations", key), f"operation '{key}'")
            if followed is None or not isinstance(followed[0], dict):
                continue
            operation, uri = followed
            action = operation.get("action")
            if action not in ("send", "receive"):
                continue
            left = sorted(set(operation) - {"action", "channel", "messages", "title", "summary", "description",
                                            "bindings", "traits"})
            if left and not with_bindings:  # said once (the call from _services)
                _note(document, uri, f"operation '{key}': {', '.join(left)} not carried")
            channel = _follow(document, operation.get("channel"), _child(uri, "channel"), f"the channel of operation '{key}'")
            if channel is None:
                continue
            messages = operation.get("messages")
            if isinstance(messages, list):
                targets = []
                for index, message in enumerate(messages):
                    followed_message = _follow(document, message, _child(uri, "messages", index), "message")
                    if followed_message is not None:
                        targets.append(followed_message[1])
            else:  # absent: every message of the channel
                channel_messages = _get(channel[0], "messages")
                targets = []
                for name, message in (channel_messages.items() if isinstance(channel_messages, dict) else []):
                    followed_message = _follow(document, message, _child(channel[1], "messages", name), "message")
                    if followed_message is not None:
                        targets.append(followed_message[1])
            bindings = _get(operation, "bindings")
            result.append((action, channel[1], targets, bindings) if with_bindings else (action, channel[1], targets))
        return result
    channels = value.get("channels") if isinstance(value.get("channels"), dict) else {}
    for key, channel in channels.items():
        followed = _follow(document, channel, _child(base + "/channels", key), f"channel '{key}'")
        if followed is None or not isinstance(followed[0], dict):
            continue
        channel, uri = followed
        for verb, action in (("subscribe", "send"), ("publish", "receive")):
            operation = channel.get(verb)
            if not isinstance(operation, dict) or "message" not in operation:
                continue
            targets = []
            for written, at, _key in _v2_messages(operation, _child(uri, verb), key):
                followed_message = _follow(document, written, at, "message")
                if followed_message is not None:
                    targets.append(followed_message[1])
            bindings = _get(operation, "bindings")
            result.append((action, uri, targets, bindings) if with_bindings else (action, uri, targets))
    return result


# -- the catalog document -------------------------------------------------------


def _catalog_id(state: _State, documents: list[_Document]) -> str:
    if state.options.catalog_id:
        return state.options.catalog_id
    if isinstance(state.catalog.get("catalog"), str):
        return catalog_id(state.catalog["catalog"])
    if len(documents) > 1:  # several applications: the folder they share names the catalog
        folders = {document.source.path.parent for document in documents}
        common = Path(os.path.commonpath([str(folder) for folder in folders]))
        return catalog_id(common.name)
    title = state.catalog.get("title")
    if isinstance(title, str):
        return catalog_id(title)
    return catalog_id(documents[0].source.path.stem)


def _catalog(state: _State, documents: list[_Document]) -> dict[str, Any]:
    catalog = state.catalog
    document: dict[str, Any] = {"catalog": _catalog_id(state, documents)}
    if len(documents) > 1 and "catalog" not in catalog:  # one application's title is not the catalog's
        catalog.pop("title", None)
        catalog.pop("description", None)
    for key in ("title", "description", "version", "profile"):
        if key in catalog:
            document[key] = catalog[key]
    producer: dict[str, Any] = {}
    sources = [event["source"] for event in state.events if "source" in event]
    if sources:  # the most common source is the producer's; the others stay on their events
        common = max(sorted(set(sources)), key=sources.count)
        producer["source"] = common
        for event in state.events:
            if event.get("source") == common:
                del event["source"]
    if "contact" in catalog:
        producer["contact"] = catalog["contact"]
    if producer:
        document["producer"] = producer
    if "license" in catalog:
        document["license"] = catalog["license"]
    defaults = {}
    for key in ("datacontenttype", "time", "id"):  # one meaning for every event: the catalog's default
        values = [event.get(key) for event in state.events]
        if key == "datacontenttype":  # the most common one; a notification's envelope does not show it
            shown = [value for value in values if value is not None]
            if shown and all("data" not in event for event, value in zip(state.events, values) if value is None):
                common = max(sorted(set(shown)), key=shown.count)
                defaults[key] = common
                for event in state.events:
                    if event.get(key) == common:
                        del event[key]
            continue
        if len(values) > 1 and values[0] is not None and all(value == values[0] for value in values):
            defaults[key] = values[0]
            for event in state.events:
                event.pop(key, None)
    if defaults:
        document["defaults"] = defaults
    if state.servers:
        document["servers"] = state.servers
    if state.channels:
        document["channels"] = state.channels
    if state.services:
        document["services"] = state.services
    if state.shared:
        document["schemas"] = state.shared
    document["events"] = state.events
    return document
