"""Typed Python packages: one per catalog (contract §4), needing only pydantic v2.

- ``models.py``: payload models from datamodel-code-generator (pydantic v2),
  from one JSON Schema per catalog in which every object schema carries a
  title made from its event and its path, so class names do not depend on
  other events or their order.
- ``events.py``: one envelope class per (type, dataversion), from the jinja2
  template ``templates/python/events.py.jinja``.
- the runtime (``generator/runtime/*.py``): the JSON format, the HTTP binding
  and the other modules of evcat's runtime, copied verbatim (real modules,
  tested in place, already black-formatted at the generated packages' width).
- ``pyproject.toml``: the package's name, version and extras, so
  ``pip install out/python/<package>[extra]`` works.
- ``__init__.py``: ``EVENTS``, ``parse_event``, ``to_http``, ``from_http`` ...
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import subprocess
import tempfile
import warnings
import unicodedata
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any

from .. import __version__
from ..cachefile import Store
from ..model import Catalog, CatalogSet, EventType
from ..patterns import python_patterns
from ..naming import python_class_name, python_field_name, python_package_name, to_pascal
from ..runtime import EXTRAS, REQUIRES, runtime_files
from ..schemawalk import LIST_OF_SCHEMAS, MAP_OF_SCHEMAS, ONE_SCHEMA
from . import Unit, catalog_inputs, event_order, partial_set, render_all
from .templates import environment

TYPE_ANNOTATIONS = {
    "Boolean": "bool",
    "Integer": "Int32",
    "String": "String",
    "Binary": "Base64Binary",
    "URI": "Uri",
    "URI-reference": "UriReference",
    "Timestamp": "Timestamp",
}


@dataclass
class FieldView:
    name: str
    annotation: str
    default: str | None = None
    doc: str | None = None


@dataclass
class EventView:
    event: EventType
    class_name: str
    data_class: str | None
    fields: list[FieldView] = field(default_factory=list)
    attribute_types: dict[str, str] = field(default_factory=dict)

    @property
    def docstring(self) -> str:
        event = self.event
        lines = [f"{event.title} ({event.type}{' ' + event.dataversion if event.dataversion else ''})."]
        if event.description:
            lines += ["", event.description.strip()]
        if event.deprecated:
            lines += ["", f"Deprecated: {event.deprecation or 'yes'}"]
        return "\n".join(lines)


def class_names(events: list[EventType]) -> dict[tuple[str, str | None], str]:
    """Envelope class names, unique in the catalog: ``MdmMeterUpdatedV2_0_0``."""
    names: dict[tuple[str, str | None], str] = {}
    taken: set[str] = set()
    for event in sorted(events, key=event_order):
        base = python_class_name(event.type)
        if event.dataversion:
            base += "V" + event.dataversion.replace(".", "_")
        name = base
        counter = 2
        while name in taken:
            name = f"{base}_{counter}"
            counter += 1
        taken.add(name)
        names[event.key] = name
    return names


def data_class_names(names: dict[tuple[str, str | None], str]) -> dict[tuple[str, str | None], str]:
    """Payload root classes: the envelope name without underscores (which
    datamodel-code-generator drops from titles) + ``Data``, kept unique."""
    result: dict[tuple[str, str | None], str] = {}
    taken: set[str] = set()
    for key, name in names.items():
        base = name.replace("_", "") + "Data"
        candidate, counter = base, 2
        while candidate in taken:
            candidate, counter = f"{base}{counter}", counter + 1
        taken.add(candidate)
        result[key] = candidate
    return result


def _titled(schema: Any, title: str) -> Any:
    """A copy of ``schema`` whose object schemas are titled by their path
    (class names for datamodel-code-generator); other titles removed."""
    if not isinstance(schema, dict):
        return schema
    result = {key: value for key, value in schema.items() if key != "title"}
    if schema.get("type") == "object" or "properties" in schema:
        result["title"] = title
    for keyword in MAP_OF_SCHEMAS:
        if isinstance(schema.get(keyword), dict) and keyword != "$defs":
            result[keyword] = {
                name: _titled(child, title + to_pascal(name)) for name, child in schema[keyword].items()
            }
    for keyword in ONE_SCHEMA:
        if keyword in schema:
            value = schema[keyword]
            suffix = "Item" if keyword == "items" else to_pascal(keyword)
            if isinstance(value, list):
                result[keyword] = [_titled(child, f"{title}{suffix}{i + 1}") for i, child in enumerate(value)]
            else:
                result[keyword] = _titled(value, title + suffix)
    for keyword in LIST_OF_SCHEMAS:
        if isinstance(schema.get(keyword), list):
            suffix = "Item" if keyword == "prefixItems" else "Option"
            result[keyword] = [_titled(child, f"{title}{suffix}{i + 1}") for i, child in enumerate(schema[keyword])]
    return result


def models_source(catalog: Catalog, catalog_set: CatalogSet, data_names: dict[tuple[str, str | None], str],
                  model_cache: tuple[str, str] | None = None) -> str:
    used: set[str] = set()
    defs: dict[str, Any] = {}
    for event in catalog.events:
        if event.payload is not None:
            used.update(event.payload.uses)
            data_class = data_names[event.key]
            defs[data_class] = _titled(event.payload.schema, data_class)
    for name in sorted(used):
        defs[name] = _titled(catalog_set.schemas[name].schema, name)
    if not defs:
        return '"""This catalog has no payloads: every event is a notification."""\n'
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": _CONTAINER,
        "$defs": python_patterns(dict(sorted(defs.items()))),  # ECMA-262 patterns, written as pydantic reads them
    }
    return _strip_container(_datamodel_codegen(json.dumps(schema, sort_keys=False), model_cache))


# The schema that holds every payload under $defs becomes a class of its own; drop it.
_CONTAINER = "EvcatPayloadContainer"
_CONTAINER_CLASS = re.compile(rf"\n\nclass {_CONTAINER}\(RootModel\[Any\]\):\n(?:    .*(?:\n|\Z)|\n(?=    ))*")


def _strip_container(source: str) -> str:
    stripped = _CONTAINER_CLASS.sub("\n", source)
    # Catalog names like modelDump become model_dump_: pydantic's protected
    # namespaces would warn at import, and the names are safe (they end in "_").
    stripped = stripped.replace("model_config = ConfigDict(\n", "model_config = ConfigDict(\n        protected_namespaces=(),\n")
    body = stripped.split("from pydantic import", 1)[-1].split("\n\n", 1)[-1]
    if "RootModel" not in body:
        stripped = re.sub(r"(from pydantic import [^\n]*?)RootModel, |, RootModel(?=[,\n])", r"\1", stripped)
    if not re.search(r"\bAny\b", body):  # only the container used it
        stripped = re.sub(r"(from typing import [^\n]*?)\bAny, |, Any\b(?=[,\n])|^from typing import Any\n", r"\1", stripped,
                          flags=re.MULTILINE)
    return stripped


@dataclass(frozen=True)
class Settings:
    """How Python output is made, handed to the renderer as a value (with each
    unit, to whichever process renders it): not part of a unit's inputs.

    ``formatter``: see ``format_sources``. ``model_cache``: (cache directory,
    salt) where datamodel-code-generator's output for a catalog's payload
    schemas is kept by content, so a change that leaves every payload alone
    (a title, a description of the event, an example) does not even load
    datamodel-code-generator (almost a second for a fresh process); None: no cache."""

    formatter: str = "ruff"
    model_cache: tuple[str, str] | None = None


@cache
def _datamodel_codegen(schema_text: str, model_cache: tuple[str, str] | None = None) -> str:
    if model_cache is None:
        return _run_datamodel_codegen(schema_text)
    directory, salt = model_cache
    key = hashlib.sha256(f"{salt}\0{schema_text}".encode("utf-8", "surrogatepass")).hexdigest()
    store = Store(directory, "models")
    stored = store.get(key)
    if isinstance(stored, str):
        return stored
    output = _run_datamodel_codegen(schema_text)
    store.put(key, output)
    return output


def warm_up() -> None:
    """Load datamodel-code-generator and run it once (its first call loads
    most of it), so the next catalog renders at full speed."""
    title = "EvcatWarmUp"
    _run_datamodel_codegen(json.dumps({"title": title, "type": "object", "properties": {"a": {"type": "string"}}}))


def _run_datamodel_codegen(schema_text: str) -> str:
    from datamodel_code_generator import DataModelType, InputFileType, PythonVersion, generate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        output = generate(
            schema_text,
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.PydanticV2BaseModel,
            snake_case_field=True,
            allow_population_by_field_name=True,
            use_title_as_name=True,
            enum_field_as_literal="all",
            field_constraints=True,
            use_annotated=True,
            disable_timestamp=True,
            target_python_version=PythonVersion.PY_311,
            use_standard_collections=True,
            use_union_operator=True,
            use_schema_description=True,
            use_field_description=True,
            output_datetime_class="AwareDatetime",
            collapse_root_models=True,
            keep_model_order=True,
            custom_file_header=f"# Generated by evcat {__version__} with datamodel-code-generator: payload models.\n# Do not edit; change the catalog and run evcat generate.",
            formatters=[],  # formatted once, in render_catalog
        )
    assert isinstance(output, str)
    return output


def _event_view(event: EventType, class_name: str, data_class: str) -> EventView:
    normo = event.profile == "normo"
    view = EventView(event, class_name, data_class if event.has_data else None)
    fields = view.fields
    fields.append(FieldView("type", f"Literal[{event.type!r}]", repr(event.type), "The CloudEvents type."))
    if event.dataversion is not None:
        fields.append(FieldView("dataversion", f"Literal[{event.dataversion!r}]", repr(event.dataversion), "Version of the payload."))
    fields.append(FieldView("id", "NonEmptyString", "Field(default_factory=new_id)", event.id))
    fields.append(FieldView("source", "UriReference", repr(event.source), "Where the event comes from."))
    if normo:
        fields.append(FieldView("time", "NormoTimestamp", "Field(default_factory=now)", event.time))
    else:
        fields.append(FieldView("time", "Timestamp | None", "Field(default_factory=now)", event.time))
    if event.subject:
        fields.append(FieldView("subject", "NonEmptyString | None", "None", event.subject))
    if event.has_data:
        default = repr(event.datacontenttype) if event.datacontenttype else "None"
        fields.append(FieldView("datacontenttype", "MediaType | None", default, "Media type of data."))
    if event.dataschema:
        fields.append(FieldView("dataschema", "Uri | None", repr(event.dataschema), "Schema of data."))
    if event.dataref:
        fields.append(FieldView("dataref", "UriReference | None", "None", event.dataref))
    if event.sequencetype:
        fields.append(FieldView("sequence", "SequenceString", None, f"Position in the sequence ({event.sequencetype})."))
        fields.append(FieldView("sequencetype", f"Literal[{event.sequencetype!r}]", repr(event.sequencetype), None))
    for extension in event.extensions:
        python_name = python_field_name(extension.name)
        annotation = TYPE_ANNOTATIONS.get(extension.type, "String")
        if not extension.required:
            annotation += " | None"
        if python_name != extension.name:
            annotation = f"Annotated[{annotation}, Field(alias={extension.name!r})]"
        default = None if extension.required else "None"
        fields.append(FieldView(python_name, annotation, default, extension.description))
        view.attribute_types[extension.name] = extension.type
    if view.data_class:
        fields.append(FieldView("data", f"models.{view.data_class}", None, "The payload."))
    # Required fields first is not needed for keyword-only pydantic models.
    return view


_RUNTIME_NAMES = ("Base64Binary", "Int32", "MediaType", "NonEmptyString", "NormoTimestamp", "SequenceString",
                  "String", "Timestamp", "Uri", "UriReference", "new_id", "now")


def _event_imports(views: list[EventView]) -> dict[str, Any]:
    """What events.py uses, so it imports nothing more (linters flag unused imports)."""
    code = " ".join(f"{f.annotation} {f.default or ''}" for view in views for f in view.fields)
    used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    typing = ["ClassVar", *(name for name in ("Annotated", "Literal") if name in used)]
    return {
        "typing": sorted(typing),
        "pydantic": "Field" in used,
        "models": "models" in used,
        "runtime": ["CloudEvent", *(name for name in _RUNTIME_NAMES if name in used)],
    }


def render_catalog(catalog: Catalog, catalog_set: CatalogSet, settings: Settings = Settings()) -> dict[str, str]:
    package = python_package_name(catalog.id)
    events = sorted(catalog.events, key=event_order)
    names = class_names(events)
    data_names = data_class_names(names)
    views = [_event_view(event, names[event.key], data_names[event.key]) for event in events]
    env = environment()
    context = {"catalog": catalog, "package": package, "version": __version__, "events": views,
               "imports": _event_imports(views)}
    sources = {
        "events.py": env.get_template("python/events.py.jinja").render(context),
        "__init__.py": env.get_template("python/__init__.py.jinja").render(context),
    }
    sources["models.py"] = models_source(catalog, catalog_set, data_names, settings.model_cache)
    formatted = format_sources(sources, settings.formatter)
    formatted.update(runtime_files())
    formatted["pyproject.toml"] = env.get_template("python/pyproject.toml.jinja").render(
        {**context, "requires": REQUIRES, "extras": sorted(EXTRAS.items())}
    )
    formatted["py.typed"] = ""
    return {f"python/{package}/{name}": text for name, text in formatted.items()}


# "ruff": ruff's formatter alone; "black": ruff first, then black over its
# output (black has the last word; two to three times slower on the whole run).
FORMATTERS = ("ruff", "black")


def format_sources(sources: dict[str, str], formatter: str = "ruff") -> dict[str, str]:
    """Black-style formatting of one package's modules.

    ruff's formatter is black-compatible by design and ~100x faster, so it is
    the default; black also formats a module whose text has characters the
    two measure differently (``_widths_may_differ``). The output passes ``black --check`` (the tests check every
    generated module of the golden catalogs, 2,000 random catalogs and the
    1,000-type benchmark catalog with black itself). ``--formatter black``
    runs black over ruff's output, for those who want black's last word.
    Without the ruff binary, black does all the work."""
    preformatted = _ruff(sources)
    if preformatted is not None and formatter == "ruff":
        return {name: _black(source) if _widths_may_differ(source) else source for name, source in preformatted.items()}
    return {name: _black(source) for name, source in (preformatted or sources).items()}


def _widths_may_differ(source: str) -> bool:
    """True when ``source`` holds a character whose display width black and
    ruff may count differently, so a line may fit for one and not the other:
    wide (East Asian W/F), zero-width (combining, format) or not yet assigned
    in Python's Unicode tables (each tool has its own, of its own Unicode
    version). Found by the property test: U+2EE5E, wide since Unicode 15.1.
    Such a module gets black's last word; text in Latin scripts never does."""
    for character in set(source):
        if character < "\u0300":
            continue
        if unicodedata.east_asian_width(character) in ("W", "F") or unicodedata.category(character) in _ZERO_OR_UNKNOWN:
            return True
    return False


