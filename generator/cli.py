"""The `evcat` command line. Only this module prints and picks exit codes.

Exit status (contract §3): 0 ok (warnings allowed), 1 the catalog has
errors, 2 usage error. Bad input never shows a traceback; an internal error
(a bug) prints one line and exits 3, with the traceback under EVCAT_DEBUG=1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import NoReturn

from . import __version__
from .commands.lint import UsageError, lint
from .diagnostics import (
    DiagnosticWriter,
    display_path,
    format_github,
    format_json,
    format_sarif,
    format_text,
    terminal_text,
)
from .engine.cache import CACHE_NAME, default_cache_dir
from .engine.config import RunConfig
from .outputs import only_help
from .profiles import DEFAULT as DEFAULT_PROFILE
from .profiles import NAMES as PROFILE_NAMES
from .profiles import starters as starter_profiles

FORMATS = ("text", "json", "sarif", "github")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evcat",
        description="Check CloudEvents event catalogs and generate Python models, JSON Schemas, AsyncAPI and docs.",
    )
    parser.add_argument("--version", action="version", version=f"evcat {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    lint_parser = commands.add_parser("lint", help="check a catalog directory against the rules of its profile")
    lint_parser.add_argument("catalog", nargs="?", default="catalog", help="catalog directory or file (default: catalog)")
    lint_parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    _cache_options(lint_parser)
    _watch_option(lint_parser)

    generate_parser = commands.add_parser("generate", help="lint, then write all outputs (refuses when there are errors)")
    generate_parser.add_argument("catalog", nargs="?", default="catalog", help="catalog directory or file (default: catalog)")
    generate_parser.add_argument("-o", "--output", default="out", help="output directory (default: out)")
    generate_parser.add_argument("--only", help=only_help())
    generate_parser.add_argument(
        "--templates", metavar="DIR",
        help="a directory of templates: a file there replaces the built-in template with the same relative path "
        "(e.g. docs/event.md.jinja); the others stay built-in (see templates/README.md)",
    )
    generate_parser.add_argument(
        "--template-timeout", type=_seconds, default=RunConfig.template_timeout, metavar="SECONDS",
        help="how long rendering with the --templates templates may take in all before it is stopped with a TEMPLATE "
        f"error (default: {RunConfig.template_timeout:g}); each process rendering them may also grow by at most "
        f"{RunConfig.template_memory // 2**20} MiB, and all they write is bounded likewise",
    )
    generate_parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when OUT is stale")
    generate_parser.add_argument("--format", choices=FORMATS, default="text", help="format of diagnostics (default: text)")
    generate_parser.add_argument(
        "--formatter", choices=("ruff", "black"), default="ruff",
        help="how Python output is formatted: ruff's black-compatible formatter (default, fast), "
        "or black over ruff's output",
    )
    generate_parser.add_argument(
        "--asyncapi-version", default="3.0.0", metavar="VERSION",
        help="AsyncAPI version of asyncapi/*.yaml: 3.0.0 (default, which the ecosystem's tools read) or 3.1.0",
    )
    generate_parser.add_argument(
        "--lock-timeout", type=_seconds, default=60.0, metavar="SECONDS",
        help="how long to wait for another evcat run writing OUT before failing (default: 60)",
    )
    _cache_options(generate_parser)
    _watch_option(generate_parser)

    validate_parser = commands.add_parser(
        "validate",
        help="check events (JSON files, batches, JSON lines, directories, - for stdin) against the catalog",
        description="The first argument is the catalog when more than one is given and it is a directory "
        "with catalog files (*.yaml) or a YAML file; otherwise the catalog is ./catalog.",
    )
    validate_parser.add_argument("paths", nargs="+", metavar="[CATALOG_DIR] EVENT")
    validate_parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    _cache_options(validate_parser)

    diff_parser = commands.add_parser(
        "diff", help="compare two catalog versions; flag changes that break consumers without the bump the profile needs"
    )
    diff_parser.add_argument("old", help="catalog directory, or git:REF:PATH (read from git, working tree untouched)")
    diff_parser.add_argument("new", help="catalog directory, or git:REF:PATH")
    diff_parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    _webhook_parsers(commands)

    commands.add_parser("schema", help="print the JSON Schema of the catalog format (for editors)")
    rules_parser = commands.add_parser("rules", help="list every rule id with its severity, profiles and summary")
    rules_parser.add_argument("--format", choices=("text", "json", "markdown"), default="text", help="output format (default: text)")
    rules_parser.add_argument("--profile", choices=PROFILE_NAMES, help="only the rules of this profile")
    init_parser = commands.add_parser("init", help="start a project: a starter catalog that lints clean, editor schema, .gitignore, CI")
    init_parser.add_argument("directory", nargs="?", default=".", help="project directory (default: .)")
    init_parser.add_argument(
        "--profile", choices=starter_profiles(), default=DEFAULT_PROFILE.name,
        help=f"rule set of the starter catalog (default: {DEFAULT_PROFILE.name})",
    )
    init_parser.add_argument(
        "--evcat-requirement", metavar="REQ",
        help="what the CI files install evcat with (a pip requirement, URL or path; "
        "default: where this evcat was installed from, when CI can reach it)",
    )
    commands.add_parser("lsp", help="run the language server for editors over standard input and output")
    return parser


def _webhook_parsers(commands: argparse._SubParsersAction) -> None:
    """`evcat serve` and `evcat send` (contract 6.1, 6.2; generator/serve.py, generator/send.py)."""
    serve_parser = commands.add_parser(
        "serve", help="run a validating webhook delivery target; one JSON line per received event on stdout"
    )
    serve_parser.add_argument("catalog", nargs="?", default="catalog", help="catalog directory or file (default: catalog)")
    serve_parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve_parser.add_argument("--port", type=int, default=8080, help="port (default: 8080; 0 picks a free one)")
    serve_parser.add_argument("--path", default="/", help="the webhook's path (default: /)")
    serve_parser.add_argument("--token", action="append", default=[], help="accepted bearer token (repeatable)")
    serve_parser.add_argument(
        "--allowed-origin", action="append", default=[], metavar="ORIGIN",
        help="WebHook-Request-Origin granted in the handshake (repeatable; default: any)",
    )
    serve_parser.add_argument("--rate", type=_positive, help="deliveries per minute allowed per origin of each client address (default: no limit)")
    serve_parser.add_argument(
        "--trusted-proxy", action="append", default=[], metavar="ADDRESS",
        help="a reverse proxy (address or network) whose X-Forwarded-For names the client (repeatable; default: none trusted)",
    )
    serve_parser.add_argument(
        "--allow-private-callbacks", action="store_true",
        help="let handshake callbacks (WebHook-Request-Callback) reach loopback and private addresses",
    )
    _cache_options(serve_parser)

    send_parser = commands.add_parser(
        "send", help="deliver events to a webhook (handshake, rate, retries); --check tests a receiver",
        description="evcat send [CATALOG_DIR] URL [EVENT...]: the first argument is the catalog when it is not a URL.",
    )
    send_parser.add_argument("paths", nargs="+", metavar="[CATALOG_DIR] URL [EVENT]")
    send_parser.add_argument("--examples", action="store_true", help="send the catalog's examples")
    send_parser.add_argument("--mode", choices=("structured", "binary", "batch"), default="structured")
    send_parser.add_argument("--token", help="bearer token (sent as Authorization: Bearer)")
    send_parser.add_argument("--origin", help="WebHook-Request-Origin (default: this host's name)")
    send_parser.add_argument("--no-handshake", action="store_true", help="skip the handshake (target agreed out of band)")
    send_parser.add_argument("--retries", type=int, default=5, help="retries per request (default: 5)")
    send_parser.add_argument("--rate", type=_positive, help="requests per minute to ask for and never exceed")
    send_parser.add_argument("--check", action="store_true", help="test the receiver at URL against contract 6.1 instead")
    _cache_options(send_parser)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds (0 or more), not {text!r}")
    return value


def _config(arguments: argparse.Namespace, catalog: str | None = None) -> RunConfig:
    """The run's settings, from the command line: the one value that travels through the run.
    ``catalog``: the catalog directory or file of the run (default: the ``catalog`` argument)."""
    templates = getattr(arguments, "templates", None)
    if templates:
        from .commands.generate import use_templates

        templates = use_templates(templates)
    cache_dir = None
    if not getattr(arguments, "no_cache", True):
        # --cache-dir, else EVCAT_CACHE_DIR, else beside the catalog's project (engine.cache)
        cache_dir = arguments.cache_dir or os.environ.get("EVCAT_CACHE_DIR") or None
        if cache_dir is None:
            cache_dir = default_cache_dir(catalog or getattr(arguments, "catalog", None) or "catalog")
    if cache_dir is not None:
        from .engine.store import key_problem

        problem = key_problem()
        if problem is not None:
            raise UsageError(problem)
    return RunConfig(
        cache_dir=cache_dir,
        formatter=getattr(arguments, "formatter", None) or "ruff",
        asyncapi_version=getattr(arguments, "asyncapi_version", None),
        templates=templates or None,
        lock_timeout=getattr(arguments, "lock_timeout", RunConfig.lock_timeout),
        progress=True,
        template_timeout=getattr(arguments, "template_timeout", RunConfig.template_timeout),
    )


def _cache_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        help=f"where parsed files are cached (default: $EVCAT_CACHE_DIR, else {CACHE_NAME} in the catalog's project: "
        "the nearest directory above the catalog holding pyproject.toml or .git, else beside the catalog directory; safe to delete)",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")


def _watch_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--watch", action="store_true",
        help="stay running and check again whenever a catalog file (or template) is saved; Ctrl-C stops",
    )


def run() -> NoReturn:
    """The `evcat` program: ``main``, then exit without tearing down the
    interpreter (freeing a large catalog's objects one by one takes a third
    of a second; everything is written and flushed by then)."""
    try:
        code = main()
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = 1
    except BaseException:  # SystemExit from argparse (--help, usage errors) and the like
        sys.stdout.flush()
        sys.stderr.flush()
        raise
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    arguments = parser.parse_args(argv)
    try:
        return _run(arguments)
    except UsageError as error:
        print(f"evcat: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evcat: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as error:  # a bug: one clear line, never a traceback by default
        if os.environ.get("EVCAT_DEBUG"):
            traceback.print_exc()
        print(
            f"evcat: internal error ({type(error).__name__}: {error}); this is a bug in evcat, "
            "please report it (set EVCAT_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 3


def _run(arguments: argparse.Namespace) -> int:
    if arguments.command == "schema":
        from .catalog_format import catalog_json_schema

        sys.stdout.write(json.dumps(catalog_json_schema(), indent=2) + "\n")
        return 0
    if arguments.command == "rules":
        return _list_rules(arguments.format, arguments.profile)
    if arguments.command == "init":
        from .commands.init import init

        done, notes = init(arguments.directory, arguments.profile, arguments.evcat_requirement)
        for path, what in done:
            print(f"{what:8} {os.path.join(arguments.directory, path)}")
        for note in notes:
            print(terminal_text(f"evcat: warning: {note}"), file=sys.stderr)
        print(f"next: evcat lint {os.path.join(arguments.directory, 'catalog')}")
        return 0
    if arguments.command == "lsp":
        from .lsp import run as serve_lsp

        return serve_lsp()
    if arguments.command == "lint":
        return _watch(arguments, _lint) if arguments.watch else _lint(arguments)
    if arguments.command == "generate":
        if arguments.watch and arguments.check:
            raise UsageError("--watch and --check do not go together")
        return _watch(arguments, _generate) if arguments.watch else _generate(arguments)
    if arguments.command == "validate":
        return _validate(arguments)
    if arguments.command == "diff":
        return _diff(arguments)
    if arguments.command == "serve":
        return _serve(arguments)
    if arguments.command == "send":
        return _send(arguments)
    raise UsageError(f"unknown command {arguments.command}")  # pragma: no cover - argparse prevents it


def _lint(arguments: argparse.Namespace) -> int:
    result = lint(arguments.catalog, _config(arguments))
    _notes(result.notes)
    sys.stdout.write(_format(result.diagnostics, arguments.format, len(result.documents)))
    return 1 if result.has_errors else 0


def _notes(notes: list[str]) -> None:
    for note in notes:
        print(f"evcat: note: {note}", file=sys.stderr)


WATCH_INTERVAL = 0.25  # seconds between looks at the files


def _watched(catalog: str, templates: str | None = None) -> dict[str, tuple[int, ...]]:
    """The stat of every catalog file and template: a new, saved or deleted
    file shows. Size, inode and change time as well as the modification time,
    so a save within one tick of a coarse clock shows too (an editor that
    writes a new file and renames it over the old one gives a new inode)."""
    from pathlib import Path

    from .commands.lint import find_catalog_files
    from .render.templates import template_dirs

    files: list[str] = []
    try:
        files += find_catalog_files(catalog)
    except UsageError:
        pass  # no catalog files (yet): wait for one
    for directory in template_dirs(Path(templates) if templates else None):
        files += [str(path) for path in directory.rglob("*") if path.is_file()]
    state = {}
    for name in files:
        try:
            info = os.stat(name)
        except OSError:
            continue
        state[name] = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
    return state


def _watch(arguments: argparse.Namespace, run: Callable[[argparse.Namespace], int]) -> int:
    """Run, then again on every save, until Ctrl-C. The caches make a re-run cost
    what changed: the edited file is parsed again, only its catalog re-rendered."""
    import time

    from .commands.generate import forget_code_digest

    templates = getattr(arguments, "templates", None)
    state = _watched(arguments.catalog, templates)
    try:
        while True:
            try:
                code = run(arguments)
            except UsageError as error:
                print(f"evcat: error: {error}", file=sys.stderr)
                code = 2
            sys.stdout.flush()
            print(f"evcat: watching {arguments.catalog} (exit {code} for this run); Ctrl-C stops", file=sys.stderr, flush=True)
            while True:
                time.sleep(WATCH_INTERVAL)
                if _watched(arguments.catalog, templates) != state:
                    time.sleep(WATCH_INTERVAL)  # let an editor finish saving
                    break
            previous, state = state, _watched(arguments.catalog, templates)
            names = sorted(name for name in previous.keys() | state.keys() if previous.get(name) != state.get(name))
            forget_code_digest()  # a template may have changed
            shown = ", ".join(display_path(name) for name in names[:3]) + (" ..." if len(names) > 3 else "")
            print(f"evcat: {time.strftime('%H:%M:%S')} changed: {shown or arguments.catalog}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print("evcat: stopped watching", file=sys.stderr)
        return 0


def _generate(arguments: argparse.Namespace) -> int:
    from .commands.generate import generate, parse_kinds
    from .render.templatefiles import TemplateError
    from .writer import OutputError

    kinds = parse_kinds(arguments.only)
    try:
        result = generate(arguments.catalog, arguments.output, kinds, _config(arguments), check=arguments.check)
    except TemplateError as error:  # a broken --templates template: its file and line, nothing written
        sys.stdout.write(_format([error.diagnostic()], arguments.format, None))
        print("evcat: a template has errors; nothing was generated", file=sys.stderr)
        return 2
    except OutputError as error:
        print(f"evcat: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # the file it happened to, when the system says which; else OUT
        where = os.fsdecode(error.filename) if isinstance(error.filename, (str, bytes, os.PathLike)) else arguments.output
        print(terminal_text(f"evcat: error: cannot write {where}: {error.strerror or error}; nothing was changed"),
              file=sys.stderr)
        return 1
    diagnostics = result.lint.diagnostics
    _notes(result.lint.notes)
    if diagnostics or result.report is None:
        sys.stdout.write(_format(diagnostics, arguments.format, len(result.lint.documents)))
    if result.report is None:
        print("evcat: the catalog has errors; nothing was generated", file=sys.stderr)
        return 1
    report = result.report
    if report.ignored:
        shown = ", ".join(repr(name) for name in report.ignored[:3]) + (" ..." if len(report.ignored) > 3 else "")
        print(terminal_text(
            f"evcat: warning: {len(report.ignored)} entr{'y' if len(report.ignored) == 1 else 'ies'} of "
            f"{os.path.join(arguments.output, '.evcat-manifest.json')} name no file evcat wrote inside "
            f"{arguments.output} ({shown}): ignored, nothing deleted through them"
            + ("" if arguments.check else "; the manifest no longer lists them")
        ), file=sys.stderr)
    if arguments.check:
        if report.changed:
            stale = report.written + report.deleted
            print(f"{arguments.output} is stale: {len(stale)} file(s) differ, e.g. {stale[0]}; run evcat generate", file=sys.stderr)
            return 1
        print(f"{arguments.output} is up to date ({len(report.unchanged)} files)", file=sys.stderr)
        return 0
    print(
        f"wrote {len(report.written)}, unchanged {len(report.unchanged)}, deleted {len(report.deleted)} "
        f"file(s) in {arguments.output} ({', '.join(kinds)})",
        file=sys.stderr,
    )
    return 0


def _diff(arguments: argparse.Namespace) -> int:
    from .commands.diff import diff_sets, format_json, format_markdown, format_text
    from .commands.gitsource import catalog_source

    sides = []
    for label, spec in (("OLD", arguments.old), ("NEW", arguments.new)):
        with catalog_source(spec) as source:
            result = lint(source.directory)
        if result.has_errors:  # named as the user wrote them (git:REF:PATH), not by a temporary directory
            sys.stdout.write(_format(source.shown(result.diagnostics), "text", len(result.documents)))
            print(f"evcat: {label} catalog {spec} has errors; fix them before comparing", file=sys.stderr)
            return 2
        sides.append(result.catalog_set)
    reports = diff_sets(sides[0], sides[1])
    formatter = {"text": format_text, "json": format_json, "markdown": format_markdown}[arguments.format]
    sys.stdout.write(formatter(reports))
    return 1 if any(report.violations for report in reports) else 0


def _is_catalog(path: str) -> bool:
    if os.path.isfile(path):
        return path.endswith((".yaml", ".yml"))
    if not os.path.isdir(path):
        return False
    return any(name.endswith((".yaml", ".yml")) for _, _, names in os.walk(path) for name in names)


def _validate(arguments: argparse.Namespace) -> int:
    from .commands.validate import validate

    paths = list(arguments.paths)
    catalog = paths.pop(0) if len(paths) > 1 and _is_catalog(paths[0]) else "catalog"
    config = _config(arguments, catalog)
    result = lint(catalog, config)
    if result.has_errors:
        sys.stdout.write(_format(result.diagnostics, arguments.format, len(result.documents)))
        print(f"evcat: the catalog {catalog} has errors; fix them before validating events", file=sys.stderr)
        return 2
    # Written as each chunk of events is checked, never held: memory does not
    # grow with the number of invalid events (issue 30).
    from .rules import RULES

    writer = DiagnosticWriter(arguments.format, sys.stdout.write, {rule.id: rule.summary for rule in RULES.values()},
                              __version__)
    outcome = validate(result.catalog_set, paths, config, writer.add)
    writer.finish(f"{outcome.events - outcome.invalid} of {outcome.events} events valid" if arguments.format == "text" else None)
    return 1 if outcome.invalid else 0


def _catalog_for_webhook(catalog: str, arguments: argparse.Namespace) -> object | None:
    result = lint(catalog, _config(arguments, catalog))
    if result.has_errors:
        sys.stdout.write(_format(result.diagnostics, "text", len(result.documents)))
        print(f"evcat: the catalog {catalog} has errors; fix them first", file=sys.stderr)
        return None
    return result.catalog_set


def _serve(arguments: argparse.Namespace) -> int:
    from .commands.serve import application, serve

    catalog_set = _catalog_for_webhook(arguments.catalog, arguments)
    if catalog_set is None:
        return 2
    path = arguments.path if arguments.path.startswith("/") else "/" + arguments.path
    app = application(
        catalog_set, tokens=arguments.token, allowed_origins=arguments.allowed_origin or ("*",),
        rate=arguments.rate, path=path, allow_private_callbacks=arguments.allow_private_callbacks,
    )
    try:
        serve(app, arguments.host, arguments.port, sys.stderr, trusted_proxies=arguments.trusted_proxy)
    except OSError as error:
        print(f"evcat: error: cannot listen on {arguments.host}:{arguments.port}: {error.strerror or error}", file=sys.stderr)
        return 1
    print("evcat: stopped serving", file=sys.stderr)
    return 0


def _send(arguments: argparse.Namespace) -> int:
    from .commands.send import check_receiver, deliver, examples, read_events
    from .runtime._delivery import Policy

    paths = list(arguments.paths)
    catalog = "catalog"
    if not paths[0].startswith(("http://", "https://")):
        catalog = paths.pop(0)
    if not paths or not paths[0].startswith(("http://", "https://")):
        raise UsageError("give the target URL (http:// or https://) after the catalog")
    url, files = paths[0], paths[1:]
    catalog_set = _catalog_for_webhook(catalog, arguments)
    if catalog_set is None:
        return 2
    if arguments.check:
        if files or arguments.examples:
            raise UsageError("--check sends the catalog's examples and broken variants; give no events")
        expectations = check_receiver(catalog_set, url, token=arguments.token, origin=arguments.origin or "evcat-check.invalid",
                                      handshake=not arguments.no_handshake)
        for expectation in expectations:
            print(f"{'ok  ' if expectation.met else 'FAIL'} {expectation.name}" + ("" if expectation.met else f": {expectation.detail}"))
        unmet = sum(not expectation.met for expectation in expectations)
        print(f"{len(expectations) - unmet} of {len(expectations)} expectations met", file=sys.stderr)
        return 1 if unmet else 0
    if not files and not arguments.examples:
        raise UsageError("give event files (or - for stdin), or --examples")
    candidates = (examples(catalog_set) if arguments.examples else []) + (read_events(files) if files else [])
    if not candidates:
        raise UsageError("no events to send")
    policy = Policy(token=arguments.token, origin=arguments.origin, handshake=not arguments.no_handshake,
                    retries=max(0, arguments.retries), rate=arguments.rate)
    results = deliver(catalog_set, url, candidates, arguments.mode, policy)
    for candidate, result in zip(candidates, results):
        status = str(result.status) if result.status is not None else "-"
        line = f"{status} {candidate.label} id={result.id!r}"
        if result.error and not result.ok:
            line += f": {result.error}"
        print(line)
    accepted = sum(result.ok for result in results)
    print(f"{accepted} of {len(results)} events accepted", file=sys.stderr)
    return 0 if accepted == len(results) else 1


def _format(diagnostics: list, output_format: str, checked: int | None) -> str:
    if output_format == "json":
        return format_json(diagnostics, checked)
    if output_format == "sarif":
        from .rules import RULES

        return format_sarif(diagnostics, {rule.id: rule.summary for rule in RULES.values()}, __version__)
    if output_format == "github":
        return format_github(diagnostics, checked)
    return format_text(diagnostics, checked)


def _list_rules(output_format: str = "text", profile: str | None = None) -> int:
    from .rules import RULES, rule_source

    rules = [rule for rule in sorted(RULES.values(), key=lambda r: r.id) if profile is None or profile in rule.profile_names]
    if output_format == "json":
        items = [
            {
                "id": rule.id, "severity": str(rule.severity), "profiles": list(rule.profile_names),
                "summary": rule.summary, "source": rule_source(rule.id), "can_be_turned_off": not rule.fixed,
            }
            for rule in rules
        ]
        print(json.dumps({"rules": items}, indent=2))
    elif output_format == "markdown":
        print("| id | severity | profiles | rule | source |")
        print("|---|---|---|---|---|")
        for rule in rules:
            summary = rule.summary.replace("|", "\\|")
            print(f"| `{rule.id}` | {rule.severity} | {', '.join(rule.profile_names)} | {summary} | {rule_source(rule.id)} |")
    else:
        for rule in rules:
            profiles = ",".join(rule.profile_names)
            print(f"{rule.id:26} {str(rule.severity):8} {profiles:24} {rule.summary}")
    return 0
