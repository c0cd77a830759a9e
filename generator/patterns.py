"""The one home of regular-expression knowledge: JSON Schema's ``pattern``.

JSON Schema 2020-12 (core §6.4, validation §6.3.3) says a ``pattern`` is an
ECMA-262 regular expression (with the ``u`` flag: code points, not UTF-16
units) and that it is not anchored. The judges of an event read it in their
own dialects: Python's ``re`` (the ``jsonschema`` package; pydantic's
``python-re`` engine), Rust's ``regex`` crate (pydantic's default engine),
jsonschema-rs (ECMA-like), JavaScript. They differ: ``\\d``, ``\\w``, ``\\s``
and ``\\b`` are ASCII in ECMA and Unicode in Python and Rust; ``$`` in
Python also matches before a final newline; ``.`` in ECMA stops at every
line terminator (``\\n \\r \\u2028 \\u2029``), in Python and Rust only at ``\\n``.

This module:

* parses an ECMA-262 pattern (``parse``) into a small tree;
* ``python_pattern`` writes it for pydantic (Rust ``regex`` when the pattern
  needs nothing else, Python ``re`` when it has a lookaround or a
  backreference: datamodel-code-generator then compiles it with ``re``; lint
  refuses both, PAY-PATTERN-BACKTRACK), with ECMA's meaning;
* ``portability`` names what lies outside I-Regexp (RFC 9485), the subset
  every engine reads alike (plus ``^``/``$`` at the ends and ``(?:...)``);
* the tree is read by ``pattern_cost``, which tells whether a backtracking
  engine (Python's ``re``, which the ``jsonschema`` judge uses) can be slow
  on the pattern (PAY-PATTERN-BACKTRACK).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

INFINITE = 1 << 30
# A bounded repetition this long is as costly as an unbounded one.
LONG_REPEAT = 64

# ECMA-262 WhiteSpace and LineTerminator (§12.2, §12.3): what \s matches.
_ECMA_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_ECMA_DIGIT = "0-9"
_ECMA_WORD = "0-9A-Za-z_"
_ECMA_DOT = "[^\\n\\r\\u2028\\u2029]"


class PatternError(ValueError):
    """A pattern this module cannot read (then it is left as it is)."""


# --- the tree ------------------------------------------------------------------------------------


@dataclass(eq=False)
class Node:
    pass


@dataclass(eq=False)
class CharSet(Node):
    """One character from a set: ``text`` is the set written for Python and
    Rust alike (a class ``[...]`` or one escaped character)."""

    text: str
    ecma: str  # as written in the pattern


@dataclass(eq=False)
class Assertion(Node):
    kind: str  # "^", "$", "\\b", "\\B"


@dataclass(eq=False)
class Backreference(Node):
    name: str  # a number or a group name


@dataclass(eq=False)
class Group(Node):
    body: Node
    kind: str = "capture"  # capture, plain, named, lookahead, negative-lookahead, lookbehind, negative-lookbehind
    name: str = ""


@dataclass(eq=False)
class Repeat(Node):
    body: Node
    low: int
    high: int
    lazy: bool = False
    ecma: str = ""


@dataclass(eq=False)
class Sequence(Node):
    items: list[Node] = field(default_factory=list)


@dataclass(eq=False)
class Alternation(Node):
    options: list[Node] = field(default_factory=list)


# --- parsing ECMA-262 (u flag) ----------------------------------------------------------------------

_SYNTAX = set("^$\\.*+?()[]{}|/")
_CLASS_ESCAPES = {"d": _ECMA_DIGIT, "w": _ECMA_WORD, "s": _ECMA_SPACE}
_CONTROL_ESCAPES = {"t": "\\t", "n": "\\n", "v": "\\x0b", "f": "\\x0c", "r": "\\r", "0": "\\x00"}


def _code_point(value: int) -> str:
    if 0xD800 <= value <= 0xDFFF:
        raise PatternError("a lone surrogate is not a character")
    if value < 0x80:
        character = chr(value)
        if character.isalnum() or character == "_":
            return character
        return f"\\x{value:02x}"
    if value <= 0xFFFF:
        return f"\\u{value:04x}"
    return f"\\U{value:08x}"


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 0
        self.groups = 0

    def peek(self, offset: int = 0) -> str:
        index = self.at + offset
        return self.text[index] if index < len(self.text) else ""

    def take(self) -> str:
        character = self.peek()
        if not character:
            raise PatternError("the pattern ends too early")
        self.at += 1
        return character

    def parse(self) -> Node:
        node = self.alternation()
        if self.at != len(self.text):
            raise PatternError(f"unexpected '{self.peek()}' at {self.at}")
        return node

    def alternation(self) -> Node:
        options = [self.sequence()]
        while self.peek() == "|":
            self.at += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else Alternation(options)

    def sequence(self) -> Node:
        items: list[Node] = []
        while self.peek() and self.peek() not in "|)":
            start = self.at
            atom = self.atom()
            items.append(self.quantified(atom, start))
        return Sequence(items)

    def quantified(self, atom: Node, start: int) -> Node:
        character = self.peek()
        low, high = -1, -1
        if character == "*":
            low, high = 0, INFINITE
            self.at += 1
        elif character == "+":
            low, high = 1, INFINITE
            self.at += 1
        elif character == "?":
            low, high = 0, 1
            self.at += 1
        elif character == "{":
            found = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.text, self.at)
            if found is None:
                raise PatternError("a lone '{' (write \\{)")
            low = int(found.group(1))
            high = low if found.group(2) is None else (int(found.group(3)) if found.group(3) else INFINITE)
            if high < low:
                raise PatternError("a repetition {n,m} with m < n")
            self.at = found.end()
        else:
            return atom
        if isinstance(atom, (Assertion, Repeat)) or (isinstance(atom, Group) and "look" in atom.kind):
            raise PatternError("nothing to repeat")
        lazy = self.peek() == "?"
        if lazy:
            self.at += 1
        return Repeat(atom, low, high, lazy, self.text[start:self.at])

    def atom(self) -> Node:
        character = self.take()
        if character in "^$":
            return Assertion(character)
        if character == ".":
            return CharSet(_ECMA_DOT, ".")
        if character == "(":
            return self.group()
        if character == "[":
            return self.character_class()
        if character == "\\":
            return self.escape()
        if character in "*+?{}":
            if character == "}":
                return CharSet("\\}", "}")
            raise PatternError(f"nothing to repeat with '{character}'")
        if character in "])":
            raise PatternError(f"a lone '{character}' (write \\{character})")
        return CharSet(re.escape(character) if character in _SYNTAX or character in "-#&~ " else character, character)

    def group(self) -> Node:
        kind, name = "capture", ""
        if self.peek() == "?":
            marker = self.text[self.at:self.at + 3]
            if marker.startswith("?:"):
                kind, self.at = "plain", self.at + 2
            elif marker.startswith("?="):
                kind, self.at = "lookahead", self.at + 2
            elif marker.startswith("?!"):
                kind, self.at = "negative-lookahead", self.at + 2
            elif marker == "?<=":
                kind, self.at = "lookbehind", self.at + 3
            elif marker == "?<!":
                kind, self.at = "negative-lookbehind", self.at + 3
            elif marker.startswith("?<"):
                found = re.compile(r"\?<([A-Za-z_$][A-Za-z0-9_$]*)>").match(self.text, self.at)
                if found is None:
                    raise PatternError("a group name is not an identifier")
                kind, name, self.at = "named", found.group(1), found.end()
            else:
                raise PatternError("an unknown group (?...)")
        if kind in ("capture", "named"):
            self.groups += 1
        body = self.alternation()
        if self.take() != ")":
            raise PatternError("a group is not closed")
        return Group(body, kind, name)

    def escape(self) -> Node:
        character = self.take()
        if character in _CLASS_ESCAPES:
            return CharSet(f"[{_CLASS_ESCAPES[character]}]", "\\" + character)
        if character.lower() in _CLASS_ESCAPES:
            return CharSet(f"[^{_CLASS_ESCAPES[character.lower()]}]", "\\" + character)
        if character in "bB":
            return Assertion("\\" + character)
        if character.isdigit() and character != "0":
            number = character
            while self.peek().isdigit():
                number += self.take()
            return Backreference(number)
        if character == "k":
            found = re.compile(r"<([A-Za-z_$][A-Za-z0-9_$]*)>").match(self.text, self.at)
            if found is None:
                raise PatternError("\\k needs <name>")
            self.at = found.end()
            return Backreference(found.group(1))
        return CharSet(self.character_escape(character), "\\" + character)

    def character_escape(self, character: str) -> str:
        """One escaped character (outside or inside a class), written for Python and Rust."""
        if character in _CONTROL_ESCAPES:
            if character == "0" and self.peek().isdigit():
                raise PatternError("an octal escape")
            return _CONTROL_ESCAPES[character]
        if character == "c":
            letter = self.take()
            if not letter.isascii() or not letter.isalpha():
                raise PatternError("\\c needs a letter")
            return _code_point(ord(letter) % 32)
        if character == "x":
            digits = self.text[self.at:self.at + 2]
            if not re.fullmatch(r"[0-9A-Fa-f]{2}", digits):
                raise PatternError("\\x needs two hex digits")
            self.at += 2
            return _code_point(int(digits, 16))
        if character == "u":
            if self.peek() == "{":
                found = re.compile(r"\{([0-9A-Fa-f]{1,6})\}").match(self.text, self.at)
                if found is None or int(found.group(1), 16) > 0x10FFFF:
                    raise PatternError("\\u{...} needs a code point")
                self.at = found.end()
                return _code_point(int(found.group(1), 16))
            digits = self.text[self.at:self.at + 4]
            if not re.fullmatch(r"[0-9A-Fa-f]{4}", digits):
                raise PatternError("\\u needs four hex digits")
            self.at += 4
            value = int(digits, 16)
            if 0xD800 <= value <= 0xDBFF and re.fullmatch(r"\\u[dD][c-fC-F][0-9A-Fa-f]{2}", self.text[self.at:self.at + 6]):
                low = int(self.text[self.at + 2:self.at + 6], 16)
                self.at += 6
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            return _code_point(value)
        if character in "pP":
            raise PatternError("Unicode property escapes (\\p{...}) are not read by Python's re")
        if character in _SYNTAX or character == "-":
            return re.escape(character)
        raise PatternError(f"'\\{character}' is not an escape of ECMA-262 with the u flag")

    def character_class(self) -> Node:
        start = self.at - 1
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        parts: list[str] = []
        first = True
        while True:
            character = self.take()
            if character == "]" and not first:
                break
            if character == "]" and first:
                # [] matches nothing and [^] anything in ECMA; both rare: not read
                raise PatternError("an empty class [] or [^]")
            first = False
            if character == "\\":
                escaped = self.take()
                if escaped in _CLASS_ESCAPES:
                    parts.append(_CLASS_ESCAPES[escaped])
                    continue
                if escaped.lower() in _CLASS_ESCAPES:
                    raise PatternError("a negated class escape (\\D, \\W, \\S) inside a class")
                if escaped == "b":
                    parts.append("\\x08")
                    continue
                if escaped == "-":
                    parts.append("\\-")
                    continue
                parts.append(self.character_escape(escaped))
            elif character in "[]^&~|":
                parts.append("\\" + character)
            elif character == "-" and parts and self.peek() != "]":
                parts.append("-")
            elif character == "-":
                parts.append("\\-")
            else:
                parts.append(character)
        return CharSet(f"[{'^' if negated else ''}{''.join(parts)}]", self.text[start:self.at])


@cache
def parse(pattern: str) -> Node:
    """The tree of an ECMA-262 pattern; PatternError when it cannot be read."""
    return _Parser(pattern).parse()


# --- writing it for Python and Rust --------------------------------------------------------------


def _needs_python(node: Node) -> bool:
    """Whether only Python's ``re`` reads ``node``: a backreference or a
    lookaround (PAY-PATTERN-BACKTRACK refuses both, so a catalog that lint
    accepts never gets here). ECMA's ASCII word boundaries are Rust's
    ``(?-u:\\b)``."""
    if isinstance(node, Backreference):
        return True
    if isinstance(node, Assertion):
        return False
    if isinstance(node, Group):
        return "look" in node.kind or _needs_python(node.body)
    if isinstance(node, Repeat):
        return _needs_python(node.body)
    if isinstance(node, Sequence):
        return any(_needs_python(item) for item in node.items)
    if isinstance(node, Alternation):
        return any(_needs_python(option) for option in node.options)
    return False


_SCHEMA_CLASSES = {
    "\\d": f"[{_ECMA_DIGIT}]", "\\D": f"[^{_ECMA_DIGIT}]", "\\w": f"[{_ECMA_WORD}]", "\\W": f"[^{_ECMA_WORD}]",
    "\\s": f"[{_ECMA_SPACE}]", "\\S": f"[^{_ECMA_SPACE}]", ".": _ECMA_DOT,
}


def _write(node: Node, python: bool, schema: bool = False) -> str:
    if isinstance(node, CharSet):
        if schema:  # ECMA-262 syntax (u flag) as written, with the classes Python reads otherwise spelled out
            return _SCHEMA_CLASSES.get(node.ecma, node.ecma)
        return node.text
    if isinstance(node, Assertion):
        if node.kind == "$":  # Python's $ also matches before a final newline
            return END_OF_INPUT if schema else "\\Z" if python else "$"
        if node.kind == "^":
            return "^"
        if schema:
            return node.kind
        return f"(?a:{node.kind})" if python else f"(?-u:{node.kind})"  # ASCII word boundaries, as in ECMA
    if isinstance(node, Backreference):
        return f"(?P={node.name})" if not node.name.isdigit() else f"(?:\\{node.name})"
    if isinstance(node, Group):
        opening = {"capture": "(", "plain": "(?:", "named": f"(?P<{node.name}>", "lookahead": "(?=",
                   "negative-lookahead": "(?!", "lookbehind": "(?<=", "negative-lookbehind": "(?<!"}[node.kind]
        return opening + _write(node.body, python, schema) + ")"
    if isinstance(node, Repeat):
        body = _write(node.body, python, schema)
        if isinstance(node.body, Sequence) and len(node.body.items) != 1:
            body = f"(?:{body})"
        if node.low == 0 and node.high == INFINITE:
            quantifier = "*"
        elif node.low == 1 and node.high == INFINITE:
            quantifier = "+"
        elif node.low == 0 and node.high == 1:
            quantifier = "?"
        elif node.high == INFINITE:
            quantifier = f"{{{node.low},}}"
        elif node.low == node.high:
            quantifier = f"{{{node.low}}}"
        else:
            quantifier = f"{{{node.low},{node.high}}}"
        return body + quantifier + ("?" if node.lazy else "")
    if isinstance(node, Sequence):
        return "".join(_write(item, python, schema) for item in node.items)
    if isinstance(node, Alternation):
        return "|".join(_write(option, python, schema) for option in node.options)
    raise AssertionError(node)


@cache
def python_pattern(ecma_pattern: str) -> str:
    """``ecma_pattern`` (JSON Schema, ECMA-262 with the u flag) written so that
    pydantic means the same by it: for Rust's ``regex`` (pydantic's default
    engine) when the pattern needs nothing more, else for Python's ``re``
    (datamodel-code-generator compiles a pattern with a lookaround or a
    backreference with ``re``). ``\\d``, ``\\w``, ``\\s`` become ECMA's
    classes, ``.`` stops at ECMA's line terminators, ``$`` is the end of the
    text. A pattern this module cannot read is returned as it is (lint
    reports it: PAY-PATTERN-PORTABLE)."""
    try:
        tree = parse(ecma_pattern)
    except (PatternError, RecursionError):
        return ecma_pattern
    return _write(tree, _needs_python(tree))


# A lookahead that holds only at the end of the input in ECMA-262, Python's re and fancy-regex alike.
END_OF_INPUT = r"(?![\s\S])"


@cache
def schema_pattern(ecma_pattern: str) -> str:
    """``ecma_pattern`` as evcat writes it into the JSON Schemas it generates:
    the same language for ECMA-262 validators, and the same for the Python
    ``jsonschema`` package, whose ``re`` would read ``\\d``, ``\\w`` and ``\\s``
    as Unicode classes and ``$`` as "end, or before a final newline":
    classes written out, each ``$`` an end-of-input lookahead. A pattern
    this module cannot read is returned as it is."""
    try:
        tree = parse(ecma_pattern)
    except (PatternError, RecursionError):
        return ecma_pattern
    return _write(tree, python=False, schema=True)


# --- portability (I-Regexp, RFC 9485) ----------------------------------------------------------------


def portability(ecma_pattern: str) -> list[str]:
    return list(_portability(ecma_pattern))


@cache
def _portability(ecma_pattern: str) -> tuple[str, ...]:
    """What in ``ecma_pattern`` lies outside I-Regexp (RFC 9485) with ``^``
    at the start, ``$`` at the end and ``(?:...)``: the constructs that judges
    read differently or not at all. Empty: portable."""
    try:
        tree = parse(ecma_pattern)
    except PatternError as error:
        return (f"it cannot be read as ECMA-262 by every judge ({error})",)
    except RecursionError:
        return ("it is nested too deeply",)
    found: list[str] = []
    _portable(tree, found, top=True)
    return tuple(sorted(set(found)))


def _portable(node: Node, found: list[str], top: bool = False) -> None:
    if isinstance(node, CharSet):
        if re.search(r"\\[dDwWsS]", node.ecma):
            found.append(f"'{node.ecma[:20]}': \\d, \\w and \\s mean ASCII in ECMA-262 but Unicode in Python and Rust; write [0-9], [A-Za-z0-9_] or the characters meant")
        elif node.ecma == ".":
            found.append("'.': it stops at \\r, \\u2028 and \\u2029 in ECMA-262 only; write [^\\n\\r] or the characters meant")
    elif isinstance(node, Assertion):
        if node.kind in ("\\b", "\\B"):
            found.append(f"'{node.kind}': word boundaries are not in I-Regexp and differ between engines")
    elif isinstance(node, Backreference):
        found.append("a backreference: not in I-Regexp, not read by Rust's regex, and exponential in backtracking engines")
    elif isinstance(node, Group):
        if "look" in node.kind:
            found.append(f"a {node.kind}: not in I-Regexp and not read by Rust's regex (pydantic then uses Python's re)")
        if node.kind == "named":
            found.append("a named group: not in I-Regexp")
        _portable(node.body, found)
    elif isinstance(node, Repeat):
        if node.lazy:
            found.append(f"'{node.ecma}': lazy quantifiers are not in I-Regexp")
        _portable(node.body, found)
    elif isinstance(node, Sequence):
        for index, item in enumerate(node.items):
            if isinstance(item, Assertion) and item.kind in "^$":
                at_end = (item.kind == "^" and index == 0) or (item.kind == "$" and index == len(node.items) - 1)
                if not (top and at_end):
                    found.append(f"'{item.kind}' inside the pattern: I-Regexp has it only at the ends")
            else:
                _portable(item, found)
    elif isinstance(node, Alternation):
        for option in node.options:
            _portable(option, found, top=top)


_DATA_KEYWORDS = frozenset({"const", "enum", "examples", "default"})


def python_patterns(schema: Any) -> Any:
    """A copy of a payload schema whose ``pattern`` strings are written for
    pydantic (``python_pattern``), all for one engine: datamodel-code-generator
    switches a whole model to Python's ``re`` when one of its patterns needs it,
    so when any pattern of the schema does, all are written for ``re``."""
    found: list[str] = []
    _collect(schema, found)
    trees = []
    for pattern in found:
        try:
            trees.append(parse(pattern))
        except (PatternError, RecursionError):
            continue
    python = any(_needs_python(tree) for tree in trees)
    return _rewrite(schema, python)


def _collect(schema: Any, found: list[str]) -> None:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str):
                found.append(value)
            elif key not in _DATA_KEYWORDS:
                _collect(value, found)
    elif isinstance(schema, list):
        for item in schema:
            _collect(item, found)


def _rewrite(schema: Any, python: bool) -> Any:
    if isinstance(schema, dict):
        result = {}
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str):
                try:
                    result[key] = _write(parse(value), python)
                except (PatternError, RecursionError):
                    result[key] = value
            elif key in _DATA_KEYWORDS:
                result[key] = value
            else:
                result[key] = _rewrite(value, python)
        return result
    if isinstance(schema, list):
        return [_rewrite(item, python) for item in schema]
    return schema
