"""The jinja2 environment of every text template (templates/ at the top level),
and ``--templates DIR``: a user's directory whose files replace ours.

StrictUndefined, trim_blocks, lstrip_blocks, keep_trailing_newline. Escaping
lives in filters here.

Overriding works as openapi-python-client's ``--custom-template-path``
(``Project.__init__`` in ``openapi_python_client/__init__.py``: a
``ChoiceLoader`` of a ``FileSystemLoader`` on the user's directory, then the
package's own loader): a file in DIR with the same relative path as a
built-in template is used instead of it, every other template comes from the
built-in set, so a custom template can ``{% extends %}`` or ``{% include %}``
built-in ones. Beyond that, ``builtin/<path>`` (a ``PrefixLoader``) always
names the built-in template, so an override can extend the very template it
replaces. DIR's templates are untrusted: an output kind with templates in
DIR renders in jinja2's ``SandboxedEnvironment`` (no attribute starting
with ``_``, no unsafe callables, bounded ``range``), our templates it uses
included (the same output, tested), in a child process bounded in time and
memory (``render_unit``, ``engine.workers.bounded``); a kind DIR leaves alone renders only
evcat's own templates, in a plain environment (the sandbox checks every
attribute access and call: `generate --only docs` of 1,000 types took 1.2
to 1.5 times as long sandboxed). Each output kind sees only its own template directories
(``outputs``), read once per run into a ``TemplateSet``: its units render
from those texts, and its cache key is their digest, so the key covers all
the templates a unit can read, by construction.
"""

from __future__ import annotations

import difflib
import marshal
import re
from collections.abc import Callable
from functools import cache, lru_cache, partial
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
import jinja2.exceptions
import jinja2.sandbox

from .templatefiles import (  # noqa: F401  (re-exported: the names of this module's users)
    BUILTIN_PREFIX,
    NOT_TEMPLATES,
    RULE,
    TemplateDirError,
    TemplateError,
    TemplateSet,
    _shown,
    builtin_dir,
    builtin_templates,
    template_set,
    user_templates,
)

def check_directory(directory: str) -> Path:
    """A ``--templates`` directory, checked: it exists, each file in it has
    the relative path of a built-in template (a typo would otherwise be
    ignored without a word) and is a UTF-8 jinja2 template without syntax
    errors. Returns its absolute path. Raises ``TemplateDirError`` (a usage
    error) or ``TemplateError`` (a template's file and line)."""
    root = Path(directory)
    if not root.is_dir():
        what = "is not a directory" if root.exists() else "does not exist"
        raise TemplateDirError(f"--templates {directory}: {what}")
    root = root.resolve()
    builtin = builtin_templates()
    files = user_templates(root)
    unknown = sorted(name for name in files if name not in builtin)
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, builtin, n=1)
            hints.append(f"{name}" + (f" (did you mean {close[0]}?)" if close else ""))
        known = "" if any("did you mean" in hint for hint in hints) else f", one of: {', '.join(sorted(builtin))}"
        raise TemplateDirError(
            f"--templates {directory}: {', '.join(hints)} override{'s' * (len(hints) == 1)} no built-in template; "
            f"a file there replaces the built-in template with the same relative path{known}"
        )
    parser = jinja2.sandbox.SandboxedEnvironment(**_OPTIONS)
    for name, path in files.items():
        if not path.is_file():
            raise TemplateDirError(f"--templates {directory}: {name} is not a regular file")
        raw = path.read_bytes()
        try:
            source = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise TemplateError(str(path), raw[: error.start].count(b"\n") + 1, "the template is not UTF-8 text") from None
        try:
            parser.parse(source, name, str(path))
        except jinja2.TemplateSyntaxError as error:
            raise TemplateError(str(path), error.lineno, f"template syntax error: {error.message}") from None
        except (RecursionError, MemoryError):  # jinja2's parser recurses per level of nesting
            raise TemplateError(str(path), 1, "the template nests too deeply to be read (brackets, blocks or "
                                              "expressions inside each other)") from None
    return root


