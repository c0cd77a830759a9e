"""Diagnostics are data: a value per finding, formatted only by the CLI.

Every diagnostic carries a stable rule id (see ``shared/rules.md``), a severity,
the location of the YAML node that caused it and a message that says how to fix
it, with a concrete suggestion where one exists.
"""

from __future__ import annotations

import enum
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


class Severity(enum.IntEnum):
    """Ordered so that ``max()`` gives the worst one."""

    WARNING = 1
    ERROR = 2

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, order=True)
class Location:
    """A place in a catalog file; line and column are 1-based."""

    file: str
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    rule: str
    severity: Severity
    message: str
    location: Location
    suggestion: str | None = None
    # Other places that belong to the same finding (e.g. the first definition
    # of a duplicate event).
    related: tuple[Location, ...] = field(default=())
    # Structured details for machine formats (json, sarif), e.g. the JSON
    # pointer of an invalid value in an event.
    extra: tuple[tuple[str, object], ...] = field(default=())

    def sort_key(self) -> tuple[str, int, int, str, str]:
        loc = self.location
        return (loc.file, loc.line, loc.column, self.rule, self.message)


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    unique = {(d.sort_key(), d.severity, d.suggestion, d.extra): d for d in diagnostics}
    return sorted(unique.values(), key=Diagnostic.sort_key)


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity is Severity.ERROR for d in diagnostics)


def summary(diagnostics: Sequence[Diagnostic], checked: int | None = None) -> str:
    """``3 errors, 1 warning in 2 files`` (or ``no problems in 4 files``)."""
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    return counted(errors, len(diagnostics) - errors, len({d.location.file for d in diagnostics}), checked)


def counted(errors: int, warnings: int, files: int, checked: int | None = None) -> str:
    """``summary`` from the counts (for diagnostics written as they come)."""
    if not errors and not warnings:
        return "no problems" if checked is None else f"no problems in {checked} file{'s' * (checked != 1)}"
    return (
        f"{errors} error{'s' * (errors != 1)}, "
        f"{warnings} warning{'s' * (warnings != 1)} "
        f"in {files} file{'s' * (files != 1)}"
    )


def _full_message(diagnostic: Diagnostic) -> str:
    if diagnostic.suggestion and diagnostic.suggestion not in diagnostic.message:
        return f"{diagnostic.message} (suggestion: {diagnostic.suggestion})"
    return diagnostic.message


# A value quoted in a message (a bad string of an event, an event id) is shown
# by a bounded prefix, an ellipsis and its length: a 1 MB string gives a line of
# a few hundred bytes, never a 1 MB one (issue 30). Quotes are those of JSON
# ("...") and of Python's repr ('...'); any message is bounded as a whole too.
QUOTED_LIMIT = 64
MESSAGE_LIMIT = 1024
_LONG_QUOTED = re.compile(
    rf'"(?:[^"\\\n]|\\.){{{QUOTED_LIMIT + 1},}}"|\'(?:[^\'\\\n]|\\.){{{QUOTED_LIMIT + 1},}}\''
)


def _short_quote(match: re.Match[str]) -> str:
    quoted = match.group()
    inner = quoted[1:-1]
    prefix = inner[:QUOTED_LIMIT]
    if prefix.endswith("\\") and not prefix.endswith("\\\\"):
        prefix = prefix[:-1]  # no escape cut in two
    return f"{quoted[0]}{prefix}...{quoted[0]} ({len(inner):,} characters)"


