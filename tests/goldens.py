"""Golden trees: the whole generated output of each test catalog, committed.

Regenerate all goldens (then review the diff like code):

    python3 -m tests.goldens
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from generator.engine.config import RunConfig
from generator.generate import RENDERERS, render, use_templates
from generator.lint import lint

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
CATALOGS = {
    "nlgov": ROOT / "catalog" / "nlgov",
    "normo": ROOT / "catalog" / "normo",
    "hostile": ROOT / "tests" / "catalogs" / "hostile",
    "conformance": ROOT / "tests" / "catalogs" / "conformance",
}

# Golden trees made with a --templates directory: name -> (catalog, outputs, templates).
WITH_TEMPLATES = {
    "custom-templates": ("conformance", ("docs",), ROOT / "tests" / "templates" / "custom"),
}


def generated(name: str) -> dict[str, bytes]:
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
