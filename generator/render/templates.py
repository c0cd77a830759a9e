"""The jinja2 environment of every text template (templates/ at the top level).

StrictUndefined, trim_blocks, lstrip_blocks, keep_trailing_newline. A user's
directory passed with ``--templates`` comes first (a ChoiceLoader), so a file
there with the same name overrides ours. Escaping lives in filters here.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

_PACKAGE_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"  # in an installed wheel
_SOURCE_TEMPLATES = Path(__file__).resolve().parents[2] / "templates"  # in a checkout
_user_dirs: list[str] = []


def use_templates(directory: str | None) -> None:
    """Put a user's template directory before the built-in templates."""
    _user_dirs.clear()
    if directory:
        _user_dirs.append(directory)


_CONTROL = {code: f"\\x{code:02x}" for code in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F]}


def doc_text(text: str | None) -> str:
    """Text to put inside a triple-quoted docstring, as is: backslashes, quotes
    and control characters (a carriage return would become a newline) escaped,
    so ``__doc__`` reads the catalog's text exactly (black then trims trailing
    spaces of lines, as it does in every docstring)."""
    return (text or "").replace("\\", "\\\\").replace('"""', '\\"\\"\\"').translate(_CONTROL)


def docstring(text: str | None, indent: int = 4) -> str:
    """A safe triple-quoted docstring: nothing in the text can end it early."""
    raw = (text or "").rstrip()
    quotes = len(raw) - len(raw.rstrip('"'))  # a quote right before the closing """ must be escaped
    body = doc_text(raw[: len(raw) - quotes]) + '\\"' * quotes
    if not body:
        return '""""""'
    pad = " " * indent
    lines = body.split("\n")
    if len(lines) == 1:
        return f'"""{lines[0]}"""'
    return '"""' + lines[0] + "\n" + "\n".join((pad + line) if line.strip() else "" for line in lines[1:]) + "\n" + pad + '"""'


# Link destinations the docs keep: http, https, mailto and relative ones.
# Any other scheme (javascript:, data:, vbscript:, file:...) would run or
# load something when the Markdown is rendered (MkDocs, a wiki) and clicked.
_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_INLINE_LINK = re.compile(r"\]\(([^)]*)")  # [text](destination ...) and ![alt](...)
_REFERENCE = re.compile(r"^( {0,3})\[([^\]\n]*)\]:[ \t]*(\S*)", re.MULTILINE)  # [label]: destination
_UNSEEN = re.compile(r"[\x00-\x20\\]")  # browsers drop these from URLs; Markdown drops the backslashes


def safe_link(destination: str) -> bool:
    """Whether a Markdown link destination is http(s), mailto or relative."""
    cleaned = _UNSEEN.sub("", destination).lstrip("<")
    scheme = _SCHEME.match(cleaned)
    if scheme is not None:
        return scheme.group(1).lower() in _SAFE_SCHEMES
    return ":" not in cleaned.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]


def md_text(text: str | None) -> str:
    """Text for the Markdown pages: HTML in it is shown as text (wikis render
    raw HTML), and a link whose scheme is not http, https, mailto or relative
    is shown as text, not made a link."""
    escaped = (text or "").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    escaped = _INLINE_LINK.sub(lambda m: m.group() if safe_link(m.group(1)) else "]\\(" + m.group(1), escaped)
    return _REFERENCE.sub(lambda m: m.group() if safe_link(m.group(3)) else f"{m.group(1)}\\[{m.group(2)}]: {m.group(3)}", escaped)


def md_cell(text: str | None) -> str:
    """One Markdown table cell: no line breaks, no column separators."""
    return " ".join(md_text(text).split()).replace("|", "\\|")


def md_code(text: str | None) -> str:
    """``text`` as a Markdown code span, whatever it holds: the fence is one
    backtick longer than the longest run of backticks inside (CommonMark
    6.1), line breaks become spaces, and ``|`` is escaped for table cells.
    Inside a code span Markdown shows ``<`` and ``&`` as text."""
    body = " ".join((text or "").splitlines()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * (longest + 1)
    if body.startswith("`") or body.endswith("`") or (body.startswith(" ") and body.endswith(" ") and body.strip()):
        body = f" {body} "
    return f"{fence}{body}{fence}"


_TOML_ESCAPES = {**{code: f"\\u{code:04x}" for code in [*range(0x00, 0x20), 0x7F]}, 0x22: '\\"', 0x5C: "\\\\"}


def toml_string(text: str | None) -> str:
    """A TOML basic string (TOML 1.0 "String"): quotes, backslashes and control characters escaped."""
    return '"' + (text or "").translate(_TOML_ESCAPES) + '"'


def template_dirs() -> list[Path]:
    """Where templates are looked up, first match wins: a user's directory,
    then a checkout's own templates/ (an editable install may hold an older
    copy), else the packaged copy."""
    marker = Path("python") / "events.py.jinja"
    builtin = _SOURCE_TEMPLATES if (_SOURCE_TEMPLATES / marker).is_file() else _PACKAGE_TEMPLATES
    return [*(Path(d) for d in _user_dirs), builtin]


def environment() -> jinja2.Environment:
    """The environment for the current template directories, made once: jinja2
    compiles each template once per environment (auto_reload still notices a
    template edited on disk, for --watch)."""
    return _environment(tuple(template_dirs()))


@cache
def _environment(directories: tuple[Path, ...]) -> jinja2.Environment:
    # No bytecode cache: jinja2 reads it with pickle, and the cache directory
    # is untrusted input (a planted entry would run code). Templates are
    # compiled once per process instead.
    import jinja2  # here: a run with nothing to render (template_dirs only) never loads it

    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(d)) for d in directories]
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=jinja2.select_autoescape(["html", "html.jinja"]),
    )
    env.filters["docstring"] = docstring
    env.filters["doc_text"] = doc_text
    env.filters["py"] = repr
    env.filters["md_text"] = md_text
    env.filters["md_cell"] = md_cell
    env.filters["md_code"] = md_code
    env.filters["toml"] = toml_string
    return env
