"""URI-template sources and CE-SOURCE-MATCH in every judge (issue 27;
catalog-format.md §9 "Source templates", §4.1 one verdict; rules.md
CE-SOURCE-URI, CE-SOURCE-ABSOLUTE, CE-SOURCE-MATCH).

A catalog whose source is a level-1 URI template, under each setting of
CE-SOURCE-MATCH: ``error`` (every judge refuses a source that does not
match), ``warning`` (the default: evcat validate, evcat serve and lint's
example check report it, every judge accepts), ``off`` (nobody checks it).
The judges are real: ``evcat validate`` and ``evcat serve`` as subprocesses,
the generated package imported, its Receiver under uvicorn on 127.0.0.1,
event.schema.json under the ``jsonschema`` package.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from pydantic import ValidationError

from generator.commands.lint import lint

from .conftest import ROOT, run_evcat
from .webhook_support import Server, start_evcat_serve, start_receiver

TEMPLATE = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroup}"
SETTINGS = ("error", "warning", "off")
MATCHING = "/subscriptions/42/resourceGroups/rg-1"
OTHERS = (
    "/subscriptions/42/resourceGroups/rg-1/extra",  # more path
    "/subscriptions/4/2/resourceGroups/rg-1",  # a parameter holds no '/'
    "/subscriptions//resourceGroups/rg-1",  # one character at least
    "urn:example:elsewhere",
)


def catalog(setting: str, *, where: str = "event") -> str:
    """A cloudevents catalog with a templated source; CE-SOURCE-MATCH set to
    ``setting`` in the file's ``rules`` or the event's (``warning``: not set,
    the default)."""
    file_rules = f"rules: {{CE-SOURCE-MATCH: {setting}}}\n" if setting != "warning" and where == "file" else ""
    event_rules = f"    rules: {{CE-SOURCE-MATCH: {setting}}}\n" if setting != "warning" and where == "event" else ""
    return (
        f"catalog: tpl-{setting}\ntitle: Template {setting}\nversion: 1.0.0\nprofile: cloudevents\n"
        f"producer:\n  source: {TEMPLATE}\n  organization: Example\n"
        "defaults:\n  datacontenttype: application/json\n  time: Moment of the change, in UTC.\n  id: Random UUID v4.\n"
        f"{file_rules}events:\n"
        "  - type: com.example.storage.blob-created\n    dataversion: 1.0.0\n    title: Blob created\n"
        f"    description: A blob was created.\n{event_rules}"
        "    data:\n      type: object\n      description: The blob.\n      required: [url]\n"
        "      properties:\n        url: {type: string, description: Where the blob is.}\n"
        "    examples:\n"
        "      - data: {url: a}\n"
        f"      - {{source: '{MATCHING}', data: {{url: b}}}}\n"
    )


def event(source: str = MATCHING) -> dict[str, Any]:
    return {
        "specversion": "1.0", "id": "e-1", "source": source, "type": "com.example.storage.blob-created",
        "dataversion": "1.0.0", "datacontenttype": "application/json", "data": {"url": "https://x.example/b"},
    }


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Per setting: the catalog directory and ``evcat generate``'s output."""
    root = tmp_path_factory.mktemp("source-templates")
    made: dict[str, Path] = {}
    for setting in SETTINGS:
        directory = root / setting
        (directory / "catalog").mkdir(parents=True)
        # error set on the event, off on the file: both places are read
        text = catalog(setting, where="event" if setting == "error" else "file")
        (directory / "catalog" / "c.yaml").write_text(text, encoding="utf-8")
        result = run_evcat("generate", str(directory / "catalog"), "-o", str(directory / "out"), "--no-cache")
        assert result.returncode == 0, result.stdout + result.stderr
        made[setting] = directory
    packages = [str(made[s] / "out" / "python") for s in SETTINGS]
    sys.path[:0] = packages
    try:
        yield made
    finally:
        for path in packages:
            sys.path.remove(path)
        for name in [n for n in sys.modules if n.split(".")[0].startswith("tpl_")]:
            del sys.modules[name]


