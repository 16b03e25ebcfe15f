"""The pieces of a :class:`~fairdecide.uncertainty.confidence.ConfidenceSet` that are not balls: a
given population checked against the data, and the credible region of a Dirichlet
posterior (:meth:`~fairdecide.uncertainty.confidence.ConfidenceSet.from_posterior`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide._common.validation import (
    as_float_array,
    as_int,
    as_real,
    check_instance,
    check_random_state,
)
from fairdecide.exceptions import FairdecideError
from fairdecide.uncertainty.regions import L1Balls
from fairdecide.worlds.world import TabularWorld

__all__ = ["credible_region", "given_population"]


def credible_region(posterior: Any, delta: Any, population: Any, n_draws: Any,
                    random_state: Any) -> tuple[TabularWorld, L1Balls, float, np.ndarray]:
    """(centre, outcome regions, P(z) radius, P(x | z) radii) of the credible region
    that ``ConfidenceSet.from_posterior`` describes."""
    from scipy import stats

    from fairdecide.models.dirichlet import DirichletPosterior  # heavy: scikit-learn

    check_instance(posterior, "posterior", DirichletPosterior, "a DirichletPosterior")
    if not hasattr(posterior, "counts_") or posterior.factorization != "joint":
        raise FairdecideError(
            "posterior must be a DirichletPosterior(factorization='joint') fitted to "
            "the data")
    delta = as_real(delta, "delta", low=0, high=1, low_open=True, high_open=True)
    alpha = posterior._alpha()
    a_y, a_xz = alpha["p_y"], alpha["p_xz"]
    center = posterior.mean_world()
    known = population is not None
    share = delta if known else delta / 2
    d = 1.0 - (1.0 - share) ** (1.0 / a_y[..., 0].size)
    if a_y.shape[-1] == 2:  # the equal-tailed Beta interval, as the ball around its middle
        lo = stats.beta.ppf(d / 2, a_y[..., 1], a_y[..., 0])
        hi = stats.beta.ppf(1 - d / 2, a_y[..., 1], a_y[..., 0])
        ball_center, radius = np.stack([1 - (lo + hi) / 2, (lo + hi) / 2], axis=-1), hi - lo
    else:
        ball_center, radius = center.p_y, _beta_box_radius(a_y, d)
    n_x, n_z = a_xz.shape
    if known:
        r0, rz = 0.0, np.zeros(n_z)
        p_xz = given_population(population, (n_x, n_z), (center.x_labels,
                                                         center.group_labels))
        center = TabularWorld(p_xz, center.p_y, x_labels=center.x_labels,
                              group_labels=center.group_labels)
    else:
        rng = check_random_state(random_state)
        n_draws = as_int(n_draws, "n_draws", minimum=100)
        d0 = 1.0 - (1.0 - share) ** (1.0 / (1 + n_z))
        r0 = _credible_radius(a_xz.sum(axis=0), d0, n_draws, rng)
        rz = np.array([_credible_radius(a_xz[:, z], d0, n_draws, rng)
                       for z in range(n_z)])
    return center, L1Balls(ball_center, radius), r0, rz


def _beta_box_radius(alpha: np.ndarray, d: float) -> np.ndarray:
    """The L1 radius around the Dirichlet mean c that holds the box of every outcome's
    equal-tailed Beta interval at level 1 - d / m (its marginal; Bonferroni over the m
    outcomes, so the box has posterior probability at least 1 - d): within the simplex
    ||theta - c||_1 = 2 sum_j (theta_j - c_j)^+, at most 2 min(sum_j (hi_j - c_j),
    sum_j (c_j - lo_j))."""
    from scipy import stats

    m = alpha.shape[-1]
    total = alpha.sum(axis=-1, keepdims=True)
    c = alpha / total
    lo = stats.beta.ppf(d / (2 * m), alpha, total - alpha)
    hi = stats.beta.ppf(1 - d / (2 * m), alpha, total - alpha)
    return np.minimum(2.0, 2 * np.minimum((hi - c).sum(axis=-1), (c - lo).sum(axis=-1)))


def given_population(population: Any, shape: tuple[int, int], labels: tuple = ()
                     ) -> np.ndarray:
    """P(x, z) of a given population, checked against the data's shape and (for a
    world) its cell and group labels, ``labels`` = (x_labels, group_labels)."""
    p = population.p_xz if isinstance(population, TabularWorld) else as_float_array(
        population, "population", ndim=2)
    if isinstance(population, TabularWorld) and labels and (
            tuple(population.x_labels), tuple(population.group_labels)) != tuple(
                map(tuple, labels)):
        raise FairdecideError(
            "population's cells and groups must be the data's, with the same labels in "
            f"the same order: got {list(population.x_labels)[:5]}... and "
            f"{list(population.group_labels)}, the data has {list(labels[0])[:5]}... and "
            f"{list(labels[1])}")
    if p.shape != shape:
        raise FairdecideError(
            f"population must be P(x, z) of shape {shape} (the data's cells and groups), "
            f"got {p.shape}")
    if np.any(p < 0) or abs(p.sum() - 1.0) > 1e-6:
        raise FairdecideError("population must be a distribution: non-negative, summing "
                              "to one")
    return p


def _credible_radius(alpha: np.ndarray, d: float, n_draws: int, rng: Any) -> float:
    """The (1 - d) quantile of ||p - mean||_1 under Dirichlet(alpha), by ``n_draws``
    draws (the higher order statistic: never below the empirical quantile)."""
    if len(alpha) < 2:
        return 0.0
    draws = rng.dirichlet(alpha, size=n_draws)
    dist = np.abs(draws - alpha / alpha.sum()).sum(axis=1)
    return float(min(2.0, np.quantile(dist, 1.0 - d, method="higher")))
