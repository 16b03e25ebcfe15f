"""The Policy protocol: a map from units to rows of the simplex.

A policy declares what it reads of a unit (``reads``: its cell, its group, its feature
vector) and what kind it is (``kind``): a **free** policy has one free row per unit or
cell, so optimising it is a linear program over those rows; a **parametric** policy
(linear-softmax, issue 9) computes its rows from parameters theta and exposes the
Jacobian d pi / d theta that the gradient route needs (:class:`ParametricPolicy`).
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fairdecide._common.validation import as_float_array, as_int, check_random_state
from fairdecide.exceptions import FairdecideError

if TYPE_CHECKING:
    from fairdecide.data.units import Units

__all__ = ["ParametricEvaluator", "ParametricPolicy", "Policy", "sample_cohort"]

#: How far the selection probabilities may sum from a whole number, per person (the
#: rounding of a solver's rows).
COHORT_TOL = 1e-9


def draw_rows(p: np.ndarray, random_state: Any = None) -> np.ndarray:
    """One column index per row of ``p`` (rows on the simplex) drawn by inverting its
    cumulative sums at a uniform number: the action codes a randomised policy takes."""
    u = check_random_state(random_state).random_sample(len(p))[:, None]
    return np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), p.shape[1] - 1)


def sample_cohort(p: Any, k: int | None = None, random_state: Any = None) -> np.ndarray:
    """A selection of exactly k people in which person i is selected with probability
    p_i: a fractional cohort made whole.

    A policy optimised under a capacity (:class:`~fairdecide.Capacity`) for a fixed
    population gives each person a selection probability p_i with sum_i p_i = k.
    Drawing each person on their own would select k people only on average; this
    draws a cohort of exactly k with the same inclusion probabilities, by systematic
    sampling over a random order (Madow, 1949; Goodman and Kish, 1950): put the people
    in a uniformly random order, lay their p_i end to end on [0, k], and select those
    whose interval (C_{i-1}, C_i] holds one of the points u, u + 1, ..., u + k - 1, u
    uniform on [0, 1). An interval of length p_i <= 1 holds at most one point, and
    holds one with probability p_i, so

        P(i selected) = p_i,   sum_i 1[i selected] = k   (every draw).

    Parameters
    ----------
    p : array-like of shape (n,)
        Selection probabilities in [0, 1], summing to a whole number k (within 1e-9
        per person; they are rescaled to sum to k exactly).
    k : int, optional
        The cohort's size, checked against sum(p). Default: sum(p) rounded.
    random_state : None, int or numpy RandomState

    Returns
    -------
    ndarray of bool, shape (n,)
        True for the k people selected.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import sample_cohort
    >>> p = np.array([0.5, 0.5, 1.0, 0.25, 0.75, 0.0])
    >>> cohort = sample_cohort(p, k=3, random_state=0)
    >>> int(cohort.sum()), bool(cohort[2]), bool(cohort[5])
    (3, True, False)
    >>> draws = np.array([sample_cohort(p, random_state=s) for s in range(2000)])
    >>> bool(np.all(draws.sum(axis=1) == 3)), bool(np.abs(draws.mean(0) - p).max() < 0.05)
    (True, True)
    """
    p = as_float_array(p, "p", ndim=1).copy()
    n = len(p)
    if n == 0:
        raise FairdecideError("p must hold one selection probability per person, got none")
    outside = (p < -COHORT_TOL) | (p > 1 + COHORT_TOL)
    if np.any(outside):
        i = int(np.argmax(outside))
        raise FairdecideError(
            f"p must hold probabilities in [0, 1]; p[{i}] is {p[i]:.6g}")
    p = np.clip(p, 0.0, 1.0)
    total, tol = float(p.sum()), COHORT_TOL * max(1, n)
    if k is None:
        k = round(total)
        if abs(total - k) > tol:
            raise FairdecideError(
                f"p must sum to a whole number (the cohort's size); it sums to {total:.10g}. "
                "A policy under a capacity at_most=k/n that leaves places free selects "
                "fewer than k on average: raise at_least to the same share to fill them")
    else:
        k = as_int(k, "k", minimum=0, maximum=n)
        if abs(total - k) > tol:
            raise FairdecideError(
                f"k is {k} but p sums to {total:.10g}: a cohort of exactly k with these "
                "selection probabilities needs sum(p) = k. A policy under a capacity "
                f"at_most=s of n = {n} people selects s * n = {total:.10g} on average; for "
                f"exactly {k} places, optimise it with at_most={k} / {n} (and at_least="
                f"{k} / {n} to fill them)")
    gap = k - total  # at most tol: spread it without leaving [0, 1]
    if gap > 0:
        p += gap * (1.0 - p) / (1.0 - p).sum()
    elif gap < 0:
        p += gap * p / total
    rng = check_random_state(random_state)
    order = rng.permutation(n)
    ends = np.concatenate([[0.0], np.cumsum(p[order])])
    while True:  # a redraw only if rounding left sum(p) a hair off k and u fell there
        picks = np.diff(np.floor(ends + rng.random_sample()))
        if picks.sum() == k and picks.max(initial=0) <= 1:
            break
    out = np.zeros(n, dtype=bool)
    out[order[picks > 0]] = True
    return out


class Policy(abc.ABC):
    """pi(a | u) for units u.

    Subclasses set ``reads`` and ``kind`` and implement :meth:`proba` and
    ``n_actions``. :meth:`proba` raises a clear error when the units lack what the
    policy reads (for example a tabular policy handed numeric features).
    """

    #: What the policy reads of a unit: a subset of {"cell", "group", "features"}.
    reads: ClassVar[frozenset[str]] = frozenset()
    #: "free" (one free row per unit or cell: LP variables) or "parametric".
    kind: ClassVar[str] = "free"
    #: Whether the policy summarises logged decisions (the action rates of each cell:
    #: ``TabularPolicy.from_data``), so that it can be mistaken for them: evaluating it
    #: on logs compares its value with the logged decisions' own and warns when they
    #: differ.
    summarises_logs: bool = False

    @property
    @abc.abstractmethod
    def n_actions(self) -> int:
        """Number of actions."""

    @abc.abstractmethod
    def proba(self, units: Units) -> np.ndarray:
        """Rows pi(. | u) of every unit, shape (n_units, n_actions), on the simplex."""


class ParametricPolicy(Policy):
    """A policy computed from parameters theta (the gradient route's protocol).

    Implementations provide ``parameters`` (a flat vector), :meth:`with_parameters`
    (a new policy at other parameters), :meth:`jacobian` (d pi(a | u) / d theta, shape
    (n_units, n_actions, n_parameters)) and :meth:`for_units` (the family sized for
    given units). :meth:`evaluator` serves the gradient route; the default goes
    through :meth:`jacobian`, and a family may supply a faster one.
    """

    kind: ClassVar[str] = "parametric"

    @property
    @abc.abstractmethod
    def parameters(self) -> np.ndarray:
        """The parameter vector theta."""

    @abc.abstractmethod
    def with_parameters(self, theta: np.ndarray) -> ParametricPolicy:
        """The same policy family at parameters ``theta``."""

    @abc.abstractmethod
    def jacobian(self, units: Units) -> np.ndarray:
        """d pi(a | u) / d theta, shape (n_units, n_actions, n_parameters)."""

    @abc.abstractmethod
    def for_units(self, units: Units, n_actions: int) -> ParametricPolicy:
        """A member of this family sized for ``units`` and ``n_actions``."""

    @property
    def penalised(self) -> bool:
        """Whether the family's search penalty keeps the optimum finite (a ridge on theta).

        The gradient route then stops when objective changes fall below the session's
        relative ``objective_tol``. Without one (False, the default) the objective may
        keep creeping up as theta grows toward a deterministic policy, across plateaus
        where a step gains less than 1e-7 and the search would stop far from the best
        value (measured on the bail intervention with ``l2=0``: 0.372 against 0.417),
        so the search stops only at SLSQP's own 1e-10.
        """
        return False

    def evaluator(self, units: Units) -> ParametricEvaluator:
        """pi(theta) and its pullbacks on fixed ``units`` (for the gradient route)."""
        return _JacobianEvaluator(self, units)


class ParametricEvaluator(abc.ABC):
    """A parametric family on fixed units: rows, pullbacks and the search penalty."""

    @abc.abstractmethod
    def proba(self, theta: np.ndarray) -> np.ndarray:
        """pi(a | u; theta), shape (n_units, n_actions)."""

    @abc.abstractmethod
    def pullback(self, theta: np.ndarray, G: np.ndarray) -> np.ndarray:
        """sum_{u, a} G[u, a, o] d pi(a | u) / d theta for G of shape (n_units,
        n_actions, n_out); shape (n_out, n_parameters)."""

    def penalty(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """A penalty the search adds to its objective, and its gradient (none here)."""
        return 0.0, np.zeros_like(theta)

    def marginal_jacobians(self, theta: np.ndarray, Q: np.ndarray, onehot: np.ndarray
                           ) -> np.ndarray:
        """d M_k / d theta for the group marginals M_k[z, a, y] = sum_u onehot[u, z]
        pi(a | u) Q[k, u, a, y]: shape (K, n_z * n_a * n_y, n_parameters). By default
        the pullback of G[u, a, (z', a', y)] = 1[z_u = z'] 1[a = a'] Q[k, u, a, y]."""
        _, n, n_a, n_y = Q.shape
        n_z = onehot.shape[1]
        out = []
        for Qk in Q:
            G = np.zeros((n, n_a, n_z, n_a, n_y))
            for a in range(n_a):
                G[:, a, :, a, :] = onehot[:, :, None] * Qk[:, None, a, :]
            out.append(self.pullback(theta, G.reshape(n, n_a, -1)))
        return np.stack(out)


class _JacobianEvaluator(ParametricEvaluator):
    def __init__(self, policy: ParametricPolicy, units: Units) -> None:
        self.policy, self.units = policy, units

    def proba(self, theta: np.ndarray) -> np.ndarray:
        return self.policy.with_parameters(theta).proba(self.units)

    def pullback(self, theta: np.ndarray, G: np.ndarray) -> np.ndarray:
        jac = self.policy.with_parameters(theta).jacobian(self.units)
        return np.einsum("uao,uat->ot", G, jac)
