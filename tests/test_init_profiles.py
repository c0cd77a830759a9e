"""`evcat init --profile P` for every profile (profiles.NAMES); under
`cloudevents` the starter catalog has nothing Dutch (issue 27, §9)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator import profiles
from generator.cli import _parser

from .conftest import run_evcat


def test_init_offers_every_profile() -> None:
    init = _parser().parse_args(["init", "x", "--profile", profiles.NAMES[0]])
    assert init.profile == profiles.NAMES[0]
    for name in profiles.NAMES:
        assert _parser().parse_args(["init", "x", "--profile", name]).profile == name


def test_the_cloudevents_starter_is_not_dutch(tmp_path: Path) -> None:
    done = run_evcat("init", str(tmp_path / "shop"), "--profile", "cloudevents", "--evcat-requirement", "evcat")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "shop" / "catalog" / "shop.yaml").read_text(encoding="utf-8")
    assert not re.search(r"netherlands|urn:nld|\bnl\.|dutch", text, re.IGNORECASE), text
    linted = run_evcat("lint", str(tmp_path / "shop" / "catalog"), "--no-cache")
    assert (linted.returncode, linted.stdout) == (0, "no problems in 1 file\n")


@pytest.mark.parametrize("profile", ["nlgov", "normo"])
def test_the_nl_starters_keep_their_dutch_address(tmp_path: Path, profile: str) -> None:
    done = run_evcat("init", str(tmp_path / "p"), "--profile", profile, "--evcat-requirement", "evcat")
    assert done.returncode == 0, done.stderr
    assert "Netherlands" in (tmp_path / "p" / "catalog" / "p.yaml").read_text(encoding="utf-8")


def test_init_in_a_directory_named_like_a_pypi_distribution(tmp_path: Path) -> None:
    """The starter catalog's id comes from the directory: `stripe` would be
    refused (CAT-PACKAGE-NAME), so the starter names a free package."""
    done = run_evcat("init", str(tmp_path / "stripe"), "--profile", "cloudevents", "--evcat-requirement", "evcat")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "stripe" / "catalog" / "stripe.yaml").read_text(encoding="utf-8")
    assert "\npackage: stripe_events\n" in text, text
    linted = run_evcat("lint", str(tmp_path / "stripe" / "catalog"), "--no-cache")
    assert (linted.returncode, linted.stdout) == (0, "no problems in 1 file\n"), linted.stdout
    assert (tmp_path / "stripe" / "out" / "python" / "stripe_events" / "pyproject.toml").is_file()