def _package(setting: str) -> Any:
    return importlib.import_module(f"tpl_{setting}")


# --- lint --------------------------------------------------------------------------------


def test_a_templated_source_is_a_valid_source(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(catalog("warning"), encoding="utf-8")
    found = [(d.rule, str(d.severity)) for d in lint(str(tmp_path)).diagnostics]
    # the template's expanded form is a relative reference: the usual advice, no error
    assert found == [("CE-SOURCE-ABSOLUTE", "warning")], found
    absolute = catalog("warning").replace(f"source: {TEMPLATE}", f"source: 'https://storage.example.com{TEMPLATE}'")
    absolute = absolute.replace(f"source: '{MATCHING}'", f"source: 'https://storage.example.com{MATCHING}'")
    (tmp_path / "c.yaml").write_text(absolute, encoding="utf-8")
    assert lint(str(tmp_path)).diagnostics == []


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("'/subscriptions/{subscriptionId'", "is not closed"),
        ("'/subscriptions/{}'", "names no parameter"),
        ("'/subscriptions/{a b}'", "not a parameter name"),
        ("'/subscriptions/{a{b}}'", "braces do not nest"),
        ("'/subscriptions/{+path}'", "beyond level 1"),
        ("'/subscriptions/{id}/x/{id}'", "appears twice"),
        ("'/subscriptions/{id} x'", "percent-encode"),  # well formed, but the expanded form is no URI-reference
    ],
)
def test_a_malformed_template_is_a_ce_source_uri_error_at_its_line(tmp_path: Path, source: str, said: str) -> None:
    text = catalog("warning").replace(f"source: {TEMPLATE}", f"source: {source}")
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    found = [d for d in lint(str(tmp_path)).diagnostics if d.rule == "CE-SOURCE-URI"]
    assert len(found) == 1 and str(found[0].severity) == "error", found
    assert found[0].location.line == 6 and found[0].location.column == 11
    assert said in found[0].message, found[0].message


@pytest.mark.parametrize("setting", SETTINGS)
def test_lints_example_check_follows_the_setting(tmp_path: Path, setting: str) -> None:
    text = catalog(setting).replace(f"source: '{MATCHING}'", "source: 'urn:example:elsewhere'")
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    notes = [d.message for d in lint(str(tmp_path)).diagnostics if d.rule == "CAT-EXAMPLE"]
    if setting == "off":
        assert notes == []
    else:
        assert len(notes) == 1 and "[CE-SOURCE-MATCH]" in notes[0] and "example 2" in notes[0], notes
    # the example without a source is completed with sample parameters: it matches
    assert not any("example 1" in note for note in notes)


def test_the_nearest_rules_win(tmp_path: Path) -> None:
    text = catalog("off", where="file").replace(
        "    description: A blob was created.\n", "    description: A blob was created.\n    rules: {CE-SOURCE-MATCH: error}\n")
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    (entry,) = lint(str(tmp_path)).catalog_set.events
    assert entry.file_rules == (("CE-SOURCE-MATCH", "off"),)
    assert entry.rule_setting("CE-SOURCE-MATCH") == "error"
    assert entry.rule_setting("CE-TYPE-RDNS") is None


# --- evcat validate ------------------------------------------------------------------------


@pytest.mark.parametrize("setting", SETTINGS)
def test_evcat_validate_under_each_setting(generated: dict[str, Path], setting: str, tmp_path: Path) -> None:
    events = [event(MATCHING)] + [event(other) for other in OTHERS]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n", encoding="utf-8")
    result = run_evcat("validate", str(generated[setting] / "catalog"), str(path), "--format", "json", "--no-cache")
    report = json.loads(result.stdout)
    found = sorted((d["rule"], d["severity"], d["line"]) for d in report["diagnostics"])
    if setting == "off":
        assert found == [] and result.returncode == 0, report
        return
    assert found == [("CE-SOURCE-MATCH", setting, line) for line in (2, 3, 4, 5)], report
    assert result.returncode == (1 if setting == "error" else 0), result.stdout
    assert f"is not the catalog's source template '{TEMPLATE}'" in report["diagnostics"][0]["message"]


