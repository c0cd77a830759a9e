"""The webhook app's read timeout (contract 6.1: a trickling body gets 408): one
watchdog task per app and event loop rather than a timer per request (the
per-request cost of ``asyncio.timeout`` was a tenth of the Receiver's).
In process, over the ASGI interface.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from generator.runtime._webhook import WebhookApp

SCOPE = {"type": "http", "method": "POST", "path": "/", "query_string": b"",
         "headers": [(b"content-type", b"application/cloudevents+json")]}


async def _post(app: WebhookApp, receive: Any) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(app(dict(SCOPE), receive, send), timeout=5)
    return sent


async def _never() -> dict[str, Any]:
    await asyncio.sleep(3600)
    raise AssertionError("unreachable")


async def _at_once() -> dict[str, Any]:
    return {"type": "http.request", "body": b"{}", "more_body": False}


def test_each_event_loop_gets_its_watchdog() -> None:
    app = WebhookApp(lambda headers, body: [], read_timeout=0.2)
    for _ in range(2):  # the same app under two loops one after the other
        sent = asyncio.run(_post(app, _never))
        assert sent[0]["status"] == 408


def test_late_and_timely_requests_side_by_side() -> None:
    app = WebhookApp(lambda headers, body: [], read_timeout=0.3)

    async def both() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        late = asyncio.create_task(_post(app, _never))
        await asyncio.sleep(0.1)
        timely = await _post(app, _at_once)  # judged (no event: 400), not timed out
        return await late, timely

    late, timely = asyncio.run(both())
    assert late[0]["status"] == 408
    assert timely[0]["status"] == 400


def test_the_watchdog_ends_when_no_body_is_awaited() -> None:
    app = WebhookApp(lambda headers, body: [], read_timeout=0.2)

    async def run() -> None:
        await _post(app, _at_once)
        assert not app._reading
        await asyncio.sleep(0.2)  # a step (read_timeout / 4) and more
        assert app._watchdog is None

    asyncio.run(run())


def test_a_cancelled_request_stays_cancelled() -> None:
    """Someone else's cancellation (the server closing) is no 408."""
    app = WebhookApp(lambda headers, body: [], read_timeout=0.2)
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        task = asyncio.create_task(app(dict(SCOPE), _never, send))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not app._reading and not app._late

    asyncio.run(run())
    assert sent == []