def forget_templates() -> None:
    """For --watch: templates edited, added or removed since the last run."""
    builtin_templates.cache_clear()
    template_set.cache_clear()
    _environment.cache_clear()
    _COMPILED.clear()


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
    if "]" not in escaped:  # both link forms need one: most text has none
        return escaped
    escaped = _INLINE_LINK.sub(lambda m: m.group() if safe_link(m.group(1)) else "]\\(" + m.group(1), escaped)
    return _REFERENCE.sub(lambda m: m.group() if safe_link(m.group(3)) else f"{m.group(1)}\\[{m.group(2)}]: {m.group(3)}", escaped)


@lru_cache(maxsize=8192, typed=True)  # pure; table cells repeat (types, shared descriptions)
def md_cell(text: str | None) -> str:
    """One Markdown table cell: no line breaks, no column separators."""
    return " ".join(md_text(text).split()).replace("|", "\\|")


@lru_cache(maxsize=8192, typed=True)  # pure; table cells repeat (types, shared descriptions)
def md_code(text: str | None) -> str:
    """``text`` as a Markdown code span, whatever it holds: the fence is one
    backtick longer than the longest run of backticks inside (CommonMark
    6.1), line breaks become spaces, and ``|`` is escaped for table cells.
    Inside a code span Markdown shows ``<`` and ``&`` as text."""
    body = " ".join((text or "").splitlines()).replace("|", "\\|")
    longest = max(len(run) for run in re.findall("`+", body)) if "`" in body else 0
    fence = "`" * (longest + 1)
    if body.startswith("`") or body.endswith("`") or (body.startswith(" ") and body.endswith(" ") and body.strip()):
        body = f" {body} "
    return f"{fence}{body}{fence}"


_TOML_ESCAPES = {**{code: f"\\u{code:04x}" for code in [*range(0x00, 0x20), 0x7F]}, 0x22: '\\"', 0x5C: "\\\\"}


def toml_string(text: str | None) -> str:
    """A TOML basic string (TOML 1.0 "String"): quotes, backslashes and control characters escaped."""
    return '"' + (text or "").translate(_TOML_ESCAPES) + '"'


def template_dirs(user: Path | None = None) -> list[Path]:
    """Where templates are looked up, first match wins: a user's directory, then the built-in one."""
    return [*([user] if user is not None else []), builtin_dir()]


def render_unit(inputs: tuple[Any, ...], *, render: Callable[[tuple[Any, ...], jinja2.Environment], dict[str, bytes]],
                kind: str, templates: TemplateSet, code: Any = None, limits: Any = None) -> dict[str, bytes]:
    """``render(inputs, environment)``, in the environment of ``templates``
    and ``code`` (bound to a unit's render function by ``outputs.units``,
    so they travel to a worker process). An
    error in a template (an undefined variable, a syntax error found on first
    use, a forbidden attribute, a failing filter) becomes a ``TemplateError``
    at the template's file and line, never a traceback; so does an output of
    DIR's templates that evcat cannot process further (Python that does not
    parse).

    With DIR's templates, the unit renders in a child process under
    ``limits`` (``engine.workers.Limits``: the run's deadline and memory
    bound, from ``RunConfig.template_timeout`` and ``template_memory``;
    None: the defaults, from now): a template that runs past the deadline
    or needs more memory is a ``TemplateError`` too, at its line when the
    child could say where it was. The built-in templates alone render here."""
    if not templates.user:
        return _rendered(inputs, render=render, kind=kind, templates=templates, code=code)
    from ..engine import workers
    from ..engine.config import RunConfig

    if limits is None:
        defaults = RunConfig()
        limits = workers.Limits.starting_now(defaults.template_timeout, defaults.template_memory)
    _warm_for_children(kind)
    known = _COMPILED.setdefault(templates.digest, {})
    work = partial(_rendered_bounded, render=render, kind=kind, templates=templates, code=code, limits=limits,
                   known=known)
    try:
        files, compiled = workers.bounded(work, inputs, limits)
        known.update(compiled)  # the next unit's child loads them instead of compiling again
        return files  # type: ignore[no-any-return]
    except TemplateError:
        raise
    except (workers.OutOfTime, MemoryError, workers.Ended) as error:  # the child could not say where
        raise TemplateError(templates.user[0][2], 1, f"the {kind} output of the templates in "
                            f"{_shown(templates.directory or '?')}: {_describe(error, limits)}") from None


