"""Make imported catalog documents lint-clean (contract §10, §9).

Shared by every kind. The documents are linted in memory (``lint.check``, the
lint stage itself, on documents whose every value has a position of its
own, so each finding leads back to the value it is about), then:

- a rule that may be overridden and that a source name or shape breaks
  (PAY-CAMELCASE on a snake_case field, CE-TYPE-RDNS, ...) gets the §9
  override that keeps the source as it is, the nearest one that works:
  ``x-evcat-rules`` on the schema node, else ``rules`` on the event, else
  the file's ``rules`` (the last resort); the override is ``off``;
- a required key the source lacks (title, version, producer source, a
  dataversion) gets a derived value;
- what the format cannot hold (a keyword that is not JSON Schema 2020-12, an
  example that does not validate, a pattern no judge can run safely) is
  taken out;

each with a Note, and again until no error is left or nothing more can be
done (the errors left are returned; the command reports them).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, Severity
from ..loader import Document
from . import Imported, Note, Options
from .sources import pointer

Path = tuple[str | int, ...]
MAX_ROUNDS = 8
_SCHEMA_MAPS = frozenset(("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"))
_SCHEMA_LISTS = frozenset(("allOf", "anyOf", "oneOf", "prefixItems"))
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
_LEVELS = ("node", "event", "file")


@dataclass
class Settled:
    documents: dict[str, dict[str, Any]]
    notes: list[Note] = field(default_factory=list)
    # errors nothing could settle: (document name, path of the value, diagnostic)
    remaining: list[tuple[str, Path, Diagnostic]] = field(default_factory=list)


def settle(imported: Imported, options: Options | None = None) -> Settled:
    """``imported``'s documents made lint-clean where it can be done without
    changing what the source says; notes for each change (the source notes
    first, unchanged)."""
    options = options if options is not None else Options()
    documents = copy.deepcopy(imported.documents)
    notes = list(imported.notes)
    for name, document in documents.items():
        notes.extend(_fill_required(name, document, options))
    # (file, rule, anchor) -> (level, path of the node or event the override stands on)
    overrides: dict[tuple[str, str, Path], tuple[str, Path]] = {}
    remaining: list[tuple[str, Path, Diagnostic]] = []
    why: dict[tuple[str, str, Path], str] = {}  # override key -> the first finding's message
    for _ in range(MAX_ROUNDS):
        findings = _errors(documents)
        changed = False
        remaining = []
        for name, path, diagnostic in findings:
            document = documents[name]
            if _fix(name, document, path, diagnostic, notes):
                changed = True
            elif (key := _override(name, document, path, diagnostic, overrides)) is not None:
                why.setdefault(key, diagnostic.message)
                changed = True
            else:
                remaining.append((name, path, diagnostic))
        if not changed:
            break
    _prune(documents, overrides)
    for (name, rule, anchor), (level, where) in sorted(overrides.items(), key=lambda item: (item[0][0], item[0][1], pointer(item[1][1]))):
        what = {"node": "x-evcat-rules on this schema node", "event": "rules on this event", "file": "the file's rules"}[level]
        notes.append(Note(name, pointer(where), f"{rule} off ({what}), the source kept as it is: "
                          f"{why.get((name, rule, anchor), '')}".rstrip(": "), kind="override"))
    return Settled({name: _ordered(document) for name, document in documents.items()}, _unique(notes), remaining)


_ORDER = ("catalog", "title", "description", "version", "profile", "package", "producer", "license", "defaults",
          "servers", "source", "rules", "channels", "services", "schemas", "events")


def _ordered(document: dict[str, Any]) -> dict[str, Any]:
    """The top-level keys in the order the format documents them (§1, §9)."""
    rank = {key: index for index, key in enumerate(_ORDER)}
    return {key: document[key] for key in sorted(document, key=lambda key: rank.get(key, len(_ORDER)))}


def _unique(notes: list[Note]) -> list[Note]:
    seen: set[Note] = set()
    result = []
    for note in notes:
        if note not in seen:
            seen.add(note)
            result.append(note)
    return result


# -- linting in memory ---------------------------------------------------------


def _errors(documents: dict[str, dict[str, Any]]) -> list[tuple[str, Path, Diagnostic]]:
    """The lint errors of ``documents``, each with the file and the path of
    the value it is about."""
    from ..commands.lint import check

    paths: dict[str, list[Path]] = {}
    loaded = []
    for name, value in documents.items():
        document, order = _positioned(name, value)
        paths[name] = order
        loaded.append(document)
    result = check(loaded)
    found = []
    for diagnostic in result.diagnostics:
        if diagnostic.severity is not Severity.ERROR:
            continue
        order = paths.get(diagnostic.location.file)
        if order is None:
            continue
        index = (diagnostic.location.line - 1) // 2
        found.append((diagnostic.location.file, order[index] if 0 <= index < len(order) else (), diagnostic))
    return found


def _positioned(name: str, value: Any) -> tuple[Document, list[Path]]:
    """A loader Document of ``value`` where the value at the k-th path is on
    line 2k and its key on line 2k + 1 (0-based): a diagnostic's line names
    the path it is about, whichever of the two the rule reports."""
    values: dict[Path, tuple[int, int]] = {}
    keys: dict[Path, tuple[int, int]] = {}
    order: list[Path] = []
    stack: list[tuple[Path, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        index = len(order)
        order.append(path)
        values[path] = (2 * index, 0)
        keys[path] = (2 * index + 1, 0)
        if isinstance(node, dict):
            stack.extend(((*path, key), child) for key, child in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(((*path, i), child) for i, child in reversed(list(enumerate(node))))
    return Document(name, value, positions=(values, keys)), order


# -- derived values ------------------------------------------------------------


def _fill_required(name: str, document: dict[str, Any], options: Options) -> list[Note]:
    if "events" not in document:
        return []
    notes = []

    def derived(key: str, value: Any, why: str) -> None:
        document[key] = value
        notes.append(Note(name, "/" + key, f"{key} '{value}' {why}", kind="derived"))

    if options.catalog_id and document.get("catalog") != options.catalog_id:
        document["catalog"] = options.catalog_id
    if not isinstance(document.get("catalog"), str) or not document["catalog"]:
        derived("catalog", catalog_id(name.rsplit("/", 1)[-1].rsplit(".", 1)[0]), "from the file name (--catalog sets it)")
    elif not re.fullmatch(r"[a-z][a-z0-9-]*", document["catalog"]):
        derived("catalog", catalog_id(document["catalog"]), f"from '{document['catalog']}' (a catalog id is lowercase kebab-case)")
    if not document.get("title"):
        derived("title", document["catalog"].replace("-", " ").capitalize(), "from the catalog id (the source has no title)")
    version = document.get("version")
    if not isinstance(version, str) or not _SEMVER.match(version):
        derived("version", semver(version), "(the source has no MAJOR.MINOR.PATCH version)" if version is None
                else f"from '{version}' (a version is MAJOR.MINOR.PATCH)")
    if "profile" not in document:
        document["profile"] = options.profile
    producer = document.get("producer")
    if not isinstance(producer, dict):
        producer = document["producer"] = {}
    if not producer.get("source"):
        producer["source"] = f"urn:{document['catalog']}"
        notes.append(Note(name, "/producer/source", f"source '{producer['source']}' derived from the catalog id "
                          "(the source names no producer source; put the real one here)", kind="derived"))
    for index, event in enumerate(document.get("events") or []):
        if not isinstance(event, dict):
            continue
        where = f"/events/{index}"
        if not event.get("title") and isinstance(event.get("type"), str):
            event["title"] = title_of(event["type"])
            notes.append(Note(name, where + "/title", f"title '{event['title']}' derived from the type", kind="derived"))
        version = event.get("dataversion")
        if "data" in event and (not isinstance(version, str) or not _SEMVER.match(version)):
            event["dataversion"] = semver(version)
            notes.append(Note(name, where + "/dataversion", f"dataversion '{event['dataversion']}' "
                              + ("(the source gives none)" if version is None else f"from '{version}'"), kind="derived"))
    return notes


def catalog_id(text: str) -> str:
    """A catalog id (lowercase kebab-case) from any text."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", str(text))
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    slug = re.sub(r"^[^a-z]+", "", slug)
    return slug or "imported"


