"""fairdecide.privacy: the noise is what it says, the intervals cover, the budget adds up.

Every release here is drawn by OpenDP's secure, unseedable samplers, so these tests are
statistical: each tolerance is a multiple of a standard error chosen so that a correct
sampler fails it with probability below about 1e-4.

- Noise: the empirical variance and mean of many cells' noise match the discrete
  Laplace variance 2 e^{-1/b} / (1 - e^{-1/b})^2 at OpenDP's scale b (or 2 b^2 for
  Laplace) and zero within 5 standard errors (the standard error of a sample variance
  estimated from the sample's fourth moment); geometric output is integer and follows its
  exact pmf (chi-square); Laplace noise passes a KS test against Laplace(1/epsilon); the
  exact pmf's likelihood ratio between neighbouring counts is at most exp(epsilon), and
  OpenDP's privacy map certifies epsilon at the scale used. The same random_state gives
  different noise; OpenDP is imported at the first release, not with fairdecide.
- Intervals: on synthetic binomial data released with noise, the noise-aware interval
  covers the true rate at 90% and 95% (>= level - 4 binomial standard errors of the
  coverage over 2000 replications) for small n and small epsilon, while Wilson's
  interval on the noisy counts, which ignores the noise, falls far short.
- Budget, replicates, suppression, and errors that name the argument.
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fairdecide.exceptions import FairdecideError
from fairdecide.privacy import (
    SMALL_CELL_THRESHOLD,
    NoisyCounts,
    PrivacyBudget,
    noise_variance,
    rate_interval,
    release_counts,
    replicate_releases,
    suppress_small_cells,
)
from fairdecide.privacy._opendp import measurement as _measurement
from fairdecide.privacy.mechanisms import _geometric_pmf

MECHANISMS = ["geometric", "laplace"]
DOCS = Path(__file__).resolve().parents[1] / "docs" / "privacy.md"


# ---------------------------------------------------------------- the noise


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("epsilon", [0.3, 2.0])
def test_noise_has_the_stated_mean_and_variance(mechanism, epsilon):
    # 25,000 cells (OpenDP's secure sampler takes about 1 s per 25,000 Laplace draws):
    # 5 standard errors are 7% of the Laplace variance (kurtosis 6), so a variance off by
    # a factor 2 (b^2 for 2 b^2, or a scale off by 1.4) still fails by far.
    n_cells = 25_000
    noisy = release_counts(np.full(n_cells, 7), epsilon, mechanism)
    noise = noisy.values.astype(float) - 7
    # The variance of OpenDP's noise at the scale b it was built with: the discrete
    # Laplace on the integers, pmf proportional to exp(-|k|/b); Laplace, 2 b^2.
    _, b = _measurement(epsilon, mechanism)
    if mechanism == "geometric":
        var = 2 * math.exp(-1 / b) / (-math.expm1(-1 / b)) ** 2
        assert noisy.values.dtype == np.int64  # released counts are integers
    else:
        var = 2 * b**2
        assert noisy.values.dtype == np.float64
    # Standard error of the sample variance from the sample's own fourth moment.
    se_var = math.sqrt((np.mean(noise**4) - noise.var() ** 2) / n_cells)
    assert abs(noise.var() - var) < 5 * se_var, (noise.var(), var, se_var)
    assert abs(noise.mean()) < 5 * math.sqrt(var / n_cells)
    assert noisy.scale == pytest.approx(1 / epsilon) and b == pytest.approx(1 / epsilon)
    assert noisy.noise_variance == pytest.approx(var, rel=1e-12)
    assert noisy.noise_variance == pytest.approx(noise_variance(epsilon, mechanism))


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("epsilon", [1e-12, 0.05, 1 / 3, 0.7, 1.0, 20.0, 1e3])
def test_opendp_certifies_the_budget_at_the_stated_scale(mechanism, epsilon):
    # The scale is 1/epsilon up to the few units in the last place OpenDP's
    # conservatively rounded privacy map needs, and the map at sensitivity 1 is epsilon.
    meas, b = _measurement(epsilon, mechanism)
    assert meas.map(1 if mechanism == "geometric" else 1.0) <= epsilon
    assert 1 / epsilon <= b <= 1 / epsilon * (1 + 1e-14)


def test_the_noise_cannot_be_seeded():
    counts = np.full((40, 25), 50)
    for mechanism in MECHANISMS:
        first = release_counts(counts, 1.0, mechanism)
        second = release_counts(counts, 1.0, mechanism)
        assert not np.array_equal(first.values, second.values)
        with pytest.raises(TypeError):
            release_counts(counts, 1.0, mechanism, random_state=0)
    # the replicates, which release nothing, do follow their random_state
    np.testing.assert_array_equal(replicate_releases(first, 5, random_state=3),
                                  replicate_releases(first, 5, random_state=3))


def test_opendp_is_imported_at_the_first_release_not_with_fairdecide(fresh_imports):
    # a fresh interpreter after `import fairdecide.privacy`, then after its first
    # release_counts (tests/conftest.py)
    assert "fairdecide.privacy" in fresh_imports["import fairdecide.privacy"]
    assert not any(m.startswith("opendp") for m in fresh_imports["import fairdecide.privacy"])
    assert "opendp.measurements" in fresh_imports["release_counts"]
    assert "opendp.extras.sklearn" not in fresh_imports["release_counts"]


def test_laplace_noise_is_laplace_with_scale_one_over_epsilon():
    epsilon = 0.7
    noisy = release_counts(np.zeros(20_000, dtype=int), epsilon, "laplace")
    result = stats.kstest(noisy.values, "laplace", args=(0.0, 1.0 / epsilon))
    assert result.pvalue > 1e-5, result
    # and it is not a Laplace of the wrong scale: the test can fail
    wrong = stats.kstest(noisy.values, "laplace", args=(0.0, 1.3 / epsilon))
    assert wrong.pvalue < 1e-6


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_geometric_noise_follows_its_pmf(epsilon):
    noise = release_counts(np.zeros(50_000, dtype=int), epsilon).values
    k_max = int(np.ceil(8 / epsilon))
    clipped = np.clip(noise, -k_max, k_max)
    ks = np.arange(-k_max, k_max + 1)
    expected = _geometric_pmf(ks, epsilon)
    tail = _geometric_pmf(np.arange(k_max + 1, k_max + 2000), epsilon).sum()
    expected[0] += tail
    expected[-1] += tail
    observed = np.bincount(clipped + k_max, minlength=ks.size)
    keep = expected * noise.size >= 5  # the chi-square approximation's usual condition
    obs, exp = observed[keep], expected[keep] * noise.size
    if not keep.all():
        obs, exp = np.append(obs, observed[~keep].sum()), np.append(exp, (
            expected[~keep].sum() * noise.size))
    assert abs(exp.sum() - noise.size) < 1e-6 * noise.size
    assert stats.chisquare(obs, exp).pvalue > 1e-5


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 4.0])
def test_privacy_loss_is_bounded_by_epsilon(epsilon):
    # P(out = k | count c) / P(out = k | count c + 1) over k, from the exact pmf
    c = 5
    reach = min(400, int(600 / epsilon))  # alpha ** reach stays a normal float
    k = np.arange(c - reach, c + reach)
    p_c = _geometric_pmf(k - c, epsilon)
    p_c1 = _geometric_pmf(k - c - 1, epsilon)
    ratio = np.concatenate([p_c / p_c1, p_c1 / p_c])
    assert ratio.max() <= math.exp(epsilon) * (1 + 1e-12)
    assert ratio.max() == pytest.approx(math.exp(epsilon))  # the bound is tight
    assert _geometric_pmf(np.arange(-2000, 2001), epsilon).sum() == pytest.approx(1)
    # Laplace density at the released scale
    b = release_counts([c], epsilon, "laplace").scale
    x = np.linspace(c - 30, c + 30, 601)
    ratio = stats.laplace.pdf(x, c, b) / stats.laplace.pdf(x, c + 1, b)
    assert ratio.max() <= math.exp(epsilon) * (1 + 1e-12)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=12),
       st.floats(0.01, 20), st.sampled_from(MECHANISMS), st.integers(0, 2**32 - 1))
def test_release_properties(counts, epsilon, mechanism, seed):
    table = np.array(counts).reshape(-1, 1)
    noisy = release_counts(table, epsilon, mechanism)
    assert noisy.shape == table.shape
    est = noisy.estimate()
    assert est.dtype == float and np.all(est >= 0)
    assert np.array_equal(est, np.clip(noisy.values, 0, None))
    if mechanism == "geometric":
        assert noisy.values.dtype.kind == "i"
    assert not noisy.values.flags.writeable
    assert "OpenDP" in noisy.to_dict()["sampler"]
    record = json.loads(json.dumps(noisy.to_dict()))
    again = NoisyCounts.from_dict(record)
    assert np.array_equal(again.values, noisy.values)
    assert again.noise_variance == noisy.noise_variance


# ---------------------------------------------------------------- intervals


def _wilson(s: np.ndarray, n: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    z = stats.norm.ppf(0.5 + level / 2)
    centre = (s + z**2 / 2) / (n + z**2)
    half = z / (n + z**2) * np.sqrt(s * (n - s) / n + z**2 / 4)
    return centre - half, centre + half


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 2000), st.floats(0, 1), st.floats(0.5, 0.995))
def test_without_noise_it_is_wilson(n, frac, level):
    s = np.floor(frac * n)
    est, low, high = rate_interval(s, n, level)
    ref_low, ref_high = _wilson(s, np.float64(n), level)
    assert est == pytest.approx(s / n)
    assert low == pytest.approx(max(ref_low, 0.0), abs=1e-9)
    assert high == pytest.approx(min(ref_high, 1.0), abs=1e-9)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.floats(-200, 2000), st.floats(-200, 2000), st.floats(0, 500), st.floats(0, 500),
       st.floats(0.5, 0.995))
def test_noisy_interval_is_sound_and_contains_the_noise_free_one(s, t, v_s, v_f, level):
    res = rate_interval(s, t, level, noise=(v_s, v_f))
    est, low, high = (float(x) for x in res)
    assert all(math.isfinite(x) for x in (est, low, high))
    assert 0.0 <= low <= est <= high <= 1.0
    s_hat, f_hat = max(s, 0.0), max(t - s, 0.0)
    if s_hat + f_hat == 0:
        assert not res.defined and (est, low, high) == (0.5, 0.0, 1.0)
        return
    _, low0, high0 = rate_interval(s_hat, s_hat + f_hat, level)
    assert low <= low0 + 1e-9 and high >= high0 - 1e-9
    # more noise, a wider interval
    _, low2, high2 = rate_interval(s, t, level, noise=(2 * v_s + 1, 2 * v_f + 1))
    assert low2 <= low + 1e-9 and high2 >= high - 1e-9


def _coverage(n, p, epsilon, mechanism, levels, n_cells=1, reps=2000, seed=0):
    """Coverage of the noise-aware and of the naive interval, per level.

    The table is n(a, k) for a = 1 (success), 0 and ``n_cells`` sub-cells k (for example
    the outcome y of P(a | z), released cell by cell); the rate's numerator and
    denominator are sums of raw released cells."""
    rng = np.random.RandomState(seed)
    s = rng.binomial(n, p, reps)
    table = np.zeros((reps, 2, n_cells), dtype=int)
    for side, left in enumerate((s, n - s)):  # split each side evenly at random
        for k in range(n_cells - 1):
            table[:, side, k] = rng.binomial(left, 1 / (n_cells - k))
            left = left - table[:, side, k]
        table[:, side, -1] = left
    noisy = release_counts(table, epsilon, mechanism)  # OpenDP's noise, unseeded
    successes = noisy.values[:, 0].sum(axis=1).astype(float)
    totals = noisy.values.sum(axis=(1, 2)).astype(float)
    var = n_cells * noisy.noise_variance
    out = {}
    for level in levels:
        _, low, high = rate_interval(successes, totals, level, noise=(var, var))
        _, nlow, nhigh = rate_interval(np.clip(successes, 0, None),
                                       np.clip(successes, 0, None)
                                       + np.clip(totals - successes, 0, None), level)
        out[level] = (np.mean((low <= p) & (p <= high)), np.mean((nlow <= p) & (p <= nhigh)))
    return out


COVERAGE_CASES = [  # (n, p, epsilon, cells per side)
    (5, 0.3, 0.1, 1), (20, 0.5, 0.1, 1), (30, 0.2, 0.5, 2), (100, 0.1, 0.05, 1),
    (200, 0.7, 0.2, 2), (1000, 0.3, 0.05, 1), (1000, 0.05, 1.0, 1),
]


#: Where the noise is negligible the interval is Wilson's, whose coverage dips below
#: nominal for rates near 0 (0.944 at 95%, 0.899 at 90% at n = 1000, p = 0.05,
#: epsilon = 1 over 40,000 replications: benchmarks/results/privacy_coverage.txt). The
#: claim tested is coverage at least the level minus this dip.
WILSON_DIP = 0.01


def coverage_floor(level: float, reps: int) -> float:
    """The least coverage over ``reps`` replications the test accepts: the claimed
    coverage (level - WILSON_DIP) minus four of its binomial standard errors, so a check
    fails by bad luck with probability about 3e-5 where the claim holds (below 1e-6 at
    the coverages measured; bench_privacy_coverage.py prints it)."""
    claim = level - WILSON_DIP
    return claim - 4 * math.sqrt(claim * (1 - claim) / reps)


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize(("n", "p", "epsilon", "n_cells"), COVERAGE_CASES)
def test_noise_aware_interval_covers(n, p, epsilon, n_cells, mechanism):
    # The noise is unseeded: the allowance is computed (coverage_floor), so a failure
    # means a shortfall of more than WILSON_DIP, not bad luck.
    reps = 2000
    for level, (cover, _) in _coverage(n, p, epsilon, mechanism, (0.9, 0.95), n_cells,
                                       reps).items():
        assert cover >= coverage_floor(level, reps), (level, cover)


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize(("n", "p", "epsilon"), [(20, 0.5, 0.1), (100, 0.1, 0.05),
                                                 (1000, 0.3, 0.05)])
def test_naive_interval_under_covers_with_noise(n, p, epsilon, mechanism):
    reps = 2000
    for level, (cover, naive) in _coverage(n, p, epsilon, mechanism, (0.9, 0.95),
                                           reps=reps).items():
        assert naive < level - 0.15, (level, naive)
        assert cover >= coverage_floor(level, reps), (level, cover)


def test_rate_interval_is_vectorised_and_never_nan():
    res = rate_interval(np.array([[3.0, -2.0], [0.0, 5.0]]), np.array([[10.0, -3.0],
                                                                        [0.0, 4.0]]),
                        noise=(np.array([2.0, 8.0]), 2.0))
    assert res.estimate.shape == (2, 2)
    assert res.defined.tolist() == [[True, False], [False, True]]
    assert res.estimate[0, 1] == 0.5 and res.low[0, 1] == 0 and res.high[0, 1] == 1
    assert res.estimate[1, 1] == 1.0  # 5 successes out of 4: clipped failures are 0
    assert np.all(np.isfinite(res.width))


# ---------------------------------------------------------------- the budget


def test_budget_splits_and_describes():
    budget = PrivacyBudget(epsilon=1.0, shares={"groups": 0.5, "cells": 0.5})
    assert budget.epsilon_of("groups") == 0.5
    assert sum(budget.epsilons().values()) == pytest.approx(budget.epsilon)
    text = budget.describe()
    for phrase in ("epsilon of 1", "groups epsilon = 0.5", "cells epsilon = 0.5",
                   "adding or removing one", "pure epsilon-differential privacy",
                   "post-processing", "sequential composition"):
        assert phrase in text, phrase
    record = json.loads(json.dumps(budget.to_dict()))
    assert record["epsilons"] == {"groups": 0.5, "cells": 0.5} and record["delta"] == 0
    third = PrivacyBudget.even(0.3, ["a", "b", "c"])
    assert math.fsum(third.epsilons().values()) == pytest.approx(0.3)
    assert PrivacyBudget(2.0).epsilon_of("counts") == 2.0


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": math.inf}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"), ({"epsilon": math.nan}, "epsilon"),
    ({"shares": {"a": 0.5, "b": 0.4}}, "sum to 1"),
    ({"shares": {"a": 1.5, "b": -0.5}}, "shares"), ({"shares": {"a": 0.0, "b": 1.0}}, "shares"),
    ({"shares": {}}, "shares"), ({"shares": [0.5, 0.5]}, "shares"),
    ({"shares": {"a": math.nan}}, "shares"), ({"shares": {1: 1.0}}, "shares"),
])
def test_budget_refuses_bad_input(kwargs, match):
    with pytest.raises(FairdecideError, match=match):
        PrivacyBudget(**{"epsilon": 1.0, "shares": {"a": 0.5, "b": 0.5}, **kwargs})


def test_budget_unknown_table_is_named():
    with pytest.raises(FairdecideError, match=r"'cells'.*'groups'"):
        PrivacyBudget(1.0, {"groups": 1.0}).epsilon_of("cells")


# ---------------------------------------------------------------- replicates


def test_replicates_shape_and_non_negativity():
    noisy = release_counts(np.array([[[40, 3], [0, 12]], [[25, 9], [1, 30]]]), 0.5)
    draws = replicate_releases(noisy, 300, random_state=1)
    assert draws.shape == (300, 2, 2, 2) and draws.dtype == float
    assert np.all(draws >= 0) and np.all(np.isfinite(draws))


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_replicate_variance_is_sampling_plus_noise(mechanism):
    counts = np.array([4000, 6000])
    noisy = release_counts(counts, 0.2, mechanism)
    draws = replicate_releases(noisy, 4000, random_state=1)
    p = noisy.estimate() / noisy.estimate().sum()
    expected = noisy.estimate().sum() * p * (1 - p) + noisy.noise_variance
    assert draws.var(axis=0) == pytest.approx(expected, rel=0.1)


def test_statistic_spread_grows_as_epsilon_shrinks():
    counts = np.array([[60, 40], [45, 55]])  # n(z, a)

    def parity_gap(tables: np.ndarray) -> np.ndarray:
        rate = tables[..., 1] / np.maximum(tables.sum(axis=-1), 1e-12)
        return rate[..., 0] - rate[..., 1]

    spreads = []
    n_draws = 2000
    for epsilon in (10.0, 1.0, 0.1):
        noisy = release_counts(counts, epsilon)  # the release's own noise is not seeded
        spreads.append(parity_gap(replicate_releases(noisy, n_draws, random_state=4)).std())
    # a sample standard deviation of n draws has relative standard error about
    # 1 / sqrt(2 (n - 1)); at epsilon 10 and 1 the noise (scale 0.1 and 1 on counts of 40
    # to 60) barely moves the spread of the rows' resampling (they differed by 0.8% in a
    # run where the strict order 10 < 1 failed), so those two are compared within five of
    # those errors, and 0.1 (scale 10) must exceed both by more
    se = 5 * max(spreads) / np.sqrt(2 * (n_draws - 1))
    assert spreads[0] < spreads[1] + se
    assert spreads[1] + se < spreads[2] and spreads[0] + se < spreads[2]
    assert spreads[2] > 1.5 * spreads[0]


# ---------------------------------------------------------------- suppression


def test_suppression_threshold():
    assert SMALL_CELL_THRESHOLD == 10
    counts = np.array([0, 1, 9, 10, 11, 1000])
    assert suppress_small_cells(counts).tolist() == [False, True, True, False, False, False]
    assert suppress_small_cells(counts, threshold=2).tolist() == [False, True] + [False] * 4
    assert not suppress_small_cells(counts, threshold=1).any()
    assert suppress_small_cells(np.zeros((2, 3))).shape == (2, 3)


# ---------------------------------------------------------------- errors name the argument


NOISY = release_counts([[5, 3], [2, 9]], 1.0)
BAD_CALLS = [
    (lambda: release_counts([1, -1], 1.0), "counts"),
    (lambda: release_counts([1.5, 2], 1.0), "counts"),
    (lambda: release_counts([1, np.nan], 1.0), "counts"),
    (lambda: release_counts([1, np.inf], 1.0), "counts"),
    (lambda: release_counts([], 1.0), "counts"),
    (lambda: release_counts("abc", 1.0), "counts"),
    (lambda: release_counts([1, 2], 0.0), "epsilon"),
    (lambda: release_counts([1, 2], math.inf), "epsilon"),
    (lambda: release_counts([1, 2], math.nan), "epsilon"),
    (lambda: release_counts([1, 2], "1"), "epsilon"),
    (lambda: release_counts([1, 2], 1e-15), "epsilon"),
    (lambda: release_counts([1, 2], 1.0, "gaussian"), "mechanism"),
    (lambda: release_counts([1, 2], 1.0, 3), "mechanism"),
    (lambda: release_counts([1, 2**54], 1.0), "counts"),
    (lambda: rate_interval([1, 2], [3, 4, 5]), "same shape"),
    (lambda: rate_interval([1], [3], level=1.0), "level"),
    (lambda: rate_interval([1], [3], level=0.0), "level"),
    (lambda: rate_interval([1], [3], level=math.nan), "level"),
    (lambda: rate_interval([-1], [3]), "successes"),
    (lambda: rate_interval([1], [-3]), "totals"),
    (lambda: rate_interval([4], [3]), "successes exceeds totals"),
    (lambda: rate_interval([np.nan], [3]), "successes"),
    (lambda: rate_interval([1], [np.inf]), "totals"),
    (lambda: rate_interval([1], [3], noise=1.0), "noise"),
    (lambda: rate_interval([1], [3], noise=(1.0, -1.0)), "noise"),
    (lambda: rate_interval([1], [3], noise=(1.0, np.nan)), "noise"),
    (lambda: rate_interval([1], [3], noise=(np.ones(2), 1.0)), "noise"),
    (lambda: replicate_releases([[5, 3]], 10), "noisy"),
    (lambda: replicate_releases(NOISY, 0), "n_draws"),
    (lambda: replicate_releases(NOISY, 2.5), "n_draws"),
    (lambda: suppress_small_cells([1, -2]), "counts"),
    (lambda: suppress_small_cells([1, np.nan]), "counts"),
    (lambda: suppress_small_cells([1, 2], threshold=0), "threshold"),
    (lambda: suppress_small_cells([1, 2], threshold=2.5), "threshold"),
    (lambda: NoisyCounts([1.5], 1.0, "geometric"), "values"),
    (lambda: NoisyCounts([1.5], 1.0, "normal"), "mechanism"),
    (lambda: NoisyCounts.from_dict({"values": [1]}), "record"),
    (lambda: PrivacyBudget.even(1.0, "abc"), "names"),
    (lambda: PrivacyBudget.even(1.0, ["a", "a"]), "names"),
]


@pytest.mark.parametrize(("call", "argument"), BAD_CALLS,
                         ids=[f"{i}-{a}" for i, (_, a) in enumerate(BAD_CALLS)])
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(FairdecideError, match=re.escape(argument)):
        call()


# ---------------------------------------------------------------- the guide


def test_docs_example_runs():
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"^```python[ \t]*\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert blocks, "docs/privacy.md has no python example"
    start = time.perf_counter()
    namespace: dict = {"__name__": "__privacy_docs__"}
    for block in blocks:
        exec(compile(block, str(DOCS), "exec"), namespace)
    assert time.perf_counter() - start < 5
