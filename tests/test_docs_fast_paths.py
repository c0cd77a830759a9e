"""The docs renderer's fast paths give exactly what the general code gives.

Each fast path skips work for the common input (no backtick in a code span,
no ``]`` in Markdown text, a header value ``quote`` leaves alone, a constraint
value encoded by a reused encoder, a table cell rendered before); the slow paths are kept here as written
before, and hypothesis varies the input, weighted towards the characters that
switch between the two.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from generator import vocabulary
from generator.render import docs
from generator.render.templates import _INLINE_LINK, _REFERENCE, md_cell, md_code, md_text, safe_link

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), database=None)
# Text made mostly of the characters the fast paths look at.
TEXT = st.text(st.one_of(st.sampled_from(list("`|] [()<>&:\n\r \tj\\a:/#?")), st.characters()), max_size=40)


def md_text_general(text: str | None) -> str:
    escaped = (text or "").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    escaped = _INLINE_LINK.sub(lambda m: m.group() if safe_link(m.group(1)) else "]\\(" + m.group(1), escaped)
    return _REFERENCE.sub(lambda m: m.group() if safe_link(m.group(3)) else f"{m.group(1)}\\[{m.group(2)}]: {m.group(3)}", escaped)


def md_code_general(text: str | None) -> str:
    body = " ".join((text or "").splitlines()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * (longest + 1)
    if body.startswith("`") or body.endswith("`") or (body.startswith(" ") and body.endswith(" ") and body.strip()):
        body = f" {body} "
    return f"{fence}{body}{fence}"


@SETTINGS
@given(text=st.one_of(st.none(), TEXT))
def test_markdown_filters_match_the_general_code(text: str | None) -> None:
    assert md_text(text) == md_text_general(text)
    assert md_code(text) == md_code_general(text)
    assert md_cell(text) == " ".join(md_text_general(text).split()).replace("|", "\\|")
    assert md_code(text) == md_code_general(text)  # again: now from the memo


def test_markdown_filters_on_the_cases_that_switch_paths() -> None:
    for text in ["", " ", "  ", " a ", "a", "`", "a`b", "``x``", "[x](javascript:alert(1))", "[x]: data:x", "a|b", "x\ny"]:
        assert md_text(text) == md_text_general(text), text
        assert md_code(text) == md_code_general(text), text
    assert md_text("[x](javascript:alert(1))") == "[x]\\(javascript:alert(1))"
    for value in ("a&b", Markup("a&b")):  # equal, of different types: the memo keeps them apart
        assert md_cell(value) == " ".join(md_text_general(value).split()).replace("|", "\\|")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@SETTINGS
@given(value=JSON)
def test_constraint_values_are_json_dumps(value: Any) -> None:
    expected = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else json.dumps(value, ensure_ascii=False)
    assert docs._json_text(value) == expected


# Catalog text holds no lone surrogate (the loader refuses one: CAT-YAML).
WIRE_TEXT = st.text(st.one_of(st.sampled_from(list("`|] [()<>&:\n\r \tj\\a:/#?%+")), st.characters(exclude_categories=["Cs"])),
                    max_size=40)


@SETTINGS
@given(values=st.dictionaries(st.sampled_from(["id", "source", "type", "subject", "time", "ext"]),
                              st.one_of(WIRE_TEXT, st.booleans(), st.integers()), max_size=6))
def test_http_headers_are_quoted_as_before(values: dict[str, Any]) -> None:
    lines = docs.http_request(values, "/").splitlines()[1:]
    expected = []
    for name, value in values.items():
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        expected.append(f"ce-{name}: {quote(text, safe=vocabulary._HEADER_SAFE)}")
    assert lines == expected


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(text=st.one_of(
    st.from_regex(r"[A-Za-z][A-Za-z0-9 ,.;:'()/?%+=@#$^{}|-]*", fullmatch=True),  # the fast path's own texts
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30),  # any printable ASCII
    st.text(st.sampled_from(list("aZ1 -*_#>=`\\[]()!<&;:\"'.\n\t")), max_size=12),
))
def test_plain_descriptions_render_as_the_markdown_parser_renders_them(text: str) -> None:
    assert docs.markdown(text) == docs._markdown_parser().render(text)


# Payload schemas as the model holds them (refs rewritten to ``#/$defs/<name>``),
# with shared schemas that refer to each other (and to themselves), arrays of
# refs, and keywords next to a ``$ref`` (which change what a walk finds).
NAMES = ["A", "B", "C"]
REF = st.builds(lambda name, extra: {"$ref": f"#/$defs/{name}", **extra}, st.sampled_from(NAMES + ["Missing"]),
                st.fixed_dictionaries({}, optional={"description": TEXT, "type": st.just("object"),
                                                    "properties": st.just({"x": {"type": "string"}})}))


def _schemas(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=3)},
                                  optional={"description": TEXT, "required": st.just(["a"])}),
            st.fixed_dictionaries({"type": st.just("array"), "items": inner}, optional={"description": TEXT}),
            st.fixed_dictionaries({"items": inner}),
        ),
        max_leaves=10,
    )


SCHEMA = _schemas(st.one_of(REF, st.fixed_dictionaries({"type": st.sampled_from(["string", "null"])}, optional={"description": TEXT}),
                            st.just(True), st.just({})))


@SETTINGS
@given(schema=SCHEMA, shared=st.fixed_dictionaries({name: SCHEMA for name in NAMES}))
def test_search_fields_are_the_rows_of_the_payload_table(schema: Any, shared: dict[str, Any]) -> None:
    """The search index's short walk (shared schemas walked once per memo)
    finds the names and descriptions of exactly the rows the page lists."""
    from generator.model import SharedSchema

    schemas = {name: SharedSchema(name, name, "f.yaml", value) for name, value in shared.items()}
    rows = docs.payload_rows(schema, schemas)
    assert [(row.name, row.description) for row in docs.payload_rows(schema, schemas, details=False)] == \
        [(row.name, row.description) for row in rows]
    memo: dict[Any, Any] = {}
    for _ in range(2):  # the second time from the memo
        assert docs.search_fields(schema, schemas, memo) == [(row.name, row.description) for row in rows]


WORDS = st.text(st.sampled_from(list("aΣσςΑİI' \t\n.\u0345\u00ad-")), max_size=12)  # Greek sigma, case-ignorable marks, dotted I


@SETTINGS
@given(texts=st.lists(WORDS, max_size=6))
def test_words_of_each_text_are_the_words_of_all(texts: list[str]) -> None:
    """The search index lowers and splits each text once (texts repeat): the
    words, each once and in order, are those of all texts joined by spaces."""
    from itertools import chain

    assert list(dict.fromkeys(chain.from_iterable(text.lower().split() for text in texts))) == \
        list(dict.fromkeys(" ".join(texts).lower().split()))


ENTRY = st.recursive(st.none() | st.booleans() | TEXT | st.text() | st.integers(-(2**70), 2**70) | st.floats(),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=10)


@SETTINGS
@given(value=ENTRY)
def test_search_index_json_is_json_dumps(value: Any) -> None:
    from generator.render import compact_json

    assert compact_json(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert compact_json(["\ud800"]) == json.dumps(["\ud800"], ensure_ascii=False, separators=(",", ":"))


def test_warm_up_compiles_the_templates_the_docs_units_render_with() -> None:
    """``evcat generate`` warms the docs up before its workers fork: the
    templates must be compiled in the environment the units then use."""
    from generator import outputs
    from generator.commands.lint import lint
    from generator.render import templates as template_module

    from .goldens import CATALOGS

    template_module.forget_templates()
    docs.warm_up()
    unit = outputs.units("docs", lint(str(CATALOGS["normo"])).catalog_set, None)[0]
    env = template_module.environment(unit.render.keywords["templates"], unit.render.keywords["code"])
    compiled = {name for _, name in env.cache}
    assert compiled == {name for name in env.list_templates() if name.startswith("docs/")}
    assert "docs/event.html.jinja" in compiled
