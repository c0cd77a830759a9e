"""evcat's JSON Schemas and AsyncAPI documents in the tools users already have
(issue 20): Modelina (TypeScript and Python models, named as evcat's Python
classes; the TypeScript compiles under ``tsc --strict``), ajv in strict mode
(draft 2020-12), json-schema-to-typescript (its output under ``tsc --strict``)
and check-jsonschema, over the outputs of the shipped catalogs and of every
test catalog that generates. Each node tool runs once over all files (pinned
in tests/node/package-lock.json, see the ``node_tools`` fixture)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.envelope import envelope_id, payload_id
from generator.commands.lint import lint
from generator.model import CatalogSet, EventType
from generator.naming import python_package_name

from .conftest import ROOT, run_evcat

CATALOGS = [ROOT / "catalog", ROOT / "tests" / "catalogs" / "hostile", ROOT / "tests" / "catalogs" / "conformance"]
# Modelina 5.10.1 writes the hostile catalog's enum values and constants
# (quotes, backslashes) into TypeScript and Python string literals unescaped,
# and a payload property `self` as a second `self` parameter: its output does
# not compile, whatever the input document says. Names are still checked there.
MODELINA_UNCOMPILABLE = {"hostile-names"}


@dataclass
class Generated:
    out: Path
    catalog_sets: list[CatalogSet]

    @property
    def events(self) -> list[EventType]:
        return [event for catalog_set in self.catalog_sets for event in catalog_set.events]

    def schemas(self) -> list[Path]:
        return sorted((self.out / "jsonschema").rglob("*.schema.json"))

    def documents(self) -> list[Path]:
        return sorted((self.out / "asyncapi").glob("*.yaml"))


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    out = tmp_path_factory.mktemp("ecosystem")
    catalog_sets = []
    for catalog in CATALOGS:
        # One OUT per catalog (evcat generate owns its OUT), merged below.
        target = out / "runs" / catalog.name
        run = run_evcat("generate", str(catalog), "-o", str(target), "--only", "python,jsonschema,asyncapi", "--no-cache")
        assert run.returncode == 0, run.stderr
        for kind in ("python", "jsonschema", "asyncapi"):
            for path in (target / kind).rglob("*"):
                if path.is_file() and path.name != "index.json":
                    destination = out / kind / path.relative_to(target / kind)
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, destination)
        catalog_sets.append(lint(str(catalog)).catalog_set)
    return Generated(out, catalog_sets)


def node(node_tools: Path, script: str, *args: str, stdin: str | None = None) -> Any:
    run = subprocess.run(["node", str(node_tools / script), *args], capture_output=True, text=True, timeout=600, input=stdin,
                         check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def tsc(node_tools: Path, files: list[Path]) -> None:
    run = subprocess.run(
        [str(node_tools / "node_modules" / ".bin" / "tsc"), "--strict", "--noEmit", "--target", "es2022",
         "--module", "nodenext", "--moduleResolution", "nodenext", *map(str, files)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert run.returncode == 0, run.stdout[-5000:]


def examples(generated: Generated) -> list[tuple[EventType, dict[str, Any]]]:
    """Every catalog example as the full structured-mode event a producer sends."""
    cases = []
    for event in generated.events:
        for example in event.examples:
            cases.append((event, event.complete_example(example.values)))
    assert len(cases) >= 10
    return cases


def python_class_names(generated: Generated) -> dict[str, set[str]]:
    """{catalog id: names of the classes its generated package defines}, read by importing it."""
    script = (
        "import importlib, inspect, json, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "names = {}\n"
        "for catalog, package in json.loads(sys.argv[2]).items():\n"
        "    found = set()\n"
        "    for module in ('models', 'events'):\n"
        "        loaded = importlib.import_module(f'{package}.{module}')\n"
        "        found |= {name for name, value in vars(loaded).items()\n"
        "                  if inspect.isclass(value) and value.__module__ == loaded.__name__ and value.__name__ == name}\n"
        "    names[catalog] = sorted(found)\n"
        "print(json.dumps(names))\n"
    )
    packages = {c.id: python_package_name(c.id) for catalog_set in generated.catalog_sets for c in catalog_set.catalogs}
    run = subprocess.run([sys.executable, "-c", script, str(generated.out / "python"), json.dumps(packages)],
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    return {catalog: set(names) for catalog, names in json.loads(run.stdout).items()}


def test_ajv_strict_compiles_every_schema_and_validates_every_example(node_tools: Path, generated: Generated) -> None:
    schemas = generated.schemas()
    instances: list[tuple[str, Any]] = []
    expected: list[bool] = []
    for event, full in examples(generated):
        instances.append((envelope_id(event), full))
        expected.append(True)
        if event.payload is not None:
            instances.append((payload_id(event), full["data"]))
            expected.append(True)
        instances.append((envelope_id(event), {key: value for key, value in full.items() if key != "id"}))
        expected.append(False)  # without its id: ajv must say no
    result = node(node_tools, "ajv-check.mjs", stdin=json.dumps({"schemas": list(map(str, schemas)), "instances": instances}))
    assert {file: error for file, error in result["schemas"].items() if error} == {}
    assert len(result["schemas"]) == len(schemas) == sum(1 + (e.payload is not None) for e in generated.events)
    verdicts = [errors is None for errors in result["instances"]]
    wrong = [(instances[i][0], result["instances"][i]) for i, ok in enumerate(verdicts) if ok != expected[i]]
    assert wrong == []


def test_check_jsonschema_accepts_every_schema(generated: Generated) -> None:
    checker = shutil.which("check-jsonschema")
    if checker is None:
        pytest.fail("check-jsonschema is a test dependency: pip install -e '.[test]'")
    schemas = generated.schemas()
    run = subprocess.run([checker, "--check-metaschema", *map(str, schemas)], capture_output=True, text=True, timeout=300,
                         check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    # (every example against its event.schema.json: test_one_verdict.py)


def test_json_schema_to_typescript_output_compiles_strict(node_tools: Path, generated: Generated, tmp_path: Path) -> None:
    schemas = generated.schemas()
    result = node(node_tools, "json2ts.mjs", str(tmp_path), *map(str, schemas))
    assert {file: error for file, error in result.items() if error} == {}
    files = sorted(tmp_path.glob("*.ts"))
    assert len(files) == len(schemas)
    # Every type is named by a title of its schema (evcat's class names), none
    # twice: a `$ref` with a sibling keyword (a `description`) made it copy the
    # target as `Adres1` (issue 31).
    wrong = {}
    for index, schema in enumerate(schemas):
        titles = schema_titles(json.loads(schema.read_text(encoding="utf-8"))) | {f"Schema{index}"}
        text = (tmp_path / f"schema{index}.ts").read_text(encoding="utf-8")
        names = re.findall(r"^export (?:interface|type) (\w+)", text, re.MULTILINE)
        unknown = [name for name in names if name not in titles] + [name for name in set(names) if names.count(name) > 1]
        if unknown:
            wrong[str(schema.relative_to(generated.out))] = unknown
    assert wrong == {}
    tsc(node_tools, files)


def schema_titles(value: Any) -> set[str]:
    """Every ``title`` of a schema document (json-schema-to-typescript names types by them)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, child in value.items():
            if key == "title" and isinstance(child, str):
                found.add(child)
            elif key not in ("examples", "enum", "const", "default"):
                found |= schema_titles(child)
    elif isinstance(value, list):
        for child in value:
            found |= schema_titles(child)
    return found


