"""The sending side of CloudEvents webhooks: a well-behaved sender (contract 6.2).

Sources: CloudEvents "HTTP 1.1 Web Hooks for Event Delivery" (webhook spec)
§2.1 delivery request, §2.2 responses (no redirects followed; 410 stops;
429 + Retry-After observed), §3.1 bearer token, §4.1 validation handshake
(WebHook-Request-Origin / -Rate; WebHook-Allowed-Origin / -Rate);
NL GOV webhook guideline §3.1.1-§3.2.

The policy is written once, as a generator of actions (send this request,
sleep that long); a synchronous and an asynchronous driver carry it out with
httpx, so ``deliver`` and ``deliver_async`` cannot drift apart. The clock,
the sleep and the random jitter are parameters: tests need not wait.
"""

from __future__ import annotations

import asyncio
import email.utils
import importlib
import random
import socket
import time
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "BACKOFF_BASE",
    "BACKOFF_MAX",
    "DEFAULT_REQUEST_RATE",
    "DEFAULT_RETRIES",
    "MAX_RETRY_AFTER",
    "TIMEOUT",
    "Action",
    "AsyncClient",
    "Client",
    "DeliveryResult",
    "Outgoing",
    "Plan",
    "Policy",
    "Reply",
    "Request",
    "Response",
    "Sleep",
    "plan",
    "prepare",
    "retry_after",
    "run",
    "run_async",
]

DEFAULT_RETRIES = 5
# Asked for in the handshake when no rate is given (requests per minute).
DEFAULT_REQUEST_RATE = 600
MAX_RETRY_AFTER = 120.0  # seconds: a longer Retry-After is cut to this
BACKOFF_BASE = 0.5  # seconds before the first retry, doubled each time
BACKOFF_MAX = 30.0
TIMEOUT = 30.0


@dataclass(frozen=True)
class Outgoing:
    """One HTTP request: the events it carries (positions in the input) and its bytes."""

    positions: tuple[int, ...]
    headers: Mapping[str, str]
    body: bytes


@dataclass
class DeliveryResult:
    """The outcome for one event: its id and the final HTTP status (None: not sent
    or never answered), the number of attempts and why it failed."""

    id: str
    status: int | None = None
    attempts: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes = b""


@dataclass(frozen=True)
class Reply:
    status: int | None  # None: a connection error (``error`` says which)
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    error: str | None = None


@dataclass(frozen=True)
class Sleep:
    seconds: float


Action = Request | Sleep
Plan = Generator[Action, Reply | None, None]


@dataclass
class Policy:
    """How to send: the knobs of ``deliver``."""

    token: str | None = None
    origin: str | None = None
    handshake: bool = True
    rate: int | None = None
    retries: int = DEFAULT_RETRIES
    max_retry_after: float = MAX_RETRY_AFTER
    clock: Callable[[], float] = time.monotonic
    jitter: Callable[[], float] = random.random


