"""`evcat generate`: lint, render every requested output in memory, write all or nothing.

Rendering is split into units (mostly one per catalog and output kind, see
``render.Unit``). A unit's output depends only on its inputs, so it is stored
in a content-addressed cache (``.evcat-cache/render/``) under the hash of
those inputs, of evcat's own source and templates and of the versions of the
tools that shape the output (black, datamodel-code-generator, ...). A unit
whose key is found is not rendered again; the others are rendered in worker
processes. The cache is safe to delete and cannot change the output: the key
covers everything a unit reads (a test compares warm and cold runs byte for
byte).
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from .. import __version__, outputs
from ..diagnostics import diagnostic_from_data, diagnostic_to_data, display_path
from ..engine import workers as workers_module
from ..engine.cache import code_digest
from ..engine.cache import forget_code_digest as forget_cache_code_digest
from ..engine.config import RunConfig
from ..engine.store import Memo, Store, TemplateCode
from ..engine.workers import run as parallel
from ..loader import Document, read_catalog_bytes
from ..model import CatalogSet
from ..model.build import build
from ..render import Unit
from ..writer import Stamps, Unavailable, WriteReport, write
from ..writer import check as check_outputs
from .lint import LintResult, UsageError, find_catalog_files, lint


def __getattr__(name: str) -> Any:
    """``RENDERERS``: every output kind's whole-set render function (for
    tests and tools), from the one registry (outputs.py), made on first
    use: a run with nothing to render imports no renderer, nor jinja2."""
    if name == "RENDERERS":
        found: dict[str, Callable[[CatalogSet], dict[str, bytes]]] = {
            kind: renderer.module().render for kind, renderer in outputs.RENDERERS.items()
        }
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class GenerateResult:
    lint: LintResult
    report: WriteReport | None = None
    stats: "RenderStats | None" = None


@dataclass
class RenderStats:
    units: int = 0
    cached: int = 0
    rendered: int = 0
    workers: int = 1
    helped: int = 0  # units the warm helper rendered (Python units with new payload models)
    keys: list[tuple[str, str]] | None = None  # (kind, cache key) of every unit, in order (None: not all cacheable)
    replayed: bool = False  # nothing changed since a recorded run: lint and rendering were skipped


def parse_kinds(text: str | None) -> list[str]:
    if not text:
        return list(outputs.KINDS)
    kinds = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [kind for kind in kinds if kind not in outputs.RENDERERS]
    if unknown or not kinds:
        raise UsageError(f"--only takes a comma-separated list of {', '.join(outputs.RENDERERS)}; "
                         f"not {', '.join(unknown) or text!r}")
    return list(dict.fromkeys(kinds))


def use_templates(directory: str | None) -> Path | None:
    """A ``--templates`` directory, checked (see ``templates.check_directory``):
    a missing one is a usage error, a broken template a ``TemplateError``."""
    if not directory:
        return None
    from ..render import templates as template_module

    try:
        return template_module.check_directory(directory)
    except template_module.TemplateDirError as error:
        raise UsageError(str(error)) from None


class RenderCache:
    """Rendered units by content hash, in ``DIR/render/``: safe to delete."""

    def __init__(self, directory: str, formatter: str = "ruff", templates: Path | None = None) -> None:
        self.store = Store(directory, "render")
        self.root = self.store.directory
        self.salt = f"{code_digest()}\0formatter={formatter}"
        self.templates = templates
        self._digests: dict[int, tuple[object, str]] = {}

    def key(self, unit: Unit) -> str:
        """Evcat's code, the formatter, the templates and tools of the unit's
        kind (``outputs.kind_salt``) and the unit's inputs."""
        kind_salt = outputs.kind_salt(unit.kind, self.templates)
        material = f"{self.salt}\0{kind_salt}\0{unit.kind}\0{unit.name}\0{self._digest(unit.inputs)}"
        return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()

    def _digest(self, value: object) -> str:
        """The hash of ``repr(value)``, or for a tuple the hash of its items' hashes.
        Each value is hashed once per run: units of every kind share the
        catalogs and schemas, the docs pages of every catalog share the
        tuple of all catalog titles, and an index holds every catalog."""
        known = self._digests.get(id(value))
        if known is None or known[0] is not value:
            if isinstance(value, tuple):
                text = "(" + ",".join(self._digest(item) for item in value) + ")"
            else:
                text = repr(value)
            digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            known = (value, digest)  # the value is kept, so its id cannot be reused
            self._digests[id(value)] = known
        return known[1]

    def get(self, key: str, *, lazy: bool = False) -> dict[str, Any] | None:
        """A unit's files: {path: bytes}, or with ``lazy`` {path: CachedFile}
        (size and digest known, bytes read when needed: see ``writer``)."""
        return self.store.get_files(key, contents=not lazy)

    def put(self, key: str, files: dict[str, bytes]) -> None:
        self.store.put_files(key, files)


