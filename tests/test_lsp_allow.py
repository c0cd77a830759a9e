"""``evcat lsp``'s "allow here" quick fix (catalog-format.md §9), end to end
with a real LSP client: the edit writes ``x-evcat-rules`` on the schema node
(or ``rules`` on the event) in the node's own style and indentation; after
it the finding is gone, its sibling's stays, and ``evcat lint`` agrees."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from tests.lsp_client import CatalogClient, uri
from tests.test_lsp import _apply, _lint_json, _published

CATALOG = """\
catalog: test-catalog
title: Test catalog
version: 1.0.0
profile: cloudevents
producer:
  source: urn:nld:oin:00000001823288444000:systeem:test
  organization: Testorg
defaults:
  datacontenttype: application/json
  time: Moment of registration, in UTC.
  id: Random UUID v4.
events:
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    data:
      type: object
      description: The thing.
      properties:
        block_id:
          type: string
          description: Block style.
        flow_id: {type: string, description: Flow style.}
        sibling_id: {type: string, description: Stays.}
        choice:
          description: One of two.
          anyOf:
            - type: object
              additionalProperties: false
              required: [missing]
              properties:
                present: {type: string, description: Present.}
            - {type: object, properties: {inner_id: {type: string, description: Inner.}}}
        mapped_id:
          type: string
          description: Has a map already.
          x-evcat-rules:
            PAY-FORMAT: warning
        strict_id: {type: string, description: Set to error., x-evcat-rules: {PAY-CAMELCASE: error}}
        broken: {type: strin, description: Fixed rule.}
  - type: nl.test.other-happened
    dataversion: 1.0.0
    title: Other happened
    data: {type: object, description: Other., properties: {otherId: {type: string, description: Id.}}}
