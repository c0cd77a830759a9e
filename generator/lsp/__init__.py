"""``evcat lsp``: catalog diagnostics, quick fixes, navigation and completion in editors (contract §8)."""

from __future__ import annotations


def run() -> int:
    from .server import run as serve

    return serve()
