"""Refresh ``generator/data/top-pypi-packages.txt``: the most-downloaded PyPI
distributions, whose names a generated package must not take (rule
CAT-PACKAGE-NAME, catalog-format.md §9; generator/package_names.py).

Source: Hugo van Kemenade's "Top PyPI Packages", a monthly dump of the 15,000
most-downloaded distributions of the last 30 days (from the public PyPI
download statistics in BigQuery): https://hugovk.dev/top-pypi-packages/,
repository https://github.com/hugovk/top-pypi-packages.

    python tools/top_pypi_packages.py                    # download and write
    python tools/top_pypi_packages.py top-pypi-packages.min.json   # from a saved copy
    python tools/top_pypi_packages.py pypi.tsv           # a package list with a download rank

A ``.tsv`` source is a package list with the columns ``name`` and
``rank_among_15000_most_downloaded`` (empty for the others), as the package
lists of this project's build machines have it: the shipped file was made
from one (it names the list's month).

``--count`` keeps the first N (default 5000). The names are written
normalised (PEP 503), one a line, in download order, under a header that
says where and when they come from.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.request
from pathlib import Path

URL = "https://hugovk.dev/top-pypi-packages/top-pypi-packages.min.json"
TARGET = Path(__file__).resolve().parent.parent / "generator" / "data" / "top-pypi-packages.txt"


def normalise(name: str) -> str:
    """PEP 503: lowercase, runs of -, _ and . become one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", default=URL, help=f"URL or file of top-pypi-packages.min.json (default {URL})")
    parser.add_argument("--count", type=int, default=5000, help="how many of the most-downloaded to keep (default 5000)")
    parser.add_argument("-o", "--output", type=Path, default=TARGET, help=f"where to write (default {TARGET})")
    arguments = parser.parse_args(argv)
    if arguments.source.endswith(".tsv"):
        ranked, when = _ranked_tsv(Path(arguments.source))
        source = f"PyPI download ranks (the 15,000 most-downloaded distributions) of a package list, {when}"
    else:
        if re.match(r"^https?://", arguments.source):
            with urllib.request.urlopen(arguments.source, timeout=60) as response:
                dump = json.load(response)
        else:
            dump = json.loads(Path(arguments.source).read_text(encoding="utf-8"))
        ranked = [row["project"] for row in dump["rows"]]
        source = f"the Top PyPI Packages dump, last_update {dump.get('last_update', '?')}"
    names: list[str] = []
    for project in ranked:
        name = normalise(project)
        if name not in names:
            names.append(name)
        if len(names) == arguments.count:
            break
    header = [
        f"# The {len(names)} most-downloaded PyPI distributions (last 30 days), PEP 503-normalised, in download order.",
        "# A generated package may not take one of these names (CAT-PACKAGE-NAME, generator/package_names.py).",
        f"# Source: {source}.",
        "# Refresh: python tools/top_pypi_packages.py",
    ]
    arguments.output.write_text("\n".join(header + names) + "\n", encoding="utf-8")
    print(f"wrote {len(names)} names to {arguments.output}", file=sys.stderr)
    return 0


def _ranked_tsv(path: Path) -> tuple[list[str], str]:
    """Names by download rank from a package list (``name``, ``month``,
    ``rank_among_15000_most_downloaded`` columns), and the latest month in it."""
    rows: list[tuple[int, str]] = []
    months: set[str] = set()
    with path.open(encoding="utf-8") as lines:
        columns = next(lines).rstrip("\n").split("\t")
        name_at, rank_at = columns.index("name"), columns.index("rank_among_15000_most_downloaded")
        month_at = columns.index("month") if "month" in columns else None
        for line in lines:
            fields = line.rstrip("\n").split("\t")
            if len(fields) > rank_at and fields[rank_at].isdigit():
                rows.append((int(fields[rank_at]), fields[name_at]))
                if month_at is not None:
                    months.add(fields[month_at])
    rows.sort()
    return [name for _, name in rows], f"whose newest release is of {max(months)}" if months else "undated"


if __name__ == "__main__":
    raise SystemExit(main())
