"""Issue 16: one regex dialect (JSON Schema's ECMA-262) for every judge, and
no accepted pattern can make a judge backtrack for long (generator/patterns.py)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.pattern_cost import backtracking
from generator.patterns import portability, python_pattern

from .conftest import ROOT, catalog_text, run_evcat

PATTERNS = [
    r"^\d+$", r"\d", r"^\w+$", r"^\s*$", r"^a.b$", r"^abc$", r"abc$", r"^[^\d]+$", r"^[\w-]+$", r"^\S+$",
    r"^[a-z]{2,5}$", r"^(?:ab|cd)+$", r"^\u00e9$", r"^\u{1F600}$", r"^\uD83D\uDE00$", r"^\x41\t$", r"^(?<y>[0-9]{4})$",
    r"^[.]$", r"^\cJ$", r"^[\s]$", r"^(?=a)\w$", r"^(a)\1$", r"\bword\b", r"^[\]\-]+$", r"^\/x$",
]
SUBJECTS = [
    "123", "١٢٣", "abc", "ábc", "a_b", "abc\n", "abc\r", "a\nb", "a\rb", "a\u2028b", "ab", "", " ", "\u00a0", "\u2003",
    "\x1c", "\u0085", "\n", "ab-c", "é", "\U0001F600", "A\t", "2024", "[", ".", "x", "aa", "ab", "word", "a word here",
    "éword", "]-]", "/x", "abcd", "cdab", "\x0b", "\ufeff",
]


@pytest.fixture(scope="module")
def ecma() -> dict[tuple[str, str], bool]:
    """What JavaScript (ECMA-262, u flag) says for every pattern and subject."""
    if shutil.which("node") is None:
        pytest.fail("node is needed to read patterns as ECMA-262 (apt-get install nodejs)")
    script = (
        "const [patterns, subjects] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = {};"
        "for (const p of patterns) for (const s of subjects) out[JSON.stringify([p, s])] = new RegExp(p, 'u').test(s);"
        "process.stdout.write(JSON.stringify(out));"
    )
    result = subprocess.run(["node", "-e", script], input=json.dumps([PATTERNS, SUBJECTS]), capture_output=True,
                            text=True, check=True, timeout=60)
    return {tuple(json.loads(key)): value for key, value in json.loads(result.stdout).items()}  # type: ignore[misc]


def _pydantic(pattern: str) -> Any:
    """A validator as a generated model runs the pattern: pydantic's own engine
    (Rust) unless the pattern needs Python's (datamodel-code-generator then
    compiles it with ``re``)."""
    from pydantic import StringConstraints, TypeAdapter

    translated = python_pattern(pattern)
    try:
        return TypeAdapter(Annotated[str, StringConstraints(pattern=translated)])
    except Exception:  # Rust's regex cannot read it: the generated code hands pydantic a compiled pattern
        return TypeAdapter(Annotated[str, StringConstraints(pattern=re.compile(translated))])


def test_python_pattern_means_what_ecma_means(ecma: dict[tuple[str, str], bool]) -> None:
    from pydantic import ValidationError

    from generator.patterns import _needs_python, parse

    wrong = []
    for pattern in PATTERNS:
        translated = python_pattern(pattern)
        adapter = _pydantic(pattern)
        for subject in SUBJECTS:
            expected = ecma[(pattern, subject)]
            # Python's re runs the patterns that need it (the others run in Rust's regex)
            if _needs_python(parse(pattern)) and bool(re.search(translated, subject)) != expected:
                wrong.append(("re", pattern, translated, subject, expected))
            try:
                adapter.validate_python(subject)
                accepted = True
            except ValidationError:
                accepted = False
            if accepted != expected:
                wrong.append(("pydantic", pattern, translated, subject, expected))
    assert not wrong, wrong[:10]


def test_generated_models_use_the_ecma_dialect(tmp_path: Path) -> None:
    events = """\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      properties:
        digits: {type: string, pattern: '^\\d+$', description: Digits.}
        line: {type: string, pattern: '^a.b$', description: One line.}
        looked: {type: string, pattern: '^x\\w*\\b', description: Word.}
