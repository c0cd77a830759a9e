"""The catalogs we ship are lint-clean and each shows every feature of the contract."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from generator.catalog_format import CATALOG, EVENT, EXTENSION, PRODUCER, CONTACT, DEFAULTS, SERVER
from generator.commands.lint import lint

from .conftest import ROOT, run_evcat

CATALOG_SETS = sorted(path for path in (ROOT / "catalog").iterdir() if path.is_dir())


def test_evcat_lint_catalog_exits_0_with_no_findings() -> None:
    result = run_evcat("lint", "catalog", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "no problems in 5 files"


def test_both_profiles_are_shipped() -> None:
    profiles = {catalog.profile.name for catalog in lint(str(ROOT / "catalog")).catalog_set.catalogs}
    assert {"nlgov", "normo"} <= profiles


def _features(directory: Path) -> set[str]:
    result = lint(str(directory))
    features: set[str] = set()
    for document in result.documents.values():
        value = document.value
        features |= {f"catalog.{key}" for key in value}
        features |= {f"producer.{key}" for key in value.get("producer", {})}
        features |= {f"contact.{key}" for key in value.get("producer", {}).get("contact", {})}
        features |= {f"defaults.{key}" for key in value.get("defaults", {})}
        for server in value.get("servers", {}).values():
            features |= {f"server.{key}" for key in server}
        for event in value["events"]:
            features |= {f"event.{key}" for key in event}
            for extension in event.get("extensions", {}).values():
                features |= {f"extension.{key}" for key in extension}
            if "data" not in event:
                features.add("notification without data")
            if isinstance(event.get("deprecated"), str):
                features.add("deprecated with a reason")
        if Path(document.file).parent != Path(directory):
            features.add("file in a subdirectory")
    catalog_set = result.catalog_set
    raw_refs = [
        ref
        for document in result.documents.values()
        for ref in _refs(document.value)
    ]
    if any(ref.startswith("#/") for ref in raw_refs):
        features.add("$ref within a file")
    if any(not ref.startswith("#") for ref in raw_refs):
        features.add("$ref across files")
    for name, shared in catalog_set.schemas.items():
        if f"#/$defs/{name}" in repr(shared.schema):
            features.add("recursive schema")
    if max(Counter(event.type for event in catalog_set.events).values()) > 1:
        features.add("several dataversions of one type")
    if max(len(catalog.files) for catalog in catalog_set.catalogs) > 1:
        features.add("catalog split across files")
    return features


def _refs(value: object) -> list[str]:
    if isinstance(value, dict):
        found = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return found + [ref for child in value.values() for ref in _refs(child)]
    if isinstance(value, list):
        return [ref for child in value for ref in _refs(child)]
    return []


EXPECTED = (
    {f"catalog.{key}" for key in CATALOG.fields}
    | {f"producer.{key}" for key in PRODUCER.fields}
    | {f"contact.{key}" for key in CONTACT.fields}
    | {f"defaults.{key}" for key in DEFAULTS.fields}
    | {f"server.{key}" for key in SERVER.fields}
    | {f"event.{key}" for key in EVENT.fields}
    | {f"extension.{key}" for key in EXTENSION.fields}
    | {
        "notification without data", "deprecated with a reason", "file in a subdirectory", "$ref within a file",
        "$ref across files", "recursive schema", "several dataversions of one type", "catalog split across files",
    }
)


@pytest.mark.parametrize("directory", CATALOG_SETS, ids=lambda p: p.name)
def test_catalog_set_shows_every_feature(directory: Path) -> None:
    assert not EXPECTED - _features(directory), sorted(EXPECTED - _features(directory))
