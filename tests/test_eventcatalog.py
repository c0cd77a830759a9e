"""`evcat generate --only eventcatalog`: a content tree EventCatalog builds as it is."""

from __future__ import annotations

import atexit
import html
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.commands.generate import render
from generator.commands.lint import lint
from generator.naming import safe_file_name
from generator.render.eventcatalog import (
    BUILD_COMMAND,
    NO_DATAVERSION,
    NODE_VERSION,
    OVERRIDES,
    channel_id,
    event_id,
    service_id,
    viewer_schema,
)

from .conftest import EVENTCATALOG_PROJECTS, NPM_CACHE, ROOT, run_evcat

SOURCES = [ROOT / "catalog", ROOT / "tests" / "catalogs" / "hostile", ROOT / "tests" / "catalogs" / "conformance",
           ROOT / "tests" / "catalogs" / "services"]
BUILT = [SOURCES[0], SOURCES[1], SOURCES[3]]  # the sources the EventCatalog build test builds (one project)


def _front_matter(content: bytes) -> tuple[dict[str, Any], str]:
    text = content.decode("utf-8")
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def _export(source: Path) -> tuple[Any, dict[str, bytes]]:
    result = lint(str(source))
    assert not result.has_errors
    return result.catalog_set, render(result.catalog_set, ["eventcatalog"])["eventcatalog"]


def _versions(catalog_set: Any) -> dict[str, list[str]]:
    """Every event id with its versions, newest first."""
    from generator.string_formats import semver_key

    found: dict[str, list[str]] = {}
    for event in catalog_set.events:
        found.setdefault(event_id(event.type), []).append(event.dataversion or NO_DATAVERSION)
    return {key: sorted(value, key=semver_key, reverse=True) for key, value in found.items()}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_content_tree(source: Path) -> None:
    catalog_set, files = _export(source)
    assert not [path for path in files if path.endswith(".mdx")]  # MDX would run {...} from a catalog as code
    pages = {path: _front_matter(content) for path, content in files.items() if path.endswith(".md")}
    events = {(data["id"], data["version"]): path for path, (data, _) in pages.items() if "/events/" in path and path.endswith("/index.md")}
    for event_key, versions in _versions(catalog_set).items():
        latest, *older = versions
        latest_path = next(path for (key, version), path in events.items() if key == event_key and version == latest)
        assert latest_path.endswith(f"/events/{event_key}/index.md")
        for version in older:
            assert events[(event_key, version)].endswith(f"/events/{event_key}/versioned/{safe_file_name(version)}/index.md")
    assert len(events) == len(catalog_set.events)
    for catalog in catalog_set.catalogs:
        domain, _ = pages[f"eventcatalog/domains/{catalog.id}/index.md"]
        team, _ = pages[f"eventcatalog/teams/{catalog.id}-producer.md"]
        assert domain["owners"] == [team["id"]] and domain["name"] == catalog.title
        contact = catalog.producer.contact
        if contact is not None and contact.email:
            assert team["email"] == contact.email
        for event in catalog.events:
            path = events[(event_id(event.type), event.dataversion or NO_DATAVERSION)]
            data, body = pages[path]
            assert data["owners"] == [team["id"]] and data["name"] == event.title
            assert bool(data.get("deprecated")) == event.deprecated
            folder = path.rsplit("/", 1)[0]
            if event.payload is not None:
                assert data["schemaPath"] == "schema.json"
                assert json.loads(files[f"{folder}/data.schema.json"]) == event.payload.bundled(catalog_set.schemas)
                assert "$ref" not in files[f"{folder}/schema.json"].decode()  # the viewer does not follow $ref
            if event.examples:
                assert "## Example" in body
    for path, (data, body) in pages.items():
        assert "<script" not in body and "<b>" not in body, path  # catalog HTML is text


