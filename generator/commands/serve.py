"""`evcat serve`: a validating webhook delivery target (contract 6.1).

The HTTP behaviour is the generated packages' own runtime module
(``generator.runtime._webhook``); only the judge differs: events are checked
by ``instance.EventChecker`` against the catalog, as ``evcat validate`` does.
"""

from __future__ import annotations

import functools
import json
import signal
import socket
import sys
import threading
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from ..event_checker import EventChecker, Problem, pointer_text
from ..model import CatalogSet
from ..rules import finding_severity
from ..runtime._cloudevents import structured_from_binary
from ..runtime._webhook import (
    BATCH,
    MAX_DETAILS,
    STRUCTURED,
    Details,
    Finding,
    Judged,
    Unsupported,
    WebhookApp,
    check_binary_body,
    essence,
    oversized,
)
from .validate import InputProblem
from .validate import _check_depth as check_depth
from .validate import loads as validate_loads


def size_limit(catalog_set: CatalogSet) -> int:
    """The profile's size limit of one event (Het Normo ID09; CloudEvents and NL GOV: 64 KiB)."""
    return max((catalog.profile.max_event_size for catalog in catalog_set.catalogs), default=64 * 1024)


def binary_to_structured(headers: Mapping[str, str], body: bytes, checker: EventChecker) -> dict[str, Any]:
    """A binary-mode HTTP message as the structured-mode event it stands for.

    The step itself is the runtime's ``structured_from_binary`` (HTTP binding
    §3.1.3: each ``ce-`` header an attribute, percent-decoded, §3.1.3.2;
    Content-Type as ``datacontenttype``, §3.1.1; the body as data), the one
    the generated ``from_http`` and the Kafka, AMQP and MQTT bindings use;
    here the catalog gives the declared types of Integer and Boolean
    attributes, and the body is read as ``evcat validate`` reads an event.
    Raises ``ValueError`` for a message that is no event at all.
    """
    attributes = {name[3:]: value for name, value in headers.items() if name.startswith("ce-") and len(name) > 3}
    return structured_from_binary(
        attributes, headers.get("content-type") or None, body, lambda event: _declared_types(checker, event),
        percent_encoded=True, read=read_json,
    )


def _declared_types(checker: EventChecker, event: Mapping[str, Any]) -> dict[str, str]:
    """The catalog's extension attributes of the event's entry -> CloudEvents type."""
    entry, _ = checker.find(event)
    return {} if entry is None else {extension.name: extension.type for extension in entry.extensions}


def read_json(body: bytes) -> Any:
    """A body as `evcat validate` reads an event: NaN, Infinity, numbers beyond
    a double, integers beyond 64 bits, lone surrogates and nesting deeper than
    the limit are problems (ValueError), never values."""
    value = validate_loads(body)
    check_depth(value)
    return value


class CatalogJudge:
    """Headers and body -> judged events, by the catalog's rules."""

    def __init__(self, catalog_set: CatalogSet, max_details: int = MAX_DETAILS) -> None:
        self.checker = EventChecker(catalog_set)
        self.max_details = max_details
        self.max_event_size = size_limit(catalog_set)

    def __call__(self, headers: Mapping[str, str], body: bytes) -> list[Judged]:
        kind = essence(headers.get("content-type", ""))
        details = Details(self.max_details)
        if kind == BATCH:
            try:
                items = read_json(body)
            except (ValueError, RecursionError) as error:
                return [_unreadable("the batch is not JSON", error)]
            if not isinstance(items, list):
                return [_unreadable("a batch is a JSON array of events")]
            judged = []
            for index, item in enumerate(items):
                size = len(json.dumps(item, separators=(",", ":"), ensure_ascii=False).encode())
                judged.append(self.judge(index, item, size, details))
                # Held to the limit as the same event alone is (413): an error.
                details.take(judged[-1], oversized(size, self.max_event_size))
            return judged
        if kind == STRUCTURED:
            try:
                value = read_json(body)
            except (ValueError, RecursionError) as error:
                return [_unreadable("the body is not JSON", error)]
            return [self.judge(0, value, len(body), details)]
        if "ce-specversion" not in headers:
            raise Unsupported(f"{kind or 'no Content-Type'} is not a CloudEvents format this catalog describes")
        check_binary_body(headers, body)
        try:
            event = binary_to_structured(headers, body, self.checker)
        except (ValueError, RecursionError) as error:
            return [_unreadable("binary mode", error)]
        return [self.judge(0, event, None, details)]

    def judge(self, index: int, value: Any, wire_size: int | None, details: Details | None = None) -> Judged:
        """One event; its findings in detail while ``details`` allows, else counted."""
        problems = self.checker.check(value, wire_size=wire_size)
        judged = Judged(index, value)
        if details is None or details.left >= len(problems):
            findings = [_finding(problem) for problem in problems]
        else:  # past the budget: the severity of each, no text built
            findings = [_finding(p) if n < details.left else _counted(p) for n, p in enumerate(problems)]
        (details or Details(len(findings))).take(judged, findings)
        if isinstance(value, dict):
            for name in ("id", "type", "dataversion"):
                if isinstance(value.get(name), str):
                    setattr(judged, name, value[name])
        return judged


