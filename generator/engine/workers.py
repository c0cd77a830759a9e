"""The one home of evcat's execution machinery: worker processes, the warm
helper, garbage-collector tuning and signal handling.

Work spreads over CPU cores in forked processes (lint parsing, rendering,
validation): ``fork`` lets workers start with evcat imported and the catalog
already in memory (copy-on-write); only the work items and results are
pickled. Workers ignore Ctrl-C: the parent gets it, stops them and raises
``KeyboardInterrupt``, so an interrupted run prints one line, never a
traceback per worker. The interface:

- ``worker_count``, ``run``, ``run_shared``: map work over processes;
- ``claimed``: work shared with this process, chunk by chunk as each is free;
- ``pool``, ``helper``, ``Started``, ``stop``: processes started ahead of their work;
- ``no_collection``, ``frozen``: garbage-collector tuning for a stage;
- ``bounded``, ``Limits``: untrusted work (``--templates``) in a child
  process with a deadline and a memory bound.

``os._exit`` is used in two places only: ``cli.run``, after ``main`` has
returned (every pool stopped and joined, every file closed by its ``with``
block, the writer's journal gone) and stdout and stderr are flushed; and
the child that ``bounded`` forks, after it has sent its result (as
multiprocessing's own forked children end).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing import get_all_start_methods, get_context
from typing import Any, NamedTuple, TypeVar

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


def _ignore_interrupts(parent: int | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers
    _end_with_parent(parent)  # and should it be killed, they end too (and the children of ``bounded`` they run)


def pool(workers: int, warm_up: Callable[[], object] | None = None) -> Any:
    """``workers`` forked processes started now (for work handed over later),
    each running ``warm_up`` first (e.g. loading a slow library while the
    parent works), or None when fewer than two are wanted or fork is not
    available. Its size is ``pool_size``: the pool's own threads make this
    process threaded, so ``worker_count`` says 1 from now on."""
    if workers < 2 or worker_count(workers, workers) < 2:
        return None
    _prctl()
    if warm_up is not None:
        return get_context("fork").Pool(workers, initializer=_warm, initargs=(warm_up, os.getpid()))
    return get_context("fork").Pool(workers, initializer=_ignore_interrupts, initargs=(os.getpid(),))


def pool_size(processes: Any) -> int:
    """How many workers a pool made by ``pool`` has (0 for None)."""
    return 0 if processes is None else int(processes._processes)


def _warm(function: Callable[[], object], parent: int) -> None:
    _ignore_interrupts(parent)
    function()


class Helper:
    """One forked process that runs ``warm_up`` at once (e.g. loads a slow
    library while the parent works), then the work handed to it with
    ``imap``. Unlike a ``Pool`` it starts no thread here, so the parent may
    still fork its workers (``pool``) after it."""

    def __init__(self, warm_up: Callable[[], object]) -> None:
        context = get_context("fork")
        self.connection, theirs = context.Pipe()
        self.process = context.Process(
            target=_help, args=(theirs, self.connection, warm_up, os.getpid()), daemon=True
        )
        self.process.start()
        theirs.close()

    def imap(self, function: Callable[[Item], Result], items: Iterable[Item]) -> Iterator[Result]:
        """``function`` of each of ``items``, in order, run in the helper (the
        first sent now, each next one once the result before it is read: two
        large messages in flight would fill the pipe both ways). What the
        function raises is raised here; what the helper cannot do (it died,
        a result or an error would not pickle) is done here instead."""
        pending = list(items)
        if pending and not self._send(function, pending[0]):
            return (function(item) for item in pending)
        return self._results(function, pending)

    def _send(self, function: Callable[[Any], Any], item: Any) -> bool:
        try:
            self.connection.send((function, item))
        except (OSError, pickle.PicklingError, TypeError, AttributeError):  # gone, or not picklable
            return False
        return True

    def _results(self, function: Callable[[Item], Result], pending: list[Item]) -> Iterator[Result]:
        for index, item in enumerate(pending):
            try:
                ok, result = self.connection.recv()
            except Exception:  # noqa: BLE001 - died, or a result that does not unpickle
                self.terminate()
                yield from (function(rest) for rest in pending[index:])
                return
            if not ok:
                raise result
            yield result
            if index + 1 < len(pending) and not self._send(function, pending[index + 1]):
                yield from (function(rest) for rest in pending[index + 1 :])
                return

    def terminate(self) -> None:
        self.process.kill()

    def join(self) -> None:
        self.process.join()
        self.connection.close()


def _help(connection: Any, parents: Any, warm_up: Callable[[], object], parent: int) -> None:
    parents.close()  # the parent's end, inherited: closed, the parent's close ends the loop
    _ignore_interrupts(parent)
    warm_up()
    while True:
        try:
            function, item = connection.recv()
        except EOFError:  # the parent is done
            return
        try:
            outcome = (True, function(item))
        except BaseException as error:  # noqa: BLE001 - raised in the parent
            outcome = (False, error)
        try:
            connection.send(outcome)
        except Exception:  # noqa: BLE001 - not picklable: the parent does it itself
            return


def helper(warm_up: Callable[[], object]) -> Helper | None:
    """The warm ``Helper``, or None where a second process is not wanted
    (one core, ``EVCAT_JOBS=1``, a threaded process, no fork)."""
    if worker_count(2, 2) < 2:
        return None
    _prctl()
    return Helper(warm_up)


class Started(NamedTuple):
    """The processes a command forked ahead of their work: the workers
    (``pool``) and the warm helper (``helper``); None where not started."""

    pool: Any = None
    helper: Any = None


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


def claimed(function: Callable[[Any, Item], Result], shared: Any, chunks: list[Item], workers: int) -> Iterator[Result]:
    """``function(shared, chunk)`` for every chunk, by ``workers`` processes
    forked now and by this one once it asks for the results: each takes the
    next chunk nobody has claimed (a counter in shared memory), so the work
    ends at the same time everywhere, whatever this process did meanwhile
    and however uneven the chunks are. Results come in no particular order.
    ``function`` and ``shared`` reach the workers by fork (never pickled);
    the results are pickled. What a worker raises is raised here; the chunks
    of a worker that died are worked out here."""
    if workers < 1 or len(chunks) < 2 or worker_count(2, 2) < 2:
        return (function(shared, chunk) for chunk in chunks)
    return Claims(function, shared, chunks, workers)


class Claims(Iterator[Result]):
    """The running work of ``claimed``."""

    def __init__(self, function: Callable[[Any, Any], Result], shared: Any, chunks: list[Any], workers: int) -> None:
        context = get_context("fork")
        self.function, self.shared, self.chunks = function, shared, chunks
        self.counter = context.Value("i", 0)  # the next chunk to claim, in shared memory (with its lock)
        self.connections: list[Any] = []
        self.processes: list[Any] = []
        self._results: Iterator[Result] | None = None
        _prctl()
        gc.freeze()  # as in ``run``: the workers' collections leave the inherited pages shared
        try:
            for _ in range(workers):
                ours, theirs = context.Pipe(duplex=False)
                process = context.Process(
                    target=_claiming, args=(theirs, ours, function, shared, chunks, self.counter, os.getpid()), daemon=True
                )
                process.start()
                theirs.close()
                self.connections.append(ours)
                self.processes.append(process)
        except BaseException:
            self.close()
            raise

    def __next__(self) -> Result:
        if self._results is None:
            self._results = self._take()
        try:
            return next(self._results)
        except BaseException:
            self.close()
            raise

    def _take(self) -> Iterator[Result]:
        done: set[int] = set()
        while (index := _claim(self.counter, len(self.chunks))) is not None:
            done.add(index)
            yield self.function(self.shared, self.chunks[index])
        for connection in self.connections:
            try:
                ok, rows = connection.recv()
            except Exception:  # noqa: BLE001 - the worker died: its chunks are worked out below
                continue
            if not ok:
                raise rows
            for index, result in rows:
                done.add(index)
                yield result
        for index in range(len(self.chunks)):
            if index not in done:
                yield self.function(self.shared, self.chunks[index])

    def close(self) -> None:
        processes, self.processes = self.processes, []
        for process in processes:
            if process.is_alive():
                process.kill()
            process.join()
        for connection in self.connections:
            connection.close()
        self.connections = []
        if processes:
            gc.unfreeze()


def _claim(counter: Any, total: int) -> int | None:
    """The next chunk nobody has claimed, or None."""
    with counter.get_lock():
        index = int(counter.value)
        if index >= total:
            return None
        counter.value = index + 1
    return index


def _claiming(connection: Any, parents: Any, function: Callable[[Any, Any], Any], shared: Any, chunks: list[Any],
              counter: Any, parent: int) -> None:
    """In a worker of ``claimed``: chunks until none is left, then all their results at once."""
    parents.close()
    _ignore_interrupts(parent)
    rows = []
    try:
        while (index := _claim(counter, len(chunks))) is not None:
            rows.append((index, function(shared, chunks[index])))
        outcome: tuple[bool, Any] = (True, rows)
    except BaseException as error:  # noqa: BLE001 - raised in the parent
        outcome = (False, error)
    connection.send(outcome)
    connection.close()


# What ``run_shared`` hands its workers, (function, shared): set while they
# fork, so they inherit it (copy-on-write) instead of receiving it pickled.
_shared: tuple[Callable[[Any, Any], Any], Any] | None = None


def _call_shared(item: Any) -> Any:
    assert _shared is not None
    function, shared = _shared
    return function(shared, item)


def run_shared(function: Callable[[Any, Item], Result], shared: Any, items: Iterable[Item], workers: int, *,
               ordered: bool = True, beside: bool = False) -> Iterator[Result]:
    """``function(shared, item)`` for every item, in ``workers`` forked processes.

    ``function`` and ``shared`` (a catalog model, a validator) reach the
    workers by fork and are never pickled; only the items and the results
    are. Like ``run``, the workers start now (``beside``: see ``run``).
    """
    global _shared
    work = list(items)
    if workers < (1 if beside else 2) or len(work) < 2:
        return (function(shared, item) for item in work)
    previous, _shared = _shared, (function, shared)
    try:
        return run(_call_shared, work, workers, ordered=ordered, beside=beside)
    finally:
        _shared = previous  # the workers have their copy


def run(function: Callable[[Item], Result], items: Iterable[Item], workers: int, *, ordered: bool = True,
        chunksize: int = 1, beside: bool = False) -> Iterator[Result]:
    """``map(function, items)`` in ``workers`` forked processes (lazily in this
    one when ``workers`` < 2). The workers start now, so this process can do
    other work before it takes the results; ``ordered=False`` yields them as
    they finish. Closing the iterator stops the workers. ``beside``: this
    process has other work meanwhile, so even one worker is worth forking
    (the caller counts this process as one of the cores)."""
    work = list(items)
    if workers < (1 if beside else 2) or len(work) < 2 or worker_count(2, 2) < 2:
        return (function(item) for item in work)
    # Objects that exist now move to the permanent generation: the workers'
    # garbage collector then leaves them alone instead of writing to every
    # page they sit on, so those pages stay shared with this process (the
    # memory of a large run, counted once instead of once per worker).
    _prctl()
    gc.freeze()
    try:
        pool = get_context("fork").Pool(workers, initializer=_ignore_interrupts, initargs=(os.getpid(),))
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


# -- untrusted work: a child process with a deadline and a memory bound ------


@dataclass(frozen=True)
class Limits:
    """Bounds of untrusted work (``--templates``; ``RunConfig.template_timeout``
    and ``template_memory``): all of it ends by ``deadline`` (a
    ``time.monotonic()`` value: the clock is the system's, the same in every
    process), and each process doing it may grow its address space by at
    most ``memory`` bytes beyond what it had when it was started."""

    seconds: float  # the time allowed in all (for messages)
    deadline: float
    memory: int

    @staticmethod
    def starting_now(seconds: float, memory: int) -> Limits:
        return Limits(seconds, time.monotonic() + seconds, memory)


class OutOfTime(Exception):
    """The deadline of ``Limits`` passed. Raised inside the work itself when
    it can be (so its traceback shows where it was), else by ``bounded``."""


class Ended(Exception):
    """The child of ``bounded`` ended without a result (killed, e.g. by its CPU limit)."""


# After the deadline, how long the parent waits for the child's own alarm to
# stop the work (a long step in C code cannot be interrupted) before it kills it.
_GRACE = 2.0


def bounded(function: Callable[[Item], Result], item: Item, limits: Limits) -> Result:
    """``function(item)`` in a child process under ``limits``: its result,
    or the exception it raised (``OutOfTime`` when the deadline passed,
    ``MemoryError`` when it needed more memory), or ``Ended``.

    The child is forked where this process may fork (``worker_count``: one
    thread, e.g. a render worker), else started fresh (multiprocessing's
    spawn: ``function`` and ``item`` are pickled). In the child:
    ``RLIMIT_AS`` (its address space now plus ``limits.memory``: a larger
    allocation fails with ``MemoryError``), ``RLIMIT_CPU`` (the seconds
    left, then SIGXCPU) and an alarm at the deadline that raises
    ``OutOfTime`` where the work is; the parent kills it ``_GRACE`` seconds
    after the deadline if it is still running. Ctrl-C goes to the parent."""
    if limits.deadline - time.monotonic() <= 0:
        raise OutOfTime(f"longer than {limits.seconds:g} s")
    if "fork" in get_all_start_methods() and single_threaded():
        return _forked(function, item, limits)
    return _spawned(function, item, limits)


def _limit(limits: Limits, parent: int | None = None) -> None:
    """In the child of ``bounded``: its limits, set before the work starts."""
    import resource

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_with_parent(parent)
    # What the child inherited is left alone by its collections: scanning it
    # would copy every page it shares with its parent (a fork per unit).
    gc.freeze()
    left = limits.deadline - time.monotonic()
    try:
        with open("/proc/self/statm", "rb") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + limits.memory, size + limits.memory))
    except (OSError, ValueError, IndexError):
        pass  # no /proc (not Linux): the deadline still holds
    cpu = max(1, math.ceil(left)) + 1  # CPU seconds of this child only (they start at 0)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    def alarm(number: int, frame: Any) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0.25)  # again, should the work swallow this one
        raise OutOfTime(f"longer than {limits.seconds:g} s")

    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, or None where there is none. Looked up in the parent
    before it forks (``pool``, ``helper``, ``run``, ``bounded``): each worker importing ctypes itself cost
    it about 10 ms, at the start of its work."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def _end_with_parent(parent: int | None = None) -> None:
    """The child of ``bounded`` is killed when the process that started it
    ends (Linux's ``PR_SET_PDEATHSIG``): a run stopped by an error in another
    unit, or killed, leaves no template running until its deadline.
    ``parent``: that process's pid, taken before the fork (asked here, a
    parent killed between the fork and this call would go unnoticed: the
    child would already have been handed to init, and live on holding the
    run's output pipes)."""
    if parent is None:
        parent = os.getppid()
    prctl = _prctl()
    if prctl is None:
        return  # not Linux: the deadline and the CPU limit still end it
    prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent ended before the request took effect
        raise SystemExit(1)


def _outcome(function: Callable[[Item], Any], item: Item) -> bytes:
    """The pickled ``(True, result)`` or ``(False, exception)`` of ``function(item)``."""
    try:
        outcome: tuple[bool, Any] = (True, function(item))
    except BaseException as error:  # noqa: BLE001  (handed to the parent, which raises it)
        outcome = (False, error)
    signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        return pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except MemoryError:
        return pickle.dumps((False, MemoryError()))
    except Exception as error:  # noqa: BLE001  (an exception that does not pickle)
        return pickle.dumps((False, Ended(f"{type(error).__name__}: {error}")))


def _forked(function: Callable[[Item], Result], item: Item, limits: Limits) -> Result:
    reading, writing = os.pipe()
    parent = os.getpid()
    _prctl()
    pid = os.fork()
    if pid == 0:  # the child: the work, its outcome into the pipe, and out
        code = 0
        try:
            os.close(reading)
            _limit(limits, parent)
            data = _outcome(function, item)
            with open(writing, "wb") as pipe:
                pipe.write(data)
        except BaseException:  # noqa: BLE001  (the parent reports a child without a result)
            code = 1
        finally:
            os._exit(code)
    os.close(writing)
    chunks: list[bytes] = []
    try:
        with open(reading, "rb", buffering=0) as pipe:
            while True:
                left = limits.deadline + _GRACE - time.monotonic()
                if left <= 0 or not select.select([pipe], [], [], left)[0]:
                    raise OutOfTime(f"longer than {limits.seconds:g} s")
                chunk = pipe.read(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    except BaseException:  # out of time, or Ctrl-C: the child goes too
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        _, status = os.waitpid(pid, 0)
    return _result(b"".join(chunks), os.WTERMSIG(status) if os.WIFSIGNALED(status) else None, limits)


def _result(data: bytes, killed_by: int | None, limits: Limits) -> Any:
    """What ``bounded`` returns or raises, from the child's outcome (``data``)
    and the signal that ended it, if any."""
    if not data:
        if killed_by in (signal.SIGXCPU, signal.SIGKILL):
            raise OutOfTime(f"longer than {limits.seconds:g} s")
        raise Ended(f"the process ended without a result ({f'signal {killed_by}' if killed_by else 'no signal'})")
    ok, value = pickle.loads(data)  # our own child's bytes, through our own pipe
    if ok:
        return value
    raise value


def _spawned_child(connection: Any, function: Callable[[Any], Any], item: Any, limits: Limits) -> None:
    _limit(limits)
    connection.send_bytes(_outcome(function, item))
    connection.close()


def _spawned(function: Callable[[Item], Result], item: Item, limits: Limits) -> Result:
    context = get_context("spawn")
    receiving, sending = context.Pipe(duplex=False)
    process = context.Process(target=_spawned_child, args=(sending, function, item, limits), daemon=True)
    process.start()
    sending.close()
    data = b""
    try:
        left = limits.deadline + _GRACE - time.monotonic()
        if not receiving.poll(max(left, 0)):
            raise OutOfTime(f"longer than {limits.seconds:g} s")
        with contextlib.suppress(EOFError):
            data = receiving.recv_bytes()
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        receiving.close()
    code = process.exitcode or 0
    return _result(data, -code if code < 0 else None, limits)
