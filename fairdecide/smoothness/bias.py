"""The largest disparity any L-Lipschitz policy can show between two sets (Dwork et
al.'s bias, section 3; :func:`fairdecide.smoothness.parity.worst_case_bias`): an LP over the
pairs, grown by constraint generation from the nearest neighbours, and the transport
distance that bounds it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.tables import result_table
from fairdecide._common.validation import as_float_array, as_int, as_real
from fairdecide.criteria._pairs import (
    METRICS,
    PairMetric,
    nearest_pairs,
    pair_distances,
    violated_pairs,
)
from fairdecide.exceptions import FairdecideError, SolverError
from fairdecide.smoothness.sets import index_set, unit_weights

__all__ = ["BiasResult", "worst_case_bias"]

ALL_PAIRS_N = 200      # up to this many individuals the first LP holds every pair
NEIGHBOURS = 5         # otherwise each individual's nearest neighbours
PER_ROUND = 4          # violated pairs added per individual and round (its worst ones)
TOL = 1e-9             # a pair violated by more than this enters the LP
EMD_MAX_PAIRS = 40_000  # transport distances computed when |S| |T| is at most this


@dataclass(frozen=True, eq=False)
class BiasResult:
    """The largest D_TV(pi(. | S), pi(. | T)) over L-Lipschitz policies, with a policy
    attaining it and its certificate.

    Attributes
    ----------
    value : float
        The worst-case bias, recomputed from ``rows``: mean_S q - mean_T q.
    rows : ndarray of shape (n, n_actions)
        An L-Lipschitz policy attaining it: q on action 0, 1 - q on action 1, 0 elsewhere.
    constant : float
        L.
    max_violation : float
        max over all pairs i < j of D_TV(rows_i, rows_j) - L d(x_i, x_j), from the exact
        all-pairs search (<= 1e-9: the policy is L-Lipschitz, so ``value`` is optimal).
    worst_pair : tuple of int
        The pair attaining ``max_violation``.
    n_pairs, pairs_checked : int
        Pairs in the final LP; pairs the certificate examined (n (n - 1) / 2).
    rounds : int
        LPs solved (constraint generation).
    emd, emd_truncated : float or None
        Earth mover's distance between the weighted distributions on S and T under d,
        and under min(L d, 1); None when |S| |T| > ``EMD_MAX_PAIRS``.
    stats : dict
        Seconds in the LPs and in the pair searches, simplex iterations.
    """

    value: float
    rows: np.ndarray
    constant: float
    max_violation: float
    worst_pair: tuple[int, int]
    n_pairs: int
    pairs_checked: int
    rounds: int
    emd: float | None = None
    emd_truncated: float | None = None
    stats: dict = field(default_factory=dict)

    @property
    def dwork_bound(self) -> float | None:
        """L times the earth mover's distance under d: an upper bound on ``value``."""
        return None if self.emd is None else self.constant * self.emd

    @property
    def certified(self) -> bool:
        """True when the returned policy violates no pair by more than 1e-9."""
        return self.max_violation <= TOL

    def summary(self) -> str:
        """A readable report."""
        st = self.stats
        lines = [
            f"worst-case bias of {self.constant:g}-Lipschitz policies",
            f"  bias          : {self.value:.6g}",
            f"  certificate   : max violation {self.max_violation:.2e} over "
            f"{self.pairs_checked} pairs ({'passed' if self.certified else 'FAILED'})",
            f"  program       : {self.n_pairs} pair constraints, {self.rounds} LP solves",
        ]
        if self.emd is not None:
            lines.append(f"  transport     : L x EMD_d {self.dwork_bound:.6g} (Dwork's bound), "
                         f"EMD_min(Ld,1) {self.emd_truncated:.6g}")
        lines.append(f"  time          : LP {st.get('lp_seconds', np.nan):.3f} s, search "
                     f"{st.get('search_seconds', np.nan):.3f} s")
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame: the bias, its certificate and the transport bounds (as
        :meth:`OptimizeResult.to_frame <fairdecide.OptimizeResult.to_frame>` gives a
        result's numbers)."""
        return result_table([{
            "bias": self.value, "constant": self.constant,
            "max_violation": self.max_violation, "certified": self.certified,
            "pairs_checked": self.pairs_checked, "n_pairs": self.n_pairs,
            "rounds": self.rounds, "dwork_bound": self.dwork_bound,
            "emd_truncated": self.emd_truncated}])

    def __repr__(self) -> str:
        return (f"BiasResult(value={self.value:.4g}, constant={self.constant:g}, "
                f"max_violation={self.max_violation:.2e}, rounds={self.rounds})")


def _metric(metric: Any, weights: Any, matrix: Any) -> PairMetric:
    if not (callable(metric) or (isinstance(metric, str) and metric in METRICS)):
        raise FairdecideError(f"metric must be one of {METRICS} or a callable f(A, B) "
                              f"returning the distance matrix, got {metric!r}")
    for arg, value, kind, what in (("weights", weights, "weighted", "one per feature"),
                                   ("matrix", matrix, "mahalanobis", "(d, d), PSD")):
        if (value is None) == (isinstance(metric, str) and metric == kind):
            raise FairdecideError(
                f"metric={kind!r} needs {arg} ({what}), and {arg} is only used with it "
                f"(got metric={metric!r}, {arg}={'None' if value is None else 'given'}); "
                "the individuals' own weights are weights_rows")
    return PairMetric(metric, weights, matrix)


def _generate(F: np.ndarray, Z: np.ndarray | None, pm: PairMetric, L: float, c: np.ndarray):
    """Constraint generation for max c.q s.t. |q_i - q_j| <= L d_ij, 0 <= q <= 1, held
    as its dual (:class:`~fairdecide.optimize.engine.dual_form.DualForm`), a flow
    problem with one balance row per individual, so its basis has n rows, not one per
    pair (at n = 10,000 it solved in 23 s what the row form took 425 s for). A pair is
    a column pair of the dual, added after the exact search finds it violated, and the
    dual simplex goes on from the last basis."""
    import scipy.sparse as sp

    # heavy (HiGHS): loaded at the first bias computed, not at ``import fairdecide``,
    # which imports this package for fd.parity and fd.meritocracy
    from fairdecide.optimize.engine.chain import Case, highs_method
    from fairdecide.optimize.engine.dual_form import DualForm
    from fairdecide.optimize.engine.rounds import Rounds, unseen_cuts

    n = len(c)
    none = sp.csr_matrix((0, n))
    form = DualForm(-c, np.zeros(n), np.ones(n), none, np.zeros(0), none, np.zeros(0),
                    method=highs_method(Case("master")))
    known = np.zeros((0, 2), dtype=np.int64)
    pairs = (np.stack(np.triu_indices(n, 1), axis=1) if n <= ALL_PAIRS_N
             else nearest_pairs(F, NEIGHBOURS, pm, max_distance=1 / L))
    stats = {"lp_seconds": 0.0, "search_seconds": 0.0, "simplex_iterations": 0}
    rounds = Rounds("bias LP")
    while True:
        r = L * pair_distances(F, pairs, pm, transformed=Z)
        pairs, r = pairs[r < 1], r[r < 1]  # D_TV <= 1: the others never bind
        m = len(pairs)
        if m:  # q_i - q_j <= L d_ij and q_j - q_i <= L d_ij
            rows = np.repeat(np.arange(2 * m), 2)
            cols = np.r_[pairs.ravel(), pairs[:, ::-1].ravel()]
            form.add_rows(sp.csr_matrix((np.tile([1.0, -1.0], 2 * m), (rows, cols)),
                                        shape=(2 * m, n)), np.full(2 * m, -np.inf),
                          np.r_[r, r])
            known = np.concatenate([known, pairs.astype(np.int64)])
        ok, status = form.solve()
        stats["lp_seconds"], stats["simplex_iterations"] = form.seconds, form.iterations
        q = form.values()
        if not ok or abs(c @ q + form.objective) > 1e-7:
            raise SolverError(f"HiGHS stopped with status {status!r} in round "
                              f"{rounds.count + 1} of "
                              "the worst-case bias LP")
        q = np.clip(q, 0.0, 1.0)
        t0 = time.perf_counter()
        # each individual's PER_ROUND most violated pairs not in the LP yet (should those
        # all be in it, violated by its rounding, every violated pair is examined)
        found = violated_pairs(np.c_[q, 1 - q], F, L, pm, threshold=TOL, per_unit=PER_ROUND)
        pairs = unseen_cuts(found.pairs, known)
        if not len(pairs) and found.truncated:
            found = violated_pairs(np.c_[q, 1 - q], F, L, pm, threshold=TOL)
            pairs = unseen_cuts(found.pairs, known)
        stats["search_seconds"] += time.perf_counter() - t0
        if rounds.next(-form.objective, max_violation=float(found.max_violation),
                       violated=bool(len(pairs)), pairs=len(known)):
            return q, found, rounds.count, len(known), stats
        if (why := rounds.stop_reason()) is not None:
            raise SolverError(f"constraint generation for the worst-case bias was {why}")


def _transport(D: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Earth mover's distance min_gamma sum gamma_ij D_ij, marginals a and b."""
    import scipy.sparse as sp

    from fairdecide.optimize.engine.highs_model import HighsModel  # heavy: HiGHS (above)

    ns, nt = D.shape
    A = sp.vstack([sp.kron(sp.eye(ns), np.ones((1, nt))),
                   sp.kron(np.ones((1, ns)), sp.eye(nt))])
    model = HighsModel(D.ravel(), np.zeros(ns * nt), np.full(ns * nt, np.inf), A,
                       np.r_[a, b], np.r_[a, b])
    ok, status = model.solve()
    if not ok:
        raise SolverError(f"the transport LP failed: HiGHS says {status!r}")
    return model.objective


def worst_case_bias(X: Any, S: Any, T: Any, constant: float, metric: Any = "euclidean", *,
                    weights: Any = None, matrix: Any = None, n_actions: int = 2,
                    weights_rows: Any = None) -> BiasResult:
    """The largest parity gap D_TV(pi(. | S), pi(. | T)) of any L-Lipschitz policy.

    It is the value of one LP in n variables,

    .. math:: V = \\max_{q \\in [0, 1]^n} \\sum_{i \\in S} \\frac{w_i q_i}{w(S)} -
       \\sum_{i \\in T} \\frac{w_i q_i}{w(T)} \\quad \\text{s.t.} \\quad
       |q_i - q_j| \\le L d(x_i, x_j) \\;\\; \\forall i < j,

    whatever the number of actions, solved by constraint generation: HiGHS on a subset of
    the pairs (all for n <= 200, else each individual's 5 nearest neighbours under the
    metric), re-solved warm after adding, per individual, its 4 worst pairs the solution
    violates, found by the exact all-pairs search, until no pair is violated by more than
    1e-9. Each round costs one O(n^2) search in blocks; n = 10,000 took 7 rounds and
    55 s (docs/smoothness.md).

    Parameters
    ----------
    X : array-like of shape (n, d) or (n,)
        Features, as the metric should see them; n >= 2.
    S, T : array-like
        Boolean masks of length n or arrays of distinct indices; they may overlap.
    constant : float > 0
        L.
    metric : {"euclidean", "weighted", "mahalanobis"} or callable, default="euclidean"
        d: euclidean; weighted euclidean with ``weights`` (one per feature);
        sqrt((x - y)' M (x - y)) with ``matrix`` M; or f(A, B) -> (len(A), len(B))
        distance matrix (finite, non-negative, symmetric, zero on the diagonal).
    weights, matrix : array-like, optional
        Parameters of the "weighted" and "mahalanobis" metrics.
    n_actions : int >= 2, default=2
        Number of actions of the returned policy (the value does not depend on it).
    weights_rows : array-like of shape (n,), optional
        Non-negative weights of the individuals in pi(. | S) and pi(. | T) (default equal).

    Returns
    -------
    BiasResult
        The value, a maximising policy (q on action 0), its all-pairs certificate, and
        the transport bounds when |S| |T| <= 40,000.

    Notes
    -----
    *The LP is the worst case.* For a policy pi and a set of actions A, q_i = pi(A | x_i)
    lies in [0, 1] and |q_i - q_j| <= D_TV(pi(. | x_i), pi(. | x_j)) <= L d(x_i, x_j), since
    D_TV is the largest difference in probability of an event. So q is feasible and
    pi(A | S) - pi(A | T) = mean_S q - mean_T q <= V; the maximum over A is the policy's
    D_TV(pi(. | S), pi(. | T)) (merging actions into {A, not A} loses nothing for the one
    A attaining it). Conversely an optimal q is the policy pi(0 | x_i) = q_i,
    pi(1 | x_i) = 1 - q_i (other actions 0), whose rows are |q_i - q_j| apart in D_TV: it
    is L-Lipschitz and its parity gap is at least V. Hence the worst case is V for every
    number of actions >= 2; V >= 0 (constant q) and V <= 1.

    *Transport bounds.* For a transport plan gamma between the distributions mu_S and
    mu_T (gamma >= 0, marginals mu_S and mu_T), mean_S q - mean_T q = sum_ij gamma_ij
    (q_i - q_j) <= sum_ij gamma_ij min(L d_ij, 1), so V <= EMD_min(Ld,1)(mu_S, mu_T) <=
    L EMD_d(mu_S, mu_T), Dwork et al.'s bound (2012, theorem 3.3). When d is a
    (pseudo)metric, as the built-in ones are, so is min(L d, 1); the functions q with
    |q_i - q_j| <= min(L d_ij, 1) are, up to a shift into [0, 1], the L-Lipschitz ones in
    [0, 1] (a Lipschitz function on S and T extends to everyone, McShane), and
    Kantorovich-Rubinstein duality gives V = EMD_min(Ld,1)(mu_S, mu_T): the transport LP
    is the dual, an independent certificate of V. In particular V = L EMD_d when
    L d(x_i, x_j) <= 1 for all i in S, j in T. Without the triangle inequality (a
    callable non-metric) only the inequalities hold.

    Examples
    --------
    Four people on a line; S = {0} and T = {3} are 3 apart, so no 0.1-Lipschitz policy
    treats them more than 0.3 apart, and one treats them exactly that far apart:

    >>> import numpy as np
    >>> X = np.arange(4.0)
    >>> res = worst_case_bias(X, S=[0], T=[3], constant=0.1)
    >>> round(res.value, 12), res.certified, res.emd, round(res.dwork_bound, 12)
    (0.3, True, 3.0, 0.3)
    >>> round(worst_case_bias(X, S=[0], T=[3], constant=0.5).value, 12)  # clipped at 1
    1.0
    """
    F = as_float_array(X, "X", ndim=(1, 2))
    F = F[:, None] if F.ndim == 1 else F
    n = len(F)
    if n < 2:
        raise FairdecideError(f"X must hold at least 2 individuals (Lipschitz constraints "
                              f"compare pairs), got {n}")
    L = as_real(constant, "constant", low=0.0, low_open=True)
    k = as_int(n_actions, "n_actions", minimum=2)
    s, t = index_set(S, "S", n), index_set(T, "T", n)
    w = unit_weights(weights_rows, "weights_rows", n, s, t)
    pm = _metric(metric, weights, matrix)
    Z = pm.transform(F)
    if Z is None:
        pm.check_callable(F)
    c = np.zeros(n)
    np.add.at(c, s, w[s] / w[s].sum())
    np.add.at(c, t, -w[t] / w[t].sum())
    q, found, rounds, n_pairs, stats = _generate(F, Z, pm, L, c)
    rows = np.zeros((n, k))
    rows[:, 0], rows[:, 1] = q, 1 - q
    emd = emd_truncated = None
    if len(s) * len(t) <= EMD_MAX_PAIRS:
        grid = np.stack(np.meshgrid(s, t, indexing="ij"), axis=-1).reshape(-1, 2)
        D = pair_distances(F, grid, pm, transformed=Z).reshape(len(s), len(t))
        a, b = w[s] / w[s].sum(), w[t] / w[t].sum()
        emd, emd_truncated = _transport(D, a, b), _transport(np.minimum(L * D, 1.0), a, b)
    return BiasResult(float(c @ q), rows, L, float(found.max_violation), found.worst_pair,
                      n_pairs, found.pairs_checked, rounds, emd, emd_truncated, stats)