_ZERO_OR_UNKNOWN = frozenset({"Cn", "Co", "Cf", "Mn", "Me"})


def _ruff(sources: dict[str, str]) -> dict[str, str] | None:
    """``ruff format`` over the modules, in one process (a few milliseconds);
    None when ruff is not installed or refuses a file."""
    try:
        from ruff.__main__ import find_ruff_bin

        ruff = find_ruff_bin()
    except (ImportError, FileNotFoundError):
        return None
    with tempfile.TemporaryDirectory(prefix="evcat-format-") as directory:
        paths = {name: os.path.join(directory, name) for name in sources}
        for name, source in sources.items():
            with open(paths[name], "w", encoding="utf-8", newline="") as handle:
                handle.write(source)
        command = [ruff, "format", "--isolated", "--no-cache", "--quiet", "--line-length", "88",
                   "--target-version", "py311", *paths.values()]
        try:
            subprocess.run(command, check=True, capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            return None
        result = {}
        for name, path in paths.items():
            with open(path, encoding="utf-8", newline="") as handle:
                result[name] = handle.read()
        return result


@cache
def _black(source: str) -> str:
    """black, once per distinct source (the runtime module is the same in every package).
    Imported here: only rendering needs it, and it takes a tenth of a second to load."""
    import black

    return black.format_str(source, mode=black.Mode(target_versions={black.TargetVersion.PY311}))


def units(catalog_set: CatalogSet, settings: Settings = Settings()) -> list[Unit]:
    """One package per catalog; ``settings`` travel with each unit (bound to its render function)."""
    render_unit = partial(_render_unit, settings=settings)
    return [Unit("python", catalog.id, catalog_inputs(catalog, catalog_set), render_unit) for catalog in catalog_set.catalogs]


def _render_unit(inputs: tuple[Any, ...], settings: Settings = Settings()) -> dict[str, bytes]:
    catalog, schemas = inputs
    rendered = render_catalog(catalog, partial_set((catalog,), schemas), settings)
    return {path: text.encode("utf-8") for path, text in rendered.items()}


def render(catalog_set: CatalogSet) -> dict[str, bytes]:
    return render_all(units(catalog_set))


__all__ = ["render", "copy"]
