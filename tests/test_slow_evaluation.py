"""Repeated-sampling checks of off-policy intervals, run separately in CI with
``pytest -m slow``. Quick versions on the first repetitions of the same simulations are
in tests/test_offpolicy.py."""

import numpy as np
import pytest

from .test_offpolicy import (
    _cell_runs,
    _group_runs,
    _interval_runs,
)

pytestmark = pytest.mark.slow


def test_interval_coverage_on_the_generator():
    hits, errors, _ = _interval_runs(60)
    for name in hits:
        cover = np.mean(hits[name])
        assert 0.85 <= cover <= 1.0, (name, cover)
        # Unbiased within sampling error of the 60 repetitions.
        err = np.array(errors[name])
        assert abs(err.mean()) <= 4 * err.std() / np.sqrt(len(err)) + 1e-3, name


def test_group_values_and_gap_cover_the_truth():
    # _group_runs also checks, in every repetition, that the overall value is the
    # group-size-weighted mean of the group values.
    hits, gap_hits, _, _ = _group_runs(40)
    assert 0.85 <= np.mean(hits) <= 1.0
    assert 0.85 <= np.mean(gap_hits) <= 1.0


@pytest.mark.parametrize("seed", range(3))
def test_default_nuisances_on_per_cell_tabular_data(seed):
    hits, zs = _cell_runs(100, seed)
    for name in hits:
        cover = np.mean(hits[name])
        assert 0.90 <= cover <= 0.99, (name, cover)
        z = np.asarray(zs[name])
        assert abs(z.mean()) <= 4 / np.sqrt(len(z)), (name, z.mean())


@pytest.mark.parametrize("candidate", [False, True])
@pytest.mark.parametrize("n", [2000, 20000])
def test_deviation_intervals_cover(candidate, n):
    from .test_audit import _deviation_runs

    hits, errors = _deviation_runs(150, n, candidate)
    for name in hits:
        cover = np.mean(hits[name])
        assert 0.88 <= cover <= 1.0, (name, n, cover)
        # The corrected estimate is unbiased within sampling error.
        err = np.array(errors[name])[:, 1]
        assert abs(err.mean()) <= 4 * err.std() / np.sqrt(len(err)) + 0.002, (name, n)


def test_zero_deviation_coverage_and_bias():
    from .test_audit import _zero_deviation_runs

    hits, plug, corrected = _zero_deviation_runs(150, 2000)
    assert np.mean(hits) >= 0.9
    assert corrected.mean() < 0.85 * plug.mean()
