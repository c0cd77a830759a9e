"""Error snapshots: each case under tests/catalogs/bad/ (a file, or a
directory for cross-file cases) has the exact `evcat lint` output committed
beside it as ``<case>.expected``.

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


def main() -> None:
    for case in cases():
        expected_path(case).write_text(lint_output(case), encoding="utf-8")
        print(expected_path(case).relative_to(ROOT))


if __name__ == "__main__":
    main()
