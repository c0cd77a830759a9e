"""Value formats, checked by jsonschema-rs's format validators (RFC 3986, RFC 3339).

One compiled validator per format, reused: no hand-written URI parser.
"""

from __future__ import annotations

import re

import jsonschema_rs

_URI = jsonschema_rs.Draft202012Validator({"format": "uri"}, validate_formats=True)
_URI_REFERENCE = jsonschema_rs.Draft202012Validator({"format": "uri-reference"}, validate_formats=True)
_DATE_TIME = jsonschema_rs.Draft202012Validator({"format": "date-time"}, validate_formats=True)

# RFC 2046 / RFC 9110 §8.3.1: type "/" subtype *( OWS ";" OWS parameter ).
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_MEDIA_TYPE = re.compile(
    rf"^{_TOKEN}/{_TOKEN}(\s*;\s*{_TOKEN}=({_TOKEN}|\"([^\"\\\\]|\\\\.)*\"))*$"
)
SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
# Het Normo ID06: yyyy-mm-ddThh:mm:ss.ffffffZ, in UTC.
NORMO_TIME = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$")


def is_uri(value: str) -> bool:
    """An absolute URI (RFC 3986 §4.3)."""
    return _URI.is_valid(value)


def is_uri_reference(value: str) -> bool:
    return _URI_REFERENCE.is_valid(value)


def is_rfc3339(value: str) -> bool:
    return _DATE_TIME.is_valid(value)


def is_media_type(value: str) -> bool:
    return bool(_MEDIA_TYPE.match(value))


def is_json_media_type(value: str) -> bool:
    essence = value.split(";", 1)[0].strip().lower()
    return essence == "application/json" or essence.endswith("+json")


def is_semver(value: str) -> bool:
    return bool(SEMVER.match(value))


def semver_key(value: str) -> tuple[int, int, int]:
    """Numeric ordering (1.10.0 after 1.9.0); non-semver sorts first."""
    match = SEMVER.match(value or "")
    if not match:
        return (-1, -1, -1)
    return (int(match[1]), int(match[2]), int(match[3]))