def test_changelog_between_dataversions() -> None:
    _, files = _export(ROOT / "catalog")
    (base,) = [path.removesuffix("/changelog.md") for path in files
               if path.startswith("eventcatalog/domains/meter-data/") and path.endswith("/events/mdm.meter.updated/changelog.md")]
    data, body = _front_matter(files[f"{base}/changelog.md"])
    assert data["version"] == "2.0.0" and "Changes since dataversion 1.2.0" in body
    assert "`/data/meterId`: property removed (was required) **breaks consumers**" in body
    assert f"{base}/versioned/1.2.0/changelog.md" in files and f"{base}/versioned/1.0.1/changelog.md" not in files


def test_recursive_schema_is_cut_not_crashing() -> None:
    catalog_set, _ = _export(ROOT / "tests" / "catalogs" / "hostile")
    event = next(e for e in catalog_set.events if e.payload is not None)
    viewer = viewer_schema(event.payload.bundled(catalog_set.schemas), catalog_set.schemas)
    node = viewer["properties"]["node"]
    assert node["title"] == "Node" and node["properties"]["value"]["type"] == "string"
    assert node["properties"]["next"]["title"] == "Node" and "recursive" in node["properties"]["next"]["description"]
    assert "properties" not in node["properties"]["next"]  # a stub, not another copy
    # A schema that refers to itself many ways stays small: depth and size are bounded.
    shared = {f"S{i}": type(catalog_set.schemas["Node"])(f"S{i}", f"S{i}", "x.yaml", {
        "type": "object", "properties": {f"p{j}": {"$ref": f"#/$defs/S{(i + j) % 12}"} for j in range(4)}}) for i in range(12)}
    wide = viewer_schema({"$ref": "#/$defs/S0"}, shared)
    assert len(json.dumps(wide)) < 5_000_000


def test_services_and_channels_with_their_sends_and_receives() -> None:
    """Catalog-format.md §9 in EventCatalog's own front matter (content.config.ts
    of @eventcatalog/core 3.48.4): services with sends (to channels) and
    receives (from channels, the dataversion range kept), channels with
    address, protocols and parameters (the event versions on it in its body);
    the catalog's services replace the producer service."""
    catalog_set, files = _export(ROOT / "tests" / "catalogs" / "services")
    (catalog,) = catalog_set.catalogs
    pages = {path: _front_matter(content)[0] for path, content in files.items() if path.endswith(".md")}
    domain = pages["eventcatalog/domains/acme-storage/index.md"]
    assert domain["services"] == [{"id": f"acme-storage.{s.name}"} for s in catalog.services]
    assert not [path for path in pages if "-producer/index.md" in path]  # no invented producer service
    base = "eventcatalog/domains/acme-storage"
    store = pages[f"{base}/services/acme-storage.blob-store/index.md"]
    assert store["name"] == "Blob store" and store["owners"] == ["acme-storage.storage_team"]
    assert pages["eventcatalog/teams/acme-storage.storage_team.md"] == {
        "id": "acme-storage.storage_team", "name": "Storage team", "email": "storage@example.org"}
    assert store["sends"] == [
        {"id": "org.example.storage.blob-created", "version": "*", "to": [{"id": "acme-storage.blob-events", "version": "1.0.0"}]},
        {"id": "org.example.storage.blob-created", "version": "2.0.0",
         "to": [{"id": "acme-storage.storage-hook", "version": "1.0.0"}]},
        {"id": "org.example.storage.blob-deleted", "version": "*", "to": [{"id": "acme-storage.blob-events", "version": "1.0.0"}]},
    ]
    indexer = pages[f"{base}/services/acme-storage.indexer/index.md"]
    assert indexer["receives"] == [{"id": "org.example.storage.blob-created", "version": ">=1.0.0 <2.0.0",
                                    "from": [{"id": "acme-storage.blob-events", "version": "1.0.0"}]}]
    assert "sends" not in indexer
    channel = pages[f"{base}/channels/acme-storage.blob-events/index.md"]
    assert channel["address"] == "storage.{region}.blobs" and channel["protocols"] == ["kafka"]
    assert list(channel["parameters"]) == ["region"] and channel["summary"] == "All blob events of one region."
    audit = files[f"{base}/channels/acme-storage.audit/index.md"].decode()
    assert "| `routingKey` | `\"storage.#\"` |" in audit
    events = {(data["id"], data["version"]): data for path, data in pages.items() if "/events/" in path and path.endswith("index.md")}
    # No `channels` on an event: EventCatalog 3's build "migrates" that old API into
    # the services, overwriting their to/from (and rewriting evcat's files).
    assert len(events) == 3 and not [key for key, data in events.items() if "channels" in data]
    body = files[f"{base}/channels/acme-storage.blob-events/index.md"].decode()
    assert "| `org.example.storage.blob-created` | `2.0.0`, `1.0.0` |" in body
    assert all(path.startswith(f"{base}/events/") for path in pages if "/events/" in path)
    # A catalog without services keeps its producer service, and its events name no channel.
    hostile_set, hostile = _export(ROOT / "tests" / "catalogs" / "hostile")
    for other in hostile_set.catalogs:
        assert not other.services
        assert f"eventcatalog/domains/{safe_file_name(other.id)}/services/{safe_file_name(other.id)}-producer/index.md" in hostile


