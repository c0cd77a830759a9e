"""The import block of a generated ``models.py``, made right by construction.

datamodel-code-generator writes its imports in an order of its own and keeps
names only the container schema (dropped by ``python``) used. Instead of a
second ruff process per package (``ruff check --select I,F401 --fix``), the
block is rewritten here from ``IMPORTS``: the modules and names evcat's models
may import, in the order ruff's isort rules (I001) give them, keeping only the
names the module's body uses (decided by the compiler's symbol tables, not
by searching the text). Anything outside the table or otherwise uncertain
returns None, and the caller lets ruff sort the block as before; so does
``surely_in_ruffs_order`` for the envelope classes ``__init__.py`` imports.
The tests hold ruff to be the judge: a module importing every name of the
table passes ``ruff check --select I``, rendered packages of several
catalogs pass ``--select I,F401``, and random modules and catalogs come out
byte for byte as ruff's import rules make them.
"""

from __future__ import annotations

import ast
import re
import symtable

# isort sections (ruff's default: future, standard library, third party, local
# folder), each module's names in ruff's order (order-by-type: CONSTANTS,
# Classes, then functions and variables, each sorted). A blank line between sections.
IMPORTS: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...] = (
    (("__future__", ("annotations",)),),
    (("typing", ("Annotated", "Any", "Literal")),),
    (
        ("pydantic", ("AnyUrl", "AwareDatetime", "ConfigDict", "EmailStr", "Field", "RootModel", "StrictBool",
                      "StrictBytes", "StrictFloat", "StrictInt", "StrictStr")),
        ("typing_extensions", ("TypeAliasType",)),
    ),
    (("._cloudevents", ("Date", "DateTime", "JsonInt", "Payload", "Uri", "UriReference")),),
)

_KNOWN = {module: frozenset(names) for section in IMPORTS for module, names in section}
_ANOTHER_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]", re.MULTILINE)
_LINE_LENGTH = 88  # the generated packages' width (ruff and black)


def import_line(module: str, names: list[str], wrapped: bool | None = None) -> str:
    """``from module import names`` as isort writes it: one line if it fits
    (or ``wrapped`` is False), else one name a line in parentheses, with a
    trailing comma."""
    line = f"from {module} import {', '.join(names)}\n"
    if not (len(line) - 1 > _LINE_LENGTH if wrapped is None else wrapped):
        return line
    return f"from {module} import (\n" + "".join(f"    {name},\n" for name in names) + ")\n"


