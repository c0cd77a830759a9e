"""Benchmark `evcat import events` on 100,000 sample events of 20 types (issue 28).

The events (``write_events``) are generated deterministically (a seeded
``random.Random``) as JSON lines: 20 event types of an online shop, each with
a realistic payload (ids as UUIDs, timestamps, amounts, quantities, small
closed sets such as currencies and statuses, e-mail addresses and URLs, a
nested address, arrays of line items, nullable and optional fields, a map of
labels), the context attributes a producer sends (subject, time,
datacontenttype, an extension or two), a second dataversion for two types.

Measured, as whole processes (``measure.run``), in alternating rounds:

- the floor: a Python process that only reads the file and parses each line
  with ``json.loads`` (the least any import must do);
- ``evcat import events EVENTS -o CATALOG``.

After the rounds, ``evcat lint`` and ``evcat validate CATALOG EVENTS`` must
accept the written catalog and every one of the events (checked, not timed).
Targets: the import in under 5 s (median of the rounds; wall as the issue
says, and CPU, which the load of a shared machine does not inflate), with
its ratio to the floor (median of the per-round ratios, wall and CPU).
Usage: python bench/import_events_bench.py [--events 100000] [--runs 3] [--work DIR] [--strict]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import measure
from measure import Rounds, Targets

TYPES = 20
FLOOR = r"""
import json, sys
count = 0
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        if line.strip():
            json.loads(line)
            count += 1
