"""`evcat import events`: a catalog inferred from sample CloudEvents (contract §10).

The property: for drawn sets of sample events, the inferred catalog lints
without errors and the real `evcat validate` accepts every sample.
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator import cli
from generator.importers import Imported, Options, reader
from generator.importers.events import ENUM_MAX_VALUES, ENUM_MIN_SAMPLES, MAP_MIN_KEYS, infer

from .conftest import ROOT

read_events = reader("events")


def write_catalog(imported: Imported, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, document in imported.documents.items():
        (directory / name).write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return directory


def evcat(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def event(i: int, data: Any = None, **attributes: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"specversion": "1.0", "id": f"id-{i}", "source": "urn:example:shop", "type": "com.example.order.created"}
    result.update(attributes)
    if data is not None:
        result["data"] = data
    return result


# -- the inference rules, one by one -------------------------------------------


def test_integer_number_and_nullable() -> None:
    assert infer([1, 2]) == {"type": "integer"}
    assert infer([1, 2.5]) == {"type": "number"}
    assert infer([1, None]) == {"type": ["integer", "null"]}
    assert infer([True, False]) == {"type": "boolean"}
    assert infer(["a", 1]) == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert infer([None]) == {"type": "null"}


def test_required_is_what_every_sample_has_and_nested_values_merge() -> None:
    schema = infer([{"a": 1, "b": {"c": [1]}}, {"a": 2, "b": {"c": [], "d": "x"}}])
    assert schema["required"] == ["a", "b"]
    assert schema["properties"]["b"] == {
        "type": "object",
        "properties": {"c": {"type": "array", "items": {"type": "integer"}}, "d": {"type": "string"}},
        "required": ["c"],
    }


@pytest.mark.parametrize(
    "values, expected",
    [
        (["2024-01-01T10:00:00Z", "2024-02-29T23:59:59.123+01:00"], "date-time"),
        (["2024-01-01", "1999-12-31"], "date"),
        (["0b6f2c0e-8a45-4e4f-9d3e-1b2c3d4e5f60"], "uuid"),
        (["a@example.org", "b.c@example.nl"], "email"),
        (["https://example.org/a", "urn:isbn:0451450523"], "uri"),
        (["2024-01-01", "yesterday"], None),  # not every sample matches: no format
        (["2024-01-01T10:00:00Z\n"], None),  # the judges' grammar: no trailing newline
    ],
)
def test_formats_only_where_every_sample_matches(values: list[str], expected: str | None) -> None:
    assert infer(values).get("format") == expected


def test_enums_for_small_closed_sets_only() -> None:
    enough = ["new", "paid", "sent"] * ENUM_MIN_SAMPLES
    assert infer(enough) == {"type": "string", "enum": ["new", "paid", "sent"]}
    assert "enum" not in infer(enough[: ENUM_MIN_SAMPLES - 1])  # too few samples to call it closed
    many = [f"v{i % (ENUM_MAX_VALUES + 1)}" for i in range(100)]
    assert "enum" not in infer(many)  # too many distinct values
    assert infer(["x"] * ENUM_MIN_SAMPLES + [None])["enum"] == ["x", None]


def test_maps_become_additional_properties() -> None:
    maps = [{f"sku{i}-{j}": i for j in range(3)} for i in range(MAP_MIN_KEYS)]
    assert infer(maps) == {"type": "object", "additionalProperties": {"type": "integer"}}
    records = [{f"field{j}": i for j in range(MAP_MIN_KEYS)} for i in range(5)]  # many keys, every object has them
    assert "properties" in infer(records)


# -- reading and notes -----------------------------------------------------------


def test_one_event_type_per_type_and_dataversion(tmp_path: Path) -> None:
    samples = [
        event(1, {"a": 1}, dataversion="1.0.0"),
        event(2, {"a": 1, "b": "x"}, dataversion="2.0.0"),
        event(3, {"a": 2}, dataversion="1.0.0", type="com.example.order.paid"),
        event(4, None, type="com.example.ping"),
    ]
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(samples))
    imported = read_events([path], Options())
    (document,) = imported.documents.values()
    keys = [(e["type"], e.get("dataversion")) for e in document["events"]]
    assert keys == [("com.example.order.created", "1.0.0"), ("com.example.order.created", "2.0.0"),
                    ("com.example.order.paid", "1.0.0"), ("com.example.ping", None)]
    assert "data" not in document["events"][3]  # a notification: no sample had data


def test_what_is_not_a_cloudevent_is_a_located_note(tmp_path: Path) -> None:
    lines = [json.dumps(event(1, {"a": 1})), "{not json", json.dumps({"hello": 1}),
             json.dumps(event(2, {"a": 1}, specversion="0.3")), json.dumps(event(3, data_base64="AAAA"))]
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join(lines) + "\n")
    imported = read_events([path], Options())
    located = {(note.line, note.pointer) for note in imported.notes if note.file.endswith("samples.jsonl")}
    assert {(2, ""), (3, "/specversion"), (4, "/specversion"), (5, "/data_base64")} <= located
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([event(1, {"a": 1}), {"type": "x"}]))
    notes = read_events([batch], Options()).notes
    assert any(note.pointer == "/specversion" and "event 1 of the batch" in note.message for note in notes)


def test_extensions_and_context_attributes(tmp_path: Path) -> None:
    samples = [event(i, {"a": i}, subject=f"s{i}", partitionkey=f"p{i}", priority=i, urgent=i % 2 == 0,
                     **({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"} if i else {}))
               for i in range(4)]
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(samples))
    (document,) = read_events([path], Options()).documents.values()
    (entry,) = document["events"]
    assert entry["extensions"]["partitionkey"]["type"] == "String"
    assert entry["extensions"]["priority"]["type"] == "Integer"
    assert entry["extensions"]["urgent"]["type"] == "Boolean"
    assert entry["extensions"]["partitionkey"].get("required") is True
    assert "required" not in entry["extensions"]["traceparent"]  # not in every sample
    assert "subject" in entry
    assert len(entry["examples"]) == 3


# -- the property: evcat validate accepts every sample under the inferred catalog ---

# Property names as real payloads have them: lowerCamelCase mostly, snake_case,
# PascalCase and odd ones too (the import writes the PAY-CAMELCASE overrides, §9).
_KEYS = st.one_of(st.from_regex(r"\A[a-z][a-zA-Z0-9]{0,7}\Z"), st.from_regex(r"\A[a-zA-Z_][a-zA-Z0-9_-]{0,7}\Z"))
_FORMATTED = st.sampled_from([
    "2024-05-01T12:00:00Z", "2023-12-31T23:59:59.5+02:00", "2024-05-01", "2000-02-29",
    "6f1c2b9e-1d2a-4c3b-8e4f-5a6b7c8d9e0f", "a@example.org", "https://example.org/x?y=1", "urn:example:a",
    "new", "paid", "", "2024-13-01",
])
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False), _FORMATTED, st.text(max_size=12),
)
_JSON = st.recursive(
    _SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_KEYS, children, max_size=5)),
    max_leaves=12,
)
_EXTENSION_NAMES = st.from_regex(r"\A[a-z][a-z0-9]{0,6}\Z").filter(
    lambda name: name not in ("specversion", "id", "source", "type", "subject", "time", "data", "dataschema",
                              "dataref", "sequence", "dataversion")
)


@st.composite
def sample_sets(draw: st.DrawFn) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = []
    for number in range(draw(st.integers(min_value=1, max_value=3))):
        event_type = f"com.example.t{number}"
        has_data = draw(st.booleans()) or number == 0
        dataversion = draw(st.sampled_from([None, "1.0.0", "2.3.4"]))
        # a payload shape shared by the type's samples, each sample varying it
        base = draw(st.dictionaries(_KEYS, _JSON, max_size=5))
        scalar = draw(st.booleans()) and draw(st.booleans())  # payloads that are not objects, now and then
        extensions = draw(st.dictionaries(_EXTENSION_NAMES, st.sampled_from(["str", "int", "bool"]), max_size=2))
        for index in range(draw(st.integers(min_value=1, max_value=25))):
            sample: dict[str, Any] = {"specversion": "1.0", "id": f"{number}-{index}", "type": event_type,
                                      "source": draw(st.sampled_from(["urn:example:a", "urn:example:a", "/b/c"]))}
            if dataversion is not None:
                sample["dataversion"] = dataversion
            if draw(st.booleans()):
                sample["subject"] = draw(st.text(string.ascii_letters, min_size=1, max_size=5))
            if draw(st.booleans()):
                sample["time"] = "2024-05-01T12:00:00Z"
            for name, kind in extensions.items():
                if draw(st.booleans()):
                    sample[name] = draw({"str": st.text(string.ascii_letters, min_size=1, max_size=5),
                                         "int": st.integers(-(2**31), 2**31 - 1), "bool": st.booleans()}[kind])
            if has_data and scalar:
                sample["data"] = draw(_JSON.filter(lambda value: value is not None))  # null data is no data (§5)
            elif has_data:
                data = dict(base)
                data.update(draw(st.dictionaries(_KEYS, _JSON, max_size=3)))
                for key in draw(st.lists(st.sampled_from(sorted(base)), max_size=2)) if base else []:
                    data.pop(key, None)
                sample["data"] = data
            samples.append(sample)
    return draw(st.permutations(samples))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                  HealthCheck.function_scoped_fixture])
@given(samples=sample_sets(), lines=st.booleans())
def test_validate_accepts_every_sample_under_the_inferred_catalog(
    samples: list[dict[str, Any]], lines: bool, tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path_factory.mktemp("samples")
    path = folder / ("samples.jsonl" if lines else "samples.json")
    path.write_text("\n".join(json.dumps(s) for s in samples) + "\n" if lines else json.dumps(samples), encoding="utf-8")
    catalog = folder / "catalog"
    code, output = evcat(capsys, "import", "events", str(path), "-o", str(catalog))
    assert code == 0, output
    assert "not carried" not in output, output
    code, output = evcat(capsys, "lint", str(catalog))
    assert code == 0, output
    code, output = evcat(capsys, "validate", str(catalog), str(path))
    assert code == 0, output
    assert f"{len(samples)} of {len(samples)} events valid" in output, output


def test_hostile_samples_are_notes_not_tracebacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nesting beyond every judge's limit, in JSON lines and in a batch, a
    BOM, a number beyond 64 bits: located notes, never a RecursionError."""
    deep: Any = 1
    for _ in range(900):
        deep = {"a": deep}
    lines = tmp_path / "deep.jsonl"
    lines.write_text(json.dumps(event(1, deep)) + "\n" + json.dumps(event(2, {"a": 1})) + "\n")
    batch = tmp_path / "deep.json"
    batch.write_text(json.dumps([event(3, [[[[deep]]]])]))
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(event(4, {"a": 1})).encode() + b"\n" + json.dumps(event(5, {"a": 2})).encode() + b"\n")
    big = tmp_path / "big.jsonl"
    big.write_text(json.dumps(event(6, {"n": 1})) + "\n" + json.dumps(event(7, {"n": 2**70})) + "\n")
    catalog = tmp_path / "catalog"
    code, output = evcat(capsys, "import", "events", str(lines), str(batch), str(bom), str(big), "-o", str(catalog))
    assert code == 0, output
    assert "Traceback" not in output and "deep.jsonl:1:" in output and "deep.json:" in output and "bom.jsonl:1:" in output, output
    assert re.search(r"big\.jsonl:2:\d+: .*/data/n", output), output  # the judges' limit, not a number inferred from it
    (document,) = (yaml.safe_load(file.read_text()) for file in catalog.glob("*.yaml"))
    assert document["events"][0]["data"]["properties"]["n"] == {"type": "integer"}
    code, output = evcat(capsys, "validate", str(catalog), str(lines), str(bom), str(big))
    assert "3 of 6 events valid" in output, output  # the deep one, the one after a BOM, the big one: refused by the judge too  # the deep one and the one after a BOM: refused by the judge too


