"""`evcat generate`: lint, render every requested output in memory, write all or nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .lint import LintResult, UsageError, lint
from .model import CatalogSet
from .render import asyncapi, docs, jsonschema, python
from .writer import WriteReport, plan, write

Renderer = Callable[[CatalogSet], dict[str, bytes]]
RENDERERS: dict[str, Renderer] = {
    "python": python.render,
    "jsonschema": jsonschema.render,
    "asyncapi": asyncapi.render,
    "docs": docs.render,
}


@dataclass
class GenerateResult:
    lint: LintResult
    report: WriteReport | None = None


def parse_kinds(text: str | None) -> list[str]:
    if not text:
        return list(RENDERERS)
    kinds = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [kind for kind in kinds if kind not in RENDERERS]
    if unknown or not kinds:
        raise UsageError(f"--only takes a comma-separated list of {', '.join(RENDERERS)}; not {', '.join(unknown) or text!r}")
    return kinds


def render(catalog_set: CatalogSet, kinds: Sequence[str]) -> dict[str, dict[str, bytes]]:
    return {kind: RENDERERS[kind](catalog_set) for kind in kinds}


def generate(catalog: str, out: str, kinds: Sequence[str], *, check: bool = False, cache_dir: str | None = None) -> GenerateResult:
    result = lint(catalog, cache_dir)
    if result.has_errors:
        return GenerateResult(result)
    outputs = render(result.catalog_set, kinds)
    out_path = Path(out)
    report = plan(out_path, outputs) if check else write(out_path, outputs, __version__)
    return GenerateResult(result, report)
