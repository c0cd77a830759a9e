"""Shared helpers: write catalogs to a temporary directory and lint them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from generator.diagnostics import Diagnostic
from generator.commands.lint import lint

ROOT = Path(__file__).resolve().parent.parent

# `pytest --hypothesis-profile=slow` loads the profile when pytest starts, before
# any test module registers it: it is registered here (the property tests' long runs).
settings.register_profile("slow", max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))

# The paths of the test state that is not in git, in one place. Everything the
# tests download or build is under TEST_CACHE, one folder that .gitignore
# ignores and the README names (safe to delete): npm's cache, the EventCatalog
# projects with their node_modules, and the npm tools of tests/node
# (TEST_CACHE/node, installed by tests/install-components.sh and reached
# through the symbolic link tests/node/node_modules, where node looks for what
# the scripts in NODE_DIR import).
TEST_CACHE = ROOT / ".test-cache"
NPM_CACHE = TEST_CACHE / "npm"
EVENTCATALOG_PROJECTS = TEST_CACHE / "eventcatalog"
NODE_DIR = ROOT / "tests" / "node"
NODE_MODULES = NODE_DIR / "node_modules"

# Fixtures that start a real component (installed by tests/install-components.sh):
# a test that asks for one is marked ``real``.
REAL_COMPONENTS = frozenset({"mosquitto", "rabbitmq", "kafka", "proton", "chromium", "node_tools", "eventcatalog"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if REAL_COMPONENTS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.real)


def pytest_collection_finish(session: pytest.Session) -> None:
    """A test module may start its long external work (a Node.js build) in the
    background as soon as the run's tests are known, so that it overlaps the
    tests before it: ``start_in_background(items)``, given its selected items.
    Not in a pytest-xdist worker: every worker collects every test, and the
    other worker keeps the second core busy anyway (the module's fixture then
    builds when its tests run)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    modules: dict[Any, list[pytest.Item]] = {}
    for item in session.items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "start_in_background"):
            modules.setdefault(module, []).append(item)
    for module, items in modules.items():
        module.start_in_background(items)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A test marked ``own_process`` checks what the engine does in a process
    with no other threads (it forks workers only there: engine.workers). A
    pytest-xdist worker runs an I/O thread, so there the test runs again in
    a fresh pytest process of its own, and passes or fails as it does there."""
    if pyfuncitem.get_closest_marker("own_process") is None or os.environ.get("EVCAT_OWN_PROCESS"):
        return None
    from generator.engine.workers import single_threaded

    if single_threaded():
        return None
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", pyfuncitem.nodeid],
        cwd=ROOT, capture_output=True, text=True, timeout=900, env=dict(os.environ, EVCAT_OWN_PROCESS="1"),
    )
    assert done.returncode == 0 and re.search(r"^1 passed", done.stdout, re.MULTILINE), (done.stdout + done.stderr)[-6000:]
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """Under CI=true a real-component test that skips fails: CI must never go
    green without the brokers, the browser or the Node tools (DEVELOPERS.md)."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI") == "true" and item.get_closest_marker("real") is not None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"a real-component test skipped under CI=true: {reason}"

SOURCES = {
    "cloudevents": "urn:nld:oin:00000001823288444000:systeem:test",
    "nlgov": "urn:nld:oin:00000001823288444000:systeem:test",
    "normo": "urn:ean13:8716859000003:tst",
}
TYPES = {"cloudevents": "nl.test.thing-happened", "nlgov": "nl.test.thing-happened", "normo": "tst.thing.happened"}

EVENT = """\
  - type: {type}
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      properties:
        thingId: {{type: string, description: Id of the thing.}}
"""


def catalog_text(
    profile: str = "nlgov",
    *,
    events: str | None = None,
    header: str = "",
    source: str | None = None,
    defaults: str | None = None,
    catalog_id: str = "test-catalog",
) -> str:
    """A small catalog that is lint-clean for ``profile`` unless a part is replaced."""
    if defaults is None:
        defaults = (
            "defaults:\n  datacontenttype: application/json\n"
            "  time: Moment of registration, in UTC.\n  id: Random UUID v4.\n"
        )
    return (
        f"catalog: {catalog_id}\ntitle: Test catalog\nversion: 1.0.0\nprofile: {profile}\n"
        f"producer:\n  source: {source or SOURCES[profile]}\n  organization: Testorg\n"
        f"{defaults}{header}events:\n{events if events is not None else EVENT.format(type=TYPES[profile])}"
    )


def marked_line(text: str) -> int:
    """The 1-based line holding the ``#<`` marker."""
    for number, line in enumerate(text.splitlines(), start=1):
        if "#<" in line:
            return number
    raise AssertionError("no #< marker in the catalog text")


@pytest.fixture
def lint_files(tmp_path: Path):
    def run(files: dict[str, str | bytes]) -> list[Diagnostic]:
        for name, content in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return lint(str(tmp_path)).diagnostics

    return run


def run_evcat(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=120,
    )



@pytest.fixture(scope="session")
def node_tools() -> Path:
    """The node tools of tests/node/package.json (AsyncAPI parsers, Spectral, Modelina, ajv ...),
    installed from its lock file by tests/install-components.sh."""
    import shutil as _shutil

    if _shutil.which("node") is None or _shutil.which("npm") is None:
        pytest.fail("node and npm are needed for the AsyncAPI tests (apt-get install nodejs npm)")
    import json as _json

    wanted = _json.loads((NODE_DIR / "package.json").read_text())["dependencies"]
    if not all((NODE_MODULES / name / "package.json").exists() for name in wanted):
        pytest.skip("the node tools of tests/node are not installed (run tests/install-components.sh first)")
    return NODE_DIR


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium (tests/install-components.sh installs it)."""
    import shutil as _shutil

    path = _shutil.which("chromium")
    if path is None:
        pytest.skip("Debian's chromium is not installed (run tests/install-components.sh first)")
    return path
