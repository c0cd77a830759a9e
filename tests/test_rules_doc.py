"""`evcat rules`: every format, the profile filter, and the README's rule table
is the registry's Markdown output (regenerate: `python3 -m generator rules --format markdown`)."""

from __future__ import annotations

import json
import subprocess
import sys

from generator.rules import RULES
from tests.conftest import ROOT


def _rules(*options: str) -> str:
    done = subprocess.run([sys.executable, "-m", "generator", "rules", *options], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_readme_rule_table_is_generated_from_the_registry() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("\n", readme.index("<!-- rules:start")) + 1
    end = readme.index("<!-- rules:end -->")
    assert readme[start:end] == _rules("--format", "markdown")


def test_json_lists_every_rule_with_its_source() -> None:
    listed = json.loads(_rules("--format", "json"))["rules"]
    assert [rule["id"] for rule in listed] == sorted(RULES)
    by_id = {rule["id"]: rule for rule in listed}
    assert by_id["NORMO-TYPE-PAST-TENSE"]["source"] == "Het Normo Event Data Specification 1.1"
    assert by_id["PAY-REQUIRED"]["severity"] == "error" and by_id["PAY-FORMAT"]["severity"] == "warning"
    assert by_id["CAT-YAML"]["can_be_turned_off"] is False


def test_profile_filter() -> None:
    cloudevents = json.loads(_rules("--format", "json", "--profile", "cloudevents"))["rules"]
    ids = {rule["id"] for rule in cloudevents}
    assert "CAT-REF" in ids and not any(rule_id.startswith(("NLGOV-", "NORMO-")) for rule_id in ids)
    markdown = _rules("--format", "markdown", "--profile", "normo").splitlines()
    assert markdown[:2] == ["| id | severity | profiles | rule | source |", "|---|---|---|---|---|"]
    assert len(markdown) - 2 == sum(1 for rule in RULES.values() if "normo" in rule.profile_names)


def test_format_reference_lists_every_key() -> None:
    from generator.catalog_format import CATALOG, reference_markdown

    doc = (ROOT / "docs" / "catalog-format.md").read_text(encoding="utf-8")
    start = doc.index("\n", doc.index("<!-- reference:start")) + 1
    assert doc[start : doc.index("<!-- reference:end -->")] == reference_markdown()
    for key in CATALOG.fields:
        assert f"| `{key}` |" in doc
    for key in ("events[].extensions.<name>.type", "producer.contact.email", "servers.<name>.host", "events[].dataref"):
        assert f"| `{key}` |" in doc
