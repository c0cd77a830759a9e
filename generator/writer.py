"""Stage 5: the one writer. All outputs reach the disk through here.

Rendering happens in memory first; then, all or nothing:
1. every changed file is written next to its target as a temporary file (a
   failure here, such as a full disk, removes the temporaries: OUT is as it was);
2. the temporaries are renamed over their targets and generated files that
   are no longer produced are deleted, with Ctrl-C held back until done;
3. the manifest (``OUT/.evcat-manifest.json``) records what evcat wrote, so
   evcat deletes only its own files: a user's file inside OUT survives. OUT
   is untrusted input (it is often committed): an entry of the manifest that
   is no safe relative path inside OUT (``../x``, ``/etc/x``, a name under a
   symlinked directory, a symlink itself) is ignored, reported once as a
   warning and left out of the next manifest; nothing is deleted through it.
Files whose content did not change are not touched. Every path is checked to
resolve inside OUT (see ``naming.safe_file_name`` for how names are made).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
import re
import secrets
import signal
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

MANIFEST = ".evcat-manifest.json"


class OutputError(Exception):
    """An output that cannot be written (a path outside OUT, an OS error)."""


class Unavailable(Exception):
    """The bytes of a file to write, taken from the cache, are no longer
    there as sealed (the entry changed meanwhile); nothing was written."""


class LazyFile:
    """A file whose size and SHA-256 ``digest`` are known and whose bytes are
    read only when they must be written (e.g. a file of the engine's render
    cache, ``engine.store.CachedFile``): the writer compares it with OUT by
    its digest. A subclass gives ``read_all``."""

    __slots__ = ()
    size: int
    digest: bytes

    @classmethod
    def read_all(cls, files: list[LazyFile]) -> dict[LazyFile, bytes]:
        """The bytes of ``files`` (all of this class) that are still what their
        digests say; the others are left out."""
        raise NotImplementedError


# What an output holds: its bytes, or a file read only to be written.
Content = bytes | LazyFile


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


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # unsafe entries of the previous manifest (not deleted)

    @property
    def changed(self) -> bool:
        return bool(self.written or self.deleted)


def _checked(out: str, relative: str) -> str:
    """``out/relative``, refused unless it stays inside OUT: no absolute path,
    no ``..``, no backslash, and no symlinked directory on the way that leads
    out. (The file itself may be a symlink: ``os.replace`` replaces the link,
    it never writes through it.)"""
    parts = _parts(relative)
    if parts is None:
        raise OutputError(f"refusing to write '{relative}': outputs stay inside {out}")
    if not _inside(out, "/".join(parts[:-1])):
        raise OutputError(f"refusing to write '{relative}': it resolves outside {out}")
    return os.path.join(out, relative)  # a string: pathlib would cost a fifth of a second at 21,000 files


def _parts(relative: str) -> list[str] | None:
    """The components of a relative path that stays inside its root by its
    spelling (no absolute path, no ``..``, no backslash, no NUL), or None."""
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if relative.startswith("/") or ".." in parts or "\\" in relative or "\0" in relative or not parts or relative.endswith(("/", "/.")):
        return None
    return parts


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


def read_manifest(out: Path, ignored: list[str] | None = None) -> dict[str, list[str]]:
    """Generated files by kind (python, jsonschema, ...) from the last run:
    only entries spelled as relative paths that stay inside OUT (``_parts``);
    the others are added to ``ignored``. (Whether one leads out through a
    symlinked directory is checked before it is deleted: ``_plan``.)"""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}  # not a manifest evcat wrote: nothing in OUT counts as evcat's
    manifest: dict[str, list[str]] = {}
    for kind, names in files.items():
        if not isinstance(kind, str) or not isinstance(names, list):
            continue
        kept = []
        for name in names:
            if not isinstance(name, str):
                continue
            if _parts(name) is not None:
                kept.append(name)
            elif ignored is not None and name not in ignored:
                ignored.append(name)
        if kept or not names:
            manifest[kind] = kept
    return manifest


def plan(out: Path, outputs: Mapping[str, Mapping[str, Content]]) -> WriteReport:
    """What ``write`` would do, without touching the disk (``--check``)."""
    return _plan(out, outputs)[0]


# A file of OUT as evcat left it: (inode, size, mtime_ns, ctime_ns, SHA-256).
Stamp = tuple[int, int, int, int, bytes]


class Stamps:
    """Where ``write`` keeps, for one OUT, the stamp of each file it wrote or
    verified by content (``get``/``put`` of a {relative path: Stamp} dict:
    e.g. a sealed entry in the user's cache, ``generate``). A file whose
    inode, size, mtime and ctime still match its stamp holds the bytes the
    stamp's digest names: the next ``write`` trusts it without reading it
    (no write leaves all four unchanged; ctime cannot be set back).
    ``--check`` never uses stamps: it compares content."""

    def get(self) -> object:
        return None

    def put(self, stamps: dict[str, Stamp]) -> None:
        pass


# A file changed less than this long ago could change again within the same
# tick of the file system's clock and keep all four values (git's "racy"
# entries): it is not stamped, the next run compares its content. Linux
# stamps files with its coarse clock (one tick: 10 ms at most); a file whose
# times are whole milliseconds (a file system with coarse times) is never
# stamped.
RACY_NS = 20_000_000


def _stamp(path: str, digest: bytes) -> Stamp | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or time.time_ns() - info.st_ctime_ns < RACY_NS or info.st_ctime_ns % 1_000_000 == 0:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, digest)


def _valid_stamps(value: object) -> dict[str, Stamp]:
    if not isinstance(value, dict):
        return {}
    return {name: stamp for name, stamp in value.items()
            if isinstance(name, str) and isinstance(stamp, tuple) and len(stamp) == 5
            and all(type(number) is int for number in stamp[:4]) and isinstance(stamp[4], bytes)}


def _plan(out: Path, outputs: Mapping[str, Mapping[str, Content]],
          trusted: Mapping[str, Stamp] | None = None,
          verified: dict[str, Stamp] | None = None) -> tuple[WriteReport, dict[str, list[str]]]:
    """``plan``, and the previous manifest it read. ``trusted``: stamps
    (``Stamps``) of files that need not be read; ``verified`` receives the
    stamps of the files found unchanged."""
    report = WriteReport()
    _inside.cache_clear()  # directories are resolved afresh on every run
    previous = read_manifest(out, report.ignored)
    root = str(out)
    directories: dict[str, bool] = {}  # does OUT/dir exist? (a cold run reads nothing)
    compared: list[tuple[str, str, Content]] = []  # (relative, target, content) of files that may be there
    for kind, files in outputs.items():
        for relative, content in sorted(files.items()):
            target = _checked(root, relative)
            parent = os.path.dirname(relative)
            if parent not in directories:
                directories[parent] = os.path.isdir(os.path.join(root, parent))
            if directories[parent]:
                compared.append((relative, target, content))
    same = _compare(compared, trusted or {}, verified)
    for kind, files in outputs.items():
        for relative in sorted(files):
            (report.unchanged if relative in same else report.written).append(relative)
        for relative in sorted(set(previous.get(kind, ())) - set(files)):
            try:
                target = _checked(root, relative)
            except OutputError:  # through a symlinked directory out of OUT
                report.ignored.append(relative)
                continue
            if os.path.islink(target):  # evcat writes regular files only: a link there is not evcat's
                report.ignored.append(relative)
            elif os.path.exists(target):
                report.deleted.append(relative)
    for kind in [kind for kind in previous if kind not in outputs]:  # kept in the next manifest as they are
        kept = []
        for relative in previous[kind]:
            try:
                _checked(root, relative)
                kept.append(relative)
            except OutputError:
                report.ignored.append(relative)
        if kept or not previous[kind]:
            previous[kind] = kept
        else:
            del previous[kind]
    return report, previous


def _read(path: str, size: int | None = None) -> bytes | None:
    """The content of the regular file ``path`` (never through a link, never
    blocking on a FIFO); None when ``size`` is given and the file has
    another size (then it differs, and is not read)."""
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        if size is not None and info.st_size != size:
            return None
        data = os.read(descriptor, info.st_size + 1)  # one call: a regular file reads short only at its end
        if len(data) == info.st_size:
            return data
        parts = [data]  # it changed size meanwhile: read to the end
        while parts[-1]:
            parts.append(os.read(descriptor, 1 << 20))
        return b"".join(parts)
    finally:
        os.close(descriptor)


def _same(path: str, content: Content) -> bool:
    """Whether the file ``path`` holds ``content`` (another size: not read;
    a cached file: compared by its sealed digest)."""
    if isinstance(content, LazyFile):
        data = _read(path, content.size)
        return data is not None and hashlib.sha256(data).digest() == content.digest
    return _read(path, len(content)) == content


def _compare(files: list[tuple[str, str, Content]], trusted: Mapping[str, Stamp],
             verified: dict[str, Stamp] | None = None) -> set[str]:
    """The relative names of ``files`` whose target holds their content: by
    its stamp in ``trusted`` where that still matches (not read), else by
    content. ``verified`` (when given) receives the stamp of each one found.
    (Measured: two threads reading and hashing were slower, not faster.)"""
    found = set()
    for relative, target, content in files:
        digest = content.digest if isinstance(content, LazyFile) else None
        known = trusted.get(relative)
        if known is not None and digest is not None and known[4] == digest:
            try:
                info = os.lstat(target)
            except OSError:
                continue
            if (stat.S_ISREG(info.st_mode) and info.st_ino == known[0] and info.st_size == known[1]
                    and info.st_mtime_ns == known[2] and info.st_ctime_ns == known[3]):
                found.add(relative)
                if verified is not None:
                    verified[relative] = known
                continue
        try:
            if _same(target, content):
                found.add(relative)
                if verified is not None:
                    stamp = _stamp(target, digest if digest is not None else hashlib.sha256(content).digest())  # type: ignore[arg-type]
                    if stamp is not None:
                        verified[relative] = stamp
        except OSError:
            pass
    return found


def _materialized(contents: list[Content]) -> list[bytes]:
    """``contents`` as bytes (lazy files read, by their class's ``read_all``);
    Unavailable if one is no longer what its digest says."""
    by_class: dict[type[LazyFile], list[LazyFile]] = {}
    for content in contents:
        if isinstance(content, LazyFile):
            by_class.setdefault(type(content), []).append(content)
    loaded: dict[LazyFile, bytes] = {}
    for kind, files in by_class.items():
        found = kind.read_all(files)
        if len(found) < len(set(files)):
            raise Unavailable("a cache entry changed while it was used")
        loaded.update(found)
    return [loaded[content] if isinstance(content, LazyFile) else content for content in contents]


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
JOURNAL = ".evcat-journal"
_TEMPORARY = re.compile(r"^\.[^/]+\.evcat-tmp-[0-9a-f]{16}\Z")


# How long a run waits for another run's lock on OUT by default (``--lock-timeout``).
LOCK_TIMEOUT = 60.0


@contextlib.contextmanager
def locked(out: Path, *, shared: bool = False, timeout: float | None = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold a lock on OUT (``flock`` on the directory itself: no lock file is
    left behind). A second run into the same OUT waits here until the first
    one has committed, then plans again from what is on disk, so it never
    mixes its files with another run's nor reports a write it did not do.
    After ``timeout`` seconds (None: no limit) of waiting it gives up with an
    OutputError naming the holder's pid where the system tells it."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: nothing to hold
        yield
        return
    try:
        descriptor = os.open(out, os.O_RDONLY | os.O_DIRECTORY)  # OUT itself is the user's to name, a link too
    except FileNotFoundError:
        if shared:  # --check of an OUT that does not exist: nothing to lock
            yield
            return
        raise
    except OSError as error:
        raise OutputError(f"{out} is not a directory evcat can write into: {error.strerror or error}") from None
    try:
        mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        try:
            fcntl.flock(descriptor, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            _wait_for_lock(out, descriptor, mode, timeout)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _wait_for_lock(out: Path, descriptor: int, mode: int, timeout: float | None) -> None:
    import fcntl

    holder = _lock_holder(descriptor)
    by = f" (pid {holder})" if holder else ""
    limit = "" if timeout is None else f" for up to {timeout:g} s"
    print(f"evcat: waiting{limit} for another evcat run{by} writing {out} ...", file=sys.stderr, flush=True)
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.02
    while True:
        try:
            fcntl.flock(descriptor, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if deadline is not None and time.monotonic() >= deadline:
            holder = _lock_holder(descriptor) or holder
            by = f" by pid {holder}" if holder else " by another process"
            raise OutputError(f"{out} is still locked{by} (another evcat run writing it?) after waiting {timeout:g} s; "
                              "nothing was written (--lock-timeout SECONDS waits longer)")
        time.sleep(pause if deadline is None else max(0.0, min(pause, deadline - time.monotonic())))
        pause = min(pause * 2, 0.25)


def _lock_holder(descriptor: int) -> int | None:
    """The pid holding a flock on the file open as ``descriptor``, from
    Linux's /proc/locks (``1: FLOCK ADVISORY WRITE <pid> <major>:<minor>:<inode> ...``);
    None where that is not known."""
    try:
        info = os.fstat(descriptor)
        device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device and fields[4].isdigit():
                    pid = int(fields[4])
                    if pid != os.getpid():
                        return pid
    except (OSError, ValueError):
        pass
    return None


def check(out: Path, outputs: Mapping[str, Mapping[str, Content]], *, lock_timeout: float | None = LOCK_TIMEOUT) -> WriteReport:
    """``--check``: what ``write`` would do, read under a shared lock; an
    interrupted run (its journal still in OUT) makes OUT stale too."""
    with locked(out, shared=True, timeout=lock_timeout):
        report = plan(out, outputs)
        if os.path.lexists(out / JOURNAL):
            report.written.append(JOURNAL)
        return report


def write(out: Path, outputs: Mapping[str, Mapping[str, Content]], version: str, *,
          lock_timeout: float | None = LOCK_TIMEOUT, stamps: Stamps | None = None) -> WriteReport:
    """Write ``outputs`` ({kind: {relative path: bytes}}) into ``out``, all or nothing.

    Under the lock on OUT: an earlier run's journal is finished first (see
    ``recover``); then every changed file goes to a fresh temporary beside
    its target (``O_CREAT|O_EXCL|O_NOFOLLOW``: never through a planted link),
    the journal records the renames about to happen, the renames run, and the
    journal goes. A run killed at any point leaves OUT as it was or with a
    journal that the next run completes. A lock held longer than
    ``lock_timeout`` seconds by another run is an OutputError (nothing written).
    ``stamps``: see ``Stamps`` (read and updated under the lock)."""
    out.mkdir(parents=True, exist_ok=True)
    with locked(out, timeout=lock_timeout):
        recover(out)
        return _write(out, outputs, version, stamps)


def _write(out: Path, outputs: Mapping[str, Mapping[str, Content]], version: str,
           stamps: Stamps | None = None) -> WriteReport:
    trusted = _valid_stamps(stamps.get()) if stamps is not None else {}
    verified: dict[str, Stamp] = {}
    report = _write_files(out, outputs, version, trusted, verified if stamps is not None else None)
    if stamps is not None:
        contents = {relative: content for files in outputs.values() for relative, content in files.items()}
        for relative in report.written:  # in place now: stamped as written
            content = contents[relative]
            digest = content.digest if isinstance(content, LazyFile) else hashlib.sha256(content).digest()
            stamp = _stamp(os.path.join(str(out), relative), digest)
            if stamp is not None:
                verified[relative] = stamp
        if verified != trusted:
            stamps.put(verified)
    return report


def _write_files(out: Path, outputs: Mapping[str, Mapping[str, Content]], version: str,
                 trusted: Mapping[str, Stamp], verified: dict[str, Stamp] | None) -> WriteReport:
    report, previous = _plan(out, outputs, trusted, verified)
    root = str(out)
    contents = {relative: content for files in outputs.values() for relative, content in files.items()}
    # (path relative to OUT, content): relative names travel to the journal
    # as they are (os.path.relpath would cost a quarter of a second at 5,000 files).
    targets = list(zip(report.written, _materialized([contents[relative] for relative in report.written])))
    for relative, _ in targets:  # before anything is created: a clean error, OUT untouched
        target = _checked(root, relative)
        if os.path.isdir(target) and not os.path.islink(target):
            raise OutputError(f"cannot write '{relative}': a directory is in the way in {out}; nothing was changed")
    manifest = _manifest(previous, outputs, version)
    try:
        manifest_same = _read(os.path.join(root, MANIFEST)) == manifest
    except OSError:
        manifest_same = False
    if not manifest_same:
        targets.append((MANIFEST, manifest))
    if not targets and not report.deleted:
        return report
    token = secrets.token_hex(8)  # one per run: each temporary is named after its own target
    renames = [(_temporary_name(relative, token), relative) for relative, _ in targets]
    missing: list[str] = []
    for directory in sorted({posixpath.dirname(relative) for relative, _ in targets}):
        while directory and directory not in missing and not os.path.isdir(os.path.join(root, directory)):
            if os.path.lexists(os.path.join(root, directory)):  # before anything is created: that file, named
                raise OutputError(f"cannot write into '{directory}/': {os.path.join(root, directory)} is a file where "
                                  "a directory must go; nothing was changed")
            missing.append(directory)
            directory = posixpath.dirname(directory)
    missing.sort(key=len)  # parents first
    # The intent: what a run killed from here until the commit point leaves
    # behind, so that the next run removes it.
    _write_journal(out, "writing", renames, report.deleted, missing, token)
    made: list[str] = []
    try:
        for directory in missing:
            os.mkdir(os.path.join(root, directory))
            made.append(directory)
        for (temporary, _), (_, content) in zip(renames, targets):
            _create(os.path.join(root, temporary), content)
        _write_journal(out, "committing", renames, report.deleted, [], token)  # the commit point
    except BaseException:
        _roll_back(out, [os.path.join(root, temporary) for temporary, _ in renames], [os.path.join(root, d) for d in made])
        raise
    with interrupts_held():
        try:
            _commit(out, [(os.path.join(root, t), os.path.join(root, p)) for t, p in renames],
                    [os.path.join(root, relative) for relative in report.deleted])
        except OSError as error:  # past the commit point: the journal stays, the next run completes the update
            raise OutputError(f"cannot finish writing {out}: {error.strerror or error}; part of the update is in place: "
                              "run evcat generate again to complete it") from None
    return report


def _temporary_name(target: str, token: str) -> str:
    """The temporary beside ``target`` (a path relative to OUT, or absolute)."""
    directory, name = os.path.split(target)
    return os.path.join(directory, f".{name}.evcat-tmp-{token}")


def _create(path: str, content: bytes) -> None:
    """A new file (never through a planted link) holding ``content``; removed again if writing fails."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
    try:
        try:
            written = os.write(descriptor, content)
            if written < len(content):  # a short write (a signal, a pipe-like file system): the rest
                view = memoryview(content)
                while written < len(content):
                    written += os.write(descriptor, view[written:])
        finally:
            os.close(descriptor)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def _write_journal(out: Path, state: str, renames: list[tuple[str, str]], deleted: list[str], directories: list[str],
                   token: str) -> None:
    """The journal (paths relative to OUT), replaced whole."""
    document = {"state": state, "renames": renames, "deleted": deleted, "directories": directories}
    target = os.path.join(str(out), JOURNAL)
    temporary = _temporary_name(target, token)
    _create(temporary, json.dumps(document).encode())
    os.replace(temporary, target)


def _roll_back(out: Path, temporaries: list[str], directories: list[str]) -> None:
    for temporary in temporaries:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    for directory in sorted(directories, key=len, reverse=True):
        with contextlib.suppress(OSError):
            os.rmdir(directory)
    with contextlib.suppress(OSError):
        os.unlink(out / JOURNAL)


def _commit(out: Path, renames: list[tuple[str, str]], deleted: list[str]) -> None:
    for temporary, target in renames:
        with contextlib.suppress(FileNotFoundError):  # done already (a run finished by recovery)
            os.replace(temporary, target)
    for target in deleted:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
            os.unlink(target)
        _remove_empty_parents(Path(target).parent, out)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(out / JOURNAL)


def recover(out: Path) -> None:
    """Finish a run killed after its commit point (its journal says
    "committing"), or undo one killed before it ("writing": its temporaries
    and the directories it made go). OUT is untrusted input, so a journal may
    be planted: every path in it is checked like an output, only evcat's own
    temporaries are touched, each only renamed over the target it was made for."""
    root = str(out)
    for name in os.listdir(root):  # a journal or manifest temporary of a killed run
        if _TEMPORARY.match(name):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(root, name))
    try:
        document = json.loads(_read(os.path.join(root, JOURNAL)))
        state = document["state"]
        renames = [(str(t), str(p)) for t, p in document["renames"]]
        deleted = [str(p) for p in document["deleted"]]
        directories = [str(d) for d in document["directories"]]
    except FileNotFoundError:
        return
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        with contextlib.suppress(OSError):  # a damaged journal: the plan rewrites whatever differs
            os.unlink(out / JOURNAL)
        return
    pairs = []
    for temporary, target in renames:
        try:
            temporary_path, target_path = _checked(root, temporary), _checked(root, target)
        except OutputError:
            continue
        directory, name = os.path.split(target_path)
        base = os.path.basename(temporary_path)
        if os.path.dirname(temporary_path) == directory and _TEMPORARY.match(base) and base.startswith(f".{name}.evcat-tmp-"):
            pairs.append((temporary_path, target_path))
    if state == "committing":
        removals = []
        for relative in deleted:
            with contextlib.suppress(OutputError):
                removals.append(_checked(root, relative))
        _commit(out, [(t, p) for t, p in pairs if os.path.isfile(t) and not os.path.islink(t)], removals)
    else:
        made = []
        for relative in directories:
            with contextlib.suppress(OutputError):
                made.append(_checked(root, relative))
        _roll_back(out, [t for t, _ in pairs], made)


def _manifest(previous: Mapping[str, list[str]], outputs: Mapping[str, Mapping[str, Content]], version: str) -> bytes:
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
