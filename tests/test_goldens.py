"""Each test catalog's generated tree equals its committed golden tree, and
each generated package holds the shipped runtime modules byte for byte.

After an intended change: `python3 -m tests.goldens`, then review the diff.
"""

from __future__ import annotations

import pytest

from generator.runtime import RUNTIME_DIR, runtime_files

from .goldens import CATALOGS, generated, golden, rendered


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


@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_each_package_holds_the_shipped_runtime_byte_for_byte(name: str) -> None:
    """The golden trees leave the runtime modules out; here every package's
    copies are compared with generator/runtime/ itself."""
    files = rendered(name)
    packages = sorted({path.split("/")[1] for path in files if path.startswith("python/") and path.endswith("/__init__.py")})
    assert packages
    shipped = {module: (RUNTIME_DIR / module).read_bytes() for module in runtime_files()}
    assert "_cloudevents.py" in shipped and "__init__.py" not in shipped
    for package in packages:
        copies = {path.rsplit("/", 1)[1]: content for path, content in files.items() if path.startswith(f"python/{package}/")}
        for module, content in shipped.items():
            assert copies.get(module) == content, f"python/{package}/{module} is not the shipped generator/runtime/{module}"
