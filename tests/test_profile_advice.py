"""Under the ``cloudevents`` profile, evcat's advice is generic: no NL
government examples (urn:nld, OIN, 'nl' as the domain to start with) in its
messages (issue 27, catalog-format.md §9). The NL profiles keep theirs."""

from __future__ import annotations

import re
from pathlib import Path

from .conftest import catalog_text, run_evcat

NL_TEXT = re.compile(r"urn:nld|\boin\b|\bnl\b|'nl\.|dutch|netherlands|gemeente", re.IGNORECASE)

# A relative source (CE-SOURCE-ABSOLUTE), a one-label type and one with an unknown
# top-level domain (CE-TYPE-RDNS): every message that gave NL examples.
EVENTS = """\
  - type: thinghappened
    title: Thing happened
    description: A thing happened.
  - type: notatld.test.thing-happened
    title: Other thing
    description: Another thing happened.
"""


def _lint(tmp_path: Path, profile: str) -> str:
    catalog = tmp_path / profile
    catalog.mkdir()
    text = catalog_text(profile, source="/registrations", events=EVENTS)
    (catalog / "c.yaml").write_text(text, encoding="utf-8")
    result = run_evcat("lint", str(catalog), "--no-cache", "--format", "json")
    return result.stdout


def test_cloudevents_advice_has_no_nl_government_examples(tmp_path: Path) -> None:
    out = _lint(tmp_path, "cloudevents")
    assert "CE-SOURCE-ABSOLUTE" in out and "CE-TYPE-RDNS" in out, out
    messages = re.findall(r'"message": "((?:[^"\\]|\\.)*)"', out)
    assert messages, out
    nl = [message for message in messages if NL_TEXT.search(message)]
    assert not nl, nl
    # the advice is still there, generic
    assert any("https://" in message or "urn:uuid:" in message for message in messages if "absolute URI" in message), messages
    assert any("'com'" in message or "com." in message for message in messages if "top-level domain" in message), messages


def test_nlgov_keeps_its_nl_advice(tmp_path: Path) -> None:
    out = _lint(tmp_path, "nlgov")
    assert "urn:nld:oin" in out, out
