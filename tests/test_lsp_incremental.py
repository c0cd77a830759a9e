"""``evcat lsp`` keeps work between checks (engine.keep.Keep: each unchanged
file's parsed document, structure check and rewritten schemas, the memo of
the costly checks): after any sequence of edits, the diagnostics of the
long-running folder are those of a fresh check of the same texts."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

from generator.lsp.folder import Folder

from .conftest import ROOT


def _edits(text: str, rng: random.Random) -> str:
    """One edit an author might make, chosen by ``rng``: each touches what a
    different kind of check reads (an event, its payload, a shared schema,
    the catalog header, the other dataversions of a type)."""
    lines = text.split("\n")
    kind = rng.choice(["snake", "type", "description", "dataversion", "organization", "pattern", "drop", "title"])
    if kind == "snake":  # PAY-CAMELCASE (a set rule over payload parts)
        rows = [i for i, line in enumerate(lines) if re.match(r"^\s+[a-z][A-Za-z0-9]*:$", line) and lines[i - 1].strip() == "properties:"]
        if rows:
            row = rng.choice(rows)
            lines[row] = re.sub(r"([a-z])([A-Z])", lambda m: m[1] + "_" + m[2].lower(), lines[row], count=1)
    elif kind == "type":  # CAT-EXAMPLE (costly) where an example no longer fits
        rows = [i for i, line in enumerate(lines) if line.strip() in ("type: string", "type: integer", "type: number")]
        if rows:
            row = rng.choice(rows)
            lines[row] = lines[row].replace(lines[row].strip(), rng.choice(["type: boolean", "type: string", "type: integer"]))
    elif kind == "description":  # PAY-DESCRIPTION, an event check and a set check
        rows = [i for i, line in enumerate(lines) if line.strip().startswith("description:")]
        if rows:
            del lines[rng.choice(rows)]
    elif kind == "dataversion":  # CAT-DUPLICATE-EVENT, NLGOV-TYPE-BREAKING, CAT-VERSION-BUMP (other events)
        rows = [i for i, line in enumerate(lines) if line.strip().startswith("dataversion:")]
        if rows:
            row = rng.choice(rows)
            lines[row] = re.sub(r"dataversion: .*", f"dataversion: {rng.choice(['1.0.0', '2.0.0', '1.1.0'])}", lines[row])
    elif kind == "organization":  # NLGOV-TYPE-ORGANIZATION (the catalog header)
        lines = [re.sub(r"organization: .*", f"organization: {rng.choice(['Synthetic', 'Ctx001', 'Meter0'])}", line)
                 if line.startswith("  organization:") else line for line in lines]
    elif kind == "pattern":  # CAT-SCHEMA (costly: the payload no longer compiles)
        rows = [i for i, line in enumerate(lines) if line.strip().startswith("pattern:")]
        if rows:
            row = rng.choice(rows)
            lines[row] = lines[row].split("pattern:")[0] + rng.choice(["pattern: '['", "pattern: ^[0-9]{13}$"])
    elif kind == "drop":  # an event removed: the paths of the ones after it change
        starts = [i for i, line in enumerate(lines) if line.startswith("- type:")]
        if len(starts) > 1:
            at = rng.randrange(len(starts) - 1)
            del lines[starts[at]:starts[at + 1]]
    else:  # a title: nothing but the event changes
        rows = [i for i, line in enumerate(lines) if line.startswith("  title:")]
        if rows:
            row = rng.choice(rows)
            lines[row] = lines[row] + " again"
    return "\n".join(lines)


def _rows(by_file: dict) -> list[tuple]:
    return sorted((d.location.file, d.location.line, d.location.column, d.rule, str(d.severity), d.message)
                  for diagnostics in by_file.values() for d in diagnostics)


def test_incremental_checks_equal_a_fresh_check_after_every_edit(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    subprocess.run([sys.executable, str(ROOT / "bench" / "synth.py"), str(catalog), "--events", "60", "--per-file", "20",
                    "--profile", "nlgov"], check=True, capture_output=True)
    names = sorted(path.name for path in catalog.glob("*.yaml"))
    texts = {name: (catalog / name).read_text(encoding="utf-8") for name in names}
    folder = Folder.open(str(catalog))
    folder.check()
    history = {name: [text] for name, text in texts.items()}

    def edit(name: str, text: str, step: object) -> list[tuple]:
        history[name].append(texts[name])
        texts[name] = text
        folder.set_buffer(name, text)
        incremental = _rows(folder.check())
        fresh_folder = Folder.open(str(catalog))
        for each, each_text in texts.items():
            fresh_folder.set_buffer(each, each_text)
        fresh = _rows(fresh_folder.check())
        assert incremental == fresh, f"step {step}: {sorted(set(incremental) ^ set(fresh))[:4]}"
        return fresh

    # Findings of an event check (PAY-DESCRIPTION) in every file ...
    for name in names:
        edit(name, re.sub(r"(\n- type: [^\n]*\n  title: [^\n]*\n)  description: [^\n]*\n", r"\1", texts[name], count=1), "description")
    # ... that move when lines above them move (their events unchanged).
    moved = edit(names[0], "# moved\n" + texts[names[0]], "comment")
    assert any(row[3] == "PAY-DESCRIPTION" and row[0] == names[0] for row in moved)
    # A dataversion of a type in another file: the unchanged event now has a lower major beside it.
    first = re.search(r"\n- type: ([^\n]*)\n", texts[names[0]])
    assert first is not None
    older = f"- type: {first[1]}\n  title: Older\n  description: The older version.\n  dataversion: 0.9.0\n"
    widened = edit(names[-1], texts[names[-1]].rstrip("\n") + "\n" + older, "other file")
    assert any(row[3] == "NLGOV-TYPE-BREAKING" and row[0] == names[0] for row in widened), widened

    rng = random.Random(29)
    with_findings = 0
    for step in range(80):
        name = rng.choice(names)
        if rng.random() < 0.2 and len(history[name]) > 1:
            text = history[name][rng.randrange(len(history[name]))]  # an undo: findings of an earlier text come back
        else:
            text = _edits(texts[name], rng)
        with_findings += bool(edit(name, text, step))
    assert with_findings > 40  # the edits did make findings to compare


def test_a_check_that_reads_another_file_is_run_again(tmp_path: Path) -> None:
    """NORMO-DATA-EMPTY reads the shared schema its data refers to: emptied in
    another file, the event (unchanged, in an unchanged file) is reported."""
    from .conftest import catalog_text

    catalog = tmp_path / "catalog"
    catalog.mkdir()
    shared = ("schemas:\n  Thing:\n    type: object\n    description: A thing.\n"  # a schema library
              "    properties:\n      thingId: {type: string, description: Id of the thing.}\n")
    user = catalog_text("normo", catalog_id="user", events=(
        "  - type: tst.thing.happened\n    dataversion: 1.0.0\n    title: Thing happened\n    description: A thing happened.\n"
        "    data: {$ref: 'a.yaml#/schemas/Thing', description: The thing.}\n"))
    (catalog / "a.yaml").write_text(shared, encoding="utf-8")
    (catalog / "b.yaml").write_text(user, encoding="utf-8")
    folder = Folder.open(str(catalog))
    assert _rows(folder.check()) == []
    folder.set_buffer("a.yaml", shared.replace("    properties:\n      thingId: {type: string, description: Id of the thing.}\n", ""))
    assert [row[:4] for row in _rows(folder.check())] == [("b.yaml", 17, 11, "NORMO-DATA-EMPTY")]



def test_a_schema_check_that_follows_refs_into_another_file_is_run_again(tmp_path: Path) -> None:
    """PAY-ALLOF-CLOSED and PAY-ONEOF-EXCLUSIVE read the shared schemas a
    payload references (rules.part_findings with follows_refs): closed or
    made to overlap in another file, the unchanged event is reported; undone,
    the finding goes, as a fresh check says."""
    from .conftest import catalog_text

    catalog = tmp_path / "catalog"
    catalog.mkdir()
    shared = ("schemas:\n  Base:\n    type: object\n    description: A base.\n"
              "    properties:\n      code: {type: string, description: Code.}\n"
              "  Count:\n    type: integer\n    description: A count.\n")
    user = catalog_text("cloudevents", catalog_id="user", events=(
        "  - type: org.example.thing-happened\n    dataversion: 1.0.0\n    title: Thing happened\n"
        "    description: A thing happened.\n"
        "    data:\n      description: The thing.\n      allOf: [{$ref: 'a.yaml#/schemas/Base'}]\n"
        "      properties:\n        note: {type: string, description: Note.}\n"
        "        size: {description: Size., oneOf: [{$ref: 'a.yaml#/schemas/Count'}, {type: string}]}\n"))
    (catalog / "a.yaml").write_text(shared, encoding="utf-8")
    (catalog / "b.yaml").write_text(user, encoding="utf-8")
    folder = Folder.open(str(catalog))
    assert [row for row in _rows(folder.check()) if row[4] == "error"] == []
    for changed, rule in ((shared.replace("  Count:\n    type: integer", "  Count:\n    type: string"), "PAY-ONEOF-EXCLUSIVE"),
                          (shared.replace("    properties:\n", "    additionalProperties: false\n    properties:\n"),
                           "PAY-ALLOF-CLOSED"), (shared, None)):
        folder.set_buffer("a.yaml", changed)
        incremental = _rows(folder.check())
        fresh_folder = Folder.open(str(catalog))
        fresh_folder.set_buffer("a.yaml", changed)
        assert incremental == _rows(fresh_folder.check())
        assert {row[0] for row in incremental if row[3] == rule} == (set() if rule is None else {"b.yaml"}), incremental
        assert [row for row in incremental if row[4] == "error" and row[3] != rule] == [], incremental


def test_an_event_check_that_reads_beyond_its_event_says_so() -> None:
    """engine.checks keeps the findings of an unchanged event's checks: a
    check that reads the model of the directory, the rules' shared cache or
    another document must be registered ``reads_others`` (it runs again)."""
    import inspect

    from generator.rules import CHECKS

    for rule, check in CHECKS.event:
        source = inspect.getsource(check)
        reads = [name for name in ("context.built", "context.cache", "context.documents", "context.memo") if name in source]
        if reads:
            assert check in CHECKS.reading_others, f"{rule.id} ({check.__name__}) reads {reads}: register it reads_others=True"


def test_positions_found_while_idle_are_the_parsers(tmp_path: Path) -> None:
    """Files read without positions (first read, parse cache) get them from
    ``Folder.place_next`` (the server calls it while idle): the same as a
    parse with positions, so a later finding in that file is placed alike
    and needs no second parse then."""
    from generator.loader import load_bytes

    catalog = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog" / "normo", catalog)
    folder = Folder.open(str(catalog))
    folder.check()
    unplaced = [name for name, document in folder.documents.items() if document.positions is None]
    assert unplaced, "a folder read from disk keeps no positions until they are asked for"
    placed = 0
    while folder.place_next():
        placed += 1
    assert placed == len(unplaced)
    for name in unplaced:
        document = folder.documents[name]
        assert document.positions is not None
        fresh = load_bytes((catalog / name).read_bytes(), name)
        assert document.positions == fresh.positions and fresh.positions[0]
    assert not folder.place_next()
