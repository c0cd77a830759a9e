"""Error snapshots: each case under tests/catalogs/bad/ (a file, or a
directory for cross-file cases) has the exact `evcat lint` output committed
beside it as ``<case>.expected``. Generated documentation: the key reference
in docs/catalog-format.md and the rule table in README.md.

Regenerate them all (then review the diff): ``python3 -m tests.snapshots``
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BAD = ROOT / "tests" / "catalogs" / "bad"


def cases() -> list[Path]:
    return sorted(path for path in BAD.iterdir() if path.suffix in (".yaml", ".yml") or path.is_dir())


def expected_path(case: Path) -> Path:
    return case.with_name(case.stem + ".expected") if case.is_file() else case.with_name(case.name + ".expected")


def lint_output(case: Path) -> str:
    """What `evcat lint` prints for the case, run from the repository root."""
    done = subprocess.run(
        [sys.executable, "-m", "generator", "lint", case.relative_to(ROOT).as_posix(), "--no-cache"],
        cwd=ROOT, capture_output=True, text=True,
    )
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


def replace_between(path: Path, start_marker: str, end_marker: str, body: str) -> None:
    """``body`` in place of what lies between the line holding ``start_marker`` and ``end_marker``."""
    text = path.read_text(encoding="utf-8")
    start = text.index("\n", text.index(start_marker)) + 1
    end = text.index(end_marker)
    path.write_text(text[:start] + body + text[end:], encoding="utf-8")


def main() -> None:
    from generator.catalog_format import reference_markdown

    for case in cases():
        expected_path(case).write_text(lint_output(case), encoding="utf-8")
        print(expected_path(case).relative_to(ROOT))
    rules = subprocess.run(
        [sys.executable, "-m", "generator", "rules", "--format", "markdown"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    replace_between(ROOT / "README.md", "<!-- rules:start", "<!-- rules:end -->", rules)
    replace_between(ROOT / "docs" / "catalog-format.md", "<!-- reference:start", "<!-- reference:end -->", reference_markdown())
    print("README.md (rule table), docs/catalog-format.md (key reference)")


if __name__ == "__main__":
    main()
