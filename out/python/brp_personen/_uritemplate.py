"""URI templates of level 1 (RFC 6570 §1.2): the one home of their grammar.

Part of evcat's runtime (``generator/runtime/``): copied verbatim into every
generated package, which checks and builds templated ``source`` values with
it; evcat's lint, ``evcat validate``, ``evcat serve``, the JSON Schema output
and the channel addresses (catalog-format.md §9) import it from here.

A level-1 template is literal text with simple expressions ``{name}``
(RFC 6570 §2.2-§2.3, §3.2.2: no operator, one variable, no modifier). As
catalog-format.md §9 fixes for matching, ``{name}`` stands for one or more
characters other than ``/``, ``?`` and ``#``. Each name may appear once, so
that a value has one reading of its parameters and every judge (a regular
expression, a JSON Schema ``pattern``) agrees on it.

Why not a library: ``uritemplate`` (PyPI, 4.2) and ``uri-template`` (1.3)
expand templates and list their variables, but neither matches a value
against a template, which is what the judges need most; and the generated
packages need only pydantic at run time (catalog-format.md §4). Level 1 is
a small grammar, kept here whole.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import quote

__all__ = [
    "TemplateError",
    "expand",
    "is_template",
    "match",
    "matches",
    "parameters",
    "pattern",
    "sample",
]

# RFC 6570 §2.3: varname = varchar *( ["."] varchar );
# varchar = ALPHA / DIGIT / "_" / pct-encoded
_VARNAME = re.compile(
    r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*"
)
# What one expression matches (catalog-format.md §9), as a character class
# that ECMA-262 and Python's ``re`` read alike.
_CHAR = "[^/?#]"
_VALUE = _CHAR + "+"
# RFC 6570 §2.2: the operators of levels 2 and 3 and those reserved for later.
_OPERATORS = "+#./;?&=,!@|"
# ECMA-262 SyntaxCharacter plus "/": the only characters escaped in a pattern,
# so that the pattern is valid in ECMA-262's "u" mode and in Python's ``re``.
_SYNTAX = frozenset("^$\\.*+?()[]{}|/")
# "Nothing follows": the end of the input in ECMA-262 and in Python alike
# (Python's "$" also matches before a final newline).
_END = "(?![\\s\\S])"


class TemplateError(ValueError):
    """A malformed level-1 template; the message says what to write instead."""


@lru_cache(maxsize=256)
def _parse(template: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(literals, names): ``len(literals) == len(names) + 1``."""
    literals: list[str] = []
    names: list[str] = []
    rest = template
    while True:
        opening = rest.find("{")
        closing = rest.find("}")
        if closing != -1 and (opening == -1 or closing < opening):
            raise TemplateError(
                f"'}}' at {len(template) - len(rest) + closing + 1} closes no "
                "'{': write a parameter as {name}"
            )
        if opening == -1:
            literals.append(rest)
            break
        literals.append(rest[:opening])
        end = rest.find("}", opening + 1)
        if end == -1:
            raise TemplateError(
                f"'{{' at {len(template) - len(rest) + opening + 1} is not "
                "closed: write a parameter as {name}"
            )
        name = rest[opening + 1 : end]
        if "{" in name:
            raise TemplateError(f"'{{{name}}}': braces do not nest")
        if not name:
            raise TemplateError("'{}' names no parameter: write {name}")
        if name[0] in _OPERATORS or any(c in name for c in ",:*"):
            raise TemplateError(
                f"'{{{name}}}' is beyond level 1 of RFC 6570 (operators, lists, "
                "modifiers): write one plain {name}"
            )
        if not _VARNAME.fullmatch(name):
            raise TemplateError(
                f"'{{{name}}}' is not a parameter name: use letters, digits, "
                "'_' and single '.' between them"
            )
        if name in names:
            raise TemplateError(f"'{{{name}}}' appears twice: name each parameter once")
        names.append(name)
        rest = rest[end + 1 :]
    return tuple(literals), tuple(names)


def is_template(text: str) -> bool:
    """Whether ``text`` holds an expression (a brace): it is then read as a
    template, and a malformed one is an error rather than a literal."""
    return "{" in text or "}" in text