def title_of(event_type: str) -> str:
    last = re.split(r"[.:/]", event_type.rstrip(".:/"))[-1] or event_type
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", last).replace("_", " ").replace("-", " ").split()
    return " ".join(words).capitalize() or event_type


def semver(value: Any) -> str:
    """MAJOR.MINOR.PATCH from a version as sources write it (``1``, ``1.2``,
    ``v2.0``, ``2.1.0-beta``); 1.0.0 when nothing in it is a number."""
    if isinstance(value, str) and _SEMVER.match(value):
        return value
    numbers = re.findall(r"\d+", str(value)) if value is not None and not isinstance(value, bool) else []
    parts = [str(int(n)) for n in numbers[:3]] if numbers else ["1"]
    return ".".join(parts + ["0"] * (3 - len(parts)))


# -- fixes that change the document --------------------------------------------


def _fix(name: str, document: dict[str, Any], path: Path, diagnostic: Diagnostic, notes: list[Note]) -> bool:
    rule = diagnostic.rule
    if rule == "CAT-UNKNOWN-KEY" and _schema_root(path) is not None and path and isinstance(path[-1], str):
        parent = _get(document, path[:-1])
        if isinstance(parent, dict) and path[-1] in parent:
            value = parent.pop(path[-1])
            notes.append(Note(name, pointer(path), f"'{path[-1]}' is not a JSON Schema 2020-12 keyword; left out "
                              f"(it was {_short(value)})"))
            return True
    if rule == "CAT-EXAMPLE":
        example = _enclosing(path, "examples")
        if example is not None and example[0] == "events":
            examples = _get(document, example[:-1])
            if isinstance(examples, list) and 0 <= example[-1] < len(examples):
                examples.pop(example[-1])
                if not examples:
                    _get(document, example[:-2]).pop("examples", None)
                notes.append(Note(name, pointer(example), f"example left out: {diagnostic.message}"))
                return True
    if rule == "PAY-PATTERN-BACKTRACK" and path and path[-1] == "pattern":
        parent = _get(document, path[:-1])
        if isinstance(parent, dict) and "pattern" in parent:
            parent.pop("pattern")
            notes.append(Note(name, pointer(path), f"pattern left out: {diagnostic.message}"))
            return True
    if rule == "CAT-SEMVER" and path and path[-1] in ("version", "dataversion"):
        parent = _get(document, path[:-1])
        if isinstance(parent, dict):
            before = parent.get(path[-1])
            after = semver(before)
            if after != before:
                parent[path[-1]] = after
                notes.append(Note(name, pointer(path), f"{path[-1]} '{after}' from '{before}'", kind="derived"))
                return True
    return False


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _get(document: Any, path: Path) -> Any:
    for part in path:
        document = document[part]
    return document


