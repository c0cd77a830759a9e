"""Rule overrides where they apply (catalog-format.md §9): the one home of
"the effective severity of rule R at node P".

A finding stands on a node of a catalog file: its YAML path (carried by its
``Location``, see ``loader.Document.loc``). The settings that apply to it,
nearest first, per rule id (the nearest setting *of that rule* wins):

1. ``x-evcat-rules`` on the nearest payload schema node that holds the
   finding (ancestor-or-self: an event's ``data`` or an entry of ``schemas``,
   at any depth, inside ``properties``, ``items``, ``$defs``, ``allOf``...);
2. the ``rules`` of the event the finding is in;
3. the file's ``rules``;
4. the rule's default severity.

Values are ``error | warning | off`` (YAML reads a bare ``off`` as false:
the same as ``"off"``). A fixed rule (``Rule.fixed``) keeps its severity:
``CAT-TYPE`` says so where an override tries (rules/catalog.py). Where the
settings are written is read by ``overrides.scopes`` (a module below the
model, which reads them too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic, Severity
from ..loader import Document, Path
from ..overrides import SETTINGS, rule_maps, scopes, setting_of

if TYPE_CHECKING:
    from ..model import EventType


def severity_of(setting: str, default: Severity) -> Severity | None:
    """The severity a setting gives (None: off)."""
    if setting == "off":
        return None
    return Severity[setting.upper()] if setting in SETTINGS else default


def override(rule_id: str, value: Any, path: Path) -> tuple[str, Path] | None:
    """The nearest setting of ``rule_id`` for a finding at ``path`` of a file
    whose data is ``value``, and the path where it is written; None: no
    override (fixed rules have none)."""
    from . import RULES

    rule = RULES.get(rule_id)
    if rule is None or rule.fixed:
        return None
    for where, settings in scopes(value, path):
        setting = setting_of(settings.get(rule_id))
        if setting is not None:
            return setting, where + (rule_id,)
    return None


def effective_severity(rule_id: str, document: Document | Any, path: Path = ()) -> Severity | None:
    """The severity of ``rule_id`` for a finding at ``path`` of ``document``
    (a Document or its data): the nearest override, else the rule's default.
    None: the rule is off there."""
    from . import RULES

    value = document.value if isinstance(document, Document) else document
    default = RULES[rule_id].severity
    found = override(rule_id, value, path)
    return default if found is None else severity_of(found[0], default)


def event_severity(rule_id: str, event: EventType) -> Severity | None:
    """The severity of ``rule_id`` for a finding on ``event`` itself (not
    inside its payload): its ``rules``, then its file's, then the default,
    from the model alone (for the renderers and the judges). None: off."""
    from . import RULES

    rule = RULES[rule_id]
    if not rule.fixed:
        setting = event.rule_setting(rule_id)
        if setting is not None:
            return severity_of(setting, rule.severity)
    return rule.severity


def apply(
    diagnostics: Iterable[Diagnostic], documents: Mapping[str, Document],
    annotated: Iterable[tuple[str, Path]] | None = None,
) -> list[Diagnostic]:
    """Every diagnostic at its effective severity (off: left out). A
    diagnostic without a YAML path (a YAML error) gets its file's rules only.
    ``annotated``: the payload schemas, as (file, path), that hold
    ``x-evcat-rules`` (``Built.annotated``); a file with none of them and no
    ``rules`` map is then passed over (None: every file is read)."""
    with_schema_overrides = None if annotated is None else {file for file, _ in annotated}
    plain: dict[str, bool] = {}  # by file: no override written in it
    result = []
    for diagnostic in diagnostics:
        location = diagnostic.location
        document = documents.get(location.file)
        if document is None:
            result.append(diagnostic)
            continue
        quiet = plain.get(location.file)
        if quiet is None:
            quiet = plain[location.file] = (
                with_schema_overrides is not None and location.file not in with_schema_overrides
                and next(rule_maps(document.value), None) is None
            )
        found = None if quiet else override(diagnostic.rule, document.value, location.path or ())
        if found is not None:
            severity = severity_of(found[0], diagnostic.severity)
            if severity is None:
                continue
            if severity is not diagnostic.severity:
                diagnostic = replace(diagnostic, severity=severity)
        result.append(diagnostic)
    return result
