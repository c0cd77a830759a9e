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


def run(function: Callable[[Item], Result], items: Iterable[Item], workers: int, *, ordered: bool = True,
        chunksize: int = 1) -> Iterator[Result]:
    """``map(function, items)`` in ``workers`` forked processes (in this one when
    ``workers`` < 2). ``ordered=False`` yields results as they finish."""
    work = list(items)
    if workers < 2 or len(work) < 2:
        yield from map(function, work)
        return
    # Objects that exist now move to the permanent generation: the workers'
    # garbage collector then leaves them alone instead of writing to every
    # page they sit on, so those pages stay shared with this process (the
    # memory of a large run, counted once instead of once per worker).
    gc.freeze()
    pool = get_context("fork").Pool(workers, initializer=_ignore_interrupts)
    try:
        mapper: Any = pool.imap if ordered else pool.imap_unordered
        yield from mapper(function, work, chunksize)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        gc.unfreeze()
