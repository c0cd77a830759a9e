"""The receiving side of CloudEvents webhooks, as a plain ASGI 3 application.

One implementation of the HTTP behaviour of a delivery target (contract 6.1):
``evcat serve`` and each generated package's ``webhook.Receiver`` differ only
in their *judge* (headers and body -> events with their diagnostics) and
their *dispatch* (what happens to valid events). Sources:

- CloudEvents "HTTP 1.1 Web Hooks for Event Delivery" (webhook spec) §2.2
  delivery response codes, §3 authorization (header and ``access_token``
  query parameter), §4 abuse protection (OPTIONS handshake, callback grant,
  allowed origin and rate);
- NL GOV guideline for the webhook pattern §3.1.1-§3.2 (the query token is
  accepted but SHOULD NOT be used: reported as a warning);
- RFC 9457 problem details for every error response; RFC 6750 §3 for the
  ``WWW-Authenticate: Bearer`` challenge; RFC 6585 §4 for 429 + Retry-After.

Standard library only: it runs under any ASGI server (uvicorn, hypercorn ...).
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import http.client
import ipaddress
import json
import logging
import math
import socket
import ssl
import time
import urllib.parse
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._reading import charset_problem, essence, is_json

__all__ = [
    "ALLOW",
    "BATCH",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_EVENT_SIZE",
    "EVENT_SIZE_RULE",
    "MAX_DETAILS",
    "QUERY_TOKEN_RULE",
    "RATE_WINDOW",
    "STRUCTURED",
    "Confirm",
    "Details",
    "Dispatch",
    "Finding",
    "Judge",
    "Judged",
    "Message",
    "Receive",
    "Report",
    "Scope",
    "Send",
    "Unsupported",
    "WebhookApp",
    "check_binary_body",
    "confirm_by_get",
    "essence",
    "is_json",
    "mode_of",
    "oversized",
    "problem",
]

STRUCTURED = "application/cloudevents+json"
BATCH = "application/cloudevents-batch+json"
ALLOW = "OPTIONS, POST"
# CloudEvents 1.0.2 "Size Limits" and the NL GOV profile: 64 KiB per event.
DEFAULT_EVENT_SIZE = 64 * 1024
# A batch request may carry many events; each is still held to the event limit.
DEFAULT_BATCH_SIZE = 4 * 1024 * 1024
RATE_WINDOW = (
    60.0  # WebHook-Allowed-Rate counts requests per minute (webhook spec §4.2.2)
)
QUERY_TOKEN_RULE = "WEBHOOK-TOKEN-IN-QUERY"
# An event of a batch over the event limit: an error of that event, as the
# same event alone gets 413.
EVENT_SIZE_RULE = "WEBHOOK-EVENT-SIZE"
# Problems given in detail per delivery (in the 400 answer and the report);
# the others are counted. A batch of thousands of invalid events must not
# cost seconds of work and megabytes of answer (issue 30).
MAX_DETAILS = 100
# Characters of a pointer or message in an answer (the rest is cut, "...").
MAX_TEXT = 1000
_LOG = logging.getLogger(__name__)

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


@dataclass(frozen=True)
class Finding:
    """One diagnostic of one event: rule, JSON pointer (RFC 6901), message."""

    rule: str
    pointer: str
    message: str
    severity: str = "error"  # "error" or "warning"


@dataclass
class Judged:
    """One event of a delivery as the judge saw it (``event`` is None when invalid)."""

    index: int
    event: Any = None
    id: str | None = None
    type: str | None = None
    dataversion: str | None = None
    findings: list[Finding] = field(default_factory=list[Finding])
    # Findings counted but not given in detail (past the delivery's MAX_DETAILS),
    # and how many of those are errors.
    omitted: int = 0
    omitted_errors: int = 0

    @property
    def valid(self) -> bool:
        if self.omitted_errors:
            return False
        findings = self.findings
        return not findings or all(f.severity != "error" for f in findings)

    def record(self) -> dict[str, Any]:
        """The JSON line ``evcat serve`` prints for this event (``omitted``:
        the number of its diagnostics past the delivery's ``MAX_DETAILS``)."""
        record: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "dataversion": self.dataversion,
            "valid": self.valid,
            "diagnostics": [self.diagnostic(finding) for finding in self.findings],
        }
        if self.omitted:
            record["omitted"] = self.omitted
        return record

    def diagnostic(self, finding: Finding) -> dict[str, Any]:
        return {
            "index": self.index,
            "id": self.id,
            "rule": finding.rule,
            "severity": finding.severity,
            "pointer": finding.pointer,
            "message": finding.message,
        }


