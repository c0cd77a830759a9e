"""Schema libraries: a file of shared schemas only (no events), $ref'd by the catalogs of the directory."""

from __future__ import annotations

import json
from pathlib import Path

from generator.commands.lint import lint
from tests.conftest import catalog_text, run_evcat

LIBRARY = """\
title: Gedeelde typen
description: Typen die de catalogi van de gemeente delen.
version: 1.0.0
schemas:
  Bsn: {type: string, pattern: '^[0-9]{9}$', description: Burgerservicenummer.}
  KvkNummer: {type: string, pattern: '^[0-9]{8}$', description: KvK-nummer.}
  Oin: {type: string, pattern: '^[0-9]{20}$', description: Organisatie-identificatienummer.}
  Adres:
    type: object
    description: Een postadres.
    properties:
      postcode: {type: string, pattern: '^[1-9][0-9]{3}[A-Z]{2}$', description: Postcode.}
"""
EVENT = """\
  - type: nl.test.{name}
    dataversion: 1.0.0
    title: Something
    description: Something happened.
    data:
      type: object
      description: What happened.
      properties:
        bsn: {{$ref: 'types.yaml#/schemas/Bsn'}}
        adres: {{$ref: 'types.yaml#/schemas/Adres'}}
"""


def _directory(tmp_path: Path, library: str = LIBRARY) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "types.yaml").write_text(library)
    for name in ("people", "permits"):
        (tmp_path / f"{name}.yaml").write_text(
            catalog_text("nlgov", catalog_id=name, events=EVENT.format(name=f"{name}-changed"))
        )
    return tmp_path


def test_two_catalogs_share_a_library_and_it_lints_clean(tmp_path: Path) -> None:
    result = lint(str(_directory(tmp_path)))
    assert result.diagnostics == []
    assert sorted(catalog.id for catalog in result.catalog_set.catalogs) == ["people", "permits"]
    for event in result.catalog_set.events:
        assert event.payload is not None and set(event.payload.uses) == {"Adres", "Bsn"}


def test_generate_makes_no_package_for_the_library(tmp_path: Path) -> None:
    _directory(tmp_path / "catalog")
    out = tmp_path / "out"
    done = run_evcat("generate", str(tmp_path / "catalog"), "-o", str(out), "--only", "jsonschema,python", "--no-cache")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(path.name for path in (out / "python").iterdir()) == ["people", "permits"]
    index = json.loads((out / "jsonschema" / "index.json").read_text())
    assert len(index) == 2


def test_library_keys_are_checked(tmp_path: Path) -> None:
    broken = LIBRARY.replace("description: Typen", "descripton: Typen").replace("version: 1.0.0", "version: 1.0")
    diagnostics = lint(str(_directory(tmp_path, broken))).diagnostics
    assert [(d.rule, d.location.line, d.message) for d in diagnostics] == [
        ("CAT-UNKNOWN-KEY", 2, "unknown key 'descripton' in the schema library file; did you mean 'description'?"),
        ("CAT-TYPE", 3, "'version' must be a string, not a number; write '1.0.0' (MAJOR.MINOR.PATCH, quoted)"),
    ]


def test_a_catalog_without_events_is_still_a_catalog(tmp_path: Path) -> None:
    """A file with `catalog:` or `producer:` is a catalog: forgetting `events` is reported."""
    text = catalog_text("nlgov", header="schemas:\n  Bsn: {type: string, description: BSN.}\n").split("events:")[0]
    (tmp_path / "a.yaml").write_text(text)
    assert [(d.rule, d.message) for d in lint(str(tmp_path)).diagnostics] == [
        ("CAT-REQUIRED", "the catalog file is missing the required key 'events'")
    ]
