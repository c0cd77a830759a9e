"""A batch of invalid events against both webhook judges (issue 30).

Sends one ``application/cloudevents-batch+json`` body of about 4 MiB holding
``--events`` invalid events (each with several problems) to `evcat serve`
and to the generated ``webhook.Receiver`` under uvicorn, both real servers
on 127.0.0.1, and measures per judge:

- the time until the answer to the batch (target: within 2 s) and the size
  of that answer (target: at most 1 MiB);
- the latency of one valid event posted on another connection while the
  batch is being judged (target: within 1 s: the event loop is not blocked).

The floor, measured in the same run: a bare ASGI app under the same uvicorn
that reads the body, ``json.loads`` it and answers 400 (what any judge must
do before it can judge anything: receive 4 MiB through uvicorn's HTTP parser
and parse the JSON); the batch times are shown as a ratio to it, paired round
by round.

Usage: python bench/batch_bench.py [--events 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import httpx

from tests.webhook_support import (
    examples,
    free_port,
    generate_packages,
    start_evcat_serve,
    start_receiver,
    wait_for_port,
)

BATCH = {"content-type": "application/cloudevents-batch+json"}
STRUCTURED = {"content-type": "application/cloudevents+json"}


def invalid_batch(count: int) -> bytes:
    """``count`` invalid events, several problems each, in one batch body."""
    items = [
        {"specversion": "1.0", "type": "nl.brp.naamgebruik-gewijzigd.v2", "dataversion": "2.0.0",
         "id": number, "source": "", "time": "yesterday",
         "data": {"persoon": {"burgerservicenummer": 1}, "aanduidingNaamgebruik": "Q", "x": 1}}
        for number in range(count)
    ]
    return json.dumps(items, separators=(",", ":")).encode()


def attack(url: str, body: bytes, valid: bytes) -> dict[str, float]:
    """Post ``body``; 0.3 s later post ``valid`` on another connection."""
    result: dict[str, float] = {}

    def batch() -> None:
        started = time.perf_counter()
        with httpx.Client(timeout=120) as http:
            response = http.post(url, headers=BATCH, content=body)
        result["batch_s"] = time.perf_counter() - started
        result["batch_status"] = response.status_code
        result["answer_bytes"] = len(response.content)

    thread = threading.Thread(target=batch)
    thread.start()
    time.sleep(0.3)
    started = time.perf_counter()
    with httpx.Client(timeout=120) as http:
        response = http.post(url, headers=STRUCTURED, content=valid)
    result["valid_s"] = time.perf_counter() - started
    result["valid_status"] = response.status_code
    thread.join()
    return result


BARE = '''
import json


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    chunks, more = [], True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    status = 400 if isinstance(json.loads(b"".join(chunks)), list) else 204
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})
'''


def start_bare(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    (directory / "bare_app.py").write_text(BARE, encoding="utf-8")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "bare_app:app", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "warning"],
        cwd=directory, env=dict(os.environ, PYTHONPATH=str(directory)),
    )
    wait_for_port(port, process)
    return process, f"http://127.0.0.1:{port}/"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    body = invalid_batch(arguments.events)
    valid = json.dumps(examples()[0]).encode()
    print(f"batch: {arguments.events} invalid events, {len(body):,} bytes, {arguments.rounds} paired rounds (medians)")
    with tempfile.TemporaryDirectory(prefix="evcat-batch-bench-") as directory:
        work = Path(directory)
        packages = generate_packages(work / "packages")
        (work / "serve").mkdir()
        (work / "receiver").mkdir()
        bare, bare_url = start_bare(work)
        servers = {
            "evcat serve": start_evcat_serve(work / "serve"),
            "Receiver": start_receiver(work / "receiver", packages),
        }
        try:
            floors = []
            for name, server in servers.items():
                rounds = []
                for _ in range(arguments.rounds):
                    base = attack(bare_url, body, valid)
                    measured = attack(server.url, body, valid)
                    measured["ratio"] = measured["batch_s"] / base["batch_s"]
                    rounds.append(measured)
                    floors.append(base)
                median = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
                print(
                    f"{name:12} batch {median['batch_s']:.2f} s ({median['ratio']:.1f}x the bare app), "
                    f"status {median['batch_status']:.0f}, answer {median['answer_bytes'] / 1024:,.0f} KiB; "
                    f"concurrent valid event {median['valid_s'] * 1000:.0f} ms (status {median['valid_status']:.0f})"
                )
            median = {key: statistics.median(r[key] for r in floors) for key in floors[0]}
            print(f"{'bare app':12} batch {median['batch_s']:.2f} s (receive + json.loads); "
                  f"concurrent valid event {median['valid_s'] * 1000:.0f} ms")
        finally:
            for server in servers.values():
                server.stop()
            bare.send_signal(signal.SIGINT)
            bare.wait(15)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
