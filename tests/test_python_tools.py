"""The generated packages as the tools their users run see them (issue 20).

Every package generated from the shipped catalogs and the test catalogs that
generate (``tests.goldens.CATALOGS``) is checked with the real tools:
ruff (its default rules, and F, I, UP, B for Python 3.11), pyright in strict
mode, mypy ``--strict`` and pyright strict in fresh venvs with only pydantic
and with every extra (issue 31), and at run time for what a type checker
cannot see (``__all__``, the shared schemas by name, deprecation warnings).
mypy ``--strict`` (this interpreter) and black are checked in
tests/test_python_output.py.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from generator.commands.lint import lint
from generator.naming import python_package_name

from .goldens import CATALOGS
from .test_python_output import _example, generated, package  # noqa: F401  (generated: the shared fixture)

RUFF_RULES = "F,I,UP,B"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def pyright() -> list[str]:
    """The command running pyright: the PyPI package ``pyright`` pinned in the
    test extra (pyproject.toml), which bundles pyright and runs it with node.
    Installed on first use when missing; with ``--outputjson`` and
    PYRIGHT_PYTHON_IGNORE_WARNINGS it needs no network."""
    import shutil
    import tomllib

    if shutil.which("node") is None:
        pytest.fail("node is needed for pyright (apt-get install nodejs)")
    if importlib.util.find_spec("pyright") is None:
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
        pinned = next(requirement for requirement in extras if requirement.startswith("pyright"))
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", pinned], check=True, timeout=600)
    return [sys.executable, "-m", "pyright", "--outputjson"]


def _run_pyright(command: list[str], config: dict[str, object], paths: list[Path], cwd: Path) -> dict[str, Any]:
    (cwd / "pyrightconfig.json").write_text(json.dumps(config))
    result = subprocess.run(
        [*command, "--project", str(cwd / "pyrightconfig.json"), "--pythonpath", sys.executable, *map(str, paths)],
        capture_output=True, text=True, timeout=600, cwd=cwd, env=dict(os.environ, PYRIGHT_PYTHON_IGNORE_WARNINGS="1"),
    )
    assert result.stdout.startswith("{"), result.stdout[-3000:] + result.stderr[-3000:]
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _packages(generated: Path) -> list[Path]:
    found = sorted(path for path in generated.iterdir() if path.is_dir() and (path / "__init__.py").exists())
    expected = {python_package_name(catalog.id) for directory in CATALOGS.values()
                for catalog in lint(str(directory)).catalog_set.catalogs}
    assert {path.name for path in found} == expected
    return found


def test_ruff_check_passes_on_every_generated_package(generated: Path) -> None:
    from ruff.__main__ import find_ruff_bin

    packages = _packages(generated)
    result = subprocess.run(
        [find_ruff_bin(), "check", "--isolated", "--no-cache", "--target-version", "py311", "--select", RUFF_RULES,
         "--output-format", "concise", "--show-files", *map(str, packages)],
        capture_output=True, text=True, timeout=120,
    )
    checked = [line for line in result.stdout.splitlines() if line.endswith(".py")]
    assert len(checked) >= 10 * len(packages), result.stdout  # every module was looked at
    result = subprocess.run(
        [find_ruff_bin(), "check", "--isolated", "--no-cache", "--target-version", "py311", "--select", RUFF_RULES,
         "--output-format", "concise", *map(str, packages)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout[-5000:]


def test_ruff_check_passes_on_the_runtime_in_place() -> None:
    from ruff.__main__ import find_ruff_bin

    runtime = Path(__file__).resolve().parents[1] / "generator" / "runtime"
    result = subprocess.run(
        [find_ruff_bin(), "check", "--isolated", "--no-cache", "--target-version", "py311", "--select", RUFF_RULES,
         "--output-format", "concise", str(runtime)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout[-5000:]


def test_pyright_strict_passes_on_every_generated_package(generated: Path, tmp_path: Path, pyright: list[str]) -> None:
    """pyright in strict mode over every package, with this interpreter's
    site-packages (pydantic, httpx, the broker clients of the extras)."""
    packages = _packages(generated)
    report = _run_pyright(pyright, {"typeCheckingMode": "strict", "pythonVersion": "3.11"}, packages, tmp_path)
    problems = [
        f"{Path(d['file']).relative_to(generated)}:{d['range']['start']['line'] + 1}: {d.get('rule')}: {d['message']}"
        for d in report["generalDiagnostics"] if d["severity"] in ("error", "warning")
    ]
    assert report["summary"]["filesAnalyzed"] >= 10 * len(packages)
    assert not problems, "\n".join(problems[:60])


def test_ruff_default_rules_pass_on_every_generated_package(generated: Path) -> None:
    """``ruff check`` with nothing selected (the pinned ruff's default rules, as
    a user runs it) over every package (issue 31: RUF022, BLE001, TRY004, FURB192)."""
    from ruff.__main__ import find_ruff_bin

    packages = _packages(generated)
    result = subprocess.run(
        [find_ruff_bin(), "check", "--isolated", "--no-cache", "--target-version", "py311", "--output-format", "concise",
         *map(str, packages)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout[-5000:]


# What every generated package needs: pydantic, and jiter (pydantic's JSON
# parser, which refuses repeated names). "pydantic-only" below means these.
BASE = ["jiter>=0.7", "pydantic>=2.6"]


def _extras(generated: Path) -> list[str]:
    """Every requirement of every extra of the generated packages' pyproject.toml."""
    import tomllib

    found: set[str] = set()
    for package_dir in _packages(generated):
        project = tomllib.loads((package_dir / "pyproject.toml").read_text())["project"]
        assert project["dependencies"] == BASE
        for requirements in project["optional-dependencies"].values():
            found.update(requirements)
    assert {"rabbitmq", "mqtt", "kafka"} <= {extra for package_dir in _packages(generated) for extra in tomllib.loads(
        (package_dir / "pyproject.toml").read_text())["project"]["optional-dependencies"]}
    return sorted(found)