def sorted_imports(source: str) -> str | None:
    """``source`` with its leading import block sorted and without unused
    names, as ``ruff check --select I,F401 --fix`` leaves it; None where that
    is not certain (an import outside ``IMPORTS``, an alias, an import later
    in the module, a comment within the block, a name the module binds again
    or mentions where the compiler does not see a use).

    Uses are the compiler's own (``symtable``: a name a scope reads, without
    a walk of the syntax tree); annotations count as uses, so
    the module's annotations are read as evaluated ones (without the
    ``__future__`` import, which changes when they run, not what they name)."""
    if "import" not in source:
        return source  # nothing to sort
    if "\r" in source:
        return None  # lines as the compiler counts them: "\n" alone
    lines = source.split("\n")
    first = 0
    while first < len(lines) and (not lines[first].strip() or lines[first].startswith("#")):
        first += 1
    last = first
    while last < len(lines) and lines[last].startswith(("from ", "import ")):
        if "(" in lines[last]:
            return None  # a parenthesized import (a trailing comma keeps it wrapped): ruff's call
        last += 1
        while last < len(lines) and not lines[last].strip() and last + 1 < len(lines) and lines[last + 1].startswith(("from ", "import ")):
            last += 1  # a blank line between sections
    try:
        statements = ast.parse("\n".join(lines[first:last])).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ruff's call, as before
        return None
    imported: dict[str, set[str]] = {}
    for statement in statements:
        if not isinstance(statement, ast.ImportFrom):
            return None
        module = "." * statement.level + (statement.module or "")
        known = _KNOWN.get(module)
        if known is None:
            return None
        for alias in statement.names:
            if alias.asname is not None or alias.name not in known:
                return None
            imported.setdefault(module, set()).add(alias.name)
    if not imported:
        return None
    names = {name for taken in imported.values() for name in taken}
    head, tail = "".join(line + "\n" for line in lines[:first]), "\n".join(lines[last:])
    if "import" in tail and _ANOTHER_IMPORT.search(tail):
        return None  # another import (F401 judges it too), or text that looks like one: ruff's call
    evaluated = "\n".join("" if line == "from __future__ import annotations" else line for line in lines[first:last])
    try:
        module_table = symtable.symtable(head + evaluated + "\n" + tail, "models.py", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ruff's call, as before
        return None
    used = set(imported.get("__future__", ()))  # a compiler directive, never unused
    tables = [module_table]
    while tables:
        table = tables.pop()
        for name in names.intersection(table.get_identifiers()):
            symbol = table.lookup(name)
            if symbol.is_assigned() or (symbol.is_imported() and table is not module_table):
                return None  # bound again: which one a use means is ruff's call
            if symbol.is_referenced():
                used.add(name)
        tables.extend(table.get_children())
    if any(name in head or name in tail for name in names - used):
        return None  # mentioned where the compiler sees no use (a string annotation, __all__): ruff's call
    start = next((index for index in range(last, len(lines)) if lines[index].strip()), None)
    following = next((line for line in lines[last:] if line.strip() and not line.startswith("#")), None)
    if start is None or following is None:
        return None  # nothing after the imports
    # Blank lines after the block as ruff's isort sets them (lines-after-imports
    # unset): two before a class or function, else one.
    tail = "\n" * (2 if following.startswith(("class ", "def ", "async def ", "@")) else 1) + "\n".join(lines[start:])
    sections = []
    for section in IMPORTS:
        text = ""
        for module, order in section:
            if imported.get(module, set()) & used:
                every = [name for name in order if name in imported[module]]
                text += import_line(module, [name for name in every if name in used],
                                    wrapped=import_line(module, every).endswith(")\n"))
        if text:
            sections.append(text)
    return head + "\n".join(sections) + tail


def surely_in_ruffs_order(names: list[str]) -> bool:
    """True only where ``names``, imported from one module in this order, are
    surely in the order ruff's isort rules want: all class-like names (ruff's
    order-by-type puts CONSTANTS first), distinct when lowercased (ruff
    compares them so, case-insensitively), each before the next where the
    two first differ: two other characters in plain order, or two runs of
    digits (no leading zeros) as numbers (ruff's natural order: V2 before
    V10). Anything else (a digit against another character): False, and
    ruff sorts them."""
    for name in names:
        if not (name.isascii() and name.isidentifier() and name[0].isupper()) or name.upper() == name:
            return False
    lowered = [name.lower() for name in names]
    for before, after in zip(lowered, lowered[1:], strict=False):
        index = next((index for index, (one, other) in enumerate(zip(before, after, strict=False)) if one != other), None)
        if index is None:
            if len(before) >= len(after):
                return False  # the same, or the longer first
            continue
        one, other = before[index], after[index]
        if not one.isdigit() and not other.isdigit():
            if one > other:
                return False
            continue
        if not (one.isdigit() and other.isdigit()):
            return False
        start = index
        while start and before[start - 1].isdigit():
            start -= 1
        runs = [_digits(before, start), _digits(after, start)]
        if any(len(run) > 1 and run.startswith("0") for run in runs) or int(runs[0]) >= int(runs[1]):
            return False
    return True


def _digits(text: str, start: int) -> str:
    end = start
    while end < len(text) and text[end].isdigit():
        end += 1
    return text[start:end]


__all__ = ["IMPORTS", "import_line", "sorted_imports", "surely_in_ruffs_order"]
