"""An edited buffer parsed again by its changed event alone (``evcat lsp``).

A keystroke changes one event of a file of a hundred; parsing the whole
buffer again is most of the time to diagnostics. ``reparse`` parses only the
block of the event that holds every changed line, and hands back the
document a full parse of the new text would give: same values, positions,
scalar texts. Whenever that cannot be shown to hold, it hands back None and
the caller parses the whole text (``loader.load_bytes``):

- the old document had a finding of the loader, or no positions, or a merge
  key (``<<``: it moves keys away from where they are written);
- the line count changed (the positions of later events would move);
- the changed lines reach outside one item of the block sequence ``events:``
  or one entry of the block mapping ``schemas:`` (the last one ends at the
  next top-level key), or change an entry's key line;
- a changed line could end the block or the document (not indented past the
  item's dash or the entry's key: ``...``, a new top-level key), or the
  item's first line lost its dash;
- a changed line (old or new) holds an ``&`` (a new anchor could take the
  name another node's alias reads), or meets a node of the block that an
  alias elsewhere copies (``parse`` notes them), or such a node's value
  changed; the block's own aliases expand to more nodes than before, or one
  names an anchor outside the block (the block alone does not parse);
- any YAML line break but ``\\n``, a byte-order mark, a nesting bound past the
  direct composer's;
- the block alone does not parse cleanly into exactly one item (entry).

The block is parsed in place: blank lines, then ``events:``, then the block's
lines as written, so every line and column is the one in the file.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from ..loader import (
    _DIRECT_COMPOSE_BOUND,
    _MAP_TAG,
    _MERGE_TAG,
    _SEQ_TAG,
    MAX_FILE_BYTES,
    Document,
    Path,
    _Abort,
    _compose,
    _decode,
    _depth_bound,
    _Walker,
    load_bytes,
)

_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029", "\ufeff")


_ANCHOR = re.compile(r"&\S")
_SECTIONS = ("events", "schemas")
# Per block (("events", index) or ("schemas", name)): the nodes of it that an
# alias elsewhere copies, as (path, first line, last line).
Borrowed = dict[tuple[str, Any], list[tuple[Path, int, int]]]


def parse(raw: bytes, display: str) -> tuple[Document, tuple[str, Borrowed] | None]:
    """``loader.load_bytes(raw, display)``, and what ``reparse`` starts from
    (the text, the nodes other blocks' aliases copy); None: a document with
    a finding, or one the loader reads another way (deep, undecodable)."""
    text, error = _decode(raw)
    if error or len(raw) > MAX_FILE_BYTES or _depth_bound(text) > _DIRECT_COMPOSE_BOUND:
        return load_bytes(raw, display), None
    try:
        root = _compose(text, in_thread=False)
    except Exception:  # noqa: BLE001 - the loader words the complaint
        return load_bytes(raw, display), None
    if root is None:
        return load_bytes(raw, display), None
    document = Document(display)
    walker = _Walker(document, aliases="&" in text, positions=True, text=text)
    try:
        document.value = walker.value(root, (), 0)
    except _Abort:
        return load_bytes(raw, display), None
    if document.diagnostics:
        return load_bytes(raw, display), None
    borrowed = _borrowed(root) if "*" in text else {}
    return document, (None if borrowed is None else (text, borrowed))


def _borrowed(root: Any) -> Borrowed | None:
    """The nodes of each block that an alias in another block copies (a
    node, once: its lines cover what it holds); None with a merge key (it
    moves keys to where the walk does not see them)."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    owner: dict[int, tuple[Any, Path]] = {}
    borrowed: Borrowed = {}
    stack: list[tuple[Any, Path]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        part = path[:2] if len(path) >= 2 and path[0] in _SECTIONS else path[:1]
        known = owner.get(id(node))
        if known is not None:  # an alias: the walk copies it here
            if known[0] != part:
                borrowed.setdefault(known[0], []).append((known[1], node.start_mark.line, node.end_mark.line))
            continue
        owner[id(node)] = (part, path)
        kind = node.__class__
        if kind is MappingNode:
            for key, value in reversed(node.value):
                if key.tag == _MERGE_TAG or key.__class__ is not ScalarNode:
                    return None
                stack.append((value, path + (key.value,)))
        elif kind is SequenceNode:
            items = node.value
            stack.extend((items[index], path + (index,)) for index in range(len(items) - 1, -1, -1))
    return borrowed


def reparse(old: Document, kept: tuple[str, Borrowed], raw: bytes, display: str
            ) -> tuple[Document, tuple[str, Borrowed]] | None:
    """The document of ``raw`` (and what the next ``reparse`` starts from)
    when it differs from the text ``old`` was parsed from (``kept``, as
    ``parse`` or ``reparse`` left it) inside one block; else None."""
    old_text, borrowed = kept
    if old.diagnostics or old.positions is None or not isinstance(old.value, dict) or len(raw) > MAX_FILE_BYTES:
        return None
    text, error = _decode(raw)
    if error or any(mark in text or mark in old_text for mark in _OTHER_BREAKS):
        return None
    old_lines, new_lines = old_text.split("\n"), text.split("\n")
    if len(old_lines) != len(new_lines):
        return None
    first = next((row for row, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b), None)
    if first is None:
        return None  # the same text: nothing to gain
    last = len(new_lines)
    while last > first and old_lines[last - 1] == new_lines[last - 1]:
        last -= 1
    if any(_ANCHOR.search(line) for lines in (old_lines, new_lines) for line in lines[first:last]):
        return None
    for section in _SECTIONS:
        found = _block(old, old_lines, section, first, last)
        if found is not None:
            break
    else:
        return None
    key, begin, end, column, closed = found
    if begin < 1 or not _fits(new_lines, begin, first, last, column, section == "events"):
        return None
    part = (section, key)
    if not closed and borrowed.get(part):
        return None  # a merge (<<) elsewhere may place a top-level key inside the last block
    for _, start, stop in borrowed.get(part, ()):
        if start < last and first <= stop:
            return None
    block = "\n".join(new_lines[begin:end])
    fragment = "\n" * (begin - 1) + section + ":\n" + block
    if _depth_bound(fragment) > _DIRECT_COMPOSE_BOUND:
        return None
    try:
        node = _only(_compose(fragment, in_thread=False), section, key)
    except Exception:  # noqa: BLE001 - any complaint: the full parse words it
        return None
    if node is None:
        return None
    document = Document(display)
    walker = _Walker(document, aliases="&" in block, positions=True, text=text)
    try:
        new = walker.value(node, part, 2)
    except _Abort:
        return None
    if document.diagnostics:
        return None
    container = old.value.get(section)
    before = container[key]  # type: ignore[index]
    for path, _, _ in borrowed.get(part, ()):
        if _at(new, path[2:]) != _at(before, path[2:]):
            return None
    if walker.alias_nodes and walker.alias_nodes > _alias_nodes(section, key, "\n".join(old_lines[begin:end]), begin):
        return None  # more alias nodes than before could pass the file's limit
    locations, key_locations = dict(old.positions[0]), dict(old.positions[1])
    for old_path in _paths(before, part):
        locations.pop(old_path, None)
        if old_path != part:
            key_locations.pop(old_path, None)
    locations.update(document.positions[0])  # type: ignore[index]
    key_locations.update(document.positions[1])  # type: ignore[index]
    scalar_text = {path: value for path, value in old.scalar_text.items() if path[:2] != part}
    scalar_text.update(document.scalar_text)
    value = dict(old.value)
    if section == "events":
        value[section] = [*container[:key], new, *container[key + 1:]]  # type: ignore[index]
    else:
        value[section] = {**container, key: new}  # type: ignore[dict-item]
    return Document(display, value, scalar_text, [], "", (locations, key_locations)), (text, borrowed)


_MISSING = object()


def _at(value: Any, path: Path) -> Any:
    for step in path:
        if isinstance(value, dict) and isinstance(step, str):
            value = value.get(step, _MISSING)
        elif isinstance(value, list) and isinstance(step, int) and step < len(value):
            value = value[step]
        else:
            return _MISSING
    return value


def _alias_nodes(section: str, key: Any, block: str, begin: int) -> int:
    """The nodes the aliases of an (old, clean) block expand to."""
    walker = _Walker(Document(""), aliases=True, positions=False)
    try:
        walker.value(_only(_compose("\n" * (begin - 1) + section + ":\n" + block, in_thread=False), section, key),
                     (section, key), 2)
    except Exception:  # noqa: BLE001 - cannot happen for a block of a clean document; then parse it all
        return -1
    return walker.alias_nodes


def _block(old: Document, lines: list[str], section: str, first: int, last: int
           ) -> tuple[Any, int, int, int, bool] | None:
    """The entry of ``section`` whose lines hold lines ``first`` to ``last``
    (exclusive): its key, first line, the next entry's line, its column,
    whether a next entry ends it (else the next top-level key or the end)."""
    container = old.value.get(section)
    if isinstance(container, list):
        keys: list[Any] = list(range(len(container)))
        table = old.positions[0]  # type: ignore[index]
    elif isinstance(container, dict) and section == "schemas":
        keys = list(container)
        table = old.positions[1]  # type: ignore[index]
    else:
        return None
    rows: list[int] = []
    column = -1
    for key in keys:
        at = table.get((section, key))
        if at is None:
            return None
        row, at_column = at
        line = lines[row] if row < len(lines) else ""
        if isinstance(key, int):  # the dash before the item's node
            before = line[:at_column]
            if before.strip() != "-":
                return None
            at_column = before.index("-")
        if line[:at_column].strip(" ") or column not in (-1, at_column) or (rows and row <= rows[-1]):
            return None
        column = at_column
        rows.append(row)
    index = bisect.bisect_right(rows, first) - 1
    if index < 0:
        return None
    if index + 1 < len(rows):
        end = rows[index + 1]
    else:  # the last one: up to the next top-level key, or the end
        tops = [old.positions[1].get((name,)) for name in old.value]  # type: ignore[index]
        if any(top is None for top in tops):
            return None
        end = min((top[0] for top in tops if top[0] > rows[index]), default=len(lines))  # type: ignore[index]
    if last > end:
        return None
    return keys[index], rows[index], end, column, index + 1 < len(rows)


def _fits(lines: list[str], begin: int, first: int, last: int, column: int, item: bool) -> bool:
    """The changed lines stay inside the block whose dash (or key) is at
    ``column`` of line ``begin``: a key line is unchanged, a dash stays."""
    if item:
        head = lines[begin]
        if not (head.startswith(" " * column + "-") and (len(head) == column + 1 or head[column + 1] == " ")):
            return False
    elif first <= begin:
        return False
    for row in range(max(first, begin + 1), last):
        line = lines[row]
        stripped = line.lstrip(" ")
        if stripped and not stripped.startswith("#") and len(line) - len(stripped) <= column:
            return False
    return True


def _only(root: Any, section: str, key: Any) -> Any:
    """The value node of the fragment's one entry (``key``) of ``section``, else None."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    if root.__class__ is not MappingNode or root.tag != _MAP_TAG or len(root.value) != 1:
        return None
    name, inner = root.value[0]
    if name.__class__ is not ScalarNode or name.value != section:
        return None
    if section == "events":
        if inner.__class__ is not SequenceNode or inner.tag != _SEQ_TAG or len(inner.value) != 1:
            return None
        return inner.value[0]
    if inner.__class__ is not MappingNode or inner.tag != _MAP_TAG or len(inner.value) != 1:
        return None
    entry, node = inner.value[0]
    if entry.__class__ is not ScalarNode or entry.tag == _MERGE_TAG or entry.value != key:
        return None
    return node


def _paths(value: Any, path: Path) -> list[Path]:
    """Every path at or under ``path`` in ``value`` (where positions may be kept)."""
    found = [path]
    stack = [(value, path)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            children = [(child, at + (key,)) for key, child in node.items()]
        elif isinstance(node, list):
            children = [(child, at + (index,)) for index, child in enumerate(node)]
        else:
            continue
        for child, child_path in children:
            found.append(child_path)
            stack.append((child, child_path))
    return found
