"""The LSP base protocol over standard input and output, read robustly.

pygls reads a message as ``Content-Length: N`` header lines, an empty line,
then exactly N bytes. When a client gets N wrong, the next header is read as
part of a body, or a body's tail as part of a header line, and pygls never
finds a header again: the server lives on but never answers (issue 30).

Here a message whose body is not JSON is dropped with a line on standard
error, and reading resynchronises on the next ``Content-Length:`` header:
inside the dropped bytes (the declared length reached into the next message,
whose start is read again) or at the end of a header line (the body's tail
ran into it). A header name is matched without regard to case (LSP base
protocol, "Header Part", follows HTTP's header fields; RFC 9110 §5.1).
Anything else of the loop is pygls's ``run_async``.
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
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer

_HEADER = re.compile(rb"content-length:[ \t]*(\d+)[ \t]*\r?\n$", re.IGNORECASE)
_START = re.compile(rb"content-length:", re.IGNORECASE)
MAX_BODY = 256 * 1024 * 1024  # a declared length beyond this is no message
_LOG = logging.getLogger(__name__)


class Resync:
    """A reader with a buffer of bytes to read again (``unread``)."""

    def __init__(self, reader: StdinAsyncReader) -> None:
        self.reader = reader
        self.pending = b""

    def unread(self, data: bytes) -> None:
        self.pending = data + self.pending

    async def readline(self) -> bytes:
        if self.pending:
            line, newline, rest = self.pending.partition(b"\n")
            if newline:
                self.pending = rest
                return line + newline
            self.pending = b""
            return line + await self.reader.readline()
        return await self.reader.readline()

    async def readexactly(self, n: int) -> bytes:
        taken, self.pending = self.pending[:n], self.pending[n:]
        while len(taken) < n:
            more = await self.reader.readexactly(n - len(taken))
            if not more:
                break
            taken += more
        return taken


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
        body = await reader.readexactly(content_length)
        content_length = 0
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
    reader = Resync(StdinAsyncReader(stdin or sys.stdin.buffer, server.thread_pool))
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    try:
        asyncio.run(read_messages(stop_event, reader, server.protocol, server.report_server_error))
    except BrokenPipeError:
        _LOG.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
