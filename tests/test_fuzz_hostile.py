"""Issue 16 acceptance: hostile catalogs, events, caches and OUT trees, at
random (hypothesis), through lint, generate, validate and diff. Never a
traceback or exit code 3, nothing written outside OUT and the cache, nothing
run from the cache. EVCAT_FUZZ_EXAMPLES raises the number of examples."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.cli import main

from .conftest import catalog_text

EXAMPLES = int(os.environ.get("EVCAT_FUZZ_EXAMPLES", "8"))

HOSTILE_TEXT = st.sampled_from([
    "x", "a`<img src=x onerror=alert(1)>`", "[c](javascript:alert(1))", "\x1b[2J\x07", "\u202e", "$(rm -rf /)",
    "../../etc/passwd", "field", "event.error", "EventError", "__init__", "import", "json", "'''\"\"\"", "\\", "{{ 7*7 }}",
    "a" * 300, "\ud7ff", "\ufffe",
])
PATTERNS = st.sampled_from(["^(\\w+\\s?)*$", "(a|a)*", "^\\d+$", "[", "(?<=x)y", "\\p{L}", "^.*a.*b$", "a{2,1}",
                            "(a)\\1", "^[a-z]+$", "\\u{110000}", "(?<n>x)\\k<n>", "[^]", "\\cJ"])


def _yaml_string(text: str) -> str:
    return json.dumps(text)  # JSON strings are YAML flow scalars


@st.composite
def catalogs(draw: st.DrawFn) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for number in range(draw(st.integers(1, 3))):
        name = draw(HOSTILE_TEXT)
        pattern = draw(PATTERNS)
        event_type = draw(st.sampled_from(["nl.test.thing-happened", "field", "event.error", "nl.test.a" + str(number)]))
        events = (
            f"  - type: {_yaml_string(event_type)}\n    dataversion: 1.0.0\n    title: {_yaml_string(draw(HOSTILE_TEXT))}\n"
            f"    description: {_yaml_string(draw(HOSTILE_TEXT))}\n    data:\n      type: object\n"
            f"      description: {_yaml_string(draw(HOSTILE_TEXT))}\n      properties:\n"
            f"        {_yaml_string(name)}: {{type: string, pattern: {_yaml_string(pattern)}, description: d}}\n"
        )
        catalog_id = draw(st.sampled_from(["test-catalog", "import", "catalog-import", "json", "Bad Id", "email"]))
        text = catalog_text(events=events, catalog_id=catalog_id).encode("utf-8", "surrogatepass")
        mutation = draw(st.sampled_from(["none", "truncate", "bytes", "deep", "number", "alias"]))
        if mutation == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        elif mutation == "bytes":
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.binary(min_size=1, max_size=8)) + text[at:]
        elif mutation == "deep":
            text += b"extra: " + b"[" * 5000 + b"]" * 5000 + b"\n"
        elif mutation == "number":
            text = text.replace(b"1.0.0", b"1" + b"0" * 500 + b".0.0", 1)
        elif mutation == "alias":
            text += b"a: &a [x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c]\n"
        files[f"c{number}.yaml"] = text
    return files


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@st.composite
def events(draw: st.DrawFn) -> bytes:
    good = {"specversion": "1.0", "id": "x", "source": "urn:nld:oin:00000001823288444000:systeem:test",
            "type": "nl.test.thing-happened", "dataversion": "1.0.0", "time": "2024-01-01T00:00:00Z",
            "datacontenttype": "application/json", "data": {"thingId": "a"}}
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        event = dict(good)
        key = draw(st.sampled_from(["id", "data", "type", "source", "extra", "time"]))
        event[key] = draw(JSON_VALUES)
        line = json.dumps(event, allow_nan=True)
        raw = draw(st.sampled_from([line, "[" * 3000, '{"a": ' + "9" * 400 + "}", '"\\ud800"', "NaN", line[:10], "\x00"]))
        lines.append(raw)
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


class Marker:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def _plant(root: Path, outside: Path, draw: st.DrawFn, marker: Path) -> None:
    """Links to ``outside``, pickles that would create ``marker``, junk."""
    for relative in draw(st.lists(st.sampled_from([
        "render/ab/x.marshal", "parsed", "checks.marshal", "templates/__jinja2_x.cache", "models", "runs",
        "python", "docs", "jsonschema/index.json", ".evcat-journal", ".evcat-manifest.json", "python/test_catalog",
        "docs/markdown/index.md", "asyncapi",
    ]), max_size=4, unique=True)):
        path = root / relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue  # a planted file or link is in the way
        if path.exists() or path.is_symlink() or not path.parent.resolve().is_relative_to(root.resolve()):
            continue
        kind = draw(st.sampled_from(["link", "pickle", "junk", "dir"]))
        if kind == "link":
            path.symlink_to(outside, target_is_directory=True)
        elif kind == "pickle":
            path.write_bytes(pickle.dumps(Marker(str(marker))))
        elif kind == "junk":
            path.write_bytes(draw(st.binary(max_size=64)))
        else:
            path.mkdir()


def _tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(files=catalogs(), stream=events(), data=st.data())
def test_hostile_inputs_never_crash_escape_or_execute(tmp_path_factory: Any, files: dict[str, bytes], stream: bytes,
                                                      data: st.DataObject) -> None:
    work = tmp_path_factory.mktemp("fuzz")
    catalog, cache, out, outside = work / "catalog", work / "cache", work / "out", work / "outside"
    for directory in (catalog, cache, out, outside):
        directory.mkdir()
    (outside / "keep").write_text("mine\n")
    marker = work / "executed"
    for name, content in files.items():
        (catalog / name).write_bytes(content)
    _plant(cache, outside, data.draw, marker)
    _plant(out, outside, data.draw, marker)
    (work / "events.jsonl").write_bytes(stream)
    before = _tree(outside)
    commands = [
        ["lint", str(catalog), "--cache-dir", str(cache)],
        ["generate", str(catalog), "-o", str(out), "--cache-dir", str(cache)],
        ["generate", str(catalog), "-o", str(out), "--cache-dir", str(cache), "--check"],
        ["validate", str(catalog), str(work / "events.jsonl"), "--cache-dir", str(cache)],
        ["diff", str(catalog), str(catalog)],
    ]
    for command in commands:
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(command)
        assert code in (0, 1, 2), (command, code, stderr.getvalue()[-500:])
        assert "Traceback" not in stderr.getvalue()
        assert "internal error" not in stderr.getvalue(), (command, stderr.getvalue()[-500:])
    assert _tree(outside) == before, "written outside OUT and the cache"
    assert not marker.exists(), "code ran from the cache or OUT"
