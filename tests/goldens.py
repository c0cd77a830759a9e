"""Golden trees: the generated output of each test catalog, committed.

Regenerate all goldens (then review the diff like code):

    python3 -m tests.goldens

The runtime modules every Python package holds (``generator/runtime/``,
copied verbatim) are not stored again in each tree: tests/test_goldens.py
shows each package's copies are the shipped files byte for byte.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from generator.engine.config import RunConfig
from generator.commands.generate import RENDERERS, render, use_templates
from generator.commands.lint import lint
from generator.runtime import runtime_files

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
CATALOGS = {
    "nlgov": ROOT / "catalog" / "nlgov",
    "normo": ROOT / "catalog" / "normo",
    "hostile": ROOT / "tests" / "catalogs" / "hostile",
    "conformance": ROOT / "tests" / "catalogs" / "conformance",
    "source-templates": ROOT / "tests" / "catalogs" / "source-templates",  # catalog-format.md §9
}

# Golden trees made with a --templates directory: name -> (catalog, outputs, templates).
WITH_TEMPLATES = {
    "custom-templates": ("conformance", ("docs",), ROOT / "tests" / "templates" / "custom"),
}


def is_runtime_copy(path: str) -> bool:
    """Whether ``path`` is a runtime module copied into a package (``python/<package>/<module>.py``)."""
    parts = path.split("/")
    return len(parts) == 3 and parts[0] == "python" and parts[2] in runtime_files()


def generated(name: str) -> dict[str, bytes]:
    """The output of golden tree ``name``, less the runtime modules' copies."""
    return {path: content for path, content in rendered(name).items() if not is_runtime_copy(path)}


def rendered(name: str) -> dict[str, bytes]:
    """The whole output of golden tree ``name``, as evcat writes it."""
    catalog, kinds, templates = WITH_TEMPLATES.get(name, (name, tuple(RENDERERS), None))
    result = lint(str(CATALOGS[catalog]))
    if result.has_errors:
        raise SystemExit(f"{name}: the catalog has errors: {result.diagnostics[0]}")
    files: dict[str, bytes] = {}
    user = use_templates(str(templates)) if templates is not None else None
    for produced in render(result.catalog_set, list(kinds), RunConfig(templates=user)).values():
        files.update(produced)
    return files


def golden(name: str) -> dict[str, bytes]:
    base = GOLDEN / name
    return {path.relative_to(base).as_posix(): path.read_bytes() for path in sorted(base.rglob("*")) if path.is_file()}


def update() -> None:
    for name in [*CATALOGS, *WITH_TEMPLATES]:
        target = GOLDEN / name
        shutil.rmtree(target, ignore_errors=True)
        for relative, content in generated(name).items():
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        print(f"updated {target.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    update()
