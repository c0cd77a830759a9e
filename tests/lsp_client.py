"""A real LSP client (pygls) that drives ``evcat lsp`` over stdio: used by
tests/test_lsp.py and bench/lsp_bench.py."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

ROOT = Path(__file__).resolve().parent.parent


class CatalogClient(LanguageClient):
    def __init__(self) -> None:
        super().__init__("evcat-test-client", "1")
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        # (arrival time, uri, diagnostics) of every publishDiagnostics.
        self.published: list[tuple[float, str, list[types.Diagnostic]]] = []
        self._arrived = asyncio.Event()
        self.versions: dict[str, int] = {}
        # The document version the last publishDiagnostics of each URI was for.
        self.checked_versions: dict[str, int | None] = {}
        self.stderr: list[str] = []
        self.registrations: list[types.Registration] = []

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _publish(client: CatalogClient, params: types.PublishDiagnosticsParams) -> None:
            client.diagnostics[params.uri] = list(params.diagnostics)
            client.checked_versions[params.uri] = params.version
            client.published.append((time.perf_counter(), params.uri, list(params.diagnostics)))
            client._arrived.set()

        @self.feature(types.CLIENT_REGISTER_CAPABILITY)
        def _register(client: CatalogClient, params: types.RegistrationParams) -> None:
            client.registrations.extend(params.registrations)
            client._arrived.set()

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def _log(client: CatalogClient, params: types.LogMessageParams) -> None:
            pass

    async def start(self, folder: Path, *more: Path, encodings: list[str] | None = None) -> None:
        """Start the server with ``folder`` (and ``more``) as workspace folders;
        ``encodings``: the position encodings the client offers, preferred first."""
        await self.start_io(sys.executable, "-m", "generator", "lsp", cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert self._server is not None and self._server.stderr is not None
        self._drain = asyncio.create_task(self._read_stderr(self._server.stderr))
        await self.initialize_async(
            types.InitializeParams(
                process_id=os.getpid(),
                root_uri=uri(folder),
                capabilities=types.ClientCapabilities(
                    general=types.GeneralClientCapabilities(position_encodings=encodings) if encodings else None,
                    workspace=types.WorkspaceClientCapabilities(
                        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
                    ),
                ),
                workspace_folders=[types.WorkspaceFolder(uri=uri(each), name=each.name) for each in (folder, *more)],
            )
        )
        self.initialized(types.InitializedParams())

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        """Keep what the server writes to stderr (read, so a full pipe never blocks it)."""
        while line := await stream.readline():
            self.stderr.append(line.decode("utf-8", errors="replace"))

    async def wait_for(self, predicate, timeout: float = 30.0) -> None:
        """Until ``predicate()`` holds (checked after every publishDiagnostics)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            self._arrived.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the expected diagnostics were not published; server stderr:\n" + "".join(self.stderr[-50:]))
            try:
                await asyncio.wait_for(self._arrived.wait(), min(remaining, 0.2))
            except asyncio.TimeoutError:
                pass

    def open(self, path: Path, text: str | None = None) -> str:
        document_uri = uri(path)
        self.versions[document_uri] = 1
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=document_uri, language_id="yaml", version=1, text=path.read_text() if text is None else text)
            )
        )
        return document_uri

    def replace(self, document_uri: str, text: str) -> None:
        """Send the whole new text (a full-document change)."""
        self.versions[document_uri] += 1
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=document_uri, version=self.versions[document_uri]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def edit(self, document_uri: str, range_: types.Range, text: str) -> None:
        """An incremental change, as editors send while typing."""
        self.versions[document_uri] += 1
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=document_uri, version=self.versions[document_uri]),
                content_changes=[types.TextDocumentContentChangePartial(range=range_, text=text)],
            )
        )

    async def close(self) -> None:
        await self.shutdown_async(None)
        self.exit(None)
        if self._server is not None:
            await asyncio.wait_for(self._server.wait(), 10)
        await self.stop()


def uri(path: Path) -> str:
    return from_fs_path(str(Path(path).resolve()))
