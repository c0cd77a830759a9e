"""Channels and services (catalog-format.md §9): the references of a service
resolve, channels carry something, addresses and bindings are well formed
(lint, at the YAML node, with suggestions); which channels an event travels
on and which services receive a (type, dataversion) (the model's one answer)."""

from __future__ import annotations

import json
import subprocess

import pytest

from generator.loader import load_text
from generator.model.build import build

from .conftest import NODE_DIR, catalog_text, marked_line

EVENTS = """\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      properties:
        thingId: {type: string, description: Id of the thing.}
  - type: nl.test.thing-happened
    dataversion: 2.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      properties:
        thingId: {type: string, description: Id of the thing.}
        kind: {type: string, description: Kind of the thing.}
  - type: nl.test.thing-removed
    title: Thing removed
    description: A thing was removed.
"""

CHANNELS = """\
channels:
  things:
    protocol: kafka
    address: things.{region}
    bindings: {key: subject}
  hooks:
    protocol: http
    address: /hooks/things
  removals:
    protocol: mqtt
    address: things/removed
    bindings: {qos: 1, retain: false}
"""

SERVICES = """\
services:
  registry:
    title: Thing registry
    sends:
      - {type: nl.test.thing-happened, channel: things}
      - type: nl.test.thing-happened
        dataversion: 2.0.0
        channel: hooks
      - type: nl.test.thing-removed
        channel: removals
  old-reader:
    receives: [{type: nl.test.thing-happened, dataversion: '^1.0.0', channel: things}]
  new-reader:
    receives:
      - type: nl.test.thing-happened
        dataversion: '>=2.0.0 <3.0.0'
        channel: hooks
"""


def text(channels: str = CHANNELS, services: str = SERVICES) -> str:
    return catalog_text("cloudevents", header=channels + services, events=EVENTS)


def test_a_catalog_with_channels_and_services_lints_clean(lint_files) -> None:
    assert lint_files({"catalog.yaml": text()}) == []