def bounded(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` with every quoted value longer than QUOTED_LIMIT shown as its
    prefix, ``...`` and its length, and at most ``limit`` characters in all."""
    if len(text) <= QUOTED_LIMIT:
        return text
    text = _LONG_QUOTED.sub(_short_quote, text)
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text):,} characters in all)"
    return text


# C0 and C1 control characters, DEL, and the bidirectional controls that
# reorder what a terminal shows (Trojan Source, CVE-2021-42574): shown
# escaped, so a catalog or an event cannot send escape sequences to the terminal.
_TERMINAL_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def terminal_text(text: str) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``, ``\\u202e``)."""
    return _TERMINAL_UNSAFE.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


def text_line(d: Diagnostic) -> str:
    """One diagnostic as ``file:line:col: severity RULE message``, safe for a terminal."""
    return terminal_text(f"{d.location}: {d.severity} {d.rule} {_full_message(d)}")


def format_text(diagnostics: Sequence[Diagnostic], checked: int | None = None) -> str:
    lines = [text_line(d) for d in diagnostics]
    lines.append(summary(diagnostics, checked))
    return "\n".join(lines) + "\n"


def format_json(diagnostics: Sequence[Diagnostic], checked: int | None = None) -> str:
    items = [
        {
            "file": d.location.file,
            "line": d.location.line,
            "column": d.location.column,
            "severity": str(d.severity),
            "rule": d.rule,
            "message": d.message,
            "suggestion": d.suggestion,
            "related": [
                {"file": r.file, "line": r.line, "column": r.column} for r in d.related
            ],
            **dict(d.extra),
        }
        for d in diagnostics
    ]
    return json.dumps({"diagnostics": items, "summary": summary(diagnostics, checked)}, indent=2) + "\n"


def _github_escape(text: str, *, property_value: bool = False) -> str:
    """Workflow command escaping, as in @actions/core's command.ts (``%``,
    CR and LF; in a property also ``:`` and ``,``), and then every other
    control and bidirectional character shown as an escape (``terminal_text``):
    the log is read in a terminal-like viewer too (issue 30: ESC and U+202E
    went through raw)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return terminal_text(text)


def github_line(d: Diagnostic) -> str:
    """One diagnostic as a GitHub Actions workflow command (``::error file=...::message``)."""
    level = "error" if d.severity is Severity.ERROR else "warning"
    props = ",".join(
        [
            f"file={_github_escape(d.location.file, property_value=True)}",
            f"line={d.location.line}",
            f"col={d.location.column}",
            f"title={_github_escape(d.rule, property_value=True)}",
        ]
    )
    return f"::{level} {props}::{_github_escape(_full_message(d))}"


def format_github(diagnostics: Sequence[Diagnostic], checked: int | None = None) -> str:
    lines = [github_line(d) for d in diagnostics]
    lines.append(summary(diagnostics, checked))
    return "\n".join(lines) + "\n"


def format_sarif(diagnostics: Sequence[Diagnostic], rule_docs: dict[str, str], version: str) -> str:
    """SARIF 2.1.0, as GitHub code scanning reads it."""
    rule_ids = sorted({d.rule for d in diagnostics} | set(rule_docs))
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    rules = [
        {
            "id": rule_id,
            "name": rule_id,
            "shortDescription": {"text": rule_docs.get(rule_id, rule_id)},
            "helpUri": "https://github.com/evcat/evcat/blob/main/README.md#rules",
        }
        for rule_id in rule_ids
    ]
    results = []
    for d in diagnostics:
        result = {
            "ruleId": d.rule,
            "ruleIndex": index[d.rule],
            "level": "error" if d.severity is Severity.ERROR else "warning",
            "message": {"text": _full_message(d)},
            "locations": [_sarif_location(d.location)],
        }
        if d.extra:
            result["properties"] = dict(d.extra)
        if d.related:
            result["relatedLocations"] = [
                {"id": i, **_sarif_location(r)} for i, r in enumerate(d.related)
            ]
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "evcat",
                        "version": version,
                        "informationUri": "https://github.com/evcat/evcat",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


def _sarif_location(location: Location) -> dict[str, object]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": location.file.replace("\\", "/")},
            "region": {"startLine": location.line, "startColumn": location.column},
        }
    }


def display_path(path: str) -> str:
    relative = os.path.relpath(path)
    shown = path if relative.startswith("..") else relative
    return shown.replace(os.sep, "/")


# The one codec of a Diagnostic as plain data (cache entries, the memo of checks).
def diagnostic_to_data(diagnostic: Diagnostic) -> tuple[Any, ...]:
    """Plain data for a cache entry (``extra`` is kept as ``repr`` text only
    by the callers that need it; here it is left out)."""
    location = diagnostic.location
    return (
        diagnostic.rule, int(diagnostic.severity), diagnostic.message,
        (location.file, location.line, location.column), diagnostic.suggestion,
        tuple((r.file, r.line, r.column) for r in diagnostic.related),
    )


def diagnostic_from_data(data: Any, file: str | None = None) -> Diagnostic:
    """The Diagnostic ``diagnostic_to_data`` made (``file``: the one it belongs to,
    when the entry may have been made for a file of the same content elsewhere).
    Raises TypeError or ValueError for data of another shape."""
    rule, severity, message, (where, line, column), suggestion, related = data
    if not isinstance(rule, str) or not isinstance(message, str):
        raise TypeError("not a diagnostic")
    return Diagnostic(
        rule, Severity(severity), message, Location(file if file is not None else where, line, column), suggestion,
        tuple(Location(*r) for r in related),
    )
