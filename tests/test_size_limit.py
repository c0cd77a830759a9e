"""Issue 26: the profile's size limit is applied by every judge.

Het Normo ID09 allows at most 256 kB per event (NORMO-SIZE-MAX, an error):
`evcat validate` refused a larger event, while the generated ``parse_event``,
``from_http`` (both modes), ``parse_batch`` and the broker readers accepted
it (each failed before). Sizes are the bytes of the event's JSON text; for an
event that arrives as a mapping (a batch item, a binary-mode message) its
compact JSON text, as `evcat validate` measures a batch item.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.commands.generate import render
from generator.commands.lint import lint

from .conftest import ROOT, run_evcat

NORMO = ROOT / "catalog" / "normo"
LIMIT = 256 * 1024
TOO_LARGE = "Het Normo ID09 allows at most 262144 bytes"


@pytest.fixture(scope="module")
def meter_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("size-limit")
    for relative, content in render(lint(str(NORMO)).catalog_set, ["python"])["python"].items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    sys.path.insert(0, str(root / "python"))
    try:
        import meter_data

        yield meter_data
    finally:
        sys.path.remove(str(root / "python"))
        for name in [n for n in sys.modules if n.split(".")[0] == "meter_data"]:
            del sys.modules[name]


def _event(size: int) -> dict[str, Any]:
    """A valid mdm.reading.validated event of about ``size`` bytes (compact JSON)."""
    (entry,) = [e for e in lint(str(NORMO)).catalog_set.events if e.type == "mdm.reading.validated"]
    event = entry.complete_example(entry.examples[0].values)
    event["time"] = "2024-02-01T00:00:00.000000Z"
    register = event["data"]["registers"][0]
    one = len(json.dumps(register, separators=(",", ":"))) + 1
    base = len(json.dumps(event, separators=(",", ":")))
    event["data"]["registers"] = [register] * max(1, (size - base) // one)
    return event


def _compact(event: dict[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode()


def _verdict(call: Any) -> str | None:
    try:
        call()
    except ValueError as error:  # EventError, ValidationError
        return str(error)
    return None


def _judges(package: Any, event: dict[str, Any], tmp_path: Path) -> dict[str, str | None]:
    text = _compact(event)
    headers, body = package.to_http(package.parse_event(text) if len(text) <= LIMIT else _unchecked(package, event), "binary")
    structured = {"content-type": "application/cloudevents+json"}
    kafka_headers = {"content-type": headers["content-type"].encode(),
                     **{f"ce_{k[3:]}": v.encode() for k, v in headers.items() if k.startswith("ce-")}}
    verdicts = {
        "parse_event text": _verdict(lambda: package.parse_event(text)),
        "parse_event mapping": _verdict(lambda: package.parse_event(event)),
        "parse_batch": _verdict(lambda: package.parse_batch(b"[" + text + b"]")),
        "from_http structured": _verdict(lambda: package.from_http(structured, text)),
        "from_http binary": _verdict(lambda: package.from_http(headers, body)),
        "from_kafka structured": _verdict(lambda: package.from_kafka({"content-type": b"application/cloudevents+json"}, text)),
        "from_kafka binary": _verdict(lambda: package.from_kafka(kafka_headers, body)),
    }
    path = tmp_path / "event.json"
    path.write_bytes(text)
    validated = run_evcat("validate", str(NORMO), str(path))
    verdicts["evcat validate"] = None if validated.returncode == 0 else validated.stdout + validated.stderr
    return verdicts


def _unchecked(package: Any, event: dict[str, Any]) -> Any:
    """The event as its class, built without the size check (to write it in binary mode)."""
    from meter_data import EVENTS  # noqa: PLC0415

    cls = EVENTS[(event["type"], event.get("dataversion"))]
    return cls.model_validate(event, strict=True)


def test_an_event_over_the_limit_is_refused_by_every_judge(meter_data: Any, tmp_path: Path) -> None:
    event = _event(LIMIT + 4096)
    assert len(_compact(event)) > LIMIT
    verdicts = _judges(meter_data, event, tmp_path)
    wrong = {judge: message for judge, message in verdicts.items() if message is None or TOO_LARGE not in message}
    assert not wrong, wrong


def test_an_event_under_the_limit_is_accepted_by_every_judge(meter_data: Any, tmp_path: Path) -> None:
    event = _event(LIMIT - 4096)
    assert 64 * 1024 < len(_compact(event)) <= LIMIT  # over the advised size: a warning only
    verdicts = _judges(meter_data, event, tmp_path)
    assert verdicts == dict.fromkeys(verdicts), verdicts


def test_only_normo_packages_carry_a_limit(meter_data: Any) -> None:
    from generator.profiles import PROFILES
    from generator.rules import RULES

    assert all(cls.max_size == (LIMIT, f"{TOO_LARGE} (NORMO-SIZE-MAX)") for cls in meter_data.EVENTS.values())
    # the one limit expressed per class is the largest; no profile refuses below a warning
    for profile in PROFILES.values():
        errors = [limit for limit in profile.sizes if RULES[limit.rule].severity.name == "ERROR"]
        assert all(limit == profile.sizes[0] for limit in errors), profile.name
