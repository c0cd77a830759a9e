"""What a payload schema accepts, compared between two catalog versions (``evcat diff``).

``$ref`` (shared schemas, ``$defs``) is resolved, ``allOf`` merged into one
schema where that is sound, ``anyOf``/``oneOf`` compared alternative by
alternative, ``enum``/``const`` and bounds by the values they let through
(JSON Schema 2020-12, Core §10.2 and Validation §6). A change that breaks
consumers gets a witness: an instance of the payload one version accepts and
the other refuses, checked by the validator ``evcat validate`` uses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ANNOTATIONS = ("description", "title", "examples", "default", "deprecated", "$comment", "readOnly", "writeOnly")
# Bounds: (keyword, the other keyword of the same bound, is an upper bound).
LENGTHS = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems"),
           "object": ("minProperties", "maxProperties")}
EXACT = ("pattern", "format", "multipleOf", "uniqueItems", "contentEncoding", "contentMediaType")
# Keywords compared by their spelling only: a change in them is a change of unknown direction.
OPAQUE = ("not", "if", "then", "else", "prefixItems", "patternProperties", "propertyNames", "contains",
          "minContains", "maxContains", "dependentRequired", "dependentSchemas", "unevaluatedProperties",
          "unevaluatedItems")
ALL_TYPES = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})
_STRUCTURAL = ("$ref", "allOf", "$defs", "$schema", "$id", "$anchor", "$dynamicAnchor")


@dataclass(frozen=True)
class Change:
    path: str
    kind: str
    detail: str
    backward: bool
    forward: bool
    # An instance of the payload (``data``) that one side accepts and the other
    # refuses, checked by evcat's own validator: ``witness_accepted_by`` is
    # "new" for a change that breaks consumers, "old" for one that refuses old events.
    witness: Any = field(default=None, compare=False)  # a dict or list: not part of the hash
    witness_accepted_by: str | None = field(default=None, compare=False)

    @property
    def breaking(self) -> bool:
        """Breaks existing consumers (not forward compatible)."""
        return not self.forward

    @property
    def documentation_only(self) -> bool:
        return self.kind == "description"


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _value_key(value: Any) -> Any:
    """JSON equality as JSON Schema reads it: 1 == 1.0, true != 1."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, (int, float)):
        return ("number", int(value) if float(value).is_integer() else value)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, list):
        return ("array", tuple(_value_key(item) for item in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((str(k), _value_key(v)) for k, v in value.items())))
    return ("other", repr(value))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "integer" if float(value).is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _types(schema: Any) -> frozenset[str]:
    """The JSON types a schema allows (``number`` includes ``integer``)."""
    if not isinstance(schema, dict):
        return ALL_TYPES if schema is not False else frozenset()
    kind = schema.get("type")
    if kind is None:
        types = set(ALL_TYPES)
    else:
        types = {kind} if isinstance(kind, str) else {k for k in kind if isinstance(k, str)} if isinstance(kind, list) else set(ALL_TYPES)
    if "number" in types:
        types.add("integer")
    return frozenset(types)


def _type_list(types: frozenset[str]) -> list[str]:
    order = ["object", "array", "string", "number", "integer", "boolean", "null"]
    shown = [t for t in order if t in types and not (t == "integer" and "number" in types)]
    return shown


def _open(schema: dict[str, Any]) -> bool:
    return schema.get("additionalProperties", True) is not False


def _lower(schema: dict[str, Any]) -> tuple[float, bool] | None:
    """The effective lower bound of a number: (value, exclusive)."""
    bounds = []
    if isinstance(schema.get("minimum"), (int, float)) and not isinstance(schema.get("minimum"), bool):
        bounds.append((schema["minimum"], False))
    if isinstance(schema.get("exclusiveMinimum"), (int, float)) and not isinstance(schema.get("exclusiveMinimum"), bool):
        bounds.append((schema["exclusiveMinimum"], True))
    return max(bounds, key=lambda b: (b[0], b[1])) if bounds else None


