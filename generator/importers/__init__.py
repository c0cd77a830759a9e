"""`evcat import KIND SOURCE...` (contract: shared/catalog-format.md §10).

Definitions that exist elsewhere in, catalog documents out. One module per
kind (``asyncapi``, ``xregistry``, ``jsonschema``, ``eventcatalog``,
``events``), each with one function::

    def read(sources: Sequence[pathlib.Path], options: Options) -> Imported

that is a pure function of the files it reads: it returns the catalog
documents (plain JSON data, written as YAML by the command) and located
``Note``s for everything it could not carry over. Nothing is dropped in
silence (§10). Making the written catalog lint-clean by writing the §9
overrides that keep the source's names is shared by every kind (``settle``
in ``generator/importers/settle.py``), not repeated per kind.

Data only here: the kind modules are imported when a kind is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..profiles import CLOUDEVENTS

KINDS = ("asyncapi", "xregistry", "jsonschema", "eventcatalog", "events")


@dataclass(frozen=True)
class Options:
    """What the command line says about an import (one value, never globals)."""

    type_prefix: str | None = None  # --type-prefix: prefix of the CloudEvents types made from names
    catalog_id: str | None = None  # --catalog: id of the written catalog (default: from the source)
    # --profile: the rule set the written catalog follows (default: the generic one)
    profile: str = CLOUDEVENTS.name


@dataclass(frozen=True)
class Note:
    """Something the source says that the catalog cannot carry, or a choice
    the import made (an override written, a name derived): where in the
    source (file, JSON pointer, and line/column where the reader knows them)."""

    file: str
    pointer: str  # RFC 6901, "" for the whole document
    message: str
    line: int | None = None
    column: int | None = None
    kind: str = "not carried"  # "not carried" | "override" | "derived"

    def __str__(self) -> str:
        where = self.file + (f":{self.line}:{self.column}" if self.line is not None else "")
        return f"{where}: {self.kind}: {self.message}" + (f" (at {self.pointer})" if self.pointer else "")


@dataclass
class Imported:
    """Catalog documents by file name (relative to the output directory) and
    the notes. A document is a mapping in the catalog format (§1, §9)."""

    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)


class Reader(Protocol):
    def __call__(self, sources: Sequence[Path], options: Options) -> Imported: ...


def reader(kind: str) -> Reader:
    """The ``read`` function of ``kind`` (one of ``KINDS``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown import kind {kind!r}; one of {', '.join(KINDS)}")
    module = importlib.import_module(f"{__name__}.{kind}")
    read: Reader = module.read
    return read