# --- the generated package -----------------------------------------------------------------


@pytest.mark.parametrize("setting", SETTINGS)
def test_parse_event_and_from_http_under_each_setting(generated: dict[str, Path], setting: str) -> None:
    package = _package(setting)
    assert package.parse_event(event()).source == MATCHING
    for other in OTHERS:
        raw = event(other)
        structured_headers, structured_body = {"content-type": "application/cloudevents+json"}, json.dumps(raw).encode()
        binary_headers = {f"ce-{k}": v for k, v in raw.items() if k not in ("data", "datacontenttype")}
        binary_headers["content-type"] = "application/json"
        binary_body = json.dumps(raw["data"]).encode()
        readers = {
            "parse_event (text)": lambda: package.parse_event(json.dumps(raw)),
            "parse_event (mapping)": lambda: package.parse_event(raw),
            "from_http (structured)": lambda: package.from_http(structured_headers, structured_body),
            "from_http (binary)": lambda: package.from_http(binary_headers, binary_body),
        }
        for name, read in readers.items():
            if setting == "error":
                with pytest.raises(ValidationError, match="CE-SOURCE-MATCH"):
                    read()
            else:
                assert read().source == other, name


@pytest.mark.parametrize("setting", SETTINGS)
def test_event_schema_json_under_each_setting(generated: dict[str, Path], setting: str) -> None:
    path = generated[setting] / "out" / "jsonschema" / f"tpl-{setting}" / "com.example.storage.blob-created" / "1.0.0" / "event.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    judge = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    assert judge.is_valid(event())
    for other in OTHERS:
        assert judge.is_valid(event(other)) is (setting != "error"), other
    assert ("allOf" in schema["properties"]["source"]) is (setting == "error")  # a pattern only when an error


def test_a_class_with_a_templated_source_needs_its_source(generated: dict[str, Path]) -> None:
    for setting in SETTINGS:
        package = _package(setting)
        cls = package.events.BlobCreatedV1_0_0
        data = package.models.BlobCreatedV1_0_0Data(url="https://x.example/b")
        with pytest.raises(ValidationError, match="source"):
            cls(data=data)  # no default: the source varies per subscription
        source = cls.source_for(subscriptionId="42", resourceGroup="rg 1/a")
        assert source == "/subscriptions/42/resourceGroups/rg%201%2Fa"
        built = cls(source=source, data=data)
        assert package.parse_event(built.to_json()).to_dict() == built.to_dict()
        with pytest.raises(ValueError, match="resourceGroup"):
            cls.source_for(subscriptionId="42")
        if setting == "off":
            assert cls(source="urn:example:elsewhere", data=data).source == "urn:example:elsewhere"
        else:  # a constructing program is held to the template
            with pytest.raises(ValidationError, match="CE-SOURCE-MATCH"):
                cls(source="urn:example:elsewhere", data=data)


def test_a_fixed_source_stays_a_default_and_is_held_to_only_as_an_error(tmp_path: Path) -> None:
    text = catalog("error").replace(f"source: {TEMPLATE}", "source: urn:example:blobs")
    text = text.replace(f"source: '{MATCHING}'", "source: urn:example:blobs").replace("catalog: tpl-error", "catalog: fixed-error")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "c.yaml").write_text(text, encoding="utf-8")
    assert run_evcat("generate", str(tmp_path / "c"), "-o", str(tmp_path / "out"), "--no-cache", "--only", "python").returncode == 0
    sys.path.insert(0, str(tmp_path / "out" / "python"))
    try:
        package = importlib.import_module("fixed_error")
        data = package.models.BlobCreatedV1_0_0Data(url="u")
        assert package.events.BlobCreatedV1_0_0(data=data).source == "urn:example:blobs"
        assert package.parse_event(event("urn:example:blobs")).source == "urn:example:blobs"
        with pytest.raises(ValidationError, match="CE-SOURCE-MATCH"):
            package.parse_event(event("urn:example:blobs2"))
    finally:
        sys.path.remove(str(tmp_path / "out" / "python"))
        for name in [n for n in sys.modules if n.split(".")[0] == "fixed_error"]:
            del sys.modules[name]