def _upper(schema: dict[str, Any]) -> tuple[float, bool] | None:
    bounds = []
    if isinstance(schema.get("maximum"), (int, float)) and not isinstance(schema.get("maximum"), bool):
        bounds.append((schema["maximum"], False))
    if isinstance(schema.get("exclusiveMaximum"), (int, float)) and not isinstance(schema.get("exclusiveMaximum"), bool):
        bounds.append((schema["exclusiveMaximum"], True))
    return min(bounds, key=lambda b: (b[0], not b[1])) if bounds else None


def _within(value: Any, schema: dict[str, Any]) -> bool:
    """Whether a JSON value passes the type, length and bound keywords of one
    schema level (patterns and formats are not judged here: a value this lets
    through may still be refused, never the other way round)."""
    kind = _json_type(value)
    if kind not in _types({k: v for k, v in schema.items() if k != "enum"}):
        return False
    if kind == "string":
        if isinstance(schema.get("minLength"), int) and len(value) < schema["minLength"]:
            return False
        if isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
            return False
    if kind in ("integer", "number"):
        low, high = _lower(schema), _upper(schema)
        if low is not None and (value < low[0] or (low[1] and value == low[0])):
            return False
        if high is not None and (value > high[0] or (high[1] and value == high[0])):
            return False
    return True


def _enum_values(schema: dict[str, Any]) -> dict[Any, Any] | None:
    """The values an ``enum`` (or ``const``) allows that the rest of the level lets through."""
    if "enum" not in schema or not isinstance(schema["enum"], list):
        return None
    return {_value_key(v): v for v in schema["enum"] if _within(v, schema)}


def _spelled(bound: tuple[float, bool] | None, names: tuple[str, str]) -> str:
    return "none" if bound is None else f"{names[0] if bound[1] else names[1]} {bound[0]}"


class _Side:
    """The schemas one catalog version can reach by ``$ref``."""

    def __init__(self, shared: Mapping[str, Any], defs: Mapping[str, Any] | None = None) -> None:
        self.shared, self.defs = shared, dict(defs or {})

    def target(self, ref: str) -> tuple[str, Any] | None:
        for prefix in ("#/$defs/", "#/schemas/"):
            if ref.startswith(prefix):
                name = ref[len(prefix):].replace("~1", "/").replace("~0", "~")
                if name in self.defs:
                    return "#/$defs/" + name, self.defs[name]
                if name in self.shared:
                    entry = self.shared[name]
                    return name, getattr(entry, "schema", entry)
        return None

    def all_defs(self) -> dict[str, Any]:
        defs = {name: getattr(entry, "schema", entry) for name, entry in self.shared.items()}
        defs.update(self.defs)
        return defs

    def flatten(self, schema: Any, expanding: tuple[str, ...] = ()) -> Any:
        """``schema`` as one schema: ``$ref`` resolved, ``allOf`` merged, ``const``
        read as a one-value ``enum``. What cannot be merged soundly stays under
        ``allOf`` (and is then compared by its spelling)."""
        if not isinstance(schema, dict):
            return schema
        base = {k: v for k, v in schema.items() if k not in _STRUCTURAL}
        leftovers: list[Any] = []
        if "const" in base:
            const = base.pop("const")
            kept = [const] if "enum" not in base or not isinstance(base["enum"], list) else [
                v for v in base["enum"] if _value_key(v) == _value_key(const)]
            base["enum"] = kept
        parts: list[Any] = []
        ref = schema.get("$ref")
        if isinstance(ref, str):
            found = self.target(ref)
            if found is None or found[0] in expanding:
                leftovers.append({"$ref": ref})  # unresolved, or a schema that contains itself
            else:
                parts.append(self.flatten(found[1], expanding + (found[0],)))
        members = schema.get("allOf")
        if isinstance(members, list):
            parts += [self.flatten(member, expanding) for member in members]
        result: Any = base
        for part in parts:
            result = _merge(result, part, leftovers)
        if result is False or result is True:
            return result if not leftovers else {"allOf": leftovers}
        if leftovers:
            result = {**result, "allOf": leftovers}
        return result


