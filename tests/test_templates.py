"""`evcat generate --templates DIR` and the renderer registry (generator/outputs.py).

A file in DIR replaces the built-in template with the same relative path;
``builtin/<path>`` names the built-in one; DIR's templates run sandboxed; a
template error is a TEMPLATE diagnostic at the template's file and line with
nothing written; the render cache key of each output kind covers every file
of its templates, built-in and DIR's, whatever the suffix.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from generator import outputs
from generator.cli import main
from generator.commands import generate as generate_module
from generator.commands.generate import RenderStats, generate, render, use_templates
from generator.commands.lint import UsageError, lint
from generator.engine.config import RunConfig
from generator.render import templatefiles
from generator.render import templates as template_module

from .conftest import run_evcat
from .goldens import CATALOGS, WITH_TEMPLATES, generated, golden

ROOT = Path(__file__).resolve().parent.parent
CUSTOM = ROOT / "tests" / "templates" / "custom"
CONFORMANCE = CATALOGS["conformance"]


# -- the golden tree -------------------------------------------------------

def test_overridden_templates_give_the_golden_tree() -> None:
    expected = golden("custom-templates")
    actual = generated("custom-templates")
    assert sorted(actual) == sorted(expected), "files differ; regenerate with python3 -m tests.goldens"
    for path, content in actual.items():
        assert content == expected[path], f"{path} differs; regenerate with python3 -m tests.goldens"


def test_only_the_overridden_templates_change_the_output() -> None:
    """Templates not in DIR come from the built-in set: every page that no
    override reaches is byte for byte the built-in output."""
    catalog, kinds, _ = WITH_TEMPLATES["custom-templates"]
    builtin = {path: content for path, content in golden(catalog).items() if path.split("/", 1)[0] in kinds}
    custom = generated("custom-templates")
    assert sorted(custom) == sorted(builtin)
    changed = sorted(path for path in custom if custom[path] != builtin[path])
    assert changed == [
        "docs/assets/style.css",  # docs/style.css includes the built-in one, then adds a rule
        "docs/catalogs/cloudevents-conformance.html",  # built-in catalog.html.jinja extends the overridden base
        "docs/index.html",
        "docs/markdown/cloudevents-conformance/io.cloudevents.test.md",  # includes the built-in page, adds a footer
    ]
    assert b"events@example.org" in custom["docs/index.html"]
    assert custom["docs/assets/style.css"].startswith(builtin["docs/assets/style.css"])
    # The event page fills the sidebar block itself, so the overridden base adds nothing there.
    assert custom["docs/events/cloudevents-conformance/io.cloudevents.test.html"] == \
        builtin["docs/events/cloudevents-conformance/io.cloudevents.test.html"]


def test_the_builtin_templates_render_the_same_in_the_sandbox(tmp_path: Path) -> None:
    """A kind with templates in DIR renders sandboxed, the built-in templates it
    uses too: they render exactly as without. DIR here holds one verbatim copy
    of a built-in template per kind; a kind DIR leaves alone is not sandboxed."""
    copies = tmp_path / "copies"
    for name in ("python/delivery.py.jinja", "docs/constraints.html.jinja", "eventcatalog/team.md.jinja"):
        (copies / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template_module.builtin_dir() / name, copies / name)
    user = use_templates(str(copies))
    for kind in ("python", "docs", "eventcatalog"):
        assert template_module._environment(template_module.template_set((kind,), user)).sandboxed
    only_docs = use_templates(str(_template(tmp_path, "docs/docs.js", "// mine\n")))
    assert not template_module._environment(template_module.template_set(("python",), only_docs)).sandboxed
    catalog_set = lint(str(CATALOGS["normo"])).catalog_set
    kinds = [kind for kind, renderer in outputs.RENDERERS.items() if renderer.templates]
    assert render(catalog_set, kinds, RunConfig(jobs=1, templates=user)) == render(catalog_set, kinds, RunConfig(jobs=1))


def test_the_cli_writes_with_templates_and_check_follows_them(tmp_path: Path) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    common = ["-o", str(out), "--cache-dir", str(cache), "--only", "docs"]
    assert run_evcat("generate", str(CONFORMANCE), *common).returncode == 0
    checked = run_evcat("generate", str(CONFORMANCE), *common, "--check", "--templates", str(CUSTOM))
    assert checked.returncode == 1 and "stale" in checked.stderr
    assert run_evcat("generate", str(CONFORMANCE), *common, "--templates", str(CUSTOM)).returncode == 0
    for path, content in golden("custom-templates").items():
        assert (out / path).read_bytes() == content
    assert run_evcat("generate", str(CONFORMANCE), *common, "--check", "--templates", str(CUSTOM)).returncode == 0
    # An edit of an overriding template is noticed by --check, through the cache.
    edited = tmp_path / "edited"
    shutil.copytree(CUSTOM, edited)
    (edited / "docs" / "style.css").write_text((CUSTOM / "docs" / "style.css").read_text() + "main { color: #222; }\n")
    stale = run_evcat("generate", str(CONFORMANCE), *common, "--check", "--templates", str(edited))
    assert stale.returncode == 1 and "docs/assets/style.css" in stale.stderr
    assert run_evcat("generate", str(CONFORMANCE), *common, "--check").returncode == 1  # back to the built-in set


# -- errors ----------------------------------------------------------------

def _template(tmp_path: Path, name: str, text: str | bytes) -> Path:
    directory = tmp_path / "templates"
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return directory


def _generate(tmp_path: Path, directory: Path, *args: str, catalog: Path = CONFORMANCE):
    out = tmp_path / "out"
    result = run_evcat("generate", str(catalog), "-o", str(out), "--no-cache", "--templates", str(directory), *args)
    assert "Traceback" not in result.stderr + result.stdout
    assert not out.exists(), "nothing may be written"
    return result


def test_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    result = _generate(tmp_path, tmp_path / "nope")
    assert result.returncode == 2
    assert f"--templates {tmp_path / 'nope'}: does not exist" in result.stderr
    (tmp_path / "file").write_text("x")
    assert "is not a directory" in _generate(tmp_path, tmp_path / "file").stderr


def test_a_file_that_overrides_nothing_is_an_error(tmp_path: Path) -> None:
    directory = _template(tmp_path, "docs/evnt.md.jinja", "x\n")
    result = _generate(tmp_path, directory, "--only", "docs")
    assert result.returncode == 2
    assert "docs/evnt.md.jinja (did you mean docs/event.md.jinja?) overrides no built-in template" in result.stderr
    other = tmp_path / "other"
    (other / "html").mkdir(parents=True)
    (other / "html" / "page.jinja").write_text("x\n")
    result = _generate(tmp_path, other)
    assert result.returncode == 2 and "one of: docs/base.html.jinja" in result.stderr
    # A copy of templates/ works as it is: its README.md is not a template. Dot files (editor swap files) are ignored.
    copy = tmp_path / "copy"
    shutil.copytree(template_module.builtin_dir(), copy)
    assert sorted(template_module.user_templates(use_templates(str(copy)))) == sorted(template_module.builtin_templates())
    assert "docs/README.md overrides no built-in template" in _generate(tmp_path, _template(tmp_path / "r", "docs/README.md", "x\n")).stderr
    dotted = _template(tmp_path / "d", "docs/.event.md.jinja.swp", b"\xff")
    (dotted / ".DS_Store").write_bytes(b"\0")
    assert use_templates(str(dotted)) == dotted.resolve()


@pytest.mark.parametrize(("name", "text", "line", "message"), [
    ("docs/event.md.jinja", "a\n{% if %}\n", 2, "template syntax error: Expected an expression"),
    ("docs/event.md.jinja", "a\n\n{{ nope.x }}\n", 3, "undefined: 'nope' is undefined"),
    ("docs/event.md.jinja", "a\n{{ page.nothing }}\n", 2, "undefined: 'generator.render.docs.TypeView object' has no attribute 'nothing'"),
    ("docs/event.md.jinja", "{% set x = 1 %}\n{{ x // 0 }}\n", 2, "ZeroDivisionError: integer division or modulo by zero"),
    ("docs/event.md.jinja", "{{ page.__class__.__mro__ }}\n", 1, "not allowed in a template: access to attribute '__class__'"),
    ("docs/event.md.jinja", "{{ ''.__class__.__subclasses__() }}\n", 1, "not allowed in a template"),
    ("docs/event.md.jinja", "x\n{{ range(10**9) | list | length }}\n", 2, "OverflowError: Range too big"),
    ("docs/event.md.jinja", "\n{% include 'python/events.py.jinja' %}\n", 2,
     "template not found: python/events.py.jinja (these templates can use only templates under docs/)"),
    ("docs/event.md.jinja", "\n\n{% include 'docs/nothing.jinja' %}\n", 3, "template not found: docs/nothing.jinja"),
    ("docs/event.md.jinja", b"ok\n\xff\n", 2, "the template is not UTF-8 text"),
    ("docs/style.css", "body {\n{{ missing }}\n}\n", 2, "undefined: 'missing' is undefined"),
    pytest.param("docs/event.md.jinja", "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}\n", 1, "nests too deeply",
                 id="nested-3000-deep"),
])
def test_a_template_error_is_a_diagnostic_at_its_line(tmp_path: Path, name: str, text: str | bytes, line: int,
                                                      message: str) -> None:
    directory = _template(tmp_path, name, text)
    result = _generate(tmp_path, directory, "--only", "docs")
    assert result.returncode == 2, result.stderr
    path = (directory / name).resolve()
    shown = str(path)
    assert result.stdout.startswith(f"{shown}:{line}:1: error TEMPLATE "), result.stdout
    assert message in result.stdout
    assert "a template has errors; nothing was generated" in result.stderr


def test_a_template_error_in_a_worker_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Catalogs rendered in worker processes: the error crosses back intact, in every output format."""
    monkeypatch.setenv("EVCAT_JOBS", "2")
    directory = _template(tmp_path, "docs/catalog.html.jinja", "{% extends 'docs/base.html.jinja' %}\n"
                                                               "{% block main %}\n{{ catalog.nothing }}\n{% endblock %}\n")
    result = _generate(tmp_path, directory, "--only", "jsonschema,docs", "--format", "json", catalog=ROOT / "catalog")
    assert result.returncode == 2
    [diagnostic] = json.loads(result.stdout)["diagnostics"]
    assert diagnostic["file"] == str((directory / "docs" / "catalog.html.jinja").resolve())
    assert (diagnostic["line"], diagnostic["rule"], diagnostic["severity"]) == (3, "TEMPLATE", "error")
    assert "has no attribute 'nothing'" in diagnostic["message"]