class Details:
    """How many more findings of a delivery a judge may give in detail:
    ``take(findings)`` keeps those within the budget and counts the rest on
    ``judged``. A judge that runs out checks the remaining events only as far
    as their verdict and count need."""

    def __init__(self, budget: int = MAX_DETAILS) -> None:
        self.left = budget

    def take(self, judged: Judged, findings: Sequence[Finding]) -> Judged:
        kept = list(findings[: max(self.left, 0)])
        self.left -= len(kept)
        judged.findings.extend(kept)
        rest = findings[len(kept) :]
        judged.omitted += len(rest)
        judged.omitted_errors += sum(1 for f in rest if f.severity == "error")
        return judged


def oversized(size: int, limit: int) -> list[Finding]:
    """The finding of a batch's event of ``size`` bytes (compact JSON) over
    ``limit``: 65,536 bytes pass, 65,537 do not."""
    if size <= limit:
        return []
    message = f"the event is {size} bytes, over the limit of {limit} bytes of one event"
    return [Finding(EVENT_SIZE_RULE, "", message)]


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


class Unsupported(Exception):
    """The request carries no CloudEvent in a format the target understands (415)."""


# headers (lower-case names) and body -> the events, each with its findings.
Judge = Callable[[Mapping[str, str], bytes], list[Judged]]
# Called with the valid events of an accepted delivery; raising gives 500.
Dispatch = Callable[[list[Judged]], Awaitable[None]]
# Called with every judged delivery, valid or not (``evcat serve`` prints it).
Report = Callable[[list[Judged]], None]
Confirm = Callable[[str, str], Coroutine[Any, Any, None]]


def mode_of(headers: Mapping[str, str]) -> str:
    """``structured``, ``batch`` or ``binary`` (HTTP binding §3.1), or raise 415
    (also for JSON in a charset other than UTF-8: ``charset_problem``).

    Binary mode is recognised by its ``ce-specversion`` header; its body must
    be JSON (or empty), the only data format a catalog describes: see
    ``check_binary_body``.
    """
    content_type = headers.get("content-type", "")
    kind = essence(content_type)
    if (kind in (STRUCTURED, BATCH) or is_json(content_type)) and (
        charset := charset_problem(content_type)
    ):
        raise Unsupported(charset)  # the one reader reads UTF-8 only (_reading)
    if kind == STRUCTURED:
        return "structured"
    if kind == BATCH:
        return "batch"
    if "ce-specversion" in headers:
        return "binary"
    shown = content_type or "no Content-Type"
    raise Unsupported(
        f"{shown} is neither {STRUCTURED}, {BATCH} nor a binary-mode CloudEvent "
        "(ce-specversion header)"
    )


def check_binary_body(headers: Mapping[str, str], body: bytes) -> None:
    """Raise 415 for binary-mode data that is not JSON (an empty body is no data)."""
    content_type = headers.get("content-type", "")
    if body and content_type and not is_json(content_type):
        raise Unsupported(f"binary-mode data of type {content_type!r} is not JSON")


def problem(status: int, title: str, detail: str, **members: Any) -> bytes:
    """An RFC 9457 problem details document."""
    document: dict[str, Any] = {"type": "about:blank", "title": title}
    document.update(status=status, detail=detail, **members)
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


_PROBLEM = [(b"content-type", b"application/problem+json")]