# --- over HTTP: evcat serve and the generated Receiver ---------------------------------------


@pytest.fixture(scope="module")
def servers(generated: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], Server]]:
    started: dict[tuple[str, str], Server] = {}
    try:
        for setting in SETTINGS:
            started[("serve", setting)] = start_evcat_serve(
                tmp_path_factory.mktemp(f"serve-{setting}"), catalog=generated[setting] / "catalog")
            started[("receiver", setting)] = start_receiver(
                tmp_path_factory.mktemp(f"receiver-{setting}"), generated[setting] / "out" / "python",
                package=f"tpl_{setting}")
        yield started
    finally:
        for server in started.values():
            server.stop()
    for name, server in started.items():
        assert "Traceback" not in server.stderr.read_text(errors="replace"), name


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("target", ["serve", "receiver"])
def test_over_http_under_each_setting(servers: dict[tuple[str, str], Server], target: str, setting: str) -> None:
    server = servers[(target, setting)]
    headers = {"content-type": "application/cloudevents+json"}
    with httpx.Client(timeout=10) as client:
        good = client.post(server.url, content=json.dumps(event()), headers=headers)
        assert good.status_code in (200, 202, 204), good.text
        for number, other in enumerate(OTHERS):
            sent = {**event(other), "id": f"{setting}-{number}"}
            response = client.post(server.url, content=json.dumps(sent), headers=headers)
            if setting == "error":
                assert response.status_code == 400, (other, response.status_code, response.text)
                assert "CE-SOURCE-MATCH" in response.text
            else:
                assert response.status_code in (200, 202, 204), (other, response.text)
    if target == "serve":  # evcat serve reports what it judged, one JSON line per event
        lines = server.lines()
        reported = [(line["valid"], [(d["rule"], d["severity"]) for d in line["diagnostics"]]) for line in lines[1:]]
        expected = {"error": (False, [("CE-SOURCE-MATCH", "error")]), "warning": (True, [("CE-SOURCE-MATCH", "warning")]),
                    "off": (True, [])}[setting]
        assert reported == [expected] * len(OTHERS), lines
        assert lines[0]["valid"] and lines[0]["diagnostics"] == []
    else:  # the Receiver hands on what it accepts
        handled = [json.loads(line)["id"] for line in server.stdout.read_text().splitlines()]
        assert len(handled) == (1 if setting == "error" else 1 + len(OTHERS)), handled


def test_generated_code_with_a_templated_source_passes_mypy_strict(generated: dict[str, Path], tmp_path: Path) -> None:
    """A program constructing the class must give the source: mypy says so."""
    program = (
        "from tpl_warning.events import BlobCreatedV1_0_0\n"
        "from tpl_warning.models import BlobCreatedV1_0_0Data\n\n"
        "data = BlobCreatedV1_0_0Data(url='u')\n"
        "ok = BlobCreatedV1_0_0(source=BlobCreatedV1_0_0.source_for(subscriptionId='1', resourceGroup='g'), data=data)\n"
    )
    (tmp_path / "program.py").write_text(program, encoding="utf-8")
    (tmp_path / "missing.py").write_text(program.replace("source=BlobCreatedV1_0_0.source_for(subscriptionId='1', resourceGroup='g'), ", ""), encoding="utf-8")
    command = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy")]
    env = {**__import__("os").environ, "MYPYPATH": str(generated["warning"] / "out" / "python")}
    ok = subprocess.run([*command, str(tmp_path / "program.py")], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    missing = subprocess.run([*command, str(tmp_path / "missing.py")], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert missing.returncode == 1 and '"source"' in missing.stdout, missing.stdout
