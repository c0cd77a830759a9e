"""URI templates of level 1 (RFC 6570; catalog-format.md §9): the runtime's one home."""

from __future__ import annotations

import re

import jsonschema
import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.runtime import _uritemplate as t

AZURE = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroup}"


def test_parameters_in_order() -> None:
    assert t.parameters(AZURE) == ("subscriptionId", "resourceGroup")
    assert t.parameters("urn:x:fixed") == ()
    assert t.parameters("/a/{x.y}/{%41b}") == ("x.y", "%41b")


def test_a_parameter_is_one_or_more_characters_other_than_slash_query_fragment() -> None:
    assert t.matches(AZURE, "/subscriptions/42/resourceGroups/rg-1")
    assert t.match(AZURE, "/subscriptions/42/resourceGroups/rg%201") == {
        "subscriptionId": "42",
        "resourceGroup": "rg%201",
    }
    assert not t.matches(AZURE, "/subscriptions/4/2/resourceGroups/rg-1")
    assert not t.matches(AZURE, "/subscriptions//resourceGroups/rg-1")
    assert not t.matches(AZURE, "/subscriptions/42/resourceGroups/rg-1?x")
    assert not t.matches(AZURE, "/subscriptions/42/resourceGroups/rg#1")
    assert not t.matches(AZURE, "/subscriptions/42/resourceGroups/rg-1/more")
    assert t.matches("urn:x:a.b", "urn:x:a.b") and not t.matches("urn:x:a.b", "urn:x:aXb")
    assert t.match("urn:x:a.b", "urn:x:aXb") is None


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("/a/{", "not closed"),
        ("/a/}", "closes no"),
        ("/a/{}", "names no parameter"),
        ("/a/{a b}", "not a parameter name"),
        ("/a/{a{b}}", "do not nest"),
        ("/a/{+path}", "beyond level 1"),
        ("/a/{a,b}", "beyond level 1"),
        ("/a/{a:3}", "beyond level 1"),
        ("/a/{a..b}", "not a parameter name"),
        ("/a/{a}/{a}", "appears twice"),
    ],
)
def test_a_malformed_template_is_an_error_that_says_what_to_write(template: str, said: str) -> None:
    assert t.is_template(template)
    with pytest.raises(t.TemplateError, match=said):
        t.parameters(template)


def test_expand_percent_encodes_reserved_characters() -> None:
    value = t.expand(AZURE, subscriptionId="a/b?c#d", resourceGroup="é x")
    assert value == "/subscriptions/a%2Fb%3Fc%23d/resourceGroups/%C3%A9%20x"
    assert t.matches(AZURE, value)
    assert t.expand("urn:x:{id}", id=42) == "urn:x:42"
    for bad in ({"subscriptionId": "1"}, {"subscriptionId": "1", "resourceGroup": "2", "other": "3"}):
        with pytest.raises(t.TemplateError, match="takes subscriptionId, resourceGroup"):
            t.expand(AZURE, **bad)
    with pytest.raises(t.TemplateError, match="must not be empty"):
        t.expand(AZURE, subscriptionId="", resourceGroup="x")
    with pytest.raises(t.TemplateError, match="not valid Unicode"):
        t.expand(AZURE, subscriptionId="\ud800", resourceGroup="x")
    assert t.sample(AZURE) == "/subscriptions/x/resourceGroups/x"


