"""The one home of evcat's execution machinery: worker processes, the warm
helper, garbage-collector tuning and signal handling.

Work spreads over CPU cores in forked processes (lint parsing, rendering,
validation): ``fork`` lets workers start with evcat imported and the catalog
already in memory (copy-on-write); only the work items and results are
pickled. Workers ignore Ctrl-C: the parent gets it, stops them and raises
``KeyboardInterrupt``, so an interrupted run prints one line, never a
traceback per worker. The interface:

- ``worker_count``, ``run``, ``run_shared``: map work over processes;
- ``pool``, ``helper``, ``stop``: processes started ahead of their work;
- ``no_collection``, ``frozen``: garbage-collector tuning for a stage;
- ``interrupts_held``: Ctrl-C waits until a critical section is done.

``os._exit`` is used in one place only, ``cli.run``: after ``main`` has
returned (every pool stopped and joined, every file closed by its ``with``
block, the writer's journal gone) and stdout and stderr are flushed.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from multiprocessing import get_all_start_methods, get_context
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def worker_count(items: int, jobs: int | None = None) -> int:
    """How many processes are worth starting for ``items`` pieces of work:
    at most ``jobs`` (``RunConfig.jobs``; None: ``EVCAT_JOBS``, else one per
    core; 1 turns workers off).

    The one place that decides whether evcat forks: only a process with a
    single thread does. A child forked from a threaded process inherits
    every lock another thread held at that moment, held forever (POSIX
    fork(2): only the calling thread is copied; Python's ``os.fork`` warns
    of it since 3.12). ``evcat lsp`` reads its stream on a thread: it checks
    in-process, and its workers could otherwise hang for good.
    """
    if "fork" not in get_all_start_methods() or not single_threaded():
        return 1
    if jobs is None:
        try:
            jobs = int(os.environ.get("EVCAT_JOBS", "0")) or len(os.sched_getaffinity(0))
        except (ValueError, AttributeError):
            jobs = os.cpu_count() or 1
    return max(1, min(jobs, items))


def single_threaded() -> bool:
    """Whether this process runs one thread (OS threads, so a thread started
    by a native library counts too; Python's own count where /proc is absent)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return threading.active_count() == 1


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers


def pool(workers: int) -> Any:
    """``workers`` forked processes started now (for work handed over later),
    or None when fewer than two are wanted or fork is not available."""
    if workers < 2 or worker_count(workers, workers) < 2:
        return None
    return get_context("fork").Pool(workers, initializer=_ignore_interrupts)


def _warm(function: Callable[[], object]) -> None:
    _ignore_interrupts()
    function()


def helper(warm_up: Callable[[], object]) -> Any:
    """One forked process that runs ``warm_up`` now (e.g. loads a slow
    library while the parent works) and then takes work; None without fork."""
    if worker_count(2, 2) < 2:
        return None
    return get_context("fork").Pool(1, initializer=_warm, initargs=(warm_up,))


def stop(*pools: Any) -> None:
    """Stop pools started by ``pool`` or ``helper`` (None is skipped)."""
    for processes in pools:
        if processes is not None:
            processes.terminate()
            processes.join()


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """No cyclic garbage collection meanwhile: a stage that builds millions of
    small containers and no cycles (loading, validating) would only have them
    rescanned (a third of the run time)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


@contextlib.contextmanager
def frozen() -> Iterator[None]:
    """What exists now is left alone by collections meanwhile (a large model
    that lives until the run ends); it becomes collectable again afterwards
    (``--watch`` runs again in the same process)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold SIGINT while a critical section runs (the writer's renames), so
    Ctrl-C cannot leave half an update; it is raised when the section ends."""
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


# What ``run_shared`` hands its workers, (function, shared): set while they
# fork, so they inherit it (copy-on-write) instead of receiving it pickled.
_shared: tuple[Callable[[Any, Any], Any], Any] | None = None


def _call_shared(item: Any) -> Any:
    assert _shared is not None
    function, shared = _shared
    return function(shared, item)


def run_shared(function: Callable[[Any, Item], Result], shared: Any, items: Iterable[Item], workers: int, *,
               ordered: bool = True) -> Iterator[Result]:
    """``function(shared, item)`` for every item, in ``workers`` forked processes.

    ``function`` and ``shared`` (a catalog model, a validator) reach the
    workers by fork and are never pickled; only the items and the results
    are. Like ``run``, the workers start now.
    """
    global _shared
    work = list(items)
    if workers < 2 or len(work) < 2:
        return (function(shared, item) for item in work)
    previous, _shared = _shared, (function, shared)
    try:
        return run(_call_shared, work, workers, ordered=ordered)
    finally:
        _shared = previous  # the workers have their copy


def run(function: Callable[[Item], Result], items: Iterable[Item], workers: int, *, ordered: bool = True,
        chunksize: int = 1) -> Iterator[Result]:
    """``map(function, items)`` in ``workers`` forked processes (lazily in this
    one when ``workers`` < 2). The workers start now, so this process can do
    other work before it takes the results; ``ordered=False`` yields them as
    they finish. Closing the iterator stops the workers."""
    work = list(items)
    if workers < 2 or len(work) < 2 or worker_count(workers, workers) < 2:
        return (function(item) for item in work)
    # Objects that exist now move to the permanent generation: the workers'
    # garbage collector then leaves them alone instead of writing to every
    # page they sit on, so those pages stay shared with this process (the
    # memory of a large run, counted once instead of once per worker).
    gc.freeze()
    try:
        pool = get_context("fork").Pool(workers, initializer=_ignore_interrupts)
    except BaseException:
        gc.unfreeze()
        raise
    mapper: Any = pool.imap if ordered else pool.imap_unordered
    return Running(pool, mapper(function, work, chunksize))


class Running(Iterator[Result]):
    """The results of work running in a pool; the pool is stopped when they
    are all taken, when taking one fails, or on ``close()`` (even if none
    was taken)."""

    def __init__(self, pool: Any, results: Iterator[Result]) -> None:
        self._pool = pool
        self._results = results

    def __next__(self) -> Result:
        try:
            return next(self._results)
        except StopIteration:
            self._stop(finished=True)
            raise
        except BaseException:
            self._stop(finished=False)
            raise

    def close(self) -> None:
        self._stop(finished=False)

    def _stop(self, finished: bool) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if finished:
            pool.close()
        else:
            pool.terminate()
        pool.join()
        gc.unfreeze()
