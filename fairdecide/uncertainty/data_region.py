"""The frequentist set of :meth:`~fairdecide.uncertainty.confidence.ConfidenceSet.from_data`: its
balls from the data's counts, simultaneous by the union bound.

**Coverage** (:meth:`ConfidenceSet.from_data`). For a multinomial over m outcomes
estimated from n draws, Weissman et al. (2003, "Inequalities for the L1 deviation of the
empirical distribution") bound P(||p_hat - p||_1 >= r) <= (2^m - 2) exp(-n r^2 / 2), so

    r(n, m, d) = sqrt(2 (ln(2^m - 2) - ln d) / n)

holds each ball with probability at least 1 - d, whatever p. The set holds the truth
with probability at least 1 - delta (over the data) by the union bound: each of the C
estimated multinomials (the conditionals with data, and P(z) and each P(x | z) when the
population is estimated) gets d = delta / C. Given the counts, each conditional's draws
are independent multinomial draws, so the bound holds conditionally on which cells were
seen, and so unconditionally. A conditional without data is not estimated at all: its
ball is the whole simplex (r = 2), which spends none of delta. With two outcomes
Weissman's bound is Hoeffding's, loose against the exact binomial (Clopper-Pearson)
interval [lo, hi], which holds with probability at least 1 - d too; the interval is the
L1 ball of radius hi - lo around its midpoint (``ball_center``), and is the default for
two outcomes (:func:`clopper_pearson`). With m > 2 outcomes, ``outcomes=
"clopper-pearson"`` takes each outcome's exact interval at d / m: all m hold at once with
probability at least 1 - d (Bonferroni), and the conditional lies in their box within the
simplex (:class:`~fairdecide.uncertainty.regions.Boxes`). The population's balls stay
Weissman's, whose bound serves any number of cells.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide._common.validation import as_bool, as_real, check_choice
from fairdecide.data.tabular_counts import TabularCounts
from fairdecide.uncertainty.balls import clopper_pearson, weissman_radius
from fairdecide.uncertainty.credible import given_population
from fairdecide.uncertainty.kinds import DATA, POOLED
from fairdecide.uncertainty.regions import Boxes, L1Balls
from fairdecide.worlds.world import TabularWorld

__all__ = ["data_region"]


def data_region(data: Any, problem: Any, delta: Any, population: Any, outcomes: Any,
                pooled: Any) -> dict[str, Any]:
    """The arguments of ``ConfidenceSet(...)`` (centre, outcome regions, population
    radii, delta, method, kind) for ``ConfidenceSet.from_data``."""
    delta = as_real(delta, "delta", low=0, high=1, low_open=True, high_open=True)
    counts = TabularCounts.from_data(data, problem)
    p_xz, p_y = counts.mle_parameters(0.0)
    pooled = as_bool(pooled, "pooled")
    n_y = counts.n_y.sum(axis=1, keepdims=True) if pooled else counts.n_y
    n_c = n_y.sum(axis=-1)
    n_x, n_z = p_xz.shape
    if pooled:  # the cell's frequencies (the whole data's for a cell never seen)
        tot = np.maximum(n_c[..., None], 1)
        p_y = np.where(n_c[..., None] > 0, n_y / tot,
                       p_y.mean(axis=1, keepdims=True))
    known = population is not None
    if known:
        p_xz = given_population(population, p_xz.shape,
                                (counts.x_labels, counts.group_labels))
    estimated = 0 if known else (n_z > 1) + n_z * (n_x > 1)
    d = delta / max(int(np.count_nonzero(n_c)) + estimated, 1)
    check_choice(outcomes, "outcomes", ("auto", "weissman", "clopper-pearson"))
    m = problem.n_outcomes
    if m == 2 and outcomes != "weissman":  # one exact interval, the ball around its middle
        lo, hi = clopper_pearson(n_y[..., 1], n_c, d)
        parts, how = (L1Balls, np.stack([1 - (lo + hi) / 2, (lo + hi) / 2], axis=-1),
                      hi - lo), "Clopper-Pearson intervals"
    elif outcomes == "clopper-pearson":  # each outcome's exact interval at d / m: a box
        lo, hi = clopper_pearson(n_y, n_c[..., None], d / m)
        parts, how = (Boxes, lo, hi), ("Clopper-Pearson boxes (each outcome's exact "
                                       "interval, Bonferroni over the outcomes)")
    else:
        parts, how = (L1Balls, p_y, weissman_radius(n_c, m, d)), "Weissman L1 balls"
    if known:
        r0, rz = 0.0, np.zeros(n_z)
    else:
        n_group = counts.n_xz.sum(axis=0)
        r0 = float(weissman_radius(n_group.sum(), n_z, d)) if n_z > 1 else 0.0
        rz = weissman_radius(n_group, n_x, d) if n_x > 1 else np.zeros(n_z)
    if pooled:  # every group of a cell shares the cell's region
        p_y = np.repeat(p_y, n_z, axis=1)
        parts = (parts[0], *(np.repeat(a, n_z, axis=1) for a in parts[1:]))
        how += " pooled over the groups of a cell (group-blind policies)"
    center = TabularWorld(p_xz, p_y, x_labels=counts.x_labels,
                          group_labels=counts.group_labels)
    method = (f"{how} for the outcomes, "
              f"{'the population given' if known else 'Weissman L1 balls for the population'}"
              ", union bound")
    return {"center": center, "outcomes": parts[0](*parts[1:]),
            "group_radius": r0, "cell_radius": rz, "delta": delta, "method": method,
            "kind": POOLED if pooled else DATA}