def _enclosing(path: Path, key: str) -> Path | None:
    """The path up to and including the index after the last ``key``."""
    for i in range(len(path) - 2, -1, -1):
        if path[i] == key and isinstance(path[i + 1], int):
            return path[: i + 2]
    return None


# -- overrides -----------------------------------------------------------------


def _schema_root(path: Path) -> int | None:
    """How long the prefix of ``path`` is that leads to a payload schema
    (``events/i/data`` or ``schemas/Name``), or None outside payload schemas."""
    if len(path) >= 3 and path[0] == "events" and isinstance(path[1], int) and path[2] == "data":
        return 3
    if len(path) >= 2 and path[0] == "schemas" and isinstance(path[1], str):
        return 2
    return None


def _schema_node(document: dict[str, Any], path: Path) -> Path | None:
    """The nearest schema node at or above ``path`` (a mapping that is a
    schema, not a map of schemas, not a keyword's value)."""
    start = _schema_root(path)
    if start is None:
        return None
    candidates = []
    at = start
    candidates.append(path[:start])
    while at < len(path):
        keyword = path[at]
        if keyword in _SCHEMA_MAPS or keyword in _SCHEMA_LISTS:
            if at + 1 < len(path):
                candidates.append(path[: at + 2])
            at += 2
        elif keyword in ("items", "additionalProperties", "unevaluatedProperties", "contains", "propertyNames",
                         "not", "if", "then", "else", "unevaluatedItems", "additionalItems", "contentSchema"):
            candidates.append(path[: at + 1])
            at += 1
        else:
            break
    for candidate in reversed(candidates):
        try:
            if isinstance(_get(document, candidate), dict):
                return candidate
        except (KeyError, IndexError, TypeError):
            continue
    return None


