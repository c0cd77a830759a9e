"""Property-based: random catalogs, valid and invalid, full of hostile text and names (issue 9).

For each: lint never raises; a catalog with errors generates nothing; a valid
catalog generates Python that imports and round-trips its example, JSON that
parses, YAML that parses and HTML whose text equals the catalog's text.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import uuid
from collections import Counter
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.engine.config import RunConfig
from generator.commands.generate import RENDERERS, render
from generator.commands.lint import check
from generator.loader import load_text
from generator.naming import python_package_name
from generator.runtime import runtime_files
from generator.writer import write

HOSTILE = ['"', "'", '"""', "\\", "\n", "{{ x }}", "{% if %}", "<script>alert(1)</script>", "</textarea>", "&amp;",
           "ü", "東京", "🚀", "${HOME}", "`", "#", ": ", "- ", "|", "*", "--", "\t"]
text = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=6)),
                min_size=1, max_size=6).map("".join)
one_line = text.map(lambda value: " ".join(value.split())).filter(bool)
GOOD_NAMES = ["thingId", "class", "import", "from", "modelConfig", "schema", "json", "copy", "validate", "httpURL",
              "httpUrl", "type", "id", "list", "self", "none", "value2", "a"]
BAD_NAMES = ["meter_id", "Bad", "x-y", "9lives", ""]
GOOD_TYPES = ["nl.example.thing-happened", "io.example.class-import.from", "nl.example.kebab-case.v2", "com.x.y"]
BAD_TYPES = ["../../x", "..\\x", "nl..double", "no-dots", "nl.example.a.v1.v2"]
# About two catalogs in three are valid: those go all the way to imported Python.
TYPES = GOOD_TYPES * 5 + BAD_TYPES


@st.composite
def catalogs(draw: Any) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(GOOD_NAMES + BAD_NAMES * draw(st.sampled_from([0, 0, 0, 1]))),
                          min_size=1, max_size=5, unique=True))
    kinds = {name: draw(st.sampled_from(["string", "integer", "boolean", "enum"])) for name in names}
    properties: dict[str, Any] = {}
    example: dict[str, Any] = {}
    for name, kind in kinds.items():
        if kind == "enum":
            values = draw(st.lists(one_line, min_size=1, max_size=3, unique=True))
            properties[name] = {"type": "string", "enum": values, "description": draw(one_line)}
            example[name] = values[0]
        else:
            properties[name] = {"type": kind, "description": draw(one_line)}
            example[name] = draw({"string": text, "integer": st.integers(-(2**31), 2**31 - 1), "boolean": st.booleans()}[kind])
    event: dict[str, Any] = {
        "type": draw(st.sampled_from(TYPES)),
        "dataversion": draw(st.sampled_from(["1.0.0", "2.10.3"] * 4 + ["1.0"])),
        "title": draw(one_line),
        "description": draw(text),
        "data": {"type": "object", "description": draw(text), "properties": properties},
        "examples": [{"data": example}],
    }
    if draw(st.booleans()):
        event["deprecated"] = draw(st.one_of(st.just(True), one_line))
    return {
        "catalog": draw(st.sampled_from(["prop-" + uuid.UUID(int=draw(st.integers(0, 2**64))).hex[:12]] * 12
                                        + ["../evil", "a/b", "Prop_X", "..", "con"])),
        "title": draw(one_line),
        "description": draw(text),
        "version": "1.0.0",
        "profile": "cloudevents",
        "producer": {"source": "urn:nld:oin:00000001823288444000:systeem:prop", "organization": draw(one_line)},
        "rules": {"PAY-DESCRIPTION": "off"},
        "events": [event],
    }


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        # Only evcat's own bundled script (the copy buttons) may be on a page: nothing from the catalog.
        self.scripts += tag == "script" and dict(attrs).get("src") != "../../assets/docs.js"

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


