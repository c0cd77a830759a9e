"""Every store of ``.evcat-cache/``, and the one codec of cached Diagnostics.

The cache directory is untrusted input: it arrives through CI caches and pull
requests like a catalog does. So:

* no entry is ever read with a format that can run code (no pickle, and not
  jinja2's own bytecode cache: jinja2 loads it with ``pickle``). Compiled
  templates are kept by ``TemplateCode`` instead: marshal'd code objects,
  sealed like every entry, so only code this user's evcat compiled is ever
  loaded (the issue's "a bytecode cache only if it cannot be planted");
* every entry is sealed with an HMAC-SHA256 over the key it is stored under
  (the content hash of the inputs it claims to be the result of) and its
  payload, with a key known only to this user (``EVCAT_CACHE_KEY``, e.g. a
  CI secret, or else a file in the user's own cache directory, mode 0600,
  created on first use: ``_secret``).
  An entry that is edited, planted or moved to another key is a miss: it is
  recomputed, exactly as if it were absent, so it can never change an output
  or what ``--check`` says. Only a sealed payload reaches ``marshal.loads``;
* nothing is read or written through a symbolic link inside the cache, and
  temporaries are created with ``O_CREAT|O_EXCL|O_NOFOLLOW``.

Rendered units (``Store.put_files``) are stored as files: the seal covers a
header with the name, size and SHA-256 digest of each file, and each file's
bytes are checked against their digest when they are read. So a run can tell
whether a file in OUT is current from the (sealed) digest alone, without
reading or hashing the cached bytes (``CachedFile``).

A missing, stale, tampered or unreadable entry reads as None; an entry that
cannot be written only makes the next run slower. Deleting the directory, or
any file in it, is always safe.
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import secrets
import stat
from functools import cache
from pathlib import Path
from types import CodeType
from typing import Any

from ..writer import LazyFile

_MAGIC = b"evcat-cache-2\n"
_SEAL = 32  # bytes of HMAC-SHA256
MAX_ENTRY_BYTES = 1 << 30
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


KEY_VARIABLE = "EVCAT_CACHE_KEY"
_OLD_KEY_VARIABLE = "EVCAT_CACHE_SECRET"  # its earlier name, still read
MIN_KEY_CHARS = 32  # e.g. `openssl rand -hex 32` (64 hex digits); shorter could be guessed


def configured_key() -> str | None:
    """``EVCAT_CACHE_KEY`` (or its earlier name ``EVCAT_CACHE_SECRET``), or
    None when neither is set or both are empty (a CI secret that a job does
    not get, e.g. in a pull request from a fork, arrives empty)."""
    for name in (KEY_VARIABLE, _OLD_KEY_VARIABLE):
        value = os.environ.get(name)
        if value:
            return value
    return None


def key_problem() -> str | None:
    """Why ``EVCAT_CACHE_KEY`` cannot be used (for the command line to
    refuse a run with a cache), or None."""
    configured = configured_key()
    if configured is not None and len(configured) < MIN_KEY_CHARS:
        return (f"{KEY_VARIABLE} has {len(configured)} characters; the key that seals the cache needs at least "
                f"{MIN_KEY_CHARS} characters (any text, e.g. the 64 hex digits of `openssl rand -hex 32`), or leave it unset")
    return None


@cache
def _secret() -> bytes:
    """The key entries are sealed with: ``EVCAT_CACHE_KEY`` (any text of at
    least ``MIN_KEY_CHARS`` characters, hashed with SHA-256; keep it in the
    CI's secrets: a CI cache may then hold ``.evcat-cache`` and no key at all),
    else a random key in the user's own cache directory
    (``$XDG_CACHE_HOME/evcat/cache-secret`` or ``~/.cache/evcat/cache-secret``),
    made on first use. With ``EVCAT_CACHE_KEY`` set, that file is neither
    read nor made: entries sealed with it (or with any other key) are misses."""
    configured = configured_key()
    if configured is not None:
        if key_problem() is not None:  # (the command line refuses it; a caller of the API gets no cache)
            return secrets.token_bytes(32)
        return hashlib.sha256(b"evcat cache key\0" + configured.encode("utf-8", "surrogatepass")).digest()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "evcat", "cache-secret")
    try:
        return _read_secret(path)
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        # Written whole under a temporary name, then linked into place: a
        # process racing this one reads the whole key or makes its own attempt.
        temporary = f"{path}.{os.getpid()}.{secrets.token_hex(4)}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process was first: its key is the key
        finally:
            os.unlink(temporary)
        return _read_secret(path)
    except OSError:
        pass
    # No private place to keep a key: one for this process only (the cache
    # then serves this run, never a later one, and never a planted entry).
    return secrets.token_bytes(32)


def _read_secret(path: str) -> bytes:
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW)
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise OSError("the cache secret is not a private file of this user")
        key = handle.read(64)
    if len(key) != 32:
        raise OSError("the cache secret is damaged")
    return key


def _seal(key: str, payload: bytes | memoryview) -> bytes:
    seal = hmac.new(_secret(), key.encode("utf-8", "surrogatepass") + b"\0", hashlib.sha256)
    seal.update(payload)  # not concatenated: that would copy the payload
    return seal.digest()


def _make_parents(root: Path, path: Path) -> bool:
    """Create ``path``'s missing parent directories below ``root``, one at a
    time, never through a symbolic link; whether they are all real directories."""
    try:
        parts = path.parent.relative_to(root).parts
    except ValueError:
        return False
    try:
        os.makedirs(root.parent, exist_ok=True)  # the cache directory itself is the user's to name (``--cache-dir a/b``)
    except OSError:
        return False
    current = root
    for part in ("", *parts):
        current = current / part if part else current
        try:
            os.mkdir(current)
        except FileExistsError:
            pass
        except OSError:
            return False
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True


def _no_link_between(root: Path, path: Path) -> bool:
    """Whether no directory from ``root`` down to ``path``'s parent is a symbolic link."""
    try:
        parts = path.parent.relative_to(root).parts
    except ValueError:
        return False
    current = root
    for part in ("", *parts):
        current = current / part if part else current
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return False
        except FileNotFoundError:
            return True  # nothing further down exists either
        except OSError:
            return False
    return True


def read_entry(root: Path, path: Path, key: str) -> Any:
    """The value stored at ``path`` (inside the cache directory ``root``)
    under ``key``, or None unless its seal proves this user's evcat wrote it."""
    data = _read_regular(root, path)
    if data is None:
        return None
    head = len(_MAGIC) + _SEAL
    if not data.startswith(_MAGIC) or len(data) < head:
        return None
    # A view, not a slice: a rendered unit's entry is megabytes, copied for nothing.
    seal, payload = data[len(_MAGIC):head], memoryview(data)[head:]
    if not hmac.compare_digest(seal, _seal(key, payload)):
        return None
    try:
        # marshal.loads on the bytes: marshal.load on a file object reads in
        # small pieces and is ten times slower. Only sealed payloads get here.
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None


def write_entry(root: Path, path: Path, key: str, value: Any) -> None:
    """Store ``value`` (plain data: marshal) at ``path`` under ``key``, sealed."""
    write_marshalled(root, path, key, marshal.dumps(value))


def write_marshalled(root: Path, path: Path, key: str, payload: bytes) -> None:
    """``write_entry`` of a value already marshalled (``payload``)."""
    write_atomic(root, path, _MAGIC + _seal(key, payload), payload)


def write_atomic(root: Path, path: Path, content: bytes, *more: bytes) -> None:
    """Write ``content`` and ``more`` to a fresh temporary file beside ``path``
    (never through a planted link), then rename it over ``path``: a reader
    sees the old entry or the new one, never half."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    if not _make_parents(root, path):
        return
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    except OSError:
        return  # a cache that cannot be written is only slower
    try:
        with os.fdopen(descriptor, "wb") as handle:
            # One write call: a unit of a hundred files otherwise makes a hundred system calls.
            handle.write(b"".join((content, *more)) if more else content)
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


_FILES_MAGIC = b"evcat-files-1\n"
_LENGTH = 8  # bytes of the header's length, big-endian


class CachedFile(LazyFile):
    """One file of a rendered unit in the cache: its size and SHA-256 digest
    come from the entry's sealed header; its bytes are read only when
    needed (``read``, ``read_all``: the writer's ``LazyFile``), and only
    bytes matching the digest are returned."""

    __slots__ = ("root", "entry", "offset", "size", "digest")

    def __init__(self, root: Path, entry: Path, offset: int, size: int, digest: bytes) -> None:
        self.root, self.entry, self.offset, self.size, self.digest = root, entry, offset, size, digest

    def read(self) -> bytes | None:
        """The file's bytes, or None when the entry no longer holds them (changed since its header was read)."""
        return read_cached([self]).get(self)

    @classmethod
    def read_all(cls, files: list[LazyFile]) -> dict[LazyFile, bytes]:
        cached = [file for file in files if isinstance(file, CachedFile)]
        found: dict[LazyFile, bytes] = {file: data for file, data in read_cached(cached).items()}
        return found

    def __repr__(self) -> str:
        return f"CachedFile({self.size} bytes, sha256 {self.digest.hex()[:12]}...)"


def read_cached(files: list[CachedFile]) -> dict[CachedFile, bytes]:
    """The bytes of ``files`` that are still what their sealed digests say
    (each entry opened once); the others are left out."""
    by_entry: dict[Path, list[CachedFile]] = {}
    for file in files:
        by_entry.setdefault(file.entry, []).append(file)
    found: dict[CachedFile, bytes] = {}
    for entry, wanted in by_entry.items():
        data = _read_regular(wanted[0].root, entry)
        if data is None:
            continue
        for file in wanted:
            content = data[file.offset:file.offset + file.size]
            if len(content) == file.size and hashlib.sha256(content).digest() == file.digest:
                found[file] = content
    return found


def _read_regular(root: Path, path: Path, limit: int | None = None) -> bytes | None:
    """The bytes of the regular file ``path`` in the cache (at most ``limit``),
    never through a symbolic link; None when it cannot be read."""
    if not _no_link_between(root, path):
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with os.fdopen(descriptor, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
                return None
            return handle.read() if limit is None else handle.read(limit)
    except OSError:
        return None


def write_files(root: Path, path: Path, key: str, files: dict[str, bytes]) -> None:
    """Store ``files`` ({name: bytes}) at ``path`` under ``key``: the seal
    covers the header (each file's name, size and SHA-256), the digests cover
    the bytes that follow it."""
    header = marshal.dumps([(name, len(content), hashlib.sha256(content).digest()) for name, content in files.items()])
    head = len(header).to_bytes(_LENGTH, "big") + header
    write_atomic(root, path, _FILES_MAGIC + _seal(key, head) + head, *files.values())


_HEAD_GUESS = 1 << 16  # the header of a unit of some hundred files fits in one read


def read_files(root: Path, path: Path, key: str, *, contents: bool) -> dict[str, Any] | None:
    """The files stored at ``path`` under ``key`` by ``write_files``, or None
    unless the header's seal proves this user's evcat wrote it: {name: bytes}
    (every digest checked) with ``contents``, else {name: CachedFile}
    (nothing but the header read)."""
    data = _read_regular(root, path, None if contents else _HEAD_GUESS)
    start = len(_FILES_MAGIC) + _SEAL + _LENGTH
    if data is None or not data.startswith(_FILES_MAGIC) or len(data) < start:
        return None
    length = int.from_bytes(data[start - _LENGTH:start], "big")
    if not contents and len(data) < start + length <= MAX_ENTRY_BYTES:
        data = _read_regular(root, path, start + length)  # a header larger than the guess
        if data is None:
            return None
    view = memoryview(data)
    if len(data) < start + length or not hmac.compare_digest(data[len(_FILES_MAGIC):len(_FILES_MAGIC) + _SEAL],
                                                              _seal(key, view[start - _LENGTH:start + length])):
        return None
    try:
        listed = marshal.loads(view[start:start + length])
        offset = start + length
        files: dict[str, Any] = {}
        for name, size, digest in listed:
            if not isinstance(name, str) or not isinstance(size, int) or not isinstance(digest, bytes) or size < 0:
                return None
            if contents:
                content = data[offset:offset + size]
                if len(content) != size or hashlib.sha256(content).digest() != digest:
                    return None
                files[name] = content
            else:
                files[name] = CachedFile(root, path, offset, size, digest)
            offset += size
    except (EOFError, ValueError, TypeError):
        return None
    return files


class Store:
    """One kind of entry (parsed files, checks, rendered units, models, run
    records) in its own subdirectory of the cache directory."""

    def __init__(self, cache_dir: str | os.PathLike[str], name: str) -> None:
        self.root = Path(cache_dir)
        self.directory = self.root / name
        _secret()  # known before workers fork: they share it

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.marshal"

    def get(self, key: str) -> Any:
        return read_entry(self.root, self.path(key), key)

    def put(self, key: str, value: Any) -> None:
        write_entry(self.root, self.path(key), key, value)

    def put_marshalled(self, key: str, payload: bytes) -> None:
        """``put`` of a value already marshalled: ``payload`` is ``marshal.dumps(value)``."""
        write_marshalled(self.root, self.path(key), key, payload)

    def get_files(self, key: str, *, contents: bool = True) -> dict[str, Any] | None:
        """Files stored by ``put_files``: {name: bytes}, or with ``contents=False``
        {name: CachedFile} (the sealed header only); None on a miss."""
        return read_files(self.root, self.path(key), key, contents=contents)

    def put_files(self, key: str, files: dict[str, bytes]) -> None:
        write_files(self.root, self.path(key), key, files)


class Memo:
    """A pure function's results by the content of its input, for a stage
    that calls ``memo(text, function)`` (``render.python.Settings.memo``:
    datamodel-code-generator's output for a catalog's payload schemas): in
    this process, and in the sealed store ``DIR/name/`` under the hash of
    ``salt`` (evcat's code and tools) and the text, so a change that leaves
    every payload alone (a title, an example) does not even load the
    library. Travels with the settings to the workers (a few strings)."""

    # What this process worked out, by (name, salt, text): a worker renders
    # many units, --watch runs many times.
    _known: dict[tuple[str, str, str], Any] = {}

    def __init__(self, cache_dir: str | None, name: str, salt: str) -> None:
        self.cache_dir, self.name, self.salt = cache_dir, name, salt

    def __call__(self, text: str, function: Any) -> Any:
        known = (self.name, self.salt, text)
        if known in Memo._known:
            return Memo._known[known]
        store = Store(self.cache_dir, self.name) if self.cache_dir is not None else None
        key = self._key(text) if store is not None else ""
        stored = store.get(key) if store is not None else None
        if isinstance(stored, str):
            result = stored
        else:
            result = function(text)
            if store is not None:
                store.put(key, result)
        Memo._known[known] = result
        return result

    def has(self, text: str) -> bool:
        """Whether the result for ``text`` is known without running the function."""
        if (self.name, self.salt, text) in Memo._known:
            return True
        if self.cache_dir is None:
            return False
        return isinstance(Store(self.cache_dir, self.name).get(self._key(text)), str)

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.salt}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


class TemplateCode:
    """jinja2's bytecode cache protocol (``get_bucket``, ``set_bucket``: all
    its loaders call) over a sealed store (``DIR/jinja/``): each compiled
    template is a marshal'd code object under the hash of ``salt`` (evcat's
    code, the jinja2 and Python versions: see ``cache.code_digest``), the
    template's name, file and source. An entry whose seal does not verify
    is a miss and is never unmarshalled: the template is compiled again."""

    def __init__(self, cache_dir: str | os.PathLike[str], salt: str) -> None:
        self.store = Store(cache_dir, "jinja")
        self.salt = salt

    # Equal by where and for what it compiles: a unit's environment
    # (templates.environment) is made once per template set and code cache,
    # in a worker too, where each task brings its own copy of this value.
    def __eq__(self, other: object) -> bool:
        return isinstance(other, TemplateCode) and (self.store.directory, self.salt) == (other.store.directory, other.salt)

    def __hash__(self) -> int:
        return hash((self.store.directory, self.salt))

    def _key(self, name: str, filename: str | None, source: str) -> str:
        digest = hashlib.sha256(f"{self.salt}\0{name}\0{filename}\0".encode("utf-8", "surrogatepass"))
        digest.update(source.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def get_bucket(self, environment: Any, name: str, filename: str | None, source: str) -> Any:
        from jinja2.bccache import Bucket

        key = self._key(name, filename, source)
        bucket = Bucket(environment, key, key)
        code = self.store.get(key)  # None unless sealed by this user
        if isinstance(code, CodeType):
            bucket.code = code
        return bucket

    def set_bucket(self, bucket: Any) -> None:
        if isinstance(bucket.code, CodeType):
            self.store.put(bucket.key, bucket.code)


class Single:
    """One entry at a fixed place (the memo of checks)."""

    def __init__(self, cache_dir: str | os.PathLike[str], name: str) -> None:
        self.root = Path(cache_dir)
        self.file = self.root / name
        self.key = name

    def get(self) -> Any:
        return read_entry(self.root, self.file, self.key)

    def put(self, value: Any) -> None:
        write_entry(self.root, self.file, self.key, value)