def test_python_templates_that_give_no_python_are_an_error(tmp_path: Path) -> None:
    directory = _template(tmp_path, "python/delivery.py.jinja", "def (:\n")
    result = _generate(tmp_path, directory, "--only", "python")
    assert result.returncode == 2
    assert result.stdout.startswith(f"{(directory / 'python' / 'delivery.py.jinja').resolve()}:1:1: error TEMPLATE ")
    assert "the python output of the templates in" in result.stdout and "cannot parse" in result.stdout


def test_a_template_error_leaves_out_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["generate", str(CONFORMANCE), "-o", str(out), "--no-cache", "--only", "docs"]) == 0
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    directory = _template(tmp_path, "docs/index.md.jinja", "{{ 1 + none }}\n")
    assert main(["generate", str(CONFORMANCE), "-o", str(out), "--no-cache", "--only", "docs",
                 "--templates", str(directory)]) == 2
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before


def test_use_templates_raises_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        generate(str(CONFORMANCE), str(tmp_path / "out"), ["docs"], RunConfig(templates=use_templates(str(tmp_path / "none"))))


# -- the cache key ---------------------------------------------------------

@pytest.fixture
def builtin_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the built-in templates standing in for them."""
    copy = tmp_path / "builtin"
    shutil.copytree(template_module.builtin_dir(), copy)
    monkeypatch.setattr(templatefiles, "_SOURCE_TEMPLATES", copy)
    outputs.forget()
    template_module._environment.cache_clear()
    yield copy
    monkeypatch.undo()
    outputs.forget()
    template_module._environment.cache_clear()


def _salts(user: Path | None = None) -> dict[str, str]:
    outputs.forget()
    return {kind: outputs.kind_salt(kind, user) for kind in outputs.RENDERERS}


def test_every_template_file_enters_the_key_of_its_kind_only(builtin_copy: Path, tmp_path: Path) -> None:
    """Each built-in template file, whatever its suffix, and each overriding
    file: changing it changes the key of exactly the kind that reads it."""
    names = sorted(template_module.builtin_templates())
    assert {Path(name).suffix for name in names} >= {".jinja", ".css", ".js"}
    before = _salts()
    for name in names:
        path = builtin_copy / name
        original = path.read_bytes()
        path.write_bytes(original + b" ")
        after = _salts()
        path.write_bytes(original)
        owner = name.split("/", 1)[0]
        assert [kind for kind in before if before[kind] != after[kind]] == [owner], name
    user = tmp_path / "user"
    for name in names:
        override = user / name
        override.parent.mkdir(parents=True, exist_ok=True)
        override.write_bytes((builtin_copy / name).read_bytes())
        with_override = _salts(user)
        override.write_bytes(override.read_bytes() + b"/* edited */")
        edited = _salts(user)
        override.unlink()
        owner = name.split("/", 1)[0]
        assert [kind for kind in before if with_override[kind] != edited[kind]] == [owner], name


def test_every_template_belongs_to_one_kind() -> None:
    """The registry names every template directory, so every template file is in some kind's key."""
    owners = [prefix for renderer in outputs.RENDERERS.values() for prefix in renderer.templates]
    assert len(owners) == len(set(owners))
    for name in template_module.builtin_templates():
        assert name.split("/", 1)[0] in owners, name
    for prefix in owners:
        assert (template_module.builtin_dir() / prefix).is_dir()


