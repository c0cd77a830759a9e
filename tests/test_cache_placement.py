"""Where ``.evcat-cache/`` goes (issue 27): beside the catalog's project (the
nearest directory, from the catalog directory upward, holding
``pyproject.toml`` or ``.git``; else the catalog directory's parent), never in
whatever directory the command runs from. ``--cache-dir`` and
``EVCAT_CACHE_DIR`` win."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.engine.cache import CACHE_NAME, default_cache_dir

from .conftest import ROOT, catalog_text


def _evcat(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "EVCAT_CACHE_DIR"}
    environment.update(PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-m", "generator", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=120, check=False)


def _project(tmp_path: Path, marker: str | None) -> tuple[Path, Path]:
    project = tmp_path / "project"
    catalog = project / "events" / "catalog"
    catalog.mkdir(parents=True)
    (catalog / "c.yaml").write_text(catalog_text(), encoding="utf-8")
    if marker == ".git":
        (project / ".git").mkdir()
    elif marker == "pyproject.toml":
        (project / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return project, elsewhere


@pytest.mark.parametrize("marker", [".git", "pyproject.toml"])
def test_the_cache_goes_to_the_project_not_the_working_directory(tmp_path: Path, marker: str) -> None:
    project, elsewhere = _project(tmp_path, marker)
    for command in (("lint",), ("generate", "-o", str(tmp_path / "out"), "--only", "jsonschema")):
        done = _evcat(command[0], str(project / "events" / "catalog"), *command[1:], cwd=elsewhere)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (project / CACHE_NAME).is_dir()
    assert (project / CACHE_NAME / "parsed").is_dir() or any((project / CACHE_NAME).iterdir())
    assert not (elsewhere / CACHE_NAME).exists()
    assert not (project / "events" / CACHE_NAME).exists() and not (project / "events" / "catalog" / CACHE_NAME).exists()


def test_without_a_project_the_cache_goes_beside_the_catalog_directory(tmp_path: Path) -> None:
    project, elsewhere = _project(tmp_path, None)
    if default_cache_dir(str(project / "events" / "catalog")) != str(project / "events" / CACHE_NAME):
        pytest.skip("a directory above the temporary directory holds .git or pyproject.toml")
    done = _evcat("lint", str(project / "events" / "catalog"), cwd=elsewhere)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "events" / CACHE_NAME).is_dir()
    assert not (elsewhere / CACHE_NAME).exists() and not (project / "events" / "catalog" / CACHE_NAME).exists()


def test_cache_dir_option_and_variable_win(tmp_path: Path) -> None:
    project, elsewhere = _project(tmp_path, ".git")
    catalog = str(project / "events" / "catalog")
    assert _evcat("lint", catalog, "--cache-dir", str(tmp_path / "chosen"), cwd=elsewhere).returncode == 0
    assert (tmp_path / "chosen").is_dir()
    assert _evcat("lint", catalog, cwd=elsewhere, EVCAT_CACHE_DIR=str(tmp_path / "from-env")).returncode == 0
    assert (tmp_path / "from-env").is_dir()
    # the option wins over the variable; the relative option is relative to the working directory, as typed
    assert _evcat("lint", catalog, "--cache-dir", "typed", cwd=elsewhere, EVCAT_CACHE_DIR=str(tmp_path / "unused")).returncode == 0
    assert (elsewhere / "typed").is_dir() and not (tmp_path / "unused").exists()
    assert not (project / CACHE_NAME).exists()


def test_the_rule_in_one_place(tmp_path: Path) -> None:
    project, _ = _project(tmp_path, "pyproject.toml")
    catalog = project / "events" / "catalog"
    assert default_cache_dir(str(catalog)) == str(project / CACHE_NAME)
    assert default_cache_dir(str(catalog / "c.yaml")) == str(project / CACHE_NAME)  # a catalog file: its directory
    (catalog / ".git").mkdir()  # the catalog directory itself is the project
    assert default_cache_dir(str(catalog)) == str(catalog / CACHE_NAME)
