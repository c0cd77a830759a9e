"""Diagnostics are data: a value per finding, formatted only by the CLI.

Every diagnostic carries a stable rule id (see ``shared/rules.md``), a severity,
the location of the YAML node that caused it and a message that says how to fix
it, with a concrete suggestion where one exists.
"""

from __future__ import annotations

import enum
import gc
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
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
    # The YAML path of the node the finding stands on, where it is known
    # (``loader.Document.loc``): rule overrides apply by it (catalog-format.md
    # §9, ``rules.overrides``). Not part of the place: equal places compare equal.
    path: tuple[str | int, ...] | None = field(default=None, compare=False, repr=False)

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


def _json_item(d: Diagnostic) -> dict[str, Any]:
    return {
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


def format_json(diagnostics: Sequence[Diagnostic], checked: int | None = None) -> str:
    items = [_json_item(d) for d in diagnostics]
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


def _sarif_log(rules: list[dict[str, Any]], results: list[Any], version: str) -> dict[str, Any]:
    return {
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


def _sarif_rules(rule_ids: list[str], rule_docs: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "id": rule_id,
            "name": rule_id,
            "shortDescription": {"text": rule_docs.get(rule_id, rule_id)},
            "helpUri": "https://github.com/evcat/evcat/blob/main/README.md#rules",
        }
        for rule_id in rule_ids
    ]


def _sarif_result(d: Diagnostic, index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {"ruleId": d.rule}
    if d.rule in index:
        result["ruleIndex"] = index[d.rule]
    result.update({
        "level": "error" if d.severity is Severity.ERROR else "warning",
        "message": {"text": _full_message(d)},
        "locations": [_sarif_location(d.location)],
    })
    if d.extra:
        result["properties"] = dict(d.extra)
    if d.related:
        result["relatedLocations"] = [
            {"id": i, **_sarif_location(r)} for i, r in enumerate(d.related)
        ]
    return result


def format_sarif(diagnostics: Sequence[Diagnostic], rule_docs: dict[str, str], version: str) -> str:
    """SARIF 2.1.0, as GitHub code scanning reads it."""
    rule_ids = sorted({d.rule for d in diagnostics} | set(rule_docs))
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    results = [_sarif_result(d, index) for d in diagnostics]
    return json.dumps(_sarif_log(_sarif_rules(rule_ids, rule_docs), results, version), indent=2) + "\n"


_PLACE = "\x00evcat-items\x00"  # where the streamed list goes in a JSON document


def _around_list(document: dict[str, Any]) -> tuple[str, str, str]:
    """``json.dumps(document, indent=2)`` cut around the one list that holds
    ``[_PLACE]``: (text before its first item, the indentation of its items,
    text after its last item)."""
    text = json.dumps(document, indent=2) + "\n"
    token = json.dumps(_PLACE)
    at = text.index(token)
    line = text.rfind("\n", 0, at) + 1
    return text[:line], text[line:at], text[at + len(token):]


class DiagnosticWriter:
    """Writes diagnostics as they come, in any output format, byte for byte
    what the ``format_*`` function writes for all of them at once (JSON and
    SARIF documents included): a run with millions of findings never holds
    them (issue 30). ``finish`` writes the end and the summary."""

    def __init__(self, output_format: str, write: Callable[[str], object], rule_docs: dict[str, str] | None = None,
                 version: str = "") -> None:
        self.format, self.write = output_format, write
        self.errors = self.warnings = 0
        self.files: set[str] = set()
        self.rule_docs = rule_docs or {}
        self.index = {rule_id: i for i, rule_id in enumerate(sorted(self.rule_docs))}
        self.version = version
        self.started = False
        self.indent = ""

    def _document(self, items: list[Any], summary_text: str) -> dict[str, Any]:
        if self.format == "sarif":
            return _sarif_log(_sarif_rules(sorted(self.rule_docs), self.rule_docs), items, self.version)
        return {"diagnostics": items, "summary": summary_text}

    def add(self, diagnostics: Iterable[Diagnostic]) -> None:
        for d in diagnostics:
            if d.severity is Severity.ERROR:
                self.errors += 1
            else:
                self.warnings += 1
            self.files.add(d.location.file)
            if self.format == "text":
                self.write(text_line(d) + "\n")
            elif self.format == "github":
                self.write(github_line(d) + "\n")
            else:
                item = _sarif_result(d, self.index) if self.format == "sarif" else _json_item(d)
                if not self.started:
                    head, self.indent, _ = _around_list(self._document([_PLACE], ""))
                    self.write(head)
                else:
                    self.write(",\n")
                self.write(self.indent + json.dumps(item, indent=2).replace("\n", "\n" + self.indent))
            self.started = True
        if self.format in ("json", "sarif"):
            # json.dumps with indent builds its encoder from closures that refer
            # to each other: garbage only the cycle collector frees, which
            # `evcat validate` turns off while it checks (engine.workers.no_collection).
            gc.collect(0)

    def summary(self, checked: int | None = None) -> str:
        return counted(self.errors, self.warnings, len(self.files), checked)

    def finish(self, last_line: str | None = None, checked: int | None = None) -> None:
        """The end: for text and github the summary line (or ``last_line``),
        for JSON and SARIF the rest of the document."""
        if self.format in ("text", "github"):
            self.write((self.summary(checked) if last_line is None else last_line) + "\n")
            return
        if not self.started:
            self.write(json.dumps(self._document([], self.summary(checked)), indent=2) + "\n")
            return
        _, _, tail = _around_list(self._document([_PLACE], self.summary(checked)))
        self.write(tail)


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
        (location.file, location.line, location.column, location.path), diagnostic.suggestion,
        tuple((r.file, r.line, r.column) for r in diagnostic.related),
    )


def diagnostic_from_data(data: Any, file: str | None = None) -> Diagnostic:
    """The Diagnostic ``diagnostic_to_data`` made (``file``: the one it belongs to,
    when the entry may have been made for a file of the same content elsewhere).
    Raises TypeError or ValueError for data of another shape."""
    rule, severity, message, (where, line, column, *rest), suggestion, related = data
    if not isinstance(rule, str) or not isinstance(message, str):
        raise TypeError("not a diagnostic")
    path = tuple(rest[0]) if rest and rest[0] is not None else None
    return Diagnostic(
        rule, Severity(severity), message, Location(file if file is not None else where, line, column, path), suggestion,
        tuple(Location(*r) for r in related),
    )
