"""The webhook receiver of a generated package: ``_webhook.WebhookApp`` judged by
the package's own parsing functions, dispatching to typed handlers (contract 6.3).

A handler's exception answers 500 for its delivery (the sender retries it);
the other handlers of that delivery still run, other deliveries are unaffected.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

from ._cloudevents import EventError, ValidationError, read_json
from ._webhook import (
    BATCH,
    DEFAULT_EVENT_SIZE,
    STRUCTURED,
    Details,
    Finding,
    Judged,
    WebhookApp,
    essence,
    oversized,
)

__all__ = ["EventReceiver", "Handler"]

Handler = Callable[[Any], Any]
H = TypeVar("H", bound=Callable[..., Any])


def _pointer(location: Iterable[Any]) -> str:
    return "".join(
        "/" + str(part).replace("~", "~0").replace("/", "~1") for part in location
    )


_ERROR = Finding("", "", "")  # a finding only counted, past the delivery's details


def _findings(error: Exception, left: int) -> list[Finding]:
    """Findings of the package's parse errors: pydantic's, one per error; past
    ``left`` of them counted only (no text built)."""
    if isinstance(error, ValidationError):
        if left <= 0:
            return [_ERROR] * error.error_count()
        return [
            Finding(str(item["type"]), _pointer(item["loc"]), str(item["msg"]))
            for item in error.errors(include_url=False)
        ]
    if isinstance(error, RecursionError):
        return [Finding("json", "", "nested too deeply")]
    return [Finding("event", "", str(error))]


class EventReceiver(WebhookApp):
    """A webhook target judged by a generated package's parsing functions.

    ``from_http`` and ``parse_event`` are the package's own; valid events go
    to the handlers registered with :meth:`on` for their class (or a base
    class). Async handlers run on the event loop, plain functions in a worker
    thread. A handler's exception answers 500 for its delivery; the other
    handlers of that delivery still run, and other deliveries are unaffected.
    """

    def __init__(
        self,
        *,
        from_http: Callable[[Mapping[str, str], bytes], Any],
        parse_event: Callable[[Any], Any],
        tokens: Iterable[str] = (),
        allowed_origins: Iterable[str] = ("*",),
        rate: int | None = None,
        max_event_size: int = DEFAULT_EVENT_SIZE,
        path: str | None = None,
        allow_private_callbacks: bool = False,
    ) -> None:
        self._from_http = from_http
        self._parse_event = parse_event
        self._handlers: dict[type, list[tuple[Handler, bool]]] = {}
        self._routes: dict[type, list[tuple[Handler, bool]]] = {}
        super().__init__(
            self._judge,
            dispatch=self._dispatch,
            tokens=tokens,
            allowed_origins=allowed_origins,
            rate=rate,
            path=path,
            max_event_size=max_event_size,
            allow_private_callbacks=allow_private_callbacks,
        )

    def run(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        trusted_proxies: Iterable[str] = (),
        **options: Any,
    ) -> None:
        """Serve this receiver under uvicorn (the extra ``webhook``) with a
        deadline for request headers and no forwarding headers trusted
        unless ``trusted_proxies`` names the proxies (``_serving``)."""
        from ._serving import run

        run(self, host, port, trusted_proxies=trusted_proxies, **options)

    def on(self, *classes: type) -> Callable[[H], H]:
        """Register the decorated function for events of ``classes`` (or subclasses)."""
        if not classes:
            raise TypeError("on() needs at least one event class")

        def register(handler: H) -> H:
            coroutine = inspect.iscoroutinefunction(handler)
            for cls in classes:
                self._handlers.setdefault(cls, []).append((handler, coroutine))
            self._routes.clear()
            return handler

        return register

    def _judge(self, headers: Mapping[str, str], body: bytes) -> list[Judged]:
        kind = essence(headers.get("content-type", ""))
        details = Details()
        if kind == STRUCTURED:  # what from_http does with it, without its header work
            return [self._one(0, body, details)]
        if kind == BATCH:
            try:
                items = read_json(body)
            except EventError as error:
                return [Judged(0, findings=[Finding("json", "", f"not JSON: {error}")])]
            if not isinstance(items, list):
                return [Judged(0, findings=[Finding("json", "", "not a JSON array")])]
            judged: list[Judged] = []
            for index, item in enumerate(cast("Sequence[Any]", items)):
                judged.append(self._one(index, item, details))
                size = len(
                    json.dumps(item, separators=(",", ":"), ensure_ascii=False).encode()
                )
                details.take(judged[-1], oversized(size, self.max_event_size))
            return judged
        return [self._one(0, None, details, headers, body)]

    def _one(
        self,
        index: int,
        item: Any,
        details: Details,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
    ) -> Judged:
        try:
            if headers is None:
                event = self._parse_event(item)
            else:
                event = self._from_http(headers, body)
        except (ValueError, RecursionError) as error:  # EventError, ValidationError
            judged = details.take(Judged(index), _findings(error, details.left))
            if isinstance(item, dict):  # name the event as far as it can be named
                named = cast("dict[str, Any]", item)
                for name in ("id", "type", "dataversion"):
                    if isinstance(named.get(name), str):
                        setattr(judged, name, named[name])
            return judged
        return Judged(index, event, event.id, event.event_type, event.event_dataversion)

    def _route(self, cls: type) -> list[tuple[Handler, bool]]:
        if cls not in self._routes:
            self._routes[cls] = [
                entry for base in cls.__mro__ for entry in self._handlers.get(base, [])
            ]
        return self._routes[cls]

    async def _dispatch(self, judged: list[Judged]) -> None:
        failed: BaseException | None = None
        for item in judged:
            for handler, coroutine in self._route(item.event.__class__):
                try:
                    if coroutine:
                        await handler(item.event)
                    else:
                        await asyncio.to_thread(handler, item.event)
                except Exception as error:  # noqa: BLE001 - the others still run
                    failed = failed or error
        if failed is not None:
            raise failed
