"""``x-evcat-*`` keys are evcat's own: they never appear in a generated
output (catalog-format.md §9), whatever the depth they are written at;
other ``x-`` annotations users write are kept as before."""

from __future__ import annotations

from pathlib import Path

from generator.commands.generate import generate
from generator.engine.config import RunConfig
from generator.outputs import RENDERERS

CATALOG = """\
catalog: marked-catalog
title: Marked catalog
version: 1.0.0
profile: cloudevents
producer:
  source: urn:nld:oin:00000001823288444000:systeem:test
  organization: Testorg
defaults:
  datacontenttype: application/json
  time: Moment of registration, in UTC.
  id: Random UUID v4.
rules: {PAY-FORMAT: warning}
schemas:
  Address:
    type: object
    description: An address.
    x-evcat-rules: {PAY-FORMAT: warning}
    properties:
      street:
        type: string
        description: Street.
        x-evcat-rules: {PAY-FORMAT: warning}
events:
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    rules: {PAY-DESCRIPTION: warning}
    data:
      type: object
      description: The thing.
      x-evcat-rules: {PAY-CAMELCASE: error}
      x-mine: kept
      required: [thingId]
      properties:
        thingId:
          type: string
          description: Id of the thing.
          x-evcat-rules: {PAY-CAMELCASE: error}
        home: {$ref: "types.yaml#/schemas/Place"}
        address: {$ref: "#/schemas/Address"}
        lines:
          type: array
          description: Lines.
          items:
            type: object
            description: A line.
            x-evcat-rules: {PAY-DESCRIPTION: "off"}
            properties:
              lineNo: {type: integer, description: Number., x-evcat-rules: {PAY-FORMAT: warning}}
        either:
          description: One of two.
          anyOf:
            - {type: string, x-evcat-rules: {PAY-FORMAT: warning}}
            - {type: integer}
    examples:
      - data: {thingId: t-1, lines: [{lineNo: 1}], either: 2}
"""

LIBRARY = """\
title: Shared
schemas:
  Place:
    type: object
    description: A place.
    x-evcat-rules: {PAY-CAMELCASE: error}
    $defs:
      Unused: {type: string, x-evcat-rules: {PAY-FORMAT: warning}}
    properties:
      name: {type: string, description: Name., x-evcat-rules: {PAY-FORMAT: warning}}
"""


def test_no_output_holds_an_x_evcat_key(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "catalog.yaml").write_text(CATALOG, encoding="utf-8")
    (catalog / "types.yaml").write_text(LIBRARY, encoding="utf-8")
    out = tmp_path / "out"
    kinds = list(RENDERERS)
    assert "eventcatalog" in kinds and "python" in kinds
    result = generate(str(catalog), str(out), kinds, RunConfig(cache_dir=None, jobs=1))
    assert not result.lint.has_errors, result.lint.diagnostics
    written = [path for path in out.rglob("*") if path.is_file()]
    assert {path.relative_to(out).parts[0] for path in written} >= set(kinds)
    holding = [str(path.relative_to(out)) for path in written if b"x-evcat" in path.read_bytes()]
    assert holding == []
    # a user's own annotation is kept where it was before (the JSON Schema of the payload)
    assert any(b"x-mine" in path.read_bytes() for path in (out / "jsonschema").rglob("*.json"))
