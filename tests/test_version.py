"""The version: one source (``laya.__version__``, which pyproject.toml reads), ordered after the
published 0.4.15 and inside the range the packages built on laya declare (docs/migrating.md,
"Version")."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

from packaging.specifiers import SpecifierSet
from packaging.version import Version

import laya

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = Version("0.4.15")
METADATA = """
import pathlib, sys, tempfile
import setuptools.build_meta as backend
out = tempfile.mkdtemp()
name = backend.prepare_metadata_for_build_wheel(out)
sys.stdout.write((pathlib.Path(out) / name / "METADATA").read_text(encoding="utf-8"))
"""


def test_the_version_orders_after_the_published_runtime_and_dependents_accept_it():
    version = Version(laya.__version__)
    assert version > PUBLISHED and not version.is_prerelease
    assert version >= Version("0.3.8")  # pydecide turns noul labels on from 0.3.8
    for declared in (">=0.3.4,<0.5", ">=0.3", ">=0.3.27", ">=0.3.20", ">=0.3.5"):
        assert SpecifierSet(declared).contains(version), declared  # as pip's resolver reads it


def test_the_distribution_built_from_this_source_carries_the_same_version():
    """What pip installs: the metadata the build backend writes for this checkout."""
    metadata = subprocess.run(
        [sys.executable, "-c", METADATA], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert f"\nVersion: {laya.__version__}\n" in metadata
    assert SpecifierSet(">=0.3.4,<0.5").contains(laya.__version__)


def test_an_installed_checkout_reports_its_own_version():
    """An installation of this checkout (CI's ``pip install -e .``) says this version; another
    checkout installed in the same environment says its own, and is not compared."""
    dist = importlib.metadata.distribution("laya")
    url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
    installed_here = url.startswith("file:") and Path(unquote(urlparse(url).path)) == ROOT
    assert not installed_here or dist.version == laya.__version__
    assert importlib.metadata.version("laya") == dist.version
