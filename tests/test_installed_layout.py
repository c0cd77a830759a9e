"""evcat installed from a wheel: the templates are at generator/templates/
(pyproject's ``force-include``), not beside the package as in a checkout.
Every module finds them through ``render.templatefiles.builtin_dir``."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from generator import naming
from generator.render import templatefiles

from .conftest import ROOT

# What the installed evcat reports: where naming reads the Python templates,
# and the names they make unavailable to event classes.
PROBE = """\
import json, generator, generator.naming as naming
from generator.render.templatefiles import builtin_dir
print(json.dumps({"package": generator.__file__, "builtin": str(builtin_dir()),
                  "python_templates": str(naming._python_templates()), "names": sorted(naming._fixed_names())}))
"""


def _probe(site: Path, cwd: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r})\n" + PROBE],
        check=False, cwd=cwd, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": ""},
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    assert Path(str(found["package"])).is_relative_to(site), found["package"]  # the installed copy, not a checkout's
    return found


def _as_installed(site: Path) -> None:
    """The checkout laid out as its wheel installs it: pyproject's packages,
    then each ``force-include`` source at its target path."""
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]["build"]["targets"]["wheel"]
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in wheel["packages"]:
        shutil.copytree(ROOT / package, site / package, ignore=ignore)
    for source, target in wheel["force-include"].items():
        shutil.copytree(ROOT / source, site / target, ignore=ignore)


def _check_installed(site: Path, cwd: Path) -> None:
    found = _probe(site, cwd)
    assert Path(str(found["builtin"])) == site / "generator" / "templates"
    assert Path(str(found["python_templates"])) == site / "generator" / "templates" / "python"
    assert (site / "generator" / "templates" / "python" / "events.py.jinja").is_file()
    # The same names as in this checkout: the templates' imports are found.
    assert found["names"] == sorted(naming._fixed_names())


def test_naming_reads_the_templates_of_the_installed_layout(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    _as_installed(site)
    _check_installed(site, tmp_path)


def test_naming_reads_the_templates_builtin_dir_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both layouts, in process: the checkout's templates/ and, where there is
    none, the packaged copy; naming follows ``builtin_dir`` either way."""
    assert naming._python_templates() == templatefiles.builtin_dir() / "python" == ROOT / "templates" / "python"
    packaged = tmp_path / "generator" / "templates"
    shutil.copytree(ROOT / "templates", packaged)
    monkeypatch.setattr(templatefiles, "_SOURCE_TEMPLATES", tmp_path / "no-checkout" / "templates")
    monkeypatch.setattr(templatefiles, "_PACKAGE_TEMPLATES", packaged)
    assert naming._python_templates() == packaged / "python"


@pytest.mark.skipif(importlib.util.find_spec("hatchling") is None, reason="hatchling (the build backend) is not installed")
def test_naming_reads_the_templates_of_a_built_wheel(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "dist"), str(ROOT)],
        check=False, capture_output=True, text=True, timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("evcat-*.whl")
    site = tmp_path / "site-packages"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    _check_installed(site, tmp_path)
