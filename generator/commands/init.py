"""``evcat init [DIR] [--profile P]``: a starter project that lints clean.

Writes (never overwriting a file that exists):
- ``catalog/<id>.yaml``: one event with data (its type and source the
  profile's ``Starter``), an example, the `time` and `id` meanings the
  profiles ask for, and the schema line for editors;
- ``catalog/catalog.schema.json``: the format's JSON Schema that line points at;
- ``.gitignore``: ``.evcat-cache/`` appended when missing;
- ``.github/workflows/evcat.yml`` and ``.gitlab-ci.yml``: lint on every push.
"""

from __future__ import annotations

import json
import os
import re

from .. import profiles
from ..catalog_format import catalog_json_schema

CATALOG = """\
# yaml-language-server: $schema=./catalog.schema.json
# The format: docs/catalog-format.md in the evcat repository. Check it with `evcat lint catalog`.
catalog: {catalog_id}
title: {title}
description: Events about registrations. Describe what your events are about here.
version: 0.1.0
profile: {profile}
producer:
  source: {source}
  organization: Example organization
defaults:
  datacontenttype: {datacontenttype}
  time: {time}
  id: Random UUID v4; identifies the message only, not the occurrence.
schemas:
  Address:
    type: object
    description: A postal address in the Netherlands.
    required: [postalCode, houseNumber]
    properties:
      postalCode: {{type: string, pattern: '^[1-9][0-9]{{3}}[A-Z]{{2}}$', description: Postal code.}}
      houseNumber: {{type: integer, minimum: 1, description: House number.}}
events:
  - type: {type}
    dataversion: 1.0.0
    title: Registration created
    description: A new registration was recorded.
    subject: Identifier of the registration.
    data:
      type: object
      description: The new registration.
      required: [registrationId]
      properties:
        registrationId: {{type: string, description: Identifier of the registration.}}
        address: {{$ref: '#/schemas/Address'}}
    examples:
      - subject: REG-0001
        data: {{registrationId: REG-0001, address: {{postalCode: 1234AB, houseNumber: 1}}}}
"""

GITHUB_ACTIONS = """\
# Lint the event catalog on every push and pull request; problems show as annotations.
name: evcat
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - run: python -m pip install evcat
      - run: evcat lint catalog --format github
"""

GITLAB_CI = """\
# Lint the event catalog on every push.
evcat-lint:
  image: python:3.11
  cache:
    paths: [.evcat-cache/]
  script:
    - python -m pip install evcat
    - evcat lint catalog
"""


def catalog_id_for(directory: str) -> str:
    """A kebab-case catalog id from the project directory's name."""
    name = os.path.basename(os.path.abspath(directory))
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if not slug or not slug[0].isalpha():
        slug = "events" + ("-" + slug if slug else "")
    return slug


def init(directory: str, profile: str = profiles.DEFAULT.name) -> list[tuple[str, str]]:
    """Write the starter files under ``directory``: (path, "created" | "kept" | "updated") each.
    ``profile`` is one of ``profiles.starters()``."""
    catalog_id = catalog_id_for(directory)
    starter = profiles.PROFILES[profile].starter
    if starter is None:
        raise ValueError(f"profile {profile!r} has no starter catalog")  # the CLI offers only profiles.starters()
    files = {
        os.path.join("catalog", f"{catalog_id}.yaml"): CATALOG.format(
            catalog_id=catalog_id, title=catalog_id.replace("-", " ").capitalize() + " events", profile=profile,
            type=starter.type, source=starter.source, datacontenttype=starter.datacontenttype, time=starter.time,
        ),
        os.path.join("catalog", "catalog.schema.json"): json.dumps(catalog_json_schema(), indent=2) + "\n",
        os.path.join(".github", "workflows", "evcat.yml"): GITHUB_ACTIONS,
        ".gitlab-ci.yml": GITLAB_CI,
    }
    done: list[tuple[str, str]] = []
    for relative, text in files.items():
        path = os.path.join(directory, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            with open(path, "x", encoding="utf-8") as handle:  # never overwrites
                handle.write(text)
            done.append((relative, "created"))
        except FileExistsError:
            done.append((relative, "kept"))
    done.append((".gitignore", _ignore_cache(os.path.join(directory, ".gitignore"))))
    return done


def _ignore_cache(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        lines = None
    if lines is not None and any(line.strip().rstrip("/") in (".evcat-cache", "/.evcat-cache") for line in lines):
        return "kept"
    with open(path, "a", encoding="utf-8") as handle:
        if lines and lines[-1] != "":
            handle.write("\n")
        handle.write(".evcat-cache/\n")
    return "created" if lines is None else "updated"
