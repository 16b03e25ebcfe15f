"""Group properties of smooth policies: the parity a policy gives two sets of people, and
the largest disparity any L-Lipschitz policy can show between them.

A policy pi is L-Lipschitz (individually fair: Dwork et al. 2012, "Fairness through
awareness"; Dimitrakakis, "fairness as smoothness") when

    D_TV(pi(. | x_i), pi(. | x_j)) <= L d(x_i, x_j)    for every pair i, j.

For a set S of individuals with weights w, pi(a | S) = sum_{i in S} w_i pi(a | x_i) / w(S)
is the action distribution of a random member of S, and a policy treats S and T with
epsilon-parity when D_TV(pi(. | S), pi(. | T)) <= epsilon (book definitions 3.3.3, 3.3.4).
:func:`parity` gives that epsilon for one policy; :func:`worst_case_bias` its maximum
over all L-Lipschitz policies (Dwork et al.'s bias, section 3): how much group disparity
smoothness alone still allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fairdecide._common.validation import as_float_array, check_distribution
from fairdecide.smoothness.bias import BiasResult, worst_case_bias
from fairdecide.smoothness.sets import index_set, unit_weights

__all__ = ["BiasResult", "ParityResult", "parity", "worst_case_bias"]


@dataclass(frozen=True, eq=False)
class ParityResult:
    """The parity between two sets of individuals under one policy.

    Attributes
    ----------
    tv : float
        epsilon = D_TV(pi(. | S), pi(. | T)) = max_A pi(A | S) - pi(A | T).
    mixture_s, mixture_t : ndarray of shape (n_actions,)
        pi(. | S) and pi(. | T).
    actions : tuple of int
        A set of actions attaining the maximum: {a : pi(a | S) > pi(a | T)}.
    size_s, size_t : int
        Number of individuals in S and in T.
    """

    tv: float
    mixture_s: np.ndarray
    mixture_t: np.ndarray
    actions: tuple[int, ...]
    size_s: int
    size_t: int

    def summary(self) -> str:
        """A readable report."""
        fmt = ", ".join
        return "\n".join([
            f"parity between S ({self.size_s} individuals) and T ({self.size_t})",
            f"  D_TV          : {self.tv:.6g}",
            f"  pi(. | S)     : [{fmt(f'{x:.4g}' for x in self.mixture_s)}]",
            f"  pi(. | T)     : [{fmt(f'{x:.4g}' for x in self.mixture_t)}]",
            f"  attained by A : {set(self.actions) or '{}'} (pi(A | S) - pi(A | T) = D_TV)",
        ])

    def __repr__(self) -> str:
        return f"ParityResult(tv={self.tv:.4g}, actions={self.actions})"


def _mixture(P: np.ndarray, idx: np.ndarray, w: np.ndarray) -> np.ndarray:
    return w[idx] @ P[idx] / w[idx].sum()


def parity(rows: Any, S: Any, T: Any, weights: Any = None) -> ParityResult:
    """The epsilon of epsilon-parity between two sets of individuals under a policy.

    .. math:: \\epsilon = D_{TV}(\\pi(\\cdot | S), \\pi(\\cdot | T)) = \\max_A \\pi(A|S) -
       \\pi(A|T), \\quad \\pi(a | S) = \\sum_{i \\in S} w_i \\pi(a | x_i) / \\sum_{i \\in S} w_i

    Parameters
    ----------
    rows : array-like of shape (n, n_actions)
        pi(. | x_i), rows on the simplex.
    S, T : array-like
        Boolean masks of length n or arrays of distinct indices; they may overlap.
    weights : array-like of shape (n,), optional
        Non-negative weights of the individuals (default: equal).

    Returns
    -------
    ParityResult

    Examples
    --------
    >>> rows = [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [0.2, 0.8]]
    >>> res = parity(rows, S=[0, 1], T=[2, 3])
    >>> round(res.tv, 12), res.actions, res.mixture_s.tolist()
    (0.65, (0,), [0.75, 0.25])
    """
    P = check_distribution(as_float_array(rows, "rows", ndim=2), "rows", axes=(1,))
    n = len(P)
    s, t = index_set(S, "S", n), index_set(T, "T", n)
    w = unit_weights(weights, "weights", n, s, t)
    ps, pt = _mixture(P, s, w), _mixture(P, t, w)
    diff = ps - pt
    return ParityResult(float(diff[diff > 0].sum()), ps, pt,
                        tuple(int(a) for a in np.flatnonzero(diff > 0)), len(s), len(t))


