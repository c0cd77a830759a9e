"""engine.reparse: an edited buffer parsed by its changed block alone gives
the document a full parse gives (values, positions, scalar texts, findings),
or hands the work back (None) to the full parse."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

from generator.engine.reparse import parse, reparse
from generator.loader import load_bytes

from .conftest import ROOT

_SNIPPETS = ["a"] * 12 + ["1"] * 4 + [
    "", " ", "-", "- ", "...", "---", "#", ": ", "'", '"', "[", "{", "&a ", "*a", "*id001", "&id001 ", "|", ">", "\t",
    "x: 1", "  - y", "true", "1.5", "<<: {q: 1}", "!!int", "$ref:", " # c", "\\", "é", "\u2028", "\r", "~", "? ", "%",
]


def _same(document, full) -> bool:
    return (document.value, document.positions, document.scalar_text, document.diagnostics) == (
        full.value, full.positions, full.scalar_text, full.diagnostics)


def _edit(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    row = rng.randrange(len(lines))
    line = lines[row]
    column = rng.randrange(len(line) + 1)
    roll = rng.random()
    if roll < 0.5:
        lines[row] = line[:column] + rng.choice(_SNIPPETS) + line[column:]
    elif roll < 0.8:
        lines[row] = line[:column] + line[column + rng.randrange(1, 4):]
    else:
        lines[row] = " " * rng.randrange(6) + line.lstrip()
    return "\n".join(lines)


def test_a_reparsed_buffer_equals_a_full_parse(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    subprocess.run([sys.executable, str(ROOT / "bench" / "synth.py"), str(catalog), "--events", "40", "--per-file", "20"],
                   check=True, capture_output=True)
    rng = random.Random(29)
    reparsed = 0
    for source in [*sorted(catalog.glob("*.yaml")), *sorted((ROOT / "catalog").glob("*.yaml"))]:
        text = source.read_text(encoding="utf-8")
        document, kept = parse(text.encode(), "x.yaml")
        assert _same(document, load_bytes(text.encode(), "x.yaml"))
        if kept is None:
            continue
        for _ in range(150):
            edited = _edit(text, rng)
            raw = edited.encode("utf-8", errors="surrogatepass")
            full = load_bytes(raw, "x.yaml")
            again, again_kept = parse(raw, "x.yaml")
            assert _same(again, full)
            found = reparse(document, kept, raw, "x.yaml")
            if found is None:
                continue
            reparsed += 1
            assert _same(found[0], full), (source.name, edited)
            if rng.random() < 0.3:  # edits upon edits
                text, document, kept = edited, found[0], found[1]
    assert reparsed > 15  # the edits did reach the short way (23 with this seed)


def test_an_alias_elsewhere_of_a_changed_node_is_parsed_in_full() -> None:
    text = ("events:\n- type: a\n  data: &one\n    x: 1\n- type: b\n  data: *one\n- type: c\n")
    document, kept = parse(text.encode(), "x.yaml")
    assert kept is not None
    edited = text.replace("x: 1", "x: 2")
    assert reparse(document, kept, edited.encode(), "x.yaml") is None
    # Beside the copied node, the block is parsed alone.
    beside = text.replace("type: a", "type: z")
    found = reparse(document, kept, beside.encode(), "x.yaml")
    assert found is not None and _same(found[0], load_bytes(beside.encode(), "x.yaml"))
    # A document end in the block would end the file: parsed in full.
    assert reparse(document, kept, text.replace("  data: &one\n", "...\n").encode(), "x.yaml") is None


def test_a_merge_that_places_top_level_keys_inside_the_last_block_is_parsed_in_full() -> None:
    text = "x: 1\nevents:\n- type: a\n- type: b\n  data: &m\n    k: 1\n    j: 2\n  title: t\n<<: *m\n"
    document, kept = parse(text.encode(), "x.yaml")
    assert _same(document, load_bytes(text.encode(), "x.yaml"))
    assert kept is None  # a merge key moves keys where no block is seen: never reparsed