_LITERAL = st.text(alphabet=st.sampled_from("ab/:.?#-$^()[]|*+\\\n é"), max_size=6)
_VALUE = st.text(alphabet=st.sampled_from("ab/:.?#-$\n é%"), max_size=8)
# values made of the template's own pieces: where a literal recurs inside a parameter
_PIECES = st.lists(st.sampled_from(["a", ":", "ab", "b:", "/", ":x", "-", "."]), max_size=8).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LITERAL, min_size=1, max_size=4), st.lists(_VALUE, min_size=1, max_size=4), st.data())
def test_every_reading_of_the_pattern_agrees_with_matches(literals: list[str], values: list[str], data: st.DataObject) -> None:
    """One verdict (catalog-format.md §4.1): the JSON Schema pattern read by
    Python's ``re`` (the ``jsonschema`` package) and by jsonschema-rs
    (ECMA-like) says what ``matches`` says, trailing newlines included."""
    template = "".join(f"{literal}{{p{i}}}" for i, literal in enumerate(literals[:-1])) + literals[-1]
    schema = {"type": "string", "pattern": t.pattern(template)}
    rs = jsonschema_rs.Draft202012Validator(schema)
    names = t.parameters(template)
    expanded = t.expand(template, **{name: (values[i % len(values)] or "x") for i, name in enumerate(names)})
    assert t.matches(template, expanded)  # what expand builds, every judge accepts
    candidates = [*values, expanded, data.draw(_PIECES), "".join(data.draw(st.permutations([*literals, *values])))]
    candidates.append(data.draw(st.sampled_from(candidates)) + "\n")
    # catalog-format.md §9 said plainly: each {name} is one or more characters other than / ? #
    plain = re.compile("[^/?#]+".join(re.escape(literal) for literal in literals), re.DOTALL)
    for value in candidates:
        verdict = t.matches(template, value)
        assert verdict == (plain.fullmatch(value) is not None), (template, value)
        assert (re.search(schema["pattern"], value) is not None) == verdict, (template, value)
        assert jsonschema.Draft202012Validator(schema).is_valid(value) == verdict, (template, value)
        assert rs.is_valid(value) == verdict, (template, value)
        assert (t.match(template, value) is not None) == verdict


def test_no_template_makes_a_judge_slow_on_64_kb() -> None:
    """Contract §4.1: no pattern makes a judge take more than 100 ms for a
    64 kB event. Written plainly, ``urn:x:{a}:{b}:{c}:y`` backtracks for
    minutes on a run of colons in Python's ``re`` (the ``jsonschema``
    package); a generous bound here, for every reader of the pattern."""
    import time

    cases = [
        ("urn:example:{a}:{b}:{c}:x", "urn:example:" + ":" * 65000 + "y"),
        ("{a}-{b}-{c}-{d}.x", "-" * 65000),
        ("https://x/{a}.{b}.{c}.{d}.{e}", "https://x/" + "." * 65000 + "/"),
        ("urn:{a}ab{b}ab{c}abx", "urn:" + "ab" * 32000 + "y"),
        ("/s/{a}/r/{b}/c", "/s/" + "a" * 65000),
    ]
    for template, value in cases:
        schema = {"type": "string", "pattern": t.pattern(template)}
        rs = jsonschema_rs.Draft202012Validator(schema)
        python = jsonschema.Draft202012Validator(schema)
        started = time.perf_counter()
        verdicts = {t.matches(template, value), python.is_valid(value), rs.is_valid(value)}
        assert verdicts == {False}, template
        assert time.perf_counter() - started < 2.0, template


def test_the_linear_pattern_is_the_plain_one_on_every_small_case() -> None:
    """Exhaustively, on small templates and values: the pattern written for
    linear time (a lookahead per expression) accepts what the plain one
    (``[^/?#]+`` per expression) accepts."""
    import itertools

    pieces = ["", ":", "a", ":a", "a:", "/", "/:"]
    values = ["".join(p) for n in range(6) for p in itertools.product("a:/", repeat=n)]
    compared = 0
    for count in (1, 2, 3):
        for literals in itertools.product(pieces, repeat=count + 1):
            template = "".join(f"{literal}{{p{i}}}" for i, literal in enumerate(literals[:-1])) + literals[-1]
            plain = re.compile("[^/?#]+".join(re.escape(literal) for literal in literals), re.DOTALL)
            linear = re.compile(t.pattern(template))
            for value in values:
                assert (linear.search(value) is not None) == (plain.fullmatch(value) is not None), (template, value)
                compared += 1
    assert compared > 500_000
