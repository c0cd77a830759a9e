"""``evcat init [DIR] [--profile P]``: a starter project that lints clean.

Writes (never overwriting a file that exists):
- ``catalog/<id>.yaml``: one event with data (its type and source the
  profile's ``Starter``), an example, the `time` and `id` meanings the
  profiles ask for, and the schema line for editors;
- ``catalog/catalog.schema.json``: the format's JSON Schema that line points at;
- ``.gitignore``: ``.evcat-cache/`` appended when missing;
- ``out/``: what ``evcat generate catalog -o out`` writes, so that CI's
  ``--check`` passes from the first push;
- ``.github/workflows/evcat.yml`` and ``.gitlab-ci.yml``: on every push,
  install evcat from where this evcat came from (``installed_requirement``:
  the PEP 610 ``direct_url.json`` of its installation, or an index version)
  or from ``--evcat-requirement``, then ``evcat lint`` and
  ``evcat generate --check``. When CI could not reach where this evcat came
  from (a local directory or file), they are not written: a note says so.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass

from .. import profiles
from ..catalog_format import catalog_json_schema
from .lint import UsageError

CATALOG = """\
# yaml-language-server: $schema=./catalog.schema.json
# The format: docs/catalog-format.md in the evcat repository. Check it with `evcat lint catalog`.
catalog: {catalog_id}
title: {title}
description: Events about registrations. Describe what your events are about here.
version: 0.1.0
profile: {profile}
{package}producer:
  source: {source}
  organization: Example organization
defaults:
  datacontenttype: {datacontenttype}
  time: {time}
  id: Random UUID v4; identifies the message only, not the occurrence.
schemas:
  Address:
    type: object
    description: {address}
    required: [postalCode, houseNumber]
    properties:
      postalCode: {{type: string, pattern: '{postal_code_pattern}', description: Postal code.}}
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
# On every push and pull request: lint the event catalog (problems show as
# annotations) and check that out/ is what the catalog generates.
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
      - run: {install}
      - run: evcat lint catalog --format github
      - run: evcat generate catalog -o out --check
"""

GITLAB_CI = """\
# On every push: lint the event catalog and check that out/ is what it generates.
evcat-lint:
  image: python:3.11
  cache:
    paths: [.evcat-cache/]
  script:
    - {install}
    - evcat lint catalog
    - evcat generate catalog -o out --check