# Per template set (its digest), in this process: the code objects that the
# children of ``render_unit`` compiled from its templates, marshalled.
_COMPILED: dict[str, dict[tuple[str, str], bytes]] = {}
_MAX_CODE = 1 << 20  # bytes of one template's code kept (jinja2 folds constants into it as it compiles)


_WARM: set[str] = set()  # the kinds whose renderer made ready, in this process, what each child would load


def _warm_for_children(kind: str) -> None:
    """Once per process and kind, before its first child: the renderer's
    ``warm_children`` (libraries a unit loads on first use, e.g.
    datamodel-code-generator: a second per unit if each child loaded it).
    Evcat's own code, no template runs."""
    if kind in _WARM:
        return
    _WARM.add(kind)
    from ..outputs import RENDERERS

    warm = getattr(RENDERERS[kind].module(), "warm_children", None)
    if warm is not None:
        warm()


class _Compiled(jinja2.BytecodeCache):
    """Compiled templates handed from one child of ``render_unit`` to the
    next: a child loads what an earlier one compiled (``known``) and records
    what it compiles itself (``new``). Compiling runs in the child too: jinja2
    folds constant expressions as it compiles (``{{ 'x' * 2000000000 }}``
    would be computed right there). In memory only; never jinja2's own
    bytecode files (read with pickle)."""

    def __init__(self, known: dict[tuple[str, str], bytes]) -> None:
        self.known = known
        self.new: dict[tuple[str, str], bytes] = {}

    def load_bytecode(self, bucket: Any) -> None:
        data = self.known.get((bucket.key, bucket.checksum))
        if data is not None:
            bucket.code = marshal.loads(data)  # code our own child compiled, through our own pipe

    def dump_bytecode(self, bucket: Any) -> None:
        data = marshal.dumps(bucket.code)
        if len(data) <= _MAX_CODE:
            self.new[(bucket.key, bucket.checksum)] = data


def _rendered_bounded(inputs: tuple[Any, ...], *, known: dict[tuple[str, str], bytes], **rest: Any) -> tuple[dict[str, bytes], dict[tuple[str, str], bytes]]:
    """In the child of ``render_unit``: ``_rendered``, and the code it compiled."""
    compiled = _Compiled(known)
    environment(rest["templates"], rest["code"]).bytecode_cache = compiled
    return _rendered(inputs, **rest), compiled.new


def _rendered(inputs: tuple[Any, ...], *, render: Callable[[tuple[Any, ...], jinja2.Environment], dict[str, bytes]],
              kind: str, templates: TemplateSet, code: Any = None, limits: Any = None) -> dict[str, bytes]:
    """``render_unit``'s work, in whichever process renders it."""
    env = environment(templates, code)
    try:
        return render(inputs, env)
    except TemplateError:
        raise
    except jinja2.TemplateSyntaxError as error:
        raise TemplateError(error.filename or error.name or "?", error.lineno,
                            f"template syntax error: {error.message}") from None
    except Exception as error:  # sorted below: a template's fault, or a bug in evcat
        where = _template_frame(error.__traceback__, templates.files())
        if where is not None:
            raise TemplateError(*where, _describe(error, limits)) from None
        if templates.directory is None or not templates.user:
            raise  # the built-in templates alone: a bug in evcat
        from ..engine import workers

        overrides = [name for name, _, _ in templates.user]
        # Out of time or memory outside any template line (putting the output together): DIR's first template.
        fault = ":" if isinstance(error, (MemoryError, workers.OutOfTime)) else " cannot be processed:"
        raise TemplateError(templates.user[0][2], 1,
                            f"the {kind} output of the templates in {_shown(templates.directory)} "
                            f"({', '.join(overrides)}){fault} {_describe(error, limits)}") from None


def _template_frame(trace: TracebackType | None, files: frozenset[str]) -> tuple[str, int] | None:
    """The innermost template line in a traceback (jinja2 rewrites the
    frames of template code to carry the template's file and line)."""
    found = None
    while trace is not None:
        filename = trace.tb_frame.f_code.co_filename
        if filename in files:
            found = (filename, trace.tb_lineno)
        trace = trace.tb_next
    return found


