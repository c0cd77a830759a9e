"""The third-party documents the import tests read, in one place. They come
from package registries, never from git: tests/install-components.sh unpacks
them into .test-cache/thirdparty/ (see its comment for the pinned packages).
Each function returns its folder, or fails the test with what to run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import TEST_CACHE

THIRDPARTY = TEST_CACHE / "thirdparty"


def _folder(name: str, what: str) -> Path:
    folder = THIRDPARTY / name
    if not (folder / ".from").is_file():
        pytest.fail(f"{what} is not in {folder}: run tests/install-components.sh first", pytrace=False)
    return folder


def asyncapi_examples() -> Path:
    """The AsyncAPI specification's examples as @asyncapi/cli ships them:
    ``v3/`` (AsyncAPI 3.x) and ``v2/`` (2.x), each with its LICENSE (Apache-2.0)."""
    root = THIRDPARTY / "asyncapi-examples"
    for version in ("v3", "v2"):
        _folder(f"asyncapi-examples/{version}", f"the AsyncAPI examples ({version})")
    return root


def eventcatalog_project() -> Path:
    """An EventCatalog project written by EventCatalog's own @eventcatalog/sdk
    (tests/eventcatalog-sdk/make-project.mjs) from some AsyncAPI examples."""
    return _folder("eventcatalog-project", "the EventCatalog project written by @eventcatalog/sdk")


def xregistry_samples() -> Path:
    """The xRegistry code generator's message-definition samples: no registry
    package carries them (xrcg's wheels and sdists hold only its templates and
    schemas), so install-components.sh does not make this folder."""
    return _folder("xregistry-samples", "the xRegistry code generator's samples (in no registry package)")
