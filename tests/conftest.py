"""Shared fixtures: real data location and a derandomised hypothesis profile."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
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


@pytest.fixture(scope="session")
def _cache_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("caches")


_CACHES = itertools.count()


@pytest.fixture(autouse=True)
def _isolated_cache(_cache_root, monkeypatch):
    """Never read or write the user's download cache from tests: each test has its own
    cache folder, not made until a loader writes to it, under one session folder (a
    ``tmp_path`` for each of the 5,700 tests, most of which never write, cost a folder
    on disk and about 0.3 ms of CPU apiece)."""
    monkeypatch.setenv("FAIRDECIDE_CACHE", str(_cache_root / f"cache{next(_CACHES)}"))


#: One fresh interpreter for the tests that ask what importing fairdecide imports, and
#: whether an optimisation prints to standard output (each started its own, about 2 s of
#: CPU apiece): it records the loaded modules after each step, in this order (solving
#: the bail problem under independence before the first release), then imports every
#: submodule and records, per module with an ``__all__``, the public names that are
#: modules; what it printed to standard output is kept under "stdout".
_FRESH = """
import importlib, json, pkgutil, sys, types
steps = {}
import fairdecide, fairdecide.models
steps["import fairdecide, fairdecide.models"] = sorted(sys.modules)
import fairdecide.plot
steps["import fairdecide.plot"] = sorted(sys.modules)
import fairdecide.privacy as pv
steps["import fairdecide.privacy"] = sorted(sys.modules)
from fairdecide.datasets import make_bail_problem
problem, world = make_bail_problem()
fairdecide.optimize_policy(problem, world, "independence", epsilon=0.05)
pv.release_counts([3, 4], 1.0)
steps["release_counts"] = sorted(sys.modules)
for info in pkgutil.walk_packages(fairdecide.__path__, "fairdecide."):
    if "experiments" not in info.name and not info.name.endswith("__main__"):
        importlib.import_module(info.name)
steps["public names that are modules"] = {
    name: [n for n in mod.__all__ if isinstance(getattr(mod, n), types.ModuleType)]
    for name, mod in list(sys.modules.items())
    if name.split(".")[0] == "fairdecide" and hasattr(mod, "__all__")}
with open(sys.argv[1], "w") as f:
    json.dump(steps, f)
"""


@pytest.fixture(scope="session")
def fresh_imports(tmp_path_factory) -> dict:
    """What a fresh interpreter has loaded after each step of ``_FRESH`` (step name to
    the sorted module names), and the public names bound to modules."""
    out = tmp_path_factory.mktemp("fresh") / "steps.json"
    run = subprocess.run([sys.executable, "-c", _FRESH, str(out)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    return {**json.loads(out.read_text()), "stdout": run.stdout}