def _describe(error: BaseException, limits: Any = None) -> str:
    from ..engine.workers import Ended, OutOfTime

    if isinstance(error, OutOfTime):
        return f"rendering with these templates took {error} in all (--template-timeout SECONDS); stopped"
    if isinstance(error, MemoryError):
        bound = f" ({limits.memory / 2**20:g} MiB beyond evcat's own)" if limits is not None else ""
        return f"the template needs more memory than a template may use{bound}; stopped"
    if isinstance(error, Ended):
        return f"rendering stopped: {error}"
    if isinstance(error, jinja2.UndefinedError):
        return f"undefined: {error.message}"
    if isinstance(error, jinja2.TemplateNotFound):
        return f"template not found: {error.message}"
    if isinstance(error, jinja2.exceptions.SecurityError):
        return f"not allowed in a template: {error.message}"
    text = " ".join(str(error).split())[:500]
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class _Texts(jinja2.BaseLoader):
    """Templates from a ``TemplateSet``'s texts: (relative path, source, file)."""

    def __init__(self, files: tuple[tuple[str, str, str], ...]) -> None:
        self.files = {name: (source, file) for name, source, file in files}

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        found = self.files.get(template)
        if found is None:
            raise jinja2.TemplateNotFound(template)
        return found[0], found[1], lambda: True  # the texts never change

    def list_templates(self) -> list[str]:
        return sorted(self.files)


class _Scoped(jinja2.BaseLoader):
    """Says why a template outside ``prefixes`` (``builtin/`` aside) is not
    found: one output kind reads only its own templates."""

    def __init__(self, loader: jinja2.BaseLoader, prefixes: tuple[str, ...]) -> None:
        self.loader = loader
        self.prefixes = prefixes

    def get_source(self, environment: jinja2.Environment, template: str) -> Any:
        name = template.removeprefix(BUILTIN_PREFIX + "/")
        if name.split("/", 1)[0] not in self.prefixes:
            allowed = " or ".join(f"{prefix}/" for prefix in self.prefixes)
            raise jinja2.TemplateNotFound(template, f"{template} (these templates can use only templates under {allowed})")
        return self.loader.get_source(environment, template)

    def list_templates(self) -> list[str]:
        return self.loader.list_templates()


def environment(templates: TemplateSet, code: Any = None) -> jinja2.Environment:
    """The environment that renders from ``templates``, made once per
    template set and ``code`` (jinja2 compiles each template once per
    environment). ``code``: compiled templates kept across runs (a
    ``engine.store.TemplateCode``, sealed, so a planted entry is a miss and never
    unmarshalled), or None; only for the built-in templates: a sandboxed
    environment compiles other code for the same source."""
    return _environment(templates, code)


_OPTIONS: dict[str, Any] = {
    "undefined": jinja2.StrictUndefined,
    "trim_blocks": True,
    "lstrip_blocks": True,
    "keep_trailing_newline": True,
    "autoescape": jinja2.select_autoescape(["html", "html.jinja"]),
}


@cache
def _environment(templates: TemplateSet, code: Any = None) -> jinja2.Environment:
    # Not jinja2's own bytecode caches: they read with pickle, and the cache
    # directory is untrusted input. Compiled built-in templates come from the
    # sealed store handed to ``environment`` (``code``) instead.
    # As openapi-python-client: a ChoiceLoader, DIR's templates first, then ours.
    ours = _Texts(templates.builtin)
    loader = _Scoped(jinja2.ChoiceLoader([
        jinja2.PrefixLoader({BUILTIN_PREFIX: ours}),
        _Texts(templates.user),
        ours,
    ]), templates.prefixes)
    # DIR's templates are untrusted; a kind whose templates DIR leaves alone runs only ours.
    kind = jinja2.sandbox.SandboxedEnvironment if templates.user else jinja2.Environment
    # cache_size=-1: a plain dict keeps the compiled templates (a set is a few
    # dozen); jinja2's LRU cache takes a lock and reorders a deque on every
    # lookup, i.e. on every {% include %} of a row.
    env = kind(loader=loader, cache_size=-1, **_OPTIONS)
    if not templates.user:
        env.bytecode_cache = code
    env.filters["docstring"] = docstring
    env.filters["doc_text"] = doc_text
    env.filters["py"] = repr
    env.filters["md_text"] = md_text
    env.filters["md_cell"] = md_cell
    env.filters["md_code"] = md_code
    env.filters["toml"] = toml_string
    return env
