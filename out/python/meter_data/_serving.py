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
import importlib
from collections.abc import Iterable
from typing import Any

__all__ = [
    "HEADER_TIMEOUT",
    "config",
    "header_deadline",
    "run",
]  # and HTTPProtocol (__getattr__)

HEADER_TIMEOUT = 10.0  # seconds for a request's headers to arrive whole
_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 45\r\n\r\n"
    b"the request headers did not arrive in time.\r\n"
)


def _uvicorn(module: str = "uvicorn") -> Any:
    """uvicorn (the extra ``webhook``), imported when a server is made: the
    package imports, and type-checks, without it."""
    return importlib.import_module(module)


def header_deadline(seconds: float) -> type[Any]:
    """uvicorn's h11 protocol, closing a connection whose request headers are
    not whole ``seconds`` after it opened (or after the previous response)."""
    base: Any = _uvicorn("uvicorn.protocols.http.h11_impl").H11Protocol

    class HeaderDeadline(base):  # type: ignore[misc]  # pyright: ignore[reportUntypedBaseClass]
        _deadline: asyncio.TimerHandle | None = None
        _waiting_cycle: Any = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            base.connection_made(self, transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            base.data_received(self, data)
            self._headers_arrived()

        def on_response_complete(self) -> None:
            self._arm()  # the next request on this connection: the same deadline
            base.on_response_complete(self)
            self._headers_arrived()  # a pipelined request may be read already

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            base.connection_lost(self, exc)

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


_PROTOCOLS: dict[float, type[Any]] = {}


def _protocol(seconds: float) -> type[Any]:
    if seconds not in _PROTOCOLS:
        _PROTOCOLS[seconds] = header_deadline(seconds)
    return _PROTOCOLS[seconds]


def __getattr__(name: str) -> Any:
    """``HTTPProtocol``, for uvicorn's command line, made on first use."""
    if name == "HTTPProtocol":
        return _protocol(HEADER_TIMEOUT)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def config(
    app: Any,
    *,
    trusted_proxies: Iterable[str] = (),
    header_timeout: float = HEADER_TIMEOUT,
    **options: Any,
) -> Any:
    """A ``uvicorn.Config`` for ``app`` with the header deadline and with
    ``X-Forwarded-For``/``-Proto`` taken only from ``trusted_proxies``
    (addresses or networks; none by default). ``options`` go to uvicorn."""
    proxies = [proxy.strip() for proxy in trusted_proxies if proxy.strip()]
    return _uvicorn().Config(
        app,
        http=_protocol(header_timeout),
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
    server = _uvicorn().Server(
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
