"""The runtime's fast path (issue 15, speed): ``parse_event`` hands JSON to one
pydantic-core validator compiled from the event classes (Python checks
replaced by Rust ones) and leaves what it refuses to the careful path (the
Python checks). What the fast path accepts, the careful path accepts with the
same result; whatever it leaves, the careful path judges. The differential
property test (tests/test_one_verdict_property.py) holds both to that on
random events; here: the named cases at the edge of what the fast path takes.
"""

from __future__ import annotations

import copy
import importlib
import json
import sys
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError

from generator.commands.generate import render
from generator.commands.lint import lint
from generator.naming import python_package_name
from generator.runtime import runtime_files
from generator.runtime._reading import MAX_DEPTH
from generator.runtime._uritemplate import is_template

from .conftest import ROOT

CATALOGS = [ROOT / "catalog", ROOT / "tests" / "catalogs" / "hostile", ROOT / "tests" / "catalogs" / "conformance",
            ROOT / "tests" / "catalogs" / "source-templates"]


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[ModuleType, dict[str, Any]]]:
    root = tmp_path_factory.mktemp("fast-path")
    found = []
    for directory in CATALOGS:
        catalog_set = lint(str(directory)).catalog_set
        for relative, content in render(catalog_set, ["python"])["python"].items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        sys.path.insert(0, str(root / "python"))
        for event in catalog_set.events:
            module = importlib.import_module(python_package_name(event.catalog_id))
            found += [(module, event.complete_example(example.values)) for example in event.examples]
    return found


def fast(module: ModuleType, raw: bytes) -> Any:
    """The fast path's verdict alone: the event, or None where it leaves it."""
    assert module._fastpath._fast_validator(module.EVENTS)[0] is not None
    return module._fastpath.parse_fast(raw, module.EVENTS)


def careful(module: ModuleType, raw: bytes) -> Any:
    try:
        return module._parsing._parse_careful(raw, module.EVENTS)
    except (module.EventError, ValidationError):
        return None


def assert_same(first: Any, second: Any) -> None:
    assert type(first) is type(second)
    wire: dict[str, Any] = {"mode": "json", "by_alias": True, "exclude_unset": True}
    assert first.model_dump(**wire) == second.model_dump(**wire)
    assert first.model_dump() == second.model_dump()  # the Python values too (datetimes by value)
    assert first.model_fields_set == second.model_fields_set
    assert first.__pydantic_extra__ == second.__pydantic_extra__


def judge(module: ModuleType, event: Any) -> tuple[Any, Any]:
    """Both paths on one event: what the fast path accepts, the careful path accepts alike."""
    raw = json.dumps(event, ensure_ascii=False).encode("utf-8") if not isinstance(event, bytes) else event
    quick, slow = fast(module, raw), careful(module, raw)
    if quick is not None:
        assert slow is not None, raw
        assert_same(quick, slow)
    parsed = None
    try:
        parsed = module.parse_event(raw)
    except (module.EventError, ValidationError):
        pass
    assert (parsed is None) == (slow is None), raw
    return quick, slow


