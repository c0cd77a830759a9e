"""The template files of each output kind, without jinja2: which files a
kind reads (built-in and ``--templates DIR``'s), their texts and their
digest (the cache key of the kind: ``outputs.kind_salt``). Kept apart from
``templates`` (the jinja2 environments) so that a run with nothing to
render computes its key without importing jinja2."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..diagnostics import Diagnostic, Location, Severity

_PACKAGE_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"  # in an installed wheel
_SOURCE_TEMPLATES = Path(__file__).resolve().parents[2] / "templates"  # in a checkout
BUILTIN_PREFIX = "builtin"  # {% extends "builtin/docs/event.html.jinja" %}: our template, even where DIR overrides it
NOT_TEMPLATES = frozenset({"README.md"})  # files in templates/ that are not templates
RULE = "TEMPLATE"  # the rule id of a template error


class TemplateError(Exception):
    """A template that cannot be used: where (its file and line) and what is
    wrong. Plain arguments only, so it crosses from a worker process intact."""

    def __init__(self, file: str, line: int, message: str) -> None:
        super().__init__(file, line, message)
        self.file, self.line, self.message = file, line, message

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(RULE, Severity.ERROR, self.message, Location(_shown(self.file), max(self.line, 1), 1))


class TemplateDirError(Exception):
    """``--templates DIR`` cannot be used (missing, or a file there overrides nothing): a usage error."""


def builtin_dir() -> Path:
    """The built-in templates: a checkout's own templates/ (an editable
    install may hold an older copy), else the packaged copy."""
    marker = Path("python") / "events.py.jinja"
    return _SOURCE_TEMPLATES if (_SOURCE_TEMPLATES / marker).is_file() else _PACKAGE_TEMPLATES


def _files(root: Path) -> dict[str, Path]:
    """Every file under ``root`` by its relative path (``/``-separated), as
    jinja2 finds them: through links to directories too (each directory once,
    so a link loop ends); names starting with ``.`` (editor swap files,
    ``.DS_Store``, ``.git/``) are left out."""
    found: dict[str, Path] = {}
    visited: set[tuple[int, int]] = set()
    for directory, subdirectories, names in os.walk(root, followlinks=True):
        try:
            info = os.stat(directory)
        except OSError:
            subdirectories[:] = []
            continue
        if (info.st_dev, info.st_ino) in visited:
            subdirectories[:] = []
            continue
        visited.add((info.st_dev, info.st_ino))
        subdirectories[:] = sorted(name for name in subdirectories if not name.startswith("."))
        for name in sorted(names):
            if not name.startswith("."):
                path = Path(directory, name)
                found[path.relative_to(root).as_posix()] = path
    return found


@cache
def builtin_templates() -> dict[str, Path]:
    """The built-in templates by relative path, whatever their suffix."""
    return {name: path for name, path in _files(builtin_dir()).items() if name not in NOT_TEMPLATES}


def user_templates(directory: Path) -> dict[str, Path]:
    """The overriding templates in a ``--templates`` directory (a README.md
    at its top is not one: a copy of templates/ starts with ours)."""
    return {name: path for name, path in _files(directory).items() if name not in NOT_TEMPLATES}


@dataclass(frozen=True, eq=False)
class TemplateSet:
    """The templates one output kind can read in a run, read from disk once:
    its units render from exactly these texts (in whichever process), and
    its cache key is their digest, so the key covers every template a unit
    can use, by construction (a file saved while a run renders cannot give
    output stored under the key of its old content)."""

    prefixes: tuple[str, ...]  # the directories under templates/ this kind reads
    builtin: tuple[tuple[str, str, str], ...]  # (relative path, source, file) of each built-in template there
    user: tuple[tuple[str, str, str], ...]  # the same for DIR's files, which replace built-in ones
    directory: str | None  # DIR, or None: the built-in templates alone
    digest: str  # of every file's relative path and bytes, whatever its suffix

    # Compared by digest, not text by text (an environment is cached per set).
    def __eq__(self, other: object) -> bool:
        return isinstance(other, TemplateSet) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def files(self) -> frozenset[str]:
        return frozenset(file for _, _, file in (*self.builtin, *self.user))


@cache
def template_set(prefixes: tuple[str, ...], user: Path | None = None) -> TemplateSet:
    """The templates under ``prefixes``: the built-in ones and those of a
    checked ``--templates`` directory ``user``. Read as jinja2's
    ``FileSystemLoader`` reads them (UTF-8, universal newlines)."""
    digest = hashlib.sha256("\0".join(prefixes).encode() + b"\0\0")
    parts: list[tuple[tuple[str, str, str], ...]] = []
    for origin, files in (("builtin", builtin_templates()), ("user", user_templates(user) if user is not None else {})):
        found = []
        for name, path in sorted(files.items()):
            if name.split("/", 1)[0] not in prefixes:
                continue
            try:
                raw = path.read_bytes()
                source = raw.decode("utf-8")
            except OSError as error:
                raise TemplateError(str(path), 1, f"cannot read the template: {error.strerror or error}") from None
            except UnicodeDecodeError as error:
                raise TemplateError(str(path), raw[: error.start].count(b"\n") + 1, "the template is not UTF-8 text") from None
            digest.update(f"{origin}\0{name}\0{len(raw)}\0".encode() + raw)
            found.append((name, source.replace("\r\n", "\n").replace("\r", "\n"), str(path)))
        parts.append(tuple(found))
    return TemplateSet(prefixes, parts[0], parts[1], str(user) if user is not None else None, digest.hexdigest())


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")
