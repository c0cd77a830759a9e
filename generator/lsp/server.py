"""``evcat lsp``: the Language Server Protocol server (contract §8), on pygls.

Each workspace folder is a catalog directory (``folder.Folder``), checked as
``evcat lint <folder>`` checks it with the editor's buffers in place of the
files. After every change the whole directory's diagnostics are worked out
again (cheap: only the changed buffer is parsed again and the costly checks
are memoised) and published for every file whose diagnostics changed.
"""

from __future__ import annotations

import asyncio
import gc
import os
from typing import Any

import yaml
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from ..model.build import REF as _REF
from ..diagnostics import Diagnostic, Severity
from .allow import allow_here
from .complete import key_documentation, key_items, ref_items, value_items
from .folder import Folder, catalog_directory
from .symbols import file_symbols
from .text import code_point_column, contains, key_path, key_under, location_range, overlaps, quoted_like, ref_at, ref_prefix


# Between two files read at start: long enough for the stream's reader to
# take a whole message of several reads (it runs while the loop waits).
_READ_PAUSE = 0.002
# Quiet time after a check before one more file's positions are found
# (``Folder.place_next``): a keystroke meanwhile is checked first.
_PLACE_PAUSE = 0.01


class CatalogProtocol(LanguageServerProtocol):
    """pygls's protocol, answering requests after ``shutdown`` as LSP 3.17
    ("Shutdown Request") says: "If a server receives requests after a
    shutdown request those requests should error with InvalidRequest" (pygls
    drops them, and the client waits forever). Notifications other than
    ``exit`` are dropped."""

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if self._shutdown and method is not None and method != types.EXIT and hasattr(message, "id"):
            error = JsonRpcInvalidRequest(f"the server is shut down: {method} is not served; send exit")
            self._send_response(message.id, error=error.to_response_error())
            return
        super().handle_message(message)


class CatalogServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("evcat", __version__, protocol_cls=CatalogProtocol)
        self.folders: dict[str, Folder] = {}  # by catalog directory
        self.workspace_roots: dict[str, str] = {}  # workspace folder -> its catalog directory
        # What was last published, by URI (published again only when it changes).
        self.published: dict[str, list[types.Diagnostic]] = {}
        self.dirty: set[str] = set()  # folder roots with changes not yet checked
        self.reading: set[str] = set()  # folder roots whose files are still being read
        self.tasks: set[asyncio.Task[None]] = set()
        self.flush_scheduled = False
        self.placing: asyncio.TimerHandle | None = None  # the next ``place_next``
        self.shut_down = False

    @property
    def encoding(self) -> str:
        """The position encoding agreed with the client (LSP 3.17; UTF-16 by default)."""
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or "utf-16")

    # -- folders and files -------------------------------------------------

    def start_folders(self, roots: list[str], workspace: bool = True, later: bool = False) -> None:
        """Read each root's catalog directory (``catalog_directory``);
        ``later``: file by file on the event loop (``read_folder``), so a
        file opened meanwhile hears its own findings at once."""
        for root in roots:
            if not os.path.isdir(root):
                continue
            root = os.path.abspath(root)
            directory = catalog_directory(root) if workspace else root
            if workspace:
                self.workspace_roots[root] = directory
            if directory not in self.folders:
                if later:
                    self.folders[directory] = Folder.start(directory)
                    self.reading.add(directory)
                    task = asyncio.get_running_loop().create_task(self.read_folder(directory))
                    self.tasks.add(task)  # the loop keeps only a weak reference
                    task.add_done_callback(self.tasks.discard)
                else:
                    self.folders[directory] = Folder.open(directory)
                self.dirty.add(directory)

    async def read_folder(self, directory: str) -> None:
        """Read the folder's files one by one, then check it."""
        folder = self.folders[directory]
        try:
            while folder.pending:
                folder.read_next()
                # Messages that came meanwhile are read and handled (a didOpen
                # of a large file comes in several reads of the stream).
                await asyncio.sleep(_READ_PAUSE)
        finally:
            self.reading.discard(directory)
        if self.folders.get(directory) is folder:
            self.changed(folder)

    def publish_own(self, folder: Folder, display: str) -> None:
        """While the folder is being read: the file's findings that need no
        other file (``Folder.own_findings``); the whole check follows."""
        uri = self.uri(folder, display)
        diagnostics = folder.own_findings(display)
        lines = folder.lines(display) if diagnostics else []
        converted = [_lsp_diagnostic(d, lines, self, folder) for d in diagnostics]
        self.published[uri] = converted
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=converted, version=self._version(uri))
        )

    def folder_of(self, uri: str) -> tuple[Folder, str] | None:
        """The folder that holds ``uri`` (the innermost one) and the file's name in it."""
        path = to_fs_path(uri)
        if path is None:
            return None
        path = os.path.abspath(path)
        holders = [folder for folder in self.folders.values() if folder.holds(path)]
        if not holders:
            if not path.endswith((".yaml", ".yml")) or any(
                path.startswith(root + os.sep) for root in self.workspace_roots
            ):
                return None  # not a catalog file, or YAML of a workspace beside its catalog directory
            # A catalog file outside every workspace folder: its directory is the catalog.
            self.start_folders([os.path.dirname(path)], workspace=False)
            holders = [self.folders[os.path.dirname(path)]]
        folder = max(holders, key=lambda f: len(f.root))
        return folder, folder.display(path)

    def uri(self, folder: Folder, display: str) -> str:
        return from_fs_path(folder.path(display)) or display

    def changed(self, folder: Folder) -> None:
        self.dirty.add(folder.root)
        if self.flush_scheduled:
            return
        self.flush_scheduled = True
        try:
            asyncio.get_running_loop().call_soon(self.flush)
        except RuntimeError:  # no loop (not served over a stream): check now
            self.flush()

    def flush(self) -> None:
        """Check every folder with changes; publish what changed."""
        self.flush_scheduled = False
        waiting = self.dirty & self.reading  # checked once read (read_folder)
        self.dirty -= waiting
        while self.dirty:
            folder = self.folders[self.dirty.pop()]
            before, touched = folder.by_file, folder.touched
            folder.touched = set()
            by_file = folder.check()
            for display, diagnostics in by_file.items():
                uri = self.uri(folder, display)
                if display not in touched and uri in self.published and before.get(display) == diagnostics:
                    continue  # same findings in an unchanged file: nothing to convert or send
                lines = folder.lines(display) if diagnostics else []
                converted = [_lsp_diagnostic(d, lines, self, folder) for d in diagnostics]
                # The file opened, changed or saved always hears back; others when theirs change.
                if display in touched or self.published.get(uri) != converted:
                    self.published[uri] = converted
                    version = self._version(uri)
                    self.text_document_publish_diagnostics(
                        types.PublishDiagnosticsParams(uri=uri, diagnostics=converted, version=version)
                    )
            for uri in [u for u in self.published if _in(u, folder) and not self._known(folder, u)]:
                del self.published[uri]  # a deleted file: clear what it showed
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.dirty |= waiting
        # The parsed directory is millions of long-lived objects without
        # cycles: out of the collector's sight, a collection no longer
        # rescans them after every keystroke (they are still freed by
        # reference counting when replaced).
        gc.freeze()
        self.place_later()

    def place_later(self) -> None:
        """Find positions while nothing else is to be done (``place_next``)."""
        if self.placing is not None or self.shut_down:
            return
        try:
            self.placing = asyncio.get_running_loop().call_later(_PLACE_PAUSE, self.place_next)
        except RuntimeError:  # no loop (not served over a stream): found when asked for
            pass

    def place_next(self) -> None:
        """One file's positions (``Folder.place_next``), then the next after a pause."""
        self.placing = None
        if self.flush_scheduled or self.dirty or self.reading or self.shut_down:
            return  # the check comes first; it calls place_later again
        collecting = gc.isenabled()
        gc.disable()  # positions make no cycles (as Folder.check)
        try:
            placed = any(folder.place_next() for folder in list(self.folders.values()))
        finally:
            if collecting:
                gc.enable()
        gc.freeze()
        if placed:
            self.place_later()

    def _known(self, folder: Folder, uri: str) -> bool:
        path = to_fs_path(uri)
        return path is not None and folder.display(path) in folder.documents

    def _version(self, uri: str) -> int | None:
        document = self.workspace.text_documents.get(uri)
        return document.version if document is not None else None

    def evcat_diagnostics(self, uri: str) -> tuple[Folder, str, list[Diagnostic]] | None:
        found = self.folder_of(uri)
        if found is None:
            return None
        folder, display = found
        return folder, display, folder.by_file.get(display, [])