def enum_titles(document: Path) -> set[str]:
    """The titles of the enum schemas of an AsyncAPI document."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if "enum" in value and isinstance(value.get("title"), str):
                found.add(value["title"])
            for key, child in value.items():
                if key not in ("examples", "enum", "const", "default"):
                    walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    walk(yaml.safe_load(document.read_text(encoding="utf-8")))
    return found


def modelina_python_name(name: str) -> str:
    """Modelina's Python generator merges numbers (``toPascalCaseMergingNumbers``,
    its default model name formatter): ``V2_0_0`` becomes ``V200``."""
    return re.sub(r"(?<=[0-9])_(?=[0-9])", "", name)


def test_modelina_models_are_named_as_the_python_classes(node_tools: Path, generated: Generated, tmp_path: Path) -> None:
    """Modelina with its default options: every object model is an envelope or
    payload class of the generated package, by the same name (Python: as
    Modelina's default Python naming spells it; with the README's one
    model-name option, exactly), and every class of the package is a model; enums are named by the same path rule (``naming.child_class_name``),
    none anonymous, none empty, and no other model: Modelina makes a union
    (named after the channel, empty in Python) of an operation's messages, so
    each operation sends one message."""
    documents = generated.documents()
    result = node(node_tools, "modelina.mjs", str(tmp_path), *map(str, documents))
    names = python_class_names(generated)
    compilable: list[Path] = []
    for index, document in enumerate(documents):
        report = result[str(document)]
        assert report["error"] is None, report["error"]
        catalog = document.stem
        classes = names[catalog]
        enums = enum_titles(document)
        for language, spelled in (("typescript", str), ("python", modelina_python_name), ("python_kept", str)):
            models = {model["name"]: model["kind"] for model in report[language]}
            objects = {name for name, kind in models.items() if kind == "ConstrainedObjectModel"}
            assert objects == {spelled(name) for name in classes}, (catalog, language)
            assert {name for name, kind in models.items() if kind == "ConstrainedEnumModel"} == {spelled(t) for t in enums}
            others = {name for name, kind in models.items() if kind not in ("ConstrainedObjectModel", "ConstrainedEnumModel")}
            assert others == set(), (catalog, language, others)
            assert not [name for name in models if "AnonymousSchema" in name], models
            # Every model generate() returns has a name and a rendering (issue 31:
            # Modelina's Python cannot render a union and names it ""; none is made).
            unnamed = [model for model in report["all"][language] if not model["name"] or not model["rendered"]]
            assert unnamed == [], (catalog, language, unnamed)
            assert len(report["all"][language]) == len(models), (catalog, language)
        if catalog not in MODELINA_UNCOMPILABLE:
            compilable.append(tmp_path / str(index))
        if catalog == "meter-data":  # optional attributes typed, not `any` (type arrays, no `not: {type}`)
            envelope = (tmp_path / str(index) / "ts" / "MdmMeterUpdatedV2_0_0.ts").read_text(encoding="utf-8")
            assert "private _subject?: string | null;" in envelope and "private _validfrom?: string | null;" in envelope
            assert "private _data: MdmMeterUpdatedV2_0_0Data;" in envelope
    assert len(compilable) == len(documents) - 1
    tsc(node_tools, [path for directory in compilable for path in sorted((directory / "ts").glob("*.ts"))])
    for directory in compilable:
        for path in sorted([*(directory / "py").glob("*.py"), *(directory / "py-kept").glob("*.py")]):
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
