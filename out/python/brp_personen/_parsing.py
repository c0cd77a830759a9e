"""``parse_event`` and ``parse_batch``: the fast path first, the models' checks for the rest.

Part of evcat's runtime (``generator/runtime/``): copied verbatim into every
generated package.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ._fastpath import parse_fast
from ._models import CloudEvent, Events, event_class
from ._reading import EventError, check_value, read_json

__all__ = [
    "check_size",
    "compact_size",
    "parse_batch",
    "parse_event",
    "validated",
]


def validated(cls: type[CloudEvent], event: Mapping[str, Any]) -> CloudEvent:
    try:
        return cls.model_validate(event, strict=True)
    except RecursionError as error:
        raise EventError("the event is nested too deeply") from error


def parse_event(raw: str | bytes | Mapping[str, Any], events: Events) -> CloudEvent:
    """A structured-mode event (JSON text or a mapping) as the matching event class.

    Raises ``EventError`` for JSON that is not an event of this catalog and
    pydantic's ``ValidationError`` (naming the catalog's field names) for
    invalid content.
    """
    if isinstance(raw, (bytes, bytearray, str)):
        data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
        event = parse_fast(data, events)
        if event is None:
            event = _parse_careful(data, events)
        limit = type(event).max_size
        if limit is not None and len(data) > limit[0]:
            check_size(type(event), len(data))
        return event
    event = _parse_careful(raw, events)
    if type(event).max_size is not None:
        check_size(type(event), compact_size(raw))
    return event


def check_size(cls: type[CloudEvent], size: int) -> None:
    """``EventError`` for an event of ``cls`` of ``size`` bytes over the
    profile's limit (``CloudEvent.max_size``; the words evcat validate uses)."""
    limit = cls.max_size
    if limit is not None and size > limit[0]:
        raise EventError(f"the event is {size} bytes; {limit[1]}")


def compact_size(event: Mapping[str, Any]) -> int:
    """The bytes of ``event`` as compact UTF-8 JSON: the size of an event that
    arrived as a mapping (a batch item, a binary-mode message)."""
    text = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", "surrogatepass"))


def _parse_careful(
    raw: bytes | bytearray | Mapping[str, Any], events: Events
) -> CloudEvent:
    """``parse_event`` by the Python checks alone: what the fast path leaves here."""
    if isinstance(raw, (bytes, bytearray)):
        event = read_json(raw)
    else:
        event = raw
        check_value(event)
    if not isinstance(event, Mapping):
        raise EventError("an event must be a JSON object")
    mapping = cast("Mapping[str, Any]", event)
    return validated(event_class(mapping, events), mapping)


def parse_batch(raw: str | bytes | list[Any], events: Events) -> list[CloudEvent]:
    """A JSON batch (``application/cloudevents-batch+json``): an array of events."""
    batch = read_json(raw) if isinstance(raw, (str, bytes, bytearray)) else raw
    if not isinstance(batch, list):
        raise EventError("a batch must be a JSON array")
    return [parse_event(item, events) for item in cast("Sequence[Any]", batch)]
