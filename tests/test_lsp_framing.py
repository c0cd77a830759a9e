"""`evcat lsp` over a raw stdio pipe (issue 30): what a client that breaks the
base protocol's framing, or talks on after ``shutdown``, gets. Each failed
before its fix:

- a message whose Content-Length is longer (or shorter) than its body is
  dropped, and the server reads on from the next ``Content-Length`` header
  (before: it never answered again);
- after ``shutdown`` a request gets the error InvalidRequest (LSP 3.17,
  "Shutdown Request"; before: no answer at all), and ``exit`` ends the
  process with 0.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT

INVALID_REQUEST = -32600  # JSON-RPC 2.0 §5.1


class RawClient:
    """``evcat lsp`` as a subprocess, spoken to byte by byte."""

    def __init__(self, folder: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "generator", "lsp"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()
        self.folder = folder

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
                if line == b"\r\n" and length is not None:
                    break
            self.messages.put(json.loads(stream.read(length)))

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    @staticmethod
    def frame(message: dict[str, Any], declared: int | None = None) -> bytes:
        body = json.dumps(message).encode()
        return f"Content-Length: {len(body) if declared is None else declared}\r\n\r\n".encode() + body

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(self.frame(message))

    def answer(self, request_id: int, timeout: float = 20.0) -> dict[str, Any]:
        """The response to ``request_id`` (notifications and requests from the server skipped)."""
        while True:
            try:
                message = self.messages.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(
                    f"no answer to request {request_id} within {timeout} s; stderr:\n"
                    + b"".join(self.stderr[-30:]).decode(errors="replace")
                ) from None
            if message.get("id") == request_id and "method" not in message:
                return message

    def initialize(self) -> None:
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"processId": os.getpid(), "rootUri": self.folder.as_uri(), "capabilities": {}}})
        assert "result" in self.answer(1)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def symbols(self, request_id: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": request_id, "method": "textDocument/documentSymbol",
                "params": {"textDocument": {"uri": (self.folder / "catalog.yaml").as_uri()}}}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[RawClient]:
    (tmp_path / "catalog.yaml").write_text("catalog: x\n", encoding="utf-8")
    raw = RawClient(tmp_path)
    try:
        raw.initialize()
        yield raw
    finally:
        if raw.process.poll() is None:
            raw.process.kill()
        raw.process.wait(10)


def test_a_body_shorter_than_its_content_length_is_dropped_and_reading_resumes(client: RawClient) -> None:
    """The declared length reaches into the next message: the broken message
    is dropped (logged on stderr), the next one, whose header was read as
    part of the broken body, is answered, and so is every later one."""
    broken = client.frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}, declared=80)
    client.send_raw(broken + client.frame(client.symbols(2)))
    assert "result" in client.answer(2)
    client.send(client.symbols(3))
    assert "result" in client.answer(3)
    assert b"Content-Length" in b"".join(client.stderr)  # said what it dropped


def test_a_declared_length_beyond_all_that_was_sent_does_not_hang_the_next_request(client: RawClient) -> None:
    """The declared length is longer than the broken body and the whole next
    request together, and the client waits for that answer: the server, seeing
    the bytes stop after a whole JSON value and a header, drops the broken
    message and answers the request."""
    broken = client.frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}, declared=2000)
    client.send_raw(broken + client.frame(client.symbols(2)))
    assert "result" in client.answer(2)
    client.send(client.symbols(3))
    assert "result" in client.answer(3)


def test_a_body_longer_than_its_content_length_is_dropped_and_reading_resumes(client: RawClient) -> None:
    """The declared length ends inside the body: the rest of it runs into the
    next header line, which is still found."""
    broken = client.frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}, declared=20)
    client.send_raw(broken + client.frame(client.symbols(2)))
    assert "result" in client.answer(2)
    client.send(client.symbols(3))
    assert "result" in client.answer(3)


def test_a_body_that_is_no_json_is_dropped(client: RawClient) -> None:
    client.send_raw(b"Content-Length: 9\r\n\r\nnot json!" + client.frame(client.symbols(2)))
    assert "result" in client.answer(2)


def test_requests_after_shutdown_get_invalid_request_and_exit_ends_the_process(client: RawClient) -> None:
    client.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    assert client.answer(2) == {"jsonrpc": "2.0", "id": 2, "result": None}
    client.send(client.symbols(3))
    error = client.answer(3)["error"]
    assert error["code"] == INVALID_REQUEST and "shut" in error["message"].lower(), error
    client.send({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})  # again: also a request after shutdown
    assert client.answer(4)["error"]["code"] == INVALID_REQUEST
    client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {}})  # a notification: dropped
    client.send({"jsonrpc": "2.0", "method": "exit"})
    assert client.process.wait(10) == 0


def test_exit_without_shutdown_ends_the_process_with_1(client: RawClient) -> None:
    client.send({"jsonrpc": "2.0", "method": "exit"})
    assert client.process.wait(10) == 1
