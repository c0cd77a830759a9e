"""CloudEvents 1.0.2 envelope, JSON format and HTTP binding: the runtime's public names.

Part of evcat's runtime (``generator/runtime/``): copied verbatim into every
generated package, and linted, type-checked and tested in place. Needs only
pydantic v2 at run time. The work is done by one module per concern, which
this module gathers (the generated modules import from here):

- ``_reading``: JSON text within bounds (``read_json``, ``EventError``, the
  depth rule every judge shares);
- ``_values``: the CloudEvents types (§3.2) and payload formats;
- ``_models``: the ``CloudEvent`` and ``Payload`` base models;
- ``_fastpath``: one pydantic-core validator per registry of event classes;
- ``_parsing``: ``parse_event`` and ``parse_batch`` (the fast path first);
- ``_http``: the HTTP protocol binding (structured, binary, batch).

Contract §4.1, one verdict: what this module accepts is what ``evcat
validate`` and the event's ``event.schema.json`` accept.

- Reading fills in nothing. ``model_validate`` (and so ``parse_event``,
  ``from_http`` and FastAPI request bodies) is the wire: the catalog's names
  only, JSON types as sent, every required attribute present. Defaults
  (``id``, ``time``, ``source``, ``datacontenttype``, payload ``default``s)
  apply only when a program constructs an event (``__init__``), where
  Python attribute names are accepted too.
- Nothing is lost: timestamps, binary values and URIs keep their text,
  explicit ``null``s inside ``data`` and undeclared properties of open
  payload schemas are kept and written back (``to_dict``).
- Bad input raises ``EventError`` or pydantic's ``ValidationError`` only.
"""

from __future__ import annotations

from pydantic import ValidationError

from ._http import (
    BATCH_CONTENT_TYPE,
    STRUCTURED_CONTENT_TYPE,
    from_http,
    from_http_batch,
    structured_from_binary,
    to_http,
    to_http_batch,
)
from ._models import CloudEvent, Payload, source_check
from ._parsing import parse_batch, parse_event
from ._reading import EventError, check_value, read_json
from ._uritemplate import TemplateError
from ._values import (
    Base64Binary,
    Date,
    DateTime,
    Duration,
    Email,
    Hostname,
    IdnEmail,
    IdnHostname,
    Int32,
    IntegerSequence,
    Ipv4,
    Ipv6,
    Iri,
    IriReference,
    JsonConst,
    JsonInt,
    JsonPointer,
    MediaType,
    NonEmptyString,
    NonEmptyUriReference,
    NormoTimestamp,
    Number,
    RelativeJsonPointer,
    SequenceString,
    String,
    Time,
    Timestamp,
    Uri,
    UriReference,
    UriTemplate,
    Uuid,
    new_id,
    now,
)

__all__ = [
    "BATCH_CONTENT_TYPE",
    "STRUCTURED_CONTENT_TYPE",
    "Base64Binary",
    "CloudEvent",
    "Date",
    "DateTime",
    "Duration",
    "Email",
    "EventError",
    "Hostname",
    "IdnEmail",
    "IdnHostname",
    "Int32",
    "IntegerSequence",
    "Ipv4",
    "Ipv6",
    "Iri",
    "IriReference",
    "JsonConst",
    "JsonInt",
    "JsonPointer",
    "MediaType",
    "NonEmptyString",
    "NonEmptyUriReference",
    "NormoTimestamp",
    "Number",
    "Payload",
    "RelativeJsonPointer",
    "SequenceString",
    "String",
    "TemplateError",
    "Time",
    "Timestamp",
    "Uri",
    "UriReference",
    "UriTemplate",
    "Uuid",
    "ValidationError",
    "check_value",
    "from_http",
    "from_http_batch",
    "new_id",
    "now",
    "parse_batch",
    "parse_event",
    "read_json",
    "source_check",
    "structured_from_binary",
    "to_http",
    "to_http_batch",
]
