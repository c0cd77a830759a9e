"""The CloudEvents vocabulary: attribute names, the type system and the grammars.

The one home of what CloudEvents 1.0.2 itself fixes. Every renderer, the
instance checker, ``evcat validate``'s fast path and lint map from here; the
generated runtime (``generator/runtime/_cloudevents.py``) carries its own
copies of the grammars (it needs only pydantic), and a test checks both
against the same corpus (tests/test_vocabulary.py).

Sources: CloudEvents 1.0.2 §2 (naming, ``[a-z0-9]`` and 20 characters),
§3.1 (required and optional context attributes), §3.2 (type system),
JSON event format §2-3, the sequence, dataref and NL GOV ``dataversion``
extensions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

SPECVERSION = "1.0"

# §3.1.1 REQUIRED attributes, all of type String (or URI-reference for source).
REQUIRED_CORE: tuple[str, ...] = ("id", "source", "specversion", "type")
# §3.1.2 OPTIONAL attributes.
OPTIONAL_CORE: tuple[str, ...] = ("datacontenttype", "dataschema", "subject", "time")
# JSON format §3.1: the event's data, as JSON or as base64.
DATA_MEMBERS: tuple[str, ...] = ("data", "data_base64")
# Documented extensions the catalog format knows (dataref, sequence, NL GOV dataversion).
KNOWN_EXTENSIONS: tuple[str, ...] = ("dataref", "sequence", "sequencetype", "dataversion")
# Names an extension may not reuse (rules.md CE-ATTR-RESERVED).
RESERVED = frozenset(REQUIRED_CORE + OPTIONAL_CORE + DATA_MEMBERS + KNOWN_EXTENSIONS)

# §2 Naming: lower-case ASCII letters and digits; SHOULD be at most 20 characters.
ATTRIBUTE_NAME = re.compile(r"^[a-z0-9]+$")
ATTRIBUTE_NAME_SOFT_MAX = 20

# How deeply a JSON event may nest (containers, data included): evcat's own
# bound, the same for `evcat validate` and the generated runtime (a test
# compares); no JSON Schema can say it.
MAX_DEPTH = 128

# §3.2 Integer: a signed 32-bit integer.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# §3.2 String: no control characters (U+0000-U+001F, U+007F-U+009F),
# noncharacters (U+FDD0-U+FDEF, U+xFFFE/U+xFFFF of every plane) or lone
# surrogates. Compiled with the same text in the runtime (a test compares).
_ASTRAL_NONCHARACTERS = "".join(chr(plane * 0x10000 + low) for plane in range(1, 17) for low in (0xFFFE, 0xFFFF))
# As regex text every engine reads alike: \\uXXXX escapes for the BMP (ECMA-262,
# Python, Rust), the astral noncharacters as literal characters.
BAD_STRING_CHARS = "[\\u0000-\\u001f\\u007f-\\u009f\\ufdd0-\\ufdef\\ufffe\\uffff" + _ASTRAL_NONCHARACTERS + "]"
BAD_STRING = re.compile(BAD_STRING_CHARS[:-1] + "\\ud800-\\udfff]")  # and lone surrogates (Python strings can hold them)
# JSON Schema for "holds none of them" (an unanchored search: no ``$`` involved).
NO_BAD_CHARS: dict[str, Any] = {"not": {"pattern": BAD_STRING_CHARS}}

# RFC 2046 / RFC 9110 §8.3.1: type "/" subtype *( OWS ";" OWS parameter ).
TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
# In JSON Schema patterns ``$`` is the end of the input (ECMA-262); Python's
# ``$`` also matches before a final newline, so schemas pair each anchored
# pattern with ``not: {pattern: <control characters>}`` (``NO_BAD_CHARS``)
# and evcat's own checks use ``\Z``.
MEDIA_TYPE_SCHEMA_PATTERN = rf'^{TOKEN}/{TOKEN}(?:[ \t]*;[ \t]*{TOKEN}=(?:{TOKEN}|"(?:[^"\\]|\\.)*"))*$'
MEDIA_TYPE = re.compile(MEDIA_TYPE_SCHEMA_PATTERN[:-1] + r"\Z")

# RFC 3339 §5.6 date-time (seconds and an offset required; 'T'/'Z' in either case).
# Leap seconds (:60) and the year 0000 are left out: JSON Schema validators
# disagree on them (the ``jsonschema`` package rejects both, jsonschema-rs
# accepts both), and one verdict matters more (contract §4.1).
_YEAR = r"(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
RFC3339_SCHEMA_PATTERN = (
    rf"^{_YEAR}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
)
RFC3339 = re.compile(RFC3339_SCHEMA_PATTERN[:-1] + r"\Z")
# Het Normo ID06: yyyy-mm-ddThh:mm:ss.ffffffZ, in UTC.
NORMO_TIME_SCHEMA_PATTERN = rf"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}}T[0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}\.[0-9]{{6}}Z$"
NORMO_TIME = re.compile(NORMO_TIME_SCHEMA_PATTERN[:-1] + r"\Z")

# RFC 3986 appendix A as a regular expression (ECMA-262 and Python alike;
# anchored with ``$``, so schemas pair it with ``NO_BAD_CHARS``).
_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = r"%[0-9A-Fa-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_SCHEME = r"[A-Za-z][A-Za-z0-9+\-.]*"
_USERINFO = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*"
_IP_LITERAL = r"\[[0-9A-Fa-f:.vV]+\]"
_REG_NAME = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*"
_AUTHORITY = rf"(?:{_USERINFO}@)?(?:{_IP_LITERAL}|{_REG_NAME})(?::[0-9]*)?"
_QUERY = rf"(?:{_PCHAR}|[/?])*"
_HIER = rf"(?://{_AUTHORITY}(?:/{_PCHAR}*)*|/?(?:{_PCHAR}+(?:/{_PCHAR}*)*)?)"
_RELATIVE = (
    rf"(?://{_AUTHORITY}(?:/{_PCHAR}*)*|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?"
    rf"|(?:(?:[{_UNRESERVED}{_SUB_DELIMS}@]|{_PCT})+(?:/{_PCHAR}*)*)?)"
)
URI_SCHEMA_PATTERN = rf"^{_SCHEME}:{_HIER}(?:\?{_QUERY})?(?:#{_QUERY})?$"
URI_REFERENCE_SCHEMA_PATTERN = rf"^(?:{_SCHEME}:{_HIER}|{_RELATIVE})(?:\?{_QUERY})?(?:#{_QUERY})?$"
URI = re.compile(URI_SCHEMA_PATTERN[:-1] + r"\Z")
URI_REFERENCE = re.compile(URI_REFERENCE_SCHEMA_PATTERN[:-1] + r"\Z")

# RFC 3339 full-date (JSON Schema "date").
FULL_DATE_SCHEMA_PATTERN = rf"^{_YEAR}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$"

# JSON Schema "uuid" (RFC 4122 §3, hex digits in either case; "email" is
# below, beside "hostname"): the forms every format checker accepts, so that a
# pattern beside the format gives one verdict (contract §4.1; for e-mail,
# quoted local parts and address literals are left out).
UUID_SCHEMA_PATTERN = r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"

# JSON Schema "time", "ipv4", "hostname" and "duration" (2020-12 §7.3.1-7.3.5),
# again the forms that every format checker accepts (jsonschema's and
# jsonschema-rs's, tests/test_formats.py), so the pattern beside the format
# decides alike everywhere (contract §4.1). Patterns without lookaround: the
# generated runtime's fast path reads them with Rust's regex crate too.
# RFC 3339 §5.6 full-time: no leap second (jsonschema refuses 23:59:60Z, and
# whether :60 is one depends on the offset), offset hours 00-23.
TIME_SCHEMA_PATTERN = (
    r"^(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
)
# RFC 2673 §3.2 dotted-quad: decimal octets 0-255 without leading zeros.
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
IPV4_SCHEMA_PATTERN = rf"^(?:{_OCTET}\.){{3}}{_OCTET}$"
# RFC 1123 §2.1 host names: labels of letters, digits and inner hyphens, 1-63
# long, no "--" in the third and fourth place (RFC 5891 §4.2.3.1, which
# jsonschema-rs holds), no final dot; at most 253 characters in all
# (HOSTNAME_MAX_LENGTH, beside the pattern: a length needs no lookahead).
_ALNUM, _LDH = "[A-Za-z0-9]", "[A-Za-z0-9-]"
_HOST_LABEL = (  # one way to match each label (PAY-PATTERN-BACKTRACK): by its length and third character
    rf"{_ALNUM}(?:{_ALNUM}|{_LDH}(?:{_ALNUM}(?:{_LDH}{{0,59}}{_ALNUM})?|-{_ALNUM}(?:{_LDH}{{0,58}}{_ALNUM})?))?"
)
HOSTNAME_SCHEMA_PATTERN = rf"^{_HOST_LABEL}(?:\.{_HOST_LABEL})*$"
HOSTNAME_MAX_LENGTH = 253
# "email" (RFC 5321 §4.1.2 Mailbox, §4.5.3.1 sizes): a dot-atom local part of
# at most 64 characters, "@", a host name of two labels or more, at most 253
# characters (the runtime's fast path leaves e-mail addresses to Python, which
# checks the sizes beside the pattern).
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
EMAIL_LOCAL_MAX_LENGTH = 64
EMAIL_SCHEMA_PATTERN = rf"^{_ATEXT}+(?:\.{_ATEXT}+)*@{_HOST_LABEL}(?:\.{_HOST_LABEL})+$"
# The sizes, as patterns a too long part matches (no lookaround: beside the
# pattern above, under "not"): a local part of 65 characters, a domain of 254.
EMAIL_TOO_LONG_PATTERNS = (f"^[^@]{{{EMAIL_LOCAL_MAX_LENGTH + 1}}}", f"@[^@]{{{HOSTNAME_MAX_LENGTH + 1}}}")
# RFC 3339 appendix A duration, as its ABNF says: P, then a date part
# (Y[M[D]], M[D] or D) with an optional time part, or a time part, or weeks;
# a time part is T with H[M[S]], M[S] or S. Whole numbers only.
_DUR_TIME = r"T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"
_DUR_DATE = r"(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)"
DURATION_SCHEMA_PATTERN = rf"^P(?:{_DUR_DATE}(?:{_DUR_TIME})?|{_DUR_TIME}|[0-9]+W)$"
# "ipv6" has no pattern here: what Python's ipaddress.IPv6Address reads
# without a zone index ("%eth0") is what both format checkers accept
# (tests/test_formats.py), and the runtime reads it so; a pattern for it can
# match an address in several ways (PAY-PATTERN-BACKTRACK).
# RFC 6901 §3 JSON Pointer.
JSON_POINTER_SCHEMA_PATTERN = "^(?:/(?:[^~/]|~[01])*)*$"
# "idn-email" (RFC 6531) is read as "email" is: jsonschema's checker asks only
# for an "@", jsonschema-rs's for an IDNA domain; the addresses both accept
# and evcat can tell without IDNA tables are the ASCII ones.
IDN_EMAIL_SCHEMA_PATTERN = EMAIL_SCHEMA_PATTERN
# "idn-hostname" (RFC 5890) is read as "hostname" for the same reason
# (jsonschema's checker is the idna package, jsonschema-rs has its own tables:
# they disagree on upper-case non-ASCII labels and a final dot).
IDN_HOSTNAME_SCHEMA_PATTERN = HOSTNAME_SCHEMA_PATTERN
# RFC 3987 IRI and IRI-reference: RFC 3986's grammar above with ucschar in
# iunreserved and iprivate in iquery, as far as both checkers read it:
# ucschar of the BMP only (jsonschema's grammar, rfc3987-syntax, has no
# astral planes) and no IP literal as host (it reads only full-length IPv6
# addresses: "[::1]" is refused). No control character, noncharacter or
# surrogate can match.
_UCSCHAR = "\\u00a0-\\ud7ff\\uf900-\\ufdcf\\ufdf0-\\uffef"
_IPRIVATE = "\\ue000-\\uf8ff"
_IUNRESERVED = rf"{_UNRESERVED}{_UCSCHAR}"
_IPCHAR = rf"(?:[{_IUNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_IAUTHORITY = rf"(?:(?:[{_IUNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?(?:[{_IUNRESERVED}{_SUB_DELIMS}]|{_PCT})*(?::[0-9]*)?"
_IHIER = rf"(?://{_IAUTHORITY}(?:/{_IPCHAR}*)*|/?(?:{_IPCHAR}+(?:/{_IPCHAR}*)*)?)"
_IRELATIVE = (
    rf"(?://{_IAUTHORITY}(?:/{_IPCHAR}*)*|/(?:{_IPCHAR}+(?:/{_IPCHAR}*)*)?"
    rf"|(?:(?:[{_IUNRESERVED}{_SUB_DELIMS}@]|{_PCT})+(?:/{_IPCHAR}*)*)?)"
)
_IQUERY_FRAGMENT = rf"(?:\?(?:{_IPCHAR}|[/?{_IPRIVATE}])*)?(?:#(?:{_IPCHAR}|[/?])*)?"
IRI_SCHEMA_PATTERN = rf"^{_SCHEME}:{_IHIER}{_IQUERY_FRAGMENT}$"
IRI_REFERENCE_SCHEMA_PATTERN = rf"^(?:{_SCHEME}:{_IHIER}|{_IRELATIVE}){_IQUERY_FRAGMENT}$"
# RFC 6570 URI Template, levels 1-4, as both checkers read it: literals as
# the RFC has them (no space, '"', "'", '<', '>', '\\', '^', '`', '{', '|', '}';
# jsonschema's uri-template package lets those through), no operator the RFC
# reserves (= , ! @ |; jsonschema's refuses them), variable names of letters,
# digits and '_' joined by '.' (no %-encoding: jsonschema's refuses it), a
# prefix of 1-999 (jsonschema's reads at most three digits).
_TEMPLATE_LITERAL = rf"(?:[!#$&()*+,\-./0-9:;=?@A-Z\[\]_a-z~{_UCSCHAR}{_IPRIVATE}]|{_PCT})"
_TEMPLATE_VARSPEC = r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*(?::[1-9][0-9]{0,2}|\*)?"
URI_TEMPLATE_SCHEMA_PATTERN = (
    rf"^(?:{_TEMPLATE_LITERAL}|\{{[+#./;?&]?{_TEMPLATE_VARSPEC}(?:,{_TEMPLATE_VARSPEC})*\}})*$"
)
# Relative JSON Pointer (draft-handrews-relative-json-pointer-01 §3): a
# non-negative integer, then "#" or a JSON pointer. jsonschema's checker
# refuses a digit after a "0" ("100", "101"; jsonschema-rs accepts them),
# so the integer's zeros stand at its end only.
RELATIVE_JSON_POINTER_SCHEMA_PATTERN = "^(?:0|[1-9]+0?)(?:#|(?:/(?:[^~/]|~[01])*)*)$"
# "regex" has no grammar: each checker compiles the value in its own dialect
# (Python's re, ECMA-262) and a regular expression's syntax nests; evcat
# refuses the format in a catalog (PAY-FORMAT-VERDICT).

# The sequence extension: with sequencetype Integer, a string-encoded int32.
INTEGER_STRING = re.compile(r"^[+-]?[0-9]+\Z")
# The same with the int32 range spelled out (for JSON Schema, which cannot compare text as numbers).
_UP_TO_2147483647 = (
    "(?:[0-9]{1,9}|1[0-9]{9}|20[0-9]{8}|21[0-3][0-9]{7}|214[0-6][0-9]{6}|2147[0-3][0-9]{5}"
    "|21474[0-7][0-9]{4}|214748[0-2][0-9]{3}|2147483[0-5][0-9]{2}|21474836[0-3][0-9]|214748364[0-7])"
)
INT32_STRING_SCHEMA_PATTERN = rf"^(?:\+?0*{_UP_TO_2147483647}|-0*(?:{_UP_TO_2147483647}|2147483648))$"


# HTTP protocol binding §3.1.3.2: a ce- header value is the attribute's string
# form (§3.1.3.3: booleans as true/false), with space, '"', '%' and everything
# outside printable ASCII percent-encoded. (The runtime has its own copy.)
_HEADER_SAFE = "".join(chr(code) for code in range(0x21, 0x7F) if chr(code) not in '"%')
_HEADER_PLAIN = re.compile(f"[{re.escape(_HEADER_SAFE)}]*")  # only _HEADER_SAFE's characters: ``quote`` leaves the text as it is


def header_value(value: Any) -> str:
    """The ``ce-`` header value of an attribute value (every output that writes one asks here)."""
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return text if _HEADER_PLAIN.fullmatch(text) else quote(text, safe=_HEADER_SAFE)


@dataclass(frozen=True)
class CEType:
    """One type of the CloudEvents type system (§3.2) and how each output maps it."""

    name: str
    json_schema: dict[str, Any]  # in the JSON format's representation (JSON format §2.2)
    python: str  # the annotation in generated code (names from the runtime)


BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"

TYPES: dict[str, CEType] = {
    "Boolean": CEType("Boolean", {"type": "boolean"}, "bool"),
    "Integer": CEType("Integer", {"type": "integer", "minimum": INT32_MIN, "maximum": INT32_MAX}, "Int32"),
    "String": CEType("String", {"type": "string"}, "String"),
    "Binary": CEType("Binary", {"type": "string", "contentEncoding": "base64", "pattern": BASE64_PATTERN}, "Base64Binary"),
    "URI": CEType("URI", {"type": "string", "format": "uri"}, "Uri"),
    "URI-reference": CEType("URI-reference", {"type": "string", "format": "uri-reference"}, "UriReference"),
    "Timestamp": CEType("Timestamp", {"type": "string", "format": "date-time"}, "Timestamp"),
}
TYPE_NAMES: tuple[str, ...] = tuple(TYPES)


def is_media_type(value: str) -> bool:
    return bool(MEDIA_TYPE.match(value))


def is_json_media_type(value: str) -> bool:
    essence = value.split(";", 1)[0].strip().lower()
    return essence == "application/json" or essence.endswith("+json")


def is_rfc3339(value: str) -> bool:
    """RFC 3339 §5.6 date-time, including the calendar (no 30 February)."""
    if not RFC3339.match(value):
        return False
    from calendar import monthrange

    year, month, day = int(value[0:4]), int(value[5:7]), int(value[8:10])
    return day <= monthrange(year, month)[1]


def has_bad_chars(value: str) -> bool:
    return BAD_STRING.search(value) is not None