def parameters(template: str) -> tuple[str, ...]:
    """The parameter names of ``template``, in order (``TemplateError`` when
    it is malformed)."""
    return _parse(template)[1]


def _escaped(literal: str) -> str:
    return "".join("\\" + c if c in _SYNTAX else c for c in literal)


def _regex(template: str, named: bool) -> str:
    """The regular expression of ``template``'s values, written so that a
    backtracking engine (Python's ``re``, which the ``jsonschema`` package
    uses; jsonschema-rs for a pattern with a lookahead) takes linear time:
    ``{a}:{b}:x`` written plainly (``[^/?#]+:[^/?#]+:x``) takes minutes on
    64 kB of colons.

    Each expression but the last matches one character, then every
    character up to the first place the literal after it starts (a negative
    lookahead), then that literal: one way to go on at each character. It
    is the language of ``[^/?#]+`` + literal all the same: where some later
    occurrence of the literal lets the rest match, the first one does too,
    since the characters between the two (no ``/``, ``?``, ``#`` in them, or
    the literal would hold one and could not be met twice in reach of one
    expression) go to the next expression. The last expression takes what
    it can, then gives back to the last literal, which must end the value.
    """
    literals, _ = _parse(template)
    parts = [_escaped(literals[0])]
    last = len(literals) - 2
    for i, literal in enumerate(literals[1:]):
        escaped = _escaped(literal)
        if i == last:
            body = _VALUE
        elif literal:
            body = f"{_CHAR}(?:(?!{escaped}){_CHAR})*"
        else:  # {a}{b}: the first takes one character, the next the rest
            body = _CHAR
        parts.append(f"(?P<p{i}>{body})" if named else f"(?:{body})")
        parts.append(escaped)
    return "".join(parts)


def pattern(template: str) -> str:
    """An anchored regular expression matching the values of ``template``,
    valid as a JSON Schema ``pattern`` (ECMA-262) and for Python's ``re``
    with the same meaning (``^`` ... and nothing after), in linear time."""
    return "^" + _regex(template, named=False) + _END


@lru_cache(maxsize=256)
def _compiled(template: str) -> re.Pattern[str]:
    return re.compile(_regex(template, named=True), re.DOTALL)


def match(template: str, value: str) -> dict[str, str] | None:
    """The parameters of ``value`` read by ``template`` (as written, not
    decoded), or None when it does not match."""
    found = _compiled(template).fullmatch(value)
    if found is None:
        return None
    names = _parse(template)[1]
    return {name: found.group(f"p{i}") for i, name in enumerate(names)}


def matches(template: str, value: str) -> bool:
    """Whether ``value`` is ``template`` with each ``{name}`` replaced by one
    or more characters other than ``/``, ``?`` and ``#``. A template without
    expressions matches itself only."""
    return _compiled(template).fullmatch(value) is not None


def expand(template: str, /, **values: object) -> str:
    """``template`` with each ``{name}`` replaced by ``str(values[name])``,
    percent-encoded as RFC 6570 §3.2.2 does (every character outside the
    unreserved set ``A-Z a-z 0-9 - . _ ~``, UTF-8). A missing or extra
    parameter, or an empty value, is a ``TemplateError`` (an empty value
    would make a value the template does not match)."""
    literals, names = _parse(template)
    missing = [name for name in names if name not in values]
    extra = sorted(set(values) - set(names))
    if missing or extra:
        said = [f"missing {', '.join(missing)}"] if missing else []
        said += [f"unknown {', '.join(extra)}"] if extra else []
        raise TemplateError(
            f"{template!r} takes {', '.join(names) or 'no parameters'} "
            f"({'; '.join(said)})"
        )
    parts = [literals[0]]
    for name, literal in zip(names, literals[1:], strict=True):
        text = str(values[name])
        if not text:
            raise TemplateError(f"{{{name}}} must not be empty")
        try:
            parts.append(quote(text, safe="", encoding="utf-8", errors="strict"))
        except UnicodeEncodeError:
            raise TemplateError(f"{{{name}}}: not valid Unicode text") from None
        parts.append(literal)
    return "".join(parts)


def sample(template: str) -> str:
    """``template`` with every parameter replaced by a sample value: the form
    lint checks as a URI."""
    names = parameters(template)
    return expand(template, **{name: "x" for name in names})