"""
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "c.yaml").write_text(catalog_text(events=events, header="rules:\n  PAY-PATTERN-PORTABLE: off\n"), encoding="utf-8")
    out = tmp_path / "out"
    result = run_evcat("generate", str(catalog), "-o", str(out), "--no-cache", "--only", "python")
    assert result.returncode == 0, result.stdout + result.stderr
    code = """
import sys
from pydantic import ValidationError
from test_catalog import models
Data = [getattr(models, name) for name in dir(models) if name.endswith("Data")][0]
def ok(**values):
    try:
        Data(**values)
        return True
    except ValidationError:
        return False
assert ok(digits="123") and not ok(digits="\\u0661\\u0662") and not ok(digits="123\\n"), "digits"
assert ok(line="a-b") and not ok(line="a\\rb") and not ok(line="a\\u2028b") and not ok(line="a-b\\n"), "line"
assert ok(looked="xyz") and ok(looked="xy\\u00e9") and ok(looked="x\\u00e9") and not ok(looked="yx"), "looked"
"""
    run = subprocess.run([sys.executable, "-c", code], cwd=out / "python", capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    # Issue 30: no model of a catalog that lint accepts runs Python's re (a
    # word boundary is Rust's (?-u:\b); what needs re is refused by lint).
    models = (out / "python" / "test_catalog" / "models.py").read_text(encoding="utf-8")
    assert '(?-u:\\\\b)"' in models and "python-re" not in models and "re.compile" not in models, models


CATASTROPHIC = [r"^(\w+\s?)*$", r"(a|a)*", r"(a+)+", r"^(a+)+$", r"^(a|aa)+$", r"^[a-z]+[a-z0-9]*$", r"^.*a.*b$",
                r"^\S+@\S+\.\S+$", r"[a-z]+$", r"\d+x", r"^(\d+)*$", r"^(.*,)*x$", r"^\d+\d+$", r"^(a*)*b$",
                # issue 30: star height, overlapping parts of a repeated group, a bounded repeat of a group with .*
                r"(\s*a\s*)*", r"(?:[ ]*y[ ]*)*", r"(.*,){12}x", r"^(\s*a\s*)*$", r"^(?:[ ]*y[ ]*)*$", r"^(.*,){12}x$",
                r"^(a|a){30}$", r"^(?:a?){25}a{25}$", r"^(?:[a-z]+,?)+$",
                # issue 30: what needs a backtracking engine (rules.md PAY-PATTERN-BACKTRACK)
                # what evcat cannot read it cannot show linear: Python's re reads the first, JavaScript the second
                r"(?i)^(a+)+$", r"^(\p{L}+)+$",
                r"^(a)\1$", r"^(?<x>a+)\k<x>$", r"^(?=.*[A-Z])(?=.*\d).{8,}$", r"^(?!x)a$", r"(?<=a)b", r"(?<!a)b"]
ACCEPTED = [
    r"^[0-9]{18}$", r"^E[0-9]{17}$", r"^[1-9][0-9]{3}[A-Z]{2}$", r"^[a-z][a-z0-9-]*$", r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    r"^([a-z]+-)*[a-z]+$", r"^\d+(\.\d+)*$", r"^[a-z]+(-[a-z]+)*$", r"[0-9]+",
    r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$", r"^a*b*$", r"^urn:[a-z0-9][a-z0-9-]{0,31}:[a-z0-9()+,\-.:=@;$_!*'%/?#]+$",
    r"^\d{1,3}(,\d{3})*$", r"^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$", r"x\d+", r"^\s*\S.*$", r"^[a-z]+$", r"abc",
    r"^(?:[a-z ]*,){0,30}$", r"^[a-z]{0,15}[a-z]*$", r"^(?:a|b)*c$", r"^[a-z]+(?: [a-z]+)*$", r"\bword\b",
    # bounded: many ways for a few characters, then none (a constant cost)
    r"^(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)$",
]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_lint_rejects_catastrophic_backtracking(pattern: str) -> None:
    assert backtracking(pattern), pattern


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_lint_accepts_linear_patterns(pattern: str) -> None:
    assert not backtracking(pattern), backtracking(pattern)


def test_portability_warnings() -> None:
    assert not portability(r"^[0-9]{4}$") and not portability(r"^(?:ab|cd)+$")
    assert portability(r"^\d+$") and portability(r"^(?=a)") and portability(r"^(a)\1$") and portability(r"a.b")
    assert portability(r"\p{L}") and portability(r"a$b") and portability(r"\bx")


def test_lint_reports_both_rules_at_the_pattern(tmp_path: Path) -> None:
    events = """\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      properties:
        slow: {type: string, pattern: '^(\\w+\\s?)*$', description: Slow.}
        odd: {type: string, pattern: '^\\d{4}$', description: Digits.}
