"""Contract 6.2 and 6.3: the sender, against scripted receivers on 127.0.0.1.

The generated ``delivery.deliver`` / ``deliver_async`` and `evcat send` share
one policy (runtime ``_delivery.py``); each behaviour is checked through the
package, the CLI where it prints or exits, and the policy with a fake clock
where real waiting would be long."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import deque
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from generator.runtime import _delivery
from generator.runtime._delivery import Outgoing, Policy, Reply, Request, Sleep, plan

from .conftest import run_evcat
from .webhook_support import BRP, ORIGIN, TOKEN, Scripted, examples, generate_packages


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = generate_packages(tmp_path_factory.mktemp("delivery-packages"))
    sys.path.insert(0, str(root))
    import brp_personen
    import brp_personen.delivery

    return brp_personen


def _events(package: Any, count: int = 2) -> list[Any]:
    values = examples()
    return [package.parse_event(dict(values[n % len(values)], id=f"evt-{n}")) for n in range(count)]


def test_handshake_then_structured_deliveries_with_token_and_origin(package: Any) -> None:
    with Scripted() as target:
        results = package.delivery.deliver(target.url, _events(package), token=TOKEN, origin=ORIGIN)
    assert [(r.id, r.status, r.attempts) for r in results] == [("evt-0", 204, 1), ("evt-1", 204, 1)]
    handshake, *posts = target.seen
    assert handshake.method == "OPTIONS"
    assert handshake.headers["webhook-request-origin"] == ORIGIN
    assert int(handshake.headers["webhook-request-rate"]) > 0
    assert [p.method for p in posts] == ["POST", "POST"]
    for post in posts:
        assert post.headers["authorization"] == f"Bearer {TOKEN}"
        assert post.headers["webhook-request-origin"] == ORIGIN
        assert post.headers["content-type"].startswith("application/cloudevents+json")
    assert [json.loads(p.body)["id"] for p in posts] == ["evt-0", "evt-1"]


def test_binary_and_batch_modes(package: Any) -> None:
    with Scripted() as target:
        binary = package.delivery.deliver(target.url, _events(package), mode="binary", handshake=False)
        batch = package.delivery.deliver(target.url, _events(package, 3), mode="batch", handshake=False)
    assert all(result.status == 204 for result in binary + batch) and len(batch) == 3
    first, second, whole = target.posted()
    assert first.headers["ce-id"] == "evt-0" and first.headers["ce-specversion"] == "1.0"
    assert second.headers["ce-id"] == "evt-1" and second.body == package.to_http(_events(package)[1], "binary")[1]
    assert whole.headers["content-type"].startswith("application/cloudevents-batch+json")
    assert [event["id"] for event in json.loads(whole.body)] == ["evt-0", "evt-1", "evt-2"]


def test_refused_handshake_sends_nothing(package: Any) -> None:
    with Scripted(options=(200, {})) as target:  # answers OPTIONS, grants nothing
        results = package.delivery.deliver(target.url, _events(package), origin=ORIGIN)
    assert [seen.method for seen in target.seen] == ["OPTIONS"]
    assert all(result.status is None and "handshake" in result.error for result in results)
    with Scripted(options=(200, {"WebHook-Allowed-Origin": "someone-else.example"})) as target:
        results = package.delivery.deliver(target.url, _events(package), origin=ORIGIN)
    assert target.posted() == [] and not any(result.ok for result in results)


def test_refused_handshake_in_the_cli(tmp_path: Path) -> None:
    with Scripted(options=(403, {})) as target:
        result = run_evcat("send", str(BRP), target.url, "--examples", "--origin", ORIGIN)
    assert result.returncode == 1
    assert target.posted() == []
    assert "did not grant the handshake" in result.stdout


def test_429_waits_retry_after_then_succeeds(package: Any) -> None:
    with Scripted(posts=deque([(429, {"Retry-After": "1"})])) as target:
        results = package.delivery.deliver(target.url, _events(package, 1), handshake=False)
    first, second = target.posted()
    assert second.at - first.at >= 0.95
    assert (results[0].status, results[0].attempts) == (204, 2)


def test_503_is_retried_and_other_5xx_back_off(package: Any) -> None:
    script = deque([(503, {}), (500, {}), (502, {})])
    with Scripted(posts=script) as target:
        results = package.delivery.deliver(target.url, _events(package, 1), handshake=False)
    assert [r.status for r in results] == [204] and results[0].attempts == 4
    times = [seen.at for seen in target.posted()]
    gaps = [later - earlier for earlier, later in pairwise(times)]
    assert gaps[0] >= 0.2 and gaps[1] >= 0.45 and gaps[2] >= 0.95  # 0.5 s doubled, half of it jittered


def test_retries_are_bounded(package: Any) -> None:
    with Scripted(default=(500, {})) as target:
        results = package.delivery.deliver(target.url, _events(package, 1), handshake=False, retries=1)
    assert len(target.posted()) == 2
    assert (results[0].status, results[0].attempts, results[0].ok) == (500, 2, False)


def test_410_stops_sending_to_the_target(package: Any) -> None:
    with Scripted(posts=deque([(204, {}), (410, {})])) as target:
        results = package.delivery.deliver(target.url, _events(package, 4), handshake=False)
    assert len(target.posted()) == 2
    assert [r.status for r in results] == [204, 410, None, None]
    assert "410" in results[2].error


def test_400_is_reported_not_retried(package: Any) -> None:
    with Scripted(posts=deque([(400, {}), (204, {})])) as target:
        results = package.delivery.deliver(target.url, _events(package, 2), handshake=False)
    assert len(target.posted()) == 2
    assert [(r.status, r.attempts) for r in results] == [(400, 1), (204, 1)]


def test_connection_errors_are_retried_then_reported(package: Any) -> None:
    with Scripted() as target:
        url = target.url
    results = package.delivery.deliver(url, _events(package, 1), handshake=False, retries=1)
    assert results[0].status is None and results[0].attempts == 2 and "Connect" in results[0].error


def test_invalid_event_is_never_sent(package: Any) -> None:
    good, bad = _events(package, 2)
    bad = bad.model_copy(update={"id": ""})  # model_copy does not validate: broken on purpose
    with Scripted() as target:
        results = package.delivery.deliver(target.url, [bad, good], handshake=False)
    assert [json.loads(seen.body)["id"] for seen in target.posted()] == ["evt-0"]
    assert results[0].status is None and "invalid" in results[0].error and results[1].status == 204


def test_invalid_event_is_never_sent_by_the_cli(tmp_path: Path) -> None:
    good = dict(examples()[0], id="cli-good")
    bad = dict(examples()[0], id="cli-bad")
    bad["data"] = {"nothing": "here"}
    (tmp_path / "events.json").write_text(json.dumps([bad, good]))
    with Scripted() as target:
        result = run_evcat("send", str(BRP), target.url, str(tmp_path / "events.json"), "--no-handshake", "--token", TOKEN)
    assert [json.loads(seen.body)["id"] for seen in target.posted()] == ["cli-good"]
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("- ") and "CE-DATA-SCHEMA" in lines[0]
    assert lines[1].startswith("204 ")


def test_never_faster_than_the_allowed_rate(package: Any) -> None:
    with Scripted(options=(200, {"WebHook-Allowed-Origin": "*", "WebHook-Allowed-Rate": "120"})) as target:
        package.delivery.deliver(target.url, _events(package, 3), origin=ORIGIN)
    times = [seen.at for seen in target.posted()]
    assert all(later - earlier >= 0.45 for earlier, later in pairwise(times))  # 120/min: 0.5 s apart


def test_deliver_async(package: Any) -> None:
    with Scripted(posts=deque([(503, {"Retry-After": "0"})])) as target:
        results = asyncio.run(package.delivery.deliver_async(target.url, _events(package, 2), origin=ORIGIN))
    assert [(r.status, r.attempts) for r in results] == [(204, 2), (204, 1)]
    assert [seen.method for seen in target.seen] == ["OPTIONS", "POST", "POST", "POST"]


# -- the policy with a fake clock: long waits without waiting ---------------------------


def _drive(replies: list[Reply], policy: Policy, count: int = 1) -> tuple[list[Any], list[_delivery.DeliveryResult]]:
    outgoing = [Outgoing((n,), {}, b"{}") for n in range(count)]
    results = [_delivery.DeliveryResult(f"e{n}") for n in range(count)]
    steps = plan("http://target.invalid/", outgoing, results, policy)
    actions: list[Any] = []
    answer: Reply | None = None
    queue = list(replies)
    while True:
        try:
            action = steps.send(answer)
        except StopIteration:
            return actions, results
        actions.append(action)
        answer = queue.pop(0) if isinstance(action, Request) else None


def test_retry_after_is_bounded_and_http_dates_are_understood() -> None:
    policy = Policy(handshake=False, max_retry_after=120, jitter=lambda: 0.0)
    actions, results = _drive([Reply(429, {"retry-after": "86400"}), Reply(204)], policy)
    assert [a.seconds for a in actions if isinstance(a, Sleep)] == [120]
    assert results[0].status == 204
    soon = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    actions, _ = _drive([Reply(503, {"retry-after": soon}), Reply(204)], policy)
    (wait,) = [a.seconds for a in actions if isinstance(a, Sleep)]
    assert 25 <= wait <= 31


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = Policy(handshake=False, retries=8, jitter=lambda: 1.0)
    actions, results = _drive([Reply(None, error="refused")] * 9, policy)
    waits = [a.seconds for a in actions if isinstance(a, Sleep)]
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    low = [a.seconds for a in _drive([Reply(500)] * 3, Policy(handshake=False, retries=2, jitter=lambda: 0.0))[0]
           if isinstance(a, Sleep)]
    assert low == [0.25, 0.5]
    assert results[0].status is None and results[0].attempts == 9