def forget_code_digest() -> None:
    """For --watch: templates edited, added or removed since the last run give new cache keys."""
    forget_cache_code_digest()
    outputs.forget()


class Progress:
    """``rendering 12/50`` on one line of stderr, only when it is a terminal."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.active = total > 1 and self.stream.isatty() and os.environ.get("TERM") != "dumb"
        self.last = 0.0

    def step(self, label: str) -> None:
        self.done += 1
        now = time.monotonic()
        if self.active and (now - self.last > 0.1 or self.done == self.total):
            self.last = now
            width = 24
            filled = width * self.done // self.total
            self.stream.write(f"\r\x1b[Kevcat: [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {label}")
            self.stream.flush()

    def close(self) -> None:
        if self.active:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


Task = tuple[int, Callable[[tuple[Any, ...]], dict[str, bytes]], tuple[Any, ...]]


def _render_task(task: Task) -> tuple[int, dict[str, bytes]]:
    """In a worker or the warm helper: everything comes with the task (a
    unit's settings are bound to its render function, see python.units)."""
    index, function, inputs = task
    return index, function(inputs)


# A few changed catalogs are rendered by the helper: a process forked when
# generation starts, which loads datamodel-code-generator while the parent
# lints (almost a second a fresh process would otherwise spend after lint).
HELPER_MAX_UNITS = 2


def _module(kind: str) -> ModuleType:
    """The renderer module of ``kind``, imported on first use (from the
    registry): a run with nothing to render imports none, nor jinja2."""
    return outputs.RENDERERS[kind].module()


def _template_code(cache_dir: str | None) -> TemplateCode | None:
    """Compiled templates from (and into) the cache directory's sealed
    ``jinja`` store, or from nowhere without a cache (``engine.store.TemplateCode``)."""
    return TemplateCode(cache_dir, code_digest()) if cache_dir else None


def _warm_up(kinds: Sequence[str], code: TemplateCode | None) -> None:
    """Before the workers fork: what the first unit of a renderer would
    otherwise spend first (templates compiled, parsers made), done once
    here; the workers inherit it. (python's is the helper's: it loads
    datamodel-code-generator.)"""
    for kind in kinds:
        warm = getattr(_module(kind), "warm_up", None)
        if warm is not None and kind != "python":
            warm(code)


def _warm_cache(cache_dir: str) -> bool:
    """Whether an earlier run rendered into this cache (so few catalogs are new)."""
    return Store(cache_dir, "render").directory.is_dir()


def _new_models(inputs: tuple[Any, ...], memo: Memo) -> bool:
    """Whether rendering the Python unit of ``inputs`` runs
    datamodel-code-generator: its payloads' schema text is not in the models
    store (a title or an example changed: it is)."""
    text = _module("python").models_text(inputs)
    return text is not None and not memo.has(text)


def start_helper() -> Any:
    """The warm helper (one process that loads datamodel-code-generator now), or None where fork is not available."""
    return workers_module.helper(_module("python").warm_up)


def render(catalog_set: CatalogSet, kinds: Sequence[str], config: RunConfig = RunConfig(), *,
           stats: RenderStats | None = None) -> dict[str, dict[str, bytes]]:
    """{kind: {relative path: bytes}} for ``kinds``, with the settings of
    ``config`` (``formatter``: see ``render.python.format_sources``;
    ``asyncapi_version``: ``render.asyncapi.Settings``; ``templates``: a
    checked ``--templates`` directory, see ``use_templates``); units found in
    its cache are reused, the others rendered in ``config.workers`` processes.
    A template's error is raised as ``templates.TemplateError``."""
    return _render(catalog_set, kinds, config, stats=stats)


def _render(catalog_set: CatalogSet, kinds: Sequence[str], config: RunConfig, *, stats: RenderStats | None = None,
            processes: workers_module.Started | None = None, lazy: bool = False) -> dict[str, dict[str, Any]]:
    """``render``, with the processes ``generate`` started before lint:
    ``processes.pool`` (the workers) and ``processes.helper`` (see
    ``start_helper``: a few Python units). With ``lazy``, files of units found in the cache are
    ``engine.store.CachedFile``s (``writer.LazyFile``), which the writer compares with OUT by their
    digest and reads only when they must be written."""
    cache_dir, formatter, templates = config.cache_dir, config.formatter, config.templates
    python, asyncapi = _module("python"), _module("asyncapi")
    asyncapi_version = config.asyncapi_version or asyncapi.VERSIONS[0]
    if asyncapi_version not in asyncapi.VERSIONS:
        raise UsageError(f"--asyncapi-version takes {' or '.join(asyncapi.VERSIONS)}, not {asyncapi_version!r}")
    if formatter not in python.FORMATTERS:
        raise UsageError(f"--formatter takes {' or '.join(python.FORMATTERS)}, not {formatter!r}")
    render_cache = RenderCache(cache_dir, formatter, templates) if cache_dir else None
    code = _template_code(cache_dir)
    # datamodel-code-generator's output by payload content: in the cache's
    # ``models`` store, or (no cache) in this run's processes only.
    memo = Memo(str(cache_dir) if cache_dir else None, "models", render_cache.salt if render_cache is not None else "")
    settings = python.Settings(formatter, memo)
    settings_by_kind = {"python": settings, "asyncapi": asyncapi.Settings(asyncapi_version)}
    # DIR's templates: every unit they render runs in a child process under
    # the run's limits (templates.render_unit), and all they write is bounded too.
    limits = workers_module.Limits.starting_now(config.template_timeout, config.template_memory) if templates else None
    units = [unit for kind in kinds for unit in outputs.units(kind, catalog_set, settings_by_kind, templates, code, limits)]
    untrusted = {i for i, unit in enumerate(units) if outputs.sandboxed(unit.kind, templates)}
    written = 0
    results: dict[int, dict[str, bytes]] = {}
    keys: dict[int, str] = {}
    for index, unit in enumerate(units):
        if render_cache is not None:
            keys[index] = render_cache.key(unit)
            hit = render_cache.get(keys[index], lazy=lazy)
            if hit is not None:
                results[index] = hit
    pending = sorted((i for i in range(len(units)) if i not in results), key=lambda i: (-outputs.RENDERERS[units[i].kind].cost, i))
    pool, helper = processes if processes is not None else workers_module.Started()
    # The helper takes the few Python units whose payload models are not in
    # the models store (it has loaded datamodel-code-generator meanwhile);
    # a title or an example edit renders here, without sending the unit
    # over; many units go to the workers.
    python_units = [i for i in pending if units[i].kind == "python"] if helper is not None else []
    to_helper = [i for i in python_units if _new_models(units[i].inputs, memo)] \
        if len(python_units) <= HELPER_MAX_UNITS else []
    if helper is not None and not to_helper:
        workers_module.stop(helper)  # its warm-up would only take CPU from the units rendered now

    def tasks(indexes: list[int]) -> list[Task]:
        return [(i, units[i].render, units[i].inputs) for i in indexes]

    handed = helper.imap(_render_task, tasks(to_helper)) if to_helper else iter(())
    here = [i for i in pending if i not in to_helper]
    # Indexes read every catalog: sending them to a worker would cost more
    # (pickling the whole model) than rendering them here, while workers run.
    # (Not those of DIR's templates: each renders in a child process, which
    # this one, running the workers' threads, may not fork: engine.workers.)
    local = [i for i in here if units[i].local and i not in untrusted]
    here = [i for i in here if not units[i].local or i in untrusted]
    bar = Progress(len(pending)) if config.progress else None
    # The pool's size, when one was forked before lint: its threads make this
    # process threaded, and ``config.workers`` (which forks no more then) says 1.
    workers = 1 if len(here) <= 2 else min(workers_module.pool_size(pool), len(here)) if pool is not None \
        else config.workers(len(here))
    # Each task carries its unit's inputs (pickled when it goes to a worker,
    # freed after the unit); workers forked before lint when ``pool`` is given.
    rendering: Iterator[tuple[int, dict[str, bytes]]]
    if pool is not None and (workers > 1 or untrusted.intersection(here)):
        rendering = pool.imap_unordered(_render_task, tasks(here))
    else:
        rendering = parallel(_render_task, tasks(here), workers, ordered=False)
    here_first = parallel(_render_task, tasks(local), 1)
    try:
        for index, files in itertools.chain(here_first, rendering, handed):  # the workers are busy meanwhile
            results[index] = files
            if index in untrusted:
                written += sum(len(content) for content in files.values())
                if written > config.template_memory:
                    raise _too_much(units[index].kind, templates, config.template_memory)
            if render_cache is not None and index in keys:
                render_cache.put(keys[index], files)
            if bar is not None:
                bar.step(f"{units[index].kind} {units[index].name}")
    finally:
        for started in (here_first, rendering):
            if hasattr(started, "close"):
                started.close()  # stops the workers now, whatever interrupted the loop (Ctrl-C, an error)
        if bar is not None:
            bar.close()
    if stats is not None:
        stats.units, stats.rendered, stats.workers = len(units), len(pending), workers
        stats.helped = len(to_helper)
        stats.cached = len(units) - len(pending)
        stats.keys = [(units[i].kind, keys[i]) for i in range(len(units))] if len(keys) == len(units) else None
    rendered: dict[str, dict[str, Any]] = {kind: {} for kind in kinds}
    for index, unit in enumerate(units):
        rendered[unit.kind].update(results[index])
    return rendered


def _too_much(kind: str, user: Path | None, bound: int) -> Exception:
    """All that DIR's templates wrote is larger than ``RunConfig.template_memory``."""
    from ..render import templates as template_module

    first = template_module.template_set(outputs.RENDERERS[kind].templates, user).user[0][2]
    return template_module.TemplateError(first, 1, f"the templates in {user} wrote more than {bound / 2**20:g} MiB "
                                                    "in all (the bound of their output); stopped")


def generate(catalog: str, out: str, kinds: Sequence[str], config: RunConfig = RunConfig(), *,
             check: bool = False) -> GenerateResult:
    """Lint ``catalog``, render ``kinds`` and write them into ``out`` (or with
    ``check``, compare), with the settings of ``config``. Its ``templates``
    is a checked directory (``use_templates``: a usage error when it is
    missing or a file there overrides nothing); a broken template is a
    ``templates.TemplateError``: nothing is written then. Waiting more than
    ``config.lock_timeout`` seconds for another run's lock on OUT is an
    OutputError: nothing is written."""
    cache_dir, formatter, user, lock_timeout = config.cache_dir, config.formatter, config.templates, config.lock_timeout
    asyncapi_version = config.asyncapi_version or _module("asyncapi").VERSIONS[0]  # (no jinja2 in it)
    run_key = _run_key(catalog, kinds, cache_dir, f"{formatter}\0asyncapi={asyncapi_version}", out, user) if cache_dir else None
    replayed = _replay(run_key, cache_dir) if run_key and cache_dir else None
    if replayed is not None:
        result, rendered, stats = replayed
    else:
        # Workers are forked now, while evcat is small: forked after lint, each
        # would share the parent's large, fragmented heap and copy its pages
        # as it allocates (measured: 270 MB per worker at 5,000 types). The
        # renderers are imported and warmed up first, so the workers share them too.
        # With a cache, few catalogs usually changed: the helper loads
        # datamodel-code-generator while this process lints, and renders the
        # Python units (two at most) whose payloads the models store does not
        # hold. Not on a cold cache (every catalog is new: the workers render
        # them), where it would only take a core from lint. (bench/MECHANISMS.md:
        # one payload changed 0.77x wall with it, --only python; a title edit
        # pays its load in CPU, on the core lint leaves idle.)
        helper = pool = None
        try:
            helper = start_helper() if cache_dir and "python" in kinds and _warm_cache(cache_dir) \
                and config.workers(2) > 1 else None
            _warm_up(kinds, _template_code(cache_dir))
            # On a cold cache every Python unit is rendered, by the workers: each
            # loads datamodel-code-generator while this process lints (lint runs
            # here, on one core).
            cold = "python" in kinds and helper is None and not (cache_dir and _warm_cache(cache_dir))
            pool = workers_module.pool(config.workers(1 << 16), _module("python").warm_up if cold else None)
            result = lint(catalog, config, exclude=[out])
            if result.has_errors:
                return GenerateResult(result)
            # The parsed files (values with the location of every node) are not
            # needed any more; free them before the workers fork (at 5,000 types
            # they are most of the memory).
            result.documents = {name: Document(name) for name in result.documents}
            gc.collect()
            # The model lives until the run ends: collections while rendering
            # leave it alone (at 5,000 types they took half the docs index time).
            with workers_module.frozen():
                stats = RenderStats()
                rendered = _render(result.catalog_set, kinds, config, stats=stats,
                                   processes=workers_module.Started(pool, helper), lazy=True)
        finally:
            workers_module.stop(helper, pool)
        if run_key and cache_dir and stats.keys is not None:
            _record(run_key, cache_dir, result, kinds, stats.keys)
    out_path = Path(out)
    try:
        if check:
            report = check_outputs(out_path, rendered, lock_timeout=lock_timeout)
        else:
            report = write(out_path, rendered, __version__, lock_timeout=lock_timeout,
                           stamps=_StoredStamps(cache_dir, out_path) if cache_dir else None)
    except Unavailable:
        # A cache entry changed after its sealed header was read (its bytes no
        # longer match): nothing was written; render without the cache.
        return generate(catalog, out, kinds, replace(config, cache_dir=None), check=check)
    return GenerateResult(result, report, stats)


class _StoredStamps(Stamps):
    """The writer's stamps of OUT (``writer.Stamps``), one sealed entry of the
    user's cache per OUT directory (its real path, device and inode)."""

    def __init__(self, cache_dir: str, out: Path) -> None:
        self.store = Store(cache_dir, "stamps")
        self.out = out
        self.key: str | None = None

    def _key(self) -> str | None:
        """Known once OUT exists (``write`` makes it before reading the stamps)."""
        if self.key is None:
            try:
                info = os.stat(self.out)
            except OSError:
                return None
            where = f"{os.path.realpath(self.out)}\0{info.st_dev}\0{info.st_ino}"
            self.key = hashlib.sha256(where.encode("utf-8", "surrogatepass")).hexdigest()
        return self.key

    def get(self) -> object:
        key = self._key()
        return self.store.get(key) if key is not None else None

    def put(self, stamps: dict[str, Any]) -> None:
        key = self._key()
        if key is not None:
            self.store.put(key, stamps)


# Nothing changed since the last run: every catalog file (and its name), evcat's
# code and templates, the tools, the outputs asked for and the formatter are
# the same. Then lint's findings and the rendered units are the same too, and
# are taken from the record of that run instead of being worked out again.
def _run_key(catalog: str, kinds: Sequence[str], cache_dir: str, formatter: str, out: str,
             templates: Path | None = None) -> str | None:
    kind_salts = "\0".join(outputs.kind_salt(kind, templates) for kind in kinds)
    digest = hashlib.sha256(f"{code_digest()}\0{formatter}\0{','.join(kinds)}\0{kind_salts}\0".encode())
    try:
        for path in find_catalog_files(catalog, [cache_dir, out]):
            content = read_catalog_bytes(path, catalog if os.path.isdir(catalog) else None)
            digest.update(f"{display_path(path)}\0{len(content)}\0".encode() + content)
    except (OSError, UsageError):
        return None  # lint reports it
    return digest.hexdigest()


def _record(run_key: str, cache_dir: str, result: LintResult, kinds: Sequence[str], keys: list[tuple[str, str]]) -> None:
    if any(d.extra for d in result.diagnostics):
        return  # structured details are not kept: such a run is simply not recorded
    diagnostics = [diagnostic_to_data(d) for d in result.diagnostics]
    Store(cache_dir, "runs").put(run_key, (list(result.documents), diagnostics, list(kinds), keys))


def _replay(run_key: str, cache_dir: str) -> tuple[LintResult, dict[str, dict[str, Any]], RenderStats] | None:
    record = Store(cache_dir, "runs").get(run_key)
    try:
        files, stored, kinds, keys = record
        keys = [(str(kind), str(key)) for kind, key in keys]
        diagnostics = [diagnostic_from_data(data) for data in stored]
    except (TypeError, ValueError):
        return None
    render_cache = RenderCache(cache_dir)
    rendered: dict[str, dict[str, Any]] = {kind: {} for kind in kinds}
    for kind, key in keys:
        files_of_unit = render_cache.get(key, lazy=True)
        if files_of_unit is None or kind not in rendered:
            return None  # an entry was removed: do the work
        rendered[kind].update(files_of_unit)
    result = LintResult({name: Document(name) for name in files}, build([]), diagnostics)
    stats = RenderStats(units=len(keys), cached=len(keys), rendered=0, keys=[(kind, key) for kind, key in keys], replayed=True)
    return result, rendered, stats


__all__ = ["RENDERERS",  # noqa: F822  (made on first use: __getattr__)
           "GenerateResult", "Progress", "RenderCache", "generate", "parse_kinds", "render", "use_templates"]
