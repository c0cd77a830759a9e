"""Which Python package names are taken: the one home of rule
CAT-PACKAGE-NAME's knowledge (catalog-format.md §9, rules.md).

A generated package is installed (``pip install out/python/<package>``)
beside everything else in an environment: under the name of something
installed it replaces it (pip uninstalls a distribution of the same
normalised name; an import package of the same name shadows or overwrites
the other). A name is taken when, compared PEP 503-normalised (lowercase,
runs of ``-_.`` to ``-``) as an import name and as a distribution name, it is

- a module of the standard library (``sys.stdlib_module_names``);
- evcat itself, or a dependency of the generated packages (runtime
  ``REQUIRES`` and ``EXTRAS``) or of evcat (its package metadata, or its
  pyproject.toml in a checkout), by distribution and by import name;
- one of the most-downloaded PyPI distributions:
  ``generator/data/top-pypi-packages.txt`` (its header says where it comes
  from and how to refresh it: ``python tools/top_pypi_packages.py``).

The default name of a catalog (``naming.python_package_name``) puts
``catalog_`` before a standard-library name, so a catalog ``email`` still
generates (``catalog_email``) and replaces nothing; every other taken name,
written as ``package`` or the default, is an error.
"""

from __future__ import annotations

import importlib.metadata
import keyword
import re
import sys
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path

_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def normalise(name: str) -> str:
    """PEP 503: ``Paho_MQTT`` and ``paho.mqtt`` -> ``paho-mqtt``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(requirements: list[str] | tuple[str, ...]) -> list[str]:
    """The distribution names of PEP 508 requirements, those of extras left out."""
    names = []
    for requirement in requirements:
        if "extra ==" in requirement.replace("extra==", "extra =="):
            continue
        match = _REQUIREMENT_NAME.match(requirement)
        if match:
            names.append(match.group(1))
    return names


def _evcat_requirements() -> tuple[str, ...]:
    """evcat's own run-time requirements: its pyproject.toml in a checkout
    (the tree this code runs from), else its installed package metadata."""
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == "evcat":
            return tuple(project.get("dependencies", ()))
    except (OSError, tomllib.TOMLDecodeError):
        pass
    try:
        return tuple(importlib.metadata.requires("evcat") or ())
    except importlib.metadata.PackageNotFoundError:
        return ()


def _import_names(distribution: str) -> tuple[str, ...]:
    """The top-level import names an installed distribution provides
    (``pyyaml`` -> ``yaml``, ``_yaml``): its ``top_level.txt``, else the
    first parts of the files it installed; none when it is not installed."""
    try:
        found = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ()
    listed = found.read_text("top_level.txt")
    if listed:
        names = set(listed.split())
    else:
        names = {str(file.parts[0]).split(".")[0] for file in found.files or () if file.parts}
    return tuple(sorted(name for name in names if name.isidentifier() and not name.startswith("__")))


@cache
def taken_names() -> dict[str, str]:
    """Normalised name -> why it is taken (for the message), first reason wins."""
    from .runtime import EXTRAS, REQUIRES  # the generated packages' own requirements

    taken: dict[str, str] = {}
    for module in sys.stdlib_module_names:
        taken.setdefault(normalise(module), f"the standard-library module '{module}'")
    owners = (
        ("evcat itself", ["evcat"]),
        ("a dependency of the generated packages", _requirement_names([*REQUIRES, *(r for rs in EXTRAS.values() for r in rs)])),
        ("a dependency of evcat", _requirement_names(_evcat_requirements())),
    )
    for owner, distributions in owners:
        for distribution in distributions:
            reason = f"'{distribution}', {owner}"
            taken.setdefault(normalise(distribution), reason)
            for module in _import_names(distribution):
                taken.setdefault(normalise(module), f"'{module}', the import name of {reason}")
    for module in _own_modules():
        taken.setdefault(normalise(module), f"'{module}', the import name of evcat itself")
    for name in top_pypi():
        taken.setdefault(name, f"'{name}', one of the most-downloaded PyPI distributions")
    return taken


def _own_modules() -> tuple[str, ...]:
    """evcat's own top-level import package (``generator``)."""
    return (__name__.split(".")[0],)


@cache
def top_pypi() -> tuple[str, ...]:
    """The shipped list of the most-downloaded PyPI distributions (normalised)."""
    text = resources.files("generator").joinpath("data/top-pypi-packages.txt").read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def why_taken(package: str) -> str | None:
    """Why ``package`` (an import name, also the distribution name) may not be
    used, or None when it is free. A keyword cannot be imported at all."""
    if keyword.iskeyword(package):
        return f"'{package}' is a Python keyword, which cannot be imported"
    return taken_names().get(normalise(package))


def free_name(package: str, others: frozenset[str] = frozenset()) -> str:
    """A free name like ``package``: ``<package>_events``, else with a number."""
    base = package.strip("_") or "catalog"
    candidates = [f"{base}_events", f"{base}_catalog", *(f"{base}_events_{n}" for n in range(2, 100))]
    for candidate in candidates:
        if why_taken(candidate) is None and normalise(candidate) not in others:
            return candidate
    return f"{base}_events_evcat"