"""

CI_FILES = (os.path.join(".github", "workflows", "evcat.yml"), ".gitlab-ci.yml")


@dataclass(frozen=True)
class Origin:
    """Where the running evcat was installed from, as CI can install it again."""

    requirement: str | None  # a pip requirement; None when CI cannot reach the source
    described: str  # for messages: "a local directory (file:///...)"


def installed_requirement() -> Origin:
    """The requirement recorded in evcat's installation metadata: PEP 610
    (``direct_url.json``, "Recording the Direct URL Origin of installed
    distributions") for an install from a VCS URL (``evcat @ git+URL@commit``),
    an archive URL (a wheel or sdist, with its sha256) or a directory; none
    means an index, ``evcat==VERSION``. A ``file:`` URL is on this machine
    only, which CI cannot reach: no requirement then."""
    try:
        distribution = importlib.metadata.distribution("evcat")
    except importlib.metadata.PackageNotFoundError:
        return Origin(None, "a source tree that is not installed")
    text = distribution.read_text("direct_url.json")
    if text is None:
        return Origin(f"evcat=={distribution.version}", f"a package index (evcat {distribution.version})")
    try:
        info = json.loads(text)
        url = info["url"]
        if not isinstance(url, str) or not url:
            raise ValueError(url)
    except (ValueError, KeyError, TypeError):
        return Origin(None, "an installation whose direct_url.json cannot be read")
    subdirectory = info.get("subdirectory")
    fragment = f"#subdirectory={subdirectory}" if isinstance(subdirectory, str) and subdirectory else ""
    local = url.startswith("file:")
    if isinstance(info.get("vcs_info"), dict):
        vcs = info["vcs_info"]
        commit = vcs.get("commit_id")
        requirement = f"evcat @ {vcs.get('vcs', 'git')}+{url}{'@' + commit if isinstance(commit, str) and commit else ''}{fragment}"
        described = f"a {'local ' if local else ''}{vcs.get('vcs', 'git')} repository ({url})"
    elif isinstance(info.get("archive_info"), dict):
        hashes = info["archive_info"].get("hashes")
        sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
        requirement = f"evcat @ {url}{f'#sha256={sha256}' if isinstance(sha256, str) and not fragment else fragment}"
        described = f"{'a local' if local else 'an'} archive ({url})"
    else:  # dir_info: a directory, editable or not, is on this machine
        return Origin(None, f"a local directory ({url})")
    return Origin(None if local else requirement, described)


def check_requirement(requirement: str) -> str:
    """``--evcat-requirement``: one line of text (a requirement, URL or path pip takes)."""
    value = requirement.strip()
    if not value or any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise UsageError("--evcat-requirement takes one line: a pip requirement, URL or path")
    return value


def install_command(requirement: str) -> str:
    """The CI line that installs evcat, as a YAML scalar (a JSON string is
    one: YAML 1.2 is a superset of JSON) holding a shell-quoted requirement."""
    return json.dumps(f"python -m pip install {shlex.quote(requirement)}")


def catalog_id_for(directory: str) -> str:
    """A kebab-case catalog id from the project directory's name."""
    name = os.path.basename(os.path.abspath(directory))
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if not slug or not slug[0].isalpha():
        slug = "events" + ("-" + slug if slug else "")
    return slug


def init(directory: str, profile: str = profiles.DEFAULT.name, evcat_requirement: str | None = None) -> tuple[list[tuple[str, str]], list[str]]:
    """Write the starter files under ``directory``: (path, "created" | "kept"
    | "updated" | "skipped") each, and notes for the user. ``profile`` is one
    of ``profiles.starters()``; ``evcat_requirement`` what CI installs evcat
    with (default: ``installed_requirement()``)."""
    catalog_id = catalog_id_for(directory)
    starter = profiles.PROFILES[profile].starter
    if starter is None:
        raise ValueError(f"profile {profile!r} has no starter catalog")  # the CLI offers only profiles.starters()
    notes: list[str] = []
    if evcat_requirement is not None:
        requirement: str | None = check_requirement(evcat_requirement)
    else:
        origin = installed_requirement()
        requirement = origin.requirement
        if requirement is None:
            notes.append(
                f"CI files not written: this evcat comes from {origin.described}, which CI cannot reach; "
                "run evcat init again with --evcat-requirement REQ (what pip installs evcat from in CI, "
                "e.g. 'evcat @ git+https://example.org/evcat.git@<commit>' or a wheel's URL)"
            )
    catalog_file = os.path.join("catalog", f"{catalog_id}.yaml")
    files = {
        catalog_file: CATALOG.format(
            catalog_id=catalog_id, title=catalog_id.replace("-", " ").capitalize() + " events", profile=profile,
            type=starter.type, source=starter.source, datacontenttype=starter.datacontenttype, time=starter.time,
            address=starter.address, postal_code_pattern=starter.postal_code_pattern, package=_package_line(catalog_id),
        ),
        os.path.join("catalog", "catalog.schema.json"): json.dumps(catalog_json_schema(), indent=2) + "\n",
    }
    if requirement is not None:
        install = install_command(requirement)
        files[CI_FILES[0]] = GITHUB_ACTIONS.format(install=install)
        files[CI_FILES[1]] = GITLAB_CI.format(install=install)
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
    done.extend((relative, "skipped") for relative in CI_FILES if relative not in files)
    done.append((".gitignore", _ignore_cache(os.path.join(directory, ".gitignore"))))
    done.append(("out", _generate(directory, notes)))
    return done, notes


def _package_line(catalog_id: str) -> str:
    """``package: <free name>`` when the catalog id's own package name is taken
    (a directory named ``stripe``: CAT-PACKAGE-NAME), else nothing."""
    from ..naming import python_package_name
    from ..package_names import free_name, why_taken

    package = python_package_name(catalog_id)
    return f"package: {free_name(package)}\n" if why_taken(package) else ""


def _generate(directory: str, notes: list[str]) -> str:
    """``out/`` as CI's ``evcat generate catalog -o out --check`` expects it:
    the same command, run in ``directory`` (the docs name catalog files by the
    path the command was given), by this evcat. An existing ``out/`` is kept."""
    if os.path.exists(os.path.join(directory, "out")):
        return "kept"
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds this `generator`
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (here, os.environ.get("PYTHONPATH")))))
    result = subprocess.run([sys.executable, "-m", "generator", "generate", "catalog", "-o", "out", "--no-cache"],
                            cwd=directory, env=environment, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        notes.append("out not generated: evcat generate catalog -o out failed (fix what evcat lint catalog reports, then run it)")
        return "skipped"
    return "created"


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
