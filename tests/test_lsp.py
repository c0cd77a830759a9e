"""``evcat lsp`` end to end: a real LSP client (pygls) talks to the server
over stdio (contract §8)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from lsprotocol import types

from tests.conftest import ROOT, catalog_text
from tests.lsp_client import CatalogClient, uri

SHARED = catalog_text(
    "nlgov",
    catalog_id="shared-types",
    header=(
        "schemas:\n"
        "  Address:\n"
        "    type: object\n"
        "    description: A postal address.\n"
        "    properties:\n"
        "      postalCode: {type: string, description: Dutch postal code.}\n"
    ),
)
USER_EVENT = """\
  - type: nl.test.person-moved
    dataversion: 1.0.0
    title: Person moved
    description: A person moved.
    data:
      type: object
      description: The move.
      properties:
        newAddress: {$ref: 'shared.yaml#/schemas/Address', description: Where to.}
"""
USER = catalog_text("nlgov", catalog_id="people", events=USER_EVENT)


def _lint_json(folder: Path) -> list[tuple]:
    """``evcat lint`` of the same files (run in the folder, as the server names files)."""
    done = subprocess.run(
        [sys.executable, "-m", "generator", "lint", ".", "--format", "json", "--no-cache"],
        cwd=folder, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.returncode in (0, 1), done.stderr
    return sorted(
        (d["file"], d["line"], d["column"], d["rule"], d["severity"], d["message"])
        for d in json.loads(done.stdout)["diagnostics"]
    )


def _published(client: CatalogClient, folder: Path) -> list[tuple]:
    rows = []
    for document_uri, diagnostics in client.diagnostics.items():
        name = Path(document_uri.removeprefix("file://")).relative_to(folder.resolve()).as_posix()
        for d in diagnostics:
            severity = "error" if d.severity == types.DiagnosticSeverity.Error else "warning"
            rows.append((name, d.range.start.line + 1, d.range.start.character + 1, d.code, severity, d.message))
    return sorted(rows)


def _run(scenario) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 120))


def _codes(client: CatalogClient, document_uri: str) -> list[str]:
    return [d.code for d in client.diagnostics.get(document_uri, [])]


def test_open_change_cross_file_fix_and_shutdown(tmp_path: Path) -> None:
    (tmp_path / "shared.yaml").write_text(SHARED.replace("Address:", "Adress:"))
    (tmp_path / "people.yaml").write_text(USER)

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(tmp_path)
        user_uri, shared_uri = uri(tmp_path / "people.yaml"), uri(tmp_path / "shared.yaml")
        # The whole directory is published at start, open or not: B's $ref is broken.
        await client.wait_for(lambda: "CAT-REF" in _codes(client, user_uri))
        assert _published(client, tmp_path) == _lint_json(tmp_path)

        # Opening a file publishes its diagnostics (again), even when unchanged.
        before = len(client.published)
        client.open(tmp_path / "shared.yaml")
        await client.wait_for(lambda: any(u == shared_uri for _, u, _ in client.published[before:]))
        # Fixing the target's name in A (unsaved) clears the error in B.
        client.replace(shared_uri, SHARED)
        await client.wait_for(lambda: _codes(client, user_uri) == [])
        (tmp_path / "shared.yaml").write_text(SHARED)
        assert _published(client, tmp_path) == _lint_json(tmp_path) == []

        # A change in B that introduces a problem is published for B.
        client.open(tmp_path / "people.yaml")
        client.replace(user_uri, USER.replace("newAddress", "new_address"))
        await client.wait_for(lambda: "PAY-CAMELCASE" in _codes(client, user_uri))
        (tmp_path / "people.yaml").write_text(USER.replace("newAddress", "new_address"))
        assert _published(client, tmp_path) == _lint_json(tmp_path)

        # The quick fix renames the property; applying it clears the diagnostic.
        problem = next(d for d in client.diagnostics[user_uri] if d.code == "PAY-CAMELCASE")
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=user_uri), range=problem.range,
                context=types.CodeActionContext(diagnostics=[problem]),
            )
        )
        fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix)
        (edit,) = fix.edit.changes[user_uri]
        assert edit.new_text == "newAddress"
        lines = USER.replace("newAddress", "new_address").split("\n")
        row = lines[edit.range.start.line]
        lines[edit.range.start.line] = row[: edit.range.start.character] + edit.new_text + row[edit.range.end.character :]
        client.replace(user_uri, "\n".join(lines))
        await client.wait_for(lambda: _codes(client, user_uri) == [])
        assert "\n".join(lines) == USER

        # Closing a buffer brings back the file on disk (which still has the problem).
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=user_uri)))
        await client.wait_for(lambda: "PAY-CAMELCASE" in _codes(client, user_uri))
        await client.close()
        assert client._server is None or client._server.returncode == 0

    _run(scenario)


def test_definition_hover_completion_symbols(tmp_path: Path) -> None:
    (tmp_path / "shared.yaml").write_text(SHARED)
    (tmp_path / "people.yaml").write_text(USER)
    user_lines = USER.split("\n")
    ref_line = next(i for i, line in enumerate(user_lines) if "$ref" in line)
    ref_column = user_lines[ref_line].index("#/schemas/Address") + len("#/schemas/")

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(tmp_path)
        user_uri = client.open(tmp_path / "people.yaml")
        await client.wait_for(lambda: user_uri in client.diagnostics)
        position = types.Position(line=ref_line, character=ref_column)
        where = types.TextDocumentIdentifier(uri=user_uri)

        target = await client.text_document_definition_async(types.DefinitionParams(text_document=where, position=position))
        shared_lines = SHARED.split("\n")
        assert target.uri == uri(tmp_path / "shared.yaml")
        assert target.range.start.line == next(i for i, line in enumerate(shared_lines) if "Address:" in line)
        assert target.range.start.character == 2 and target.range.end.character == 2 + len("Address")

        shown = await client.text_document_hover_async(types.HoverParams(text_document=where, position=position))
        assert "**Address** (shared.yaml)" in shown.contents.value
        assert "postalCode:" in shown.contents.value

        # Hover on a key: what the format says about it.
        row = next(i for i, line in enumerate(user_lines) if line.strip().startswith("dataversion:"))
        shown = await client.text_document_hover_async(
            types.HoverParams(text_document=where, position=types.Position(line=row, character=6))
        )
        assert shown.contents.value.startswith("**dataversion** (optional): Version of the payload, MAJOR.MINOR.PATCH.")

        # Completion: $ref targets, keys of an event, profiles, extension types.
        typing = USER.replace("{$ref: 'shared.yaml#/schemas/Address', description: Where to.}", "\n          $ref: ")
        typing = typing.replace("profile: nlgov", "profile: ")
        client.replace(user_uri, typing)
        lines = typing.split("\n")
        row = next(i for i, line in enumerate(lines) if "$ref" in line)
        found = await client.text_document_completion_async(
            types.CompletionParams(text_document=where, position=types.Position(line=row, character=len(lines[row])))
        )
        assert "shared.yaml#/schemas/Address" in [item.label for item in found.items]
        row = next(i for i, line in enumerate(lines) if line.startswith("profile:"))
        found = await client.text_document_completion_async(
            types.CompletionParams(text_document=where, position=types.Position(line=row, character=len(lines[row])))
        )
        assert [item.label for item in found.items] == ["cloudevents", "nlgov", "normo"]
        row = next(i for i, line in enumerate(lines) if line.startswith("    title:"))
        found = await client.text_document_completion_async(types.CompletionParams(text_document=where, position=types.Position(line=row, character=4)))
        labels = [item.label for item in found.items]
        assert {"dataversion", "subject", "extensions", "examples"} <= set(labels) and "catalog" not in labels
        with_extension = USER.replace("    data:\n", "    extensions:\n      traceparent:\n        type: \n    data:\n", 1)
        client.replace(user_uri, with_extension)
        lines = with_extension.split("\n")
        row = next(i for i, line in enumerate(lines) if line == "        type: ")
        found = await client.text_document_completion_async(
            types.CompletionParams(text_document=where, position=types.Position(line=row, character=len(lines[row])))
        )
        assert [item.label for item in found.items] == [
            "Boolean", "Integer", "String", "Binary", "URI", "URI-reference", "Timestamp"
        ]

        # Symbols: one per event (and shared schema), spanning its block.
        client.replace(user_uri, USER)
        symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=where))
        assert [(s.name, s.kind) for s in symbols] == [("nl.test.person-moved 1.0.0", types.SymbolKind.Event)]
        event_line = next(i for i, line in enumerate(user_lines) if "- type:" in line)
        assert symbols[0].range.start.line == event_line
        assert symbols[0].range.end.line == ref_line
        shared = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri(tmp_path / "shared.yaml")))
        )
        assert [(s.name, s.kind) for s in shared] == [
            ("nl.test.thing-happened 1.0.0", types.SymbolKind.Event), ("Address", types.SymbolKind.Struct)
        ]
        await client.close()

    _run(scenario)


def test_hover_on_a_diagnostic_shows_the_rule(tmp_path: Path) -> None:
    text = catalog_text("normo", events=(
        "  - type: tst.meter.update\n    dataversion: 1.0.0\n    title: Meter update\n"
        "    description: A meter.\n    datacontenttype: application/json\n"
        "    data: {type: object, description: The meter., properties: {meterId: {type: string, description: Id.}}}\n"
    ))
    (tmp_path / "meters.yaml").write_text(text)

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(tmp_path)
        meters = client.open(tmp_path / "meters.yaml")
        await client.wait_for(lambda: "NORMO-TYPE-PAST-TENSE" in _codes(client, meters))
        problem = next(d for d in client.diagnostics[meters] if d.code == "NORMO-TYPE-PAST-TENSE")
        shown = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=meters), position=problem.range.start)
        )
        assert "**NORMO-TYPE-PAST-TENSE** (error): The executed command is in the past tense (ID04)." in shown.contents.value
        assert "Source: Het Normo Event Data Specification 1.1" in shown.contents.value
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=meters), range=problem.range,
                context=types.CodeActionContext(diagnostics=[problem]),
            )
        )
        assert [a.edit.changes[meters][0].new_text for a in actions if a.is_preferred] == ["tst.meter.updated"]
        # and, beside it, the override on the event (test_lsp_allow.py)
        assert [a.title for a in actions if not a.is_preferred] == [
            "Allow here: NORMO-TYPE-PAST-TENSE off for this event (rules)"
        ]
        await client.close()

    _run(scenario)


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    """``edits`` applied to ``text`` (ASCII text: UTF-16 columns are characters)."""
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start, end = edit.range.start, edit.range.end
        before = "\n".join(lines[: start.line] + [lines[start.line][: start.character]])
        after = "\n".join([lines[end.line][end.character :]] + lines[end.line + 1 :]) if end.line < len(lines) else ""
        lines = (before + edit.new_text + after).split("\n")
    return "\n".join(lines)


def test_every_quick_fix_of_the_error_snapshots_clears_its_diagnostic(tmp_path: Path) -> None:
    """Each case under tests/catalogs/bad/ is its own workspace folder of one
    server; every diagnostic with a suggestion has a quick fix, and applying
    it (as the editor would) makes that diagnostic go away. Diagnostics equal
    `evcat lint` of the same folder."""
    import shutil

    from tests.snapshots import cases

    folders = []
    for case in cases():
        folder = tmp_path / case.stem
        if case.is_dir():
            shutil.copytree(case, folder)
        else:
            folder.mkdir()
            shutil.copy(case, folder / case.name)
        folders.append(folder)
    files = sorted(path for folder in folders for path in folder.rglob("*.yaml"))

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(*folders)
        await client.wait_for(lambda: all(uri(path) in client.diagnostics for path in files))
        for folder in folders:
            published = [row for row in _published_in(client, folder)]
            assert published == _lint_json(folder), folder.name
        fixed = 0
        for path in files:
            document_uri = uri(path)
            text = path.read_text()
            client.open(path, text)
            for problem in [d for d in client.diagnostics[document_uri] if d.data]:
                actions = await client.text_document_code_action_async(
                    types.CodeActionParams(
                        text_document=types.TextDocumentIdentifier(uri=document_uri), range=problem.range,
                        context=types.CodeActionContext(diagnostics=[problem]),
                    )
                )
                (action,) = [a for a in actions if a.diagnostics[0].code == problem.code and a.is_preferred]
                assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred
                text = _apply(text, action.edit.changes[document_uri])
                client.replace(document_uri, text)
                before = (problem.code, problem.message)
                await client.wait_for(
                    lambda: before not in [(d.code, d.message) for d in client.diagnostics[document_uri]]
                )
                fixed += 1
        assert fixed >= 10
        await client.close()

    _run(scenario)


def _published_in(client: CatalogClient, folder: Path) -> list[tuple]:
    rows = []
    for document_uri, diagnostics in client.diagnostics.items():
        path = Path(document_uri.removeprefix("file://"))
        if folder.resolve() not in path.parents:
            continue
        name = path.relative_to(folder.resolve()).as_posix()
        for d in diagnostics:
            severity = "error" if d.severity == types.DiagnosticSeverity.Error else "warning"
            rows.append((name, d.range.start.line + 1, d.range.start.character + 1, d.code, severity, d.message))
    return sorted(rows)


def test_hostile_buffers_get_diagnostics_and_the_server_keeps_answering(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(USER.replace("'shared.yaml#/schemas/Address'", "'#/schemas/Missing'"))
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(8)
    )
    hostile = {
        "bomb.yaml": bomb,
        "deep.yaml": "[" * 50_000 + "]" * 50_000,
        "control.yaml": "catalog: \x00\x07\n",
        "tabs.yaml": "catalog: x\nproducer:\n\tsource: y\n",
        "empty.yaml": "",
        "huge.yaml": "# " + "x" * (9 * 1024 * 1024) + "\n",
        "surrogate.yaml": "catalog: \ud83d\n",
    }

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(tmp_path)
        good = uri(tmp_path / "good.yaml")
        await client.wait_for(lambda: good in client.diagnostics)
        for name, text in hostile.items():
            document_uri = client.open(tmp_path / name, text)
            await client.wait_for(lambda: any(d.code in ("CAT-YAML", "CAT-REQUIRED") for d in client.diagnostics.get(document_uri, [])))
            where = types.TextDocumentIdentifier(uri=document_uri)
            far = types.Position(line=10_000, character=10_000)
            assert await client.text_document_hover_async(types.HoverParams(text_document=where, position=far)) is None
            await client.text_document_completion_async(types.CompletionParams(text_document=where, position=far))
            assert await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=where)) == []
            await client.text_document_definition_async(types.DefinitionParams(text_document=where, position=far))
        # Outside every folder and not a file: answered, not crashed.
        other = types.TextDocumentIdentifier(uri="untitled:Untitled-1")
        assert await client.text_document_hover_async(types.HoverParams(text_document=other, position=types.Position(line=0, character=0))) is None
        # The good file was checked all along and still is.
        assert "CAT-REF" in _codes(client, good)
        await client.close()
        assert not any("Traceback" in line for line in client.stderr), "".join(client.stderr)

    _run(scenario)


def test_positions_follow_the_encoding_the_client_chose(tmp_path: Path) -> None:
    """Columns count UTF-16 code units by default, bytes or code points when the client asks."""
    text = USER.replace("newAddress", "reëleDatum😀")
    (tmp_path / "people.yaml").write_text(text)
    (tmp_path / "shared.yaml").write_text(SHARED)
    row = next(i for i, line in enumerate(text.split("\n")) if "reëleDatum" in line)
    name = "reëleDatum😀"

    async def scenario(encodings: list[str] | None, width: int) -> None:
        client = CatalogClient()
        await client.start(tmp_path, encodings=encodings)
        people = uri(tmp_path / "people.yaml")
        await client.wait_for(lambda: "PAY-CAMELCASE" in _codes(client, people))
        problem = next(d for d in client.diagnostics[people] if d.code == "PAY-CAMELCASE")
        assert (problem.range.start.line, problem.range.start.character) == (row, 8)
        assert problem.range.end.character == 8 + width
        await client.close()

    _run(lambda: scenario(None, len(name.encode("utf-16-le")) // 2))
    _run(lambda: scenario(["utf-8"], len(name.encode("utf-8"))))
    _run(lambda: scenario(["utf-32", "utf-16"], len(name)))


def test_files_changed_outside_the_editor(tmp_path: Path) -> None:
    """The server asks to watch catalog files; a file written, fixed or deleted
    on disk (not open in the editor) changes the diagnostics of the others."""
    (tmp_path / "people.yaml").write_text(USER)

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(tmp_path)
        people = uri(tmp_path / "people.yaml")
        await client.wait_for(lambda: "CAT-REF" in _codes(client, people))
        await client.wait_for(lambda: bool(client.registrations))
        (watch,) = client.registrations
        assert watch.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES

        def changed(kind: types.FileChangeType) -> None:
            client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri(tmp_path / "shared.yaml"), type=kind)])
            )

        (tmp_path / "shared.yaml").write_text(SHARED)
        changed(types.FileChangeType.Created)
        await client.wait_for(lambda: _codes(client, people) == [])
        (tmp_path / "shared.yaml").unlink()
        changed(types.FileChangeType.Deleted)
        await client.wait_for(lambda: "CAT-REF" in _codes(client, people))
        await client.close()

    _run(scenario)


def test_a_project_made_by_evcat_init_is_read_through_its_catalog_directory(tmp_path: Path) -> None:
    """Opening the project (not catalog/) reads catalog/ as `evcat lint` does by
    default; the CI files beside it are not taken for catalogs."""
    from tests.conftest import run_evcat

    assert run_evcat("init", str(tmp_path / "project"), "--evcat-requirement", "evcat==0.1.0").returncode == 0  # with CI files
    project = tmp_path / "project"
    (project / "docker-compose.yml").write_text("services: {web: {image: nginx}}\n")
    catalog = project / "catalog" / "project.yaml"

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(project)
        await client.wait_for(lambda: uri(catalog) in client.diagnostics)
        assert client.diagnostics[uri(catalog)] == []
        client.open(project / "docker-compose.yml")
        client.open(project / ".gitlab-ci.yml")
        client.open(catalog)
        client.replace(uri(catalog), catalog.read_text().replace("registrationId", "registration_id", 1))
        await client.wait_for(lambda: "PAY-CAMELCASE" in _codes(client, uri(catalog)))
        assert sorted(client.diagnostics) == [uri(catalog)]
        await client.close()

    _run(scenario)


def test_a_workspace_of_ten_files_of_a_hundred_types_answers_every_edit(tmp_path: Path) -> None:
    """Issue 29: on 1,000 event types in 10 files of 100, an edit to a shared
    schema that every event uses (all costly checks to do again) was never
    answered: the server forked lint workers from its threaded process and
    they deadlocked. Now it checks in-process; the edit and its fix are
    both published, and the server's children are never lint workers."""
    catalog = tmp_path / "big"
    subprocess.run([sys.executable, str(ROOT / "bench" / "synth.py"), str(catalog), "--events", "1000", "--per-file", "100"],
                   check=True, capture_output=True)
    files = sorted(catalog.glob("*.yaml"))
    assert len(files) == 10
    shared = files[0]
    lines = shared.read_text().split("\n")
    # A property of a shared schema (file000.yaml's schemas are used by every file).
    row = next(i for i, line in enumerate(lines) if line.strip().endswith(":") and lines[i - 1].strip() == "properties:")
    column = len(lines[row]) - len(lines[row].lstrip())
    name = lines[row].strip()[:-1]
    broken = name[:1] + "_" + name[1:]

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(catalog)
        await client.wait_for(lambda: len(client.diagnostics) >= len(files), timeout=120)
        document_uri = client.open(shared)
        for old, new, expect in ((name, broken, True), (broken, name, False)):
            before = len(client.published)
            client.edit(document_uri, types.Range(types.Position(row, column), types.Position(row, column + len(old))), new)

            def arrived(expect: bool = expect, before: int = before) -> bool:
                return any(
                    published == document_uri and any(d.code == "PAY-CAMELCASE" for d in diagnostics) == expect
                    for _, published, diagnostics in client.published[before:]
                )

            await client.wait_for(arrived, timeout=60)
        assert client._server is not None
        children = Path(f"/proc/{client._server.pid}/task/{client._server.pid}/children")
        if children.exists():
            assert children.read_text().split() == [], "the server started worker processes"
        await client.close()

    _run(scenario)


