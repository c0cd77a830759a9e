"""What services and channels (catalog-format.md §9) cost the docs.

Renders the docs of one catalog of N services (tests/test_docs_services.py's
``big_catalog``: each service sends two or three types on one or two channels
and receives one or two) and of the same catalog without its ``services``
and ``channels`` (the peer, measured in the same run): the ratio is what the service and
channel pages, the diagram and "where it travels" cost. It should stay about
the same from 40 to 400 services (the pages grow with the services, no page's
work grows with services x channels x events).

    python bench/docs_services_bench.py [--services 40 400] [--runs 3]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.commands.generate import render
from generator.commands.lint import lint
from tests.test_docs_services import big_catalog


def seconds(text: str, runs: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "c.yaml").write_text(text, encoding="utf-8")
        catalog_set = lint(folder).catalog_set
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            render(catalog_set, ["docs"])
            times.append(time.perf_counter() - start)
        return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--services", type=int, nargs="+", default=[40, 400])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'services':>8} {'with (s)':>9} {'without (s)':>11} {'ratio':>6}")
    for count in args.services:
        text = big_catalog(services=count, channels=max(12, count // 4), types=max(30, count))
        bare = re.sub(r"(?ms)^channels:\n.*?(?=^events:)", "", text)  # the same catalog without channels and services
        with_services, without = seconds(text, args.runs), seconds(bare, args.runs)
        print(f"{count:>8} {with_services:>9.2f} {without:>11.2f} {with_services / without:>6.2f}")


if __name__ == "__main__":
    main()
