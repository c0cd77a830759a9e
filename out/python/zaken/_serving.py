"""Serving a webhook under uvicorn with the limits a public endpoint needs.

``evcat serve`` runs this way, and so can a generated package's receiver
(``receiver.run(...)``; the extra ``webhook`` installs uvicorn):

- **A deadline for the request headers** (``header_timeout``, default
  ``HEADER_TIMEOUT`` seconds from the connection, or from the end of the
  previous response on a kept-alive one). uvicorn has none: its keep-alive
  timer is armed only after a response and cancelled by every byte
  received, so a client sending its headers a byte at a time (slowloris)
  holds a connection open forever. Past the deadline the connection gets
  ``408`` and is closed. The body has its own limit in ``WebhookApp``
  (``read_timeout``).
- **No forwarding headers trusted** unless ``trusted_proxies`` names the
  proxies: uvicorn by default takes ``X-Forwarded-For`` from 127.0.0.1 as
  the client address, so a local client could choose the address the rate
  limits count by.

``HTTPProtocol`` is uvicorn's h11 protocol with the header deadline, for the
command line: ``uvicorn app:receiver --http <package>._serving:HTTPProtocol
--no-proxy-headers``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEADER_TIMEOUT", "HTTPProtocol", "config", "header_deadline", "run"]

HEADER_TIMEOUT = 10.0  # seconds for a request's headers to arrive whole
_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 45\r\n\r\n"
    b"the request headers did not arrive in time.\r\n"
)


def header_deadline(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request headers are
    not whole ``seconds`` after it opened (or after the previous response)."""

    class HeaderDeadline(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _waiting_cycle: Any = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._headers_arrived()

        def on_response_complete(self) -> None:
            self._arm()  # the next request on this connection: the same deadline
            super().on_response_complete()
            self._headers_arrived()  # a pipelined request may be read already

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._waiting_cycle = self.cycle
            self._deadline = self.loop.call_later(seconds, self._too_late)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _headers_arrived(self) -> None:
            # uvicorn starts a new request-response cycle at the end of headers.
            if self._deadline is not None and self.cycle is not self._waiting_cycle:
                self._disarm()

        def _too_late(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.write(_TIMED_OUT)
                self.transport.close()

    HeaderDeadline.__name__ = HeaderDeadline.__qualname__ = "HTTPProtocol"
    return HeaderDeadline


HTTPProtocol = header_deadline(HEADER_TIMEOUT)


def config(
    app: Any,
    *,
    trusted_proxies: Iterable[str] = (),
    header_timeout: float = HEADER_TIMEOUT,
    **options: Any,
) -> uvicorn.Config:
    """A ``uvicorn.Config`` for ``app`` with the header deadline and with
    ``X-Forwarded-For``/``-Proto`` taken only from ``trusted_proxies``
    (addresses or networks; none by default). ``options`` go to uvicorn."""
    proxies = [proxy.strip() for proxy in trusted_proxies if proxy.strip()]
    http = HTTPProtocol if header_timeout == HEADER_TIMEOUT else None
    return uvicorn.Config(
        app,
        http=http or header_deadline(header_timeout),
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or None,
        **options,
    )


def run(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    trusted_proxies: Iterable[str] = (),
    header_timeout: float = HEADER_TIMEOUT,
    **options: Any,
) -> None:
    """Serve ``app`` under uvicorn until Ctrl-C (see ``config``); ``options``
    go to ``uvicorn.Config`` (``ssl_keyfile``, ``ssl_certfile``, ...)."""
    server = uvicorn.Server(
        config(
            app,
            trusted_proxies=trusted_proxies,
            header_timeout=header_timeout,
            host=host,
            port=port,
            **options,
        )
    )
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn stopped gracefully, then raised it again
        pass