def test_a_file_opened_while_the_folder_is_read_hears_its_own_findings_first(tmp_path: Path) -> None:
    """Issue 29: on a cold start the folder is read file by file; a file opened
    meanwhile is published at once with the findings that need no other file
    (its YAML and structure), never one the whole check would not make; the
    whole check then publishes exactly what ``evcat lint`` reports."""
    catalog = tmp_path / "big"
    subprocess.run([sys.executable, str(ROOT / "bench" / "synth.py"), str(catalog), "--events", "400", "--per-file", "20"],
                   check=True, capture_output=True)
    victim = sorted(catalog.glob("*.yaml"))[-1]
    # A structure finding (an unknown key of the catalog header) and one that needs the whole directory (CAT-REF).
    text = victim.read_text(encoding="utf-8").replace("\nproducer:\n", "\ntitel: typo\nproducer:\n", 1)
    text = text.replace("file000.yaml#/schemas/Money", "file000.yaml#/schemas/Monee", 1)
    victim.write_text(text, encoding="utf-8")
    expected = _lint_json(catalog)
    mine = [row for row in expected if row[0] == victim.name]
    assert {row[3] for row in mine} >= {"CAT-UNKNOWN-KEY", "CAT-REF"}, mine

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(catalog)
        victim_uri = client.open(victim)
        await client.wait_for(lambda: any(u == victim_uri for _, u, _ in client.published))
        first = next(diagnostics for _, u, diagnostics in client.published if u == victim_uri)
        published_first = {(d.range.start.line + 1, d.code, d.message) for d in first}
        assert published_first <= {(row[1], row[3], row[5]) for row in mine}
        files = len(list(catalog.glob("*.yaml")))
        await client.wait_for(lambda: len(client.diagnostics) >= files
                              and "CAT-REF" in _codes(client, victim_uri), timeout=60)
        assert _published(client, catalog) == expected
        await client.close()

    _run(scenario)
