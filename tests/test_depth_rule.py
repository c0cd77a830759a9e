"""One depth rule for every judge, whatever the Python version.

JSON nested deeper than MAX_DEPTH (128) is refused with the same words and
the same JSON pointer by ``evcat validate``, ``evcat serve``'s judge and the
generated package's ``parse_event``, ``from_http``, ``from_http_batch`` and
webhook ``Receiver``. The rule is read from the bytes (generator/runtime/
_reading.py), so neither orjson's limit (1,024, or none before 3.9), nor
pydantic-core's (200), nor where the standard library's parser runs out of
recursion (Python 3.11 and 3.12 at about 1,000 levels, 3.13 deeper) decides
it: the judges run here under a recursion limit of 200.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from generator.runtime._reading import MAX_DEPTH, deep_pointer, nesting_problem, too_deep

from .conftest import ROOT
from .goldens import CATALOGS

DEEP = 3000
ARRAYS = '{"specversion": "1.0", "data": ' + "[" * DEEP + "]" * DEEP + "}"
OBJECTS = '{"id": "x", "data": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}"
POINTERS = {ARRAYS: ("data", *[0] * (MAX_DEPTH - 1)), OBJECTS: ("data", *["a"] * (MAX_DEPTH - 1))}

# Every judge of one body, in a fresh interpreter whose recursion limit is
# 200: (judge, what it said) as JSON lines.
_JUDGES = r"""
import asyncio, json, sys
sys.setrecursionlimit(200)
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/out/python"]
from generator.commands.lint import lint
from generator.commands.serve import CatalogJudge
from generator.commands.validate import validate
import meter_data
from meter_data.webhook import Receiver

catalog, events_file, batch_file = sys.argv[2:5]
body = open(events_file, "rb").read()
batch = open(batch_file, "rb").read()
catalog_set = lint(catalog).catalog_set
said = {}
for name, file in (("validate", events_file), ("validate batch", batch_file)):
    [diagnostic] = [d for d in validate(catalog_set, [file]).diagnostics if d.rule == "CE-FORMAT"]
    said[name] = [diagnostic.message, dict(diagnostic.extra).get("pointer")]
def raised(call):
    try:
        call()
    except meter_data.EventError as error:
        return str(error)
    return "accepted"
said["parse_event"] = raised(lambda: meter_data.parse_event(body))
said["parse_event str"] = raised(lambda: meter_data.parse_event(body.decode()))
said["from_http"] = raised(lambda: meter_data.from_http({"content-type": "application/cloudevents+json"}, body))
said["from_http_batch"] = raised(
    lambda: meter_data.from_http_batch({"content-type": "application/cloudevents-batch+json"}, batch))
for name, judge in (("serve", CatalogJudge(catalog_set)), ("Receiver", Receiver(tokens=["t"]).judge)):
    [judged] = judge({"content-type": "application/cloudevents+json"}, body)
    said[name] = [judged.findings[0].message, judged.findings[0].pointer]
print(json.dumps(said))
"""


@pytest.mark.parametrize("body", [ARRAYS, OBJECTS], ids=["arrays", "objects"])
def test_every_judge_refuses_deep_json_alike_under_a_low_recursion_limit(body: str, tmp_path: Path) -> None:
    pointer = POINTERS[body]
    text = "".join(f"/{part}" for part in pointer)
    expected = nesting_problem(pointer)
    assert expected.endswith(": nested deeper than 128 levels (the limit)") and "/.../" in expected
    (tmp_path / "event.json").write_text(body, encoding="utf-8")
    (tmp_path / "batch.json").write_text(f"[{{}}, {body}]", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-c", _JUDGES, str(ROOT), str(CATALOGS["normo"]), str(tmp_path / "event.json"), str(tmp_path / "batch.json")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    said = json.loads(run.stdout)
    assert said["validate"] == [expected, text]
    assert said["validate batch"] == [f"event 1: {expected}", text]  # the item, with its index and pointer
    assert said["serve"] == [expected, text]
    assert said["Receiver"][0] == expected
    for judge in ("parse_event", "parse_event str", "from_http"):
        assert said[judge] == expected, judge
    assert said["from_http_batch"] == nesting_problem((1, *pointer))  # the whole batch is read at once


def _nested(inner: object, wrap: str, levels: int) -> object:
    """``inner`` in ``levels`` lists (``wrap`` "list") or objects {"a": ...}, built without recursion."""
    for _ in range(levels):
        inner = [inner] if wrap == "list" else {"a": inner}
    return inner


def test_the_scan_of_the_bytes_and_the_walk_of_the_values_agree() -> None:
    values = {ARRAYS: {"specversion": "1.0", "data": _nested([], "list", DEEP - 1)}, OBJECTS: {"id": "x", "data": _nested(1, "dict", DEEP)}}
    for body, value in values.items():
        assert too_deep(body.encode()) == POINTERS[body]
        assert deep_pointer(value) == POINTERS[body]


@pytest.mark.parametrize(
    "text, pointer",
    [
        ("[" * MAX_DEPTH + "]" * MAX_DEPTH, None),  # at the limit
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), (0,) * MAX_DEPTH),
        ('{"a": "' + "[" * 500 + '"}', None),  # brackets in a string do not count
        ('{"x\\"[{": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}", ('x"[{', *(0,) * (MAX_DEPTH - 1))),  # an escaped quote
        ('{"x\\\\": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}", ("x\\", *(0,) * (MAX_DEPTH - 1))),  # an escaped backslash
        ('[1, {"b": 2, "c\\u0041": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}]", (1, "cA", *(0,) * (MAX_DEPTH - 2))),
        ("[" * (MAX_DEPTH + 1), (0,) * MAX_DEPTH),  # not JSON, still too deep
        ('"' + "[" * 500, None),  # a string that does not end
    ],
)
def test_the_scan_finds_the_first_container_beyond_the_limit(text: str, pointer: tuple[str | int, ...] | None) -> None:
    assert too_deep(text.encode()) == pointer
    try:
        value = json.loads(text)
    except ValueError:
        return
    assert deep_pointer(value) == pointer