server = CatalogServer()


def _in(uri: str, folder: Folder) -> bool:
    path = to_fs_path(uri)
    return path is not None and os.path.abspath(path).startswith(folder.root + os.sep)


def _lsp_diagnostic(diagnostic: Diagnostic, lines: list[str], ls: CatalogServer, folder: Folder) -> types.Diagnostic:
    related = [
        types.DiagnosticRelatedInformation(
            types.Location(ls.uri(folder, other.file), location_range(other, folder.lines(other.file), ls.encoding)),
            "also here",
        )
        for other in diagnostic.related
    ]
    return types.Diagnostic(
        range=location_range(diagnostic.location, lines, ls.encoding),
        message=diagnostic.message,
        severity=types.DiagnosticSeverity.Error
        if diagnostic.severity is Severity.ERROR
        else types.DiagnosticSeverity.Warning,
        code=diagnostic.rule,
        source="evcat",
        related_information=related or None,
        data={"suggestion": diagnostic.suggestion} if diagnostic.suggestion else None,
    )


# -- lifecycle and text synchronisation --------------------------------------


@server.feature(types.INITIALIZED)
def initialized(ls: CatalogServer, params: types.InitializedParams) -> None:
    roots = [to_fs_path(folder.uri) for folder in ls.workspace.folders.values()]
    if not roots and ls.workspace.root_path:
        roots = [ls.workspace.root_path]
    try:
        asyncio.get_running_loop()
        later = True
    except RuntimeError:  # no loop (not served over a stream): read and check now
        later = False
    ls.start_folders([root for root in roots if root], later=later)
    ls.flush()
    watched = ls.client_capabilities.workspace.did_change_watched_files if ls.client_capabilities.workspace else None
    if watched is not None and watched.dynamic_registration:
        # Files changed outside the editor (git checkout, another tool) count too.
        ls.client_register_capability(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id="evcat-catalog-files",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=[types.FileSystemWatcher(glob_pattern="**/*.{yaml,yml}")]
                        ),
                    )
                ]
            )
        )


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def folders_changed(ls: CatalogServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    for removed in params.event.removed:
        root = to_fs_path(removed.uri)
        directory = ls.workspace_roots.pop(os.path.abspath(root), None) if root else None
        if directory is not None and directory in ls.folders and directory not in ls.workspace_roots.values():
            folder = ls.folders.pop(directory)
            for uri in [u for u in ls.published if _in(u, folder)]:
                del ls.published[uri]
                ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    ls.start_folders([root for added in params.event.added if (root := to_fs_path(added.uri))])
    ls.flush()


def _buffer_changed(ls: CatalogServer, uri: str) -> None:
    found = ls.folder_of(uri)
    if found is None:
        return
    folder, display = found
    folder.set_buffer(display, ls.workspace.get_text_document(uri).source)
    if folder.root in ls.reading:
        ls.publish_own(folder, display)
    ls.changed(folder)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: CatalogServer, params: types.DidOpenTextDocumentParams) -> None:
    _buffer_changed(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: CatalogServer, params: types.DidChangeTextDocumentParams) -> None:
    _buffer_changed(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: CatalogServer, params: types.DidSaveTextDocumentParams) -> None:
    _buffer_changed(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: CatalogServer, params: types.DidCloseTextDocumentParams) -> None:
    found = ls.folder_of(params.text_document.uri)
    if found is not None:
        folder, display = found
        folder.close_buffer(display)
        ls.changed(folder)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def files_changed(ls: CatalogServer, params: types.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        found = ls.folder_of(change.uri)
        if found is not None:
            folder, display = found
            folder.reload(display)
            ls.changed(folder)


# -- quick fixes ---------------------------------------------------------------


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
)
def code_action(ls: CatalogServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    found = ls.evcat_diagnostics(params.text_document.uri)
    if found is None:
        return []
    folder, display, diagnostics = found
    lines = folder.text(display).split("\n")
    document = folder.documents.get(display)
    actions: list[types.CodeAction] = []
    allowed: list[types.CodeAction] = []
    allow_edits: list[types.TextEdit] = []
    for diagnostic in diagnostics:
        published = _lsp_diagnostic(diagnostic, lines, ls, folder)
        if not overlaps(published.range, params.range):
            continue
        if diagnostic.suggestion:
            edit = _fix(diagnostic, published.range, lines, ls.encoding)
            actions.append(
                types.CodeAction(
                    title=f"{diagnostic.rule}: {edit[1]}",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[published],
                    is_preferred=True,
                    edit=types.WorkspaceEdit(changes={params.text_document.uri: [edit[0]]}),
                )
            )
        # Beside the fix: keep the finding and turn its rule off where it stands (catalog-format.md §9).
        allow = allow_here(diagnostic, document, lines, ls.encoding) if document is not None else None
        if allow is not None and allow[0] not in allow_edits:  # one per rule and node
            allow_edits.append(allow[0])
            allowed.append(
                types.CodeAction(
                    title=allow[1],
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[published],
                    is_preferred=False,
                    edit=types.WorkspaceEdit(changes={params.text_document.uri: [allow[0]]}),
                )
            )
    return actions + allowed


def _fix(diagnostic: Diagnostic, range_: types.Range, lines: list[str], encoding: str) -> tuple[types.TextEdit, str]:
    """The edit that applies ``diagnostic.suggestion``: it replaces the
    offending token, keeping its quotes; a missing key is inserted."""
    suggestion = diagnostic.suggestion or ""
    line = lines[range_.start.line] if range_.start.line < len(lines) else ""
    if diagnostic.rule == "CAT-REQUIRED":  # the missing key goes on a line of its own
        key = "dataversion" if "dataversion" in diagnostic.message else "key"
        indent = len(line) - len(line.lstrip(" -"))
        at = types.Position(range_.start.line + 1, 0)
        return types.TextEdit(types.Range(at, at), f"{' ' * indent}{key}: {suggestion}\n"), f"add {key}: {suggestion}"
    start = code_point_column(line, range_.start.character, encoding)
    end = code_point_column(line, range_.end.character, encoding)
    replacement = quoted_like(line[start:end], suggestion)
    return types.TextEdit(range_, replacement), f"change to {replacement}"


# -- $ref: definition and hover ------------------------------------------------


def _ref_target(ls: CatalogServer, uri: str, position: types.Position) -> tuple[Folder, str, str, Any] | None:
    """(folder, file, schema name, schema) that the ``$ref`` under the cursor names."""
    found = ls.folder_of(uri)
    if found is None:
        return None
    folder, display = found
    lines = folder.text(display).split("\n")
    if position.line >= len(lines):
        return None
    line = lines[position.line]
    ref = ref_at(line, code_point_column(line, position.character, ls.encoding))
    match = _REF.match(ref.ref) if ref else None
    if match is None:
        return None
    target = display
    if match["file"]:
        base = os.path.dirname(folder.path(display))
        target = folder.display(os.path.normpath(os.path.join(base, match["file"])))
    document = folder.documents.get(target)
    name = match["name"].replace("~1", "/").replace("~0", "~")
    schemas = document.value.get("schemas") if document is not None and isinstance(document.value, dict) else None
    if not isinstance(schemas, dict) or name not in schemas:
        return None
    return folder, target, name, schemas[name]


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: CatalogServer, params: types.DefinitionParams) -> types.Location | None:
    target = _ref_target(ls, params.text_document.uri, params.position)
    if target is None:
        return None
    folder, display, name, _ = target
    location = folder.documents[display].key_loc(("schemas", name))
    return types.Location(ls.uri(folder, display), location_range(location, folder.text(display).split("\n"), ls.encoding))


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: CatalogServer, params: types.HoverParams) -> types.Hover | None:
    parts: list[str] = []
    target = _ref_target(ls, params.text_document.uri, params.position)
    if target is not None:
        _, display, name, schema = target
        body = yaml.safe_dump(schema, sort_keys=False, allow_unicode=True, width=100).rstrip()
        parts.append(f"**{name}** ({display})\n\n```yaml\n{body}\n```")
    found = ls.evcat_diagnostics(params.text_document.uri)
    if found is not None:
        from ..rules import RULES, rule_source

        folder, display, diagnostics = found
        lines = folder.text(display).split("\n")
        for diagnostic in diagnostics:
            if contains(location_range(diagnostic.location, lines, ls.encoding), params.position) and diagnostic.rule in RULES:
                rule = RULES[diagnostic.rule]
                text = f"**{rule.id}** ({diagnostic.severity}): {rule.summary}\n\nSource: {rule_source(rule.id)}"
                if diagnostic.suggestion:
                    text += f"\n\nSuggestion: `{diagnostic.suggestion}`"
                if text not in parts:
                    parts.append(text)
    found_file = ls.folder_of(params.text_document.uri)
    if found_file is not None and not parts:
        folder, display = found_file
        lines = folder.text(display).split("\n")
        if params.position.line < len(lines):
            line = lines[params.position.line]
            column = code_point_column(line, params.position.character, ls.encoding)
            key = key_under(line, column)
            if key is not None:
                path, _ = key_path(lines, params.position.line, len(line) - len(line.lstrip(" -")))
                documentation = key_documentation(path, key)
                if documentation is not None:
                    parts.append(documentation)
    if not parts:
        return None
    return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts)))