"""


def _run(scenario) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 120))


def _line(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.split("\n")) if needle in line)


def test_allow_here_turns_the_rule_off_where_the_finding_stands(tmp_path: Path) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(CATALOG)

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(tmp_path)
        document_uri = uri(path)
        await client.wait_for(lambda: document_uri in client.diagnostics)
        text = CATALOG
        client.open(path, text)
        await client.wait_for(lambda: client.checked_versions.get(document_uri) == 1)

        def found() -> list[tuple[str, int]]:
            return sorted((d.code, d.range.start.line) for d in client.diagnostics[document_uri])

        async def allow(code: str, needle: str) -> str:
            """Ask for the actions at the finding of ``code`` on the line with
            ``needle``, apply "allow here", wait until the server has checked the new text."""
            nonlocal text
            row = _line(text, needle)
            (problem,) = [d for d in client.diagnostics[document_uri] if d.code == code and d.range.start.line == row]
            actions = await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=document_uri), range=problem.range,
                    context=types.CodeActionContext(diagnostics=[problem]),
                )
            )
            allowing = [a for a in actions if a.title.startswith("Allow here") and a.diagnostics[0].code == code]
            assert len(allowing) == 1, [a.title for a in actions]
            assert not allowing[0].is_preferred
            if code == "PAY-CAMELCASE":  # the rename is still offered, first and preferred
                assert actions[0].is_preferred and actions[0].diagnostics[0].code == code
            text = _apply(text, allowing[0].edit.changes[document_uri])
            client.replace(document_uri, text)
            await client.wait_for(lambda: client.checked_versions.get(document_uri) == client.versions[document_uri])
            assert (code, _line(text, needle)) not in found()
            return allowing[0].title

        before = found()
        assert ("PAY-CAMELCASE", _line(text, "sibling_id")) in before
        assert ("PAY-DESCRIPTION", _line(text, "nl.test.thing-happened")) in before
        assert ("PAY-DESCRIPTION", _line(text, "nl.test.other-happened")) in before

        # A block mapping: a line of its own at the keys' column.
        assert "x-evcat-rules" in await allow("PAY-CAMELCASE", "block_id:")
        assert "        block_id:\n          x-evcat-rules: {PAY-CAMELCASE: off}\n          type: string\n" in text
        # A flow mapping: the entry goes inside its braces.
        await allow("PAY-CAMELCASE", "flow_id:")
        assert "flow_id: {x-evcat-rules: {PAY-CAMELCASE: off}, type: string, description: Flow style.}" in text
        # A node that starts on a "- " line: the entry takes the first key's place.
        await allow("PAY-REQUIRED", "required: [missing]")
        assert "            - x-evcat-rules: {PAY-REQUIRED: off}\n              type: object\n" in text
        # A flow mapping inside flow mappings.
        await allow("PAY-CAMELCASE", "inner_id")
        assert "properties: {inner_id: {x-evcat-rules: {PAY-CAMELCASE: off}, type: string, description: Inner.}}}" in text
        # A block map of overrides already there gains the rule.
        await allow("PAY-CAMELCASE", "mapped_id:")
        assert "          x-evcat-rules:\n            PAY-CAMELCASE: off\n            PAY-FORMAT: warning\n" in text
        # A setting of the rule already there becomes off.
        await allow("PAY-CAMELCASE", "strict_id:")
        assert "x-evcat-rules: {PAY-CAMELCASE: off}}" in text
        # A finding on the event itself: rules on the event, which starts on a "- " line.
        title = await allow("PAY-DESCRIPTION", "nl.test.thing-happened")
        assert "this event" in title
        assert "  - rules: {PAY-DESCRIPTION: off}\n    type: nl.test.thing-happened\n" in text

        after = found()
        # The siblings keep theirs: the other property, the other event, the fixed rule.
        assert ("PAY-CAMELCASE", _line(text, "sibling_id")) in after
        assert ("PAY-DESCRIPTION", _line(text, "nl.test.other-happened")) in after
        assert ("CAT-SCHEMA", _line(text, "broken:")) in after
        assert [code for code, _ in after].count("PAY-CAMELCASE") == 1
        # A fixed rule is offered no "allow here".
        (fixed,) = [d for d in client.diagnostics[document_uri] if d.code == "CAT-SCHEMA"]
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=document_uri), range=fixed.range,
                context=types.CodeActionContext(diagnostics=[fixed]),
            )
        )
        assert not [a for a in actions if a.title.startswith("Allow here")]
        # What the editor shows is what `evcat lint` says of the edited file.
        path.write_text(text)
        assert _published(client, tmp_path) == _lint_json(tmp_path)
        await client.close()

    _run(scenario)


def test_completion_of_rule_overrides(tmp_path: Path) -> None:
    text = CATALOG.replace(
        "          x-evcat-rules:\n            PAY-FORMAT: warning\n",
        "          x-evcat-rules:\n            PAY-FORMAT: \n            \n",
    )
    path = tmp_path / "catalog.yaml"
    path.write_text(text)

    async def scenario() -> None:
        client = CatalogClient()
        await client.start(tmp_path)
        document_uri = client.open(path, text)
        where = types.TextDocumentIdentifier(uri=document_uri)

        async def labels(row: int, column: int) -> list[str]:
            found = await client.text_document_completion_async(
                types.CompletionParams(text_document=where, position=types.Position(line=row, character=column))
            )
            return [item.label for item in found.items]

        row = _line(text, "PAY-FORMAT: ")
        # A key under x-evcat-rules: the rule ids that may be overridden (no fixed rule).
        ids = await labels(row + 1, 12)
        assert {"PAY-CAMELCASE", "PAY-DESCRIPTION", "CE-TYPE-RDNS"} <= set(ids)
        assert "CAT-SCHEMA" not in ids and "CAT-REF" not in ids
        # A value there: the settings.
        assert await labels(row, len("            PAY-FORMAT: ")) == ["error", "warning", "off"]
        # Among a schema node's keywords: x-evcat-rules itself.
        assert "x-evcat-rules" in await labels(_line(text, "block_id:") + 1, 10)
        await client.close()

    _run(scenario)