@functools.cache
def _severity(rule: str, setting: str | None = None) -> str:
    return str(finding_severity(rule, setting))


def _finding(problem: Problem) -> Finding:
    return Finding(problem.rule, pointer_text(problem.pointer), problem.message, _severity(problem.rule, problem.setting))


_COUNTED = {"error": Finding("", "", "", "error"), "warning": Finding("", "", "", "warning")}


def _counted(problem: Problem) -> Finding:
    """A finding that is only counted: its severity, nothing else."""
    return _COUNTED[_severity(problem.rule, problem.setting)]


def _unreadable(what: str, error: Exception | None = None) -> Judged:
    """A body the reader refused: what ``evcat validate`` says of it (rule,
    pointer, message) when the reader named where, else ``what``."""
    if isinstance(error, InputProblem) and error.pointer is not None:
        return Judged(0, findings=[Finding(error.rule, pointer_text(error.pointer), error.msg)])
    return Judged(0, findings=[Finding("CE-FORMAT", "/", what if error is None else f"{what}: {error}")])


def printer(stream: TextIO) -> Any:
    """The report of ``evcat serve``: one JSON line per received event."""

    lock = threading.Lock()  # a large batch is reported from a worker thread

    def report(judged: list[Judged]) -> None:
        lines = [json.dumps(item.record(), ensure_ascii=False) + "\n" for item in judged]
        with lock:
            stream.writelines(lines)
            stream.flush()

    return report


def application(
    catalog_set: CatalogSet,
    *,
    tokens: Iterable[str] = (),
    allowed_origins: Iterable[str] = ("*",),
    rate: int | None = None,
    path: str | None = "/",
    stream: TextIO | None = None,
    allow_private_callbacks: bool = False,
) -> WebhookApp:
    judge = CatalogJudge(catalog_set)
    return WebhookApp(
        judge,
        report=printer(stream or sys.stdout),
        tokens=tokens,
        allowed_origins=allowed_origins or ("*",),
        rate=rate,
        path=path,
        max_event_size=judge.max_event_size,
        allow_private_callbacks=allow_private_callbacks,
    )


def serve(app: WebhookApp, host: str, port: int, announce: TextIO, trusted_proxies: Iterable[str] = ()) -> None:
    """Run under uvicorn until Ctrl-C (or SIGTERM), then shut down gracefully,
    with the runtime's limits (``_serving``: a deadline for request headers,
    forwarding headers trusted only from ``trusted_proxies``).

    The socket is bound here, so ``--port 0`` works and the address printed
    is the one listening."""
    import uvicorn

    from ..runtime._serving import config as serving_config

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"evcat: serving on http://{shown}:{bound}{app.path or '/'} ; Ctrl-C stops", file=announce, flush=True)
    config = serving_config(
        app, trusted_proxies=trusted_proxies, log_level="warning", access_log=False, lifespan="on",
        timeout_graceful_shutdown=5,
    )
    # uvicorn shuts down gracefully on SIGINT and SIGTERM, then raises the signal
    # again with the handlers it found: these end the run quietly.
    previous = signal.signal(signal.SIGTERM, _stopped)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except (KeyboardInterrupt, _Stopped):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()


class _Stopped(Exception):
    pass


def _stopped(signum: int, frame: Any) -> None:
    raise _Stopped
