"""Work spread over CPU cores in forked processes (lint parsing, rendering, validation).

``fork`` lets workers start with evcat imported and the catalog already in
memory (copy-on-write); only the work items and results are pickled. Workers
ignore Ctrl-C: the parent gets it, stops them and raises ``KeyboardInterrupt``,
so an interrupted run prints one line, never a traceback per worker.
"""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from multiprocessing import get_all_start_methods, get_context
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def worker_count(items: int) -> int:
    """How many processes are worth starting for ``items`` pieces of work
    (``EVCAT_JOBS`` overrides the number of cores; 1 turns workers off)."""
    if "fork" not in get_all_start_methods():
        return 1
    try:
        cores = int(os.environ.get("EVCAT_JOBS", "0")) or len(os.sched_getaffinity(0))
    except (ValueError, AttributeError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, items))


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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
    if workers < 2 or len(work) < 2:
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
