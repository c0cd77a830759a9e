"""Catalogs read from git (``git:REF:PATH``) without touching the working tree."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..diagnostics import Diagnostic, Location, display_path
from .lint import CATALOG_SUFFIXES, UsageError


@dataclass(frozen=True)
class CatalogSource:
    """Where ``catalog_source`` put a catalog (``directory``), and the names
    its files go by for the user: ``git:REF:<path in the repository>`` for a
    file read from git (``names``: {file in ``directory``: that name})."""

    directory: str
    names: Mapping[str, str] = field(default_factory=dict)

    def shown(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """``diagnostics`` with each place (and each mention in a message)
        named as the user wrote it, never by the private temporary directory."""
        if not self.names:
            return list(diagnostics)
        return [replace(d, location=self._place(d.location), related=tuple(self._place(r) for r in d.related),
                        message=self._text(d.message), suggestion=self._text(d.suggestion)) for d in diagnostics]

    def _place(self, location: Location) -> Location:
        return replace(location, file=self._text(location.file))

    def _text(self, text: Any) -> Any:
        if not isinstance(text, str) or "evcat-git-" not in text:
            return text
        for file in sorted(self.names, key=len, reverse=True):  # the longest first: no file is a prefix of another's name
            text = text.replace(file, self.names[file])
        return text


@contextlib.contextmanager
def catalog_from(spec: str) -> Iterator[str]:
    """A directory holding the catalog ``spec`` names (``catalog_source``)."""
    with catalog_source(spec) as source:
        yield source.directory


@contextlib.contextmanager
def catalog_source(spec: str) -> Iterator[CatalogSource]:
    """A directory holding the catalog ``spec`` names: a path, or git:REF:PATH
    (PATH from the top of the repository: a directory, or one catalog file),
    with the names its files go by (``CatalogSource.shown``).

    PATH is taken literally (``--literal-pathspecs``: git's pathspec magic
    such as ``:/`` or ``:(top)`` is a plain name, not found), each name git
    lists must lie under PATH, and every file goes into a private temporary
    directory, created there (``O_EXCL|O_NOFOLLOW``), never anywhere else."""
    if not spec.startswith("git:"):
        yield CatalogSource(spec)
        return
    try:
        _, ref, path = spec.split(":", 2)
    except ValueError:
        raise UsageError(f"{spec}: write git:REF:PATH, e.g. git:HEAD~1:catalog") from None
    if not ref or ref.startswith("-") or "\0" in ref:
        raise UsageError(f"{spec}: '{ref}' is not a git revision; write git:REF:PATH, e.g. git:HEAD~1:catalog")
    path = path.strip("/") or "."
    parts = path.split("/")
    if ".." in parts or path.startswith(":") or "\0" in path:
        raise UsageError(f"{spec}: PATH is a path inside the repository, from its top (no '..', no pathspec magic)")
    kind = _git("--literal-pathspecs", "cat-file", "-t", f"{ref}:{path}" if path != "." else f"{ref}^{{tree}}").strip()
    names = _git("--literal-pathspecs", "ls-tree", "-r", "--full-tree", "--name-only", "-z", ref, "--", path).split("\0")
    files: list[tuple[str, str]] = []  # (name in the repository, name in the temporary directory)
    for name in names:
        if not name.endswith(CATALOG_SUFFIXES):
            continue
        if kind == "blob":
            relative = os.path.basename(name) if name == path else None
        elif path == ".":
            relative = name
        else:
            relative = name[len(path) + 1:] if name.startswith(path + "/") else None
        pieces = relative.split("/") if relative else []
        if not pieces or any(piece in ("", ".", "..") for piece in pieces):
            continue  # not below PATH: never written
        files.append((name, relative))  # type: ignore[arg-type]
    if not files:
        raise UsageError(f"{spec}: no catalog files (*.yaml, *.yml) at {path} in {ref}")
    with tempfile.TemporaryDirectory(prefix="evcat-git-") as directory:
        shown_as: dict[str, str] = {}
        for name, relative in files:
            content = _git_bytes("--literal-pathspecs", "show", f"{ref}:{name}")
            target = os.path.join(directory, relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(content)
            shown_as[target] = f"git:{ref}:{name}"
        shown_as[directory] = f"git:{ref}:{path}" if kind != "blob" else f"git:{ref}:{os.path.dirname(path) or '.'}"
        for file, shown in list(shown_as.items()):  # as lint may name them: resolved, or relative to here
            shown_as.setdefault(os.path.realpath(file), shown)
            shown_as.setdefault(display_path(file), shown)
        yield CatalogSource(directory, shown_as)


def _git_bytes(*arguments: str) -> bytes:
    try:
        result = subprocess.run(["git", *arguments], capture_output=True, check=True, timeout=120)
    except FileNotFoundError:
        raise UsageError("git is not installed") from None
    except subprocess.CalledProcessError as error:
        message = error.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {' '.join(arguments)}: {message[-1] if message else 'failed'}") from None
    return result.stdout


def _git(*arguments: str) -> str:
    # File names in a repository need not be UTF-8: kept byte for byte, never a crash.
    return _git_bytes(*arguments).decode("utf-8", "surrogateescape")
