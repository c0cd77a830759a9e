"""Benchmark the webhook runtime against bare peers measured in the same run.

1. Receiving: events per second accepted by the generated ``webhook.Receiver``
   (parsing, validation and dispatch to an async handler included) under
   uvicorn with 2 workers, against a bare ASGI app that only reads the body and
   answers 204, same server and settings, same client: a small keep-alive
   HTTP/1.1 load generator on asyncio streams (so the client is not the
   bottleneck), CONCURRENCY connections, structured-mode events.
   Target (issue 17): at least 0.7x.
2. Sending: the generated ``delivery.deliver`` (validation, encoding, the
   retry/rate policy, no handshake) to the bare app, against a plain httpx
   loop posting the same bodies with one ``httpx.Client``. Target: at least 0.7x.

Receiving is measured in short paired rounds, the two apps back to back (in
alternating order); the verdict is the median of the rounds' ratios, so a
busy or a quiet moment of a shared machine falls on both sides of a ratio
rather than on one app's best round. The best rate of each app is shown too,
and the servers' CPU time per event (from /proc, Linux), which other programs
on the machine hardly change. Sending: interleaved rounds, best of each.
Usage: python bench/webhook_bench.py [--requests 2000] [--deliveries 1500] [--rounds 10]
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

from generator.generate import render  # noqa: E402
from generator.lint import lint  # noqa: E402

CATALOG = ROOT / "catalog" / "nlgov"
CONCURRENCY = 32

APP = '''
from brp_personen import CloudEvent
from brp_personen.webhook import Receiver

receiver = Receiver()
handled = 0


@receiver.on(CloudEvent)
async def count(event):
    global handled
    handled += 1


async def bare(scope, receive, send):
    """Reads the body, answers 204: the floor of any ASGI webhook."""
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
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 204, "headers": [(b"content-length", b"0")]})
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


def cpu_seconds(process: subprocess.Popen) -> float | None:
    """CPU time (user + system) of a server and its worker processes, or None
    where /proc cannot tell (not Linux)."""
    try:
        pids = [process.pid]
        for task in Path(f"/proc/{process.pid}/task").iterdir():
            pids += [int(pid) for pid in (task / "children").read_text().split()]
        total = 0
        for pid in pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
        return total / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


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
    arguments = parser.parse_args()

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
        rates = {name: 0.0 for name in running}
        cpu: dict[str, float | None] = {name: 0.0 for name in running}
        ratios = []
        try:
            for name, (_, port) in running.items():
                load(port, warm)
            for round_ in range(arguments.rounds):
                order = list(running) if round_ % 2 == 0 else list(reversed(running))
                measured = {}
                for name in order:
                    process, port = running[name]
                    before = cpu_seconds(process)
                    rate, statuses = load(port, bodies)
                    after = cpu_seconds(process)
                    if set(statuses) != {204}:
                        raise SystemExit(f"{name}: unexpected statuses {sorted(set(statuses))}")
                    measured[name] = rate
                    rates[name] = max(rates[name], rate)
                    spent = cpu[name]
                    cpu[name] = None if spent is None or before is None or after is None else spent + after - before
                ratios.append(measured["receiver"] / measured["bare"])
        finally:
            for process, _ in running.values():
                stop(process)
        for name, rate in rates.items():
            spent = cpu[name]
            per_event = "" if spent is None else f"   server CPU {spent / (len(bodies) * arguments.rounds) * 1e6:5.0f} µs/event"
            print(f"  {name:9} {rate:9,.0f} events/s (best round){per_event}")
        receiving = statistics.median(ratios)
        print(f"  rounds: {' '.join(f'{ratio:.2f}' for ratio in ratios)}")
        print(f"  Receiver / bare ASGI app: {receiving:.2f}x, median of the rounds (target >= 0.7x)")

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

            plain = ours = 0.0
            for _ in range(arguments.rounds):
                start_time = time.perf_counter()
                with httpx.Client() as client:
                    for headers, body in prepared:
                        assert client.post(url, headers=headers, content=body).status_code == 204
                plain = max(plain, len(prepared) / (time.perf_counter() - start_time))

                start_time = time.perf_counter()
                results = brp_personen.delivery.deliver(url, events_out, handshake=False)
                ours = max(ours, len(events_out) / (time.perf_counter() - start_time))
                assert all(result.status == 204 for result in results)
        finally:
            stop(process)
        print(f"  plain httpx loop {plain:9,.0f} events/s")
        print(f"  deliver()        {ours:9,.0f} events/s")
        sending = ours / plain
        print(f"  deliver / plain httpx loop: {sending:.2f}x (target >= 0.7x)")
        return 0 if receiving >= 0.7 and sending >= 0.7 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