print(count)
"""

_CURRENCIES = ["EUR", "USD", "GBP", "SEK"]
_STATUSES = ["pending", "confirmed", "shipped", "delivered", "cancelled"]
_CARRIERS = ["dhl", "postnl", "ups", "dpd"]
_CITIES = ["Amsterdam", "Utrecht", "Rotterdam", "Groningen", "Eindhoven", "Den Haag", "Zwolle", "Maastricht",
           "Leiden", "Delft", "Arnhem", "Nijmegen", "Haarlem", "Breda", "Tilburg"]


def _uuid(rnd: random.Random) -> str:
    return str(uuid.UUID(int=rnd.getrandbits(128), version=4))


def _time(rnd: random.Random) -> str:
    return (f"2026-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}T{rnd.randint(0, 23):02d}:"
            f"{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}.{rnd.randint(0, 999):03d}Z")


def _address(rnd: random.Random) -> dict[str, Any]:
    address = {"street": f"Kerkstraat {rnd.randint(1, 300)}", "postalCode": f"{rnd.randint(1000, 9999)}AB",
               "city": rnd.choice(_CITIES), "country": "NL"}
    if rnd.random() < 0.3:
        address["addition"] = rnd.choice(["A", "bis", "2 hoog"])
    return address


def _lines(rnd: random.Random) -> list[dict[str, Any]]:
    return [{"sku": f"SKU-{rnd.randint(10000, 99999)}", "quantity": rnd.randint(1, 5),
             "unitPrice": round(rnd.uniform(1, 250), 2), "discount": None if rnd.random() < 0.7 else round(rnd.uniform(0, 10), 2)}
            for _ in range(rnd.randint(1, 4))]


def _labels(rnd: random.Random) -> dict[str, str]:
    return {f"label-{rnd.randint(0, 400)}": rnd.choice(["a", "b", "c"]) for _ in range(rnd.randint(0, 3))}


def _payloads() -> list[tuple[str, Callable[[random.Random], dict[str, Any]]]]:
    def order(rnd: random.Random) -> dict[str, Any]:
        data = {"orderId": _uuid(rnd), "customerId": _uuid(rnd), "placedAt": _time(rnd), "currency": rnd.choice(_CURRENCIES),
                "total": round(rnd.uniform(5, 900), 2), "lines": _lines(rnd), "shippingAddress": _address(rnd),
                "labels": _labels(rnd)}
        if rnd.random() < 0.5:
            data["couponCode"] = rnd.choice([None, f"SAVE{rnd.randint(5, 30)}"])
        return data

    def payment(rnd: random.Random) -> dict[str, Any]:
        return {"paymentId": _uuid(rnd), "orderId": _uuid(rnd), "amount": round(rnd.uniform(5, 900), 2),
                "currency": rnd.choice(_CURRENCIES), "method": rnd.choice(["card", "ideal", "paypal", "klarna"]),
                "authorizedAt": _time(rnd), "receiptUrl": f"https://pay.example.com/receipts/{rnd.getrandbits(40):x}"}

    def shipment(rnd: random.Random) -> dict[str, Any]:
        return {"shipmentId": _uuid(rnd), "orderId": _uuid(rnd), "carrier": rnd.choice(_CARRIERS),
                "trackingUrl": f"https://track.example.com/{rnd.getrandbits(48):x}", "parcels": rnd.randint(1, 3),
                "weightKg": round(rnd.uniform(0.1, 30), 3), "deliverBy": f"2026-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}",
                "address": _address(rnd)}

    def customer(rnd: random.Random) -> dict[str, Any]:
        return {"customerId": _uuid(rnd), "email": f"user{rnd.randint(1, 10**6)}@example.org",
                "name": rnd.choice(["Anna", "Bram", "Chen", "Daan", "Eva"]) + " " + rnd.choice(["de Vries", "Jansen", "Bakker"]),
                "marketingOptIn": rnd.random() < 0.4, "registeredAt": _time(rnd), "loyaltyPoints": rnd.randint(0, 5000),
                "phone": None if rnd.random() < 0.5 else f"+316{rnd.randint(10**7, 10**8 - 1)}"}

    def stock(rnd: random.Random) -> dict[str, Any]:
        return {"sku": f"SKU-{rnd.randint(10000, 99999)}", "warehouse": rnd.choice(["AMS-1", "RTM-2", "EIN-1"]),
                "onHand": rnd.randint(0, 10000), "reserved": rnd.randint(0, 500), "changedAt": _time(rnd),
                "reason": rnd.choice(["sale", "return", "count", "damage"])}

    def review(rnd: random.Random) -> dict[str, Any]:
        return {"reviewId": _uuid(rnd), "productId": _uuid(rnd), "rating": rnd.randint(1, 5),
                "title": rnd.choice(["Great", "Okay", "Not as described", "Love it"]) + f" #{rnd.randint(1, 999)}",
                "body": "Lorem ipsum " * rnd.randint(1, 8), "verifiedPurchase": rnd.random() < 0.8,
                "photos": [f"https://img.example.com/{rnd.getrandbits(32):x}.jpg" for _ in range(rnd.randint(0, 3))]}

    kinds = [("order", order), ("payment", payment), ("shipment", shipment), ("customer", customer),
             ("stock", stock), ("review", review)]
    verbs = ["created", "updated", "cancelled", "completed"]
    result = []
    for index in range(TYPES):
        name, make = kinds[index % len(kinds)]
        result.append((f"com.example.shop.{name}.{verbs[index // len(kinds)]}", make))
    return result


def write_events(path: Path, count: int, seed: int = 28) -> None:
    """``count`` events of ``TYPES`` types as JSON lines (deterministic)."""
    rnd = random.Random(seed)
    payloads = _payloads()
    with path.open("w", encoding="utf-8") as handle:
        for number in range(count):
            index = rnd.randrange(len(payloads))
            event_type, make = payloads[index]
            event: dict[str, Any] = {
                "specversion": "1.0", "id": _uuid(rnd), "source": f"https://shop.example.com/{event_type.split('.')[3]}s",
                "type": event_type, "time": _time(rnd), "datacontenttype": "application/json",
                "dataversion": "2.0.0" if index < 2 and rnd.random() < 0.3 else "1.0.0",
            }
            data = make(rnd)
            event["subject"] = next(iter(data.values()))
            if rnd.random() < 0.6:
                event["traceparent"] = f"00-{rnd.getrandbits(128):032x}-{rnd.getrandbits(64):016x}-01"
            event["partitionkey"] = f"p{rnd.randint(0, 63)}"
            event["data"] = data
            handle.write(json.dumps(event, separators=(",", ":")) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "evcat-import-bench")
    parser.add_argument("--strict", action="store_true")
    arguments = parser.parse_args()
    measure.check_checkout()
    arguments.work.mkdir(parents=True, exist_ok=True)
    events = arguments.work / f"events-{arguments.events}.jsonl"
    write_events(events, arguments.events)
    catalog = arguments.work / "catalog"
    print(f"{arguments.events} events of {TYPES} types, {events.stat().st_size / 1e6:.1f} MB; "
          f"{arguments.runs} alternating rounds", flush=True)
    measure.compile_checkout()
    env = measure.child_env()
    commands = {
        "floor": [sys.executable, "-c", FLOOR, str(events)],
        "import": [sys.executable, "-m", "generator", "import", "events", str(events), "-o", str(catalog)],
    }

    def fresh() -> None:
        shutil.rmtree(catalog, ignore_errors=True)

    for name, command in commands.items():  # warm: the page cache, bytecode
        fresh()
        measure.run(command, env=env, cwd=measure.ROOT)
    rounds = Rounds()
    for run in range(arguments.runs):
        for name in measure.alternate(run, list(commands)):
            fresh()
            rounds.add(name, measure.run(commands[name], env=env, cwd=measure.ROOT))
    print()
    rounds.table([("floor: read the file, json.loads per line", "floor"),
                  ("evcat import events (whole CLI run)", "import")], peer="floor")
    print()
    # The written catalog: lint-clean, and every event valid under it (checked once, not timed).
    lint = subprocess.run([sys.executable, "-m", "generator", "lint", str(catalog)], env=env, cwd=measure.ROOT,
                          capture_output=True, text=True, check=False)
    print(f"evcat lint: exit {lint.returncode}; {(lint.stdout.strip().splitlines() or [''])[-1]}")
    validate = subprocess.run([sys.executable, "-m", "generator", "validate", str(catalog), str(events)], env=env,
                              cwd=measure.ROOT, capture_output=True, text=True, check=False)
    summary = (validate.stdout.strip().splitlines() or [""])[-1]
    print(f"evcat validate: exit {validate.returncode}; {summary}")
    ratios, cpu_ratios = rounds.ratios("import", "floor"), rounds.ratios("import", "floor", "cpu")
    print(f"import / floor, per round: {measure.spread(ratios, digits=2)} wall, {measure.spread(cpu_ratios, digits=2)} CPU; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall includes waiting for a core)")
    targets = Targets()
    targets.check("evcat import events, 100,000 events, wall (median)", rounds.median("import"), 5.0, " s",
                  applies=arguments.events == 100_000, note=f"{statistics.median(ratios):.2f}x the floor's wall")
    targets.check("evcat import events, 100,000 events, CPU (median)", rounds.median("import", "cpu"), 5.0, " s",
                  applies=arguments.events == 100_000, note=f"{statistics.median(cpu_ratios):.2f}x the floor's CPU")
    targets.check("written catalog lints without errors (exit status)", float(lint.returncode), 0.0)
    targets.check("evcat validate accepts every event (exit status)", float(validate.returncode), 0.0, note=summary)
    return targets.exit_code(arguments.strict)


if __name__ == "__main__":
    sys.exit(main())
