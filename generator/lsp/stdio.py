"""The LSP base protocol over standard input and output, read robustly.

pygls reads a message as ``Content-Length: N`` header lines, an empty line,
then exactly N bytes. When a client gets N wrong, the next header is read as
part of a body, or a body's tail as part of a header line, and pygls never
finds a header again: the server lives on but never answers (issue 30).

Here a message whose body is not JSON is dropped with a line on standard
error, and reading resynchronises on the next ``Content-Length:`` header:
inside the dropped bytes (the declared length reached into the next message,
whose start is read again) or at the end of a header line (the body's tail
ran into it). When a declared length is longer than everything sent so far
and the bytes stop coming for ``STALL`` seconds after a whole JSON value and
a header, the client is waiting for an answer to that next message: the
broken one is dropped and the next one read. A header name is matched
without regard to case (LSP base protocol, "Header Part", follows HTTP's
header fields; RFC 9110 §5.1). Anything else of the loop is pygls's
``run_async``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

_HEADER = re.compile(rb"content-length:[ \t]*(\d+)[ \t]*\r?\n$", re.IGNORECASE)
_START = re.compile(rb"content-length:", re.IGNORECASE)
MAX_BODY = 256 * 1024 * 1024  # a declared length beyond this is no message
_LOG = logging.getLogger(__name__)


class Resync:
    """Standard input read in whatever pieces arrive (``read1`` in a worker
    thread), with a buffer that bytes can be put back into (``unread``)."""

    def __init__(self, stdin: BinaryIO, executor: Any = None) -> None:
        self.stdin = stdin
        self.executor = executor
        self.buffer = b""
        self.eof = False
        self._reading: asyncio.Future[bytes] | None = None

    def unread(self, data: bytes) -> None:
        self.buffer = data + self.buffer

    async def fill(self, timeout: float | None = None) -> bool:
        """More bytes into the buffer; False at the end of input or when none
        came within ``timeout`` seconds (the read goes on in the background)."""
        if self.eof:
            return False
        if self._reading is None:
            loop = asyncio.get_running_loop()
            self._reading = loop.run_in_executor(self.executor, self.stdin.read1, 65536)  # type: ignore[attr-defined]
        done, _ = await asyncio.wait({self._reading}, timeout=timeout)
        if not done:
            return False
        data, self._reading = self._reading.result(), None
        if not data:
            self.eof = True
            return False
        self.buffer += data
        return True

    async def readline(self) -> bytes:
        while b"\n" not in self.buffer and await self.fill():
            pass
        line, newline, self.buffer = self.buffer.partition(b"\n")
        return line + newline

    async def body(self, n: int) -> bytes | None:
        """``n`` bytes; or None when they stop coming (``STALL`` seconds) while
        the bytes so far are a whole JSON value followed by a header: the
        declared length was too long, and the next message is waiting."""
        while len(self.buffer) < n:
            if await self.fill(STALL):
                continue
            if self.eof:
                break
            if _next_header(self.buffer) is not None:
                return None
            await self.fill()  # nothing to resynchronise on: wait for more
        taken, self.buffer = self.buffer[:n], self.buffer[n:]
        return taken


STALL = 1.0  # seconds a body may pause before a header inside it is believed


def _next_header(data: bytes) -> int | None:
    """Where a ``Content-Length`` header starts in ``data`` after a whole JSON
    value (a body whose declared length was too long), else None."""
    start = _START.search(data, 1)
    if start is None:
        return None
    try:
        json.loads(data[: start.start()])
    except ValueError:
        return None
    return start.start()


async def read_messages(
    stop_event: threading.Event,
    reader: Resync,
    protocol: Any,
    error_handler: Any = None,
) -> None:
    """pygls's ``run_async``, resynchronising after a broken message."""
    content_length = 0
    while not stop_event.is_set():
        header = await reader.readline()
        if not header:
            break
        match = _HEADER.search(header)
        if match:  # the last header wins; one glued to a broken body is found too
            content_length = int(match.group(1))
            if content_length > MAX_BODY:
                _dropped(f"a declared Content-Length of {content_length} bytes")
                content_length = 0
            continue
        if not content_length or header.strip():
            continue
        declared, content_length = content_length, 0
        body = await reader.body(declared)
        if body is None:  # stalled with the next message inside
            start = _next_header(reader.buffer)
            assert start is not None
            reader.buffer = reader.buffer[start:]
            _dropped(f"a message shorter than its Content-Length ({declared} bytes)")
            continue
        if not body:
            break
        try:
            try:
                message = json.loads(body, object_hook=protocol.structure_message)
            except ValueError as error:  # not JSON (nor UTF-8): the framing broke
                start = _START.search(body, 1)
                if start is not None:  # the next message began inside: read it again
                    reader.unread(body[start.start() :])
                _dropped(f"a message whose body is not JSON of its Content-Length ({error})")
                continue
            protocol.handle_message(message)
        except Exception as error:  # noqa: BLE001 - as pygls: report, go on
            _LOG.exception("Unable to handle message")
            if error_handler:
                error_handler(error, JsonRpcException)


def _dropped(what: str) -> None:
    print(f"evcat lsp: dropped {what}; reading on from the next Content-Length header", file=sys.stderr, flush=True)


def start_io(server: LanguageServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """pygls's ``start_io`` (asynchronous form) with ``read_messages``."""
    server._stop_event = stop_event = threading.Event()
    reader = Resync(stdin or sys.stdin.buffer, server.thread_pool)
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    try:
        asyncio.run(read_messages(stop_event, reader, server.protocol, server.report_server_error))
    except BrokenPipeError:
        _LOG.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
