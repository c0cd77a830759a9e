"""No input makes `evcat lint` print a traceback: every broken catalog gives a
clean diagnostic with file, line and column, and exit code 1."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from generator.cli import main

from .conftest import catalog_text, run_evcat

GOOD = catalog_text()
BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)

BROKEN: dict[str, tuple[str | bytes, str]] = {
    # name: (content, rule expected among the diagnostics)
    "empty": ("", "CAT-REQUIRED"),
    "only-comments": ("# nothing here\n\n", "CAT-REQUIRED"),
    "root-list": ("- a\n- b\n", "CAT-TYPE"),
    "root-scalar": ("hello\n", "CAT-TYPE"),
    "unclosed-bracket": ("catalog: [a, b\ntitle: x\n", "CAT-YAML"),
    "bad-indentation": ("catalog: x\n  title: y\n title: z\n", "CAT-YAML"),
    "tab-indentation": ("catalog: x\nproducer:\n\tsource: y\n", "CAT-YAML"),
    "duplicate-keys": (GOOD + "title: Again\n", "CAT-DUPLICATE-KEY"),
    "typo-top-level": (GOOD.replace("events:", "evnts:"), "CAT-UNKNOWN-KEY"),
    "events-mapping": (GOOD.split("events:")[0] + "events: {a: 1}\n", "CAT-TYPE"),
    "events-empty": (GOOD.split("events:")[0] + "events: []\n", "CAT-REQUIRED"),
    "event-string": (GOOD.split("events:")[0] + "events:\n  - just text\n", "CAT-TYPE"),
    "data-string": (GOOD.split("    data:")[0] + "    data: a string\n", "CAT-TYPE"),
    # A typo of a required key is one diagnostic, at the typo (issue 19).
    "producer-typo": (GOOD.replace("producer:\n", "producr:\n"), "CAT-UNKNOWN-KEY"),
    "producer-missing": (GOOD.replace("producer:\n", "owner:\n"), "CAT-REQUIRED"),
    "version-float": (GOOD.replace("version: 1.0.0", "version: 1.0"), "CAT-TYPE"),
    "binary-garbage": (bytes(range(256)) * 40, "CAT-YAML"),
    "nul-bytes": (b"catalog: a\x00b\n", "CAT-YAML"),
    "invalid-utf8": (b"catalog: caf\xe9\n", "CAT-YAML"),
    "ten-megabytes": ("# " + "x" * (10 * 1024 * 1024) + "\n", "CAT-YAML"),
    "deep-flow-nesting": ("a: " + "[" * 100_000 + "]" * 100_000 + "\n", "CAT-YAML"),
    "deep-block-nesting": ("".join(" " * i + f"k{i}:\n" for i in range(1000)) + " " * 1000 + "v\n", "CAT-YAML"),
    "billion-laughs": (BILLION_LAUGHS, "CAT-YAML"),
    "recursive-alias": ("a: &x [*x]\n", "CAT-YAML"),
    "undefined-alias": ("catalog: *nope\n", "CAT-YAML"),
    "two-documents": (GOOD + "---\n" + GOOD, "CAT-YAML"),
    "custom-tag": (GOOD.replace("title: Test catalog", "title: !secret x"), "CAT-YAML"),
    "binary-tag": (GOOD.replace("title: Test catalog", "title: !!binary aGVsbG8="), "CAT-YAML"),
    "collection-key": (GOOD + "? [a, b]\n: c\n", "CAT-TYPE"),
    "extensions-list": (GOOD.replace("    data:\n", "    extensions: [a, b]\n    data:\n", 1), "CAT-TYPE"),
    "examples-mapping": (GOOD + "    examples: {a: 1}\n", "CAT-TYPE"),
    "schema-number": (GOOD.replace("events:", "schemas:\n  Thing: 5\nevents:"), "CAT-TYPE"),
    "ref-missing-file": (GOOD.replace("{type: string, description: Id of the thing.}", "{$ref: 'nope.yaml#/schemas/X'}"), "CAT-REF"),
    "ref-not-string": (GOOD.replace("{type: string, description: Id of the thing.}", "{$ref: 5}"), "CAT-SCHEMA"),
    "one-megabyte-line": ("catalog: " + "a" * 1_000_000 + "\n", "CAT-REQUIRED"),
    "merge-scalar": ("base: 1\nm:\n  <<: 5\n", "CAT-TYPE"),
    "type-number": (GOOD.replace("type: nl.test.thing-happened", "type: 42"), "CAT-TYPE"),
    "rules-bad-value": (GOOD.replace("events:", "rules:\n  CE-SIZE: loud\nevents:"), "CAT-TYPE"),
    "rules-unknown-id": (GOOD.replace("events:", "rules:\n  CE-SIZ: off\nevents:"), "CAT-UNKNOWN-KEY"),
    "catalog-null": (GOOD.replace("catalog: test-catalog", "catalog:"), "CAT-TYPE"),
    "contact-url-not-uri": (GOOD.replace("  organization: Testorg\n", "  organization: Testorg\n  contact: {url: 'https://x.nl/<a b>'}\n"), "CAT-TYPE"),
    "contact-email-invalid": (GOOD.replace("  organization: Testorg\n", "  organization: Testorg\n  contact: {email: not-an-address}\n"), "CAT-TYPE"),
    "unterminated-quote": ('catalog: "abc\ntitle: x\n', "CAT-YAML"),
}

LINE = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<column>\d+): (?P<severity>error|warning) (?P<rule>[A-Z][A-Z0-9-]+) .+$")


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_catalog_gives_clean_diagnostics(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    content, rule = BROKEN[name]
    path = tmp_path / f"{name}.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    code = main(["lint", str(tmp_path), "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert "Traceback" not in out + err and "internal error" not in err
    lines = out.strip().splitlines()
    assert re.match(r"^\d+ errors?, \d+ warnings? in \d+ files?$", lines[-1]), lines[-1]
    parsed = [LINE.match(line) for line in lines[:-1]]
    assert all(parsed), lines
    assert rule in {match["rule"] for match in parsed if match}, out
    for match in parsed:
        assert match and int(match["line"]) >= 1 and int(match["column"]) >= 1


def test_count_of_broken_inputs() -> None:
    assert len(BROKEN) >= 30


def test_cli_subprocess_never_shows_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "garbage.yaml").write_bytes(os.urandom(4096))
    (tmp_path / "bomb.yaml").write_text(BILLION_LAUGHS)
    (tmp_path / "deep.yaml").write_text("[" * 200_000 + "]" * 200_000)
    result = run_evcat("lint", str(tmp_path), "--no-cache")
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert "CAT-YAML" in result.stdout


def test_location_of_a_syntax_error_is_the_parsers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text("catalog: x\ntitle: [a, b\nversion: 1.0.0\n")
    main(["lint", str(tmp_path), "--no-cache"])
    first = capsys.readouterr().out.splitlines()[0]
    assert re.search(r"c\.yaml:3:\d+: error CAT-YAML", first), first


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert run_evcat("lint", str(tmp_path / "missing")).returncode == 2
    assert run_evcat("lint", str(tmp_path)).returncode == 2  # no catalog files
    assert run_evcat("lint", "--format", "xml").returncode == 2
    assert run_evcat("frobnicate").returncode == 2


def test_too_many_events_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from generator.loader import MAX_EVENTS

    head = GOOD.split("events:")[0] + "events:\n"
    per_file = MAX_EVENTS // 2 + 1  # two files: the limit counts the whole directory
    for name in ("a", "b"):
        events = "".join(f"  - {{type: nl.test.{name}{i}-happened, title: T, description: D}}\n" for i in range(per_file))
        (tmp_path / f"{name}.yaml").write_text(head.replace("test-catalog", f"test-{name}") + events)
    code = main(["generate", str(tmp_path), "-o", str(tmp_path / "out"), "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 1 and not (tmp_path / "out").exists()
    assert "Traceback" not in out + err
    first = out.splitlines()[0]
    line = MAX_EVENTS - per_file + head.count("\n") + 1  # the first event over the limit, in b.yaml
    assert first.startswith(f"{tmp_path / 'b.yaml'}:{line}:5: error CAT-YAML more than {MAX_EVENTS:,} event types"), first


def test_loader_resolves_plain_scalars_as_pyyaml_does() -> None:
    """The loader's shortcuts in tag resolution (first character, YAML 1.1's
    bool and null words) give PyYAML's own verdict on every plain scalar."""
    import random

    import yaml
    from yaml.nodes import ScalarNode

    from generator import loader

    ours, theirs = loader._Loader(""), yaml.SafeLoader("")
    words = "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL ~ << = .inf .NaN".split()
    values = {"", "type", "format", "name", "n", "Y", "nulL", "tRue", "onx", "0x1f", "1_000", "2001-12-14", "+.5", *words}
    values |= {word + end for word in words for end in ("x", " ", "\n", "\n\n")}
    rng = random.Random(29)
    values |= {"".join(rng.choice("yYnNtTfFoOeEsSuUlLrRaA~01.+-<=: \n") for _ in range(rng.randint(0, 6))) for _ in range(20_000)}
    for value in values:
        for implicit in ((True, False), (False, True), (True, True)):
            assert ours.resolve(ScalarNode, value, implicit) == theirs.resolve(ScalarNode, value, implicit), repr(value)
