"""Issue 30: what `evcat validate` writes stays bounded and safe whatever the
events hold: no diagnostic line repeats a long bad value, every item of a
batch array is reported at its own line and column, and no output format
passes terminal control or bidirectional characters through raw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import run_evcat
from .goldens import CATALOGS
from .test_validate import METER, changed

LINE_LIMIT = 2048  # bytes, issue 30


@pytest.mark.parametrize("output_format", ["text", "github", "json"])
def test_no_diagnostic_line_repeats_a_long_bad_value(output_format: str, tmp_path: Path) -> None:
    """300 events with 1 KB bad strings and one with a 1 MiB bad string and a
    100 KB id: every line of the output is at most 2 KB, and a long value is
    quoted by its prefix, an ellipsis and its length."""
    events = [changed(METER, id=f"e{n}", data={"meter": {"meterId": "Q" * 1024, "product": "gas"}}) for n in range(300)]
    events.append(changed(METER, id="i" * 100_000, data={"meter": {"meterId": "Q" * 1_048_576, "product": "gas"}}))
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    result = run_evcat("validate", str(CATALOGS["normo"]), str(path), "--format", output_format)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    assert output_format == "json" or sum("CE-DATA-SCHEMA" in line for line in lines) >= 301
    longest = max(lines, key=lambda line: len(line.encode("utf-8")))
    assert len(longest.encode("utf-8")) <= LINE_LIMIT, longest[:300]
    assert '"QQQQ' in result.stdout and "(1,048,576 characters)" in result.stdout, result.stdout[-2000:]
    assert "(1,024 characters)" in result.stdout
    if output_format == "json":
        report = json.loads(result.stdout)
        assert sum(d["rule"] == "CE-DATA-SCHEMA" for d in report["diagnostics"]) >= 301
        assert max(len(str(d["id"])) for d in report["diagnostics"]) < LINE_LIMIT


def test_every_item_of_a_batch_array_is_reported_at_its_own_line_and_column(tmp_path: Path) -> None:
    """Issue 30: an ordinary invalid item of a JSON array was reported at 1:1
    (a hostile one at its own line). Each item at its line and column (in
    characters), in text and JSON output, the ordinary and the hostile alike."""
    bad_subject = changed(METER, id="b1", subject="")  # NORMO-SUBJECT
    bad_time = changed(METER, id="b2", time="2024-01-01T00:00:00Z")  # NORMO-TIME
    text = (
        "[\n"
        f"  {json.dumps(METER)},\n"
        f"  {json.dumps(bad_subject)},\n"
        f"    {json.dumps(METER, ensure_ascii=False)}, {json.dumps(changed(bad_time, nlnote='é€'), ensure_ascii=False)}\n"
        "]\n"
    )
    second = 4 + len(json.dumps(METER, ensure_ascii=False)) + 2 + 1  # 1-based column of the fourth item, in characters
    path = tmp_path / "batch.json"
    path.write_text(text, encoding="utf-8")
    result = run_evcat("validate", str(CATALOGS["normo"]), str(path), "--format", "json")
    report = json.loads(result.stdout)
    found = {(d["index"], d["rule"]): (d["line"], d["column"]) for d in report["diagnostics"]}
    assert found[(1, "NORMO-SUBJECT")] == (3, 3), found
    assert found[(3, "NORMO-TIME")] == (4, second), found
    text_result = run_evcat("validate", str(CATALOGS["normo"]), str(path))
    assert "batch.json:3:3: error NORMO-SUBJECT event 1 id='b1'" in text_result.stdout, text_result.stdout
    assert f"batch.json:4:{second}: error NORMO-TIME event 3 id='b2'" in text_result.stdout, text_result.stdout
    # a hostile item (beyond what can be checked) beside an ordinary invalid one: both at their places
    hostile = text.replace(f"  {json.dumps(METER)},\n", '  {"id": "h", "data": {"v": NaN}},\n', 1)
    path.write_text(hostile, encoding="utf-8")
    report = json.loads(run_evcat("validate", str(CATALOGS["normo"]), str(path), "--format", "json").stdout)
    found = {(d["index"], d["rule"]): (d["line"], d["column"]) for d in report["diagnostics"]}
    assert found[(0, "CE-FORMAT")] == (2, 3) and found[(1, "NORMO-SUBJECT")] == (3, 3), found
    assert found[(3, "NORMO-TIME")] == (4, second), found


HOSTILE_NAME = "bad\x1b[2J\u202eName%\nx"  # ESC, a bidi override, a percent sign, a line feed


@pytest.mark.parametrize("output_format", ["github", "text", "json", "sarif"])
def test_no_output_format_passes_control_or_bidi_characters_through(output_format: str, tmp_path: Path) -> None:
    """Issue 30: `--format github` wrote ESC and U+202E raw. Every format
    written to a terminal or a CI log shows them as escapes; github escapes
    as workflow commands do (% and line breaks; in properties also : and ,)."""
    from .conftest import catalog_text

    events = f"""\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      properties:
        {json.dumps(HOSTILE_NAME)}: {{type: string, description: X.}}
"""
    catalog = tmp_path / "cat,a:b"
    catalog.mkdir()
    (catalog / "c.yaml").write_text(catalog_text(events=events), encoding="utf-8")
    result = run_evcat("lint", str(catalog), "--no-cache", "--format", output_format)
    assert "PAY-CAMELCASE" in result.stdout, result.stdout + result.stderr
    for raw in ("\x1b", "\u202e", "\x07"):
        assert raw not in result.stdout, (raw, result.stdout)
    if output_format == "github":
        [line] = [line for line in result.stdout.splitlines() if "PAY-CAMELCASE" in line]
        assert line.startswith("::error file=") and "cat%2Ca%3Ab" in line, line
        assert "bad\\x1b[2J\\u202eName%25%0Ax" in line, line
    if output_format == "text":
        assert "bad\\x1b[2J\\u202eName%\\nx" in result.stdout, result.stdout


@pytest.mark.parametrize("output_format", ["text", "github", "json", "sarif"])
@pytest.mark.parametrize("count", [0, 1, 3])
def test_the_streamed_output_is_the_whole_output(output_format: str, count: int) -> None:
    """`evcat validate` writes diagnostics as they come (DiagnosticWriter): byte
    for byte what the format functions write for all of them at once."""
    from generator.diagnostics import (
        Diagnostic,
        DiagnosticWriter,
        Location,
        Severity,
        format_github,
        format_json,
        format_sarif,
        format_text,
    )

    rule_docs = {"CE-DATA-SCHEMA": "Data matches its schema.", "NORMO-TIME": "Time is UTC."}
    diagnostics = [
        Diagnostic("CE-DATA-SCHEMA" if n % 2 else "NORMO-TIME", Severity.ERROR if n % 3 else Severity.WARNING,
                   f"event {n}: /data: \"x\"\n\u202e", Location(f"f{n % 2}.json", n + 1, 2),
                   extra=(("index", n), ("id", f"e{n}"), ("pointer", "/data")))
        for n in range(count)
    ]
    whole = {
        "text": lambda: format_text(diagnostics), "github": lambda: format_github(diagnostics),
        "json": lambda: format_json(diagnostics), "sarif": lambda: format_sarif(diagnostics, rule_docs, "9.9"),
    }[output_format]()
    parts: list[str] = []
    writer = DiagnosticWriter(output_format, parts.append, rule_docs, "9.9")
    writer.add(diagnostics[:1])
    writer.add(diagnostics[1:])
    writer.finish()
    assert "".join(parts) == whole
