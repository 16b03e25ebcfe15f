"""optimize_ranking: the best stochastic ranking under exposure and top-share criteria.

A ranking policy is a matrix P of n candidates by k <= n positions, P_ij the probability
that candidate i is shown at position j: rows sum to 1 (k = n; at most 1 when k < n, the
rest being "not selected") and columns to 1 (Singh & Joachims, "Fairness of exposure in
rankings", KDD 2018). The expected utility sum_ij u_i v_j P_ij is linear in P, as are the
criteria of :mod:`fairdecide.assignment.exposure`, so the best policy under them is a
linear program, solved with HiGHS and verified on the returned matrix. A distribution
over deterministic rankings with these marginals (Birkhoff-von Neumann) is what
:meth:`RankingResult.sample` draws from. Under criteria that read only the candidates'
exposures, the program is over the expohedron instead, and its answer is a lottery over
at most G rankings (G groups) from the start (:mod:`._exposure_lp`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fairdecide._common.deprecation import DEPRECATED, renamed
from fairdecide._common.validation import as_float_array, as_real, check_choice
from fairdecide.assignment._criterion import RankingCriterion
from fairdecide.assignment._exposure_lp import solve_exposure
from fairdecide.assignment._ranking_lp import Solved, solve_counts, solve_matrix
from fairdecide.assignment._setup import ranking_setup
from fairdecide.assignment.ranking_result import RankingResult
from fairdecide.exceptions import (
    FairdecideError,
    InfeasibleToleranceError,
    SolverError,
    VerificationError,
)

__all__ = ["RankingResult", "optimize_ranking"]

FORMULATIONS = (None, "counts", "matrix", "exposure")
PROGRAMS = {"counts": solve_counts, "matrix": solve_matrix, "exposure": solve_exposure}


def _formulation(formulation: str | None, crit: list) -> tuple[str, str]:
    """The program to solve and why, from what the criteria declare they read."""
    needs_matrix = [c.label for c in crit if c.space == "matrix"]
    not_exposure = [c.label for c in crit if not c.reads_exposure]
    if formulation == "counts" and needs_matrix:
        raise FairdecideError(f"formulation='counts' cannot take {needs_matrix}: their rows "
                              "need the whole matrix; use formulation='matrix' or None")
    if formulation == "exposure" and not_exposure:
        raise FairdecideError(f"formulation='exposure' cannot take {not_exposure}: they "
                              "read more of the ranking than the candidates' exposures; use "
                              "formulation='counts', 'matrix' or None")
    if formulation is not None:
        return formulation, "asked (formulation=)"
    if not not_exposure:
        return "exposure", "every criterion reads only the candidates' exposures"
    if needs_matrix:
        return "matrix", f"{needs_matrix} need the whole matrix"
    return "counts", f"{not_exposure} read the group-position counts"


def _deviations(solved: Solved, setup: Any, crit: list) -> dict:
    """Each criterion's deviation, from the lottery's mean exposure or from the matrix."""
    if solved.lottery is not None:
        e = solved.lottery.exposure()
        return {c.label: c._exposure_deviation(e, setup) for c in crit}
    return {c.label: c._deviation(solved.P, setup) for c in crit}


def _criteria(criteria: Any) -> list:
    if criteria is None:
        return []
    out = [criteria] if isinstance(criteria, RankingCriterion) else list(criteria) \
        if isinstance(criteria, list | tuple) else None
    if out is None or not all(isinstance(c, RankingCriterion) for c in out):
        raise FairdecideError(
            "criteria must be a ranking criterion (ExposureParity, MeritExposure, TopShare, "
            f"RankingLipschitz) or a list of them, got {criteria!r:.100}")
    names = [c.label for c in out]
    if len(set(names)) < len(names):
        raise FairdecideError(f"criteria have repeated names {names}: give each a distinct "
                              "name=")
    return out


def _epsilon(epsilon: Any, n: int) -> np.ndarray:
    if isinstance(epsilon, Sequence | np.ndarray) and not isinstance(epsilon, str):
        eps = as_float_array(epsilon, "epsilon", ndim=1)
        if len(eps) != n:
            raise FairdecideError(f"epsilon has {len(eps)} tolerances for {n} criteria: "
                                  "give one number, or one per criterion")
        if np.any(eps < 0):
            raise FairdecideError("epsilon must be non-negative")
        return eps
    return np.full(n, as_real(epsilon, "epsilon", low=0.0))


def optimize_ranking(merits: Any, group: Any = None, criteria: Any = None, *,
                     epsilon: float | Sequence[float] = 0.0, positions: Any = None,
                     k: int | None = None, formulation: str | None = None,
                     tol: float = 1e-6, groups: Any = DEPRECATED
                     ) -> RankingResult:
    """The stochastic ranking of highest expected utility whose criteria are within epsilon.

    Maximise U(P) = sum_ij u_i v_j P_ij over the n x k matrices P >= 0 with
    sum_j P_ij = 1 (k = n; <= 1 for a top-k selection, k < n) and sum_i P_ij = 1,
    subject to F_c(P) <= epsilon_c for every criterion c. Without criteria the answer
    is the sort by merit.

    Parameters
    ----------
    merits : array-like of shape (n,)
        u_i, the candidates' merits (relevances, expected worth); finite.
    group : array-like of shape (n,)
        Each candidate's group label (any number of groups); required (the default None
        only lets the deprecated ``groups=`` stand in for it this release).
    criteria : ranking criterion or list of them, optional
        :class:`~fairdecide.assignment.ExposureParity`,
        :class:`~fairdecide.assignment.MeritExposure`,
        :class:`~fairdecide.assignment.TopShare`,
        :class:`~fairdecide.assignment.RankingLipschitz`.
    epsilon : float >= 0 or sequence of them, default=0
        The tolerance of each criterion (one number applies to all), in its own unit.
    positions : array-like of shape (k,), optional
        The position weights v_1 >= v_2 >= ... >= 0 (default: DCG's 1/log2(1 + j));
        ``numpy.ones(k)`` makes the utility the expected merit of a cohort of k.
    k : int, optional
        Number of positions (default n, or len(positions)): k < n is top-k selection.
    formulation : {None, "counts", "matrix", "exposure"}, default=None
        Which program is solved (each by HiGHS; ``solver=`` names an algorithm
        elsewhere in the library, never a formulation). "exposure": the program over
        the candidates' exposures, the expohedron (only criteria that read nothing else:
        ExposureParity, MeritExposure, or none; 10,000 candidates in a fraction of a
        second), whose answer is a lottery over at most G rankings (G groups);
        "counts": the program over the group-position counts (every criterion but
        RankingLipschitz; 1000 x 1000 in about a second); "matrix": the whole program
        over P (n*k variables; needed by RankingLipschitz). None picks "exposure" when
        every criterion reads only exposures, else "counts" when it applies, else
        "matrix", and records why in ``stats["formulation_reason"]``. All give the same
        optimum (Notes).
    tol : float in (0, 0.01], default=1e-6
        Verification tolerance: the returned matrix's row and column sums, its utility
        against the solver's and every deviation against its epsilon are recomputed;
        an error beyond tol raises VerificationError.
    groups : deprecated
        The earlier name of ``group`` (it warns).

    Returns
    -------
    RankingResult

    Raises
    ------
    InfeasibleToleranceError
        No ranking meets the tolerances; the message gives the smallest tolerance (common
        to every criterion) at which one does.

    Notes
    -----
    ExposureParity, MeritExposure and TopShare read P only through the cumulative
    group-position counts C_gj (the expected number of group g's members among the
    first j places). Given the counts, filling each group's places best member first is
    optimal (u_i v_j is supermodular), worth F_g(C), the sum of the group's best C
    merits; summing by parts, U = sum_gj (v_j - v_{j+1}) F_g(C_gj). The "counts"
    program maximises that over the 2 G k counts and hypograph variables, adding the
    pieces of the concave F_g as cuts until none is violated, and rebuilds P from the
    counts (candidates of equal merit and group share one row). The "matrix" program
    is the Singh-Joachims LP itself, with one coupling row per position and group
    defining C. The details are in ``fairdecide.assignment._ranking_lp``.

    ExposureParity and MeritExposure read P only through the exposures e = P v, which
    range over the expohedron, the permutahedron of v (Kletti et al., "Introducing the
    Expohedron for Efficient Pareto-optimal Fairness-Utility Amortizations in Repeated
    Rankings", WSDM 2022), whose vertices are the deterministic rankings. The
    "exposure" program is a master over the weights of rankings, each generated by one
    sort of the candidates by u_i + lambda_g(i) (lambda the master's duals on the
    groups' exposures) until none improves it; its basic optimum weighs at most G
    rankings, so the answer is that lottery, and the matrix is built from it only when
    asked (``RankingResult.matrix``). Candidates of equal merit in one group are listed
    by index in its rankings, each of which stands for the uniform mixture over their
    orders: they share one exposure and one row, as in "counts", and sampling shuffles
    them (:class:`~fairdecide.assignment.RankingLottery`). Details in
    ``fairdecide.assignment._exposure_lp``.

    Examples
    --------
    Four candidates, the two best of group "a"; group "b" must hold at least half of the
    first two places in expectation:

    >>> from fairdecide.assignment import TopShare, optimize_ranking
    >>> res = optimize_ranking([4.0, 3.0, 2.0, 1.0], ["a", "a", "b", "b"],
    ...                        TopShare("b", at_least=0.5, top=2, every_prefix=False))
    >>> res.matrix.round(6).tolist()
    [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    >>> round(res.utility, 4), round(res.unconstrained_utility, 4)
    (7.1925, 7.3235)
    """
    group = renamed("optimize_ranking", "groups", groups, "group", group)
    setup = ranking_setup(merits, group, positions, k)
    crit = _criteria(criteria)
    eps = _epsilon(epsilon, len(crit))
    tol = as_real(tol, "tol", low=0.0, high=0.01, low_open=True)
    check_choice(formulation, "formulation", FORMULATIONS)
    for c, e in zip(crit, eps, strict=True):
        c.check(setup, float(e))
    name, why = _formulation(formulation, crit)
    run = PROGRAMS[name]
    solved = run(setup, crit, eps)
    if not solved.optimal:
        if "infeasible" in solved.status:
            first = run(setup, crit, eps, phase_one=True)
            if first.optimal and (first.P is not None or first.lottery is not None):
                smallest = _deviations(first, setup, crit)
                raise InfeasibleToleranceError(
                    f"no ranking meets every criterion within epsilon {eps.tolist()}; the "
                    f"smallest tolerance common to all criteria is {first.slack:.6g} "
                    f"(deviations there: {smallest})", smallest)
        raise SolverError(f"the ranking program was not solved: {solved.status}")
    if solved.lottery is not None:
        checks = _verify_lottery(setup, solved.lottery, solved.utility, crit, eps, tol)
        utility = float(setup.merits @ solved.lottery.exposure())
    else:
        checks = _verify(setup, solved.P, solved.utility, crit, eps, tol)
        utility = setup.utility(solved.P)
    deviations = _deviations(solved, setup, crit)
    return RankingResult(
        utility=utility, deviations=deviations,
        epsilon=dict(zip(deviations, eps.tolist(), strict=True)), status=solved.status,
        formulation=name, unconstrained_utility=setup.sorted_utility(), merits=setup.merits,
        group=setup.codes, group_labels=setup.labels, positions=setup.positions,
        stats={**solved.stats, **checks, "formulation_reason": why},
        marginals=solved.P, lottery=solved.lottery)


def _verify(setup: Any, P: np.ndarray, solver_utility: float, crit: list, eps: np.ndarray,
            tol: float) -> dict:
    """Recompute the matrix's constraints, utility and deviations; raise beyond tol."""
    rows, cols = P.sum(axis=1), P.sum(axis=0)
    row_err = float(np.max(np.abs(rows - 1.0)) if setup.k == setup.n
                    else max(0.0, float(np.max(rows - 1.0))))
    col_err = float(np.max(np.abs(cols - 1.0)))
    util = setup.utility(P)
    scale = max(1.0, float(np.abs(setup.merits).max() * setup.positions.sum()))
    util_err = abs(util - solver_utility) / scale
    excess = {c.label: c._deviation(P, setup) - e for c, e in zip(crit, eps, strict=True)}
    bad = [f"row sums off by {row_err:.3g}"] if row_err > tol else []
    bad += [f"column sums off by {col_err:.3g}"] if col_err > tol else []
    bad += [f"utility {util:.8g} recomputed against the solver's {solver_utility:.8g}"] \
        if util_err > tol else []
    bad += [f"{name} exceeds its epsilon by {x:.3g}" for name, x in excess.items() if x > tol]
    if bad:
        raise VerificationError("the ranking failed its verification: " + "; ".join(bad))
    return {"row_sum_error": row_err, "column_sum_error": col_err,
            "utility_error": util_err}


def _verify_lottery(setup: Any, lottery: Any, solver_utility: float, crit: list,
                    eps: np.ndarray, tol: float) -> dict:
    """Recompute the lottery's weights, rankings, mean exposure, utility and deviations;
    raise beyond tol."""
    w, orders = lottery.weights, lottery.rankings
    weight_err = float(abs(w.sum() - 1.0)) if len(w) else np.inf
    rankings_ok = bool(len(w)) and bool(
        np.all(np.sort(orders, axis=1) == np.arange(setup.n)[None, :]))
    v = np.r_[setup.positions, np.zeros(setup.n - setup.k)]
    e = np.zeros(setup.n)
    for wr, order in zip(w, orders, strict=True):
        e[order] += wr * v
    util = float(setup.merits @ e)
    scale = max(1.0, float(np.abs(setup.merits).max() * setup.positions.sum()))
    util_err = abs(util - solver_utility) / scale
    excess = {c.label: c._exposure_deviation(e, setup) - x
              for c, x in zip(crit, eps, strict=True)}
    bad = [] if rankings_ok else ["a ranking of the lottery is not a permutation"]
    bad += [f"weights sum to 1 {weight_err:+.3g}"] if weight_err > tol else []
    bad += ["a weight is negative"] if len(w) and w.min() < 0 else []
    bad += [f"utility {util:.8g} recomputed against the solver's {solver_utility:.8g}"] \
        if util_err > tol else []
    bad += [f"{name} exceeds its epsilon by {x:.3g}" for name, x in excess.items() if x > tol]
    if bad:
        raise VerificationError("the ranking failed its verification: " + "; ".join(bad))
    return {"weight_sum_error": weight_err, "utility_error": util_err,
            "n_rankings": len(w)}