def retry_after(value: str | None, limit: float) -> float | None:
    """Seconds of a Retry-After header (delay-seconds or HTTP-date), at most ``limit``."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), limit)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(0.0, when.timestamp() - time.time()), limit)


def _allowed_rate(value: str | None, requested: int) -> float | None:
    """Seconds between requests the target allows (None: no limit)."""
    if value is None:
        value = str(requested)  # §4.2.2: absent, the requested rate stands
    value = value.strip()
    if value == "*":
        return None
    if value.isdigit() and int(value) > 0:
        return 60.0 / int(value)
    return 60.0 / requested


def plan(
    url: str,
    outgoing: Sequence[Outgoing],
    results: list[DeliveryResult],
    policy: Policy,
) -> Plan:
    """The actions of one delivery run; fills ``results`` in place."""
    origin = policy.origin or socket.gethostname()
    common: dict[str, str] = {}
    if policy.token:
        common["authorization"] = f"Bearer {policy.token}"
    if policy.origin or policy.handshake:
        common["webhook-request-origin"] = origin
    interval = 60.0 / policy.rate if policy.rate else None
    if policy.handshake:
        requested = policy.rate or DEFAULT_REQUEST_RATE
        reply = yield Request(
            "OPTIONS",
            url,
            {"webhook-request-origin": origin, "webhook-request-rate": str(requested)},
        )
        assert reply is not None
        refusal = _refusal(reply, origin)
        if refusal is not None:
            for request in outgoing:
                for position in request.positions:
                    results[position].error = f"not sent: {refusal}"
            return
        interval = _allowed_rate(reply.headers.get("webhook-allowed-rate"), requested)
    last: float | None = None
    for number, request in enumerate(outgoing):
        attempts = 0
        while True:
            if interval is not None and last is not None:
                wait = last + interval - policy.clock()
                if wait > 0:
                    yield Sleep(wait)
            last = policy.clock()
            attempts += 1
            headers = {**common, **request.headers}
            reply = yield Request("POST", url, headers, request.body)
            assert reply is not None
            for position in request.positions:
                result = results[position]
                result.status, result.attempts, result.error = (
                    reply.status,
                    attempts,
                    reply.error,
                )
            delay = _retry_delay(reply, attempts, policy)
            if delay is None:
                break
            yield Sleep(delay)
        if reply.status == 410:  # §2.2: the target is retired
            for later in outgoing[number + 1 :]:
                for position in later.positions:
                    results[position].error = "not sent: the target answered 410 Gone"
            return


def _refusal(reply: Reply, origin: str) -> str | None:
    if reply.status is None:
        return f"the handshake failed ({reply.error})"
    allowed = reply.headers.get("webhook-allowed-origin")
    if not 200 <= reply.status < 300 or allowed is None:
        return f"the target did not grant the handshake (HTTP {reply.status})"
    if allowed.strip() not in ("*", origin):
        return f"the target allows origin {allowed!r}, not {origin!r}"
    return None


def _retry_delay(reply: Reply, attempts: int, policy: Policy) -> float | None:
    """Seconds to wait before the next attempt, or None when done."""
    status = reply.status
    if attempts > policy.retries:
        return None
    if status is not None and status not in (429, 503) and status < 500:
        return None  # accepted, or a client error: retrying cannot help
    backoff: float = min(BACKOFF_MAX, BACKOFF_BASE * 2.0 ** (attempts - 1))
    backoff = backoff / 2 + backoff / 2 * policy.jitter()  # "equal jitter"
    if status in (429, 503):
        given = retry_after(reply.headers.get("retry-after"), policy.max_retry_after)
        if given is not None:
            return given
    return backoff


# httpx is imported when a client is made, never at the module's top: the
# package type-checks (mypy --strict, pyright strict) with only pydantic
# installed, and these types are what the drivers need of httpx's, so
# ``httpx.Client``, ``httpx.AsyncClient`` and their responses fit.


class Response(Protocol):
    """What the drivers read of a response (httpx's ``Response``)."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...


class Client(Protocol):
    """What ``run`` needs of a client (``httpx.Client``)."""

    def request(
        self, method: str, url: str, *, content: bytes, headers: Mapping[str, str]
    ) -> Response: ...

    def close(self) -> None: ...


class AsyncClient(Protocol):
    """What ``run_async`` needs of a client (``httpx.AsyncClient``)."""

    async def request(
        self, method: str, url: str, *, content: bytes, headers: Mapping[str, str]
    ) -> Response: ...

    async def aclose(self) -> None: ...


def _httpx() -> Any:
    return importlib.import_module("httpx")


def _reply(response: Response) -> Reply:
    headers = {key.lower(): value for key, value in response.headers.items()}
    return Reply(response.status_code, headers)


def run(
    url: str,
    outgoing: Sequence[Outgoing],
    results: list[DeliveryResult],
    policy: Policy,
    *,
    client: Client | None = None,
    sleep: Callable[[float], Any] = time.sleep,
) -> list[DeliveryResult]:
    """Carry out the plan with a synchronous httpx client."""
    httpx = _httpx()
    own = client is None
    http: Client = client or httpx.Client(timeout=TIMEOUT, follow_redirects=False)
    try:
        steps = plan(url, outgoing, results, policy)
        reply: Reply | None = None
        while True:
            try:
                action = steps.send(reply)
            except StopIteration:
                return results
            reply = None
            if isinstance(action, Sleep):
                sleep(action.seconds)
                continue
            try:
                response = http.request(
                    action.method,
                    action.url,
                    headers=action.headers,
                    content=action.body,
                )
                reply = _reply(response)
            except httpx.HTTPError as error:
                reply = Reply(None, error=f"{type(error).__name__}: {error}")
    finally:
        if own:
            http.close()


async def run_async(
    url: str,
    outgoing: Sequence[Outgoing],
    results: list[DeliveryResult],
    policy: Policy,
    *,
    client: AsyncClient | None = None,
    sleep: Callable[[float], Any] = asyncio.sleep,
) -> list[DeliveryResult]:
    """Carry out the plan with an asynchronous httpx client."""
    httpx = _httpx()
    own = client is None
    http: AsyncClient = client or httpx.AsyncClient(
        timeout=TIMEOUT, follow_redirects=False
    )
    try:
        steps = plan(url, outgoing, results, policy)
        reply: Reply | None = None
        while True:
            try:
                action = steps.send(reply)
            except StopIteration:
                return results
            reply = None
            if isinstance(action, Sleep):
                await sleep(action.seconds)
                continue
            try:
                response = await http.request(
                    action.method,
                    action.url,
                    headers=action.headers,
                    content=action.body,
                )
                reply = _reply(response)
            except httpx.HTTPError as error:
                reply = Reply(None, error=f"{type(error).__name__}: {error}")
    finally:
        if own:
            await http.aclose()


def prepare(
    events: Iterable[Any],
    mode: str,
    *,
    check: Callable[[Any], str | None],
    to_http: Callable[[Any, Any], tuple[dict[str, str], bytes]],
    to_http_batch: Callable[[list[Any]], tuple[dict[str, str], bytes]],
) -> tuple[list[Outgoing], list[DeliveryResult]]:
    """The requests for ``events`` in ``mode``, and one result per event.

    ``check`` names what is wrong with an event (None: valid): an invalid
    event is never sent (its result says why). Batch mode sends the valid
    events in one request.
    """
    if mode not in ("structured", "binary", "batch"):
        raise ValueError(f"mode must be structured, binary or batch, not {mode!r}")
    results: list[DeliveryResult] = []
    valid: list[tuple[int, Any]] = []
    for position, event in enumerate(events):
        results.append(DeliveryResult(str(getattr(event, "id", "") or "")))
        problem = check(event)
        if problem is None:
            valid.append((position, event))
        else:
            results[-1].error = f"not sent: invalid event: {problem}"
    if mode == "batch":
        if not valid:
            return [], results
        headers, body = to_http_batch([event for _, event in valid])
        positions = tuple(position for position, _ in valid)
        return [Outgoing(positions, headers, body)], results
    outgoing: list[Outgoing] = []
    for position, event in valid:
        headers, body = to_http(event, mode)
        outgoing.append(Outgoing((position,), headers, body))
    return outgoing, results
