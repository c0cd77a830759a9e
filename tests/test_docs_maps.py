"""Docs show a map (``additionalProperties`` with no properties: Azure's
``claims``, Stripe's ``metadata``) as "map of string to X", X the value type,
recursively; not as "object" (issue 27)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from textwrap import dedent

from generator.commands.generate import render
from generator.commands.lint import lint


def test_maps_show_their_value_type(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(dedent('''
        catalog: payments
        title: Payments
        version: 1.0.0
        profile: cloudevents
        producer: {source: "https://example.com/payments"}
        schemas:
          Tags: {type: object, additionalProperties: {type: string}, description: Tags.}
        events:
          - type: com.example.payment-created
            dataversion: 1.0.0
            title: Payment created
            description: A payment was created.
            data:
              type: object
              description: The payment.
              properties:
                metadata: {type: object, additionalProperties: {type: string}, description: Stripe-like metadata.}
                claims: {type: object, additionalProperties: true, description: Any claims.}
                counts: {type: object, additionalProperties: {type: array, items: {type: integer}}, description: Counts.}
                nested: {type: object, additionalProperties: {type: object, additionalProperties: {type: number}}, description: Nested.}
                maybe: {type: [object, "null"], additionalProperties: {type: boolean}, description: Nullable map.}
                tags: {$ref: '#/schemas/Tags'}
                plain: {type: object, description: A plain object., properties: {a: {type: string, description: A.}}}
        '''), encoding="utf-8")
    result = lint(str(tmp_path))
    assert not result.has_errors, [str(d) for d in result.diagnostics]
    files = render(result.catalog_set, ["docs"])["docs"]
    page = files["docs/events/payments/com.example.payment-created.html"].decode()
    rows = {name: html.unescape(re.sub(r"<[^>]+>", "", row)) for name, row in re.findall(r'data-field="([^"]+)">(.*?)</tr>', page, re.DOTALL)}
    assert "map of string to string" in rows["metadata"], rows["metadata"]
    assert "map of string to any" in rows["claims"], rows["claims"]
    assert "map of string to array of integer" in rows["counts"], rows["counts"]
    assert "map of string to map of string to number" in rows["nested"], rows["nested"]
    assert "map of string to boolean | null" in rows["maybe"], rows["maybe"]
    assert "object" not in rows["metadata"] + rows["claims"] + rows["counts"] + rows["nested"]
    assert "object" in rows["plain"] and "map of" not in rows["plain"]
    schema_page = files["docs/schemas/Tags.html"].decode()
    assert "map of string to string" in html.unescape(re.sub(r"<[^>]+>", "", schema_page)), schema_page
    markdown = files["docs/markdown/payments/com.example.payment-created.md"].decode()
    assert "map of string to array of integer" in markdown