def _merge(a: Any, b: Any, leftovers: list[Any]) -> Any:
    """The schema both ``a`` and ``b`` accept (both flattened), where that can
    be written as one schema; what cannot goes to ``leftovers``."""
    if a is False or b is False:
        return False
    if a is True or not isinstance(a, dict):
        return dict(b) if isinstance(b, dict) else b
    if b is True or not isinstance(b, dict):
        return a
    if ("patternProperties" in a or "patternProperties" in b) and (
            a.get("additionalProperties", True) is not True or b.get("additionalProperties", True) is not True):
        leftovers.append(b)  # which names are additional depends on the patterns: not merged
        return a
    result = dict(a)
    for key in ANNOTATIONS:
        if key in b and key not in result:
            result[key] = b[key]
    if "allOf" in b:
        leftovers.extend(b["allOf"])
    if "type" in a or "type" in b:
        types = _types({"type": a["type"]} if "type" in a else {}) & _types({"type": b["type"]} if "type" in b else {})
        if not types:
            return False
        shown = _type_list(types)
        result["type"] = shown[0] if len(shown) == 1 else shown
    if "enum" in b:
        values = {_value_key(v): v for v in b["enum"]} if isinstance(b["enum"], list) else {}
        if "enum" in a and isinstance(a["enum"], list):
            values = {key: v for key, v in ((_value_key(v), v) for v in a["enum"]) if key in values}
        if not values:
            return False
        result["enum"] = list(values.values())
    if "required" in b:
        result["required"] = list(dict.fromkeys([*a.get("required", []), *b.get("required", [])]))
    a_properties, b_properties = a.get("properties", {}), b.get("properties", {})
    if isinstance(a_properties, dict) and isinstance(b_properties, dict) and (a_properties or b_properties):
        properties: dict[str, Any] = {}
        for name in dict.fromkeys([*a_properties, *b_properties]):
            # additionalProperties of one part applies to the names only the other declares
            here = [p[name] if name in p else side.get("additionalProperties", True)
                    for p, side in ((a_properties, a), (b_properties, b))]
            here = [schema for schema in here if schema is not True]
            properties[name] = False if False in here else (here[0] if len(here) == 1 else {"allOf": here}) if here else True
        result["properties"] = properties
    if "additionalProperties" in b:
        extra = [s for s in (a.get("additionalProperties", True), b["additionalProperties"]) if s is not True]
        result["additionalProperties"] = False if False in extra else (extra[0] if len(extra) == 1 else {"allOf": extra})
    if "items" in b:
        result["items"] = b["items"] if "items" not in a else {"allOf": [a["items"], b["items"]]}
    for low, high in LENGTHS.values():
        if isinstance(b.get(low), int):
            result[low] = max(a.get(low, 0), b[low])
        if isinstance(b.get(high), int):
            result[high] = min(a[high], b[high]) if isinstance(a.get(high), int) else b[high]
    for keyword, pick in (("minimum", max), ("exclusiveMinimum", max), ("maximum", min), ("exclusiveMaximum", min)):
        if isinstance(b.get(keyword), (int, float)):
            result[keyword] = pick(a[keyword], b[keyword]) if isinstance(a.get(keyword), (int, float)) else b[keyword]
    if b.get("uniqueItems") is True:
        result["uniqueItems"] = True
    for keyword in (*[k for k in EXACT if k != "uniqueItems"], *OPAQUE, "anyOf", "oneOf"):
        if keyword not in b:
            continue
        if keyword not in a:
            result[keyword] = b[keyword]
        elif _canon(a[keyword]) != _canon(b[keyword]):
            leftovers.append({keyword: b[keyword]})
    return result


def _branches(schema: dict[str, Any]) -> tuple[list[Any], str | None]:
    """A schema with ``anyOf``/``oneOf`` as the list of alternatives it stands
    for, each merged with the keywords beside it."""
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list):
            rest = {k: v for k, v in schema.items() if k != keyword}
            if keyword == "anyOf" and isinstance(schema.get("oneOf"), list):
                return [schema], "mixed"  # both: compared by spelling
            return [{"allOf": [rest, branch]} if rest else branch for branch in schema[keyword]], keyword
    return [schema], None