def test_colons_are_no_directives() -> None:
    from generator.render.eventcatalog import ec_text

    assert ec_text("urn:nld:oin at hh:mm:ss, `a:b` kept, [x](https://e.nl)") == (
        "urn\\:nld\\:oin at hh\\:mm\\:ss, `a:b` kept, [x](https://e.nl)"
    )


def test_not_a_default_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_evcat("generate", "catalog", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert not (out / "eventcatalog").exists() and (out / "docs" / "index.html").exists()
    result = run_evcat("generate", "catalog", "-o", str(out), "--only", "eventcatalog")
    assert result.returncode == 0, result.stderr
    assert (out / "eventcatalog" / "eventcatalog.config.js").exists() and (out / "docs" / "index.html").exists()
    bad = run_evcat("generate", "catalog", "-o", str(out), "--only", "eventcatalogue")
    assert bad.returncode == 2 and "eventcatalog" in bad.stderr


def readme_command() -> str:
    """The README's command that builds the export (its EventCatalog section's
    first ``sh`` block), so that the README and the tests cannot drift apart."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## EventCatalog\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the README's EventCatalog section has no sh block"
    lines = [line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(lines) == 1, lines
    return lines[0]


def _package(files: dict[str, bytes], name: str) -> Any:
    return json.loads(files[f"eventcatalog/{name}"])


def test_project_pins_what_it_installs() -> None:
    """package.json pins every version; the lock file is npm's for exactly
    that package.json (its root entry, the overrides applied); the Node.js
    the project installs meets its own `engines`, which `.nvmrc` names."""
    _, files = _export(ROOT / "catalog")
    package, lock = _package(files, "package.json"), _package(files, "package-lock.json")
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", version) for version in package["dependencies"].values()), package
    assert lock["lockfileVersion"] == 3 and lock["name"] == package["name"]
    root = lock["packages"][""]
    assert root["dependencies"] == package["dependencies"] and root["engines"] == package["engines"]
    for name, version in {**package["dependencies"], **package["overrides"], **OVERRIDES}.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version, name
    assert not [key for key, entry in lock["packages"].items() if "resolved" in entry]  # any registry the user's npm uses
    minimum = re.fullmatch(r">=(\d+)\.(\d+)\.(\d+)", package["engines"]["node"])
    assert minimum is not None and tuple(map(int, NODE_VERSION.split("."))) >= tuple(map(int, minimum.groups()))
    assert package["dependencies"]["node"] == NODE_VERSION
    assert files["eventcatalog/.nvmrc"].decode().strip() == NODE_VERSION.split(".")[0]


def test_readme_states_the_command_and_the_node_it_needs() -> None:
    command = readme_command()
    assert command == f"cd OUT/eventcatalog && {BUILD_COMMAND}"
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## EventCatalog\n", 1)[1].split("\n## ", 1)[0]
    assert f"Node.js {NODE_VERSION}" in section and ">= 22.12" in section


def _versions_built(dist: Path) -> set[tuple[str, str]]:
    return {(path.parent.parent.name, path.parent.name) for path in (dist / "docs" / "events").glob("*/*/index.html")}


def _build_environment() -> dict[str, str]:
    """The machine's environment (its Node.js, npm and npm settings), with
    npm's cache in the one test cache folder and no telemetry."""
    environment = {key: value for key, value in os.environ.items() if not key.lower().startswith("npm_config_")}
    environment.update(npm_config_cache=str(NPM_CACHE), npm_config_update_notifier="false", CI="1",
                       ASTRO_TELEMETRY_DISABLED="1", NODE_OPTIONS="--max-old-space-size=6144")  # 3 GiB ran out in a run (2,980 MB at the crash)
    return environment


@dataclass
class _ReadmeBuild:
    project: Path
    generated: subprocess.CompletedProcess[str]
    command: str = ""
    locked: bytes = b""
    run: subprocess.CompletedProcess[str] | None = None


def _readme_build() -> _ReadmeBuild:
    """The export of the shipped catalog built exactly as the README says:
    its command, run verbatim (OUT is the folder the export is written to)
    with the machine's npm and Node.js, installing from the registry with the
    export's own lock file. Only processes: it may run in the background."""
    out = EVENTCATALOG_PROJECTS / "readme"
    shutil.rmtree(out, ignore_errors=True)
    generated = run_evcat("generate", "catalog", "-o", str(out), "--only", "eventcatalog", "--no-cache")
    build = _ReadmeBuild(out / "eventcatalog", generated)
    if generated.returncode == 0:
        build.locked = (build.project / "package-lock.json").read_bytes()
        build.command = readme_command().replace("OUT", shlex.quote(str(out)))
        build.run = _run(build.command, ROOT, timeout=2400)
    return build


CATALOGS_PROJECT = EVENTCATALOG_PROJECTS / "catalogs"


def _catalogs_export() -> tuple[list[Any], list[dict[str, bytes]]]:
    """The export of the shipped and the hostile catalogs written as one
    project (eventcatalog.config.js and package.json: the last export's)."""
    shutil.rmtree(CATALOGS_PROJECT, ignore_errors=True)
    sets, exports = [], []
    for source in BUILT:
        catalog_set, files = _export(source)
        sets.append(catalog_set)
        exports.append(files)
        for relative, content in files.items():
            path = CATALOGS_PROJECT / relative.removeprefix("eventcatalog/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
    return sets, exports


def _catalogs_build(node_modules: Path) -> subprocess.CompletedProcess[str]:
    """EventCatalog's build of the project _catalogs_export wrote, with the
    README project's node_modules. Only processes: it may run in the background."""
    (CATALOGS_PROJECT / "node_modules").symlink_to(node_modules, target_is_directory=True)
    return _run("npx eventcatalog build", CATALOGS_PROJECT, timeout=1800)


_RUNNING: set[subprocess.Popen[str]] = set()


def _run(command: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """``bash -e -c command`` in its own process group, which is killed with
    all its processes on timeout or when the test run ends first (a run
    stopped by -x or Ctrl-C leaves no build behind)."""
    with subprocess.Popen(["bash", "-e", "-c", command], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=_build_environment(), start_new_session=True) as process:
        _RUNNING.add(process)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            stdout, stderr = process.communicate()
            stderr += f"\n[killed after {timeout} s]"
        finally:
            _RUNNING.discard(process)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _kill(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@atexit.register
def _stop_builds() -> None:
    for process in list(_RUNNING):
        _kill(process)


def _settle(future: Future[Any], work: Callable[[], Any]) -> None:
    try:
        future.set_result(work())
    except BaseException as error:  # noqa: BLE001 -- handed to the test that waits for it
        future.set_exception(error)


@dataclass
class _Background:
    """The two builds take a few minutes each, mostly in one Node.js process:
    they start in a background thread as soon as the run's tests are known
    (conftest.pytest_collection_finish) and overlap the tests before this module."""

    readme: Future[_ReadmeBuild] = field(default_factory=Future)
    catalogs: Future[subprocess.CompletedProcess[str]] | None = None
    exported: tuple[list[Any], list[dict[str, bytes]]] | None = None


_STARTED: list[_Background] = []


def start_in_background(items: list[pytest.Item]) -> None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        return  # the fixture fails with the reason
    if not any("eventcatalog" in getattr(item, "fixturenames", ()) for item in items):
        return
    started = _Background()
    if any(item.name == test_eventcatalog_builds_every_event_and_version.__name__ for item in items):
        started.exported = _catalogs_export()  # in this thread: it runs evcat in-process
        started.catalogs = Future()

    def work() -> None:
        _settle(started.readme, _readme_build)
        if started.catalogs is not None:
            _settle(started.catalogs, lambda: _catalogs_build(started.readme.result().project / "node_modules"))

    threading.Thread(target=work, name="EventCatalog builds", daemon=True).start()
    _STARTED.append(started)


@pytest.fixture(scope="session")
def eventcatalog() -> Path:
    """The README's build of the shipped catalog (_readme_build). The project
    (with its node_modules) is kept in .test-cache/eventcatalog/readme/ to look at."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.fail("node and npm are needed for the EventCatalog build (apt-get install nodejs npm)")
    build = _STARTED[0].readme.result() if _STARTED else _readme_build()
    assert build.generated.returncode == 0, build.generated.stderr
    assert build.run is not None
    assert build.run.returncode == 0, (build.command, (build.run.stdout + build.run.stderr)[-5000:])
    # npm kept the lock file byte for byte: it was npm's own for package.json.
    assert (build.project / "package-lock.json").read_bytes() == build.locked
    # The build changed none of evcat's files: generating again finds OUT up to date.
    again = run_evcat("generate", "catalog", "-o", str(build.project.parent), "--only", "eventcatalog", "--check",
                      "--no-cache")
    assert again.returncode == 0, again.stderr
    return build.project


@pytest.mark.slow
def test_readme_command_builds_a_page_per_event_and_version(eventcatalog: Path) -> None:
    """Counted from the catalog, not from the export: every (type, dataversion)
    of the shipped catalog is a page, and there are no others."""
    result = lint(str(ROOT / "catalog"))
    wanted = {(safe_file_name(event.type), event.dataversion or NO_DATAVERSION) for event in result.catalog_set.events}
    assert len(wanted) == len(result.catalog_set.events) > 10
    assert _versions_built(eventcatalog / "dist") == wanted
    node = subprocess.run(["npx", "node", "--version"], cwd=eventcatalog, capture_output=True, text=True, check=True,
                          env=_build_environment())
    assert node.stdout.strip() == f"v{NODE_VERSION}"  # what npx ran EventCatalog with, whatever the machine's Node.js


def _text(path: Path) -> str:
    page = re.sub(r"<script.*?</script>|<style.*?</style>", " ", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    text = html.unescape(re.sub(r"<[^>]+>", " ", page)).translate({0x201C: '"', 0x201D: '"', 0x2018: "'", 0x2019: "'"})
    return " ".join(text.split())  # quotes straightened: EventCatalog's Markdown uses smartypants


@pytest.mark.slow
def test_eventcatalog_builds_every_event_and_version(eventcatalog: Path) -> None:
    """The export of the shipped and the hostile catalogs (one project: one
    build of a few minutes, with the README project's node_modules) builds with
    EventCatalog as it is, with no licence key (the community edition), and
    every event and every version is a page that shows the event's source and
    example."""
    started = _STARTED[0] if _STARTED else None
    if started is not None and started.catalogs is not None and started.exported is not None:
        sets, exports = started.exported
        run = started.catalogs.result()
    else:
        sets, exports = _catalogs_export()
        run = _catalogs_build(eventcatalog / "node_modules")
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    project = CATALOGS_PROJECT
    dist = project / "dist"
    built = {str(path.relative_to(dist)) for path in dist.rglob("index.html")}
    for catalog_set in sets:
        for key, versions in _versions(catalog_set).items():
            for version in versions:
                assert f"docs/events/{key}/{version}/index.html" in built, (key, version)
        for catalog in catalog_set.catalogs:
            assert f"docs/domains/{catalog.id}/{catalog.version}/index.html" in built
        for event in catalog_set.events:
            text = _text(dist / "docs" / "events" / event_id(event.type) / (event.dataversion or NO_DATAVERSION) / "index.html")
            assert event.title.split("<")[0].strip() in text
            assert event.source in text, event.type  # a colon in text is no remark directive
            if event.examples:
                assert f'"type":"{event.type}"' in "".join(text.split())  # the example event
            if event.deprecated:
                assert "deprecated" in text.lower()
        for catalog in catalog_set.catalogs:  # catalog-format.md §9: the services and channels are pages too
            for service in catalog.services:
                page = dist / "docs" / "services" / service_id(catalog, service.name) / catalog.version / "index.html"
                assert page.exists(), sorted(built)[:50]
                assert service.title in _text(page)
            for channel in catalog.channels:
                page = dist / "docs" / "channels" / channel_id(catalog, channel.name) / catalog.version / "index.html"
                assert page.exists(), sorted(built)[:50]
                assert channel.address in _text(page)
    storage = sets[2].catalogs[0]
    # EventCatalog read the relations: its own diagram of a service (the
    # visualiser's Mermaid export) has the channels and the event versions.
    def mermaid(service: str) -> tuple[str, list[str]]:
        text = (dist / "visualiser" / "services" / service_id(storage, service) / f"{storage.version}.mermaid").read_text()
        return text, [line.strip() for line in text.splitlines() if "-->" in line]

    def node(resource_id: str) -> str:  # EventCatalog's Mermaid node id: the id and version, [^A-Za-z0-9] -> _
        return re.sub(r"[^A-Za-z0-9]", "_", f"{resource_id}_{storage.version}")

    indexer, edges = mermaid("indexer")
    # The range >=1.0.0 <2.0.0 took dataversion 1.0.0 only, from the channel blob-events.
    assert '"Blob created (1.0.0)"' in indexer and "Blob created (2.0.0)" not in indexer
    assert any(edge.startswith(node(channel_id(storage, "blob-events"))) and edge.endswith(node(service_id(storage, "indexer")))
               for edge in edges), edges
    store, edges = mermaid("blob-store")
    assert "Blob created" in store and "Blob deleted" in store
    assert any(edge.startswith(node(service_id(storage, "blob-store"))) and "blob_deleted" in edge for edge in edges), edges
    _, edges = mermaid("archive")  # sends blob-deleted to the audit channel only
    assert any(node(channel_id(storage, "audit")) in edge for edge in edges), edges
    # The build rewrote none of the export (EventCatalog migrates an event's `channels`
    # into the services' to/from, overwriting them: the export writes none).
    rewritten = [relative for files in exports for relative, content in files.items()
                 if relative.endswith(".md") and (project / relative.removeprefix("eventcatalog/")).read_bytes() != content]
    assert rewritten == []
    hostile = _text(dist / "docs" / "events" / "io.example.class-import.from" / "1.0.0" / "index.html")
    assert "<script>x</script>" not in (dist / "docs" / "events" / "io.example.class-import.from" / "1.0.0" / "index.html").read_text()
    assert "Keyword \"import\" as an Integer." in hostile
