"""Individual fairness: a policy that treats similar individuals similarly.

A policy is L-Lipschitz with respect to a distance d between individuals (Dwork et al.
2012, "fairness through awareness"; the book's "fairness as smoothness") when

    D_TV(pi(. | x_i), pi(. | x_j)) <= L d(x_i, x_j)    for every pair i < j.

:class:`Lipschitz` measures a policy by its largest violation over all n (n - 1) / 2
pairs of a fixed population (a :class:`~fairdecide.SampleWorld`), computed exactly by the
blocked all-pairs search of :mod:`fairdecide.criteria._pairs`, and writes the pairs'
rows into the optimisation program. The pairs are too many to write at once beyond a few
thousand people, so by default the criterion declares its rows as *cuts*: the
constraint-generation route (:mod:`fairdecide.optimize.engine.generation`) starts from the
nearest-neighbour pairs, adds the pairs the current policy violates, re-solves warm, and
certifies the final policy against every pair.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairdecide._common.validation import (
    as_float_array,
    as_int,
    as_real,
    canonical,
    check_instance,
)
from fairdecide.criteria._lipschitz_softmax import softmax_bound, softmax_constraints
from fairdecide.criteria._pair_rows import write_pair_rows
from fairdecide.criteria._pairs import (
    METRICS,
    PairMetric,
    PairSearch,
    nearest_pairs,
    pair_distances,
    pair_keys,
    violated_pairs,
)
from fairdecide.criteria.base import Capabilities, Criterion, CutSearch, Expansion, ProgramBlock
from fairdecide.exceptions import FairdecideError

if TYPE_CHECKING:
    from fairdecide.data.units import Units
    from fairdecide.problem import DecisionProblem
    from fairdecide.worlds.table import DecisionTable

__all__ = ["Lipschitz"]

#: Writing every pair at once beyond this many pairs is refused (use generation).
MAX_WRITTEN_PAIRS = 5_000_000
_CERTIFICATES: dict[bytes, PairSearch] = {}


@dataclass(frozen=True, eq=False)
class Lipschitz(Criterion):
    """Individual fairness: D_TV(pi(. | x_i), pi(. | x_j)) <= L d(x_i, x_j) for all pairs.

    The deviation of a policy is its largest violation over all pairs of individuals,

        F = max(0, max_{i < j} [D_TV(pi(. | x_i), pi(. | x_j)) - L d(x_i, x_j)]),

    with D_TV(p, q) = sum_a |p_a - q_a| / 2. F = 0 exactly when the policy is L-Lipschitz
    on the population; ``epsilon`` bounds F (so ``epsilon=0`` is the exact constraint and
    a positive epsilon allows D_TV <= L d + epsilon), and ``lam`` penalises it. It is
    computed by an exact blocked search over all n (n - 1) / 2 pairs (a matrix-product
    screen whose candidates are recomputed from the feature differences), never from a
    solver's constraints.

    Parameters
    ----------
    metric : {"euclidean", "weighted", "mahalanobis"} or callable, default="euclidean"
        The distance d on the world's features (``SampleWorld.X``; scale them as the
        distance should see them). "weighted": sqrt(sum_k w_k (x_k - y_k)^2) with
        ``weights`` w >= 0; "mahalanobis": sqrt((x - y)' M (x - y)) with a symmetric
        positive semi-definite ``matrix`` M; a callable ``f(A, B)`` returns the
        (len(A), len(B)) distance matrix and is checked on a sample (finite,
        non-negative, symmetric, zero on the diagonal).
    constant : float > 0, default=1.0
        L.
    weights, matrix : array-like, optional
        The metric's parameters.
    pairs : None, "all" or array-like of shape (k, 2), default=None
        None: every pair, generated as needed and certified (the constraint-generation
        route); "all": every pair written into one program (small populations, or as a
        check); an array: only these pairs of individuals (a similarity graph); the
        deviation then covers only them.
    n_neighbors : int, default=5
        The generation route starts from each individual's nearest neighbours.
    name : str, optional
        Label in results (default "lipschitz").

    Notes
    -----
    A pair with L d(x_i, x_j) >= 1 can never be violated (D_TV <= 1), so its rows are
    not written. Individuals sharing one free policy row (``group_blind`` with equal
    features) are trivially similar.

    Examples
    --------
    >>> from fairdecide import DecisionProblem, Lipschitz, SampleWorld, optimize_policy
    >>> problem = DecisionProblem.classification(2)
    >>> world = SampleWorld(X=[[0.0], [0.5], [3.0]], z=[0, 1, 1],
    ...                     p_y=[[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
    >>> res = optimize_policy(problem, world, Lipschitz(constant=1.0), epsilon=0.0)
    >>> res.policy.table[:2].round(6).tolist()  # D_TV <= 1.0 * 0.5
    [[1.0, 0.0], [0.5, 0.5]]
    >>> round(res.utility, 4), res.deviations["lipschitz"] <= 1e-9
    (0.6333, True)
    """

    metric: str | Callable[[np.ndarray, np.ndarray], Any] = "euclidean"
    constant: float = 1.0
    weights: Any = None
    matrix: Any = None
    pairs: Any = None
    n_neighbors: int = 5
    name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "constant", as_real(self.constant, "constant", low=0.0,
                                                     low_open=True))
        if not callable(self.metric):
            metric = canonical(self.metric, METRICS)  # in any case, as every string option
            if metric is None:
                raise FairdecideError(
                    f"metric must be one of {METRICS} or a callable f(A, B) returning the "
                    f"distance matrix, got {self.metric!r}")
            object.__setattr__(self, "metric", metric)
        if (self.weights is not None) != (self.metric == "weighted"):
            raise FairdecideError("give weights exactly when metric='weighted'")
        if (self.matrix is not None) != (self.metric == "mahalanobis"):
            raise FairdecideError("give matrix exactly when metric='mahalanobis'")
        if self.metric in ("weighted", "mahalanobis"):
            self.pair_metric.checked()
        object.__setattr__(self, "n_neighbors",
                           as_int(self.n_neighbors, "n_neighbors", minimum=1))
        if self.name is not None:
            check_instance(self.name, "name", str, "a string (the label in results) or None")
        if self.pairs is not None and not (isinstance(self.pairs, str)
                                           and self.pairs == "all"):
            object.__setattr__(self, "pairs", _as_pairs(self.pairs))

    @property
    def label(self) -> str:
        """Name used in results and tables."""
        return self.name or "lipschitz"

    def __repr__(self) -> str:
        extra = "" if self.pairs is None else (
            ", pairs='all'" if isinstance(self.pairs, str) else f", pairs=<{len(self.pairs)}>")
        metric = getattr(self.metric, "__name__", repr(self.metric))
        return f"Lipschitz(metric={metric}, constant={self.constant:g}{extra})"

    def capabilities(self, problem: DecisionProblem) -> Capabilities:
        """Reads the policy rows and the units' features; linear; by default its pair
        rows are cuts, generated as they are violated. Never reads the outcome."""
        return Capabilities(reads="rows", linear=True, program=True, cuts=self.pairs is None,
                            parametric=self.pairs is None, outcome_free=True)

    # ------------------------------------------------------------------ measuring
    @property
    def pair_metric(self) -> PairMetric:
        """The distance as a :class:`~fairdecide.criteria._pairs.PairMetric`."""
        return PairMetric(self.metric, self.weights, self.matrix)

    def certificate(self, rows: Any, features: Any) -> PairSearch:
        """The exact all-pairs search of ``rows`` (n, n_actions) at ``features`` (n, d):
        the largest violation, its pair and how many pairs were examined (cached for
        the same rows, features and metric)."""
        P = as_float_array(rows, "rows", ndim=2)
        X = _features(features)
        key = self._key(P, X)
        found = _CERTIFICATES.get(key)
        if found is None:
            # no violation exceeds 1 (D_TV <= 1): only the largest is computed exactly
            found = violated_pairs(P, X, self.constant, self.pair_metric, threshold=1.0)
            self._remember(key, found)
        return found

    def _remember(self, key: bytes, found: PairSearch) -> None:
        if len(_CERTIFICATES) >= 8:
            _CERTIFICATES.pop(next(iter(_CERTIFICATES)))
        _CERTIFICATES[key] = PairSearch(found.max_violation, found.worst_pair,
                                        np.zeros((0, 2), dtype=int), np.zeros(0),
                                        found.pairs_checked)

    def deviation_from_table(self, table: DecisionTable, problem: DecisionProblem) -> float:
        """The largest violation max(0, D_TV - L d) over the pairs (all, or the given
        ones), from the table's policy rows and its units' features."""
        if table.rows is None or table.units is None:
            raise FairdecideError(
                "Lipschitz fairness reads the policy rows and the units' features; this "
                "decision table has neither (a table built from a group marginal)")
        X = _features(table.units.features)
        if self.pairs is None or isinstance(self.pairs, str):
            return max(0.0, self.certificate(table.rows, X).max_violation)
        pairs = self._checked_pairs(len(X))
        if not len(pairs):
            return 0.0
        P = table.rows
        tv = np.abs(P[pairs[:, 0]] - P[pairs[:, 1]]).sum(axis=1) / 2
        d = pair_distances(X, pairs, self.pair_metric)
        return max(0.0, float((tv - self.constant * d).max()))

    # ------------------------------------------------------------------ program rows
    def add_rows(self, block: ProgramBlock, how: Expansion) -> None:
        """Rows D_TV(pi_i, pi_j) - L d_ij <= f for each pair (exact: the criterion is
        linear in the policy rows)."""
        X = _features(block.units.features)
        n = len(X)
        if self.pairs is None or isinstance(self.pairs, str):
            if n * (n - 1) // 2 > MAX_WRITTEN_PAIRS:
                raise FairdecideError(
                    f"writing all {n * (n - 1) // 2:,} pairs of {n} individuals into one "
                    "program is too large; use pairs=None (constraint generation)")
            iu = np.triu_indices(n, 1)
            pairs = np.stack(iu, axis=1)
        else:
            pairs = self._checked_pairs(n)
        d = pair_distances(X, pairs, self.pair_metric) if len(pairs) else np.zeros(0)
        write_pair_rows(block, pairs, self.constant * d)

    # ------------------------------------------------------------------ generation
    def initial_cuts(self, units: Units) -> np.ndarray:
        """Each individual's ``n_neighbors`` nearest neighbours (pairs with L d < 1)."""
        X = _features(units.features)
        if callable(self.metric):
            self.pair_metric.check_callable(X)
        return nearest_pairs(X, self.n_neighbors, self.pair_metric,
                             max_distance=1.0 / self.constant)

    def violated_cuts(self, rows: np.ndarray, units: Units, threshold: float,
                      per_unit: int, touching: np.ndarray | None = None) -> CutSearch:
        """Pairs violated by more than ``threshold`` (each individual's ``per_unit`` most
        violated), with the exact largest violation over all pairs (over the pairs with
        an end in ``touching``, when given)."""
        X = _features(units.features)
        P = as_float_array(rows, "rows", ndim=2)
        found = violated_pairs(P, X, self.constant, self.pair_metric,
                               threshold=threshold, per_unit=per_unit, touching=touching)
        if touching is None:  # the same exact maximum as certificate()
            self._remember(self._key(P, X), found)
        pending = None
        if found.truncated:
            pending = np.zeros(len(P), dtype=bool)
            pending[found.pairs.reshape(-1)] = True
        return CutSearch(found.pairs, found.max_violation, found.pairs_checked, pending)

    def with_cuts(self, cuts: np.ndarray) -> Lipschitz:
        """The criterion over the pairs ``cuts`` only (same metric, constant and label)."""
        return dataclasses.replace(self, pairs=cuts, name=self.label)

    # ------------------------------------------------------------------ parametric
    def parameter_constraints(self, family: Any) -> Callable[[np.ndarray], tuple]:
        """For a linear-softmax family, the certified bound as smooth constraints
        L^2 - ||G (W_a - W_b)||^2 / 16 >= 0 for every pair of actions a < b (see
        :meth:`softmax_bound`)."""
        return softmax_constraints(self, family)

    def softmax_bound(self, policy: Any) -> float:
        """kappa with D_TV(pi(. | x), pi(. | x')) <= kappa d(x, x') for every pair of
        individuals, seen or not, of a linear-softmax ``policy`` that does not read the
        group (:func:`fairdecide.criteria._lipschitz_softmax.softmax_bound`)."""
        return softmax_bound(self, policy)

    def parameter_certificate(self, policy: Any) -> dict[str, Any]:
        """The softmax bound of ``policy`` against L: it certifies every pair of
        individuals, seen or not, when ``lipschitz_bound <= constant``."""
        kappa = self.softmax_bound(policy)
        return {"lipschitz_bound": kappa, "constant": self.constant,
                "certified": kappa <= self.constant * (1 + 1e-9)}

    # ------------------------------------------------------------------ helpers
    def _checked_pairs(self, n: int) -> np.ndarray:
        pairs = self.pairs
        if len(pairs) and pairs.max() >= n:
            raise FairdecideError(
                f"pairs refers to individual {int(pairs.max())}, but there are {n}")
        return pairs

    def _key(self, P: np.ndarray, X: np.ndarray) -> bytes:
        h = hashlib.blake2b(digest_size=20)
        for arr in (P, X):
            h.update(str(arr.shape).encode())
            h.update(np.ascontiguousarray(arr).tobytes())
        h.update(repr(self.constant).encode())
        if callable(self.metric):
            h.update(f"callable {id(self.metric)}".encode())
        else:
            h.update(self.metric.encode())
            for extra in (self.weights, self.matrix):
                if extra is not None:
                    h.update(np.asarray(extra, dtype=float).tobytes())
        return h.digest()


def _features(X: Any) -> np.ndarray:
    if X is None:
        raise FairdecideError(
            "Lipschitz fairness needs the individuals' features: use a SampleWorld (its "
            "units carry X); a TabularWorld's cells have none")
    return _check_population(as_float_array(X, "features", ndim=2))


def _check_population(X: np.ndarray) -> np.ndarray:
    if len(X) < 2:
        raise FairdecideError("Lipschitz fairness compares pairs of individuals: it needs "
                              f"at least 2, got {len(X)}")
    return X


def _as_pairs(pairs: Any) -> np.ndarray:
    what = ("pairs must be None, 'all', or an integer array of shape (k, 2) of individual "
            "indices")
    if isinstance(pairs, str | bytes):
        raise FairdecideError(f"{what}; got the string {pairs!r}")
    try:
        arr = np.asarray(pairs)
    except ValueError:  # ragged rows
        raise FairdecideError(f"{what}; got rows of different lengths") from None
    if arr.ndim != 2 or arr.shape[1] != 2 or not (
            np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise FairdecideError(f"{what}; got {arr.dtype} array of shape {arr.shape}")
    arr = arr.astype(np.int64).reshape(-1, 2)
    if np.any(arr < 0) or np.any(arr[:, 0] == arr[:, 1]):
        raise FairdecideError("pairs must hold two different non-negative indices each")
    n = int(arr.max()) + 1 if len(arr) else 1
    key = np.unique(pair_keys(arr, n))
    return np.stack([key // n, key % n], axis=1)
