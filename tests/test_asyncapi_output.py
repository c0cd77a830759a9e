"""The AsyncAPI documents, checked by the official parser and by Spectral."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.commands.lint import lint
from generator.render import render_all
from generator.render.asyncapi import Settings, units

from .conftest import ROOT, run_evcat


def generated(tmp_path: Path, catalog: Path = ROOT / "catalog", version: str = "3.0.0") -> list[Path]:
    result = lint(str(catalog))
    assert not result.has_errors
    files = render_all(units(result.catalog_set, Settings(version)))
    paths = []
    for relative, content in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        paths.append(path)
    return sorted(paths)


# The shipped catalogs and every test catalog that generates.
ALL_CATALOGS = [ROOT / "catalog", ROOT / "tests" / "catalogs" / "hostile", ROOT / "tests" / "catalogs" / "conformance"]


def parse(node_tools: Path, paths: list[Path]) -> dict[str, dict[str, Any]]:
    """{file: {parser version: report}} from the latest 3.x parser and 3.4.0, in one node process."""
    run = subprocess.run(
        ["node", str(node_tools / "validate-asyncapi.mjs"), *map(str, paths)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    results: dict[str, dict[str, Any]] = json.loads(run.stdout)
    return results


def test_official_parsers_zero_errors_and_warnings(node_tools: Path, tmp_path: Path) -> None:
    """3.0.0 documents: both the latest parser and 3.4.0 (EventCatalog's pin) read them."""
    paths = [path for catalog in ALL_CATALOGS for path in generated(tmp_path, catalog)]
    results = parse(node_tools, paths)
    catalogs = [c for directory in ALL_CATALOGS for c in lint(str(directory)).catalog_set.catalogs]
    documents = [path for path in paths if path.parent.name == "asyncapi"]  # the rest: services/<service>.yaml
    assert len(documents) == len(catalogs) == 5
    services = [path for path in paths if path.parent.name == "services"]
    assert len(services) == sum(len(c.services) for c in catalogs) >= 3
    for path in services:
        for parser, report in results[str(path)].items():
            assert report["parsed"] and [d for d in report["diagnostics"] if d["severity"] <= 1] == [], (path, parser)
            assert report["operations"] >= 1
    for path in documents:
        catalog = next(c for c in catalogs if path.stem == c.id)
        assert set(results[str(path)]) == {"latest", "3.4.0"}
        for parser, report in results[str(path)].items():
            # Spectral severities: 0 error, 1 warning, 2 information, 3 hint.
            assert report["parsed"], (parser, report["diagnostics"])
            assert [d for d in report["diagnostics"] if d["severity"] <= 1] == [], parser
            assert report["version"] == "3.0.0"
            assert report["messages"] == len(catalog.events)
            if catalog.channels:  # the catalog's channels, an operation per service and channel (§9)
                assert report["channels"] == len(catalog.channels)
                assert report["operations"] == len(yaml.safe_load(path.read_text())["operations"]) >= len(catalog.services)
            else:
                assert report["channels"] == len({e.type for e in catalog.events})
                assert report["operations"] == len(catalog.events)  # one per message: no union in Modelina


def test_asyncapi_3_1_on_request(node_tools: Path, tmp_path: Path) -> None:
    """--asyncapi-version 3.1.0: valid for the latest parser; 3.4.0 cannot read it
    (why 3.0.0 is the default)."""
    paths = generated(tmp_path, ROOT / "catalog", "3.1.0")
    results = parse(node_tools, paths)
    for path in paths:
        assert yaml.safe_load(path.read_text())["asyncapi"] == "3.1.0"
        latest = results[str(path)]["latest"]
        assert latest["parsed"] and latest["version"] == "3.1.0"
        assert [d for d in latest["diagnostics"] if d["severity"] <= 1] == []
        assert not results[str(path)]["3.4.0"]["parsed"]


def test_asyncapi_version_enters_the_cache_key(tmp_path: Path) -> None:
    out, cache = tmp_path / "out", str(tmp_path / "cache")
    for version in ("3.1.0", "3.0.0", "3.1.0"):
        extra = ["--asyncapi-version", version] if version != "3.0.0" else []
        run = run_evcat("generate", "catalog", "-o", str(out), "--only", "asyncapi", "--cache-dir", cache, *extra)
        assert run.returncode == 0, run.stderr
        assert yaml.safe_load((out / "asyncapi" / "meter-data.yaml").read_text())["asyncapi"] == version
    run = run_evcat("generate", "catalog", "-o", str(out), "--only", "asyncapi", "--asyncapi-version", "2.6.0")
    assert run.returncode == 2 and "--asyncapi-version takes 3.0.0 or 3.1.0" in run.stderr


def test_spectral_asyncapi_ruleset_zero_errors(node_tools: Path, tmp_path: Path) -> None:
    paths = [path for catalog in ALL_CATALOGS for path in generated(tmp_path, catalog)]
    ruleset = tmp_path / ".spectral.yaml"
    ruleset.write_text('extends: ["spectral:asyncapi"]\n')
    run = subprocess.run(
        [str(node_tools / "node_modules" / ".bin" / "spectral"), "lint", "-r", str(ruleset), "-f", "json", *map(str, paths)],
        capture_output=True, text=True, timeout=300, check=False,  # exits 1 on warnings: the findings decide
    )
    findings = json.loads(run.stdout or "[]")
    assert [f for f in findings if f["severity"] == 0] == [], run.stdout[-3000:]


def test_document_shape(tmp_path: Path) -> None:
    documents = {path.stem: yaml.safe_load(path.read_text()) for path in generated(tmp_path)}
    meter = documents["meter-data"]
    assert meter["asyncapi"] == "3.0.0"
    assert meter["info"]["title"] == "Meter data events" and meter["info"]["version"] == "2.3.0"
    assert meter["servers"]["production"]["host"] == "events.edsn.example.nl"
    # the catalog's channels (catalog-format.md §9), not one per event type
    channel = meter["channels"]["meter-events"]
    assert channel["address"] == "cmr.meter-data.{region}" and list(channel["parameters"]) == ["region"]
    assert channel["servers"] == [{"$ref": "#/servers/broker"}]
    assert "mdm.meter.updated.2.0.0" in channel["messages"] and "mdm.reading.validated.1.0.0" in channel["messages"]
    assert meter["channels"]["supplier-webhooks"]["address"] == "/webhooks/meter-data"
    operation = meter["operations"]["supplier-portal.receive.supplier-webhooks.mdm.meter.updated.2.0.0"]
    assert operation["action"] == "receive"
    assert operation["messages"] == [{"$ref": "#/channels/supplier-webhooks/messages/mdm.meter.updated.2.0.0"}]
    assert meter["operations"]["central-meter-register.send.meter-events.mdm.meter.removed.notification"]["action"] == "send"
    brp = documents["brp-personen"]
    assert brp["channels"]["gemeente-webhooks"]["address"] == "/webhooks/v1/brp-personen"
    # a catalog without channels keeps one channel per event type
    zaken = documents["zaken"]["channels"]["nl.overheid.zaken.document-toegevoegd"]
    assert zaken["address"] == "nl.overheid.zaken.document-toegevoegd"
    message = meter["components"]["messages"]["mdm.meter.updated.2.0.0"]
    assert message["contentType"] == "application/cloudevents+json"
    assert message["x-eventcatalog-message-type"] == "event"
    assert message["x-eventcatalog-message-version"] == "2.0.0"
    assert message["payload"]["properties"]["type"] == {"const": "mdm.meter.updated"}
    assert message["payload"]["properties"]["data"]["properties"]["meter"] == {"$ref": "#/components/schemas/Meter"}
    assert message["examples"][0]["payload"]["data"]["meter"]["meterId"] == "E00000000035671400"
    trait = meter["components"]["messageTraits"]["mdm.meter.updated.2.0.0.binary"]
    assert "ce-gridoperator" in trait["headers"]["required"]
    # Recursive shared schema stays a local reference, never remote.
    node = meter["components"]["schemas"]["AllocationNode"]
    assert node["properties"]["children"]["items"] == {"$ref": "#/components/schemas/AllocationNode"}
    text = json.dumps(documents)
    assert '"$ref": "http' not in text and "$defs" not in text


def test_schemas_are_titled_as_the_python_classes(tmp_path: Path) -> None:
    meter = yaml.safe_load(next(p for p in generated(tmp_path) if p.stem == "meter-data").read_text())
    messages, schemas = meter["components"]["messages"], meter["components"]["schemas"]
    payload = messages["mdm.meter.updated.2.0.0"]["payload"]
    assert payload["title"] == "MdmMeterUpdatedV2_0_0"
    assert payload["properties"]["data"]["title"] == "MdmMeterUpdatedV2_0_0Data"
    assert payload["properties"]["data"]["properties"]["reason"]["title"] == "MdmMeterUpdatedV2_0_0DataReason"
    assert messages["mdm.meter.removed.notification"]["payload"]["title"] == "MdmMeterRemoved"
    reading = messages["mdm.reading.validated.1.0.0"]["payload"]
    assert reading["properties"]["data"]["properties"]["registers"]["items"]["title"] == "MdmReadingValidatedV1_0_0DataRegistersItem"
    assert {name: schema["title"] for name, schema in schemas.items()} == {name: name for name in schemas}
    assert schemas["Register"]["properties"]["direction"]["title"] == "RegisterDirection"


def test_nullable_attributes_are_type_arrays(tmp_path: Path) -> None:
    """``type: [X, 'null']``, never ``anyOf`` with null (Modelina: Java ``Object``, TypeScript ``any``)."""
    meter = yaml.safe_load(next(p for p in generated(tmp_path) if p.stem == "meter-data").read_text())
    properties = meter["components"]["messages"]["mdm.meter.updated.2.0.0"]["payload"]["properties"]
    assert properties["dataschema"]["type"] == ["string", "null"]
    assert properties["dataschema"]["if"] == {"type": "string"}  # null passes the bad-character check
    assert "pattern" in properties["dataschema"]["then"]["not"] and "not" not in properties["dataschema"]
    assert properties["data_base64"] == {"type": "null"}  # JSON format 2.4: null is unset; any value is refused
    assert "{'type': 'null'}]" not in str(meter)


def test_binary_trait_examples_are_the_catalog_examples_as_headers(tmp_path: Path) -> None:
    catalog = next(c for c in lint(str(ROOT / "catalog")).catalog_set.catalogs if c.id == "meter-data")
    event = next(e for e in catalog.events if e.key == ("mdm.meter.updated", "2.0.0"))
    meter = yaml.safe_load(next(p for p in generated(tmp_path) if p.stem == "meter-data").read_text())
    trait = meter["components"]["messageTraits"]["mdm.meter.updated.2.0.0.binary"]
    [example] = trait["examples"]
    full = event.complete_example(event.examples[0].values)
    assert example["headers"]["ce-gridoperator"] == full["gridoperator"]
    assert example["headers"]["ce-subject"] == full["subject"]
    assert example["headers"]["ce-time"] == full["time"]
    assert example["headers"]["content-type"] == full.get("datacontenttype", "application/json")
    assert trait["headers"]["properties"]["ce-gridoperator"]["examples"] == [full["gridoperator"]]
    assert set(trait["headers"]["required"]) <= set(example["headers"])
    # Percent-encoding (HTTP binding 3.1.3.2): space, '"', '%' and non-ASCII.
    from generator.render.asyncapi import header_value

    assert header_value('a "b" 100% é') == "a%20%22b%22%20100%25%20%C3%A9"
    assert header_value(True) == "true" and header_value(5) == "5"


def test_hostile_text_survives_yaml_exactly(tmp_path: Path) -> None:
    [path] = generated(tmp_path, ROOT / "tests" / "catalogs" / "hostile")
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    catalog = lint(str(ROOT / "tests" / "catalogs" / "hostile")).catalog_set.catalogs[0]
    assert document["info"]["title"] == catalog.title
    assert document["info"]["description"] == catalog.description
    kebab = document["components"]["messages"]["io.example.kebab-case-type.v2.notification"]
    assert kebab["title"] == "A notification </script><script>alert(1)</script>"
    assert kebab["x-deprecated"] == "Use \"something else\"; see <a href='x'>docs</a>."


_YAML_TEXT = st.text(max_size=12) | st.sampled_from(
    ["", "~", "null", "yes", "No", "on", "1.0", "0x1F", "1e3", ".inf", "-", "- a", "a: b", "#x", " x", "x ",
     "a\nb", "a\nb\n", "a\n b ", "tab\there", "cr\r\nlf", "'q'", '"q"', "&a", "*a", "!tag", "2026-11-23", "=", "<<"]
)
_YAML_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | _YAML_TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_YAML_TEXT, children, max_size=4),
    max_leaves=30,
)


@given(_YAML_VALUES)
@settings(max_examples=400, deadline=None)
def test_yaml_fast_representer_writes_what_pyyaml_writes(value: Any) -> None:
    """The AsyncAPI writer makes str/dict/list nodes itself and keeps the
    resolver's verdicts (speed, issue 16): the bytes are PyYAML's own."""
    from generator.render import asyncapi

    class Plain(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
        def ignore_aliases(self, data: Any) -> bool:
            return True

    Plain.add_representer(str, asyncapi._str)
    shared = {"shared": "object"}
    value = [value, shared, shared]  # the same object twice: written out, never an alias
    try:
        expected = yaml.dump(value, Dumper=Plain, sort_keys=False, allow_unicode=True, width=100).encode("utf-8")
    except (yaml.YAMLError, UnicodeEncodeError) as error:  # a lone surrogate: refused either way
        with pytest.raises(type(error)):
            asyncapi.dump_yaml(value)
        return
    assert asyncapi.dump_yaml(value) == expected
