"""Benchmark the webhook runtime against bare peers measured in the same run.

1. Receiving: events per second accepted by the generated ``webhook.Receiver``
   (parsing, validation and dispatch to an async handler included) under
   uvicorn with 2 workers, against the strongest bare peer: an ASGI app that
   reads the body and parses it with orjson (the fastest JSON parser Python
   has), as any real receiver must before it can act on an event, answering
   204 for a JSON object (400 otherwise); same server and settings, same
   client: a small keep-alive HTTP/1.1 load generator on asyncio streams (so
   the client is not the bottleneck), CONCURRENCY connections,
   structured-mode events. Target (issue 17): at least 0.7x.
2. Sending: the generated ``delivery.deliver`` (validation, encoding, the
   retry/rate policy, no handshake) to the bare app, against a plain httpx
   loop posting the same bodies with one ``httpx.Client``. Target: at least 0.7x.

Both are measured in short paired rounds, the two sides back to back (in
alternating order); the verdict is the median of the rounds' ratios, shown
with their spread, so a busy or a quiet moment of a shared machine falls on
both sides of a ratio. CPU time is shown beside: for receiving, the servers'
CPU time per event (from /proc, Linux: the uvicorn process and its workers),
for sending, this process's (the client's) CPU time per event.
Usage: python bench/webhook_bench.py [--requests 2000] [--deliveries 1500] [--rounds 10] [--strict]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from generator.commands.generate import render  # noqa: E402
from generator.commands.lint import lint  # noqa: E402
import measure  # noqa: E402

CATALOG = ROOT / "catalog" / "nlgov"
CONCURRENCY = 32

APP = '''
import orjson
from brp_personen import CloudEvent
from brp_personen.webhook import Receiver

receiver = Receiver()
handled = 0


@receiver.on(CloudEvent)
async def count(event):
    global handled
    handled += 1


async def bare(scope, receive, send):
    """Reads the body and parses its JSON (orjson), answers 204: the floor of any ASGI webhook."""
    if scope["type"] != "http":
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        return
    chunks = []
    more = True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    try:
        status = 204 if isinstance(orjson.loads(b"".join(chunks)), dict) else 400
    except orjson.JSONDecodeError:
        status = 400
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})
'''


def events() -> list[dict]:
    found = []
    for event in lint(str(CATALOG / "brp-personen.yaml")).catalog_set.events:
        for example in event.examples:
            found.append(event.complete_example(example.values))
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(app: str, directory: Path, workers: int = 2) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(directory), str(directory / "python")]))
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
         "--workers", str(workers), "--log-level", "warning", "--no-access-log"],
        env=env, cwd=directory,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                time.sleep(0.5 if workers > 1 else 0)  # let every worker start accepting
                return process, port
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit(f"uvicorn {app} did not start")


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


async def _connection(port: int, requests: list[bytes], statuses: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for request in requests:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            statuses.append(int(head[9:12]))
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if length:
                await reader.readexactly(length)
    finally:
        writer.close()


def load(port: int, bodies: list[bytes], concurrency: int = CONCURRENCY) -> tuple[float, list[int]]:
    """Requests per second over ``concurrency`` keep-alive connections."""
    requests = [
        b"POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/cloudevents+json\r\n"
        + f"content-length: {len(body)}\r\n\r\n".encode() + body
        for body in bodies
    ]
    statuses: list[int] = []

    async def run() -> None:
        await asyncio.gather(*(_connection(port, requests[n::concurrency], statuses) for n in range(concurrency)))

    start_time = time.perf_counter()
    asyncio.run(run())
    return len(bodies) / (time.perf_counter() - start_time), statuses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--deliveries", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=10)
    measure.add_common_arguments(parser)
    arguments = parser.parse_args()
    measure.check_checkout()

    work = Path(tempfile.mkdtemp(prefix="evcat-webhook-bench-"))
    try:
        for relative, content in render(lint(str(CATALOG)).catalog_set, ["python"])["python"].items():
            path = work / "python" / relative.split("/", 1)[1]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        (work / "bench_app.py").write_text(APP, encoding="utf-8")
        templates = events()
        bodies = [
            json.dumps(dict(templates[n % len(templates)], id=f"evt-{n}"), separators=(",", ":")).encode()
            for n in range(arguments.requests)
        ]
        warm = bodies[: min(300, len(bodies))]

        print(f"receiving: {arguments.requests} structured-mode events, uvicorn --workers 2, {CONCURRENCY} connections,"
              f" median of {arguments.rounds} paired rounds")
        running = {name: start(f"bench_app:{name}", work) for name in ("bare", "receiver")}
        rates: dict[str, list[float]] = {name: [] for name in running}
        cpu: dict[str, list[float]] = {name: [] for name in running}  # server CPU seconds per round
        try:
            for name, (_, port) in running.items():
                load(port, warm)
            for round_ in range(arguments.rounds):
                for name in measure.alternate(round_, list(running)):
                    process, port = running[name]
                    before = measure.tree_cpu(process.pid)
                    rate, statuses = load(port, bodies)
                    cpu[name].append(measure.tree_cpu(process.pid) - before)
                    if set(statuses) != {204}:
                        raise SystemExit(f"{name}: unexpected statuses {sorted(set(statuses))}")
                    rates[name].append(rate)
        finally:
            for process, _ in running.values():
                stop(process)
        for name in running:
            print(f"  {name:9} {measure.spread(rates[name], digits=0):>24} events/s (median [min-max] of rounds)"
                  f"   server CPU {statistics.median(cpu[name]) / len(bodies) * 1e6:5.0f} µs/event")
        ratios = [receiver / bare for receiver, bare in zip(rates["receiver"], rates["bare"])]
        cpu_ratios = [bare / receiver for receiver, bare in zip(cpu["receiver"], cpu["bare"])]
        receiving = statistics.median(ratios)
        receiving_cpu = statistics.median(cpu_ratios)
        print(f"  rounds: {' '.join(f'{ratio:.2f}' for ratio in ratios)}")
        print(f"  Receiver / bare ASGI app: {measure.spread(ratios, digits=2)} events/s, "
              f"{measure.spread(cpu_ratios, digits=2)} events per server CPU second")

        sys.path.insert(0, str(work / "python"))
        import brp_personen
        import brp_personen.delivery
        import httpx

        events_out = [brp_personen.parse_event(json.loads(body)) for body in bodies[: arguments.deliveries]]
        prepared = [brp_personen.to_http(event) for event in events_out]
        print(f"sending: {len(events_out)} events one by one to the bare app (uvicorn, 1 worker)")
        process, port = start("bench_app:bare", work, workers=1)
        url = f"http://127.0.0.1:{port}/"
        try:
            with httpx.Client() as client:  # warm both paths
                for headers, body in prepared[:100]:
                    client.post(url, headers=headers, content=body)
            brp_personen.delivery.deliver(url, events_out[:100], handshake=False)

            walls: dict[str, list[float]] = {"httpx": [], "deliver": []}
            cpus: dict[str, list[float]] = {"httpx": [], "deliver": []}

            def plain_loop() -> None:
                with httpx.Client() as client:
                    for headers, body in prepared:
                        assert client.post(url, headers=headers, content=body).status_code == 204

            def delivered() -> None:
                results = brp_personen.delivery.deliver(url, events_out, handshake=False)
                assert all(result.status == 204 for result in results)

            sides = {"httpx": plain_loop, "deliver": delivered}
            for round_ in range(arguments.rounds):
                for name in measure.alternate(round_, list(sides)):
                    start_wall, start_cpu = time.perf_counter(), time.process_time()
                    sides[name]()
                    walls[name].append(time.perf_counter() - start_wall)
                    cpus[name].append(time.process_time() - start_cpu)
        finally:
            stop(process)
        for name, label in (("httpx", "plain httpx loop"), ("deliver", "deliver()")):
            print(f"  {label:17} {len(prepared) / statistics.median(walls[name]):9,.0f} events/s (median round)"
                  f"   client CPU {statistics.median(cpus[name]) / len(prepared) * 1e6:5.0f} µs/event")
        send_ratios = [plain / ours for plain, ours in zip(walls["httpx"], walls["deliver"])]
        send_cpu = [plain / ours for plain, ours in zip(cpus["httpx"], cpus["deliver"])]
        sending = statistics.median(send_ratios)
        print(f"  rounds: {' '.join(f'{ratio:.2f}' for ratio in send_ratios)}")
        print(f"  deliver / plain httpx loop: {measure.spread(send_ratios, digits=2)} wall, {measure.spread(send_cpu, digits=2)} CPU")
        targets = measure.Targets()
        targets.check("receiving: Receiver / bare ASGI app parsing JSON (median of rounds)", receiving, 0.7, "x", at_least=True,
                      note=f"events per server CPU second {receiving_cpu:.2f}x the bare app's")
        targets.check("sending: deliver / plain httpx loop (median of rounds)", sending, 0.7, "x", at_least=True,
                      note=f"client CPU {statistics.median(send_cpu):.2f}x")
        return targets.exit_code(arguments.strict)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
