"""`evcat import KIND SOURCE... [-o CATALOG_DIR]` (contract §10).

Reads the sources with the kind's reader (``importers.reader``), settles the
documents (``importers.settle``: lint-clean, with the §9 overrides that keep
the source's names), writes them as YAML catalog files into CATALOG_DIR and
hands the notes back to the CLI.

Writing: every file lands inside CATALOG_DIR (a document name that is
absolute, climbs out with ``..``, or meets a symbolic link is refused);
existing files are not replaced unless ``force``; each file is written to a
temporary file beside it and renamed over (a reader never sees half a file),
and nothing is written when any target is refused.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..diagnostics import Diagnostic
from ..importers import KINDS, Imported, Note, Options, SourceError, reader
from ..importers.settle import settle
from .lint import UsageError


@dataclass
class ImportResult:
    written: list[str] = field(default_factory=list)  # paths of the written files
    notes: list[Note] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)  # lint errors left in the written catalog
    events: int = 0


class ImportFailed(Exception):
    """A source that cannot be read: its located note (exit 2, nothing written)."""

    def __init__(self, note: Note, notes: Sequence[Note] = ()) -> None:
        super().__init__(str(note))
        self.note = note
        self.notes = list(notes)  # what the source said that could not be carried (why nothing was)


def import_catalog(kind: str, sources: Sequence[str], output: str, options: Options, force: bool = False) -> ImportResult:
    if kind not in KINDS:
        raise UsageError(f"unknown import kind {kind!r}; one of {', '.join(KINDS)}")
    paths = []
    for source in sources:
        if not os.path.exists(source):
            raise ImportFailed(Note(source, "", "no such file or directory", kind="error"))
        paths.append(Path(source))
    read = reader(kind)
    try:
        imported: Imported = read(paths, options)
    except SourceError as error:
        raise ImportFailed(error.note) from None
    except RecursionError:
        raise ImportFailed(Note(str(sources[0]), "", "the source nests too deeply to import", kind="error")) from None
    if not any(document.get("events") for document in imported.documents.values()):
        why = " (the notes say why)" if imported.notes else ""
        raise ImportFailed(Note(str(sources[0]), "", f"nothing to import: no event types found{why}", kind="error"),
                           imported.notes)
    settled = settle(imported, options)
    texts = {name: to_yaml(document) for name, document in settled.documents.items()}
    targets = _targets(output, texts, force)
    for target, text in zip(targets, texts.values()):
        _write(target, text)
    shown = {name: str(target) for name, target in zip(texts, targets)}
    located = _Locator(shown, texts)
    notes = [located.note(note) for note in settled.notes]
    remaining = [located.diagnostic(name, path, diagnostic) for name, path, diagnostic in settled.remaining]
    events = sum(len(document.get("events") or []) for document in settled.documents.values())
    return ImportResult([str(target) for target in targets], notes, remaining, events)


def to_yaml(document: dict[str, Any]) -> str:
    """A catalog document as block-style YAML that reads back to the same
    values (strings that look like numbers, booleans or dates are quoted)."""
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # a value used twice is written twice, never as &anchor
        return True


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str_presenter)


def _targets(output: str, texts: dict[str, str], force: bool) -> list[Path]:
    root = Path(output)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{output} is not a directory")
    if root.is_symlink():
        raise UsageError(f"{output} is a symbolic link; give the directory itself")
    targets = []
    existing = []
    for name in texts:
        relative = Path(name)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts or relative.suffix not in (".yaml", ".yml"):
            raise UsageError(f"refusing to write {name!r}: not a catalog file name inside {output}")  # a kind's bug
        target = root / relative
        for parent in [target, *list(target.parents)[: len(relative.parts) - 1]]:
            if parent.is_symlink():
                raise UsageError(f"refusing to write {target}: {parent} is a symbolic link")
        if target.exists():
            existing.append(str(target))
        targets.append(target)
    if existing and not force:
        shown = ", ".join(existing[:3]) + (" ..." if len(existing) > 3 else "")
        raise UsageError(f"{shown} already exist{'s' if len(existing) == 1 else ''}; nothing was written "
                         "(--force replaces them)")
    return targets


def _write(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


class _Locator:
    """Notes and findings about a written document name the written file,
    with the line and column of their place there."""

    def __init__(self, shown: dict[str, str], texts: dict[str, str]) -> None:
        self.shown, self.texts = shown, texts
        self.documents: dict[str, Any] = {}

    def _loc(self, name: str, path: tuple[str | int, ...]) -> Any:
        from ..loader import load_text

        if name not in self.documents:
            self.documents[name] = load_text(self.texts[name], self.shown[name])
        return self.documents[name].loc(path)

    def note(self, note: Note) -> Note:
        if note.file not in self.shown:
            return note
        from ..importers.sources import parse_pointer

        self._loc(note.file, ())
        path: list[str | int] = []
        value = self.documents[note.file].value
        for part in parse_pointer(note.pointer):
            if isinstance(value, list) and part.isdigit() and int(part) < len(value):
                path.append(int(part))
                value = value[int(part)]
            elif isinstance(value, dict) and part in value:
                path.append(part)
                value = value[part]
            else:
                break
        location = self._loc(note.file, tuple(path))
        return Note(self.shown[note.file], note.pointer, note.message, location.line, location.column, note.kind)

    def diagnostic(self, name: str, path: tuple[str | int, ...], diagnostic: Diagnostic) -> Diagnostic:
        from dataclasses import replace

        if name not in self.shown:
            return diagnostic
        return replace(diagnostic, location=self._loc(name, path))