@pytest.mark.parametrize(
    ("rule", "bad", "suggestion", "words"),
    [
        ("CAT-SERVICE-REF", text(services=SERVICES.replace("type: nl.test.thing-removed",
                                                            "type: nl.test.thing-remove #<")),
         "nl.test.thing-removed", "no event type of this catalog; did you mean 'nl.test.thing-removed'"),
        ("CAT-SERVICE-REF", text(services=SERVICES.replace("channel: hooks\n      - type",
                                                            "channel: hook #<\n      - type")),
         "hooks", "not a channel of this catalog; did you mean 'hooks'"),
        ("CAT-SERVICE-REF", text(services=SERVICES.replace("dataversion: 2.0.0\n",
                                                            "dataversion: 2.1.0 #<\n")),
         "2.0.0", "no dataversion of it is"),
        ("CAT-SERVICE-REF", text(services=SERVICES.replace("'>=2.0.0 <3.0.0'", "'>=3.0.0' #<")),
         None, "no dataversion of it satisfies (its dataversions: 1.0.0, 2.0.0)"),
        ("CAT-SERVICE-REF", text(services=SERVICES.replace("'>=2.0.0 <3.0.0'", "'from 2 on' #<")),
         None, "not an npm semver range"),
        ("CAT-CHANNEL-UNUSED", text(channels=CHANNELS.replace("  hooks:", "  spare: #<\n    protocol: amqp\n"
                                                                          "    address: spare\n  hooks:")),
         None, "no event travels on channel 'spare'"),
        ("CAT-CHANNEL-ADDRESS", text(channels=CHANNELS.replace("things.{region}", "things.{region #<")),
         None, "not closed"),
        ("CAT-CHANNEL-ADDRESS", text(channels=CHANNELS.replace("things.{region}", "things.{+region} #<")),
         None, "beyond level 1"),
        ("CAT-CHANNEL-ADDRESS", text(channels=CHANNELS.replace("/hooks/things", "hooks/things #<")),
         "/hooks/things", "URL path"),
        ("CAT-CHANNEL-BINDINGS", text(channels=CHANNELS.replace("{key: subject}", "{keys: subject} #<")),
         "key", "'keys' is no kafka binding; did you mean 'key'"),
        ("CAT-CHANNEL-BINDINGS", text(channels=CHANNELS.replace("{qos: 1, retain: false}", "{qos: 3, retain: false} #<")),
         None, "qos is 0, 1 or 2, not 3"),
        ("CAT-CHANNEL-BINDINGS", text(channels=CHANNELS.replace("{qos: 1, retain: false}", "{qos: 1, retain: 'no'} #<")),
         None, 'retain is true or false, not "no"'),
        ("CAT-CHANNEL-BINDINGS", text(channels=CHANNELS.replace("address: /hooks/things", "address: /hooks/things\n"
                                                                "    bindings: {qos: 1} #<")),
         None, "'qos' is no http binding"),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 40 else "",
)
def test_a_broken_reference_is_reported_at_its_node(lint_files, rule, bad, suggestion, words) -> None:
    diagnostics = lint_files({"catalog.yaml": bad})
    assert [(d.rule, d.location.line) for d in diagnostics] == [(rule, marked_line(bad))], [str(d) for d in diagnostics]
    assert words in diagnostics[0].message
    assert diagnostics[0].suggestion == suggestion


def test_the_lint_command_reports_file_line_col(tmp_path) -> None:
    from .conftest import run_evcat

    bad = text(services=SERVICES.replace("channel: removals", "channel: removal"))
    (tmp_path / "c.yaml").write_text(bad)
    done = run_evcat("lint", str(tmp_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    line = next(n for n, row in enumerate(bad.splitlines(), 1) if "removal" in row and "removals" not in row)
    assert f"c.yaml:{line}:" in done.stdout and "CAT-SERVICE-REF" in done.stdout and "did you mean 'removals'" in done.stdout


def _catalog(source: str = text()):
    return build([load_text(source, "c.yaml")]).catalog_set.catalogs[0]


def test_the_channels_an_event_travels_on() -> None:
    catalog = _catalog()
    by_key = {event.key: [channel.name for channel in catalog.channels_of(event)] for event in catalog.events}
    assert by_key == {
        ("nl.test.thing-happened", "1.0.0"): ["things"],
        ("nl.test.thing-happened", "2.0.0"): ["things", "hooks"],
        ("nl.test.thing-removed", None): ["removals"],
    }
    # no services: every event travels on every channel of its catalog
    bare = _catalog(text(services=""))
    assert {tuple(c.name for c in bare.channels_of(event)) for event in bare.events} == {("things", "hooks", "removals")}


def test_the_services_that_receive_a_version() -> None:
    catalog = _catalog()
    names = lambda services: [service.name for service in services]  # noqa: E731
    assert names(catalog.receivers_of("nl.test.thing-happened", "1.4.0")) == ["old-reader"]
    assert names(catalog.receivers_of("nl.test.thing-happened", "2.0.0")) == ["new-reader"]
    assert names(catalog.receivers_of("nl.test.thing-happened", "3.0.0")) == []
    assert names(catalog.senders_of(catalog.events[2])) == ["registry"]


RANGES = [">=1.0.0 <2.0.0", "^1.2.3", "~1.2.3", "1.x", "1.2.x", "*", "", "1.2.3 - 2.3.4", "1.2 - 2", ">1.2.3", "<=1.2.3",
          "^0.2.3", "^0.0.3", "~1", "~0.2", "1.2.3 || >=3.0.0 <4.0.0", "=1.2.3", "1.2.3", "^1.x", ">=1", "<2",
          "x", "1", "~1.2", ">= 1.0.0", "^1.2.3 ^1.5.0", ">1.0.0 <1.0.0", "1.0.0 - 1.0.0", "from 2 on", "1.2.3.4",
          ">=1.0.0 || <0.5.0 || 2.x", "v1.2.3", "~> 1.2"]
VERSIONS = ["0.0.3", "0.0.4", "0.2.3", "0.2.9", "0.3.0", "1.0.0", "1.2.2", "1.2.3", "1.2.9", "1.3.0", "1.5.0", "1.9.9",
            "2.0.0", "2.3.4", "2.3.5", "2.9.0", "3.0.0", "3.5.1", "4.0.0"]


@pytest.mark.real
def test_ranges_read_as_npm_semver_reads_them(node_tools) -> None:
    """npm's own `semver` package is the independent judge of every range."""
    from generator.string_formats import in_npm_range, is_npm_range

    script = (
        "import semver from 'semver'; const c = JSON.parse(process.argv[1]); const out = {};"
        "for (const r of c.ranges) out[r] = semver.validRange(r) === null ? null"
        " : c.versions.filter((v) => semver.satisfies(v, r));"
        "console.log(JSON.stringify(out));"
    )
    done = subprocess.run(["node", "--input-type=module", "-e", script, json.dumps({"ranges": RANGES, "versions": VERSIONS})],
                          cwd=NODE_DIR, capture_output=True, text=True, check=True)
    npm = json.loads(done.stdout)
    ours = {r: ([v for v in VERSIONS if in_npm_range(v, r)] if is_npm_range(r) else None) for r in RANGES}
    assert ours == npm
    assert sum(value is None for value in npm.values()) >= 2 and sum(bool(value) for value in npm.values()) >= 20


def _asyncapi(tmp_path, source: str) -> dict:
    """The AsyncAPI files of ``source`` (one catalog file), written under tmp_path."""
    import yaml

    from generator.commands.lint import lint
    from generator.render import render_all
    from generator.render.asyncapi import units

    (tmp_path / "catalog").mkdir(exist_ok=True)
    (tmp_path / "catalog" / "c.yaml").write_text(source)
    result = lint(str(tmp_path / "catalog"))
    assert not result.has_errors, [str(d) for d in result.diagnostics]
    files = render_all(units(result.catalog_set))
    documents = {}
    for relative, content in files.items():
        path = tmp_path / "out" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        documents[path] = yaml.safe_load(content)
    return documents


SERVERS = """\
servers:
  broker: {host: kafka.example.org:9092, protocol: kafka}
  webhooks: {host: hooks.example.org, protocol: https, pathname: /events}
  mosquitto: {host: mqtt.example.org, protocol: mqtt}
"""


@pytest.mark.real
def test_asyncapi_has_the_catalogs_channels_and_passes_the_official_parser(node_tools, tmp_path) -> None:
    from .test_asyncapi_output import parse

    documents = _asyncapi(tmp_path, catalog_text("cloudevents", header=SERVERS + CHANNELS + SERVICES, events=EVENTS))
    names = sorted(path.relative_to(tmp_path / "out").as_posix() for path in documents)
    assert names == ["asyncapi/services/new-reader.yaml", "asyncapi/services/old-reader.yaml",
                     "asyncapi/services/registry.yaml", "asyncapi/test-catalog.yaml"]
    results = parse(node_tools, sorted(documents))
    for path, reports in results.items():
        for parser, report in reports.items():
            assert report["parsed"], (path, parser, report["diagnostics"])
            assert [d for d in report["diagnostics"] if d["severity"] <= 1] == [], (path, parser)
    main = documents[tmp_path / "out" / "asyncapi" / "test-catalog.yaml"]
    assert {name: channel["address"] for name, channel in main["channels"].items()} == {
        "things": "things.{region}", "hooks": "/hooks/things", "removals": "things/removed"}
    things = main["channels"]["things"]
    assert things["parameters"] == {"region": {"description": "The `region` part of the address."}}
    assert things["servers"] == [{"$ref": "#/servers/broker"}]
    assert things["bindings"] == {"kafka": {"bindingVersion": "0.5.0"}}
    assert sorted(things["messages"]) == ["nl.test.thing-happened.1.0.0", "nl.test.thing-happened.2.0.0"]
    assert sorted(main["channels"]["hooks"]["messages"]) == ["nl.test.thing-happened.2.0.0"]
    assert main["channels"]["hooks"]["servers"] == [{"$ref": "#/servers/webhooks"}]
    message = main["components"]["messages"]["nl.test.thing-happened.1.0.0"]
    assert message["bindings"]["kafka"]["key"]["description"] == "The event's `subject` attribute."
    # operations per service and channel, one per message (Modelina makes a union of several)
    assert {name: (op["action"], op["channel"]["$ref"], len(op["messages"])) for name, op in main["operations"].items()} == {
        "registry.send.things.nl.test.thing-happened.1.0.0": ("send", "#/channels/things", 1),
        "registry.send.things.nl.test.thing-happened.2.0.0": ("send", "#/channels/things", 1),
        "registry.send.hooks.nl.test.thing-happened.2.0.0": ("send", "#/channels/hooks", 1),
        "registry.send.removals.nl.test.thing-removed.notification": ("send", "#/channels/removals", 1),
        "old-reader.receive.things.nl.test.thing-happened.1.0.0": ("receive", "#/channels/things", 1),
        "new-reader.receive.hooks.nl.test.thing-happened.2.0.0": ("receive", "#/channels/hooks", 1),
    }
    assert main["operations"]["registry.send.removals.nl.test.thing-removed.notification"]["bindings"] == {
        "mqtt": {"qos": 1, "retain": False, "bindingVersion": "0.2.0"}}
    assert main["operations"]["registry.send.hooks.nl.test.thing-happened.2.0.0"]["bindings"] == {
        "http": {"method": "POST", "bindingVersion": "0.3.0"}}
    # the service's own view: its operations and what they use
    reader = documents[tmp_path / "out" / "asyncapi" / "services" / "old-reader.yaml"]
    assert list(reader["operations"]) == ["old-reader.receive.things.nl.test.thing-happened.1.0.0"]
    assert list(reader["channels"]) == ["things"] and reader["channels"]["things"]["address"] == "things.{region}"
    assert list(reader["channels"]["things"]["messages"]) == ["nl.test.thing-happened.1.0.0"]
    assert list(reader["components"]["messages"]) == ["nl.test.thing-happened.1.0.0"]
    assert reader["info"]["title"].startswith("old-reader")


@pytest.mark.real
def test_asyncapi_amqp_channel_bindings(node_tools, tmp_path) -> None:
    from .test_asyncapi_output import parse

    channels = ("channels:\n  things:\n    protocol: amqp\n    address: things\n"
                "    bindings: {exchange: topic, routingKey: 'thing.{kind}'}\n")
    documents = _asyncapi(tmp_path, catalog_text("cloudevents", header=channels, events=EVENTS))
    (path, main), = documents.items()
    report = parse(node_tools, [path])[str(path)]["latest"]
    assert report["parsed"] and [d for d in report["diagnostics"] if d["severity"] <= 1] == []
    assert main["channels"]["things"]["bindings"]["amqp"]["exchange"]["name"] == "things"
    # no services: the producer sends every event on every channel
    operations = list(main["operations"].values())
    assert len(operations) == 3 and {op["action"] for op in operations} == {"send"}
    assert all(op["bindings"]["amqp"]["cc"] == ["thing.{kind}"] for op in operations)


DIFF_SERVICES = """\
services:
  registry:
    sends: [{type: nl.test.thing-happened, channel: things}]
  old-reader:
    title: Old reader
    receives: [{type: nl.test.thing-happened, dataversion: '>=1.0.0 <1.1.0', channel: things}]
  caret-reader:
    receives: [{type: nl.test.thing-happened, dataversion: '^1.0.0', channel: things}]
  any-reader:
    receives: [{type: nl.test.thing-happened}]
"""
THING = """\
  - type: nl.test.thing-happened
    dataversion: {version}
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      properties:
        thingId: {{type: {kind}, description: Id of the thing.}}
"""


def test_diff_names_the_services_a_breaking_change_reaches(tmp_path) -> None:
    """1.0.0 -> 1.1.0 that changes a field's type breaks consumers: the diff names
    the services whose range holds 1.1.0, and not the one whose range stops before it."""
    from .conftest import run_evcat

    header = "channels:\n  things: {protocol: kafka, address: things}\n" + DIFF_SERVICES
    first = THING.format(version="1.0.0", kind="string")
    for name, events in (("old", first), ("new", first + THING.format(version="1.1.0", kind="integer"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "c.yaml").write_text(catalog_text("cloudevents", header=header, events=events))
    done = run_evcat("diff", str(tmp_path / "old"), str(tmp_path / "new"))
    assert "Traceback" not in done.stderr, done.stderr
    (line,) = [row for row in done.stdout.splitlines() if "BREAKS RECEIVERS" in row]
    assert "caret-reader (test-catalog, receives ^1.0.0)" in line and "any-reader (test-catalog, receives *)" in line
    assert "old-reader" not in line
    as_json = json.loads(run_evcat("diff", "--format", "json", str(tmp_path / "old"), str(tmp_path / "new")).stdout)
    (report,) = as_json["events"]
    assert [entry.split(" ")[0] for entry in report["receivers"]] == ["caret-reader", "any-reader"]
    # a compatible change reaches no one
    (tmp_path / "new" / "c.yaml").write_text(
        catalog_text("cloudevents", header=header, events=first + THING.format(version="1.1.0", kind="string")))
    assert "BREAKS RECEIVERS" not in run_evcat("diff", str(tmp_path / "old"), str(tmp_path / "new")).stdout


@pytest.mark.real
def test_a_service_name_in_two_catalogs_gets_a_document_per_catalog(tmp_path, node_tools) -> None:
    """Not one file written over the other: asyncapi/services/<catalog>/<service>.yaml."""
    import yaml

    from generator.commands.lint import lint
    from generator.render import render_all
    from generator.render.asyncapi import units

    services = "services:\n  indexer:\n    receives: [{type: nl.test.thing-happened}]\n"
    for catalog_id, type_ in (("thing-events-one", "nl.test.thing-happened"), ("thing-events-two", "nl.test.other-happened")):
        events = EVENTS.split("  - type: nl.test.thing-removed")[0].replace("nl.test.thing-happened", type_)
        (tmp_path / f"{catalog_id}.yaml").write_text(catalog_text(
            "cloudevents", catalog_id=catalog_id, events=events,
            header=services.replace("nl.test.thing-happened", type_)))
    result = lint(str(tmp_path))
    assert not result.has_errors, [str(d) for d in result.diagnostics]
    files = render_all(units(result.catalog_set))
    assert sorted(name for name in files if "/services/" in name) == [
        "asyncapi/services/thing-events-one/indexer.yaml", "asyncapi/services/thing-events-two/indexer.yaml"]
    second = yaml.safe_load(files["asyncapi/services/thing-events-two/indexer.yaml"])
    assert second["id"] == "urn:evcat:thing-events-two:service:indexer"
    # without channels, the service's view has its own operations: it receives
    assert [(op["action"], op["channel"]["$ref"]) for op in second["operations"].values()] == [
        ("receive", "#/channels/nl.test.other-happened")] * 2  # one per message (1.0.0, 2.0.0)
    assert list(second["channels"]) == ["nl.test.other-happened"]
    from .test_asyncapi_output import parse

    written = []
    for name, content in files.items():
        path = tmp_path / "out" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    for path, reports in parse(node_tools, written).items():
        for parser, report in reports.items():
            assert report["parsed"] and [d for d in report["diagnostics"] if d["severity"] <= 1] == [], (path, parser)
