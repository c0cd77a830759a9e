"""`evcat init`: a starter project whose catalog lints clean under each profile."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from generator.catalog_format import catalog_json_schema
from generator.profiles import PROFILES
from tests.conftest import ROOT, run_evcat


@pytest.mark.parametrize("profile", list(PROFILES))
def test_starter_catalog_lints_clean(tmp_path: Path, profile: str) -> None:
    project = tmp_path / "Gemeente Voorbeeld"
    done = run_evcat("init", str(project), "--profile", profile)
    assert done.returncode == 0, done.stderr
    catalog = project / "catalog" / "gemeente-voorbeeld.yaml"
    text = catalog.read_text()
    assert text.startswith("# yaml-language-server: $schema=./catalog.schema.json\n")
    assert f"profile: {profile}\n" in text
    linted = run_evcat("lint", str(project / "catalog"), "--no-cache")
    assert (linted.returncode, linted.stdout) == (0, "no problems in 1 file\n")
    schema = json.loads((project / "catalog" / "catalog.schema.json").read_text())
    assert schema == catalog_json_schema()
    jsonschema.Draft7Validator(schema).validate(yaml.safe_load(text))
    generated = run_evcat("generate", str(project / "catalog"), "-o", str(tmp_path / "out"), "--only", "jsonschema", "--no-cache")
    assert generated.returncode == 0, generated.stdout + generated.stderr


def test_gitignore_and_ci_snippets(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc")  # no final newline
    run_evcat("init", str(tmp_path), "--evcat-requirement", "evcat==0.1.0")
    assert (tmp_path / ".gitignore").read_text() == "*.pyc\n.evcat-cache/\n"
    github = yaml.safe_load((tmp_path / ".github" / "workflows" / "evcat.yml").read_text())
    steps = github["jobs"]["lint"]["steps"]
    assert {"run": "evcat lint catalog --format github"} in steps
    gitlab = yaml.safe_load((tmp_path / ".gitlab-ci.yml").read_text())
    assert "evcat lint catalog" in gitlab["evcat-lint"]["script"]


def test_init_never_overwrites(tmp_path: Path) -> None:
    run_evcat("init", str(tmp_path / "p"))
    catalog = tmp_path / "p" / "catalog" / "p.yaml"
    catalog.write_text("my own work\n")
    again = run_evcat("init", str(tmp_path / "p"))
    assert again.returncode == 0
    assert catalog.read_text() == "my own work\n"
    assert "kept     " in again.stdout
    assert (tmp_path / "p" / ".gitignore").read_text().count(".evcat-cache/") == 1


class _Distribution:
    """What importlib.metadata.distribution("evcat") gives: its version and direct_url.json."""

    version = "0.1.0"

    def __init__(self, direct_url: dict[str, object] | None) -> None:
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return None if self.direct_url is None else json.dumps(self.direct_url)


COMMIT = "a" * 40


@pytest.mark.parametrize(("direct_url", "requirement"), [
    (None, "evcat==0.1.0"),  # from an index
    ({"url": "https://example.org/evcat.git", "vcs_info": {"vcs": "git", "commit_id": COMMIT, "requested_revision": "main"}},
     f"evcat @ git+https://example.org/evcat.git@{COMMIT}"),
    ({"url": "https://example.org/mono.git", "subdirectory": "evcat", "vcs_info": {"vcs": "git", "commit_id": COMMIT}},
     f"evcat @ git+https://example.org/mono.git@{COMMIT}#subdirectory=evcat"),
    ({"url": "https://example.org/evcat-0.1.0-py3-none-any.whl", "archive_info": {"hashes": {"sha256": "b" * 64}}},
     f"evcat @ https://example.org/evcat-0.1.0-py3-none-any.whl#sha256={'b' * 64}"),
    ({"url": "file:///home/me/evcat", "dir_info": {"editable": True}}, None),
    ({"url": "file:///home/me/evcat", "dir_info": {}}, None),
    ({"url": "file:///home/me/evcat", "vcs_info": {"vcs": "git", "commit_id": COMMIT}}, None),  # a local clone
    ({"url": "file:///tmp/evcat-0.1.0-py3-none-any.whl", "archive_info": {}}, None),
    ({"dir_info": {}}, None),  # unreadable: no url
], ids=["index", "git", "git-subdirectory", "wheel-url", "editable", "directory", "local-git", "local-wheel", "broken"])
def test_requirement_from_installation_metadata(monkeypatch: pytest.MonkeyPatch, direct_url: dict[str, object] | None,
                                                 requirement: str | None) -> None:
    """PEP 610's direct_url.json says where evcat came from; CI installs it from there."""
    from generator.commands import init as init_module

    monkeypatch.setattr(init_module.importlib.metadata, "distribution", lambda name: _Distribution(direct_url))
    assert init_module.installed_requirement().requirement == requirement


