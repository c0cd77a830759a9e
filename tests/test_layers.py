"""Issue 29: imports run one way (load -> model -> rules -> render -> writer);
caches, memos and processes live in ``generator/engine/``, which wraps the
stages. The writer and the Python renderer import nothing of the engine: the
engine hands them what they need (``writer.LazyFile``, ``python.Settings.memo``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

GENERATOR = Path(__file__).resolve().parent.parent / "generator"


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports (relative ones resolved against the generator package)."""
    package = ".".join(path.relative_to(GENERATOR.parent).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("stage", ["writer.py", "render/python.py"])
def test_stage_imports_no_engine(stage: str) -> None:
    imported = _imported(GENERATOR / stage)
    assert not {name for name in imported if name == "generator.engine" or name.startswith("generator.engine.")}


def test_memo_keeps_output_and_travels(tmp_path: Path) -> None:
    """The engine's memo gives what the function gives, from its store in a
    fresh process too (pickled with the settings, as the workers get it)."""
    import pickle

    from generator.engine.store import Memo

    calls: list[str] = []

    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    memo = Memo(str(tmp_path), "models", "salt-a")
    assert memo("abc", upper) == "ABC" and calls == ["abc"]
    Memo._known.clear()  # as a new process: only the store knows
    again = pickle.loads(pickle.dumps(memo))
    assert again("abc", upper) == "ABC" and calls == ["abc"]
    Memo._known.clear()
    assert Memo(str(tmp_path), "models", "salt-b")("abc", upper) == "ABC" and calls == ["abc", "abc"]
    Memo._known.clear()


@pytest.mark.parametrize("stage", ["model", "rules"])
def test_model_and_rules_import_no_engine(stage: str) -> None:
    """What a long-running caller keeps (engine.keep), the memo of checks and
    the workers wrap the model and the rules; neither imports the engine."""
    for path in sorted((GENERATOR / stage).rglob("*.py")):
        imported = _imported(path)
        assert not {name for name in imported if name == "generator.engine" or name.startswith("generator.engine.")}, path


def test_build_takes_no_memo() -> None:
    """``build(documents)`` is a function of the documents alone: what the
    LSP keeps between builds is the engine's (``engine.keep.Keep.build``)."""
    import inspect

    from generator.model.build import build

    assert list(inspect.signature(build).parameters) == ["documents"]


def test_rules_context_carries_no_memo() -> None:
    """The memo of the costly checks is the engine's (``engine.checks.MemoContext``):
    a rule's ``Context`` holds the model, the documents and the rules' working cache."""
    from dataclasses import fields

    from generator.rules import Context

    assert [field.name for field in fields(Context) if field.init] == ["built", "documents", "cache"]