"""
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    text = catalog_text(events=events)
    (catalog / "c.yaml").write_text(text, encoding="utf-8")
    slow = next(number for number, line in enumerate(text.splitlines(), 1) if "slow:" in line)
    result = run_evcat("lint", str(catalog), "--no-cache")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(f":{slow}:" in line and "error PAY-PATTERN-BACKTRACK" in line for line in lines), result.stdout
    assert any(f":{slow + 1}:" in line and "warning PAY-PATTERN-PORTABLE" in line for line in lines), result.stdout


def test_lint_refuses_issue_30_patterns_as_errors(tmp_path: Path) -> None:
    """Issue 30: these passed lint (a backreference as a warning only) and
    reached the models; each is now an error at its own line, so generate
    writes nothing."""
    names = {"spaced": r"(\s*a\s*)*", "wide": r"(?:[ ]*y[ ]*)*", "commas": r"(.*,){12}x", "twice": r"^(a+)\1$",
             "ahead": r"^(?=.*[0-9])[a-z0-9]+$"}
    properties = "".join(f"        {name}: {{type: string, pattern: '{pattern}', description: X.}}\n"
                         for name, pattern in names.items())
    events = f"""\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      properties:
{properties}"""
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    text = catalog_text(events=events)
    (catalog / "c.yaml").write_text(text, encoding="utf-8")
    result = run_evcat("lint", str(catalog), "--no-cache")
    assert result.returncode == 1, result.stdout
    errors = [line for line in result.stdout.splitlines() if "error PAY-PATTERN-BACKTRACK" in line]
    for name in names:
        number = next(number for number, line in enumerate(text.splitlines(), 1) if f" {name}:" in line)
        assert any(f":{number}:" in line for line in errors), (name, result.stdout)
    generated = run_evcat("generate", str(catalog), "-o", str(tmp_path / "out"), "--no-cache")
    assert generated.returncode == 1 and not (tmp_path / "out" / "python").exists(), generated.stdout


LIMIT = 0.100  # seconds of CPU for one 64 kB value (contract 4.1)
SIZE = 64 * 1024


class _TooSlow(Exception):
    pass


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Stops a run of Python's re (which checks for signals) after ``seconds``
    of wall time: an exponential pattern must fail the test, not hang it."""
    def stop(*_: object) -> None:
        raise _TooSlow

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _adversarial(pattern: str, size: int = SIZE, letters: int = 6) -> list[str]:
    """Values built to make a backtracking engine work hardest, from the
    pattern's own alphabet (one character of each class of characters its
    parts tell apart): long runs of each, ended by each other one and by
    characters that fail; runs of pairs and triples of them, ended by a
    character that fails."""
    from generator.pattern_cost import alphabet

    characters = alphabet(pattern)[:letters] or ["a"]
    values = []
    for character in characters:
        for tail in ("\x00", "\n", "!", "", *characters):
            values.append(character * size + tail)
    for first in characters:
        for second in characters:
            if first != second:
                values.append((first + second) * (size // 2) + "\x00")
                values.append((first + second + second) * (size // 3) + "\x00")
                values.append(first * (size // 2) + second + first * (size // 2 - 2) + "\x00")
    return values


def _re_time(pattern: str, value: str, hard_limit: float = 2.0) -> float:
    """CPU seconds Python's re takes to search ``value`` (as the jsonschema
    judge does), at most about ``hard_limit``."""
    compiled = re.compile(pattern)
    started = time.process_time()
    try:
        with _deadline(hard_limit):
            compiled.search(value)
    except _TooSlow:
        return float("inf")
    return time.process_time() - started


def test_no_accepted_pattern_makes_a_judge_slow() -> None:
    import jsonschema
    import jsonschema_rs

    slow = []
    for pattern in ACCEPTED:
        schema = {"type": "string", "pattern": pattern}
        judges = {
            "jsonschema": jsonschema.Draft202012Validator(schema).is_valid,
            "jsonschema-rs": jsonschema_rs.Draft202012Validator(schema).is_valid,
            "pydantic": _pydantic_is_valid(pattern),
        }
        for value in _adversarial(pattern):
            for name, judge in judges.items():
                started = time.process_time()
                judge(value)
                spent = time.process_time() - started
                if spent > LIMIT:
                    slow.append((name, pattern, value[:10], round(spent, 3)))
    assert not slow, slow[:10]


def _pydantic_is_valid(pattern: str) -> Any:
    from pydantic import ValidationError

    adapter = _pydantic(pattern)

    def judge(value: str) -> bool:
        try:
            adapter.validate_python(value)
        except ValidationError:
            return False
        return True

    return judge


def test_the_adversarial_values_do_find_catastrophic_patterns() -> None:
    """The values above are hard enough: each refused pattern of this list is
    slow on one of them, at an eighth of the size (Python's re)."""
    for pattern in [r"^[a-z]+[a-z0-9]*$", r"[a-z]+$", r"^\d+\d+$", r"^(\s*a\s*)*$", r"^(?:[ ]*y[ ]*)*$", r"^(.*,){12}x$"]:
        assert any(_re_time(pattern, value, 0.5) > 0.05 for value in _adversarial(pattern, 8000)), pattern
    assert ROOT.is_dir()


def test_issue_30_patterns_are_slow_in_re_and_refused() -> None:
    """Issue 30's patterns: each takes Python's re long on a short value of
    its own alphabet (so PAY-PATTERN-BACKTRACK must refuse it), and lint does."""
    cases = {r"^(\s*a\s*)*$": "a " * 24 + "!", r"^(?:[ ]*y[ ]*)*$": "y " * 24 + "!", r"^(.*,){12}x$": "," * 200}
    for pattern, value in cases.items():
        assert _re_time(pattern, value, 1.0) > 0.2, pattern
        assert backtracking(pattern), pattern


# Small patterns over a few characters, with every construct that makes
# backtracking slow: nested and bounded repetitions, alternatives, classes
# that overlap, . and anchors.
_ATOMS = st.sampled_from(["a", "b", ",", " ", "[ab]", "[a ]", "[^,]", ".", "\\s", "\\d", "a?", "b*"])


def _patterns() -> st.SearchStrategy[str]:
    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        quantifier = st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "{0,6}", "{2,}", "{12}"])
        return st.one_of(
            st.lists(inner, min_size=2, max_size=3).map("".join),
            st.tuples(inner, inner).map(lambda pair: f"(?:{pair[0]}|{pair[1]})"),
            st.tuples(inner, quantifier).map(lambda pair: f"(?:{pair[0]}){pair[1]}"),
        )

    body = st.recursive(_ATOMS, grow, max_leaves=6)
    return st.tuples(st.sampled_from(["", "^"]), body, st.sampled_from(["", "$", "x$", ","])).map("".join)


@settings(max_examples=250, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(_patterns())
def test_every_pattern_lint_accepts_stays_fast_in_re(pattern: str) -> None:
    """Property: Python's re (the jsonschema judge; pydantic's python-re
    engine) searches every value built from the alphabet of a pattern that
    PAY-PATTERN-BACKTRACK accepts in linear time: 8 kB values, where a
    quadratic pattern takes seconds, stay under a generous 0.1 s."""
    if backtracking(pattern):
        return
    for value in _adversarial(pattern, 8 * 1024, letters=4):
        spent = _re_time(pattern, value, 1.0)
        assert spent < 0.1, (pattern, value[:12], spent)


def test_the_patterns_evcat_writes_itself_pass_the_same_check() -> None:
    """The grammars evcat writes into every event.schema.json (URI, RFC 3339
    times, media types, int32 strings, ...) meet PAY-PATTERN-BACKTRACK too:
    the jsonschema judge runs them in Python's re on every event. They end in
    an end-of-input lookahead, which is '$' here."""
    from generator import vocabulary
    from generator.patterns import END_OF_INPUT

    patterns = {name: value for name, value in vars(vocabulary).items() if name.endswith("PATTERN") and isinstance(value, str)}
    assert len(patterns) >= 6
    for name, pattern in patterns.items():
        assert not backtracking(pattern.replace(END_OF_INPUT, "$")), (name, backtracking(pattern.replace(END_OF_INPUT, "$")))
