"""A fair randomised matching: a fractional matching X that maximises expected utility.

X[i, j] is the probability that candidate i gets programme j. The linear program is

    max  sum_ij u_ij X_ij
    s.t. sum_j X_ij <= 1 (each candidate at most once),  sum_i X_ij <= q_j (capacities),
         X_ij = 0 unless (i, j) is mutually acceptable,
         group criteria (each a linear row over the group rates
             r_gj = (1 / n_g) sum_{i in g} X_ij,   r_g = sum_j r_gj):
             |r_g - r_h| <= rate_gap,  |r_gj - r_hj| <= programme_gap,
             sum_{i in g} X_ij >= s_g sum_i X_ij  (a minimum share s_g of group g),
         and, with ``stability=True``, X in the convex hull of the stable matchings
         (ex-ante stable), a lottery over stable matchings.

Without stability the columns are X's entries. With it they are the rotations of the
market's stable matchings (:mod:`fairdecide.assignment._rotations`, each programme
cloned into q_j seats, :mod:`fairdecide.assignment._seats`): y_rho, the probability
that rotation rho is eliminated, under one row y_later <= y_earlier per precedence pair,
and X affine in y. That is the same polytope as the Vande Vate-Rothblum rows (one per
acceptable candidate-seat pair) with a few hundred columns: a market of 1000 candidates
and 50 programmes with complete lists has 301 rotations, where those rows took 158,577
columns and HiGHS did not finish in 14 minutes (benchmarks/results/matching.txt).

With no group criterion, stability on and a utility increasing in each candidate's
preferences, the optimum is the candidate-optimal stable matching, which deferred
acceptance finds. Every stable matching matches the same candidates (the "rural
hospitals" theorem), so under stability each group's overall rate r_g is the same at
every feasible X: only the rates per programme and the shares can move.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairdecide._common.deprecation import DEPRECATED, renamed
from fairdecide._common.validation import as_bool, as_float_array, as_real
from fairdecide.assignment._rotations import rotations
from fairdecide.assignment.result import MatchingResult, check_result
from fairdecide.assignment.stable import MatchingMarket, deferred_acceptance
from fairdecide.exceptions import FairdecideError, InfeasibleToleranceError, SolverError
from fairdecide.labels import Labels, one_dimensional
from fairdecide.optimize.engine.highs_model import HighsModel

__all__ = ["follows_preferences", "optimize_matching", "rank_utility"]

def follows_preferences(market: MatchingMarket, U: np.ndarray) -> bool:
    """Whether every candidate's utility ``U[i, j]`` never rises down her preference list
    over the programmes acceptable to both sides: then, under stability and without a
    group criterion, deferred acceptance's candidate-optimal matching is optimal (each
    candidate gets her best stable programme, and every stable matching matches the same
    candidates), and no program is solved.

    Examples
    --------
    >>> import fairdecide as fd
    >>> market = fd.MatchingMarket([[1, 0], [0]], [[0, 1], [0]], [1, 1])
    >>> follows_preferences(market, rank_utility(market))
    True
    >>> follows_preferences(market, np.array([[2.0, 1.0], [1.0, 0.0]]))
    False
    """
    m = market.n_programmes
    order = np.argsort(np.where(market.acceptable, market.candidate_rank, m + 1), axis=1,
                       kind="stable")
    u = np.take_along_axis(U, order, axis=1)
    both = np.take_along_axis(market.acceptable, order, axis=1)
    rises = (u[:, 1:] > u[:, :-1]) & both[:, 1:]  # acceptable ones come first
    return not bool(rises.any())


def rank_utility(market: MatchingMarket) -> np.ndarray:
    """The default utility: u_ij = m - rank_i(j) for an acceptable pair (m for a
    candidate's first choice, m - 1 for her second, ...), 0 elsewhere; being unmatched
    is worth 0, below every acceptable programme.

    Examples
    --------
    >>> import fairdecide as fd
    >>> market = fd.MatchingMarket([[1, 0], [0]], [[0, 1], [0]], [1, 1])
    >>> fd.assignment.rank_utility(market)
    array([[1., 2.],
           [2., 0.]])
    """
    if not isinstance(market, MatchingMarket):
        raise FairdecideError(
            f"market must be a MatchingMarket, got {type(market).__name__}")
    m = market.n_programmes
    return np.where(market.acceptable, m - market.candidate_rank, 0).astype(float)


def _groups(group: Any, n: int) -> tuple[np.ndarray, tuple]:
    arr = one_dimensional(group, "group")
    if len(arr) != n:
        raise FairdecideError(
            f"group must hold one group label per candidate ({n}), got {len(arr)}")
    codes, labels = Labels.factorize(arr, "group")
    return np.asarray(codes, dtype=np.int64), tuple(labels)


def _min_share(min_share: Any, labels: tuple) -> dict[int, float]:
    if not isinstance(min_share, Mapping):
        raise FairdecideError(
            "min_share must be a mapping {group label: minimum share in [0, 1]}, got "
            f"{type(min_share).__name__}")
    out = {}
    for g, s in min_share.items():
        if g not in labels:
            raise FairdecideError(
                f"min_share names group {g!r}, not one of the groups {list(labels)}")
        out[labels.index(g)] = as_real(s, f"min_share[{g!r}]", 0.0, 1.0)
    return out


def _group_rows(lp: _Program, codes: np.ndarray, n_groups: int, m: int,
                rate_gap: float | None, programme_gap: float | None,
                shares: dict[int, float], shared_gap: bool):
    """Rows over [LP columns, r (n_groups x m rates), t (one, only if shared_gap)]:
    (A, lo, hi). With ``shared_gap`` both gaps are bounded by the variable t instead."""
    size = np.bincount(codes, minlength=n_groups).astype(float)
    n_cols = r0 = len(lp.c)
    ncol = n_cols + n_groups * m + (1 if shared_gap else 0)
    t = ncol - 1
    rows: list[sp.spmatrix] = []
    lo: list[np.ndarray] = []
    hi: list[np.ndarray] = []
    gm = np.arange(n_groups * m)
    g_of, _j_of = gm // m, gm % m
    # n_g r_gj - sum_{i in g} X_ij = 0, X = X0 + Xmap . columns
    n = len(codes)
    to_groups = sp.csr_matrix((np.ones(n * m), (np.repeat(codes, m) * m + np.tile(
        np.arange(m), n), np.arange(n * m))), shape=(n_groups * m, n * m))
    define = sp.hstack([-(to_groups @ lp.Xmap), sp.diags(size[g_of]),
                        sp.csr_matrix((n_groups * m, ncol - n_cols - n_groups * m))])
    rows.append(define)
    lo.append(to_groups @ lp.X0)
    hi.append(to_groups @ lp.X0)
    g, h = np.triu_indices(n_groups, 1)
    for gap, per_prog in ((programme_gap, True), (rate_gap, False)):
        if gap is None or not len(g):
            continue
        if per_prog:
            k = np.arange(len(g) * m)
            gg, hh, jj = np.repeat(g, m), np.repeat(h, m), np.tile(np.arange(m), len(g))
            r_ = np.r_[k, k]
            c_ = np.r_[r0 + gg * m + jj, r0 + hh * m + jj]
        else:
            k = np.repeat(np.arange(len(g)), m)
            jj = np.tile(np.arange(m), len(g))
            r_ = np.r_[k, k]
            c_ = np.r_[r0 + np.repeat(g, m) * m + jj, r0 + np.repeat(h, m) * m + jj]
        nr = int(k.max()) + 1
        diff = sp.coo_matrix((np.r_[np.ones(len(k)), -np.ones(len(k))], (r_, c_)),
                             shape=(nr, ncol))
        if shared_gap:  # diff - t <= 0 and diff + t >= 0
            tcol = sp.coo_matrix((np.ones(nr), (np.arange(nr), np.full(nr, t))),
                                 shape=(nr, ncol))
            rows += [diff - tcol, diff + tcol]
            lo += [np.full(nr, -np.inf), np.zeros(nr)]
            hi += [np.zeros(nr), np.full(nr, np.inf)]
        else:
            rows.append(diff)
            lo.append(np.full(nr, -gap))
            hi.append(np.full(nr, gap))
    for gc, s in shares.items():  # n_g r_gj - s sum_h n_h r_hj >= 0
        jj = np.arange(m)
        hh = np.arange(n_groups)
        r_ = np.r_[jj, np.repeat(jj, n_groups)]
        c_ = np.r_[r0 + gc * m + jj, r0 + np.tile(hh, m) * m + np.repeat(jj, n_groups)]
        v = np.r_[size[gc] * np.ones(m), -s * np.tile(size, m)]
        rows.append(sp.coo_matrix((v, (r_, c_)), shape=(m, ncol)))
        lo.append(np.zeros(m))
        hi.append(np.full(m, np.inf))
    return sp.vstack(rows).tocsr(), np.concatenate(lo), np.concatenate(hi)


@dataclass
class _Program:
    """The matching program over its columns: X = X0 + Xmap . columns (n x m, flat), the
    seats likewise (None without stability), costs c (minimised; the utility is
    u0 - c . columns), bounds and rows lo <= A . columns <= hi."""

    X0: np.ndarray
    Xmap: sp.csr_matrix
    seats0: np.ndarray | None
    seats_map: sp.csr_matrix | None
    c: np.ndarray
    u0: float
    lb: np.ndarray
    ub: np.ndarray
    A: sp.csr_matrix
    lo: np.ndarray
    hi: np.ndarray


def _program(market: MatchingMarket, U: np.ndarray, stability: bool, best: np.ndarray
             ) -> _Program:
    """Without stability: one column per acceptable pair under the candidates' and the
    capacities' rows. With it: one column per rotation of the seat market
    (:mod:`fairdecide.assignment._rotations`), the probability that it is eliminated,
    under the rotation poset's precedence rows (y_later - y_earlier <= 0)."""
    n, m = market.n_candidates, market.n_programmes
    if stability:
        rot = rotations(market, best, deferred_acceptance(market, "programmes"))
        X0, Xmap, seats0, seats_map, A = rot.lottery(market, best)
        u, R, k = U.ravel(), rot.n_rotations, A.shape[0]
        return _Program(X0, Xmap, seats0, seats_map, -(Xmap.T @ u), float(u @ X0),
                        np.zeros(R), np.ones(R), A, np.full(k, -np.inf), np.zeros(k))
    pi, pj = np.nonzero(market.acceptable)
    k = np.arange(len(pi))
    A = sp.coo_matrix((np.ones(2 * len(pi)), (np.r_[pi, n + pj], np.r_[k, k])),
                      shape=(n + m, len(pi))).tocsr()
    Xmap = sp.csr_matrix((np.ones(len(pi)), (pi * m + pj, k)), shape=(n * m, len(pi)))
    return _Program(np.zeros(n * m), Xmap, None, None, -U[pi, pj], 0.0, np.zeros(len(pi)),
                    np.ones(len(pi)), A, np.full(n + m, -np.inf),
                    np.r_[np.ones(n), market.capacities.astype(float)])


def _model(lp: _Program, codes: np.ndarray, G: int, m: int, rate_gap: float | None,
           programme_gap: float | None, shares: dict[int, float], shared: bool,
           time_limit: float | None):
    """The HighsModel of :func:`_program`'s rows plus the group rows (``shared``: the
    program of the smallest gap t), solved by HiGHS's dual simplex."""
    ncols = len(lp.c)
    extra = G * m + (1 if shared else 0)
    Ag, glo, ghi = _group_rows(lp, codes, G, m, rate_gap, programme_gap, shares, shared)
    cc = np.r_[np.zeros(ncols), np.zeros(extra)] if shared else np.r_[lp.c, np.zeros(extra)]
    if shared:
        cc[-1] = 1.0
    AA = sp.vstack([sp.hstack([lp.A, sp.csr_matrix((lp.A.shape[0], extra))]), Ag]).tocsr()
    return HighsModel(cc, np.r_[lp.lb, np.zeros(extra)], np.r_[lp.ub, np.ones(extra)], AA,
                      np.r_[lp.lo, glo], np.r_[lp.hi, ghi], time_limit=time_limit)


def optimize_matching(market: MatchingMarket, utility: Any = None, group: Any = None, *,
                      rate_gap: float | None = None, programme_gap: float | None = None,
                      min_share: Mapping[Any, float] | None = None, stability: bool = True,
                      time_limit: float | None = None, groups: Any = DEPRECATED
                      ) -> MatchingResult:
    """The randomised matching of largest expected utility under capacities, group
    criteria and (ex-ante) stability.

    Solves the linear program of :mod:`fairdecide.assignment.matching_lp` (module docstring)
    with HiGHS and verifies the answer independently of the solver: X's row and column
    sums, the group rates and every stable-matching row of the seat market are recomputed
    from the returned matrices (:class:`~fairdecide.assignment.MatchingResult`).

    Parameters
    ----------
    market : MatchingMarket
    utility : array-like of shape (n, m), optional
        u_ij, the value of giving candidate i programme j (unmatched is 0). Default
        :func:`rank_utility`: m - rank_i(j).
    group : array-like of shape (n,), optional
        Each candidate's group label; needed by the group criteria.
    rate_gap : float, optional
        Bound on the difference between any two groups' rates of being matched at all.
    programme_gap : float, optional
        Bound on the difference between any two groups' rates r_gj of getting programme
        j (share of the group's candidates), for every programme j.
    min_share : mapping {group label: share}, optional
        Each programme's expected intake holds at least this share of the group.
    stability : bool, default True
        Keep X in the convex hull of the stable matchings (ex-ante stability).
    time_limit : float, optional
        Seconds allowed to the solver.
    groups : deprecated
        The earlier name of ``group`` (it warns).

    Returns
    -------
    MatchingResult

    Raises
    ------
    InfeasibleToleranceError
        When no matching meets the criteria; ``smallest`` holds the smallest gap that
        rate_gap and programme_gap could share (with the other constraints).

    Examples
    --------
    One place, three candidates who all want it, the first two in group "a": equal
    rates for both groups give the place to candidate 2 with probability 1/3 (the
    only stable matching gives it to candidate 0, so this needs ``stability=False``).

    >>> import fairdecide as fd

    >>> market = fd.MatchingMarket([[0], [0], [0]], [[0, 1, 2]], capacities=[1])
    >>> res = fd.optimize_matching(market, group=["a", "a", "b"], programme_gap=0.0,
    ...                            stability=False)
    >>> round(float(res.X.sum()), 6), round(float(res.X[2, 0]), 6)
    (1.0, 0.333333)
    >>> draws = res.sample(10_000, random_state=0)   # whole matchings, marginals X
    >>> int((draws >= 0).sum(axis=1).max()), round(float((draws[:, 2] == 0).mean()), 2)
    (1, 0.33)
    >>> fd.optimize_matching(market, group=["a", "a", "b"], programme_gap=0.0)
    Traceback (most recent call last):
    ...
    fairdecide.exceptions.InfeasibleToleranceError: no stable ... they can share is 0.5. ...
    """
    import time

    group = renamed("optimize_matching", "groups", groups, "group", group)
    if not isinstance(market, MatchingMarket):
        raise FairdecideError(
            f"market must be a MatchingMarket, got {type(market).__name__}")
    n, m = market.n_candidates, market.n_programmes
    if utility is None:
        U = rank_utility(market)
    else:
        U = as_float_array(utility, "utility", ndim=2)
        if U.shape != (n, m):
            raise FairdecideError(
                f"utility must have shape (n candidates, m programmes) = ({n}, {m}), got "
                f"{U.shape}")
        U = np.where(market.acceptable, U, 0.0)
    stability = as_bool(stability, "stability")
    rate_gap = None if rate_gap is None else as_real(rate_gap, "rate_gap", 0.0)
    programme_gap = None if programme_gap is None else as_real(
        programme_gap, "programme_gap", 0.0)
    if time_limit is not None:
        time_limit = as_real(time_limit, "time_limit", 0.0, low_open=True)
    criteria = rate_gap is not None or programme_gap is not None or min_share is not None
    if criteria and group is None:
        raise FairdecideError(
            "group is needed by rate_gap, programme_gap and min_share: give each "
            "candidate's group label")
    if group is not None:
        codes, labels = _groups(group, n)
    else:
        codes, labels = np.zeros(n, dtype=np.int64), (None,)
    shares = _min_share(min_share, labels) if min_share is not None else {}
    t0 = time.perf_counter()
    best = deferred_acceptance(market)
    if stability and not criteria and follows_preferences(market, U):
        X = np.zeros((n, m))
        matched = best >= 0
        X[np.flatnonzero(matched), best[matched]] = 1.0
        return check_result(
            market=market, X=X, seats=None, utility_matrix=U, groups=codes,
            group_labels=labels if group is not None else (), rate_gap=None,
            programme_gap=None, min_share={}, stability=True, da=best,
            objective=float((X * U).sum()), status="optimal",
            seconds=time.perf_counter() - t0,
            method="deferred acceptance (no program: the utility follows the candidates' "
                   "preferences)")
    lp = _program(market, U, stability, best)
    G = len(labels)
    method = ("dual simplex over the rotations of the stable matchings" if stability
              else "dual simplex")

    def solve(shared: bool):
        model = _model(lp, codes, G, m, rate_gap, programme_gap, shares, shared,
                       time_limit)
        return model, *model.solve()

    model, ok, status = solve(False)
    if not ok:
        if "infeasible" not in status:
            raise SolverError(f"the matching program was not solved: HiGHS says {status!r}")
        smallest: dict[str, float] = {}
        if rate_gap is not None or programme_gap is not None:
            gmodel, gok, _ = solve(True)
            if gok:
                t = float(gmodel.values()[-1])
                smallest = {k: t for k, v in (("rate_gap", rate_gap),
                                              ("programme_gap", programme_gap)) if v is not None}
        what = (f"the smallest gap they can share is {next(iter(smallest.values())):.6g}"
                if smallest else "min_share cannot be met with the capacities"
                + (" and stability" if stability else ""))
        raise InfeasibleToleranceError(
            f"no {'stable ' if stability else ''}randomised matching meets the group "
            f"criteria: {what}. Loosen rate_gap / programme_gap / min_share"
            + (", or set stability=False" if stability else ""), smallest)
    y = model.values()[:len(lp.c)]
    X = np.clip(lp.X0 + lp.Xmap @ y, 0.0, 1.0).reshape(n, m)
    seats = None
    if stability:
        seats = np.clip(lp.seats0 + lp.seats_map @ y, 0.0, 1.0).reshape(n, -1)
    seconds = time.perf_counter() - t0
    return check_result(
        market=market, X=X, seats=seats, utility_matrix=U, groups=codes,
        group_labels=labels if group is not None else (), rate_gap=rate_gap,
        programme_gap=programme_gap, min_share={labels[g]: s for g, s in shares.items()},
        stability=stability, da=best, objective=lp.u0 - model.objective, status=status,
        seconds=seconds, method=method)
