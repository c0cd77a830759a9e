"""Import blocks right by construction (issue 16, speed): ruff's import rules
run on a generated module only where evcat is not certain of its imports.

ruff stays the judge: the table of imports is in ruff's order, rendered
packages pass ``ruff check --select I,F401`` as they are, and the fast path
gives byte for byte what the slow path (``ruff check --fix`` on every module,
on datamodel-code-generator's own import block) gives.
"""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import assume, HealthCheck, given, settings
from hypothesis import strategies as st

from generator.engine.config import RunConfig
from generator.commands.generate import render, use_templates
from generator.commands.lint import check, lint
from generator.loader import load_text
from generator.render import python
from generator.render.python_imports import IMPORTS, import_line, sorted_imports, surely_in_ruffs_order

from .goldens import CATALOGS
from .test_hypothesis_catalogs import catalogs

ROOT = Path(__file__).resolve().parents[1]
COMMON = ["--isolated", "--no-cache", "--quiet", "--line-length", "88", "--target-version", "py311"]


def _ruff() -> str:
    from ruff.__main__ import find_ruff_bin

    return str(find_ruff_bin())


def _findings(directory: Path, rules: str = "I,F401") -> str:
    result = subprocess.run([_ruff(), "check", *COMMON, "--select", rules, "--output-format", "concise", str(directory)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def _ruff_fixed(sources: list[str]) -> list[str]:
    """Each source as ``ruff check --select I,F401 --fix`` then ``ruff format``
    leave it (the slow path), in one pair of processes."""
    with tempfile.TemporaryDirectory() as directory:
        paths = [os.path.join(directory, f"m{index}.py") for index in range(len(sources))]
        for path, source in zip(paths, sources, strict=True):
            Path(path).write_text(source, encoding="utf-8")
        subprocess.run([_ruff(), "check", *COMMON, "--select", "I,F401", "--fix", "--exit-zero", *paths],
                       check=True, capture_output=True, timeout=120)
        subprocess.run([_ruff(), "format", *COMMON, *paths], check=True, capture_output=True, timeout=120)
        return [Path(path).read_text(encoding="utf-8") for path in paths]


def _formatted(sources: list[str]) -> list[str]:
    with tempfile.TemporaryDirectory() as directory:
        paths = [os.path.join(directory, f"m{index}.py") for index in range(len(sources))]
        for path, source in zip(paths, sources, strict=True):
            Path(path).write_text(source, encoding="utf-8")
        subprocess.run([_ruff(), "format", *COMMON, *paths], check=True, capture_output=True, timeout=120)
        return [Path(path).read_text(encoding="utf-8") for path in paths]


def test_the_table_is_in_ruffs_order(tmp_path: Path) -> None:
    """A module importing every name of the table, as ``sorted_imports`` writes
    it, is what ruff's isort rules want (the pydantic line is long: wrapped)."""
    header = "\n".join("".join(import_line(module, list(names)) for module, names in section) for section in IMPORTS)
    names = [name for section in IMPORTS for module, taken in section if module != "__future__" for name in taken]
    (tmp_path / "everything.py").write_text(header + "\n__all__ = [" + ", ".join(map(repr, names)) + "]\n")
    assert any(len(line) > 88 for line in header.splitlines() if line.startswith("from")) or "(" in header
    assert _findings(tmp_path) == ""
    # events.py's runtime names, in the order the renderer writes them.
    runtime = sorted({"CloudEvent", *python._RUNTIME_NAMES})
    (tmp_path / "runtime.py").write_text("from ._cloudevents import (\n" + "".join(f"    {name},\n" for name in runtime)
                                         + ")\n\n__all__ = [" + ", ".join(map(repr, runtime)) + "]\n")
    assert _findings(tmp_path) == ""
    (tmp_path / "runtime.py").unlink()
    # And what sorted_imports makes of it, shuffled and with every name used, too.
    shuffled = [f"from {module} import {name}\n" for section in IMPORTS for module, taken in section for name in taken]
    random.Random(16).shuffle(shuffled)
    body = "\n\nclass M(Payload):\n    x: " + " | ".join(names) + "\n"
    rebuilt = sorted_imports("".join(shuffled) + body)
    assert rebuilt is not None and rebuilt.startswith(header)
    (tmp_path / "everything.py").write_text(rebuilt)
    assert _findings(tmp_path) == ""


def _render(catalog_set: Any, formatter: str = "ruff") -> dict[str, bytes]:
    return render(catalog_set, ["python"], RunConfig(jobs=1, formatter=formatter))["python"]


def _use_slow_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The renderer as it was: datamodel-code-generator's import block as it
    writes it, and ``ruff check --select I,F401 --fix`` on every module."""
    format_sources = python.format_sources
    monkeypatch.setattr(python, "sorted_imports", lambda source: None)
    monkeypatch.setattr(python, "format_sources",
                        lambda sources, formatter="ruff", check=None: format_sources(sources, formatter, None))


def _synthetic(tmp_path: Path) -> Path:
    subprocess.run(["python3", str(ROOT / "bench" / "synth.py"), str(tmp_path / "synth"), "--events", "60"],
                   check=True, capture_output=True, timeout=120)
    return tmp_path / "synth"


def _catalog_sets(tmp_path: Path) -> dict[str, Any]:
    directories = {**CATALOGS, "synthetic": _synthetic(tmp_path)}
    return {name: lint(str(directory)).catalog_set for name, directory in directories.items()}


def test_rendered_packages_need_no_import_fixes_and_equal_the_slow_path(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    sets = _catalog_sets(tmp_path)
    fast = {name: _render(catalog_set) for name, catalog_set in sets.items()}
    for name, files in fast.items():
        for path, content in files.items():
            target = tmp_path / "out" / name / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
    assert _findings(tmp_path / "out") == ""
    # Every package took the normal path: one ruff process, no module through ruff's import rules.
    checked: list[set[str]] = []
    format_sources = python.format_sources

    def recording(sources: dict[str, str], formatter: str = "ruff", check: Any = None) -> dict[str, str]:
        checked.append(set(check))
        return format_sources(sources, formatter, check)

    monkeypatch.setattr(python, "format_sources", recording)
    for catalog_set in sets.values():
        _render(catalog_set)
    assert len(checked) >= 8 and not any(checked), checked
    monkeypatch.undo()
    _use_slow_path(monkeypatch)
    for name, catalog_set in sets.items():
        assert _render(catalog_set) == fast[name], name


def test_black_formatter_gets_the_same_sorted_imports() -> None:
    catalog_set = lint(str(CATALOGS["normo"])).catalog_set
    assert _render(catalog_set, "black") == _render(catalog_set)


def test_a_users_python_templates_still_get_their_imports_sorted(tmp_path: Path) -> None:
    """Templates from --templates DIR are not evcat's: their modules go
    through ruff's import rules as before (here the old events.py template,
    with its superfluous blank line after the imports)."""
    builtin = (ROOT / "templates" / "python" / "events.py.jinja").read_text(encoding="utf-8")
    old = builtin.replace("{% if imports.pydantic or imports.deprecated %}\n\n{% endif %}\n", "\n\n")
    assert old != builtin
    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "events.py.jinja").write_text(old, encoding="utf-8")
    catalog_set = lint(str(CATALOGS["nlgov"])).catalog_set
    user = render(catalog_set, ["python"], RunConfig(jobs=1, templates=use_templates(str(tmp_path))))["python"]
    assert user == _render(catalog_set)


# Modules as datamodel-code-generator writes them, varied: the names of the
# table imported in any order and grouping, each used or not, or only
# mentioned (a docstring, a string, __all__), sometimes an import or a name
# outside the table, an alias, a rebinding.
_NAMES = [(module, name) for section in IMPORTS for module, names in section if module != "__future__" for name in names]


@st.composite
def modules(draw: Any) -> str:
    imported = draw(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=len(_NAMES), unique=True))
    statements: list[tuple[str, list[str]]] = []
    for module, name in imported:
        if statements and statements[-1][0] == module and draw(st.booleans()):
            statements[-1][1].append(name)
        else:
            statements.append((module, [name]))
    extra = draw(st.sampled_from(["", "", "", "from datetime import date\n", "from pydantic import Field as F\n",
                                  "import re\n"]))
    lines = [f"from {module} import {', '.join(names)}\n" + draw(st.sampled_from(["", "", "\n"])) for module, names in statements]
    lines = [*lines[: len(lines) // 2], extra, *lines[len(lines) // 2:]]
    blank = draw(st.sampled_from(["", "\n"]))
    header = "# Generated by evcat with datamodel-code-generator: payload models.\n\nfrom __future__ import annotations\n" + blank
    body = []
    for _module, name in imported:
        use = draw(st.sampled_from(["annotation", "base", "call", "docstring", "string", "all", "none", "rebind"]))
        if use == "annotation":
            body.append(f"class Use{name}(Payload):\n    value: {name} | None = None\n")
        elif use == "base":
            body.append(f"class Base{name}({name}):\n    pass\n")
        elif use == "call":
            body.append(f"Alias{name} = TypeAliasType('Alias{name}', {name})\n")
        elif use == "docstring":
            body.append(f"class Doc{name}(Payload):\n    \"\"\"Mentions {name}.\"\"\"\n")
        elif use == "string":
            body.append(f"class Str{name}(Payload):\n    kind: Literal['{name}']\n")
        elif use == "all":
            body.append(f"__all__ = [{name!r}]\n")
        elif use == "rebind":
            body.append(f"{name} = 1\n")
    return header + "".join(lines) + "\n\n" + "\n\n".join(body)


COUNTS: Counter[str] = Counter()


def test_sorted_imports_gives_what_ruff_gives() -> None:
    """Where ``sorted_imports`` answers, its module formatted is the module
    ruff's import rules and formatter make of the original; it answers often
    enough for that to mean something, and refuses where it must."""
    COUNTS.clear()
    _check_modules()
    assert COUNTS["answered"] >= 40 and COUNTS["refused"] >= 20, COUNTS


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(sources=st.lists(modules(), min_size=5, max_size=5))
def _check_modules(sources: list[str]) -> None:
    answered = [(source, rebuilt) for source in sources if (rebuilt := sorted_imports(source)) is not None]
    COUNTS["answered"] += len(answered)
    COUNTS["refused"] += len(sources) - len(answered)
    if answered:
        expected = _ruff_fixed([source for source, _ in answered])
        assert _formatted([rebuilt for _, rebuilt in answered]) == expected


_WORDS = ["Event", "Zaak", "Gewijzigd", "Meter", "Nx", "X", "b"]
_CLASS_NAMES = st.lists(st.sampled_from([*_WORDS, "Any", "Adres", "V", "V1", "V2", "V10", "_0", "_1", "_10", "A", "ZAAK"]),
                        min_size=1, max_size=4).map("".join)
_PLAIN_NAMES = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map("".join).filter(lambda name: name[0].isupper())
# Envelope classes of versioned events (ZaakGewijzigdV2_10_0), in the events' order: by version as numbers.
_VERSIONED = st.lists(st.tuples(st.sampled_from(["Zaak", "ZaakGewijzigd", "Meter"]),
                                st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(0, 12))),
                      min_size=1, max_size=5, unique=True).map(
    lambda events: [f"{word}V{major}_{minor}_{patch}" for word, (major, minor, patch) in sorted(events)])


def test_surely_in_ruffs_order_is_sure() -> None:
    """Where ``surely_in_ruffs_order`` says yes, ruff agrees (the envelope
    classes __init__.py imports in the events' order); it says yes to plain
    names in order."""
    COUNTS.clear()
    _check_orders()
    assert COUNTS["sure"] >= 20 and COUNTS["unsure"] >= 20, COUNTS


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(batches=st.lists(st.lists(_CLASS_NAMES, min_size=1, max_size=4, unique=True), min_size=2, max_size=2),
       plain=st.lists(st.lists(_PLAIN_NAMES, min_size=1, max_size=4, unique=True), min_size=2, max_size=2),
       versioned=_VERSIONED)
def _check_orders(batches: list[list[str]], plain: list[list[str]], versioned: list[str]) -> None:
    candidates = [*batches, *(sorted(names, key=str.lower) for names in plain), versioned]
    sure = [["AnyEvent", *names] for names in candidates if surely_in_ruffs_order(["AnyEvent", *names])]
    COUNTS["sure"] += len(sure)
    COUNTS["unsure"] += len(candidates) - len(sure)
    with tempfile.TemporaryDirectory() as directory:
        for index, names in enumerate(sure):
            Path(directory, f"m{index}.py").write_text(
                "from .events import (\n" + "".join(f"    {name},\n" for name in names) + ")\n\n"
                + "__all__ = [" + ", ".join(map(repr, names)) + "]\n")
        assert _findings(Path(directory), "I") == ""


def test_sorted_imports_answers_for_plain_modules() -> None:
    """The property above must not pass by refusing: plain modules get an answer."""
    source = ("from __future__ import annotations\n\nfrom typing import Literal, Annotated\nfrom pydantic import Field, ConfigDict\n"
              "from ._cloudevents import Payload\nfrom typing_extensions import TypeAliasType\n\n\n"
              "class A(Payload):\n    x: Annotated[Literal['a'], Field(alias='y')]\n")
    rebuilt = sorted_imports(source)
    assert rebuilt is not None
    assert _formatted([rebuilt]) == _ruff_fixed([source])
    assert "ConfigDict" not in rebuilt and "TypeAliasType" not in rebuilt
    for uncertain in ("import re\n", "from pydantic import Field as F\n", "from datetime import date\n"):
        assert sorted_imports(source.replace("\n\n\nclass", "\n" + uncertain + "\n\nclass")) is None
    assert sorted_imports(source + "\nField = 1\n") is None  # bound again
    assert sorted_imports(source + '\n__all__ = ["ConfigDict"]\n') is None  # mentioned: ruff decides
    # What the compiler refuses (nested too deep, a null byte) is ruff's call too, never an exception.
    assert sorted_imports(source + "\nB = " + "list[" * 5000 + "int" + "]" * 5000 + "\n") is None
    assert sorted_imports(source + "\nB = 1\0\n") is None


def test_random_catalogs_render_as_on_the_slow_path() -> None:
    """Random catalogs full of hostile text and names (test_hypothesis_catalogs'):
    the Python packages are byte for byte those of the slow path."""
    COUNTS.clear()
    _check_catalog()
    assert COUNTS["valid"] >= 5, COUNTS


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(document=catalogs())
def _check_catalog(document: dict[str, Any]) -> None:
    result = check([load_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), "c.yaml")])
    assume(not result.has_errors)  # (valid catalogs count towards max_examples: COUNTS cannot fall short by chance)
    COUNTS["valid"] += 1
    fast = _render(result.catalog_set)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _use_slow_path(monkeypatch)
        assert _render(result.catalog_set) == fast


# The word searches that replaced \bword\b patterns (thirty times faster on a module) find what those find.
_TEXT = st.lists(st.sampled_from(["Any", "StrictInt", "Strict", "Int", "_", "a", "1", " ", ",", "\n", "é", "東", "(", "["]),
                max_size=12).map("".join)


@settings(max_examples=300, deadline=None, database=None)
@given(text=_TEXT, word=st.sampled_from(["Any", "StrictInt"]))
def test_word_searches_find_what_word_boundaries_find(text: str, word: str) -> None:
    import re

    assert python._has_word(text, word) == bool(re.search(rf"\b{word}\b", text))
    assert python._replace_word(text, word, "JsonInt") == re.sub(rf"\b{word}\b", "JsonInt", text)


def _strip_container_before(source: str) -> str:
    """``python._strip_container`` as it was (the whole module searched)."""
    import re

    stripped = python._CONTAINER_ALIAS.sub("\n", python._CONTAINER_CLASS.sub("\n", source))
    body = stripped.split("from pydantic import", 1)[-1].split("\n\n", 1)[-1]
    if "RootModel" not in body:
        stripped = re.sub(r"(from pydantic import [^\n]*?)RootModel, |, RootModel(?=[,\n])", r"\1", stripped)
    if not re.search(r"\bAny\b", body):
        stripped = re.sub(r"(from typing import [^\n]*?)\bAny, |, Any\b(?=[,\n])|^from typing import Any\n", r"\1", stripped,
                          flags=re.MULTILINE)
    return stripped


_PIECES = ["from typing import Annotated, Any, Literal\n", "from typing import Any\n", "from pydantic import Field, RootModel\n",
           "from pydantic import RootModel, StrictStr\n", "\n", "\n\n", "class A(Payload):\n", "    x: Any\n",
           "    y: RootModel[int]\n", "    z: Literal['a, Any', 'b']\n", "# Any, RootModel\n",
           "\n\nclass EvcatPayloadContainer(RootModel[Any]):\n    root: Any\n",
           "\n\nEvcatPayloadContainer = TypeAliasType(\n    'EvcatPayloadContainer', Annotated[Any, Field(title='EvcatPayloadContainer')]\n)\n"]


@settings(max_examples=300, deadline=None, database=None)
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=12))
def test_strip_container_searches_less_and_finds_the_same(pieces: list[str]) -> None:
    source = "".join(pieces)
    assert python._strip_container(source) == _strip_container_before(source)
