"""Stage 5: the one writer. All outputs reach the disk through here.

Rendering happens in memory first; then, all or nothing:
1. every changed file is written next to its target as a temporary file (a
   failure here, such as a full disk, removes the temporaries: OUT is as it was);
2. the temporaries are renamed over their targets and generated files that
   are no longer produced are deleted, with Ctrl-C held back until done;
3. the manifest (``OUT/.evcat-manifest.json``) records what evcat wrote, so
   evcat deletes only its own files: a user's file inside OUT survives.
Files whose content did not change are not touched. Every path is checked to
resolve inside OUT (see ``naming.safe_file_name`` for how names are made).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

MANIFEST = ".evcat-manifest.json"


class OutputError(Exception):
    """An output that cannot be written (a path outside OUT, an OS error)."""


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.written or self.deleted)


def _checked(out: str, relative: str) -> str:
    """``out/relative``, refused unless it stays inside OUT: no absolute path,
    no ``..``, no backslash, and no symlinked directory on the way that leads
    out. (The file itself may be a symlink: ``os.replace`` replaces the link,
    it never writes through it.)"""
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if relative.startswith("/") or ".." in parts or "\\" in relative or not parts or relative.endswith(("/", "/.")):
        raise OutputError(f"refusing to write '{relative}': outputs stay inside {out}")
    if not _inside(out, "/".join(parts[:-1])):
        raise OutputError(f"refusing to write '{relative}': it resolves outside {out}")
    return os.path.join(out, relative)  # a string: pathlib would cost a fifth of a second at 21,000 files


@lru_cache(maxsize=65536)
def _inside(out: str, directory: str) -> bool:
    """Whether OUT/directory, symlinks resolved, is OUT or below it. Checked
    one path component at a time (each once per run): only a component that
    is a symlink needs resolving."""
    if directory in ("", "."):
        return True
    parent, _ = os.path.split(directory)
    if not _inside(out, parent):
        return False
    path = os.path.join(out, directory)
    if not os.path.islink(path):
        return True
    root = os.path.realpath(out)
    target = os.path.realpath(path)
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def read_manifest(out: Path) -> dict[str, list[str]]:
    """Generated files by kind (python, jsonschema, ...) from the last run."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        return {kind: list(files) for kind, files in data.get("files", {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def plan(out: Path, outputs: Mapping[str, Mapping[str, bytes]]) -> WriteReport:
    """What ``write`` would do, without touching the disk (``--check``)."""
    report = WriteReport()
    _inside.cache_clear()  # directories are resolved afresh on every run
    previous = read_manifest(out)
    root = str(out)
    directories: dict[str, bool] = {}  # does OUT/dir exist? (a cold run reads nothing)
    for kind, files in outputs.items():
        for relative, content in sorted(files.items()):
            target = _checked(root, relative)
            parent = os.path.dirname(relative)
            if parent not in directories:
                directories[parent] = os.path.isdir(os.path.join(root, parent))
            try:
                same = directories[parent] and _read(target) == content
            except OSError:
                same = False
            (report.unchanged if same else report.written).append(relative)
        for relative in sorted(set(previous.get(kind, ())) - set(files)):
            if os.path.exists(_checked(root, relative)):
                report.deleted.append(relative)
    return report


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def write(out: Path, outputs: Mapping[str, Mapping[str, bytes]], version: str) -> WriteReport:
    """Write ``outputs`` ({kind: {relative path: bytes}}) into ``out``, all or nothing."""
    report = plan(out, outputs)
    root = str(out)
    contents = {relative: content for files in outputs.values() for relative, content in files.items()}
    temporaries: list[tuple[Path, Path]] = []
    made: set[Path] = set()
    try:
        for relative in report.written:
            target = Path(_checked(root, relative))
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            temporary = target.with_name(f".{target.name}.evcat-tmp")
            temporary.write_bytes(contents[relative])
            temporaries.append((temporary, target))
        manifest = _manifest(out, outputs, version)
        manifest_temporary: Path | None = None
        try:
            manifest_same = (out / MANIFEST).read_bytes() == manifest
        except OSError:
            manifest_same = False
        if not manifest_same:
            manifest_temporary = out / f".{MANIFEST}.evcat-tmp"
            out.mkdir(parents=True, exist_ok=True)
            manifest_temporary.write_bytes(manifest)
    except BaseException:
        for temporary, _ in temporaries:
            with contextlib.suppress(OSError):
                temporary.unlink()
        raise
    with _interrupts_held():
        for temporary, target in temporaries:
            os.replace(temporary, target)
        for relative in report.deleted:
            target = Path(_checked(root, relative))
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
            _remove_empty_parents(target.parent, out)
        if manifest_temporary is not None:
            os.replace(manifest_temporary, out / MANIFEST)
    return report


def _manifest(out: Path, outputs: Mapping[str, Mapping[str, bytes]], version: str) -> bytes:
    previous = read_manifest(out)
    files = {kind: sorted(paths) for kind, paths in previous.items()}
    for kind, produced in outputs.items():
        files[kind] = sorted(produced)
    document = {
        "generator": f"evcat {version}",
        "note": "Files evcat generated here; evcat deletes only these. Your own files in this directory are kept.",
        "files": dict(sorted(files.items())),
    }
    return (json.dumps(document, indent=2, sort_keys=False) + "\n").encode()


def _remove_empty_parents(directory: Path, out: Path) -> None:
    root = out.resolve()
    while directory.resolve() != root and root in directory.resolve().parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold SIGINT while renames run, so Ctrl-C cannot leave half an update."""
    try:
        previous = signal.getsignal(signal.SIGINT)
        received: list[int] = []
        signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    except ValueError:  # not the main thread: nothing to hold
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            raise KeyboardInterrupt
