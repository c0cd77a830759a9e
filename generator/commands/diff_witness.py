"""Witnesses for `evcat diff`: an instance of the payload that one version's
schema accepts and the other's refuses, made from the schemas' keywords and
kept only when the validator ``evcat validate`` uses (JSON Schema 2020-12,
formats asserted) agrees."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from .diff_schemas import Change, SchemaDiff, _branches, _enum_values, _lower, _Side, _types, _upper

_NOTHING = object()  # no value found
FORMAT_SAMPLES = {
    "date-time": "2024-01-01T00:00:00Z", "date": "2024-01-01", "time": "00:00:00Z", "duration": "P1D",
    "email": "a@example.nl", "idn-email": "a@example.nl", "hostname": "example.nl", "idn-hostname": "example.nl",
    "ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "uri": "https://example.nl/a", "uri-reference": "a",
    "iri": "https://example.nl/a", "iri-reference": "a", "uuid": "00000000-0000-4000-8000-000000000000",
    "uri-template": "a", "json-pointer": "/a", "relative-json-pointer": "0", "regex": "a",
}
STRING_PROBES = ("", "a", "A", "0", "aa", "ab", "a b", "aaaaaaaa", "ZZZZ", "!", "not a value", "x" * 40)


def _string_sample(schema: dict[str, Any]) -> Any:
    low = schema.get("minLength", 0) if isinstance(schema.get("minLength"), int) else 0
    high = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
    candidates = [FORMAT_SAMPLES[schema["format"]]] if schema.get("format") in FORMAT_SAMPLES else []
    candidates += ["a" * max(low, 1), "a" * low, *STRING_PROBES]
    for value in candidates:
        if len(value) < low or (high is not None and len(value) > high):
            continue
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            try:
                if not re.search(pattern, value):
                    continue
            except re.error:
                pass
        return value
    return "a" * low


def _number_sample(schema: dict[str, Any], integer: bool) -> Any:
    low, high = _lower(schema), _upper(schema)
    value: float = 0
    if low is not None and (value < low[0] or (low[1] and value <= low[0])):
        value = low[0] + (1 if low[1] else 0)
    if high is not None and (value > high[0] or (high[1] and value >= high[0])):
        value = high[0] - (1 if high[1] else 0)
        if low is not None and (value < low[0] or (low[1] and value <= low[0])):
            value = (low[0] + high[0]) / 2
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
        value = math.ceil(value / step) * step
    if integer:
        value = math.ceil(value) if float(value) != int(value) else int(value)
    return int(value) if float(value).is_integer() and (integer or isinstance(value, int)) else value


class _Samples:
    """Values a (side's) schema accepts, made from its keywords (best effort:
    every witness is checked by a validator before it is shown)."""

    def __init__(self, side: _Side) -> None:
        self.side = side

    def sample(self, schema: Any, depth: int = 0, full: bool = False) -> Any:
        flat = self.side.flatten(schema)
        if flat is False or depth > 8:
            return _NOTHING
        if not isinstance(flat, dict):
            return "a"
        branches, kind = _branches(flat)
        if kind:
            for branch in branches:
                value = self.sample(branch, depth + 1, full)
                if value is not _NOTHING:
                    return value
            return _NOTHING
        values = _enum_values(flat)
        if values is not None:
            return next(iter(values.values()), _NOTHING)
        types = _types(flat)
        order = ["object", "string", "integer", "number", "boolean", "null", "array"]
        if "object" in types and not (flat.get("properties") or flat.get("required")):
            order.remove("object")
            order.append("object")
        for kind_ in order:
            if kind_ in types:
                return self.typed(flat, kind_, depth, full)
        return _NOTHING

    def typed(self, flat: dict[str, Any], kind: str, depth: int, full: bool = False) -> Any:
        if kind == "string":
            return _string_sample(flat)
        if kind in ("integer", "number"):
            return _number_sample(flat, kind == "integer")
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        if kind == "array":
            low = flat.get("minItems", 0) if isinstance(flat.get("minItems"), int) else 0
            if not low:
                return []
            item = self.sample(flat.get("items", True), depth + 1)
            return [item] * low if item is not _NOTHING else _NOTHING
        return self.object(flat, depth, full)

    def object(self, flat: dict[str, Any], depth: int, full: bool = False, leave: str | None = None) -> Any:
        properties = flat.get("properties", {}) if isinstance(flat.get("properties"), dict) else {}
        names = list(dict.fromkeys([*(flat.get("required") or []), *(properties if full else [])]))
        result: dict[str, Any] = {}
        for name in names:
            if name == leave:
                continue
            value = self.sample(properties.get(name, flat.get("additionalProperties", True)), depth + 1)
            if value is _NOTHING:
                if name in (flat.get("required") or []):
                    return _NOTHING
                continue
            result[name] = value
        return result

    def candidates(self, accepting: Any, refusing: Any, other: _Samples, depth: int = 0) -> Iterator[Any]:
        """Values, most of them accepted by ``accepting``, that ``refusing``
        (read with ``other``) may refuse."""
        flat = self.side.flatten(accepting)
        against = other.side.flatten(refusing)
        against = against if isinstance(against, dict) else {}
        if flat is False or depth > 3:
            return
        if not isinstance(flat, dict):
            flat = {}
        branches, kind = _branches(flat)
        if kind:
            for branch in branches:
                yield from self.candidates(branch, refusing, other, depth + 1)
            return
        values = _enum_values(flat)
        if values is not None:
            yield from values.values()
            return
        yield self.sample(flat, depth)
        types = sorted(_types(flat), key=lambda t: t in _types(against))
        for kind_ in types:
            if kind_ == "string":
                lengths = {flat.get("minLength", 0), against.get("maxLength", -2) + 1, against.get("minLength", 0) - 1}
                yield from ("a" * n for n in sorted(lengths) if isinstance(n, int) and n >= 0)
                if flat.get("format") in FORMAT_SAMPLES:
                    yield FORMAT_SAMPLES[flat["format"]]
                yield from STRING_PROBES
                yield from (v for v in FORMAT_SAMPLES.values())
            elif kind_ in ("integer", "number"):
                yield _number_sample(flat, kind_ == "integer")
                points = [0, 1, -1, 1000000]
                for bound in (_lower(against), _upper(against), _lower(flat), _upper(flat)):
                    if bound is not None:
                        points += [bound[0], bound[0] - 1, bound[0] + 1]
                for point in points:
                    value = point if kind_ == "integer" else point + 0.5
                    yield int(value) if kind_ == "integer" and float(value).is_integer() else value
                if isinstance(against.get("multipleOf"), (int, float)):
                    yield against["multipleOf"] / 2 if kind_ == "number" else 1
            elif kind_ in ("boolean", "null"):
                yield True if kind_ == "boolean" else None
                yield False if kind_ == "boolean" else None
            elif kind_ == "array":
                items = flat.get("items", True)
                low = flat.get("minItems", 0) if isinstance(flat.get("minItems"), int) else 0
                for item in [self.sample(items, depth + 1), *self.candidates(items, against.get("items", True), other, depth + 1)]:
                    if item is _NOTHING:
                        continue
                    sizes = {max(low, 1), against.get("maxItems", -2) + 1, against.get("minItems", 0) - 1}
                    yield from ([item] * n for n in sorted(sizes) if isinstance(n, int) and n >= low)
                    yield [item, item]
                yield []
            elif kind_ == "object":
                yield from self.object_candidates(flat, against, other, depth)
            else:
                yield self.typed(flat, kind_, depth)

    def object_candidates(self, flat: dict[str, Any], against: dict[str, Any], other: _Samples, depth: int) -> Iterator[Any]:
        base = self.object(flat, depth)
        full = self.object(flat, depth, full=True)
        for value in (base, full):
            if value is not _NOTHING:
                yield value
        if full is _NOTHING:
            return
        for name in against.get("required") or []:
            yield {k: v for k, v in full.items() if k != name}
        if flat.get("additionalProperties", True) is not False:
            yield {**full, "zzUnknown": "a"}
        properties = flat.get("properties", {}) if isinstance(flat.get("properties"), dict) else {}
        theirs = against.get("properties", {}) if isinstance(against.get("properties"), dict) else {}
        for name, schema in properties.items():
            refusing = theirs.get(name, against.get("additionalProperties", True))
            for value in self.candidates(schema, refusing, other, depth + 1):
                if value is not _NOTHING:
                    yield {**full, name: value}


def _validator(root: Any, side: _Side) -> Any:
    import jsonschema_rs

    schema = dict(root) if isinstance(root, dict) else {"allOf": [root]}
    schema["$defs"] = {**side.all_defs(), **(schema.get("$defs") or {})}
    try:
        return jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
    except Exception:  # noqa: BLE001 - a schema the validator cannot read has no witnesses
        return None


def find_witnesses(diff: SchemaDiff, old_root: Any, new_root: Any, limit: int = 400) -> None:
    """Give each change that breaks consumers (or refuses old events) an
    instance of the payload one side accepts and the other refuses."""
    judges = {"old": _validator(old_root, diff.old_side), "new": _validator(new_root, diff.new_side)}
    if judges["old"] is None or judges["new"] is None:
        return
    samples = {"old": _Samples(diff.old_side), "new": _Samples(diff.new_side)}
    for index, (change, place) in enumerate(zip(diff.changes, diff.places())):
        if place is None or (change.forward and change.backward):
            continue
        accepting = "new" if not change.forward else "old"
        refusing = "old" if accepting == "new" else "new"
        old_local, new_local, ctx = place
        local = {"old": old_local, "new": new_local}
        tried = 0
        for value in samples[accepting].candidates(local[accepting], local[refusing], samples[refusing]):
            if value is _NOTHING:
                continue
            tried += 1
            if tried > limit:
                break
            whole = _embed(value, ctx, accepting, samples[accepting])
            if whole is _NOTHING:
                continue
            try:
                if judges[accepting].is_valid(whole) and not judges[refusing].is_valid(whole):
                    diff.changes[index] = Change(change.path, change.kind, change.detail, change.backward,
                                                 change.forward, whole, accepting)
                    break
            except (ValueError, OverflowError):
                continue


def _embed(value: Any, ctx: tuple[Any, ...], side: str, samples: _Samples) -> Any:
    for old_parent, new_parent, step in reversed(ctx):
        parent = new_parent if side == "new" else old_parent
        if step[0] == "items":
            low = parent.get("minItems", 1) if isinstance(parent.get("minItems"), int) else 1
            value = [value] * max(low, 1)
        else:
            holder = samples.object(parent, 0, leave=step[1])
            if holder is _NOTHING:
                return _NOTHING
            value = {**holder, step[1]: value}
    return value
