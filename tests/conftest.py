"""Shared fixtures: real data location and a derandomised hypothesis profile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from threadpoolctl import threadpool_limits

settings.register_profile(
    "fairdecide",
    derandomize=True,
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("fairdecide")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _data_dir() -> Path | None:
    env = os.environ.get("FAIRDECIDE_DATA")
    if env and Path(env).is_dir():
        return Path(env)
    if SHARED_DATA.is_dir():
        return SHARED_DATA
    return None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """Folder of the real data files; CI (FAIRDECIDE_REQUIRE_DATA=1) insists on it."""
    found = _data_dir()
    if found is None:
        if os.environ.get("FAIRDECIDE_REQUIRE_DATA"):
            pytest.fail("real data required: set FAIRDECIDE_DATA or provide ../shared/data")
        pytest.skip("real data not available (set FAIRDECIDE_DATA)")
    return found


@pytest.fixture(scope="session", autouse=True)
def _one_blas_thread():
    """One BLAS/OpenMP thread: on a busy two-core machine OpenBLAS's worker threads spin
    against other processes (the off-policy tests ran five times slower with two)."""
    with threadpool_limits(1):
        yield


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Never read or write the user's download cache from tests."""
    monkeypatch.setenv("FAIRDECIDE_CACHE", str(tmp_path / "cache"))
