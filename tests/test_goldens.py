"""Each test catalog's whole generated tree equals its committed golden tree.

After an intended change: `python3 -m tests.goldens`, then review the diff.
"""

from __future__ import annotations

import pytest

from .goldens import CATALOGS, generated, golden


@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_generated_tree_equals_golden(name: str) -> None:
    expected = golden(name)
    actual = generated(name)
    assert sorted(actual) == sorted(expected), "files differ; regenerate with python3 -m tests.goldens"
    for path, content in actual.items():
        assert content == expected[path], f"{path} differs; regenerate with python3 -m tests.goldens"


@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_generation_is_deterministic(name: str) -> None:
    assert generated(name) == generated(name)
