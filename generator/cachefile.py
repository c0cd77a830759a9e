"""Entries of ``.evcat-cache/``: read with ``marshal``, written atomically.

Every cache of evcat (parsed files, memoised checks, rendered units,
datamodel-code-generator output, run records) goes through these two
functions. A missing, stale or corrupt entry reads as None and is simply
recomputed; an entry that cannot be written only makes the next run slower.
So deleting the directory, or any file in it, is always safe.
"""

from __future__ import annotations

import marshal
import os
from pathlib import Path
from typing import Any


def read_marshal(path: Path) -> Any:
    try:
        # marshal.loads on the bytes: marshal.load on a file object reads in
        # small pieces and is ten times slower.
        return marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None


def write_atomic(path: Path, content: bytes) -> None:
    """Write ``content`` to a temporary file beside ``path``, then rename it
    over ``path``: a reader sees the old entry or the new one, never half."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(content)
        os.replace(temporary, path)
    except OSError:
        pass  # a cache that cannot be written is only slower
