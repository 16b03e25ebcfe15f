"""OpenDP is the optional ``privacy`` extra: without it, every door to a private release
(``release_counts``, ``audit_report(..., dp_epsilon=...)``, ``fairdecide audit
--dp-epsilon``) raises a FairdecideError naming ``pip install 'fairdecide[privacy]'``,
and everything else (``import fairdecide`` and every module, the demo, small-cell
suppression, a report without privacy) works.

OpenDP's absence is simulated by making it unimportable: ``sys.modules["opendp"]`` (and
any OpenDP module already imported) set to None, so ``import opendp...`` raises
ImportError exactly as when it is not installed.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from fairdecide.cli import main
from fairdecide.exceptions import FairdecideError
from fairdecide.privacy import (
    NoisyCounts,
    noise_variance,
    rate_interval,
    release_counts,
    replicate_releases,
    suppress_small_cells,
)
from fairdecide.privacy._opendp import _opendp
from fairdecide.report import audit_report

HINT = "pip install 'fairdecide[privacy]'"

# The prelude a fresh interpreter runs to have no OpenDP.
BLOCK = "import sys; sys.modules['opendp'] = None\n"


@pytest.fixture
def no_opendp(monkeypatch):
    """OpenDP unimportable for the test (its cached constructors forgotten before and
    after, so the next release imports it again)."""
    for name in ["opendp", *(m for m in sys.modules if m.startswith("opendp."))]:
        monkeypatch.setitem(sys.modules, name, None)
    _opendp.cache_clear()
    yield
    _opendp.cache_clear()


def _frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.RandomState(seed)
    return pd.DataFrame({"z": rng.choice(["f", "m"], n), "a": rng.randint(0, 2, n),
                         "y": rng.randint(0, 2, n)})


def test_a_release_without_opendp_names_the_extra(no_opendp):
    with pytest.raises(FairdecideError, match=r"OpenDP, which is not installed") as err:
        release_counts([[3, 4], [5, 6]], 1.0)
    assert HINT in str(err.value)
    with pytest.raises(FairdecideError, match=r"fairdecide\[privacy\]"):
        release_counts([1, 2, 3], 0.5, "laplace")
    # bad input is still reported as such first, whatever is installed
    with pytest.raises(FairdecideError, match="counts must be non-negative"):
        release_counts([-1, 2], 1.0)


def test_the_private_report_says_so_before_reading_the_data(no_opendp):
    steps: list[str] = []
    with pytest.raises(FairdecideError, match=r"fairdecide\[privacy\]"):
        audit_report(_frame(), group="z", action="a", outcome="y", dp_epsilon=1.0,
                     n_boot=50, progress=steps.append)
    assert steps == []  # not one step of the report was taken


def test_the_cli_says_so_in_one_line(no_opendp, tmp_path, capsys):
    _frame().to_csv(tmp_path / "log.csv", index=False)
    code = main(["audit", str(tmp_path / "log.csv"), "--group", "z", "--action", "a",
                 "--outcome", "y", "--dp-epsilon", "1", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("fairdecide: error: ") and HINT in err[0]


def test_everything_without_a_release_works_without_opendp(no_opendp):
    # small-cell suppression, by hand: counts 1..9 hidden, 0 and >= 10 shown
    np.testing.assert_array_equal(suppress_small_cells([[0, 3, 12], [9, 10, 40]]),
                                  [[False, True, False], [True, False, False]])
    # the noise arithmetic, the replicates and the intervals are numpy and scipy only
    assert noise_variance(1.0, "laplace") == pytest.approx(2.0)
    alpha = np.exp(-1.0)
    noisy = NoisyCounts(np.array([5, 7]), 1.0, "geometric")
    assert noisy.noise_variance == pytest.approx(2 * alpha / (1 - alpha) ** 2)
    assert replicate_releases(noisy, 3, random_state=0).shape == (3, 2)
    # Wilson's interval for 30 of 100 at 95%, from its formula
    p, n, q = 0.3, 100, 1.959963984540054
    mid, half = (p + q**2 / (2 * n)), q * np.sqrt(p * (1 - p) / n + q**2 / (4 * n**2))
    got = rate_interval(30, 100)
    assert float(got.low) == pytest.approx((mid - half) / (1 + q**2 / n))
    assert float(got.high) == pytest.approx((mid + half) / (1 + q**2 / n))
    # a report without privacy suppresses a small group and releases nothing
    df = _frame()
    df.loc[df.index[:6], "z"] = "tiny"
    rep = audit_report(df, group="z", action="a", outcome="y", n_boot=50)
    rates = rep.rates["P(a | z)"]
    assert rates[rates["group"] == "tiny"]["suppressed"].all()
    counted = (df[df["z"] == "f"]["a"] == 1).sum()
    assert rates[(rates["group"] == "f") & (rates["action"] == "1")]["count"].item() == counted


@pytest.mark.slow  # a fresh interpreter importing every module: CI's slow run has it
def test_import_and_demo_work_without_opendp():
    # A fresh interpreter without OpenDP imports every fairdecide module (none imports
    # OpenDP at import time) and runs the README's demo on the embedded problem.
    code = BLOCK + (
        "import importlib, pkgutil, fairdecide\n"
        "from fairdecide.cli import main\n"
        "for m in pkgutil.walk_packages(fairdecide.__path__, 'fairdecide.'):\n"
        "    if not m.name.endswith('__main__'):\n"
        "        importlib.import_module(m.name)\n"
        "sys.exit(main(['demo', '--synthetic']))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "Synthetic bail problem" in run.stdout
    assert "opendp" not in run.stderr.lower()
