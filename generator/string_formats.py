"""Value formats, checked by jsonschema-rs's format validators (RFC 3986, RFC 3339).

One compiled validator per format, reused: no hand-written URI parser.
"""

from __future__ import annotations

import re

import jsonschema_rs

from .vocabulary import URI, URI_REFERENCE, is_json_media_type, is_media_type, is_rfc3339  # noqa: F401  (re-exported)

_URI = jsonschema_rs.Draft202012Validator({"format": "uri"}, validate_formats=True)
_URI_REFERENCE = jsonschema_rs.Draft202012Validator({"format": "uri-reference"}, validate_formats=True)

SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")


def is_uri(value: str) -> bool:
    """An absolute URI (RFC 3986 §4.3): the vocabulary's grammar, and jsonschema-rs's format check."""
    return URI.match(value) is not None and _URI.is_valid(value)


def is_uri_reference(value: str) -> bool:
    return URI_REFERENCE.match(value) is not None and _URI_REFERENCE.is_valid(value)


def is_semver(value: str) -> bool:
    return bool(SEMVER.match(value))


def semver_key(value: str) -> tuple[int, int, int]:
    """Numeric ordering (1.10.0 after 1.9.0); non-semver sorts first."""
    match = SEMVER.match(value or "")
    if not match:
        return (-1, -1, -1)
    return (int(match[1]), int(match[2]), int(match[3]))


# npm semver ranges (catalog-format.md §9: a service's ``receives`` dataversion),
# as npm's `semver` package reads them (node-semver, its Python port; tests/test_services.py
# checks both on a set of ranges). Longer texts are not ranges anyone writes.
MAX_RANGE_LENGTH = 256


def is_npm_range(text: str) -> bool:
    """``>=1.0.0 <2.0.0``, ``^1.2``, ``1.x || 2.0.0 - 2.3.0`` and the like."""
    import nodesemver

    if len(text) > MAX_RANGE_LENGTH:
        return False
    try:
        return nodesemver.valid_range(text, loose=False) is not None
    except (ValueError, TypeError, AttributeError):
        return False


def in_npm_range(version: str, text: str) -> bool:
    """Is ``version`` (MAJOR.MINOR.PATCH) in the npm range ``text``? False for a
    text that is not a range."""
    import nodesemver

    if not is_npm_range(text) or not is_semver(version):
        return False
    try:
        return bool(nodesemver.satisfies(version, text, loose=False))
    except (ValueError, TypeError, AttributeError):
        return False