# -- completion ---------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["#", "/", ":", " "]))
def completion(ls: CatalogServer, params: types.CompletionParams) -> types.CompletionList:
    found = ls.folder_of(params.text_document.uri)
    items: list[types.CompletionItem] = []
    if found is not None:
        folder, display = found
        lines = folder.text(display).split("\n")
        row = params.position.line
        line = lines[row] if row < len(lines) else ""
        column = code_point_column(line, params.position.character, ls.encoding)
        typed_ref = ref_prefix(line, column)
        if typed_ref is not None:
            items = ref_items(folder, display)
        else:
            path, at_key = key_path(lines, row, column)
            items = key_items(path) if at_key else value_items(path)
    return types.CompletionList(is_incomplete=False, items=items)


# -- symbols ------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def document_symbol(ls: CatalogServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
    found = ls.folder_of(params.text_document.uri)
    if found is None:
        return []
    folder, display = found
    document = folder.documents.get(display)
    if document is None:
        return []
    return file_symbols(document, folder.text(display).split("\n"), ls.encoding)


@server.feature(types.SHUTDOWN)
def shutdown(ls: CatalogServer, params: None) -> None:
    ls.shut_down = True


def run() -> int:
    """Serve over standard input and output until the client says exit; exit
    0 after a ``shutdown`` request, 1 otherwise (LSP's ``exit``). pygls has
    closed standard output by then: the process ends here. Messages are read
    by ``stdio.start_io``, which survives a wrong Content-Length."""
    from .stdio import start_io

    start_io(server)
    os._exit(0 if server.shut_down else 1)