def test_realistic_samples_of_the_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The benchmark's shop events (bench/import_events_bench.py), fewer of
    them: what is inferred reads as a person would write it, and evcat
    validate accepts every sample."""
    import importlib.util
    import sys

    saved = list(sys.path)  # the bench script puts bench/ first on sys.path when imported
    try:
        spec = importlib.util.spec_from_file_location("import_events_bench", ROOT / "bench" / "import_events_bench.py")
        assert spec is not None and spec.loader is not None
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
    finally:
        sys.path[:] = saved
    write_events = bench.write_events

    samples = tmp_path / "shop.jsonl"
    write_events(samples, 3000)
    catalog = tmp_path / "catalog"
    code, output = evcat(capsys, "import", "events", str(samples), "-o", str(catalog))
    assert code == 0, output
    (document,) = (yaml.safe_load(file.read_text()) for file in catalog.glob("*.yaml"))
    events = {(e["type"], e["dataversion"]): e for e in document["events"]}
    assert len({event_type for event_type, _ in events}) == 20
    order = events[("com.example.shop.order.created", "2.0.0")]
    data = order["data"]
    assert data["properties"]["orderId"] == {"type": "string", "format": "uuid"}
    assert data["properties"]["placedAt"] == {"type": "string", "format": "date-time"}
    assert data["properties"]["currency"] == {"type": "string", "enum": ["EUR", "GBP", "SEK", "USD"]}
    assert data["properties"]["labels"]["additionalProperties"] == {"type": "string", "enum": ["a", "b", "c"]}
    assert data["properties"]["couponCode"]["type"] == ["string", "null"] and "couponCode" not in data["required"]
    line = data["properties"]["lines"]["items"]
    assert line["properties"]["discount"] == {"type": ["number", "null"]}
    assert line["properties"]["quantity"] == {"type": "integer"}
    assert data["properties"]["shippingAddress"]["required"] == ["street", "postalCode", "city", "country"]
    assert order["extensions"]["partitionkey"] == {"type": "String", "required": True, "description": order["extensions"]["partitionkey"]["description"]}
    assert "required" not in order["extensions"]["traceparent"]
    assert order["datacontenttype"] == "application/json" and "subject" in order
    shipment = events[("com.example.shop.shipment.created", "1.0.0")]["data"]["properties"]
    assert shipment["trackingUrl"]["format"] == "uri" and shipment["deliverBy"]["format"] == "date"
    customer = events[("com.example.shop.customer.created", "1.0.0")]["data"]["properties"]
    assert customer["email"]["format"] == "email" and customer["marketingOptIn"] == {"type": "boolean"}
    code, output = evcat(capsys, "lint", str(catalog))
    assert code == 0, output
    code, output = evcat(capsys, "validate", str(catalog), str(samples))
    assert code == 0 and "3000 of 3000 events valid" in output, output


@pytest.mark.slow
def test_the_generated_package_reads_every_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Another judge (contract §4.1): the package `evcat generate` writes from
    the inferred catalog parses every sample, names in any case, values of
    several types, maps, nullable enums included, and gives it back as sent."""
    samples = []
    for i in range(40):
        samples.append(event(i, {
            "snake_case": i, "Mixed": "a" if i % 2 else 1, "maybe": None if i % 3 else "on",
            "status": ["new", "paid"][i % 2] if i % 5 else None, "items": [1, "two", {"k": i % 2 == 0}],
            "labels": {f"l{i}-{j}": j for j in range(2)}, "deep": {"a": {"b": [None, 1.5, i]}},
            "at": f"2024-05-{i % 28 + 1:02d}T10:00:00Z", "on": f"2024-06-{i % 28 + 1:02d}",
            "ref": f"6f1c2b9e-1d2a-4c3b-8e4f-5a6b7c8d9e{i:02d}", "mail": f"u{i}@example.org",
            "link": f"https://example.org/items/{i}?q=a%20b",
        }, subject=f"s{i}", region="eu"))
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join(json.dumps(sample) for sample in samples) + "\n")
    catalog, out = tmp_path / "catalog", tmp_path / "out"
    code, output = evcat(capsys, "import", "events", str(path), "-o", str(catalog), "--catalog", "inferred-shop")
    assert code == 0, output
    (document,) = (yaml.safe_load(file.read_text()) for file in catalog.glob("*.yaml"))
    formats = {name: schema.get("format") for name, schema in document["events"][0]["data"]["properties"].items()}
    assert formats | {"at": "date-time", "on": "date", "ref": "uuid", "mail": "email", "link": "uri"} == formats
    code, output = evcat(capsys, "generate", str(catalog), "-o", str(out), "--only", "python")
    assert code == 0, output
    import importlib
    import sys

    sys.path.insert(0, str(out / "python"))
    try:
        package = importlib.import_module("inferred_shop")
        for sample in samples:
            parsed = package.parse_event(json.dumps(sample))
            assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == sample
    finally:
        sys.path.remove(str(out / "python"))
        for name in [name for name in sys.modules if name == "inferred_shop" or name.startswith("inferred_shop.")]:
            del sys.modules[name]


def test_many_like_notes_are_counted_not_listed(tmp_path: Path) -> None:
    from generator.importers.events import MAX_NOTES_PER_KIND

    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join([json.dumps(event(0, {"a": 1}))] + [json.dumps({"n": i}) for i in range(MAX_NOTES_PER_KIND + 10)]) + "\n")
    notes = read_events([path], Options()).notes
    listed = [note for note in notes if note.pointer == "/specversion"]
    assert [note.line for note in listed] == list(range(2, MAX_NOTES_PER_KIND + 2))
    assert any(note.message.startswith("10 more like") for note in notes)