# 2,000 catalogs in CI (issue 9); EVCAT_HYPOTHESIS_EXAMPLES=50 for a quick local run.
# The runtime's modules, copied into every package byte for byte (tests/test_goldens.py).
RUNTIME_MODULES = set(runtime_files())
EXAMPLES = int(os.environ.get("EVCAT_HYPOTHESIS_EXAMPLES", "2000"))


COUNTS: Counter[str] = Counter()


@lru_cache(maxsize=None)
def black_format(source: str) -> str:
    import black

    return black.format_str(source, mode=black.Mode(target_versions={black.TargetVersion.PY311}))


@pytest.mark.slow
def test_random_catalogs(tmp_path: Path) -> None:
    COUNTS.clear()
    check_random_catalog(root=tmp_path)
    # Both kinds were really exercised (hypothesis may stop early only if the space ran out).
    assert COUNTS["valid"] + COUNTS["invalid"] >= EXAMPLES
    assert COUNTS["valid"] >= EXAMPLES // 3 and COUNTS["invalid"] >= EXAMPLES // 10, COUNTS


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(document=catalogs())
def check_random_catalog(document: dict[str, Any], root: Path) -> None:
    source = yaml.safe_dump(document, allow_unicode=True, sort_keys=False)
    result = check([load_text(source, "c.yaml")])  # must not raise, whatever the input
    for diagnostic in result.diagnostics:
        assert diagnostic.location.line >= 1 and diagnostic.rule and diagnostic.message
    if result.has_errors:
        COUNTS["invalid"] += 1
        return
    COUNTS["valid"] += 1
    outputs = render(result.catalog_set, list(RENDERERS), RunConfig(jobs=1))  # no worker processes per example
    out = root / uuid.uuid4().hex
    write(out, outputs, "test")  # the real writer: every path checked to stay inside OUT
    written = {str(path.relative_to(out)) for path in out.rglob("*") if path.is_file()}
    assert written == {path for files in outputs.values() for path in files} | {".evcat-manifest.json"}
    event = result.catalog_set.events[0]
    for path, content in outputs["jsonschema"].items():
        parsed = json.loads(content)
        if path.endswith("data.schema.json"):
            assert parsed["description"] == document["events"][0]["data"]["description"]
    for content in outputs["asyncapi"].values():
        asyncapi = yaml.load(content, Loader=yaml.CSafeLoader)
        assert asyncapi["info"]["title"] == document["title"]
        assert asyncapi["info"].get("description", "") == document["description"]  # an empty one is left out
    page = next(content for path, content in outputs["docs"].items() if path.startswith("docs/events/"))
    parser = Text()
    parser.feed(page.decode())
    assert parser.scripts == 0
    page_text = "".join(parser.parts)
    assert event.title in page_text
    for prop in document["events"][0]["data"]["properties"].values():
        assert prop["description"] in page_text
    for path, content in outputs["python"].items():  # formatted by ruff: black agrees
        if path.endswith(".py") and Path(path).name not in RUNTIME_MODULES:  # shipped as they are: test_goldens
            assert black_format(content.decode()) == content.decode(), path
    sys.path.insert(0, str(out / "python"))
    name = python_package_name(document["catalog"])
    try:
        module = importlib.import_module(name)
        example = {"specversion": "1.0", "id": "x", "source": event.source, "type": event.type,
                   "dataversion": event.dataversion, **document["events"][0]["examples"][0]}
        parsed_event = module.parse_event(json.dumps(example))
        assert parsed_event.model_dump(mode="json", by_alias=True, exclude_unset=True)["data"] == example["data"]
        # Binary mode carries Content-Type; an event without datacontenttype comes back with the JSON default.
        expected = parsed_event.model_copy(update={"datacontenttype": parsed_event.datacontenttype or "application/json"})
        assert module.from_http(*module.to_http(parsed_event, "binary")) == expected
        assert module.from_http(*module.to_http(parsed_event, "structured")) == parsed_event
        assert event.title in type(parsed_event).__doc__
    finally:
        sys.path.remove(str(out / "python"))
        for module_name in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module_name]