def _override(name: str, document: dict[str, Any], path: Path, diagnostic: Diagnostic,
              overrides: dict[tuple[str, str, Path], tuple[str, Path]]) -> tuple[str, str, Path] | None:
    """Write the nearest override of ``diagnostic``'s rule not yet tried for
    the place it is about; False when there is none left (or the rule cannot
    be overridden)."""
    from ..rules import RULES

    rule = RULES.get(diagnostic.rule)
    if rule is None or rule.fixed:
        return None
    # A payload rule stands on the schema node; the others are about the event.
    node = _schema_node(document, path) if diagnostic.rule.startswith("PAY-") else None
    event = path[:2] if len(path) >= 2 and path[0] == "events" and isinstance(path[1], int) else None
    anchor = node if node is not None else event if event is not None else ()
    key = (name, diagnostic.rule, anchor)
    tried = overrides.get(key, (None, ()))[0]
    levels = [level for level, where in (("node", node), ("event", event), ("file", ())) if where is not None]
    if "events" not in document:  # a schema library has no rules key
        levels = [level for level in levels if level != "file"]
    following = levels[levels.index(tried) + 1:] if tried in levels else levels
    if not following:
        return None
    level = following[0]
    where = {"node": node, "event": event, "file": ()}[level]
    assert where is not None
    if tried is not None:
        _remove(document, tried, overrides[key][1], diagnostic.rule)
    # A broader override already written for the same rule covers this place too.
    if level == "file" or level == "event":
        for other, (other_level, other_where) in list(overrides.items()):
            if other[0] == name and other[1] == diagnostic.rule and other_level == "node" and (
                level == "file" or other_where[:2] == where
            ):
                _remove(document, "node", other_where, diagnostic.rule)
                overrides[other] = (level, where)
    target = _get(document, where)
    rules_key = "x-evcat-rules" if level == "node" else "rules"
    rules = target.setdefault(rules_key, {})
    if not isinstance(rules, dict):
        return None
    rules[diagnostic.rule] = "off"
    overrides[key] = (level, where)
    return key


def _prune(documents: dict[str, dict[str, Any]], overrides: dict[tuple[str, str, Path], tuple[str, Path]]) -> None:
    """Drop an override that a broader one of the same rule already covers
    (a property's, when a finding on its schema's ``required`` needed one on
    the schema itself)."""
    written = {(name, rule, level, where) for (name, rule, _), (level, where) in overrides.items()}
    for key, (level, where) in list(overrides.items()):
        name, rule, _ = key
        covered = any(
            other_name == name and other_rule == rule and (other_level, other_where) != (level, where)
            and (other_level == "file" or where[: len(other_where)] == other_where and len(other_where) < len(where)
                 or other_level == "event" and where[:2] == other_where and level == "node")
            for other_name, other_rule, other_level, other_where in written
        )
        if covered and level != "file":
            _remove(documents[name], level, where, rule)
            del overrides[key]
            written.discard((name, rule, level, where))


def _remove(document: dict[str, Any], level: str, where: Path, rule: str) -> None:
    try:
        target = _get(document, where)
    except (KeyError, IndexError, TypeError):
        return
    rules_key = "x-evcat-rules" if level == "node" else "rules"
    rules = target.get(rules_key) if isinstance(target, dict) else None
    if isinstance(rules, dict):
        rules.pop(rule, None)
        if not rules:
            target.pop(rules_key)
