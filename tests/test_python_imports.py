"""Generated Python has its imports right: ruff's import rules (``ruff check
--select I,F401``) find nothing in a rendered package, whatever the
formatter and templates; and the renderer's word searches find what word
boundaries find.

(Import blocks were once written "by construction" so ruff's import rules
could be skipped: it bought 1.04x CPU on a cold ``--only python``, below the
noise, so ruff's rules run on every module again: bench/MECHANISMS.md.)
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.commands.generate import render, use_templates
from generator.commands.lint import lint
from generator.engine.config import RunConfig
from generator.render import python

from .goldens import CATALOGS

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


def _render(catalog_set: Any, formatter: str = "ruff") -> dict[str, bytes]:
    return render(catalog_set, ["python"], RunConfig(jobs=1, formatter=formatter))["python"]


def _synthetic(tmp_path: Path) -> Path:
    subprocess.run(["python3", str(ROOT / "bench" / "synth.py"), str(tmp_path / "synth"), "--events", "60"],
                   check=True, capture_output=True, timeout=120)
    return tmp_path / "synth"


def test_rendered_packages_need_no_import_fixes(tmp_path: Path) -> None:
    directories = {**CATALOGS, "synthetic": _synthetic(tmp_path)}
    for name, directory in directories.items():
        for path, content in _render(lint(str(directory)).catalog_set).items():
            target = tmp_path / "out" / name / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
    assert _findings(tmp_path / "out") == ""


def test_black_formatter_gets_the_same_sorted_imports() -> None:
    catalog_set = lint(str(CATALOGS["normo"])).catalog_set
    assert _render(catalog_set, "black") == _render(catalog_set)


def test_a_users_python_templates_still_get_their_imports_sorted(tmp_path: Path) -> None:
    """Templates from --templates DIR: their modules go through ruff's import
    rules too (here the old events.py template, with its superfluous blank
    line after the imports)."""
    builtin = (ROOT / "templates" / "python" / "events.py.jinja").read_text(encoding="utf-8")
    old = builtin.replace("{% if imports.pydantic or imports.deprecated %}\n\n{% endif %}\n", "\n\n")
    assert old != builtin
    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "events.py.jinja").write_text(old, encoding="utf-8")
    catalog_set = lint(str(CATALOGS["nlgov"])).catalog_set
    user = render(catalog_set, ["python"], RunConfig(jobs=1, templates=use_templates(str(tmp_path))))["python"]
    assert user == _render(catalog_set)


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
