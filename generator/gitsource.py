"""Catalogs read from git (``git:REF:PATH``) without touching the working tree."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator

from .lint import CATALOG_SUFFIXES, UsageError


@contextlib.contextmanager
def catalog_from(spec: str) -> Iterator[str]:
    """A directory holding the catalog ``spec`` names: a path, or git:REF:PATH."""
    if not spec.startswith("git:"):
        yield spec
        return
    try:
        _, ref, path = spec.split(":", 2)
    except ValueError:
        raise UsageError(f"{spec}: write git:REF:PATH, e.g. git:HEAD~1:catalog") from None
    path = path.strip("/") or "."
    files = _git("ls-tree", "-r", "--name-only", "-z", ref, "--", path).split("\0")
    files = [name for name in files if name.endswith(CATALOG_SUFFIXES)]
    if not files:
        raise UsageError(f"{spec}: no catalog files (*.yaml, *.yml) under {path} at {ref}")
    with tempfile.TemporaryDirectory(prefix="evcat-git-") as directory:
        for name in files:
            content = _git_bytes("show", f"{ref}:{name}")
            relative = os.path.relpath(name, path) if path != "." else name
            target = os.path.join(directory, relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(content)
        yield directory


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
    return _git_bytes(*arguments).decode("utf-8")
