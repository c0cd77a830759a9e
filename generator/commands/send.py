"""`evcat send`: deliver events to a webhook, or test a receiver (contract 6.2).

Delivery follows the generated packages' own runtime module
(``generator.runtime._delivery``); events are judged by the catalog first, as
``evcat validate`` does, and an invalid one is never sent. ``check`` tests a
receiver against the table of contract 6.1 and names each unmet expectation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from ..event_checker import EventChecker
from ..model import CatalogSet, EventType
from ..runtime._delivery import DeliveryResult, Policy, prepare, run
from ..runtime._webhook import BATCH, STRUCTURED
from .serve import CatalogJudge, size_limit
from ..vocabulary import header_value

MODES = ("structured", "binary", "batch")


@dataclass
class Candidate:
    """An event read for sending: its JSON value, or why it cannot be read."""

    label: str
    value: Any = None
    error: str | None = None

    @property
    def id(self) -> str:
        return str(self.value.get("id", "")) if isinstance(self.value, dict) else ""


def examples(catalog_set: CatalogSet) -> list[Candidate]:
    """The catalog's examples as whole events (ids made unique per example)."""
    found = []
    for event in catalog_set.events:
        for example in event.examples:
            value = event.complete_example(example.values)
            if value.get("id") == "example":
                parts = ("example", event.type, event.dataversion, str(example.index))
                value["id"] = "-".join(part for part in parts if part)
            found.append(Candidate(f"{event.type}#{example.index}", value))
    return found


def read_events(arguments: list[str]) -> list[Candidate]:
    from .validate import read_sources

    found = []
    for source in read_sources(arguments):
        source.parse()
        label = source.file + (f"[{source.index}]" if source.index is not None else f":{source.line}")
        found.append(Candidate(label, source.value, source.error))
    return found


# -- turning a structured-mode event into an HTTP request ----------------------------

def to_http(event: dict[str, Any], mode: str) -> tuple[dict[str, str], bytes]:
    if mode == "structured":
        return {"content-type": f"{STRUCTURED}; charset=utf-8"}, _json(event)
    headers: dict[str, str] = {}
    for name, value in event.items():
        if name in ("data", "data_base64") or value is None:
            continue
        if name == "datacontenttype":
            headers["content-type"] = str(value)
            continue
        headers[f"ce-{name}"] = header_value(value)  # HTTP binding §3.1.3.2
    body = b""
    if "data" in event:
        headers.setdefault("content-type", "application/json")
        body = _json(event["data"])
    return headers, body


def to_http_batch(events: list[dict[str, Any]]) -> tuple[dict[str, str], bytes]:
    return {"content-type": f"{BATCH}; charset=utf-8"}, _json(events)


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def checker_of(catalog_set: CatalogSet) -> Callable[[Candidate], str | None]:
    judge = CatalogJudge(catalog_set)

    def check(candidate: Candidate) -> str | None:
        if candidate.error is not None:
            return candidate.error
        judged = judge.judge(0, candidate.value, None)
        errors = [finding for finding in judged.findings if finding.severity == "error"]
        if errors:
            return f"{errors[0].rule} {errors[0].pointer}: {errors[0].message}" + (
                f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            )
        return None

    return check


def deliver(
    catalog_set: CatalogSet, url: str, candidates: list[Candidate], mode: str, policy: Policy
) -> list[DeliveryResult]:
    outgoing, results = prepare(
        candidates,
        mode,
        check=checker_of(catalog_set),
        to_http=lambda candidate, kind: to_http(candidate.value, kind),
        to_http_batch=lambda chosen: to_http_batch([candidate.value for candidate in chosen]),
    )
    return run(url, outgoing, results, policy)


# -- send --check: test a receiver against the table of contract 6.1 ---------------------


@dataclass
class Expectation:
    name: str
    met: bool
    detail: str


