"""`evcat import asyncapi` on third-party documents (the AsyncAPI specification's
examples as the @asyncapi/cli npm package ships them, Apache-2.0, unpacked by
tests/install-components.sh: tests/thirdparty.py) and on small
documents written here: each imports with exit 0, the catalogs lint without
errors and generate, and the number of event types equals the number of
importable messages as the official @asyncapi/parser counts them
(tests/node/count-asyncapi-messages.mjs), not as the importer does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from generator.cli import main
from generator.commands.lint import lint
from generator.diagnostics import Severity
from tests.conftest import NODE_DIR
from tests.thirdparty import asyncapi_examples


def _sources() -> list[Path]:
    """One import per example document (the package ships single-file ones)."""
    return sorted(asyncapi_examples().glob("v*/*.yml"))


def _parser_counts(node_tools: Path, sources: list[Path]) -> dict[Path, dict]:
    groups = {str(source): source for source in sources}
    completed = subprocess.run(
        ["node", str(NODE_DIR / "count-asyncapi-messages.mjs"), *groups],
        capture_output=True, text=True, timeout=600, cwd=node_tools, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return {groups[group]: count for group, count in json.loads(completed.stdout).items()}


def _name(source: Path) -> str:
    return f"{source.parent.name.replace('.', '')}-{source.stem.removesuffix('-asyncapi')}".lower()


@pytest.mark.real  # third-party documents (tests/thirdparty.py)
def test_spec_examples_import_lint_and_generate(node_tools: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sources = _sources()
    counts = _parser_counts(node_tools, sources)
    catalogs = tmp_path / "catalog"
    imported = 0
    refused_for_one_verdict: list[str] = []
    for source in sources:
        name = _name(source)
        count = counts[source]
        out = tmp_path / "one" / name
        code = main(["import", "asyncapi", str(source), "-o", str(out), "--catalog", name,
                     "--type-prefix", f"org.asyncapi.examples.{name.replace('-', '.')}"])
        err = capsys.readouterr().err
        if count["importable"] == 0:
            # adeo-kafka-request-reply: every payload is Avro (the parser cannot even
            # fetch them here); the import says so and writes nothing
            assert "adeo" in source.name, (source, count)
            assert code == 2, err
            assert "not imported: its payload is in application/vnd.apache.avro" in err
            assert not out.exists()
            continue
        assert not count["errors"], count
        (written,) = out.glob("*.yaml")
        document = yaml.safe_load(written.read_text())
        assert len(document["events"]) == count["importable"], (source, count, [e["type"] for e in document["events"]])
        errors = [d for d in lint(str(out)).diagnostics if d.severity is Severity.ERROR]
        if code == 1 and errors and {d.rule for d in errors} <= {"PAY-KEYWORD-VERDICT", "PAY-ONEOF-EXCLUSIVE"}:
            # imported as written, and refused where the generated model cannot
            # give JSON Schema's verdict: a 'not' schema, a oneOf of open objects
            # that one value can match both (README, one verdict)
            refused_for_one_verdict.append(source.name)
            continue
        assert code == 0, (source, err)
        assert errors == [], (source, errors)
        shutil.copy(written, catalogs / written.name) if catalogs.exists() else (catalogs.mkdir(), shutil.copy(written, catalogs))
        imported += 1
    assert sorted(refused_for_one_verdict) == [  # a 'not' schema; oneOfs of open objects told apart by nothing
        "kraken-websocket-request-reply-message-filter-in-reply-asyncapi.yml",
        "kraken-websocket-request-reply-multiple-channels-asyncapi.yml", "not-asyncapi.yml", "not.yml",
        "oneof-asyncapi.yml", "oneof.yml"]
    assert imported == len(sources) - 1 - len(refused_for_one_verdict)
    # all of them generate (one run over the directory of every imported catalog)
    assert main(["generate", str(catalogs), "-o", str(tmp_path / "out"), "--no-cache"]) == 0, capsys.readouterr()
    assert len(list((tmp_path / "out" / "asyncapi").glob("*.yaml"))) == imported


@pytest.mark.real  # third-party documents (tests/thirdparty.py)
def test_streetlights_channels_services_and_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = asyncapi_examples() / "v3" / "streetlights-kafka-asyncapi.yml"
    assert main(["import", "asyncapi", str(source), "-o", str(tmp_path), "--type-prefix", "org.smartylighting"]) == 0
    err = capsys.readouterr().err
    (written,) = tmp_path.glob("*.yaml")
    document = yaml.safe_load(written.read_text())
    assert document["catalog"] == "streetlights-kafka-api" and document["version"] == "1.0.0"
    assert document["license"] == {"name": "Apache 2.0", "url": "https://www.apache.org/licenses/LICENSE-2.0"}
    assert {event["type"] for event in document["events"]} == {
        "org.smartylighting.lightMeasured", "org.smartylighting.turnOnOff", "org.smartylighting.dimLight"}
    assert document["channels"]["lightingMeasured"] == {
        "protocol": "kafka", "address": "smartylighting.streetlights.1.0.event.{streetlightId}.lighting.measured",
        "description": "The topic on which measured values may be produced and consumed."}
    (service,) = document["services"].values()
    assert {(link["type"], link["channel"]) for link in service["sends"]} == {
        ("org.smartylighting.turnOnOff", "lightTurnOn"), ("org.smartylighting.turnOnOff", "lightTurnOff"),
        ("org.smartylighting.dimLight", "lightsDim")}
    assert [(link["type"], link["channel"]) for link in service["receives"]] == [
        ("org.smartylighting.lightMeasured", "lightingMeasured")]
    # components/schemas became shared schemas, referenced as #/schemas/Name
    assert document["schemas"]["sentAt"]["format"] == "date-time"
    assert document["events"][0]["data"] == {"$ref": "#/schemas/lightMeasuredPayload"}
    # what the catalog cannot hold is a located note in the source
    assert f"{source}:112:7: note: not carried: message 'lightMeasured': headers not carried" in err


@pytest.mark.real  # third-party documents (tests/thirdparty.py)
def test_v2_publish_is_receive_and_subscribe_is_send(tmp_path: Path) -> None:
    source = asyncapi_examples() / "v2" / "streetlights-mqtt.yml"
    assert main(["import", "asyncapi", str(source), "-o", str(tmp_path), "--type-prefix", "org.smartylighting"]) == 0
    (written,) = tmp_path.glob("*.yaml")
    document = yaml.safe_load(written.read_text())
    (service,) = document["services"].values()
    assert {link["type"] for link in service["receives"]} == {"org.smartylighting.lightMeasured"}
    assert {link["type"] for link in service["sends"]} == {"org.smartylighting.turnOnOff", "org.smartylighting.dimLight"}
    assert {channel["protocol"] for channel in document["channels"].values()} == {"mqtt"}


def _application(title: str, action: str) -> dict:
    """An AsyncAPI 3 document of one application whose message lives in
    ../common/messages.yaml (the layout of the spec's social-media example)."""
    return {
        "asyncapi": "3.0.0", "info": {"title": title, "version": "1.0.0"},
        "servers": {"broker": {"host": "broker.test", "protocol": "mqtt"}},
        "channels": {"commentsCountChange": {
            "address": "comment/{commentId}/changed",
            "parameters": {"commentId": {"description": "The comment's id."}},
            "messages": {"commentChanged": {"$ref": "../common/messages.yaml#/commentChanged"}}}},
        "operations": {f"{action}CommentChange": {
            "action": action, "channel": {"$ref": "#/channels/commentsCountChange"},
            "messages": [{"$ref": "#/channels/commentsCountChange/messages/commentChanged"}]}},
    }


def test_multi_file_refs_stay_in_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "social"
    (folder / "common").mkdir(parents=True)
    (folder / "common" / "messages.yaml").write_text(yaml.safe_dump({"commentChanged": {
        "name": "commentChanged", "payload": {"type": "object", "properties": {
            "commentId": {"type": "string"}, "likeCount": {"type": "integer"}}}}}))
    for name, title, action in (("comments-service", "Comments Service", "send"),
                                ("frontend", "Website WebSocket Client", "receive")):
        (folder / name).mkdir()
        (folder / name / "asyncapi.yaml").write_text(yaml.safe_dump(_application(title, action)))
    # a single document reaches ../common: outside its folder
    source = folder / "comments-service" / "asyncapi.yaml"
    code = main(["import", "asyncapi", str(source), "-o", str(tmp_path / "one")])
    err = capsys.readouterr().err
    assert code == 2 and "outside the source folder" in err
    # the folder imports every application as a service, the shared message once
    assert main(["import", "asyncapi", str(folder), "-o", str(tmp_path / "all")]) == 0
    document = yaml.safe_load(next((tmp_path / "all").glob("*.yaml")).read_text())
    assert set(document["services"]) == {"comments-service", "website-web-socket-client"}
    assert [event["type"] for event in document["events"]] == ["commentChanged"]
    assert document["services"]["comments-service"]["sends"] == [
        {"type": "commentChanged", "dataversion": "1.0.0", "channel": "commentsCountChange"}]
    assert document["services"]["website-web-socket-client"]["receives"] == [
        {"type": "commentChanged", "dataversion": "1.0.0", "channel": "commentsCountChange"}]


def test_hostile_asyncapi_refs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("Secret: {const: TOP SECRET}\n")
    folder = tmp_path / "api"
    folder.mkdir()
    (folder / "api.yaml").write_text(yaml.safe_dump({
        "asyncapi": "3.0.0", "info": {"title": "Probe", "version": "1.0.0"},
        "components": {"messages": {
            "a": {"payload": {"$ref": "../outside.yaml#/Secret"}},
            "b": {"payload": {"$ref": "https://example.com/schema.json"}},
            "c": {"payload": {"type": "object", "properties": {"x": {"$ref": "/etc/passwd"}}}},
            "d": {"$ref": "#/components/messages/e"},
            "e": {"$ref": "#/components/messages/d"},
            "f": {"payload": {"type": "string"}},
        }},
    }))
    code = main(["import", "asyncapi", str(folder / "api.yaml"), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0, err
    text = (tmp_path / "out" / "probe.yaml").read_text()
    assert "TOP SECRET" not in text and "root:" not in text
    assert "outside the source folder" in err and "not a local file" in err
    assert "more than 64 $refs in a chain" in err


def test_profiles_settle_with_event_overrides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Under normo the camelCase types break NORMO-TYPE: the override stands on each
    event (not on a schema node: it is not a payload rule); defaultContentType is the
    catalog's default datacontenttype, so NORMO-CONTENTTYPE has nothing to say."""
    source = asyncapi_examples() / "v3" / "streetlights-kafka-asyncapi.yml"
    assert main(["import", "asyncapi", str(source), "-o", str(tmp_path), "--profile", "normo",
                 "--type-prefix", "org.smartylighting"]) == 0
    capsys.readouterr()
    document = yaml.safe_load(next(tmp_path.glob("*.yaml")).read_text())
    assert document["profile"] == "normo" and document["defaults"] == {"datacontenttype": "application/json"}
    for event in document["events"]:
        assert event["rules"]["NORMO-TYPE"] == "off"
        assert "x-evcat-rules" not in json.dumps(event)
    assert [d for d in lint(str(tmp_path)).diagnostics if d.severity is Severity.ERROR] == []


def test_json_documents_import_like_yaml(tmp_path: Path) -> None:
    source = asyncapi_examples() / "v3" / "streetlights-kafka-asyncapi.yml"
    as_json = tmp_path / "src" / "streetlights.json"
    as_json.parent.mkdir()
    # json.dumps escapes the emoji of the description as surrogate pairs, which YAML 1.1 refuses
    as_json.write_text(json.dumps(yaml.safe_load(source.read_text()), indent=2))
    assert "\\ud83c" in as_json.read_text()
    assert main(["import", "asyncapi", str(source), "-o", str(tmp_path / "from-yaml")]) == 0
    assert main(["import", "asyncapi", str(as_json), "-o", str(tmp_path / "from-json")]) == 0
    (from_yaml,), (from_json,) = (tmp_path / "from-yaml").glob("*.yaml"), (tmp_path / "from-json").glob("*.yaml")
    assert from_yaml.read_text() == from_json.read_text()
    assert "🌃" in from_json.read_text()
