"""Write the EventCatalog export's lock file: ``python3 -m tests.eventcatalog_lock``.

npm resolves the ``package.json`` evcat writes (``render.eventcatalog.package_json``)
in a scratch folder under ``.test-cache/`` and the lock file it writes becomes
``generator/data/eventcatalog/package-lock.json``, which the export ships.
Run it after changing a version in ``render/eventcatalog.py``, then
``python3 -m tests.goldens``; ``tests/test_eventcatalog.py`` checks the two
agree, and its build test installs from the lock with the README's commands.
Registry URLs are left out of the lock (npm's ``omit-lockfile-registry-resolved``),
so it installs from whatever registry the user's npm is set to.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from generator.render.eventcatalog import LOCK_FILE, package_json

from .conftest import NPM_CACHE, ROOT, TEST_CACHE


def main() -> int:
    scratch = TEST_CACHE / "eventcatalog-lock"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    (scratch / "package.json").write_text(json.dumps(package_json(), indent=2) + "\n", encoding="utf-8")
    subprocess.run(["npm", "install", "--package-lock-only", "--ignore-scripts", "--omit-lockfile-registry-resolved",
                    "--no-audit", "--no-fund", "--loglevel=error", "--cache", str(NPM_CACHE)], cwd=scratch, check=True)
    target = ROOT / "generator" / LOCK_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(scratch / "package-lock.json", target)
    print(f"wrote {target.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
