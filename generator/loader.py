"""Stage 1: YAML text -> plain JSON-like values with a location for every node.

PyYAML's C composer (libyaml) builds the node graph; this module turns nodes
into plain values (dict, list, str, int, float, bool, None) and records the
file/line/column of every value and every mapping key, keyed by its path
(a tuple of keys and indexes). Nothing here raises for bad input: every
problem becomes a ``CAT-YAML``, ``CAT-DUPLICATE-KEY`` or ``CAT-TYPE``
diagnostic.

Limits (documented in the README):
- a file is at most ``MAX_FILE_BYTES``;
- nesting is at most ``MAX_DEPTH`` levels;
- aliases may expand to at most ``MAX_ALIAS_NODES`` nodes per file (a
  "billion laughs" file is rejected in milliseconds);
- a catalog directory holds at most ``MAX_EVENTS`` event types (counted in
  ``lint.check`` before any model is built).
"""

from __future__ import annotations

import codecs
import re
import os
import stat
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .diagnostics import Diagnostic, Location, Severity

try:  # libyaml is the fast path; the pure-Python loader works the same, slower.
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

# First characters with which a plain scalar may resolve to something other
# than a string (bool, int, float, null, timestamp, merge, value) in YAML 1.1.
_MAY_BE_TYPED = frozenset("yYnNtTfFoO-+0123456789.<~=")
# Plain scalars starting with one of these letters resolve to something other
# than a string only when they are one of YAML 1.1's bool or null words
# (PyYAML's implicit resolvers for these first characters: bool, null).
_WORD_START = frozenset("yYnNtTfFoO")
_WORDS = frozenset(
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL".split()
)
_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """libyaml with a fast path in tag resolution (same results as SafeLoader)."""

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if not implicit[0] or (value and value[0] not in _MAY_BE_TYPED):
                return _STR_TAG  # quoted, or plain text that no resolver matches
            if value[:1] in _WORD_START and value not in _WORDS and value[:-1] not in _WORDS:
                # `type`, `format`, `name`: neither a bool nor null (nor one followed
                # by one character: the resolvers' `$` also matches before a final newline)
                return _STR_TAG
            return super().resolve(kind, value, implicit)  # type: ignore[no-any-return]
        return _SEQ_TAG if kind is SequenceNode else _MAP_TAG

    # No path resolvers are registered: skip PyYAML's per-node bookkeeping.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass

MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 100
MAX_ALIAS_NODES = 10_000
MAX_EVENTS = 10_000  # event types in one catalog directory (checked in lint.check)
# libyaml's composer recurses in C, about 400 bytes a level: the main thread's
# stack takes ~20,000 levels, a 64 MiB thread ~160,000.
_DIRECT_COMPOSE_BOUND = 5_000
_THREAD_COMPOSE_BOUND = 100_000
_THREAD_STACK = 64 * 1024 * 1024

Path = tuple[str | int, ...]

# Keys and short strings are interned: a catalog repeats a few thousand
# ("type", "string", "description", enum values) a hundred thousand times, and
# libyaml makes a new object for each. marshal keeps them interned (the parse
# cache, the workers' results), so one copy serves every file of the process.
_intern = sys.intern
_INTERNED_LENGTH = 40

_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_TAG + name for name in ("str", "int", "float", "bool", "null", "timestamp")}
_constructor = SafeConstructor()


