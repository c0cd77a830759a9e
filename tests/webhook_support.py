"""Real servers on 127.0.0.1 for the webhook tests: `evcat serve`, the generated
Receiver under uvicorn, and small scripted HTTP servers written with the
standard library (a receiver that answers what a test tells it to)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from generator.commands.generate import render
from generator.commands.lint import lint

from .conftest import ROOT

CATALOG = ROOT / "catalog" / "nlgov"
BRP = CATALOG / "brp-personen.yaml"
TOKEN = "s3cr3t-t0ken"
ORIGIN = "producer.example.nl"


def generate_packages(root: Path) -> Path:
    """The Python packages of the shipped NL GOV catalog, written under ``root``."""
    for relative, content in render(lint(str(CATALOG)).catalog_set, ["python"])["python"].items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root / "python"


@contextlib.contextmanager
def importable_packages(tmp: Path) -> Iterator[Path]:
    """The shipped NL GOV catalog's packages generated under ``tmp``, importable
    meanwhile (then forgotten: another module's fixture makes its own)."""
    root = generate_packages(tmp)
    sys.path.insert(0, str(root))
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.split(".")[0] in ("zaken", "brp_personen")]:
            del sys.modules[name]


def examples(catalog: Path = BRP) -> list[dict[str, Any]]:
    """Whole example events of ``catalog`` (valid by CAT-EXAMPLE), with unique ids."""
    found = []
    for event in lint(str(catalog)).catalog_set.events:
        for example in event.examples:
            value = event.complete_example(example.values)
            value["id"] = f"ex-{len(found)}"
            found.append(value)
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port} after {timeout} s")


@dataclass
class Server:
    """A server subprocess; ``stdout`` is the file its standard output goes to."""

    process: subprocess.Popen[Any]
    url: str
    stdout: Path
    stderr: Path

    def lines(self) -> list[dict[str, Any]]:
        text = self.stdout.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        return self.process.returncode


def start_evcat_serve(tmp: Path, *arguments: str, catalog: Path = CATALOG) -> Server:
    stdout, stderr = tmp / "serve.out", tmp / "serve.err"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, "-m", "generator", "serve", str(catalog), "--port", "0", "--no-cache", *arguments],
        cwd=ROOT, env=env, stdout=stdout.open("wb"), stderr=stderr.open("wb"),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = stderr.read_text(encoding="utf-8", errors="replace")
        if "serving on http://" in text:
            url = text.split("serving on ", 1)[1].split()[0]
            port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
            wait_for_port(port, process)
            return Server(process, url, stdout, stderr)
        if process.poll() is not None:
            raise AssertionError(f"evcat serve exited with {process.returncode}: {text}")
        time.sleep(0.05)
    process.kill()
    raise AssertionError("evcat serve did not start")


APP = '''
import importlib, json, os

package = os.environ.get("WH_PACKAGE", "brp_personen")
CloudEvent = importlib.import_module(package).CloudEvent
Receiver = importlib.import_module(package + ".webhook").Receiver

tokens = [t for t in os.environ.get("WH_TOKENS", "").split(",") if t]
origins = [o for o in os.environ.get("WH_ORIGINS", "*").split(",") if o]
rate = int(os.environ["WH_RATE"]) if os.environ.get("WH_RATE") else None
receiver = Receiver(tokens=tokens, allowed_origins=origins, rate=rate,
                    allow_private_callbacks=os.environ.get("WH_PRIVATE") == "1")
LOG = os.environ["WH_LOG"]


@receiver.on(CloudEvent)
def record(event):
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps({"id": event.id, "type": event.event_type, "class": type(event).__name__}) + "\\n")


@receiver.on(CloudEvent)
async def explode(event):
    if event.id.startswith("boom"):
        raise RuntimeError("the handler failed on purpose")
'''


def start_receiver(tmp: Path, packages: Path, *, tokens: str = "", origins: str = "*", rate: str = "",
                   package: str = "brp_personen", allow_private: bool = False, run: bool = False,
                   hardened: bool = False) -> Server:
    """The generated ``brp_personen.webhook.Receiver`` under uvicorn (as a user runs it):
    ``uvicorn wh_app:receiver``; with ``hardened`` the flags the README gives for
    the command line (the package's header deadline, no forwarding headers);
    with ``run`` the receiver's own ``receiver.run(...)``."""
    app_dir = tmp / "app"
    app_dir.mkdir(exist_ok=True)
    (app_dir / "wh_app.py").write_text(APP, encoding="utf-8")
    log, stderr = tmp / "handled.jsonl", tmp / "uvicorn.err"
    log.touch()
    port = free_port()
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(app_dir), str(packages)]),
        WH_TOKENS=tokens, WH_ORIGINS=origins, WH_RATE=rate, WH_LOG=str(log),
        WH_PACKAGE=package, WH_PRIVATE="1" if allow_private else "0",
    )
    command = [sys.executable, "-m", "uvicorn", "wh_app:receiver", "--host", "127.0.0.1", "--port", str(port),
               "--log-level", "warning"]
    if hardened:
        command += ["--no-proxy-headers", "--http", f"{package}._serving:HTTPProtocol"]
    if run:
        command = [sys.executable, "-c", f"import wh_app; wh_app.receiver.run('127.0.0.1', {port}, log_level='warning')"]
    process = subprocess.Popen(
        command,
        cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=stderr.open("wb"),
    )
    wait_for_port(port, process)
    return Server(process, f"http://127.0.0.1:{port}/", log, stderr)


# -- scripted receivers (in this process, in a thread) -----------------------------


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Scripted:
    """Answers OPTIONS with ``options`` and each POST with the next of ``posts``
    (then ``default``); records every request."""

    options: tuple[int, dict[str, str]] = (200, {"WebHook-Allowed-Origin": "*", "WebHook-Allowed-Rate": "*"})
    posts: deque[tuple[int, dict[str, str]]] = field(default_factory=deque)
    default: tuple[int, dict[str, str]] = (204, {})
    seen: list[Seen] = field(default_factory=list)
    url: str = ""
    server: ThreadingHTTPServer | None = None

    def posted(self) -> list[Seen]:
        return [request for request in self.seen if request.method == "POST"]

    def __enter__(self) -> Scripted:
        script = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                script.seen.append(Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                                        body, time.monotonic()))
                if self.command == "OPTIONS":
                    status, headers = script.options
                elif self.command == "POST":
                    status, headers = script.posts.popleft() if script.posts else script.default
                else:
                    status, headers = script.default
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", "0")
                self.end_headers()

            do_GET = do_POST = do_OPTIONS = do_PUT = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()
