"""The one list of output kinds: what ``evcat generate`` can write.

Each ``Renderer`` says what a kind is (for ``--only`` and the CLI help),
whether it is written by default (the contract's outputs) or only on request,
how heavy its units are (``render`` hands the heaviest out first, so the
workers finish together), which template directories it reads (read once per run into a
``templates.TemplateSet``; it can read no others) and which libraries shape
its output.
The cache key of a unit covers its kind's templates and library versions, so
editing ``docs/style.css`` renders the docs again and nothing else. Adding a
kind is one entry here and a module with ``units(catalog_set)`` and
``render(catalog_set)``.

Data only, outside the ``render`` package: the renderer modules are
imported when a kind is rendered, so the command line starts without them.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache, partial
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .render import Unit


@dataclass(frozen=True)
class Renderer:
    kind: str  # also its module in generator/render/ and its directory under OUT
    summary: str  # for the CLI help
    cost: int  # relative weight of one unit: the heaviest are handed to workers first
    default: bool = True  # written by `evcat generate` without --only (contract §4)
    templates: tuple[str, ...] = ()  # the directories under templates/ its templates live in
    tools: tuple[str, ...] = ()  # distributions whose version shapes its output
    settings: bool = False  # its ``units`` takes the run's ``python.Settings``

    def module(self) -> ModuleType:
        return importlib.import_module(f"{__package__}.render.{self.kind}")

    def units(self, catalog_set: Any, settings: Mapping[str, Any] | None) -> list[Unit]:
        """``settings``: the run's settings value per kind (``python.Settings``,
        ``asyncapi.Settings``), for the kinds that take one."""
        module = self.module()
        if self.settings and settings is not None and self.kind in settings:
            return module.units(catalog_set, settings[self.kind])  # type: ignore[no-any-return]
        return module.units(catalog_set)  # type: ignore[no-any-return]


RENDERERS: dict[str, Renderer] = {renderer.kind: renderer for renderer in (
    Renderer("python", "a typed pydantic v2 package per catalog", cost=100, templates=("python",),
             tools=("black", "ruff", "datamodel-code-generator", "isort", "pydantic", "jinja2", "MarkupSafe"),
             settings=True),
    Renderer("jsonschema", "JSON Schemas of each event and payload", cost=1),
    Renderer("asyncapi", "an AsyncAPI document per catalog", cost=2, tools=("PyYAML",), settings=True),
    Renderer("docs", "a static documentation site with Markdown pages", cost=10, templates=("docs",),
             tools=("jinja2", "MarkupSafe", "markdown-it-py", "mdurl")),
    Renderer("xregistry", "an xRegistry document (message, schema and endpoint groups) per catalog", cost=1),
    Renderer("eventcatalog", "an EventCatalog project", cost=5, default=False, templates=("eventcatalog",),
             tools=("jinja2", "MarkupSafe", "markdown-it-py", "mdurl", "PyYAML")),
)}
KINDS = tuple(kind for kind, renderer in RENDERERS.items() if renderer.default)  # the contract's outputs
OPTIONAL_KINDS = tuple(kind for kind, renderer in RENDERERS.items() if not renderer.default)


def only_help() -> str:
    """The help of ``--only``, from the registry."""
    described = ", ".join(f"{kind} ({renderer.summary}{'' if renderer.default else ', only when asked for'})"
                          for kind, renderer in RENDERERS.items())
    return f"comma-separated outputs to write (default: {','.join(KINDS)}): {described}"


def units(kind: str, catalog_set: Any, settings: Mapping[str, Any] | None = None, user: Path | None = None,
          code: Any = None, limits: Any = None) -> list[Unit]:
    """The units of ``kind``, each rendering with the run's templates
    (``user``: a checked ``--templates`` directory) wherever it runs: the
    very texts its cache key covers (``kind_salt``). ``code``: compiled
    templates kept across runs (``templates.environment``); ``limits``: the
    run's bounds of DIR's templates (``engine.workers.Limits``)."""
    from .render import templates as template_module

    renderer = RENDERERS[kind]
    found = renderer.units(catalog_set, settings)
    if not renderer.templates:
        return found
    templates = template_module.template_set(renderer.templates, user)
    return [replace(unit, render=partial(template_module.render_unit, render=unit.render, kind=kind, templates=templates,
                                         code=code, limits=limits))
            for unit in found]


def sandboxed(kind: str, user: Path | None) -> bool:
    """Whether ``kind`` renders with templates of ``user`` (a ``--templates``
    directory): untrusted, so sandboxed and bounded (``templates.render_unit``)."""
    from .render import templatefiles

    renderer = RENDERERS[kind]
    return bool(user is not None and renderer.templates and templatefiles.template_set(renderer.templates, user).user)


@cache
def kind_salt(kind: str, user: Path | None = None) -> str:
    """What, besides a unit's inputs and evcat's code, decides the output of
    ``kind``: every file of its templates (built-in and ``user``'s, by
    content, whatever their suffix) and the versions of its tools."""
    from .render import templatefiles  # not jinja2: a run with nothing to render never loads it

    renderer = RENDERERS[kind]
    digest = hashlib.sha256(f"{kind}\0".encode())
    if renderer.templates:
        digest.update(templatefiles.template_set(renderer.templates, user).digest.encode())
    for tool in renderer.tools:
        try:
            digest.update(f"{tool}={metadata.version(tool)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{tool}=none\0".encode())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def forget() -> None:
    """For --watch: templates edited, added or removed since the last run."""
    from .render import templates as template_module

    kind_salt.cache_clear()
    template_module.forget_templates()


__all__ = ["KINDS", "OPTIONAL_KINDS", "RENDERERS", "Renderer", "forget", "kind_salt", "only_help", "sandboxed", "units"]