def test_every_example_takes_the_fast_path(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    assert examples
    left = []
    for module, example in examples:
        quick, slow = judge(module, example)
        assert slow is not None, example
        if quick is None:
            left.append(example["type"])
    # the hostile catalog's Binary extension (base64 text kept) and Python-named keys
    # are the careful path's; every example of the shipped catalogs is fast
    shipped = {e["type"] for m, e in examples if m.__name__ in ("brp_personen", "meter_data", "zaken")}
    assert not shipped & set(left), left


def _event(examples: list[tuple[ModuleType, dict[str, Any]]], event_type: str) -> tuple[ModuleType, dict[str, Any]]:
    module, example = next((m, e) for m, e in examples if e["type"] == event_type)
    return module, copy.deepcopy(example)


@pytest.mark.parametrize(
    ("change", "fast_takes_it", "accepted"),
    [
        (lambda e: e.update(subject=None), False, True),  # null: unset (JSON format §2.4)
        (lambda e: e.update(time="2024-01-01T00:00:00.000000Z"), True, True),  # text kept
        (lambda e: e.update(time="2024-01-01t00:00:00z"), True, True),
        (lambda e: e.update(time="2024-01-01T00:00:00.5+01:00"), True, True),
        (lambda e: e.update(time="2024-01-01T00:00:00.123456-00:00"), True, True),
        (lambda e: e.update(time="2024-02-30T00:00:00Z"), False, False),
        (lambda e: e.update(time="2024-01-01 00:00:00Z"), False, False),
        (lambda e: e.update(zzextra=1.0), False, True),  # an Integer sent as 1.0
        (lambda e: e.update(zzextra=2**31), False, False),
        (lambda e: e.update(zzextra="a\u0001b"), False, False),
        (lambda e: e.update(zzextra="ok"), True, True),
        (lambda e: e.update(Bad_Name="x"), False, False),
        (lambda e: e.update(data_base64="e30="), False, False),
        (lambda e: e.update(source="urn:x\n"), False, False),
        (lambda e: e.update(id=""), False, False),
        (lambda e: e.update(datacontenttype="application/json garbage"), False, False),
        (lambda e: e.update(sequence="2147483647"), False, True),  # ten digits: careful
        (lambda e: e.update(sequence="2147483648"), False, False),
        (lambda e: e.update(sequence="+42"), True, True),
        (lambda e: e["data"].update(zaakstatusExtra={"a": [1, 2.5, None, True]}), True, True),
        (lambda e: e["data"].update(zaak_status={"a": 1}), True, True),  # an undeclared property
    ],
)
def test_edges_of_the_fast_path(examples: list[tuple[ModuleType, dict[str, Any]]], change: Any, fast_takes_it: bool, accepted: bool) -> None:
    module, event = _event(examples, "nl.overheid.zaken.zaakstatus-gewijzigd")
    change(event)
    quick, slow = judge(module, event)
    assert (slow is not None) == accepted, event
    assert (quick is not None) == fast_takes_it, event
    if slow is not None:  # nothing invented, nothing lost
        sent = {k: v for k, v in event.items() if v is not None}
        assert slow.model_dump(mode="json", by_alias=True, exclude_unset=True) == sent


def test_notification_and_dataversion(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    module, event = _event(examples, "mdm.meter.removed")
    for change, accepted in [({"data": {"x": 1}}, False), ({"data": None}, True), ({"dataversion": "1.0.0"}, False), ({"dataversion": None}, True)]:
        quick, slow = judge(module, {**event, **change})
        assert (slow is not None) == accepted, change
        assert quick is None  # a null attribute or data: the careful path's
    module, event = _event(examples, "mdm.meter.updated")
    del event["dataversion"]  # several dataversions: it must be sent
    assert judge(module, event) == (None, None)


def test_shadowing_python_names_go_careful(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    module, event = _event(examples, "mdm.meter.updated")
    event["data"]["meter_id"] = event["data"].get("meterId", "E00000000035671400")
    quick, slow = judge(module, event)
    assert quick is None
    module, event = _event(examples, "io.example.class-import.from")
    event["json_"] = True  # the Python name of the extension "json"
    quick, slow = judge(module, event)
    assert quick is None
    module, event = _event(examples, "mdm.meter.updated")
    event["data"]["meter\\u005fid"] = "x"  # meter_id, escaped
    raw = json.dumps(event).replace("\\\\u005f", "\\u005f").encode()
    assert json.loads(raw)["data"]["meter_id"] == "x"
    quick, slow = judge(module, raw)
    assert quick is None and slow is not None
    assert slow.data.model_extra == {"meter_id": "x"}


def test_nulls_in_payloads(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    module, event = _event(examples, "mdm.meter.updated")
    event = {**event, "dataversion": "1.0.1", "data": {"meterId": "E00000000035671400", "connectionEan": None}}
    quick, slow = judge(module, event)
    assert quick is None and slow is None  # may be left out, but not null


def _allocation(depth: int) -> Any:
    node: Any = {"ean": "8716871000002", "volumeKwh": 1.5}
    for _ in range(depth):
        node = {"ean": "8716871000002", "volumeKwh": 1.5, "children": [node]}
    return node


@pytest.mark.parametrize("levels", [10, (MAX_DEPTH - 4) // 2, (MAX_DEPTH - 2) // 2, MAX_DEPTH // 2, MAX_DEPTH // 2 + 3])
def test_recursive_payload_at_the_depth_bound(examples: list[tuple[ModuleType, dict[str, Any]]], levels: int) -> None:
    module, event = _event(examples, "mdm.allocation.calculated")
    event["data"]["root"] = _allocation(levels)
    depth = 3 + 2 * levels  # event, data, root, then a list and an object per level
    quick, slow = judge(module, event)
    assert (slow is not None) == (depth <= MAX_DEPTH), depth
    assert (quick is not None) == (depth <= MAX_DEPTH), depth  # recursion unrolled to the bound
    assert module._fastpath._fast_validator(module.EVENTS).bounded  # no counting of brackets first


def test_undeclared_property_depth(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    module, event = _event(examples, "nl.overheid.zaken.zaakstatus-gewijzigd")
    for depth in (1, 16, 17, MAX_DEPTH - 2, MAX_DEPTH - 1):
        value: Any = "x"
        for _ in range(depth):
            value = [value]
        event["data"]["deep"] = value
        quick, slow = judge(module, event)
        assert (slow is not None) == (depth + 2 <= MAX_DEPTH), depth
        assert (quick is not None) == (depth <= 16), depth  # deeper: the careful path's


def test_not_json(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    module, event = _event(examples, "nl.overheid.zaken.zaakstatus-gewijzigd")
    text = json.dumps(event)
    for raw in [b'{"a": "\\ud800"}', text.replace('"ZAAK', '"\\ud800ZAAK', 1).encode(), b"[]", b"", b"nul", text.replace('"data": {', '"data": {"huge": 1e400, ', 1).encode(), text.encode("utf-16")]:
        assert judge(module, raw) == (None, None), raw


def test_the_fast_path_is_compiled_once_per_registry(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    module, _ = _event(examples, "mdm.meter.updated")
    first = module._fastpath._fast_validator(module.EVENTS)
    assert module._fastpath._fast_validator(module.EVENTS) is first
    # the event classes stay complete pydantic models with their own validators
    for cls in module.EVENTS.values():
        assert cls.__pydantic_complete__ is True
        assert "__pydantic_complete__" in cls.__dict__


def test_the_fast_path_runs_no_python_for_the_shipped_examples(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    """What makes it fast: pydantic-core alone (had pydantic-core reused the
    classes' own validators, each Python check would run here again)."""
    called: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            called.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    checked = 0
    for module, example in examples:
        if module.__name__ not in ("brp_personen", "zaken", "meter_data"):
            continue
        if example.get("validfrom", "").endswith(".000000Z"):
            continue  # a Timestamp extension holding .000000Z: Python keeps that text
        cls = module.EVENTS[(example["type"], example.get("dataversion"))]
        if cls.catalog_source is not None and is_template(cls.catalog_source) and cls.source_match == "error":
            continue  # CE-SOURCE-MATCH as an error on a source template: matched in Python (source_check)
        checked += 1
        value = json.loads(json.dumps(example))  # the values parse_fast validates
        validator = module._fastpath._fast_validator(module.EVENTS).validator
        sys.setprofile(profile)
        try:
            validator.validate_python(value)
        finally:
            sys.setprofile(None)
    runtime = tuple(runtime_files())  # the runtime's modules, by file name
    assert [name for name in called if name.split(":")[0].endswith(runtime) or "pydantic" in name] == []
    assert checked >= 9  # CE-SOURCE-MATCH error on an exact source (BRP, mdm.meter.removed) and gt/ge numbers too


@pytest.mark.parametrize("value", [0, 0.0, -0.0, 5e-324, -5e-324, 1, -1, 1.5, 1e308, True, "1", None, 2**63, -(2**63) - 1])
def test_number_bounds_in_rust_give_the_careful_verdict(examples: list[tuple[ModuleType, dict[str, Any]]], value: Any) -> None:
    """gt/ge on a payload ``number`` (StrictInt | StrictFloat: pydantic puts the
    bound in a Python validator behind the union): the fast path puts it in
    each number schema of the union."""
    module, event = next((m, copy.deepcopy(e)) for m, e in examples if (e["type"], e.get("dataversion")) == ("mdm.meter.updated", "2.0.0"))
    event["data"] = {"meter": {"meterId": "E00000000035671400", "product": "gas",
                               "registers": [{"registerId": "1", "direction": "production", "tariff": "low",
                                              "multiplicationFactor": value}]}}  # exclusiveMinimum: 0
    quick, slow = judge(module, event)
    positive = type(value) in (int, float) and value > 0 and (type(value) is float or value < 2**63)
    assert (slow is not None) == positive, value
    assert (quick is not None) == positive, value
    module, event = _event(examples, "mdm.reading.validated")
    event["data"]["registers"][0]["valueKwh"] = value  # minimum: 0
    quick, slow = judge(module, event)
    at_least_zero = type(value) in (int, float) and value >= 0 and (type(value) is float or value < 2**63)
    assert (slow is not None) == at_least_zero, value
    assert (quick is not None) == at_least_zero, value


@pytest.mark.parametrize(
    ("event_type", "level"),
    [("mdm.meter.removed", "error"), ("mdm.meter.updated", "warning"), ("com.example.storage.error.blob-created", "error")],
)
def test_source_match_in_the_fast_path(examples: list[tuple[ModuleType, dict[str, Any]]], event_type: str, level: str) -> None:
    """CE-SOURCE-MATCH (rules.md): at error level a source other than the
    catalog's is refused by both paths (an exact source as a Rust literal, a
    template in Python); below it, reading never refuses one."""
    module, event = _event(examples, event_type)
    cls = module.EVENTS[(event["type"], event.get("dataversion"))]
    assert cls.source_match == level
    quick, slow = judge(module, event)
    assert quick is not None and slow is not None
    event["source"] = "urn:example:somewhere-else"
    quick, slow = judge(module, event)
    assert (slow is not None) == (level != "error")
    assert (quick is not None) == (level != "error")


def test_text_input(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    module, event = _event(examples, "nl.overheid.zaken.zaakstatus-gewijzigd")
    text = json.dumps(event, ensure_ascii=False)
    assert module.parse_event(text).to_dict() == module.parse_event(text.encode()).to_dict()
    assert module.parse_event(bytearray(text.encode())).to_dict() == event
    with pytest.raises(module.EventError):
        module.parse_event(text.replace('"ZAAK', '"\ud800ZAAK', 1))  # a lone surrogate in str


def test_registries_made_on_the_fly(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    """A registry equal to another shares its compiled fast path, and registries
    made per call do not pile up."""
    module, event = _event(examples, "mdm.meter.updated")
    runtime = module._fastpath
    raw = json.dumps(event).encode()
    first = runtime._fast_validator(module.EVENTS)
    for _ in range(3 * runtime._FAST_KEPT):
        registry = dict(module.EVENTS)
        assert runtime._fast_validator(registry) is first
        assert module._parsing.parse_event(raw, registry).to_dict() == event
    assert len(runtime._FAST) <= runtime._FAST_KEPT


def test_binary_mode_readers_of_every_binding_take_the_fast_path(
        examples: list[tuple[ModuleType, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26: binary-mode ``from_http`` and the Kafka, AMQP and MQTT
    readers go through the structured fast path (one pydantic-core call), and
    give what the careful reading of the same mapping gives: every shipped
    example that ``from_http`` reads fast in binary mode, each broker reader
    reads fast too (before, they read the careful way: 0 of them); AMQP's
    native values excepted."""
    shipped = [(m, e) for m, e in examples if m.__name__ in ("brp_personen", "meter_data", "zaken")]
    fast_in_http = 0
    for module, example in shipped:
        event = module.parse_event(json.dumps(example, ensure_ascii=False))
        headers, body = module.to_http(event, "binary")
        attributes = {name[3:]: value for name, value in headers.items() if name.startswith("ce-")}
        content = headers.get("content-type", "")
        http_fast = module._http.binary_fast(attributes, content, body, module.EVENTS) is not None
        fast_in_http += http_fast
        taken: list[Any] = []
        original = module._bindings.binary_fast
        monkeypatch.setattr(module._bindings, "binary_fast",
                            lambda *arguments: taken.append(original(*arguments)) or taken[-1])
        _, kafka_headers, value = module.to_kafka(event, "binary")
        content_type, properties, amqp_body = module.to_amqp(event, "binary")
        mqtt_type, user_properties, payload = module.to_mqtt(event, "binary")
        read = [
            module.from_kafka(kafka_headers, value),
            module.from_amqp(content_type, properties, amqp_body),
            module.from_mqtt(mqtt_type, user_properties, payload),
        ]
        monkeypatch.undo()
        mapping = module._cloudevents.structured_from_binary(attributes, content or None, body, module.EVENTS)
        carefully = module._parsing._parse_careful(mapping, module.EVENTS)
        for parsed in read:
            assert_same(parsed, carefully)
        if http_fast:
            # AMQP's native values (a timestamp as a datetime, an Integer as
            # an int) are converted the careful way; text ones are read fast
            native = any(not isinstance(value, str) for value in properties.values())
            assert len(taken) == 3 - native and all(parsed is not None for parsed in taken), (example["type"], taken)
    assert fast_in_http >= len(shipped) // 2, (fast_in_http, len(shipped))


def _binary_careful(module: ModuleType, headers: dict[str, str], body: bytes) -> Any:
    """from_http's careful way alone (structured_from_binary, then the models)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    content = lowered.get("content-type", "")
    attributes = {name[3:]: value for name, value in lowered.items() if name.startswith("ce-")}
    mapping = module._cloudevents.structured_from_binary(
        attributes, content or None, body, module.EVENTS, percent_encoded=True)
    return module._parsing.validated(module._models.event_class(mapping, module.EVENTS), mapping)


def _outcome(read: Any) -> Any:
    try:
        return read()
    except (ValueError, ValidationError) as error:  # EventError is a ValueError
        return type(error).__name__


@pytest.mark.parametrize("change", [
    lambda h, b: (h, b),
    lambda h, b: ({**h, "ce-subject": "a\ud800b"}, b),  # a lone surrogate in a header
    lambda h, b: ({**h, "ce-subject": "a\u00e9b"}, b),  # text beyond ASCII
    lambda h, b: ({**h, "ce-subject": "a\x01b"}, b),  # a control character
    lambda h, b: ({k: v for k, v in h.items() if k != "content-type"} | {"ce-datacontenttype": "text/plain"}, b),
    lambda h, b: ({k: v for k, v in h.items() if k != "content-type"}, b),  # no content type: JSON
    lambda h, b: ({**h, "content-type": "text/plain"}, b),  # data_base64
    lambda h, b: ({**h, "content-type": "application/json; charset=latin-1"}, b),
    lambda h, b: (h, b[:-1] + b', "meterId": "E00000000035671400"}'),  # a name twice in the payload
    lambda h, b: (h, b[:-1] + b', "big": 123456789012345678901234}'),  # beyond int64
    lambda h, b: (h, b[:-1] + b', "meter_id": "x"}'),  # a field's Python name
    lambda h, b: (h, b[:-1] + b', "n": NaN}'),
    lambda h, b: (h, b"[" * 200 + b"]" * 200),
    lambda h, b: (h, b"\xef\xbb\xbf" + b),  # a byte-order mark
    lambda h, b: (h, b""),  # data left out
    lambda h, b: ({**h, "ce-data": "x"}, b),
    lambda h, b: ({**h, "ce-extra": "x"}, b),  # an undeclared extension
    lambda h, b: ({**h, "ce-Extra_Name": "x"}, b),  # not an attribute name
    lambda h, b: ({**h, "ce-dataversion": "9.9.9"}, b),
    lambda h, b: ({k: v for k, v in h.items() if k != "ce-dataversion"}, b),
])
def test_binary_fast_path_gives_the_careful_verdict(
        examples: list[tuple[ModuleType, dict[str, Any]]], change: Any) -> None:
    """Binary-mode from_http reads the message's mapping in one pydantic-core
    call on Python values (no JSON text written): whatever it accepts, the
    careful way (structured_from_binary, then the models) accepts alike, and
    what it leaves gets the careful verdict."""
    module, event = _event(examples, "mdm.meter.updated")
    headers, body = module.to_http(module.parse_event(json.dumps(event)), "binary")
    headers, body = change(dict(headers), body)
    lowered = {name.lower(): value for name, value in headers.items()}
    attributes = {name[3:]: value for name, value in lowered.items() if name.startswith("ce-")}
    quick = module._http.binary_fast(attributes, lowered.get("content-type", ""), body, module.EVENTS)
    slow = _outcome(lambda: _binary_careful(module, headers, body))
    read = _outcome(lambda: module.from_http(headers, body))
    if quick is not None:
        assert not isinstance(slow, str), slow
        assert_same(quick, slow)
    if isinstance(slow, str):
        assert read == slow
    else:
        assert_same(read, slow)


def test_binary_fast_path_converts_integer_and_boolean_attributes(
        examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    """Integer and Boolean extension attributes (zaken's prioriteit and
    spoedeisend) are converted from their header text as structured_from_binary
    converts them, and the message is read fast; text no such type has is
    refused alike."""
    module, event = _event(examples, "nl.overheid.zaken.zaakstatus-gewijzigd")
    headers, body = module.to_http(module.parse_event(json.dumps(event)), "binary")
    attributes = {name[3:]: value for name, value in headers.items() if name.startswith("ce-")}
    assert "prioriteit" in attributes and "spoedeisend" in attributes
    quick = module._http.binary_fast(attributes, headers["content-type"], body, module.EVENTS)
    assert quick is not None
    assert_same(quick, _binary_careful(module, headers, body))
    for name, text in [("prioriteit", "three"), ("prioriteit", "99999999999"), ("spoedeisend", "yes"),
                       ("prioriteit", "+3"), ("spoedeisend", "TRUE")]:
        changed = {**headers, f"ce-{name}": text}
        slow = _outcome(lambda: _binary_careful(module, changed, body))
        read = _outcome(lambda: module.from_http(changed, body))
        if isinstance(slow, str):
            assert read == slow, (name, text)
        else:
            assert_same(read, slow)


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def change(event: dict[str, Any]) -> None:
        parent: Any = event
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = value
    return change


REGISTERS = ("data", "meter", "registers")
NUMBERS = [2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 10**30, 12345678901234567890, 1.5, 1e300, 3]


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("path", [
    (*REGISTERS, 2, "multiplicationFactor"),  # Number (int or float), gt 0
    ("data", "meter", "zzExtra"),  # an undeclared property of a closed model: refused
    ("data", "zzExtra"),  # an undeclared property of an open model: any JSON
    ("data", "zzList"),  # ... in an array, below
    ("zzextra",),  # an undeclared extension attribute: Integer within int32
])
def test_integers_beyond_int64_are_refused_by_the_fast_validator_itself(
        examples: list[tuple[ModuleType, dict[str, Any]]], path: tuple[Any, ...], number: Any) -> None:
    """The fast validator bounds every integer to int64 and takes an int for a
    float only within it (``_fastpath._Int64``), so parse_fast no longer looks
    for 19-digit numbers in the text: an integer beyond int64 anywhere is left
    to the careful path, which refuses it; one within is read alike."""
    module, event = next((m, copy.deepcopy(e)) for m, e in examples
                         if e["type"] == "mdm.meter.updated" and e.get("dataversion") == "2.0.0")
    assert module._fastpath.fast_path(module.EVENTS).int64
    _set(path, [number] if path[-1] == "zzList" else number)(event)
    raw = json.dumps(event).encode()
    assert not module._reading.may_hold_long_integers(raw) or abs(number) >= 10**18
    quick, slow = judge(module, event)
    beyond = type(number) is int and not -(2**63) <= number < 2**63
    if beyond:
        assert quick is None and slow is None
        with pytest.raises(module.EventError, match="beyond 64 bits"):
            module.parse_event(raw)
    elif slow is not None:
        assert quick is not None  # read fast, and alike (judge)


def test_text_checks_the_int64_bound_trusts_refuse_numbers(examples: list[tuple[ModuleType, dict[str, Any]]]) -> None:
    """The runtime's checks of text that _Int64 lets take a raw value refuse
    an int (and so any integer beyond int64)."""
    module = examples[0][0]
    for name in module._fastpath._TEXT_CHECKS:
        check = getattr(module._values, name)
        for value in (2**64, -(2**64), 1, 1.5):
            with pytest.raises(ValueError):
                check(value)


BOUNDED = [  # (the payload number's keywords, values sent; every value is read alike by both paths)
    ({"minimum": 0.5, "exclusiveMaximum": 2.5}, [0, 0.25, 0.5, 1, 2, 2.4, 2.5, 3, -1]),
    ({"maximum": 99.5}, [12.5, 99, 99.5, 100, 100.5]),
    ({"maximum": 1e19}, [1, 2**62, 2**63 - 1, 1e19, 1.5e19]),
    # An int the int schema refuses must not pass as a float (f64 rounds it
    # up), and a limit f64 cannot hold must not round (review findings).
    ({"minimum": 9007199254740996}, [9007199254740995, 9007199254740996, 9007199254740995.0, 9007199254740997]),
    ({"minimum": 9007199254740993}, [9007199254740992, 9007199254740992.0, 9007199254740993, 9007199254740994.0]),
    ({"exclusiveMaximum": -9007199254740993}, [-9007199254740992, -9007199254740994, -9007199254740994.0]),
]


@pytest.mark.parametrize(("keywords", "values"), BOUNDED)
def test_bounds_on_a_number_union(tmp_path_factory: pytest.TempPathFactory, keywords: dict[str, Any],
                                  values: list[Any]) -> None:
    """Bounds on a payload ``number``: pydantic puts them behind its
    int | float union; the fast path puts each into the number schemas that
    compare as Python does, and leaves the rest in Python. (A fraction pushed
    into the int schema broke the registry's compile, found by the schema
    property test; an int refused by the bounded int schema passed as a
    rounded float, found by review.) Both paths give one verdict and value,
    and the fast path still compiles."""
    from .test_schema_property import ENVELOPE, Judges

    catalog = {
        "catalog": "drawn", "title": "Bounds", "version": "1.0.0", "profile": "cloudevents",
        "producer": {"source": ENVELOPE["source"]}, "defaults": {"datacontenttype": "application/json"},
        "events": [{"type": "org.example.bounds", "dataversion": "1.0.0", "title": "Bounds", "description": "Bounds.",
                    "data": {"type": "object", "description": "The payload.", "properties": {
                        "n": {"type": "number", **keywords, "description": "N."}}}}],
    }
    judges = Judges(catalog, tmp_path_factory.mktemp("bounds"))
    assert judges.errors == []
    judges.generate()
    module = judges.module
    assert module._fastpath.fast_path(module.EVENTS).validator is not None
    for value in values:
        raw = json.dumps({**ENVELOPE, "type": "org.example.bounds", "data": {"n": value}}).encode()
        quick, slow = fast(module, raw), careful(module, raw)
        if quick is not None:
            assert slow is not None, value
            assert_same(quick, slow)
        if slow is not None:  # the value as sent
            assert slow.data.n == value and type(slow.data.n) is type(value), value
