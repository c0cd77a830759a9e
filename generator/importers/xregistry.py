"""`evcat import xregistry FILE|FOLDER...` (contract §10).

An xRegistry document (JSON or YAML; the xRegistry Message Definitions,
Schema and Endpoint specs, 1.0-rc, and the earlier drafts' spellings the
xRegistry code generator's samples still use: ``format`` for ``envelope``,
``metadata`` for ``envelopemetadata``, ``schemaurl`` for ``dataschemauri``,
``definitions`` for ``messages``)
becomes one catalog document:

- every message with a ``CloudEvents/1.0`` envelope (its own or its group's;
  under ``messagegroups`` or embedded in an endpoint) and a fixed ``type``
  value is an event type. Its ``envelopemetadata`` gives the ``source`` (a
  ``uritemplate`` stays a template, §9), the meanings of ``id``, ``time``,
  ``subject`` and ``dataref`` (their descriptions), ``datacontenttype``,
  ``dataschema``, ``sequence``/``sequencetype``, ``dataversion`` and, for
  every other attribute, an extension with its CloudEvents type and
  ``required`` flag.
- ``dataschemauri`` (a JSON pointer into the document's ``schemagroups``, to
  a schema, one of its versions, or into a version's schema after a second
  ``#``) gives the payload: a JSON Schema version is the payload schema
  (``$defs``/``definitions`` become shared ``schemas``, every ``$ref``
  followed with ``referencing``); the version's id is the dataversion unless
  the envelope metadata fixes ``dataversion``. A message that names a schema
  (not a version) takes the schema's default version.
- ``endpoints`` become ``channels``: ``KAFKA`` (``topic``, ``key``),
  ``AMQP/1.0`` (``node``), ``MQTT/3.1.1`` and ``MQTT/5.0`` (``topic`` or
  ``topicfilter``, ``qos``, ``retain``) and ``HTTP`` (the path of the first
  endpoint URI); endpoints that share a ``channel`` value are one channel.

Everything else is a located note (file, JSON pointer, line and column): a
message that is not a CloudEvent, a payload in Avro, Protobuf or another
schema format (the event type is kept, its payload unconstrained), a schema
outside the document, a fixed extension value, a NATS endpoint, an endpoint
that carries only some of the document's messages (that needs ``services``,
which xRegistry does not have).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import vocabulary
from . import Imported, Note, Options, SourceError
from .schemas import SchemaImporter
from .settle import catalog_id, semver
from .sources import Refs, Source, parse_pointer, pointer

SUFFIXES = (".json", ".yaml", ".yml")
CLOUDEVENTS = "cloudevents/1.0"
# The message spec's property types (and CloudEvents' own names, lower case) -> CloudEvents types.
TYPES = {name.lower(): name for name in vocabulary.TYPES} | {"urireference": "URI-reference"}
LOOSE_TYPES = {"uritemplate": "String", "symbol": "String", "any": "String", "number": "String", "duration": "String"}
CORE = ("specversion", "id", "type", "source", "subject", "time", "datacontenttype", "dataschema")
# xRegistry bookkeeping: says nothing a catalog holds.
BOOKKEEPING = frozenset(("type", "messageid", "messagegroupid", "schemaid", "schemagroupid", "endpointid", "versionid", "id",
                         "self", "shortself", "xid", "epoch", "createdat", "modifiedat", "ancestorid", "isdefault",
                         "metaurl", "meta", "versionsurl", "versionscount", "messagesurl", "messagescount",
                         "defaultversionid", "defaultversionurl", "defaultversionsticky", "readonly", "compatibility",
                         "contenttype", "format", "envelope", "envelopemetadata", "metadata", "name", "description",
                         "deprecated", "labels", "dataschemaformat", "dataschemauri", "dataschemaurl", "schemaurl",
                         "datacontenttype", "documentation"))
_PLACEHOLDER = re.compile(r"^\{([a-z0-9]+)\}$")


class _Embedded(Source):
    """A JSON Schema that stands inside the xRegistry document, read as a
    resource of its own (its ``#/...`` references are relative to it), whose
    notes point into the document."""

    def __init__(self, parent: Source, prefix: tuple[str | int, ...], value: Any, uri: str) -> None:
        super().__init__(parent.path, parent.display, value, parent.document)
        self.prefix = prefix
        self._uri = uri

    @property
    def uri(self) -> str:
        return self._uri

    def note(self, path: tuple[str | int, ...], message: str, kind: str = "not carried", key: bool = False) -> Note:
        return super().note(self.prefix + tuple(path), message, kind, key)


@dataclass
class _Message:
    path: tuple[str | int, ...]
    value: dict[str, Any]
    group: dict[str, Any]  # its message group (or endpoint)


def read(sources: Sequence[Path], options: Options) -> Imported:
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            found = _files(source)
            if not found:
                raise SourceError(Note(str(source), "", "no xRegistry documents (*.json, *.yaml, *.yml) in this folder",
                                       kind="error"))
            files.extend(found)
        else:
            files.append(source)
    imported = Imported()
    ids: Counter[str] = Counter()
    for file in files:
        root = file.parent
        refs = Refs(root)
        document = refs.load(file, str(file))
        if not isinstance(document.value, dict) or not ({"messagegroups", "endpoints"} & document.value.keys()):
            if len(files) == 1:
                raise SourceError(document.note((), "not an xRegistry document (no messagegroups or endpoints)",
                                                kind="error"))
            imported.notes.append(document.note((), "not an xRegistry document (no messagegroups or endpoints); skipped"))
            continue
        result = _Reader(document, refs, options, imported.notes).catalog(file)
        if result is None:
            continue
        name = result["catalog"]
        ids[name] += 1
        file_name = f"{name}.yaml" if ids[name] == 1 else f"{name}-{ids[name]}.yaml"
        imported.documents[file_name] = result
    if not imported.documents:
        last = imported.notes[-1] if imported.notes else Note(str(files[0]), "", "nothing to import")
        raise SourceError(Note(last.file, last.pointer, last.message, last.line, last.column, kind="error"))
    return imported


def _files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for directory, subdirs, names in os.walk(folder):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        found.extend(Path(directory) / name for name in sorted(names) if name.endswith(SUFFIXES) and not name.startswith("."))
    return found


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _envelope(entity: dict[str, Any]) -> str | None:
    value = entity.get("envelope", entity.get("format"))
    return value if isinstance(value, str) else None


class _Reader:
    def __init__(self, document: Source, refs: Refs, options: Options, notes: list[Note]) -> None:
        self.document = document
        self.refs = refs
        self.options = options
        self.notes = notes
        self.schemas = SchemaImporter(refs, notes)
        self.embedded: dict[tuple[str | int, ...], str] = {}  # path of a version's schema -> its resource URI
        self.time_required: list[tuple[str | int, ...]] = []  # messages that require `time`
        self.first_note = len(notes)

    def note(self, path: tuple[str | int, ...], message: str, kind: str = "not carried") -> None:
        self.notes.append(self.document.note(path, message, kind))

    # -- the document ------------------------------------------------------------

    def catalog(self, file: Path) -> dict[str, Any] | None:
        root = self.document.value
        groups = _dict(root.get("messagegroups"))
        messages = self._messages(root, groups)
        events: list[dict[str, Any]] = []
        seen: dict[tuple[str, str | None], tuple[str | int, ...]] = {}
        for message in messages:
            event = self._event(message)
            if event is None:
                continue
            key = (event["type"], event.get("dataversion"))
            if key in seen:
                self.note(message.path, f"the same type and dataversion as the message at {pointer(seen[key])}; "
                          "left out (a catalog has each (type, dataversion) once)")
                continue
            seen[key] = message.path
            events.append(event)
        if not events:
            reasons = sorted({note.message for note in self.notes[self.first_note:] if "left out" in note.message})
            why = f" ({'; '.join(reasons[:3])})" if reasons else ""
            self.note((), f"no message with a CloudEvents/1.0 envelope and a fixed type{why}; nothing to import")
            return None
        if self.time_required:
            others = len(self.time_required) - 1
            self.note(self.time_required[0], f"time is required here{f' and in {others} other messages' if others else ''}; "
                      f"under the profile '{self.options.profile}' it is optional (nlgov and normo require it: --profile)")
        group_values = [group for group in groups.values() if isinstance(group, dict)]
        only = next(iter(groups)) if len(groups) == 1 else None
        identifier = catalog_id(only if only is not None else file.name.split(".")[0])
        catalog: dict[str, Any] = {"catalog": identifier}
        title = _text(group_values[0].get("name")) if only is not None else _text(root.get("name"))
        if title:
            catalog["title"] = title
        description = _text(group_values[0].get("description")) if only is not None else _text(root.get("description"))
        if description:
            catalog["description"] = description
        sources = Counter(event.get("source") for event in events if event.get("source"))
        if sources:
            producer_source = sources.most_common(1)[0][0]
            catalog["producer"] = {"source": producer_source}
            for event in events:
                if event.get("source") == producer_source:
                    del event["source"]
        channels = self._channels(root, groups)
        if channels:
            catalog["channels"] = channels
        if self.schemas.shared:
            catalog["schemas"] = _merge_copies(self.schemas.shared, events)
        catalog["events"] = events
        return catalog

    def _messages(self, root: dict[str, Any], groups: dict[str, Any]) -> list[_Message]:
        found: list[_Message] = []
        for group_id, group in groups.items():
            if not isinstance(group, dict):
                self.note(("messagegroups", group_id), "a message group must be an object; left out")
                continue
            for key in group:
                if key not in ("messages", "definitions", "type", "messagegroupid", "id", "envelope", "format", "name",
                               "description", "self", "xid", "epoch", "createdat", "modifiedat", "shortself", "messagesurl",
                               "messagescount", "labels", "documentation"):
                    self.note(("messagegroups", group_id, key), f"message group attribute '{key}' is not carried")
            plural = "messages" if "messages" in group else "definitions"  # (an earlier draft's spelling)
            messages = group.get(plural)
            if isinstance(messages, dict):
                for message_id, message in messages.items():
                    path = ("messagegroups", group_id, plural, message_id)
                    if isinstance(message, dict):
                        found.append(_Message(path, message, group))
                    else:
                        self.note(path, "a message must be an object; left out")
        endpoints = root.get("endpoints")
        if isinstance(endpoints, dict):
            for endpoint_id, endpoint in endpoints.items():
                messages = endpoint.get("messages") if isinstance(endpoint, dict) else None
                if isinstance(messages, dict):
                    for message_id, message in messages.items():
                        path = ("endpoints", endpoint_id, "messages", message_id)
                        if isinstance(message, dict):
                            found.append(_Message(path, message, endpoint))
                        else:
                            self.note(path, "a message must be an object; left out")
        return found

    # -- one message -------------------------------------------------------------

    def _event(self, message: _Message) -> dict[str, Any] | None:
        value, path = message.value, message.path
        envelope = _envelope(value) or _envelope(message.group)
        if envelope is None or envelope.lower() != CLOUDEVENTS:
            what = f"its envelope is '{envelope}'" if envelope else "it has no envelope"
            self.note(path, f"not a CloudEvent ({what}; evcat catalogs CloudEvents/1.0 messages); left out")
            return None
        key = "envelopemetadata" if "envelopemetadata" in value else "metadata"
        metadata = _dict(value.get(key))
        at = (*path, key)
        declared = {name: spec for name, spec in metadata.items() if isinstance(spec, dict)}
        for name, spec in metadata.items():
            if not isinstance(spec, dict):
                self.note((*at, name), f"attribute '{name}' must be declared as an object; left out")
        type_spec = declared.get("type", {})
        event_type = type_spec.get("value")
        if not isinstance(event_type, str) or not event_type:
            self.note((*at, "type"), "no fixed CloudEvents type value; left out (an event type needs its type)")
            return None
        if "{" in event_type:
            self.note((*at, "type", "value"), f"type '{event_type}' is a template; a catalog event has one type; left out")
            return None
        event: dict[str, Any] = {"type": event_type}
        title = _text(value.get("name"))
        if title:
            event["title"] = title
        description = _text(value.get("description"))
        if description:
            event["description"] = description
        if isinstance(value.get("deprecated"), dict) or value.get("deprecated") is True:
            labels = _dict(value.get("labels"))
            reason = _text(labels.get("deprecation"))
            event["deprecated"] = reason or True
        self._attributes(event, declared, at)
        self._payload(event, value, path, declared)
        for name in value:
            if name in BOOKKEEPING:
                continue
            if name != "dataschema":  # (an inline schema: the payload)
                self.note((*path, name), f"message attribute '{name}' is not carried")
        if isinstance(value.get("labels"), dict):
            for label in value["labels"]:
                if label != "deprecation":
                    self.note((*path, "labels", label), f"label '{label}' is not carried")
        return event

    def _attributes(self, event: dict[str, Any], declared: dict[str, dict[str, Any]], at: tuple[str | int, ...]) -> None:
        specversion = declared.get("specversion", {}).get("value")
        if specversion is not None and specversion != vocabulary.SPECVERSION:
            self.note((*at, "specversion", "value"), f"specversion '{specversion}': evcat reads CloudEvents 1.0 only")
        for name in ("type", "source", "datacontenttype", "dataschema", "dataversion", "sequencetype"):
            written = declared.get(name, {}).get("value")
            if written is not None and not isinstance(written, str):
                self.note((*at, name, "value"), f"the {name} value must be a string; not carried")
        source = declared.get("source", {}).get("value")
        if isinstance(source, str) and source:
            event["source"] = source  # a uritemplate's placeholders: a §9 source template
        meaning = {"id": "id", "time": "time", "subject": "subject"}
        for name, key in meaning.items():
            text = _text(declared.get(name, {}).get("description"))
            if text:
                event[key] = text
            elif name == "subject" and name in declared:
                event["subject"] = "The subject of the event."
                self.note((*at, "subject"), "subject is declared without a description; its meaning is a placeholder",
                          kind="derived")
            if name in ("id", "time") and declared.get(name, {}).get("value") is not None and name != "time":
                self.note((*at, name, "value"), f"a fixed {name} value is not carried")
        if declared.get("time", {}).get("required") is True and not self._time_required():
            self.time_required.append((*at, "time", "required"))
        content_type = declared.get("datacontenttype", {}).get("value")
        if isinstance(content_type, str) and content_type:
            event["datacontenttype"] = content_type
        dataschema = declared.get("dataschema", {}).get("value")
        if isinstance(dataschema, str) and dataschema:
            if urlsplit(dataschema).scheme and "{" not in dataschema:
                event["dataschema"] = dataschema
            else:
                self.note((*at, "dataschema", "value"), f"dataschema '{dataschema}' is not an absolute URI; "
                          "not carried (the payload schema is)")
        for name, spec in declared.items():
            if name in CORE or name in ("dataversion", "sequencetype"):
                continue
            if name == "dataref":
                event["dataref"] = _text(spec.get("description")) or "Where the data can be fetched."
            elif name == "sequence":
                sequence_type = declared.get("sequencetype", {}).get("value")
                event["sequence"] = sequence_type if isinstance(sequence_type, str) and sequence_type else "String"
            else:
                self._extension(event, name, spec, (*at, name))

    def _extension(self, event: dict[str, Any], name: str, spec: dict[str, Any], at: tuple[str | int, ...]) -> None:
        written = str(spec.get("type", "string"))
        ce_type = TYPES.get(written.lower().replace("_", "-")) or TYPES.get(written.lower())
        if ce_type is None:
            ce_type = LOOSE_TYPES.get(written.lower(), "String")
            self.note((*at, "type"), f"type '{written}' is read as String (a CloudEvents extension has a CloudEvents type)",
                      kind="derived")
        extension: dict[str, Any] = {"type": ce_type}
        if spec.get("required") is True:
            extension["required"] = True
        text = _text(spec.get("description"))
        if text:
            extension["description"] = text
        if spec.get("value") is not None:
            self.note((*at, "value"), f"the fixed value of extension '{name}' is not carried (an extension has a type, "
                      "not a value, in a catalog)")
        event.setdefault("extensions", {})[name] = extension

    def _time_required(self) -> bool:
        from .. import profiles

        try:
            return profiles.get(self.options.profile).time_required
        except (KeyError, ValueError):
            return False

    # -- the payload -------------------------------------------------------------

    def _payload(self, event: dict[str, Any], value: dict[str, Any], path: tuple[str | int, ...],
                 declared: dict[str, dict[str, Any]]) -> None:
        fixed_version = declared.get("dataversion", {}).get("value")
        key = next((name for name in ("dataschemauri", "dataschemaurl", "schemaurl") if name in value), None)
        if key is None:
            if "dataschema" in value:
                self._inline(event, value, path, fixed_version)
            elif isinstance(fixed_version, str):
                event["dataversion"] = semver(fixed_version)
            return
        reference = value[key]
        if not isinstance(reference, str) or not reference.startswith("#"):
            self.note((*path, key), f"'{reference}' is not a schema in this document; evcat fetches nothing: the "
                      "payload is left unconstrained")
            event["data"] = {}
            event["dataversion"] = semver(fixed_version) if isinstance(fixed_version, str) else "1.0.0"
            return
        outer, _, inner = reference[1:].partition("#")
        target_path = parse_pointer(outer)
        target = _get(self.document.value, target_path)
        if not isinstance(target, dict):
            self.note((*path, key), f"'{reference}' points at nothing in this document; the payload is left unconstrained")
            event["data"] = {}
            event["dataversion"] = semver(fixed_version) if isinstance(fixed_version, str) else "1.0.0"
            return
        version_id: str | None = None
        version_path = target_path
        versions = target.get("versions")
        if isinstance(versions, dict) and versions:
            default = target.get("defaultversionid")
            version_id = str(default) if str(default) in versions else max(versions, key=_version_order)
            version_path = (*target_path, "versions", version_id)
            version = versions[version_id]
        else:
            version = target
            if len(target_path) >= 2 and target_path[-2] == "versions":
                version_id = str(target_path[-1])
        if not isinstance(version, dict):
            self.note(version_path, "a schema version must be an object; the payload is left unconstrained")
            event["data"] = {}
            event["dataversion"] = "1.0.0"
            return
        event["dataversion"] = semver(fixed_version if isinstance(fixed_version, str) else version_id or "1")
        if isinstance(fixed_version, str) and version_id is not None and semver(version_id) != semver(fixed_version):
            self.note((*path, "envelopemetadata", "dataversion", "value"), f"dataversion '{fixed_version}' is taken "
                      f"(the schema version is '{version_id}')", kind="derived")
        schema_format = value.get("dataschemaformat") or version.get("format") or target.get("format")
        if "schema" not in version:
            self.note(version_path, "the schema version holds no embedded schema (a schemaurl or schemabase64); "
                      "the payload is left unconstrained")
            event["data"] = {}
            return
        self._schema(event, version["schema"], (*version_path, "schema"), schema_format, inner, (*path, key))

    def _inline(self, event: dict[str, Any], value: dict[str, Any], path: tuple[str | int, ...], fixed_version: Any) -> None:
        event["dataversion"] = semver(fixed_version) if isinstance(fixed_version, str) else "1.0.0"
        self._schema(event, value["dataschema"], (*path, "dataschema"), value.get("dataschemaformat"), "", (*path, "dataschema"))

    def _schema(self, event: dict[str, Any], schema: Any, at: tuple[str | int, ...], schema_format: Any, inner: str,
                where: tuple[str | int, ...]) -> None:
        if not isinstance(schema_format, str) or not schema_format.lower().startswith("jsonschema"):
            shown = schema_format if isinstance(schema_format, str) else "an unnamed format"
            self.note(where, f"the payload schema is {shown}, not JSON Schema; not carried (the payload is left "
                      "unconstrained)")
            event["data"] = {}
            return
        if not isinstance(schema, (dict, bool)):
            self.note(at, "the JSON Schema is neither an object nor a boolean; the payload is left unconstrained")
            event["data"] = {}
            return
        uri = self.embedded.get(at)
        if uri is None:
            # A file URI beside the document (registered, never read from disk): the
            # schema's relative references resolve as from the document's folder.
            uri = self.document.path.parent.as_uri() + f"/{self.document.path.name}.schema-{len(self.embedded)}"
            self.embedded[at] = uri
            self.refs.add(_Embedded(self.document, at, schema, uri))
        if inner:
            name = self.schemas.shared_ref("#" + inner, uri + "#")
            event["data"] = {"$ref": f"#/schemas/{name}"} if name is not None else {}
            return
        event["data"] = self.schemas.convert(schema, uri + "#")

    # -- endpoints ---------------------------------------------------------------

    def _channels(self, root: dict[str, Any], groups: dict[str, Any]) -> dict[str, Any]:
        endpoints = root.get("endpoints")
        if not isinstance(endpoints, dict):
            return {}
        channels: dict[str, Any] = {}
        every = {f"#/messagegroups/{group}" for group in groups}
        for endpoint_id, endpoint in endpoints.items():
            path = ("endpoints", endpoint_id)
            if not isinstance(endpoint, dict):
                self.note(path, "an endpoint must be an object; left out")
                continue
            name = endpoint.get("channel") if isinstance(endpoint.get("channel"), str) and endpoint["channel"] else endpoint_id
            if name in channels:
                continue  # the other role of the same channel (producer and consumer endpoints of one queue)
            channel = self._channel(endpoint, path)
            if channel is None:
                continue
            channels[str(name)] = channel
            referenced = endpoint.get("messagegroups")
            named = {reference for reference in referenced if isinstance(reference, str)} if isinstance(referenced, list) else set()
            if named and named != every:
                self.note((*path, "messagegroups"), "this endpoint carries only some of the document's message groups; "
                          "in the catalog every event travels on every channel (the catalog's services would say "
                          "which; xRegistry has none)")
        return channels

    def _channel(self, endpoint: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any] | None:
        protocol = str(endpoint.get("protocol", "")).upper()
        options = _dict(endpoint.get("protocoloptions"))
        uris = [entry.get("uri", entry.get("url")) for entry in options.get("endpoints", []) if isinstance(entry, dict)] \
            if isinstance(options.get("endpoints"), list) else []
        uri = next((item for item in uris if isinstance(item, str)), None)
        bindings: dict[str, Any] = {}
        carried: set[str] = {"endpoints"}
        if protocol == "KAFKA":
            kind, address = "kafka", options.get("topic")
            carried.add("topic")
            match = _PLACEHOLDER.match(str(options.get("key", "")))
            if match:
                bindings["key"] = match.group(1)
                carried.add("key")
        elif protocol.startswith("AMQP"):
            kind, address = "amqp", options.get("node")
            carried.add("node")
            if not address and uri:
                address = urlsplit(uri).path.lstrip("/") or None
        elif protocol.startswith("MQTT"):
            kind, address = "mqtt", options.get("topic") or options.get("topicfilter")
            carried.update(("topic", "topicfilter"))
            for key in ("qos", "retain"):
                if key in options:
                    bindings[key] = options[key]
                    carried.add(key)
        elif protocol.startswith("HTTP"):
            kind = "http"
            address = urlsplit(uri).path or uri if uri else None
        else:
            self.note((*path, "protocol"), f"protocol '{endpoint.get('protocol')}': a catalog channel is kafka, amqp, "
                      "mqtt or http; not carried")
            return None
        if not isinstance(address, str) or not address:
            self.note(path, "the endpoint names no topic, node or address; not carried")
            return None
        for key in options:
            if key not in carried and key != "deployed":
                self.note((*path, "protocoloptions", key), f"protocol option '{key}' is not carried")
        if uri is not None:
            self.note((*path, "protocoloptions", "endpoints"), f"the endpoint URI '{uri}' is not carried "
                      + ("(the path is the channel's address)" if kind == "http" else "(the broker is not the catalog's)"))
        channel: dict[str, Any] = {"protocol": kind, "address": address}
        description = _text(endpoint.get("description"))
        if description:
            channel["description"] = description
        if bindings:
            channel["bindings"] = bindings
        return channel


def _get(value: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _version_order(version_id: str) -> tuple[Any, ...]:
    numbers = re.findall(r"\d+", version_id)
    return (tuple(int(n) for n in numbers), version_id)


def _merge_copies(shared: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """One shared schema where each version's schema brought its own copy
    (``Address``, ``Address2``, ... of the same content): the copies are
    replaced by the first, references rewritten. Until nothing changes, so
    copies that refer to copies (recursive schemas) merge too."""
    while True:
        renames: dict[str, str] = {}
        for name, schema in shared.items():
            base = re.sub(r"\d+$", "", name)
            if base != name and base in shared and base not in renames \
                    and _renamed(schema, {name: base}) == _renamed(shared[base], {name: base}):
                renames[name] = base
        if not renames:
            return shared
        shared = {name: _renamed(schema, renames) for name, schema in shared.items() if name not in renames}
        for event in events:
            if "data" in event:
                event["data"] = _renamed(event["data"], renames)


def _renamed(value: Any, renames: dict[str, str]) -> Any:
    if isinstance(value, dict):
        result = {}
        for key, child in value.items():
            if key == "$ref" and isinstance(child, str) and child.startswith("#/schemas/") and child[10:] in renames:
                result[key] = "#/schemas/" + renames[child[10:]]
            else:
                result[key] = _renamed(child, renames)
        return result
    if isinstance(value, list):
        return [_renamed(child, renames) for child in value]
    return value