def _broken_payload(event: EventType, value: dict[str, Any], checker: EventChecker) -> dict[str, Any] | None:
    """``value`` with a payload the catalog rejects, when one of a few tries is."""
    if not event.has_data:
        return None
    for data in ([], "not the payload", 12345, {}, None):
        broken = dict(value, data=data)
        if any(problem.rule == "CE-DATA-SCHEMA" for problem in checker.check(broken)):
            return broken
    return None


def check_receiver(
    catalog_set: CatalogSet,
    url: str,
    *,
    token: str | None = None,
    origin: str = "evcat-check.invalid",
    handshake: bool = True,
    client: httpx.Client | None = None,
) -> list[Expectation]:
    """Every expectation of the table of contract 6.1 that can be tested from outside."""
    http = client or httpx.Client(timeout=30.0, follow_redirects=False)
    checker = EventChecker(catalog_set)
    results: list[Expectation] = []
    base = {"webhook-request-origin": origin}
    allowed_rate: int | None = None
    if token:
        base["authorization"] = f"Bearer {token}"

    def expect(name: str, response: httpx.Response | str, wanted: Callable[[httpx.Response], bool], want: str) -> None:
        if isinstance(response, str):
            results.append(Expectation(name, False, response))
            return
        met = wanted(response)
        got = f"got {response.status_code}"
        results.append(Expectation(name, met, f"expected {want}, {got}"))

    def post(headers: dict[str, str], body: bytes, params: dict[str, str] | None = None) -> httpx.Response | str:
        try:
            return http.post(url, headers={**base, **headers}, content=body, params=params)
        except httpx.HTTPError as error:
            return f"no answer: {type(error).__name__}: {error}"

    try:
        if handshake:
            try:
                answer: httpx.Response | str = http.options(url, headers={"webhook-request-origin": origin, "webhook-request-rate": "120"})
            except httpx.HTTPError as error:
                answer = f"no answer: {error}"
            expect(
                "handshake: OPTIONS answers 200 with WebHook-Allowed-Origin, WebHook-Allowed-Rate and Allow: POST",
                answer,
                lambda r: r.status_code == 200
                and r.headers.get("webhook-allowed-origin") in (origin, "*")
                and "webhook-allowed-rate" in r.headers
                and "POST" in r.headers.get("allow", "").upper(),
                "200 with the WebHook-Allowed-* headers and Allow including POST",
            )
            granted = answer.headers.get("webhook-allowed-origin") if not isinstance(answer, str) else None
            if granted == origin:  # an explicit list of origins: others are refused
                try:
                    answer = http.options(url, headers={"webhook-request-origin": "evcat-check-unlisted.invalid"})
                except httpx.HTTPError as error:
                    answer = f"no answer: {error}"
                expect("handshake: an origin not allowed gets 403", answer, lambda r: r.status_code == 403, "403")
            if not isinstance(answer, str):
                allowed_rate = rate_of(answer)
        sample = examples(catalog_set)
        is_valid = checker_of(catalog_set)
        valid = [candidate for candidate in sample if is_valid(candidate) is None]
        if not valid:
            results.append(Expectation("the catalog has a valid example to deliver", False, "no example is a valid event"))
            return results
        for candidate in valid:
            for mode in ("structured", "binary"):
                headers, body = to_http(candidate.value, mode)
                expect(f"{mode} mode: a valid event ({candidate.label}) is accepted", post(headers, body),
                       lambda r: 200 <= r.status_code < 300, "2xx")
        headers, body = to_http_batch([candidate.value for candidate in valid])
        expect(f"batch mode: {len(valid)} valid event(s) accepted", post(headers, body),
               lambda r: 200 <= r.status_code < 300, "2xx")
        first = valid[0]
        is_problem = _problem_with(400)
        missing_id = {name: value for name, value in first.value.items() if name != "id"}
        headers, body = to_http(missing_id, "structured")
        expect("an event without id is rejected with 400 problem+json", post(headers, body), is_problem, "400 application/problem+json")
        unknown = dict(first.value, type="evcat.check.unknown-type")
        headers, body = to_http(unknown, "structured")
        expect("an event of an unknown type is rejected with 400 problem+json", post(headers, body), is_problem, "400 application/problem+json")
        headers, body = to_http_batch([first.value, missing_id])
        expect("a batch with one invalid event is rejected whole with 400, the diagnostic at index 1",
               post(headers, body), lambda r: is_problem(r) and _has_index(r, 1), "400 problem+json with errors[].index 1")
        broken = None
        for candidate in valid:
            entry, _ = checker.find(candidate.value)
            broken = _broken_payload(entry, candidate.value, checker) if entry is not None else None
            if broken is not None:
                break
        if broken is not None:
            headers, body = to_http(broken, "structured")
            expect("an event with an invalid payload is rejected with 400 problem+json", post(headers, body), is_problem,
                   "400 application/problem+json")
        expect("a body that is no CloudEvent (text/plain) gets 415",
               post({"content-type": "text/plain"}, b"hello"), lambda r: r.status_code == 415, "415")
        oversized = dict(first.value, evcatpadding="x" * (size_limit(catalog_set) + 1))
        headers, body = to_http(oversized, "structured")
        expect("a request over the profile's size limit gets 413", post(headers, body), lambda r: r.status_code == 413, "413")
        try:
            answer = http.get(url, headers=base)
        except httpx.HTTPError as error:
            answer = f"no answer: {error}"
        expect("another method (GET) gets 405 with Allow", answer,
               lambda r: r.status_code == 405 and "POST" in r.headers.get("allow", "").upper(), "405 with Allow")
        if token:
            headers, body = to_http(first.value, "structured")
            anonymous = {key: value for key, value in base.items() if key != "authorization"}
            try:
                answer = http.post(url, headers={**anonymous, **headers}, content=body)
            except httpx.HTTPError as error:
                answer = f"no answer: {error}"
            expect("a delivery without a token gets 401 with WWW-Authenticate: Bearer", answer,
                   lambda r: r.status_code == 401 and r.headers.get("www-authenticate", "").lower().startswith("bearer"),
                   "401 with WWW-Authenticate: Bearer")
            try:
                answer = http.post(url, headers={**anonymous, **headers}, content=body, params={"access_token": token})
            except httpx.HTTPError as error:
                answer = f"no answer: {error}"
            expect("the token in the access_token query parameter is accepted", answer,
                   lambda r: 200 <= r.status_code < 300, "2xx")
        if allowed_rate is not None and allowed_rate <= MAX_RATE_CHECKED:
            # Last: it uses up the origin's allowance. One more than the rate in a burst.
            headers, body = to_http(first.value, "structured")
            answers = [post(headers, body) for _ in range(allowed_rate + 1)]
            limited = next((a for a in answers if not isinstance(a, str) and a.status_code == 429), None)
            expect(
                f"more than {allowed_rate} deliveries a minute get 429 with Retry-After",
                limited if limited is not None else answers[-1],
                lambda r: r.status_code == 429 and r.headers.get("retry-after", "").strip().isdigit(),
                "429 with Retry-After",
            )
    finally:
        if client is None:
            http.close()
    return results


MAX_RATE_CHECKED = 120  # a target granting more is not flooded to find its limit


def rate_of(response: httpx.Response) -> int | None:
    value = response.headers.get("webhook-allowed-rate", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def _problem_with(status: int) -> Callable[[httpx.Response], bool]:
    def test(response: httpx.Response) -> bool:
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if response.status_code != status or kind != "application/problem+json":
            return False
        try:
            return isinstance(response.json(), dict)
        except ValueError:
            return False

    return test


def _has_index(response: httpx.Response, index: int) -> bool:
    try:
        errors = response.json().get("errors", [])
    except (ValueError, AttributeError):
        return False
    return isinstance(errors, list) and any(isinstance(e, dict) and e.get("index") == index for e in errors)