@dataclass
class Document:
    """One YAML file as plain data, with the position of every node."""

    file: str
    value: Any = None
    # The text as written of scalars YAML did not read as strings (numbers,
    # booleans), so a message can say "quote it: '1.10'".
    scalar_text: dict[Path, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Content hash of the file (set by the cache), for memoised checks.
    digest: str = ""
    # (value positions, key positions) by path, as 0-based (line, column).
    # None: not recorded; they are found again from ``source`` when a
    # location is first asked for. A clean file never needs one, and
    # recording them is a third of the walk and most of a parsed file.
    positions: tuple[dict[Path, tuple[int, int]], dict[Path, tuple[int, int]]] | None = field(
        default_factory=lambda: ({}, {}), repr=False
    )
    # The file's bytes, when positions are found on demand.
    source: bytes | None = field(default=None, repr=False)

    @property
    def locations(self) -> dict[Path, tuple[int, int]]:
        return self._positions()[0]

    @property
    def key_locations(self) -> dict[Path, tuple[int, int]]:
        return self._positions()[1]

    def _positions(self) -> tuple[dict[Path, tuple[int, int]], dict[Path, tuple[int, int]]]:
        if self.positions is None:
            # The same walk of the same bytes, recording positions this time.
            again = load_bytes(self.source, self.file) if self.source is not None else None
            self.positions = again.positions if again is not None and again.positions is not None else ({}, {})
        return self.positions

    def to_data(self) -> tuple[Any, ...]:
        """Plain data for ``marshal`` (the parse cache), without positions
        (``from_data`` takes the file's bytes to find them on demand)."""
        from .diagnostics import diagnostic_to_data

        return (self.value, self.scalar_text, [diagnostic_to_data(d) for d in self.diagnostics])

    @classmethod
    def from_data(cls, file: str, data: tuple[Any, ...], digest: str = "", source: bytes | None = None) -> "Document":
        from .diagnostics import diagnostic_from_data

        value, scalar_text, diagnostics = data
        return cls(file, value, scalar_text, [diagnostic_from_data(d, file) for d in diagnostics], digest, None, source)

    def loc(self, path: Path) -> Location:
        """Location of the value at ``path`` (or of its closest ancestor)."""
        return self._lookup(self.locations, path)

    def key_loc(self, path: Path) -> Location:
        """Location of the key that holds ``path`` (falls back to the value)."""
        if path in self.key_locations:
            line, column = self.key_locations[path]
            return Location(self.file, line + 1, column + 1, path)
        return self.loc(path)

    def _lookup(self, table: dict[Path, tuple[int, int]], path: Path) -> Location:
        """The place of ``path`` (or of its closest ancestor); the Location
        keeps ``path`` itself: the node the finding stands on."""
        found = path
        while found and found not in table:
            found = found[:-1]
        line, column = table.get(found, (0, 0))
        return Location(self.file, line + 1, column + 1, tuple(path))


class _Abort(Exception):
    """Stops the walk of one file; the diagnostic is already recorded."""


class UnsafeFile(OSError):
    """A catalog file evcat does not read: not a regular file, a link leading
    out of the catalog directory, or larger than the limit."""


def read_catalog_bytes(path: str, root: str | None = None) -> bytes:
    """The bytes of a catalog file, checked before they are read: a regular
    file (a FIFO would hang, a device never ends), inside ``root`` once links
    are resolved (a catalog under review cannot make evcat read a file of the
    user's elsewhere), at most ``MAX_FILE_BYTES + 1`` bytes read (the loader
    reports a larger file). Raises OSError (UnsafeFile for the checks)."""
    if root is not None and os.path.islink(path):
        real, base = os.path.realpath(path), os.path.realpath(root)
        if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
            raise UnsafeFile("the file is a symbolic link that leads outside the catalog directory; evcat does not follow it")
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile("not a regular file (a pipe, a device or a socket); evcat reads only regular files")
        return handle.read(MAX_FILE_BYTES + 1)


def load_file(path: str, display: str | None = None) -> Document:
    display = display or path
    try:
        raw = read_catalog_bytes(path)
    except OSError as error:
        return _failed(display, f"cannot read the file: {error.strerror or error}")
    return load_bytes(raw, display)


def load_bytes(raw: bytes, display: str, *, positions: bool = True) -> Document:
    """``raw`` parsed; ``positions=False`` records no positions but keeps
    ``raw`` to find them when first asked for."""
    if len(raw) > MAX_FILE_BYTES:
        return _failed(
            display,
            f"the file is larger than the limit of {MAX_FILE_BYTES // (1024 * 1024)} MiB; "
            "split the catalog across several files",
        )
    text, error = _decode(raw)
    if error:
        return _failed(display, error[0], error[1], error[2])
    document = load_text(text, display, positions=positions)
    if not positions:
        document.positions, document.source = None, raw
    return document


def load_text(text: str, display: str, *, positions: bool = True) -> Document:
    document = Document(display)
    bound = _depth_bound(text)
    if bound > _THREAD_COMPOSE_BOUND:
        depth_problem = _check_depth(text)
        if depth_problem:
            document.diagnostics.append(_yaml_error(display, *depth_problem))
            return document
    try:
        root = _compose(text, in_thread=bound > _DIRECT_COMPOSE_BOUND)
    except yaml.MarkedYAMLError as error:
        document.diagnostics.append(_yaml_error(display, *_syntax_error(error, text)))
        return document
    except yaml.reader.ReaderError as error:
        line, column = _position(text, error.position)
        reason = error.reason if isinstance(error.reason, str) else "invalid character"
        document.diagnostics.append(
            _yaml_error(display, f"unacceptable character #x{error.character:04x}: {reason}", line, column)
        )
        return document
    except yaml.YAMLError as error:  # any other libyaml complaint
        document.diagnostics.append(_yaml_error(display, str(error).splitlines()[0], 1, 1))
        return document
    if root is None:
        return document
    # Without an anchor (&) there is no alias: the walk skips alias bookkeeping.
    walker = _Walker(document, aliases="&" in text, positions=positions, text=text)
    try:
        document.value = walker.value(root, (), 0)
    except _Abort:
        document.value = None
    return document


class _Walker:
    """Nodes -> plain values, recording 0-based positions by path."""

    def __init__(self, document: Document, aliases: bool = True, positions: bool = True, text: str = "") -> None:
        self.document = document
        self.text = text
        self.record = positions
        self.locations = document.locations if positions else {}
        self.key_locations = document.key_locations if positions else {}
        self.aliases = aliases
        self.seen: set[int] = set()
        self.active: set[int] = set()
        self.alias_nodes = 0
        self.in_alias = 0

    def value(self, node: Node, path: Path, depth: int) -> Any:
        if self.record:
            mark = node.start_mark
            self.locations[path] = (mark.line, mark.column)
        kind = node.__class__
        if kind is ScalarNode:
            if self.in_alias:
                self._count_alias_node(node)
            if node.tag == _STR_TAG:
                text = node.value
                return _intern(text) if len(text) <= _INTERNED_LENGTH else text
            return self.scalar(node, path)
        if not self.aliases:
            if depth >= MAX_DEPTH:
                self._abort(node, f"nesting is deeper than the limit of {MAX_DEPTH} levels")
            return self.collection(node, path, depth)
        node_id = id(node)
        if node_id in self.active:
            self._abort(node, "an alias refers to a node that contains it (recursive alias)")
        if depth >= MAX_DEPTH:
            self._abort(node, f"nesting is deeper than the limit of {MAX_DEPTH} levels")
        alias = node_id in self.seen
        self.seen.add(node_id)
        if alias:
            self.in_alias += 1
        if self.in_alias:
            self._count_alias_node(node)
        self.active.add(node_id)
        try:
            return self.collection(node, path, depth)
        finally:
            self.active.discard(node_id)
            if alias:
                self.in_alias -= 1

    def collection(self, node: Node, path: Path, depth: int) -> Any:
        if node.__class__ is SequenceNode:
            if node.tag != _SEQ_TAG:
                self._tag_error(node, path)
            return [self.value(item, path + (index,), depth + 1) for index, item in enumerate(node.value)]
        assert isinstance(node, MappingNode)
        if node.tag != _MAP_TAG:
            self._tag_error(node, path)
        return self.mapping(node, path, depth)

    def mapping(self, node: MappingNode, path: Path, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        # The keys written in this mapping: those of ``result`` until a merge
        # key (<<) brings in others.
        explicit: set[str] | None = None
        key_locations = self.key_locations
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                if explicit is None:
                    explicit = set(result)
                self.merge(result, explicit, value_node, path, depth)
                continue
            if key_node.__class__ is not ScalarNode:
                self._type_error(key_node, path, "a mapping key must be a plain string, not a collection")
                continue
            # Keys keep their text: `on:` or `1:` name a property "on" or "1"
            # (the JSON reading), never True or 1.
            key = _intern(key_node.value)
            child = path + (key,)
            if key in (result if explicit is None else explicit):
                self._duplicate(node, key_node, key)
                continue
            if explicit is not None:
                explicit.add(key)
            if self.record:
                key_mark = key_node.start_mark
                key_locations[child] = (key_mark.line, key_mark.column)
            if key == "$ref" and value_node.tag == _TAG + "null" and value_node.value == "":
                commented = self._commented_ref(key_node)
                if commented is not None:
                    result[key] = commented
                    continue
            result[key] = self.value(value_node, child, depth + 1)
        return result

    def _commented_ref(self, key_node: Node) -> str | None:
        """``$ref: #/schemas/X`` written unquoted: YAML reads a comment and no
        value. Reported once, with the fix; the reference reads as meant, so
        nothing else reports the same mistake again."""
        mark = key_node.start_mark
        line = self.text.split("\n", mark.line + 1)[mark.line] if self.text else ""
        found = re.match(r"\s*:\s+(#\S*)", line[mark.column + len("$ref"):]) if line[mark.column:].startswith("$ref") else None
        if found is None:
            return None
        ref = found.group(1)
        column = mark.column + len("$ref") + found.start(1)
        self.document.diagnostics.append(
            Diagnostic(
                "CAT-YAML", Severity.ERROR,
                f"an unquoted '#' starts a comment in YAML, so this $ref has no value: quote the value: $ref: '{ref}'",
                Location(self.document.file, mark.line + 1, column + 1),
                suggestion=f"'{ref}'",
            )
        )
        return ref

    def _duplicate(self, node: MappingNode, key_node: Node, key: str) -> None:
        first = next(k.start_mark for k, _ in node.value if k.__class__ is ScalarNode and k.value == key)
        key_mark = key_node.start_mark
        self.document.diagnostics.append(
            Diagnostic(
                "CAT-DUPLICATE-KEY",
                Severity.ERROR,
                f"duplicate key '{key}' (first defined at line {first.line + 1}); remove or rename one of them",
                Location(self.document.file, key_mark.line + 1, key_mark.column + 1),
                related=(Location(self.document.file, first.line + 1, first.column + 1),),
            )
        )

    def merge(self, result: dict[str, Any], explicit: set[str], node: Node, path: Path, depth: int) -> None:
        """YAML merge keys (``<<: *defaults``): explicit keys win."""
        sources = node.value if isinstance(node, SequenceNode) else [node]
        for source in sources:
            if not isinstance(source, MappingNode):
                self._type_error(source, path, "a merge key (<<) takes a mapping or a list of mappings")
                continue
            merged = self.value(source, path, depth)
            for key, value in merged.items():
                if key not in explicit and key not in result:
                    result[key] = value

    def scalar(self, node: ScalarNode, path: Path) -> Any:
        tag = node.tag
        if tag == _TAG + "str" or tag == _TAG + "timestamp":
            # Timestamps stay text: catalogs are JSON data, and `time` in an
            # example must reach the checks exactly as written.
            return node.value
        if tag not in _SCALAR_TAGS:
            self._tag_error(node, path)
        if tag == _TAG + "null":
            return None
        self.document.scalar_text[path] = node.value
        try:
            if tag == _TAG + "bool":
                return _constructor.construct_yaml_bool(node)
            if tag == _TAG + "int":
                return _constructor.construct_yaml_int(node)
            return _constructor.construct_yaml_float(node)
        except (ValueError, KeyError):  # e.g. an explicit !!int tag on text
            self._type_error(node, path, f"'{node.value}' is not a valid {tag[len(_TAG):]}")
            return node.value

    def _count_alias_node(self, node: Node) -> None:
        self.alias_nodes += 1
        if self.alias_nodes > MAX_ALIAS_NODES:
            self._abort(
                node,
                f"aliases expand to more than {MAX_ALIAS_NODES} nodes; "
                "this looks like an alias bomb (billion laughs)",
            )

    def _tag_error(self, node: Node, path: Path) -> None:
        mark = node.start_mark
        self.document.diagnostics.append(
            _yaml_error(
                self.document.file,
                f"the tag {node.tag} is not supported: a catalog holds JSON data "
                "(strings, numbers, booleans, null, lists, mappings)",
                mark.line + 1,
                mark.column + 1,
            )
        )
        raise _Abort

    def _type_error(self, node: Node, path: Path, message: str) -> None:
        mark = node.start_mark
        self.document.diagnostics.append(
            Diagnostic("CAT-TYPE", Severity.ERROR, message, Location(self.document.file, mark.line + 1, mark.column + 1))
        )

    def _abort(self, node: Node, message: str) -> None:
        mark = node.start_mark
        self.document.diagnostics.append(_yaml_error(self.document.file, message, mark.line + 1, mark.column + 1))
        raise _Abort


def _syntax_error(error: yaml.MarkedYAMLError, text: str) -> tuple[str, int, int]:
    """libyaml's complaint, at the line that causes it, with what to do about it."""
    mark = error.problem_mark or error.context_mark
    message = " ".join(part for part in (error.context, error.problem) if part) or str(error)
    line, column = (mark.line, mark.column) if mark else (0, 0)
    lines = text.split("\n")
    here = lines[line] if line < len(lines) else ""
    if "\t" in here[: column + 1] and here[: column + 1].strip(" \t") == "":
        return "a tab character in the indentation: indent with spaces, not tabs (YAML does not allow tabs there)", line + 1, here.index("\t") + 1
    if error.context == "while scanning a simple key" and error.context_mark is not None:
        # libyaml notices the missing ':' only on the next line.
        start = error.context_mark
        return (
            "a line that is neither 'key: value' nor a list item ('- ...'): a ':' after the key is missing, "
            "or the line belongs to the value above and needs quoting",
            start.line + 1, start.column + 1,
        )
    mapping_value = error.problem == "mapping values are not allowed in this context"
    if mapping_value or (error.problem or "").startswith(("did not find expected key", "did not find expected '-' indicator")):
        indent = len(here) - len(here.lstrip(" "))
        previous = next((index for index in range(line - 1, -1, -1) if lines[index].strip()), None)
        if mapping_value and previous is not None:
            above = lines[previous]
            above_indent = len(above) - len(above.lstrip(" "))
            if above_indent == indent and not re.search(r":(\s|$)", above) and not above.lstrip().startswith(("-", "#")):
                # `source urn:x` above `organization: y`: libyaml reads both as one key.
                return (
                    f"a ':' is missing after the key on this line (write '{above.strip().split(' ', 1)[0]}: ...')",
                    previous + 1, above_indent + 1,
                )
        hint = (
            "this line is indented deeper than the key above it, or an unquoted value holds ': ': "
            "line the key up with the ones above it, or quote the value"
            if mapping_value
            else "this line is indented differently from the keys above it: line it up with them (spaces only)"
        )
        return f"{hint} ({message})", line + 1, indent + 1
    return message, line + 1, column + 1


def _yaml_error(file: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    return Diagnostic("CAT-YAML", Severity.ERROR, message, Location(file, line, column))


def _failed(file: str, message: str, line: int = 1, column: int = 1) -> Document:
    return Document(file, diagnostics=[_yaml_error(file, message, line, column)])


def _decode(raw: bytes) -> tuple[str, tuple[str, int, int] | None]:
    """UTF-8 (or UTF-16/32 with a BOM, as YAML 1.2 allows)."""
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if raw.startswith(bom):
            break
    else:
        encoding = "utf-8"
    try:
        return raw.decode(encoding), None
    except UnicodeDecodeError as error:
        before = raw[: error.start].decode(encoding, errors="replace")
        line, column = _position(before, len(before))
        return "", (f"the file is not valid {encoding.upper().replace('-SIG', '')} text: byte 0x{raw[error.start]:02x} cannot be decoded", line, column)


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _depth_bound(text: str) -> int:
    """A cheap upper bound on the nesting depth of ``text``.

    Flow nesting is bounded by the number of ``[`` and ``{``; block nesting
    needs at least one more column per two levels, so twice the longest line
    bounds it.
    """
    longest = max(map(len, text.splitlines()), default=0)
    return text.count("[") + text.count("{") + 2 * longest + 2


def _compose(text: str, in_thread: bool) -> Node | None:
    """libyaml's composer; deep input runs on a thread with a large stack."""
    if not in_thread:
        return yaml.compose(text, Loader=_Loader)
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(yaml.compose(text, Loader=_Loader))
        except BaseException as error:  # handed to the caller's thread
            outcome.append(error)

    previous = threading.stack_size(_THREAD_STACK)
    try:
        worker = threading.Thread(target=run, name="evcat-yaml")
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result  # type: ignore[no-any-return]


def _check_depth(text: str) -> tuple[str, int, int] | None:
    """Exact depth from libyaml's event stream, which does not recurse."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    return (f"nesting is deeper than the limit of {MAX_DEPTH} levels", mark.line + 1, mark.column + 1)
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return None  # the composer reports the syntax error with its position
    return None