def peer_of(scope: Scope) -> str:
    """The client's address as the rate limit counts it: what the client cannot
    choose freely. An IPv6 client is its /64 (one subscriber's usual prefix,
    RFC 6177), an IPv4-mapped one its IPv4 address. Behind a reverse proxy it
    is the proxy, unless the server rewrites the client from the forwarding
    headers of proxies it is told to trust (``_serving``: none by default)."""
    client = scope.get("client") or ("unknown", 0)
    host = str(client[0])
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class _RateLimit:
    """At most ``rate`` deliveries in any 60 s window (sliding log) per origin
    of each client address, and at most ``ORIGINS_PER_PEER`` times that per
    client address, whatever ``WebHook-Request-Origin`` it claims: the header
    is the client's to choose, its address is not (webhook spec §4.2.2 grants
    the rate per origin; a client varying the header gets no more).

    Memory is bounded: at most ``max_keys`` keys of at most ``rate`` (or
    ``ORIGINS_PER_PEER * rate``) times each. When full, keys whose window has
    passed go first, then keys never refused (oldest first), so a flood of
    new clients cannot reset the limit of a throttled one.
    """

    ORIGINS_PER_PEER = 4
    MEMORY = 1_000_000  # timestamps held at most over all keys
    MAX_KEYS = 10_000

    def __init__(self, rate: int, clock: Callable[[], float]) -> None:
        self.rate = rate
        self.clock = clock
        self.max_keys = max(16, min(self.MAX_KEYS, self.MEMORY // (rate * 2)))
        self.log: OrderedDict[tuple[str, ...], deque[float]] = OrderedDict()
        self.refused: set[tuple[str, ...]] = set()  # keys given a 429 (kept longest)

    def retry_after(self, peer: str, origin: str) -> int:
        """0 when the delivery may pass (and counts it), else seconds to wait."""
        now = self.clock()
        budgets = (
            (("peer", peer), self.rate * self.ORIGINS_PER_PEER),
            (("origin", peer, origin), self.rate),
        )
        logs: list[deque[float]] = []
        for key, limit in budgets:
            times = self.log.get(key)
            if times is None:
                self._make_room(now)
                times = self.log[key] = deque()
            else:
                self.log.move_to_end(key)
            while times and times[0] <= now - RATE_WINDOW:
                times.popleft()
            if len(times) >= limit:
                self.refused.add(key)
                return max(1, math.ceil(times[0] + RATE_WINDOW - now))
            logs.append(times)
        for times in logs:
            times.append(now)
        return 0

    def _make_room(self, now: float) -> None:
        if len(self.log) < self.max_keys:
            return
        keep = self.max_keys * 9 // 10
        for key, times in list(self.log.items()):  # windows passed
            if not times or times[-1] <= now - RATE_WINDOW:
                del self.log[key]
                self.refused.discard(key)
        for key in list(self.log):  # then clients never refused, oldest first
            if len(self.log) <= keep:
                break
            if key not in self.refused:
                del self.log[key]
        while len(self.log) >= self.max_keys:
            self.refused.discard(self.log.popitem(last=False)[0])


# -- the callback of the abuse-protection handshake (webhook spec §4.1.3) ----

CALLBACK_TIMEOUT = 10.0  # seconds for the whole GET, connection to last byte
CALLBACK_READ = 65536  # bytes of the callback's answer read at most
CALLBACKS_PER_MINUTE = 6  # handshakes with a callback per client address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052: IPv4 embedded


class CallbackRefused(OSError):
    """A callback URL whose host is not a public address (SSRF protection)."""


def refused_address(text: str) -> str | None:
    """Why a handshake's callback may not go to this IP address, or None.

    The callback URL is the requester's to choose: a receiver that GETs it
    could be made to reach its own network (SSRF). Refused: loopback,
    private, shared (RFC 6598), link-local, multicast, reserved, unspecified
    and every other address that is not globally reachable (IANA special
    purpose registries), IPv4 and IPv6, also an IPv4 address inside an IPv6
    one (IPv4-mapped, 6to4, Teredo, NAT64)."""
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    inside: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            inside.append(address.ipv4_mapped)
        if address.sixtofour is not None:
            inside.append(address.sixtofour)
        if address.teredo is not None:
            inside.append(address.teredo[1])
        if address in _NAT64:  # reaches the IPv4 address, judged alone
            inside = [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    for candidate in inside:
        for reason in (
            "loopback",
            "private",
            "link_local",
            "multicast",
            "reserved",
            "unspecified",
        ):
            if getattr(candidate, f"is_{reason}"):
                return f"{candidate} is a {reason.replace('_', '-')} address"
        if not candidate.is_global:
            return f"{candidate} is not a public address"
    return None


def _connect(
    allow_private: bool,
    sockets: list[socket.socket],
    address: tuple[str, int],
    timeout: float | None = None,
    source_address: tuple[str, int] | None = None,
) -> socket.socket:
    """``socket.create_connection`` that refuses non-public addresses: every
    address the name resolves to is checked, the connection goes to a
    checked address, and its actual peer address is checked again, so DNS
    rebinding (a second answer differing from the first) cannot bypass it."""
    host, port = address
    answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if not allow_private:
        for *_, sockaddr in answers:
            reason = refused_address(str(sockaddr[0]))
            if reason:
                raise CallbackRefused(f"{host} resolves to {sockaddr[0]}: {reason}")
    error: OSError = OSError(f"{host} resolves to no address")
    for family, kind, proto, _, sockaddr in answers:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sockets.append(sock)
            sock.connect(sockaddr)
            peer = str(sock.getpeername()[0])
            reason = None if allow_private else refused_address(peer)
            if reason:
                raise CallbackRefused(f"{host} connected to {peer}: {reason}")
            return sock
        except OSError as failed:
            sock.close()
            error = failed
            if isinstance(failed, CallbackRefused):
                break
    raise error


def _get(url: str, rate: str, allow_private: bool, sockets: list[socket.socket]) -> int:
    """One GET to ``url``: no proxy, no redirect followed, at most
    ``CALLBACK_READ`` bytes of the answer read. Returns the status."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) URL")
    # The port explicitly: http.client would read one off a bare IPv6 host.
    port = parts.port or (443 if parts.scheme == "https" else 80)
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(
            parts.hostname,
            port,
            timeout=CALLBACK_TIMEOUT,
            context=ssl.create_default_context(),
        )
    else:
        connection = http.client.HTTPConnection(
            parts.hostname, port, timeout=CALLBACK_TIMEOUT
        )
    # http.client opens its socket with this attribute (set per connection).
    connection._create_connection = functools.partial(  # type: ignore[attr-defined]
        _connect, allow_private, sockets
    )
    try:
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        connection.request("GET", target, headers={"WebHook-Allowed-Rate": rate})
        response = connection.getresponse()
        response.read(CALLBACK_READ)  # a redirect (3xx) is an answer, not followed
        return response.status
    finally:
        connection.close()


async def confirm_by_get(url: str, rate: str, *, allow_private: bool = False) -> None:
    """Grant a handshake by a GET to its callback URL (webhook spec §4.1.3),
    within ``CALLBACK_TIMEOUT`` in all; only to a public address unless
    ``allow_private``. A failed or refused callback is logged, nothing else:
    the sender may repeat the handshake."""
    sockets: list[socket.socket] = []
    task = asyncio.ensure_future(
        asyncio.to_thread(_get, url, rate, allow_private, sockets)
    )
    done, _ = await asyncio.wait({task}, timeout=CALLBACK_TIMEOUT)
    if not done:  # a server trickling its answer: cut the connection
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    try:
        await task
    except CallbackRefused as error:
        _LOG.warning(
            "webhook: handshake callback %s refused: %s (allow_private_callbacks "
            "permits it)",
            url,
            error,
        )
    except (OSError, ValueError, http.client.HTTPException) as error:
        _LOG.warning("webhook: handshake callback %s failed: %s", url, error)


class WebhookApp:
    """An ASGI application with the behaviour of a webhook delivery target.

    ``tokens``: accepted bearer tokens (none: no authorization required).
    ``allowed_origins``: values of WebHook-Request-Origin granted in the
    handshake; ``"*"`` grants every origin. ``rate``: deliveries per minute
    allowed per origin (None: no limit). ``path``: the one path served
    (None: any). ``max_event_size`` / ``max_batch_size``: bodies above them
    get 413. ``read_timeout``: seconds for the whole body to arrive (else 408).
    ``allow_private_callbacks``: let the handshake's callback GET go to
    loopback, private and other non-public addresses (default: refused, as
    the callback URL is the requester's to choose; see ``refused_address``).
    """

    def __init__(
        self,
        judge: Judge,
        *,
        dispatch: Dispatch | None = None,
        report: Report | None = None,
        tokens: Iterable[str] = (),
        allowed_origins: Iterable[str] = ("*",),
        rate: int | None = None,
        path: str | None = None,
        max_event_size: int = DEFAULT_EVENT_SIZE,
        max_batch_size: int = DEFAULT_BATCH_SIZE,
        confirm: Confirm | None = None,
        allow_private_callbacks: bool = False,
        clock: Callable[[], float] = time.monotonic,
        read_timeout: float = 30.0,
    ) -> None:
        self.judge = judge
        self.dispatch = dispatch
        self.report = report
        self.tokens = tuple(token.encode("utf-8") for token in tokens)
        # Origins are DNS names, equal whatever their case (RFC 4343).
        self.allowed_origins = frozenset(o.strip().lower() for o in allowed_origins)
        if rate is not None and rate < 1:
            raise ValueError("rate must be a positive number of requests per minute")
        self.rate = rate
        self.path = path
        self.max_event_size = max_event_size
        self.max_batch_size = max(max_batch_size, max_event_size)
        self.confirm = confirm or functools.partial(
            confirm_by_get, allow_private=allow_private_callbacks
        )
        self.read_timeout = read_timeout
        self._limit = _RateLimit(rate, clock) if rate else None
        self._callback_limit = _RateLimit(CALLBACKS_PER_MINUTE, clock)
        self._callbacks: set[asyncio.Task[None]] = set()
        self._reading: dict[asyncio.Task[Any], float] = {}  # -> deadline
        self._late: set[asyncio.Task[Any]] = set()
        self._watchdog: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if self.path is not None and scope["path"] != self.path:
            await _respond(
                send, 404, _PROBLEM, problem(404, "Not Found", "no webhook here")
            )
            return
        headers = {
            key.decode("latin-1").lower(): value.decode("latin-1")
            for key, value in scope["headers"]
        }
        method = scope["method"]
        if method == "POST":
            await self._post(scope, headers, receive, send)
        elif method == "OPTIONS":
            await self._options(scope, headers, send)
        else:
            detail = (
                f"{method} is not supported; deliveries use POST (webhook spec §2.1)"
            )
            await _respond(
                send,
                405,
                [(b"allow", ALLOW.encode()), *_PROBLEM],
                problem(405, "Method Not Allowed", detail),
            )

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for task in [*self._callbacks, self._watchdog]:
                    if task is not None:
                        task.cancel()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # -- the read timeout: one watchdog rather than a timer per request -----

    async def _within(self, reading: Awaitable[bytes | None]) -> bytes | None:
        """``await reading``, or TimeoutError after ``read_timeout`` (up to a
        quarter more): a watchdog task cancels reads past their deadline, at a
        fraction of the cost of ``asyncio.timeout`` per request."""
        task = asyncio.current_task()
        assert task is not None
        self._reading[task] = time.monotonic() + self.read_timeout
        watchdog = self._watchdog
        if watchdog is None or watchdog.get_loop() is not task.get_loop():
            self._watchdog = task.get_loop().create_task(self._watch())
        try:
            return await reading
        except asyncio.CancelledError:
            if task in self._late and task.uncancel() == 0:  # ours, not another's
                raise TimeoutError from None
            raise
        finally:
            self._reading.pop(task, None)
            self._late.discard(task)

    async def _watch(self) -> None:
        step = min(1.0, self.read_timeout / 4)
        try:
            while self._reading:
                await asyncio.sleep(step)
                now = time.monotonic()
                for task, deadline in list(self._reading.items()):
                    if deadline <= now:
                        del self._reading[task]
                        self._late.add(task)
                        task.cancel()
        finally:
            if self._watchdog is asyncio.current_task():
                self._watchdog = None

    def _judged(
        self, headers: Mapping[str, str], body: bytes, via: str | None
    ) -> list[Judged]:
        """The judge's verdict on a delivery, reported (``Unsupported`` passes)."""
        try:
            judged = self.judge(headers, body)
        except RecursionError:
            judged = [Judged(0, findings=[Finding("json", "", "nested too deeply")])]
        if via == "query":
            warning = Finding(
                QUERY_TOKEN_RULE,
                "",
                "the access token came in the access_token query parameter; "
                "send it as Authorization: Bearer (NL GOV webhook guideline §3.2)",
                "warning",
            )
            for item in judged:
                item.findings.append(warning)
        if self.report is not None:
            self.report(judged)
        return judged

    # -- abuse protection (webhook spec §4) ---------------------------------

    def _allows(self, origin: str) -> bool:
        return "*" in self.allowed_origins or origin.lower() in self.allowed_origins

    async def _options(
        self, scope: Scope, headers: Mapping[str, str], send: Send
    ) -> None:
        allow = [(b"allow", ALLOW.encode())]
        origin = headers.get("webhook-request-origin", "").strip()
        if not origin:
            await _respond(send, 200, allow)  # a plain OPTIONS: what is allowed here
            return
        if not self._allows(origin):
            detail = f"deliveries from {origin!r} are not accepted here"
            await _respond(
                send, 403, allow + _PROBLEM, problem(403, "Forbidden", detail)
            )
            return
        rate = str(self.rate) if self.rate else "*"
        callback = headers.get("webhook-request-callback", "").strip()
        if callback:
            try:
                parts = urllib.parse.urlsplit(callback)
                usable = parts.scheme in ("http", "https") and bool(parts.hostname)
                usable = usable and (parts.port or 1) > 0  # reading it checks it
            except ValueError:  # "http://[::1", a port that is no number ...
                usable = False
            if not usable:
                detail = f"WebHook-Request-Callback {callback!r} is not an http(s) URL"
                await _respond(
                    send, 400, allow + _PROBLEM, problem(400, "Bad Request", detail)
                )
                return
            # Each callback is a GET the requester chooses: a few a minute per
            # client address, so handshakes cannot turn this target into a
            # relay of requests to a third party.
            wait = self._callback_limit.retry_after(peer_of(scope), "callback")
            if wait:
                detail = f"more than {CALLBACKS_PER_MINUTE} callbacks a minute"
                await _respond(
                    send,
                    429,
                    [*allow, (b"retry-after", str(wait).encode()), *_PROBLEM],
                    problem(429, "Too Many Requests", detail),
                )
                return
            # §4.2: granting by callback withholds the response headers.
            self._schedule(callback, rate)
            await _respond(send, 200, allow)
            return
        granted = "*" if "*" in self.allowed_origins else origin
        await _respond(
            send,
            200,
            allow
            + [
                (b"webhook-allowed-origin", granted.encode("latin-1")),
                (b"webhook-allowed-rate", rate.encode()),
            ],
        )

    def _schedule(self, callback: str, rate: str) -> None:
        if len(self._callbacks) >= 8:
            return  # a flood of handshakes must not become a flood of GETs
        task = asyncio.get_running_loop().create_task(self.confirm(callback, rate))
        self._callbacks.add(task)
        task.add_done_callback(self._callbacks.discard)

    # -- delivery (webhook spec §2, §3) -------------------------------------

    def _authorized(self, scope: Scope, headers: Mapping[str, str]) -> str | None:
        """How the token came ("header" or "query"), or None when it is
        missing, wrong, or sent more than once: RFC 6750 §2, which the
        webhook spec's §3 follows, lets a client use one method per request,
        so a query token beside an Authorization header, or two query
        tokens, are refused whatever they hold."""
        query = scope.get("query_string", b"").decode("latin-1")
        in_query = urllib.parse.parse_qs(query, keep_blank_values=True).get(
            "access_token", []
        )
        header = headers.get("authorization")
        if header is not None:
            scheme, _, credentials = header.partition(" ")
            if in_query or scheme.lower() != "bearer":
                return None
            return "header" if self._known(credentials.strip()) else None
        if len(in_query) == 1 and self._known(in_query[0]):
            return "query"
        return None

    def _known(self, token: str) -> bool:
        given = token.encode("utf-8")
        found = False
        for known in self.tokens:
            found |= hmac.compare_digest(given, known)
        return found

    async def _post(
        self, scope: Scope, headers: Mapping[str, str], receive: Receive, send: Send
    ) -> None:
        extra: list[tuple[bytes, bytes]] = []
        via = None
        if self.tokens:
            via = self._authorized(scope, headers)
            if via is None:
                error = "invalid_token" if "authorization" in headers else None
                challenge = 'Bearer realm="webhook"'
                if error:
                    challenge += f', error="{error}"'
                detail = "a valid bearer token is required (Authorization: Bearer ...)"
                await _respond(
                    send,
                    401,
                    [(b"www-authenticate", challenge.encode()), *_PROBLEM],
                    problem(401, "Unauthorized", detail),
                )
                return
            if via == "query":
                extra.append((b"cache-control", b"private"))  # webhook spec §3.2
        if self._limit is not None:
            peer = peer_of(scope)
            origin = headers.get("webhook-request-origin", "").strip()
            wait = self._limit.retry_after(peer, origin.lower())
            if wait:
                detail = (
                    f"more than {self.rate} deliveries per minute from {origin!r} "
                    f"at {peer}"
                )
                await _respond(
                    send,
                    429,
                    [(b"retry-after", str(wait).encode()), *_PROBLEM],
                    problem(429, "Too Many Requests", detail),
                )
                return
        try:
            mode = mode_of(headers)
        except Unsupported as error:
            await _drain(receive)
            await _respond(
                send, 415, _PROBLEM, problem(415, "Unsupported Media Type", str(error))
            )
            return
        limit = self.max_batch_size if mode == "batch" else self.max_event_size
        try:  # a client trickling its body must not hold the server forever
            body = await self._within(_read(headers, receive, limit))
        except TimeoutError:
            detail = f"the request body did not arrive within {self.read_timeout} s"
            await _respond(send, 408, _PROBLEM, problem(408, "Request Timeout", detail))
            return
        if body is None:
            detail = f"the request body is larger than {limit} bytes"
            await _respond(
                send, 413, _PROBLEM, problem(413, "Content Too Large", detail)
            )
            return
        try:
            if mode == "binary":
                check_binary_body(headers, body)
            if len(body) > self.max_event_size:
                # A large batch is CPU work for a while: off the event loop,
                # which keeps answering other requests meanwhile (issue 30).
                judged = await asyncio.to_thread(self._judged, headers, body, via)
            else:
                judged = self._judged(headers, body, via)
        except Unsupported as error:
            await _respond(
                send, 415, _PROBLEM, problem(415, "Unsupported Media Type", str(error))
            )
            return
        invalid = sum(1 for item in judged if not item.valid)
        if invalid or not judged:
            errors, omitted = _details(judged)
            count = f"{invalid} of {len(judged)} event(s)"
            detail = f"{count} invalid; nothing was accepted"
            if not judged:
                detail = "the batch holds no event"
            members: dict[str, Any] = {"errors": errors}
            if omitted:
                detail += (
                    f"; the first {len(errors)} problems are listed, "
                    f"{omitted} more omitted"
                )
                members["omitted"] = omitted
            await _respond(
                send,
                400,
                _PROBLEM,
                problem(400, "Bad Request", detail, **members),
            )
            return
        if self.dispatch is not None:
            try:
                await self.dispatch(judged)
            except Exception as error:  # noqa: BLE001 - the handler's bug is the answer
                detail = f"the handler failed: {type(error).__name__}"
                await _respond(
                    send, 500, _PROBLEM, problem(500, "Internal Server Error", detail)
                )
                return
        await _respond(send, 204, extra)


def _details(judged: Sequence[Judged]) -> tuple[list[dict[str, Any]], int]:
    """The first ``MAX_DETAILS`` diagnostics of a delivery (pointer and message
    cut at ``MAX_TEXT`` characters) and the number of the others: an answer
    of bounded size, however many events and problems the delivery holds."""
    errors: list[dict[str, Any]] = []
    omitted = 0
    for item in judged:
        omitted += item.omitted
        for finding in item.findings:
            if len(errors) >= MAX_DETAILS:
                omitted += 1
                continue
            diagnostic = item.diagnostic(finding)
            for name in ("id", "pointer", "message"):
                if isinstance(diagnostic[name], str):
                    diagnostic[name] = _cut(diagnostic[name])
            errors.append(diagnostic)
    return errors, omitted


async def _read(
    headers: Mapping[str, str], receive: Receive, limit: int
) -> bytes | None:
    """The request body, or None (and the rest discarded) when it exceeds ``limit``."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return b""
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


async def _drain(receive: Receive) -> None:
    more = True
    while more:
        message = await receive()
        more = message["type"] == "http.request" and message.get("more_body", False)


async def _respond(
    send: Send, status: int, headers: Sequence[tuple[bytes, bytes]], body: bytes = b""
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