def test_editing_a_template_renders_exactly_its_kind_again(builtin_copy: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    kinds = list(outputs.RENDERERS)
    out = str(tmp_path / "out")
    first = generate(str(CONFORMANCE), out, kinds, RunConfig(cache_dir=cache))
    assert first.stats is not None and first.stats.rendered == first.stats.units
    seen = {key for _, key in first.stats.keys or []}

    def rerendered(templates: str | None = None) -> list[str]:
        generate_module.forget_code_digest()
        config = RunConfig(cache_dir=cache, templates=use_templates(templates))
        result = generate(str(CONFORMANCE), out, kinds, config)
        assert result.stats is not None and result.stats.keys is not None
        new = sorted({kind for kind, key in result.stats.keys if key not in seen})
        seen.update(key for _, key in result.stats.keys)
        return new

    assert rerendered() == []
    style = builtin_copy / "docs" / "style.css"
    style.write_text(style.read_text() + "\n/* a change */\n")
    assert rerendered() == ["docs"]
    team = builtin_copy / "eventcatalog" / "team.md.jinja"
    team.write_text(team.read_text() + "\n")
    assert rerendered() == ["eventcatalog"]
    user = _template(tmp_path, "python/pyproject.toml.jinja", (builtin_copy / "python" / "pyproject.toml.jinja").read_text())
    assert rerendered(templates=str(user)) == ["python"]
    (user / "python" / "pyproject.toml.jinja").write_text("# mine\n")
    assert rerendered(templates=str(user)) == ["python"]
    assert [path.read_text() for path in (tmp_path / "out" / "python").glob("*/pyproject.toml")] == ["# mine\n"]
    (user / "python" / "pyproject.toml.jinja").unlink()
    (user / "docs").mkdir()
    (user / "docs" / "docs.js").write_text("// mine\n")
    # python is back to the built-in templates: the key of the first run, so its entry is reused.
    assert rerendered(templates=str(user)) == ["docs"]


# -- the registry ----------------------------------------------------------

def test_the_registry_is_the_one_list_of_kinds() -> None:
    assert generate_module.parse_kinds(None) == list(outputs.KINDS) == ["python", "jsonschema", "asyncapi", "docs", "xregistry"]
    assert outputs.OPTIONAL_KINDS == ("eventcatalog",)
    assert generate_module.parse_kinds("docs, eventcatalog,docs") == ["docs", "eventcatalog"]
    with pytest.raises(UsageError, match="python, jsonschema, asyncapi, docs, xregistry, eventcatalog"):
        generate_module.parse_kinds("html")
    assert sorted(generate_module.RENDERERS) == sorted(outputs.RENDERERS)
    help_text = run_evcat("generate", "--help").stdout
    assert " ".join(help_text.split()).count("eventcatalog (an EventCatalog project, only when asked for)") == 1
    for kind in outputs.RENDERERS:
        assert kind in help_text
    assert "--templates DIR" in help_text


def test_heavier_kinds_are_handed_out_first() -> None:
    costs = {kind: renderer.cost for kind, renderer in outputs.RENDERERS.items()}
    assert max(costs, key=costs.__getitem__) == "python"
    stats = RenderStats()
    catalog_set = lint(str(CONFORMANCE)).catalog_set
    rendered = render(catalog_set, ["jsonschema", "docs"], RunConfig(jobs=1), stats=stats)
    assert sorted(rendered) == ["docs", "jsonschema"] and stats.units == 4


def test_watch_follows_the_templates(tmp_path: Path) -> None:
    """`evcat generate --watch --templates DIR`: a new, edited or broken file in DIR gives a new run."""
    from .test_watch import Watcher, save

    out = tmp_path / "out"
    directory = tmp_path / "mine"
    (directory / "docs").mkdir(parents=True)
    page = out / "docs" / "markdown" / "index.md"
    watcher = Watcher("generate", str(CONFORMANCE), "-o", str(out), "--only", "docs", "--cache-dir",
                      str(tmp_path / "cache"), "--templates", str(directory))
    try:
        watcher.wait_for("watching")
        builtin = page.read_text()
        save(directory / "docs" / "index.md.jinja", '{% include "builtin/docs/index.md.jinja" %}\nMine.\n')
        assert "changed: " in "".join(watcher.wait_for("watching"))
        assert page.read_text() == builtin + "Mine.\n"
        save(directory / "docs" / "index.md.jinja", "{{ nope }}\n")
        broken = watcher.wait_for("watching")
        assert any("index.md.jinja:1:1: error TEMPLATE undefined: 'nope' is undefined" in line for line in broken), broken
        assert page.read_text() == builtin + "Mine.\n"  # OUT as it was
        (directory / "docs" / "index.md.jinja").unlink()
        watcher.wait_for("watching")
        assert page.read_text() == builtin
    finally:
        code, rest = watcher.stop()
    assert code == 0 and "Traceback" not in rest + "\n".join(watcher.seen)


def test_linked_directories_are_followed_once(tmp_path: Path) -> None:
    """jinja2 reads templates through links, so the check and the cache key do too; a link loop ends."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "event.md.jinja").write_text("{{ page.type }}\n")
    directory = tmp_path / "mine"
    directory.mkdir()
    (directory / "docs").symlink_to(shared, target_is_directory=True)
    (shared / "loop").symlink_to(directory, target_is_directory=True)  # back to DIR: not entered again
    user = use_templates(str(directory))
    assert user is not None
    assert template_module.user_templates(user) == {"docs/event.md.jinja": user / "docs" / "event.md.jinja"}
    (shared / "evnt.md.jinja").write_text("x\n")
    with pytest.raises(UsageError, match="docs/evnt.md.jinja"):
        use_templates(str(directory))
    (shared / "evnt.md.jinja").unlink()
    before = outputs.kind_salt("docs", user)
    (shared / "event.md.jinja").write_text("{{ page.type }}!\n")
    outputs.forget()
    assert outputs.kind_salt("docs", user) != before


def test_units_render_the_texts_their_key_covers(tmp_path: Path) -> None:
    """A template saved while a run renders cannot give output stored under the key of its old content:
    units render from the texts read once, whose digest is in the key."""
    directory = _template(tmp_path, "docs/index.md.jinja", "first\n")
    user = use_templates(str(directory))
    catalog_set = lint(str(CONFORMANCE)).catalog_set
    [index] = [unit for unit in outputs.units("docs", catalog_set, None, user) if unit.name == "index"]
    key = outputs.kind_salt("docs", user)
    (directory / "docs" / "index.md.jinja").write_text("second\n")
    assert index.render(index.inputs)["docs/markdown/index.md"] == b"first\n"
    assert outputs.kind_salt("docs", user) == key  # the same run: the same texts
    outputs.forget()
    assert outputs.kind_salt("docs", user) != key  # the next run reads them again
    import pickle

    assert len(pickle.dumps(index.render)) < 100_000  # what each task carries to a worker besides its inputs


# -- limits: DIR's templates cannot run forever or take all memory ---------

ENDLESS = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}\n"


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("loops", [ENDLESS, ENDLESS.replace("{% endfor %}{% endfor %}", "{{ b }}{% endfor %}{% endfor %}")],
                         ids=["silent", "writing"])
def test_an_endless_template_ends_with_a_diagnostic_within_the_time_limit(tmp_path: Path, loops: str) -> None:
    """Two nested loops (10^10 steps): with --template-timeout 2 the run ends
    within seconds with TEMPLATE at the template's line; OUT as it was. Loops
    that write may run out of memory first (the bound of each process):
    TEMPLATE as well, at the first template of DIR when the output, not a
    template line, was being put together."""
    import time

    out = tmp_path / "out"
    assert main(["generate", str(CONFORMANCE), "-o", str(out), "--no-cache", "--only", "docs"]) == 0
    before = _snapshot(out)
    directory = _template(tmp_path, "docs/event.md.jinja", "# {{ page.type }}\n\n" + loops)
    started = time.monotonic()
    result = run_evcat("generate", str(CONFORMANCE), "-o", str(out), "--no-cache", "--only", "docs",
                       "--templates", str(directory), "--template-timeout", "2")
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    shown = str((directory / "docs" / "event.md.jinja").resolve())
    if loops == ENDLESS:
        assert result.stdout.startswith(f"{shown}:3:1: error TEMPLATE "), result.stdout
        assert "longer than 2 s" in result.stdout and "--template-timeout" in result.stdout
    else:
        assert result.stdout.startswith((f"{shown}:3:1: error TEMPLATE ", f"{shown}:1:1: error TEMPLATE ")), result.stdout
        assert "longer than 2 s" in result.stdout or "more memory" in result.stdout, result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert elapsed < 20, elapsed  # 2 s, plus starting evcat and linting
    assert _snapshot(out) == before


@pytest.mark.own_process  # a child started fresh (a threaded process) imports jinja2 first: over 1 s under load
def test_the_time_limit_is_in_the_run_config(tmp_path: Path) -> None:
    """The Python API: ``RunConfig.template_timeout``; the default is documented (30 s)."""
    assert RunConfig().template_timeout == 30.0
    assert "--template-timeout SECONDS" in run_evcat("generate", "--help").stdout
    directory = _template(tmp_path, "docs/index.md.jinja", "x\n" + ENDLESS)
    catalog_set = lint(str(CONFORMANCE)).catalog_set
    for jobs in (1, 2):
        with pytest.raises(template_module.TemplateError) as raised:
            render(catalog_set, ["docs"], RunConfig(jobs=jobs, templates=use_templates(str(directory)), template_timeout=1))
        assert raised.value.file == str((directory / "docs" / "index.md.jinja").resolve())
        assert raised.value.line == 2 and "longer than 1 s" in raised.value.message


def test_a_huge_string_ends_with_a_diagnostic_within_the_memory_bound(tmp_path: Path) -> None:
    """``'x' * 2000000000`` would take 2 GB (and more to write it): the
    process that renders it may grow by at most 1 GiB, so it ends with
    TEMPLATE; no process of the run grows past the bound (peak RSS of evcat
    and every process it started, as the kernel counts them)."""
    import subprocess
    import sys

    out = tmp_path / "out"
    directory = _template(tmp_path, "docs/event.md.jinja", "# {{ page.type }}\n{{ 'x' * 2000000000 }}\n")
    measure = ("import resource, subprocess, sys\n"
               "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
               "print(done.returncode)\n"
               "sys.stdout.write(done.stdout)\n")
    command = [sys.executable, "-c", measure, sys.executable, "-m", "generator", "generate", str(CONFORMANCE),
               "-o", str(out), "--no-cache", "--only", "docs", "--templates", str(directory)]
    result = subprocess.run(command, check=False, capture_output=True, text=True, cwd=ROOT, timeout=600,
                            env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    peak, code, output = result.stdout.split("\n", 2)
    assert int(peak) < 1 << 30, f"peak RSS {int(peak) / 2**20:.0f} MiB"
    assert code == "2", output
    shown = str((directory / "docs" / "event.md.jinja").resolve())
    assert output.startswith(f"{shown}:2:1: error TEMPLATE "), output
    assert "more memory" in output and "Traceback" not in output
    assert not out.exists()


def test_a_normal_custom_template_renders_under_the_limits(tmp_path: Path) -> None:
    """Loops, filters and includes of an ordinary template: unchanged output, in time."""
    text = ("{% include 'builtin/docs/event.md.jinja' %}\n"
            "{% for a in range(300) %}{% for b in range(300) %}{% if a == b %}{{ a|string|center(5) }}{% endif %}"
            "{% endfor %}{% endfor %}\n")
    directory = _template(tmp_path, "docs/event.md.jinja", text)
    catalog_set = lint(str(CONFORMANCE)).catalog_set
    builtin = render(catalog_set, ["docs"], RunConfig(jobs=1))["docs"]
    custom = render(catalog_set, ["docs"], RunConfig(jobs=1, templates=use_templates(str(directory)), template_timeout=20))["docs"]
    page = "docs/markdown/cloudevents-conformance/io.cloudevents.test.md"
    tail = "".join(str(a).center(5) for a in range(300))
    assert custom[page].startswith(builtin[page].rstrip(b"\n")) and custom[page].endswith(tail.encode())
    assert {path: content for path, content in custom.items() if path != page} == \
        {path: content for path, content in builtin.items() if path != page}


def test_a_threaded_caller_gets_the_same_limits(tmp_path: Path) -> None:
    """A process with threads may not fork (engine.workers): the child is
    started fresh instead, under the same limits, with the same output."""
    import threading

    from generator.engine import workers

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        assert not workers.single_threaded()
        catalog_set = lint(str(CONFORMANCE)).catalog_set
        endless = use_templates(str(_template(tmp_path / "endless", "docs/index.md.jinja", "x\n" + ENDLESS)))
        with pytest.raises(template_module.TemplateError) as raised:
            # 3 s: the deadline counts from the start of the run, and a child started
            # fresh (not forked) imports jinja2 first, which takes over 1 s on a loaded machine
            render(catalog_set, ["docs"], RunConfig(jobs=1, templates=endless, template_timeout=3))
        assert raised.value.line == 2 and "longer than 3 s" in raised.value.message
        huge = use_templates(str(_template(tmp_path / "huge", "docs/index.md.jinja", "x\n\n{{ 'x' * 2000000000 }}\n")))
        with pytest.raises(template_module.TemplateError) as raised:
            render(catalog_set, ["docs"], RunConfig(jobs=1, templates=huge))
        assert raised.value.line == 3 and "more memory" in raised.value.message
        copy = use_templates(str(_template(tmp_path / "copy", "docs/index.md.jinja",
                                           (template_module.builtin_dir() / "docs" / "index.md.jinja").read_text())))
        assert render(catalog_set, ["docs"], RunConfig(jobs=1, templates=copy)) == render(catalog_set, ["docs"], RunConfig(jobs=1))
    finally:
        stop.set()
        thread.join()


@pytest.mark.own_process
def test_all_that_the_templates_write_is_bounded(tmp_path: Path) -> None:
    """Each unit's output fits in its process, but many units could add up in
    evcat's own: all that DIR's templates write is bounded by the same number."""
    # 24 catalogs of a 0.5 MB page each: every page fits in its process (its
    # copies too, in the 8 MiB of address space a fresh process has to grow
    # into: 3 MB pages hit that bound first, 0.75 MB ones on Python 3.13),
    # together they are 12 MB.
    from .conftest import catalog_text

    catalogs = tmp_path / "catalogs"
    catalogs.mkdir()
    for number in range(24):
        (catalogs / f"c{number}.yaml").write_text(catalog_text(catalog_id=f"c{number}"), encoding="utf-8")
    directory = _template(tmp_path, "docs/event.md.jinja", "{{ 'y' * 500000 }}\n")
    catalog_set = lint(str(catalogs)).catalog_set
    pages = len([unit for unit in outputs.units("docs", catalog_set) if not unit.local])
    assert pages >= 17
    config = RunConfig(jobs=1, templates=use_templates(str(directory)), template_memory=8 << 20)
    with pytest.raises(template_module.TemplateError) as raised:
        render(catalog_set, ["docs"], config)
    assert "wrote more than 8 MiB" in raised.value.message
    assert raised.value.file == str((directory / "docs" / "event.md.jinja").resolve())
    render(catalog_set, ["docs"], replace(config, template_memory=1 << 30))  # the same with room enough


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_no_template_outlives_the_run(tmp_path: Path, jobs: str) -> None:
    """evcat killed while an endless template renders: the processes that
    render it end with it, not at their deadline (30 s here)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    directory = _template(tmp_path, "docs/event.md.jinja", ENDLESS)
    marker = str(tmp_path / "out-marker")
    process = subprocess.Popen([sys.executable, "-m", "generator", "generate", str(ROOT / "catalog"), "-o", marker,
                                "--no-cache", "--only", "docs", "--templates", str(directory)], cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT), "EVCAT_JOBS": jobs},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def rendering() -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as handle:
                        if marker.encode() in handle.read():
                            found.append(int(entry))
                except OSError:
                    continue
        return found

    try:
        deadline = time.monotonic() + 20
        while len(rendering()) < 2 and time.monotonic() < deadline:  # evcat and a child rendering
            time.sleep(0.1)
        assert len(rendering()) >= 2, "no child rendered the template"
        time.sleep(0.5)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + 5
        while rendering() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert rendering() == [], "a template still renders after evcat ended"
    finally:
        for pid in rendering():
            os.kill(pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