def _disjoint(a: Any, b: Any) -> bool:
    """Whether no instance matches both (flattened) schemas, on evidence that
    is easy to see: no common type, no common enum value, or a property both
    require whose enum values do not meet."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return a is False or b is False
    if not (_types(a) & _types(b)):
        return True
    ea, eb = _enum_values(a), _enum_values(b)
    if ea is not None and eb is not None and not (set(ea) & set(eb)):
        return True
    if "object" in _types(a) & _types(b) and len(_types(a) & _types(b)) == 1:
        required = set(a.get("required", [])) & set(b.get("required", []))
        pa, pb = a.get("properties", {}), b.get("properties", {})
        for name in required:
            va = _enum_values(pa.get(name)) if isinstance(pa.get(name), dict) else None
            vb = _enum_values(pb.get(name)) if isinstance(pb.get(name), dict) else None
            if va is not None and vb is not None and not (set(va) & set(vb)):
                return True
    return False


class SchemaDiff:
    """The changes from one payload schema to another, by what they accept.

    ``$ref`` (shared schemas, ``$defs``) is resolved and ``allOf`` merged into
    one schema where that is sound (properties and ``required`` joined,
    constraints intersected); what cannot be merged is compared by its spelling
    and said so. ``anyOf``/``oneOf`` are compared alternative by alternative.
    Producers are taken to send the properties their schema declares and, in an
    open content model, unknown ones under names neither version declares.
    """

    def __init__(self, old_shared: Mapping[str, Any], new_shared: Mapping[str, Any],
                 old_defs: Mapping[str, Any] | None = None, new_defs: Mapping[str, Any] | None = None) -> None:
        self.old_side, self.new_side = _Side(old_shared, old_defs), _Side(new_shared, new_defs)
        self.old_shared, self.new_shared = old_shared, new_shared
        self.changes: list[Change] = []
        self._places: list[tuple[Any, Any, tuple[Any, ...]] | None] = []
        self._active: set[tuple[str, str]] = set()

    def add(self, path: str, kind: str, detail: str, backward: bool, forward: bool,
            at: tuple[Any, Any, tuple[Any, ...]] | None = None) -> None:
        self.changes.append(Change(path or "/", kind, detail, backward, forward))
        self._places.append(at)

    def _child(self) -> SchemaDiff:
        child = SchemaDiff.__new__(SchemaDiff)
        child.old_side, child.new_side = self.old_side, self.new_side
        child.old_shared, child.new_shared = self.old_shared, self.new_shared
        child.changes, child._places, child._active = [], [], set(self._active)
        return child

    def _flags(self, old: Any, new: Any, ctx: tuple[Any, ...] = ()) -> tuple[bool, bool]:
        """(backward, forward) of ``old`` -> ``new`` as one change."""
        child = self._child()
        child.compare(old, new, "", ctx)
        return all(c.backward for c in child.changes), all(c.forward for c in child.changes)

    def compare(self, old: Any, new: Any, path: str = "", ctx: tuple[Any, ...] = ()) -> None:
        key = (_canon(old), _canon(new))
        if key in self._active:
            return  # a recursive schema met itself: what holds there holds here (co-induction)
        self._active.add(key)
        try:
            self._compare(old, new, path, ctx)
        finally:
            self._active.discard(key)

    def _compare(self, old_raw: Any, new_raw: Any, path: str, ctx: tuple[Any, ...]) -> None:
        old, new = self.old_side.flatten(old_raw), self.new_side.flatten(new_raw)
        at = (old_raw, new_raw, ctx)
        if old is True and isinstance(new, dict):
            old = {}
        if new is True and isinstance(old, dict):
            new = {}
        if not isinstance(old, dict) or not isinstance(new, dict):
            if _canon(old) != _canon(new):
                if new is False or old is True:
                    self.add(path, "type narrowed", f"{json.dumps(old)} -> {json.dumps(new)}", False, True, at)
                elif old is False or new is True:
                    self.add(path, "type widened", f"{json.dumps(old)} -> {json.dumps(new)}", True, False, at)
                else:
                    self.add(path, "type changed", f"{json.dumps(old)} -> {json.dumps(new)}", False, False, at)
            return
        self._annotations(old, new, path)
        if "allOf" in old or "allOf" in new:
            if _canon(old.get("allOf")) != _canon(new.get("allOf")):
                self.add(path, "type changed", "allOf with parts that do not merge into one schema changed; compared by spelling",
                         False, False, at)
            old = {k: v for k, v in old.items() if k != "allOf"}
            new = {k: v for k, v in new.items() if k != "allOf"}
        old_branches, old_kind = _branches(old)
        new_branches, new_kind = _branches(new)
        if old_kind or new_kind:
            self._alternatives(old, new, old_branches, old_kind, new_branches, new_kind, path, at, ctx)
            return
        self._level(old, new, path, at, ctx)

    def _annotations(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        for keyword in ANNOTATIONS:
            if old.get(keyword) != new.get(keyword):
                self.add(path, "description", f"{keyword} changed", True, True)

    def _alternatives(self, old: dict[str, Any], new: dict[str, Any], old_branches: list[Any], old_kind: str | None,
                      new_branches: list[Any], new_kind: str | None, path: str, at: Any, ctx: tuple[Any, ...]) -> None:
        if "mixed" in (old_kind, new_kind):
            if _canon(old) != _canon(new):
                self.add(path, "type changed", "anyOf beside oneOf changed; compared by spelling", False, False, at)
            return
        flags = {(i, j): self._flags(o, n, ctx) for i, o in enumerate(old_branches) for j, n in enumerate(new_branches)}
        equal = len(old_branches) == len(new_branches) and all(flags[i, i] == (True, True) for i in range(len(old_branches)))

        def exact(branches: list[Any], kind: str | None, side: _Side) -> bool:
            # oneOf accepts what exactly one alternative accepts: read as anyOf
            # only where no two alternatives can accept the same instance
            flat = [side.flatten(b) for b in branches]
            return kind != "oneOf" or all(_disjoint(a, b) for k, a in enumerate(flat) for b in flat[k + 1:])

        forward = equal or (exact(old_branches, old_kind, self.old_side) and all(
            any(flags[i, j][1] for i in range(len(old_branches))) for j in range(len(new_branches))))
        backward = equal or (exact(new_branches, new_kind, self.new_side) and all(
            any(flags[i, j][0] for j in range(len(new_branches))) for i in range(len(old_branches))))
        if forward and backward:
            return
        shown = f"{old_kind or 'one schema'} ({len(old_branches)}) -> {new_kind or 'one schema'} ({len(new_branches)})"
        uncovered = [j + 1 for j in range(len(new_branches)) if not any(flags[i, j][1] for i in range(len(old_branches)))]
        if uncovered and not forward:
            shown += f": new alternative {', '.join(map(str, uncovered))} is not within any old one"
        elif not forward:
            shown += ": oneOf alternatives overlap; compared conservatively"
        kind = "type changed" if not (forward or backward) else "type widened" if backward else "type narrowed"
        self.add(path, kind, shown, backward, forward, at)

    def _level(self, old: dict[str, Any], new: dict[str, Any], path: str, at: Any, ctx: tuple[Any, ...]) -> None:
        old_values, new_values = _enum_values(old), _enum_values(new)
        if old_values is not None or new_values is not None:
            self._enum(old, new, old_values, new_values, path, at)
        both_enums = old_values is not None and new_values is not None
        old_types = frozenset({_json_type(v) for v in old_values.values()}) if old_values is not None else _types(old)
        new_types = frozenset({_json_type(v) for v in new_values.values()}) if new_values is not None else _types(new)
        if not both_enums:
            self._type(old, new, _types(old) if old_values is None else old_types | ({"integer"} if "number" in old_types else set()),
                       _types(new) if new_values is None else new_types | ({"integer"} if "number" in new_types else set()), path, at)
        common = _types(old) & _types(new)
        if not both_enums:
            for kind, (low, high) in LENGTHS.items():
                if kind in common:
                    self._bound(old, new, low, False, path, at)
                    self._bound(old, new, high, True, path, at)
            if "integer" in common:
                self._numbers(old, new, path, at)
        for keyword in EXACT:
            relevant = {"pattern": "string", "format": "string", "contentEncoding": "string", "contentMediaType": "string",
                        "multipleOf": "integer", "uniqueItems": "array"}[keyword]
            if relevant in common:
                self._exact(old, new, keyword, path, at)
        for keyword in OPAQUE:
            if (keyword in old or keyword in new) and _canon(old.get(keyword)) != _canon(new.get(keyword)):
                self.add(path, "type changed", f"{keyword} changed", False, False, at)
        if "object" in common and not both_enums:
            self._object(old, new, path, at, ctx)
        if "array" in common and not both_enums and ("items" in old or "items" in new):
            self.compare(old.get("items", True), new.get("items", True), f"{path}/items", ctx + ((old, new, ("items",)),))

    def _type(self, old: dict[str, Any], new: dict[str, Any], old_types: frozenset[str], new_types: frozenset[str],
              path: str, at: Any) -> None:
        if old_types == new_types:
            return
        shown = f"{old.get('type', 'any')} -> {new.get('type', 'any')}"
        if old_types < new_types:
            self.add(path, "type widened", shown, True, False, at)
        elif new_types < old_types:
            self.add(path, "type narrowed", shown, False, True, at)
        else:
            self.add(path, "type changed", shown, False, False, at)

    def _enum(self, old: dict[str, Any], new: dict[str, Any], old_values: dict[Any, Any] | None,
              new_values: dict[Any, Any] | None, path: str, at: Any) -> None:
        if old_values is not None and new_values is not None:
            added = [json.dumps(new_values[k]) for k in new_values if k not in old_values]
            removed = [json.dumps(old_values[k]) for k in old_values if k not in new_values]
        elif new_values is not None:  # an enum added: the values the old schema let through stay
            added = [json.dumps(v) for v in new_values.values() if not _within(v, old)]
            removed = ["enum added"]
        else:
            assert old_values is not None
            added = ["enum removed"]
            removed = [json.dumps(v) for v in old_values.values() if not _within(v, new)]
        if not added and not removed:
            return
        if added and not removed:
            self.add(path, "enum values added", ", ".join(sorted(added)), True, False, at)
        elif removed and not added:
            self.add(path, "enum values removed", ", ".join(sorted(removed)), False, True, at)
        else:
            self.add(path, "enum values changed", f"added {', '.join(sorted(added))}; removed {', '.join(sorted(removed))}",
                     False, False, at)

    def _bound(self, old: dict[str, Any], new: dict[str, Any], keyword: str, upper: bool, path: str, at: Any) -> None:
        before, after = old.get(keyword), new.get(keyword)
        before = before if isinstance(before, int) and not isinstance(before, bool) else None
        after = after if isinstance(after, int) and not isinstance(after, bool) else None
        if keyword in ("minLength", "minItems", "minProperties"):
            before, after = before or None, after or None  # 0 is no bound
        if before == after:
            return
        if upper:
            relaxed = after is None or (before is not None and after > before)
        else:
            relaxed = after is None or (before is not None and after < before)
        self.add(path, "constraint relaxed" if relaxed else "constraint tightened", f"{keyword} {before} -> {after}",
                 relaxed, not relaxed, at)

    def _numbers(self, old: dict[str, Any], new: dict[str, Any], path: str, at: Any) -> None:
        for bound, upper in ((_lower, False), (_upper, True)):
            before, after = bound(old), bound(new)
            if before == after:
                continue
            if after is None or before is None:
                relaxed = after is None
            elif upper:
                relaxed = after[0] > before[0] or (after[0] == before[0] and before[1])
            else:
                relaxed = after[0] < before[0] or (after[0] == before[0] and before[1])
            names = ("exclusiveMaximum", "maximum") if upper else ("exclusiveMinimum", "minimum")

            shown = f"{_spelled(before, names)} -> {_spelled(after, names)}"
            self.add(path, "constraint relaxed" if relaxed else "constraint tightened", shown, relaxed, not relaxed, at)

    def _exact(self, old: dict[str, Any], new: dict[str, Any], keyword: str, path: str, at: Any) -> None:
        before, after = old.get(keyword), new.get(keyword)
        if keyword == "uniqueItems":
            before, after = before or None, after or None
        if before == after:
            return
        if after is None:
            self.add(path, "constraint relaxed", f"{keyword} {json.dumps(before)} removed", True, False, at)
        elif before is None:
            self.add(path, "constraint tightened", f"{keyword} {json.dumps(after)} added", False, True, at)
        elif keyword == "multipleOf" and isinstance(before, (int, float)) and isinstance(after, (int, float)) and before > 0 \
                and after > 0 and (after / before).is_integer():
            self.add(path, "constraint tightened", f"{keyword} {before} -> {after}", False, True, at)
        elif keyword == "multipleOf" and isinstance(before, (int, float)) and isinstance(after, (int, float)) and before > 0 \
                and after > 0 and (before / after).is_integer():
            self.add(path, "constraint relaxed", f"{keyword} {before} -> {after}", True, False, at)
        else:
            self.add(path, "constraint changed", f"{keyword} {json.dumps(before)} -> {json.dumps(after)}", False, False, at)

    def _object(self, old: dict[str, Any], new: dict[str, Any], path: str, at: Any, ctx: tuple[Any, ...]) -> None:
        old_extra, new_extra = old.get("additionalProperties", True), new.get("additionalProperties", True)
        if old_extra is not False and new_extra is not False and _canon(old_extra) != _canon(new_extra):
            self.compare(old_extra, new_extra, f"{path}/*", ctx + ((old, new, ("property", "zzUnknown")),))
        elif _open(old) != _open(new):
            if _open(new):
                self.add(path, "additionalProperties opened", "unknown properties now allowed", True, False, at)
            else:
                self.add(path, "additionalProperties closed", "unknown properties now rejected", False, True, at)
        old_properties = old.get("properties") if isinstance(old.get("properties"), dict) else {}
        new_properties = new.get("properties") if isinstance(new.get("properties"), dict) else {}
        old_required = set(old.get("required", []) if isinstance(old.get("required"), list) else [])
        new_required = set(new.get("required", []) if isinstance(new.get("required"), list) else [])
        for name in sorted(set(new_properties) - set(old_properties)):
            required = name in new_required
            schema = new_properties[name]
            if old_extra is True or schema is False:
                forward = True
            elif old_extra is False:
                forward = False
            else:
                forward = self._flags(old_extra, schema, ctx)[1]
            backward = (not required or name in old_required) and (
                not isinstance(old_extra, dict) or self._flags(old_extra, schema, ctx)[0])
            self.add(f"{path}/{name}", "property added", "required" if required else "optional", backward, forward, at)
        for name in sorted(set(old_properties) - set(new_properties)):
            schema = old_properties[name]
            if new_extra is True or schema is False:
                backward = True
            elif new_extra is False:
                backward = False
            else:
                backward = self._flags(schema, new_extra, ctx)[0]
            forward = (name not in old_required or name in new_required) and (
                not isinstance(new_extra, dict) or self._flags(schema, new_extra, ctx)[1])
            self.add(f"{path}/{name}", "property removed", "was required" if name in old_required else "was optional",
                     backward, forward, at)
        for name in sorted(set(old_properties) & set(new_properties)):
            was, now = name in old_required, name in new_required
            if was and not now:
                self.add(f"{path}/{name}", "required -> optional", "", True, False, at)
            elif now and not was:
                self.add(f"{path}/{name}", "optional -> required", "", False, True, at)
            self.compare(old_properties[name], new_properties[name], f"{path}/{name}",
                         ctx + ((old, new, ("property", name)),))
        for name in sorted((old_required | new_required) - set(old_properties) - set(new_properties)):
            if (name in old_required) != (name in new_required):
                now = name in new_required
                self.add(f"{path}/{name}", "optional -> required" if now else "required -> optional", "undeclared",
                         not now, now, at)

    def find_witnesses(self, old_root: Any, new_root: Any) -> None:
        """Give each change that breaks consumers (or refuses old events) an
        instance of the payload one side accepts and the other refuses (diff_witness.py)."""
        from .diff_witness import find_witnesses

        find_witnesses(self, old_root, new_root)

    def places(self) -> list[tuple[Any, Any, tuple[Any, ...]] | None]:
        """Where each change was found: (old schema, new schema, the steps from the root)."""
        return list(self._places)
