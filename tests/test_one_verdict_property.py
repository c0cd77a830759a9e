"""Contract §4.1 as a property (issue 15): random valid events of the test
catalogs and random mutations of them get one verdict from every judge, and
what is accepted round-trips exactly.

Judges: `evcat validate`'s checker (fast path and detailed rules), the catalog
example check (the detailed rules), the generated ``parse_event``, and the
event's event.schema.json alone under the ``jsonschema`` package (format
assertion) and jsonschema-rs. What a JSON Schema cannot see is left out of the
schema judges' comparison, and said so: the event's size, nesting deeper than
the runtime's bound, and numbers or strings Python's JSON reader cannot hold
(1e400, lone surrogates).

A few hundred events per run by default (EVCAT_PROPERTY_EXAMPLES); more with
``python3 -m pytest tests/test_one_verdict_property.py --hypothesis-profile=slow``.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.envelope import envelope_schema
from generator.commands.generate import render
from generator.commands.lint import lint
from generator.naming import python_package_name
from generator.rules import finding_severity
from generator.runtime._reading import MAX_DEPTH
from generator.commands.validate import FastValidator, loads as validate_loads

from .conftest import ROOT

CATALOGS = [ROOT / "catalog", ROOT / "tests" / "catalogs" / "hostile", ROOT / "tests" / "catalogs" / "source-templates"]
EXAMPLES = int(os.environ.get("EVCAT_PROPERTY_EXAMPLES", "500"))
settings.register_profile("slow", max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))


class Judges:
    def __init__(self, root: Path) -> None:
        self.seeds: list[tuple[Any, dict[str, Any]]] = []
        self.validators: dict[str, FastValidator] = {}
        self.schemas: dict[tuple[str, str | None], tuple[Any, Any]] = {}
        self.by_type: dict[str, int] = {}
        for directory in CATALOGS:
            catalog_set = lint(str(directory)).catalog_set
            for relative, content in render(catalog_set, ["python"])["python"].items():
                path = root / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
            validator = FastValidator(catalog_set)
            for event in catalog_set.events:
                self.validators[event.catalog_id] = validator
                self.by_type[event.type] = self.by_type.get(event.type, 0) + 1
                schema = envelope_schema(event, catalog_set.schemas)
                self.schemas[event.key] = (
                    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER),
                    jsonschema_rs.Draft202012Validator(schema, validate_formats=True),
                )
                for example in event.examples:
                    self.seeds.append((event, event.complete_example(example.values)))
        sys.path.insert(0, str(root / "python"))


@pytest.fixture(scope="module")
def judges(tmp_path_factory: pytest.TempPathFactory) -> Judges:
    return Judges(tmp_path_factory.mktemp("property"))


# --- mutations -------------------------------------------------------------------

NAMES = st.sampled_from(["zzextra", "Bad_Name", "meter_id", "data_base64", "time", "id", "source", "subject",
                         "dataversion", "datacontenttype", "dataschema", "specversion", "x" * 25, ""])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12), st.sampled_from(["", "\n", "a\n", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00.000000Z",
                                           "2024-02-30T00:00:00Z", "http://x", "urn:x:y", "application/json", "٣٣",
                                           "application/json garbage", "1.0", "123", "0", "true", "\ud800", "e30=",
                                           # sources of tests/catalogs/source-templates: matching or not
                                           "https://storage.example.com/subscriptions/1/resourceGroups/g",
                                           "https://storage.example.com/subscriptions/1/resourceGroups/g/h",
                                           "urn:example:storage:a:containers", "urn:example:storage::containers"]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, prefix + (index,))
    return found


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for part in path[:-1]:
        value = value[part]
    value[path[-1]] = new


def _delete(value: Any, path: tuple[Any, ...]) -> None:
    for part in path[:-1]:
        value = value[part]
    del value[path[-1]]


@st.composite
def events(draw: Any, seeds: list[tuple[Any, dict[str, Any]]]) -> tuple[Any, str]:
    entry, seed = draw(st.sampled_from(seeds))
    event = copy.deepcopy(seed)
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        paths = _paths(event)
        kind = draw(st.sampled_from(["drop", "null", "retype", "add", "add-data", "snake", "nest", "text"]))
        if kind in ("drop", "null", "retype", "text") and paths:
            path = draw(st.sampled_from(paths))
            if kind == "drop":
                _delete(event, path)
            elif kind == "null":
                _set(event, path, None)
            elif kind == "retype":
                _set(event, path, draw(VALUES))
            else:
                _set(event, path, draw(st.text(max_size=20)))
        elif kind == "add":
            event[draw(NAMES)] = draw(VALUES)
        elif kind == "add-data" and isinstance(event.get("data"), dict):
            event["data"][draw(st.text(min_size=1, max_size=8))] = draw(VALUES)
        elif kind == "snake" and isinstance(event.get("data"), dict) and event["data"]:
            key = draw(st.sampled_from(sorted(event["data"])))
            event["data"][re.sub(r"([A-Z])", lambda m: "_" + m[1].lower(), key)] = event["data"].pop(key)
        elif kind == "nest" and paths:
            path = draw(st.sampled_from(paths))
            depth = draw(st.sampled_from([3, 50, MAX_DEPTH - 5, MAX_DEPTH + 5]))
            value: Any = "x"
            for _ in range(depth):
                value = [value]
            _set(event, path, value)
    text = json.dumps(event, ensure_ascii=False)
    if _holds_surrogate(text):  # as JSON text carries them: \u escapes
        text = json.dumps(event)
    return entry, text


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(child) for child in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(child) for child in value), default=0)
    return 0


def _beyond_int64(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_beyond_int64(child) for child in value.values())
    if isinstance(value, list):
        return any(_beyond_int64(child) for child in value)
    return type(value) is int and not -(2**63) <= value < 2**63


def _holds_surrogate(text: str) -> bool:
    return re.search("[\ud800-\udfff]", text) is not None


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=st.data())
def test_every_judge_gives_one_verdict(judges: Judges, data: Any) -> None:
    from pydantic import ValidationError

    entry, text = data.draw(events(judges.seeds))
    raw = text.encode("utf-8")
    value = json.loads(text)
    module = importlib.import_module(python_package_name(entry.catalog_id))
    try:
        parsed = module.parse_event(raw)
    except (module.EventError, ValidationError):
        parsed = None
    quick = module._fastpath.parse_fast(raw, module.EVENTS)
    if quick is not None:  # what the runtime's fast path takes, its careful path takes alike
        slow = module._parsing._parse_careful(raw, module.EVENTS)
        assert type(slow) is type(quick), text
        for options in ({"mode": "json", "by_alias": True, "exclude_unset": True}, {}):
            assert slow.model_dump(**options) == quick.model_dump(**options), text
        assert slow.model_fields_set == quick.model_fields_set, text
    if _holds_surrogate(json.dumps(value, ensure_ascii=False)):
        # no UTF-8 text can carry a lone surrogate: evcat's judges refuse the event
        # (evcat validate when it reads the JSON); JSON Schema validators cannot tell
        assert parsed is None, text
        return
    if _depth(value) > MAX_DEPTH:  # evcat validate refuses it when it reads the JSON, so does parse_event
        assert parsed is None, text
        return
    if _beyond_int64(value):  # README, Limits: every reader refuses it; JSON Schema validators cannot tell
        assert parsed is None, text
        with pytest.raises(ValueError):
            validate_loads(raw)
        return

    problems = judges.validators[entry.catalog_id].check(value, len(raw))
    errors = [p for p in problems if finding_severity(p.rule, p.setting).name == "ERROR" and "SIZE" not in p.rule]
    verdicts = {"evcat validate": not errors}
    detailed = judges.validators[entry.catalog_id].checker.check(value, wire_size=len(raw))
    verdicts["example check"] = not [p for p in detailed if finding_severity(p.rule, p.setting).name == "ERROR" and "SIZE" not in p.rule]
    verdicts["parse_event"] = parsed is not None
    if isinstance(value, dict):
        key = entry.key
        event_type, dataversion = value.get("type"), value.get("dataversion")
        if isinstance(event_type, str) and (dataversion is None or isinstance(dataversion, str)):
            if (event_type, dataversion) in judges.schemas:
                key = (event_type, dataversion)
            elif dataversion is None:
                key = next((k for k in judges.schemas if k[0] == event_type), entry.key)
        python_judge, rust_judge = judges.schemas[key]
        verdicts["event.schema.json (jsonschema)"] = python_judge.is_valid(value)
        verdicts["event.schema.json (jsonschema-rs)"] = rust_judge.is_valid(value)
    assert len(set(verdicts.values())) == 1, (text, verdicts, [(p.rule, p.message) for p in problems])

    if parsed is not None:  # nothing invented, nothing lost
        sent = {k: v for k, v in value.items() if v is not None or k == "data"}
        assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == sent
