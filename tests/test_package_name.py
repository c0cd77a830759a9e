"""The generated package's name (catalog-format.md §9, rule CAT-PACKAGE-NAME):
``package`` sets the import and distribution name; a name that would replace
something installed is refused with a free suggestion, and nothing is
generated under it."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from generator.package_names import normalise, top_pypi

from .conftest import catalog_text, run_evcat


def _catalog(tmp_path: Path, text: str) -> Path:
    directory = tmp_path / "catalog"
    directory.mkdir()
    (directory / "c.yaml").write_text(text, encoding="utf-8")
    return directory


def _package_diagnostics(directory: Path) -> tuple[int, list[dict]]:
    result = run_evcat("lint", str(directory), "--no-cache", "--format", "json")
    found = json.loads(result.stdout)
    diagnostics = found["diagnostics"] if isinstance(found, dict) else found
    return result.returncode, [d for d in diagnostics if d.get("rule") == "CAT-PACKAGE-NAME"]


@pytest.mark.parametrize("catalog_id", ["httpx", "stripe"])
def test_a_catalog_id_that_names_an_installed_distribution_is_refused(tmp_path: Path, catalog_id: str) -> None:
    directory = _catalog(tmp_path, catalog_text("cloudevents", catalog_id=catalog_id))
    code, found = _package_diagnostics(directory)
    assert code == 1 and len(found) == 1, found
    diagnostic = found[0]
    assert diagnostic["severity"] == "error"
    assert f"'{catalog_id}'" in diagnostic["message"] and f"package: {catalog_id}_events" in diagnostic["message"], diagnostic
    # the quick fix renames the catalog id (the location is the id) to one whose package is free
    assert diagnostic["suggestion"] == f"{catalog_id}-events", diagnostic
    assert diagnostic["line"] == 1, diagnostic
    out = tmp_path / "out"
    generated = run_evcat("generate", str(directory), "-o", str(out), "--no-cache")
    assert generated.returncode != 0
    assert "CAT-PACKAGE-NAME" in generated.stdout + generated.stderr
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))
    # the suggestion is free: with it, the catalog lints clean
    (directory / "c.yaml").write_text(catalog_text("cloudevents", catalog_id=diagnostic["suggestion"]), encoding="utf-8")
    assert _package_diagnostics(directory) == (0, [])


@pytest.mark.parametrize(
    ("package", "why"),
    [
        ("pydantic", "dependency of the generated packages"),  # the runtime's REQUIRES
        ("paho_mqtt", "dependency of the generated packages"),  # an extra's requirement, normalised
        ("yaml", "import name of 'pyyaml'"),  # evcat's dependency, by import name (read from its metadata)
        ("jsonschema_rs", "dependency of evcat"),
        ("generator", "evcat itself"),
        ("json", "standard-library"),
        ("boto3", "most-downloaded"),
        ("class", "keyword"),
    ],
)
def test_a_written_package_that_is_taken_is_refused(tmp_path: Path, package: str, why: str) -> None:
    text = catalog_text("cloudevents", catalog_id="acme-storage").replace("producer:", f"package: {package}\nproducer:")
    directory = _catalog(tmp_path, text)
    code, found = _package_diagnostics(directory)
    assert code == 1 and len(found) == 1, found
    assert why in found[0]["message"].lower() or why in found[0]["message"], found[0]
    assert found[0]["suggestion"] == f"{package}_events", found[0]
    lines = text.splitlines()
    assert lines[found[0]["line"] - 1].startswith("package:"), found[0]


def test_the_default_name_of_a_standard_library_id_stays_prefixed(tmp_path: Path) -> None:
    """A catalog id `email` has always generated `catalog_email`: it replaces nothing."""
    directory = _catalog(tmp_path, catalog_text("cloudevents", catalog_id="email"))
    assert _package_diagnostics(directory) == (0, [])


def test_the_shipped_list_is_normalised_and_holds_the_known_names() -> None:
    names = top_pypi()
    assert len(names) >= 1000 and len(set(names)) == len(names)
    assert all(name == normalise(name) for name in names)
    assert {"stripe", "httpx", "requests", "boto3"} <= set(names)


def test_package_is_the_import_and_distribution_name(tmp_path: Path) -> None:
    text = catalog_text("cloudevents", catalog_id="acme-storage").replace("producer:", "package: acme_storage_events\nproducer:")
    directory = _catalog(tmp_path, text)
    out = tmp_path / "out"
    generated = run_evcat("generate", str(directory), "-o", str(out), "--no-cache", "--only", "python")
    assert generated.returncode == 0, generated.stdout + generated.stderr
    assert sorted(p.name for p in (out / "python").iterdir()) == ["acme_storage_events"]
    source = out / "python" / "acme_storage_events"
    wheels = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(source)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert built.returncode == 0, built.stderr
    wheel = next(wheels.glob("*.whl"))
    assert wheel.name.startswith("acme_storage_events-1.0.0-"), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read("acme_storage_events-1.0.0.dist-info/METADATA").decode()
        assert "\nName: acme_storage_events\n" in metadata or "\nName: acme-storage-events\n" in metadata, metadata[:300]
        assert "acme_storage_events/__init__.py" in archive.namelist()
    target = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert installed.returncode == 0, installed.stderr
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import importlib.metadata, acme_storage_events\n"
        "from acme_storage_events import parse_event\n"
        "event = parse_event({'specversion': '1.0', 'id': '1', 'source': sys.argv[2], 'type': 'nl.test.thing-happened',"
        " 'dataversion': '1.0.0', 'datacontenttype': 'application/json', 'data': {'thingId': 'T-1'}})\n"
        "assert event.data.thing_id == 'T-1', event\n"
        "assert acme_storage_events.__file__.startswith(sys.argv[1])\n"
        "print(importlib.metadata.distribution('acme_storage_events').metadata['Name'])\n"
    )
    from .conftest import SOURCES

    run = subprocess.run([sys.executable, "-c", code, str(target), SOURCES["cloudevents"]], capture_output=True, text=True, timeout=60, check=False,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert normalise(run.stdout.strip()) == "acme-storage-events"


def test_the_editor_quick_fix_gives_a_free_package(tmp_path: Path) -> None:
    """``evcat lsp`` offers the suggestion: `package: pydantic` becomes
    `package: pydantic_events`, and the error goes."""
    import asyncio

    from lsprotocol import types

    from tests.lsp_client import CatalogClient, uri

    text = catalog_text("cloudevents", catalog_id="acme-storage").replace("producer:", "package: pydantic\nproducer:")
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(tmp_path)
        document = uri(tmp_path / "c.yaml")
        await client.wait_for(lambda: any(d.code == "CAT-PACKAGE-NAME" for d in client.diagnostics.get(document, [])))
        client.open(tmp_path / "c.yaml")
        problem = next(d for d in client.diagnostics[document] if d.code == "CAT-PACKAGE-NAME")
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=document), range=problem.range,
                context=types.CodeActionContext(diagnostics=[problem]),
            )
        )
        fix = next(a for a in actions or [] if a.kind == types.CodeActionKind.QuickFix and "CAT-PACKAGE-NAME" in a.title)
        (edit,) = fix.edit.changes[document]
        assert edit.new_text == "pydantic_events"
        lines = text.split("\n")
        row = lines[edit.range.start.line]
        lines[edit.range.start.line] = row[: edit.range.start.character] + edit.new_text + row[edit.range.end.character :]
        assert lines[edit.range.start.line] == "package: pydantic_events"
        client.replace(document, "\n".join(lines))
        await client.wait_for(lambda: not any(d.code == "CAT-PACKAGE-NAME" for d in client.diagnostics.get(document, [])))
        await client.close()

    asyncio.run(asyncio.wait_for(scenario(), 120))