@pytest.fixture(scope="session")
def venvs(generated: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two fresh virtual environments (pip, from the package index): one with
    only pydantic, as the README says the package needs, and one with every
    extra of the generated packages. Returns their interpreters."""
    root = tmp_path_factory.mktemp("venvs")
    pythons: dict[str, Path] = {}
    for name, requirements in (("pydantic-only", BASE), ("all-extras", [*BASE, *_extras(generated)])):
        subprocess.run([sys.executable, "-m", "venv", str(root / name)], check=True, timeout=300)
        python = root / name / "bin" / "python"
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements],
                       check=True, timeout=900, capture_output=True)
        pythons[name] = python
    listed = subprocess.run([str(pythons["pydantic-only"]), "-m", "pip", "list", "--format", "json"], check=True,
                            capture_output=True, text=True, timeout=120)
    installed = {entry["name"].lower() for entry in json.loads(listed.stdout)}
    assert "pydantic" in installed and not installed & {"httpx", "aio-pika", "aiokafka", "paho-mqtt", "uvicorn"}
    return pythons


# What a user with the extras writes: the broker clients' and httpx's own
# objects handed to the package's adapters (their types are Protocols).
USES_EXTRAS = """\
from __future__ import annotations

import aio_pika
import httpx
from aio_pika.abc import AbstractExchange, AbstractIncomingMessage, AbstractQueue
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer  # type: ignore[import-untyped]
from paho.mqtt.client import Client, MQTTMessage

from meter_data import EVENTS, kafka, mqtt, rabbitmq
from meter_data._delivery import Policy, run, run_async
from meter_data.events import MdmMeterRemoved


async def use(
    exchange: AbstractExchange,
    queue: AbstractQueue,
    incoming: AbstractIncomingMessage,
    producer: AIOKafkaProducer,
    kafka_consumer: AIOKafkaConsumer,
    client: Client,
    received: MQTTMessage,
    event: MdmMeterRemoved,
) -> None:
    built: aio_pika.Message = rabbitmq.message(event)
    await exchange.publish(built, routing_key="meter")
    await rabbitmq.publish(exchange, event, "meter")
    amqp = rabbitmq.Consumer(EVENTS)
    await amqp.handle(incoming)
    await amqp.consume(queue)
    await kafka.publish(producer, "meter", event)
    await kafka.Consumer(EVENTS).consume(aiter(kafka_consumer))
    mqtt.publish(client, "meter", event)
    consumer = mqtt.Consumer(EVENTS)
    client.on_message = consumer.on_message
    consumer.on_message(client, None, received)
    run("http://127.0.0.1/", [], [], Policy(), client=httpx.Client())
    await run_async("http://127.0.0.1/", [], [], Policy(), client=httpx.AsyncClient())
"""


@pytest.mark.parametrize("environment", ["pydantic-only", "all-extras"])
def test_mypy_and_pyright_strict_pass_with_only_pydantic_and_with_every_extra(
    generated: Path, venvs: dict[str, Path], tmp_path: Path, pyright: list[str], environment: str,
) -> None:
    """Issue 31: the optional modules (kafka, mqtt, rabbitmq, delivery) import
    their libraries only when used, so both checkers pass over every package in
    a venv with only pydantic and in one with every extra; with the extras,
    the libraries' own objects fit the adapters' parameter types."""
    python = venvs[environment]
    packages = _packages(generated)
    paths = [str(path) for path in packages]
    if environment == "all-extras":
        (tmp_path / "uses_extras.py").write_text(USES_EXTRAS)
        paths.append(str(tmp_path / "uses_extras.py"))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir=/dev/null",
         "--python-executable", str(python), *paths],
        capture_output=True, text=True, timeout=600, cwd=generated,
    )
    assert result.returncode == 0, result.stdout[-5000:]
    assert "Success" in result.stdout
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11",
                                                            "extraPaths": [str(generated)]}))
    run = subprocess.run(
        [*pyright, "--project", str(tmp_path / "pyrightconfig.json"), "--pythonpath", str(python), *paths],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env=dict(os.environ, PYRIGHT_PYTHON_IGNORE_WARNINGS="1"),
    )
    assert run.stdout.startswith("{"), run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads(run.stdout)
    problems = [f"{d['file']}:{d['range']['start']['line'] + 1}: {d.get('rule')}: {d['message']}"
                for d in report["generalDiagnostics"] if d["severity"] in ("error", "warning")]
    assert report["summary"]["filesAnalyzed"] >= 10 * len(packages)
    assert not problems, "\n".join(problems[:60])


def _module_names(tree: ast.Module) -> set[str]:
    """Public names a module binds at its top level (classes, functions, assignments)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def test_every_module_declares_all_and_it_names_what_exists(generated: Path) -> None:
    for package_dir in _packages(generated):
        module = importlib.import_module(package_dir.name)
        for path in sorted(package_dir.glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            declared = [node for node in tree.body if (isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)) or (
                isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "__all__")]
            assert len(declared) == 1, f"{path.relative_to(generated)} has no __all__"
            names = ast.literal_eval(declared[0].value)
            assert len(names) == len(set(names)), path
            if path.name.startswith("_") or path.name in ("kafka.py", "rabbitmq.py", "mqtt.py", "webhook.py", "delivery.py"):
                continue  # the runtime and the modules that need an extra: read, not imported
            imported = module if path.name == "__init__.py" else getattr(module, path.stem)
            for name in names:
                assert hasattr(imported, name), f"{path.relative_to(generated)}: __all__ names {name!r}"
            if path.name == "models.py":
                # every public class and type alias of the payload models is exported
                assert _module_names(tree) <= set(names), path


DEPRECATED = ("mdm.meter.updated", "1.0.1")  # catalog/normo: "Use dataversion 2.0.0, which carries the full register list."


def test_constructing_a_deprecated_event_version_warns_with_the_catalogs_text(generated: Path) -> None:
    module = package(generated, "meter-data")
    event, example = _example(*DEPRECATED)
    assert event.deprecated and event.deprecation
    cls = module.EVENTS[DEPRECATED]
    data = cls.model_fields["data"].annotation.model_validate(example["data"])
    with pytest.warns(DeprecationWarning) as caught:
        created = cls(data=data, gridoperator="8716871000002")
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message == f"mdm.meter.updated 1.0.1 is deprecated: {event.deprecation.strip()}"
    assert caught[0].filename == __file__  # the warning points at the constructing line
    assert cls.__deprecated__ == message  # what type checkers read (typing_extensions.deprecated)
    # A current version does not warn.
    current = module.EVENTS[("mdm.meter.updated", "2.0.0")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        current(data=current.model_fields["data"].annotation.model_validate(_example("mdm.meter.updated", "2.0.0")[1]["data"]),
                gridoperator="8716871000002")
    assert created.to_dict()["dataversion"] == "1.0.1"


def test_parsing_a_deprecated_event_version_does_not_warn(generated: Path) -> None:
    """A consumer cannot choose what it receives: parse_event, from_http and
    model_validate of a deprecated version are silent."""
    module = package(generated, "meter-data")
    _, example = _example(*DEPRECATED)
    cls = module.EVENTS[DEPRECATED]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parsed = module.parse_event(json.dumps(example))
        assert type(parsed) is cls
        for mode in ("structured", "binary"):
            assert module.from_http(*module.to_http(parsed, mode)) == parsed
        assert module.parse_batch(json.dumps([example])) == [parsed]
        assert cls.model_validate(example) == parsed
        assert parsed.model_copy() == parsed


def test_type_checkers_flag_a_deprecated_event_version(generated: Path, tmp_path: Path, pyright: list[str]) -> None:
    """pyright (reportDeprecated) and mypy (error code ``deprecated``) report the
    use of a deprecated version in a user's module, with the catalog's text."""
    module = package(generated, "meter-data")
    old, new = module.EVENTS[DEPRECATED].__name__, module.EVENTS[("mdm.meter.updated", "2.0.0")].__name__
    user = tmp_path / "user_module.py"
    user.write_text(
        f"from meter_data import {old}, {new}\n\n\n"
        f"def upgrade(old: {old}) -> {new} | None:\n"
        "    return None\n"
    )
    text = "Use dataversion 2.0.0, which carries the full register list."
    env = dict(os.environ, MYPYPATH=str(generated))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--enable-error-code", "deprecated", "--no-incremental",
         "--cache-dir=/dev/null", str(user)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env,
    )
    flagged = [line for line in result.stdout.splitlines() if line.startswith(user.name)]
    assert flagged and all("[deprecated]" in line and text in line for line in flagged), result.stdout
    assert not any(f"{new} is deprecated" in line for line in flagged)
    # The package's own references to its deprecated versions (EVENTS, AnyEvent) are not flagged.
    assert len(flagged) + 1 == len(result.stdout.splitlines()), result.stdout
    report = _run_pyright(pyright, {"typeCheckingMode": "strict", "reportDeprecated": "error",
                                    "extraPaths": [str(generated)], "pythonVersion": "3.11"}, [user], tmp_path)
    diagnostics = report["generalDiagnostics"]
    deprecated = [d for d in diagnostics if d.get("rule") == "reportDeprecated"]
    assert len(deprecated) == 2 and all(text in d["message"] for d in deprecated), diagnostics  # the import and the annotation
    assert len(deprecated) == len(diagnostics), diagnostics


SHARED = """\
schemas:
  Status:
    type: string
    description: Status of a case.
    enum: [open, in-behandeling, closed]
  Code:
    type: string
    description: A three-letter code.
    pattern: "^[A-Z]{3}$"
  Codes:
    type: array
    description: Several codes.
    items: {$ref: "#/schemas/Code"}
"""
SHARED_EVENT = """\
  - type: nl.test.thing-happened
    dataversion: 1.0.0
    title: Thing happened
    description: A thing happened.
    data:
      type: object
      description: The thing.
      required: [status]
      properties:
        status: {$ref: "#/schemas/Status"}
        previous: {$ref: "#/schemas/Status", description: The status before.}
        history: {type: array, description: Earlier states., items: {$ref: "#/schemas/Status"}}
        codes: {$ref: "#/schemas/Codes"}
"""


def test_shared_schemas_that_are_no_object_are_named_types(tmp_path: Path) -> None:
    """A shared enum (or patterned string, or array) is a named type alias of
    models.py, exported, documented, and used by every field that refers to it;
    the wire verdicts are those of the schema."""
    from pydantic import TypeAdapter, ValidationError

    from generator.commands.generate import render

    from .conftest import catalog_text

    (tmp_path / "catalog.yaml").write_text(catalog_text(header=SHARED, events=SHARED_EVENT, catalog_id="shared-types"))
    result = lint(str(tmp_path))
    assert not result.has_errors, result.diagnostics
    out = tmp_path / "out"
    for relative, content in render(result.catalog_set, ["python"])["python"].items():
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        (out / relative).write_bytes(content)
    source = (out / "python" / "shared_types" / "models.py").read_text()
    assert re.search(r'^Status = TypeAliasType\("Status", Literal\["open", "in-behandeling", "closed"\]\)\n"""\nStatus of a case\.\n"""', source, re.MULTILINE), source
    assert re.search(r"^    status: Status$", source, re.MULTILINE) and "previous: Status | None" in source
    assert "history: list[Status] | None" in source and "codes: Codes | None" in source
    assert source.count("Literal[") == 1 and source.count("^[A-Z]{3}$") == 1  # one home each
    sys.path.insert(0, str(out / "python"))
    try:
        module = importlib.import_module("shared_types")
        models = module.models
        assert {"Status", "Code", "Codes", "ThingHappenedV1_0_0Data"} <= set(models.__all__)
        from shared_types.models import Code, Status  # importable by name

        assert TypeAdapter(Status).validate_python("open") == "open"
        with pytest.raises(ValidationError):
            TypeAdapter(Code).validate_python("abc")
        event = {"specversion": "1.0", "id": "1", "source": "urn:nld:oin:00000001823288444000:systeem:test",
                 "type": "nl.test.thing-happened", "dataversion": "1.0.0",
                 "data": {"status": "open", "history": ["closed"], "codes": ["ABC"]}}
        parsed = module.parse_event(event)
        assert parsed.to_dict() == event
        for bad in ({"status": "gesloten"}, {"status": "open", "codes": ["abc"]}, {"status": "open", "previous": None}):
            with pytest.raises(ValidationError):
                module.parse_event({**event, "data": bad})
        schema = models.ThingHappenedV1_0_0Data.model_json_schema()  # OpenAPI (FastAPI) names them too
        assert schema["properties"]["status"] == {"$ref": "#/$defs/Status"} and "Status" in schema["$defs"]
    finally:
        sys.path.remove(str(out / "python"))


def test_payload_models_repeat_no_config(generated: Path) -> None:
    """Payload models derive their config from the runtime's Payload; a model
    states only what its schema asks for (extra="forbid" of a closed schema)."""
    for path in sorted(generated.glob("*/models.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "model_config" for t in node.targets):
                assert isinstance(node.value, ast.Call)
                keywords = {k.arg: ast.literal_eval(k.value) for k in node.value.keywords}
                assert keywords == {"extra": "forbid"}, f"{path.relative_to(generated)}:{node.lineno}: {keywords}"