def test_local_install_writes_no_ci_but_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a local checkout CI cannot reach, no broken CI file: a warning naming --evcat-requirement."""
    from generator.commands import init as init_module

    monkeypatch.setattr(init_module.importlib.metadata, "distribution",
                        lambda name: _Distribution({"url": "file:///home/me/evcat", "dir_info": {"editable": True}}))
    done, notes = init_module.init(str(tmp_path / "p"))
    assert dict(done)[".github/workflows/evcat.yml"] == "skipped" and dict(done)[".gitlab-ci.yml"] == "skipped"
    assert not (tmp_path / "p" / ".github").exists() and not (tmp_path / "p" / ".gitlab-ci.yml").exists()
    assert len(notes) == 1 and "--evcat-requirement" in notes[0] and "file:///home/me/evcat" in notes[0]
    assert (tmp_path / "p" / "catalog" / "p.yaml").exists()


def test_ci_installs_the_given_requirement_quoted(tmp_path: Path) -> None:
    requirement = "evcat @ git+https://example.org/evcat.git@v1 ; python_version >= '3.11'"
    done = run_evcat("init", str(tmp_path / "p"), "--evcat-requirement", requirement)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    github = yaml.safe_load((tmp_path / "p" / ".github" / "workflows" / "evcat.yml").read_text())
    runs = [step["run"] for step in github["jobs"]["lint"]["steps"] if "run" in step]
    assert shlex.split(runs[0]) == ["python", "-m", "pip", "install", requirement]
    assert runs[1:] == ["evcat lint catalog --format github", "evcat generate catalog -o out --check"]
    gitlab = yaml.safe_load((tmp_path / "p" / ".gitlab-ci.yml").read_text())
    assert gitlab["evcat-lint"]["script"] == [runs[0], "evcat lint catalog", "evcat generate catalog -o out --check"]
    bad = run_evcat("init", str(tmp_path / "q"), "--evcat-requirement", "evcat\nrm -rf /")
    assert bad.returncode == 2 and "--evcat-requirement" in bad.stderr


@pytest.mark.slow
def test_generated_ci_workflow_passes_in_a_fresh_venv(tmp_path: Path) -> None:
    """`evcat init` in an empty folder, then the GitHub workflow's `run:`
    commands (read from its YAML, each as GitHub runs it: bash -e) in a fresh
    venv with evcat installed as the workflow says, from this checkout."""
    project = tmp_path / "project"
    done = run_evcat("init", str(project), "--evcat-requirement", str(ROOT))
    assert done.returncode == 0, done.stderr
    workflow = yaml.safe_load((project / ".github" / "workflows" / "evcat.yml").read_text())
    runs = [step["run"] for step in workflow["jobs"]["lint"]["steps"] if "run" in step]
    assert any(run.startswith("evcat generate") and "--check" in run for run in runs)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    environment.update(PATH=f"{venv / 'bin'}{os.pathsep}{environment.get('PATH', '')}", VIRTUAL_ENV=str(venv),
                       PIP_DISABLE_PIP_VERSION_CHECK="1")
    for run in runs:
        result = subprocess.run(["bash", "-e", "-c", run], cwd=project, env=environment, capture_output=True, text=True,
                                timeout=900, check=False)
        assert result.returncode == 0, (run, (result.stdout + result.stderr)[-3000:])
    evcat = subprocess.run([str(venv / "bin" / "python"), "-c", "import generator; print(generator.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, check=True)
    assert evcat.stdout.startswith(str(venv))  # the venv's evcat ran, not this checkout's
    (project / "out" / "jsonschema" / "index.json").write_text("[]\n")  # and --check does check
    stale = subprocess.run(["bash", "-e", "-c", runs[-1]], cwd=project, env=environment, capture_output=True, text=True, check=False)
    assert stale.returncode == 1 and "stale" in stale.stderr
