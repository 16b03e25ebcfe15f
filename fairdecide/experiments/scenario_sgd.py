"""Stochastic gradient over posterior scenarios: the Bayes-optimal tabular policy without
fixing a finite set of draws (Dimitrakakis, "Machine learning in science and society",
Bayesian fairness).

The Bayes decision maximises the posterior expectation

    V(pi) = E_theta [ (1 - lam) U(pi, theta) - lam F(pi, theta) ],

(``lam`` in [0, 1], the trade-off of :func:`~fairdecide.optimize_policy`),

which the exact LP replaces by the mean over K fixed draws (and so fits their noise).
Here every step draws a fresh batch of B scenarios theta_1..theta_B from the posterior
and moves the policy along the unbiased gradient estimate of V: pi(a | x) = softmax of
free parameters (one row per cell, or per (cell, group)), utility and deviation read
off each scenario's group marginal M_k[z, a, y] = sum_x P_k(x, z) pi(a | x, z)
P_k(y | x, z), and dF / dM from the criterion's own smooth terms
(:meth:`~fairdecide.criteria.ConditionalIndependence.gradient_terms`), a subgradient of
the TV deviation. Steps are Adam's; since V is concave in pi, the returned policy is the
average of the iterates' rows over the last ``average`` share of the steps.

This is an **experiment's tool, not a solver**: the Bayesian-fairness experiment compares
it with the exact LP over K fixed draws at equal time. It stops after a fixed number of
steps, certifies nothing and is not verified; it is not behind
:func:`~fairdecide.optimize_policy`. To act on its policy, evaluate it with
:func:`~fairdecide.evaluate_under_belief` on posterior draws it did not see, or solve
the exact program with ``optimize_policy(problem, belief, ...)``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.tables import result_table
from fairdecide._common.validation import as_int, as_real, check_random_state
from fairdecide.criteria.base import Criterion
from fairdecide.exceptions import FairdecideError
from fairdecide.policies import TabularPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.table import marginal_utility, scenario_marginals

__all__ = ["SGDResult", "ScenarioSGD", "scenario_gradient"]


@dataclass(frozen=True)
class SGDResult:
    """The averaged policy, the wall time, the steps taken and the draws used."""

    policy: TabularPolicy
    seconds: float
    steps: int
    draws: int

    def summary(self) -> str:
        """A readable report (the protocol of :class:`~fairdecide.OptimizeResult`)."""
        return (f"scenario SGD (an experiment's tool, not verified): {self.steps} steps "
                f"over {self.draws} scenario draws in {self.seconds:.3f} s; policy over "
                f"{self.policy.table.shape[0]} cells x {self.policy.table.shape[1]} groups")

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame: steps, draws and seconds."""
        return result_table([{"steps": self.steps, "draws": self.draws,
                              "seconds": self.seconds}])


def _deviation_gradient(terms: Any) -> np.ndarray:
    """A (sub)gradient of the criterion's deviation in the flattened marginal."""
    r, jac = terms.values, terms.jacobian
    if r.size == 0:
        return np.zeros(jac.shape[1])
    if terms.combine == "abs-sum":
        return np.sign(r) @ jac
    if terms.combine == "abs-max":
        i = int(np.argmax(np.abs(r)))
        return np.sign(r[i]) * jac[i]
    if terms.combine == "hinge-max":
        i = int(np.argmax(r))
        return jac[i] if r[i] > 0 else np.zeros(jac.shape[1])
    return jac.sum(axis=0)


def scenario_gradient(rows: np.ndarray, p_xz: np.ndarray, p_y: np.ndarray,
                      problem: DecisionProblem, criterion: Criterion, lam: float
                      ) -> tuple[float, np.ndarray]:
    """Mean over scenarios of (1 - lam) U_k - lam F_k and its gradient in the policy's
    rows.

    Parameters
    ----------
    rows : ndarray of shape (n_x, n_z, n_a)
        pi(a | x, z) (equal along z for a group-blind policy).
    p_xz : ndarray of shape (K, n_x, n_z)
        Each scenario's P(x, z).
    p_y : ndarray of shape (K, n_x, n_z, n_y)
        Each scenario's P(y | x, z) (prediction problems: y does not depend on a).
    problem, criterion, lam
        The utility U[a, y], the deviation F and its weight.

    Returns
    -------
    value : float
        (1 / K) sum_k (1 - lam) U_k - lam F_k, F_k from the criterion's terms (its exact
        value).
    grad : ndarray of shape (n_x, n_z, n_a)
        d value / d pi[x, z, a] = (1 / K) sum_{k, y} P_k(x, z) P_k(y | x, z)
        gM_k[z, a, y] with gM_k = (1 - lam) U - lam dF_k / dM_k.
    """
    M = scenario_marginals(p_xz, rows, p_y)
    util = np.asarray(problem.utility, dtype=float)
    gM = np.empty_like(M)
    value = 0.0
    for k in range(M.shape[0]):
        terms = criterion.gradient_terms(M[k], problem)
        dev = terms.deviation()
        value += (1 - lam) * float(marginal_utility(M[k], util)) - lam * dev
        gM[k] = (1 - lam) * util[None] - lam * _deviation_gradient(terms).reshape(M.shape[1:])
    K = M.shape[0]
    grad = np.einsum("kxz,kxzy,kzay->xza", p_xz, p_y, gM) / K
    return value / K, grad


@dataclass(frozen=True)
class ScenarioSGD:
    """Stochastic gradient ascent on E_theta[(1 - lam) U - lam F] over fresh posterior
    draws (``lam`` in [0, 1], as in :func:`~fairdecide.optimize_policy`).

    An experiment's tool, not one of the optimiser's solvers: ``optimize_policy`` never
    routes to it, and its policy comes with no certificate (a stochastic gradient's
    average, not an optimum verified on decision tables). The Bayesian-fairness
    experiment compares it with the exact LP over fixed draws at equal time.

    Parameters
    ----------
    steps : int, default=300
        Gradient steps.
    batch : int, default=8
        Posterior draws per step (fresh each step: steps x batch draws in all).
    learning_rate : float, default=0.3
        Adam's step size on the softmax parameters.
    average : float, default=0.5
        Share of the last steps whose policy rows are averaged into the result.

    Examples
    --------
    >>> from fairdecide import DirichletPosterior, LoggedData, DecisionProblem, Separation
    >>> problem = DecisionProblem.classification(2)
    >>> data = LoggedData(x=[0, 0, 1, 1], z=[0, 1, 0, 1], y=[0, 1, 1, 1])
    >>> post = DirichletPosterior(prior=0.5).fit(data, problem)
    >>> res = ScenarioSGD(steps=20, batch=4).solve(post, problem, Separation(), 0.5,
    ...                                            random_state=0)
    >>> res.policy.table.shape, res.draws
    ((2, 2, 2), 80)
    """

    steps: int = 300
    batch: int = 8
    learning_rate: float = 0.3
    average: float = 0.5

    def __post_init__(self) -> None:
        as_int(self.steps, "steps", minimum=1)
        as_int(self.batch, "batch", minimum=1)
        as_real(self.learning_rate, "learning_rate", low=0, low_open=True)
        as_real(self.average, "average", low=0, high=1, low_open=True)

    def solve(self, posterior: Any, problem: DecisionProblem, criterion: Criterion,
              lam: float, *, group_blind: bool = True, random_state: Any = None
              ) -> SGDResult:
        """Run the ascent on ``posterior`` (anything with ``sample(n, random_state)``
        returning TabularWorlds, e.g. a fitted DirichletPosterior)."""
        if not hasattr(posterior, "sample"):
            raise FairdecideError("posterior must have sample(n, random_state), e.g. a "
                                  f"fitted DirichletPosterior; got {type(posterior).__name__}")
        if problem.outcome_depends_on_action:
            raise FairdecideError("ScenarioSGD handles prediction problems (the outcome "
                                  "does not depend on the action)")
        lam = as_real(lam, "lam", 0.0, 1.0)
        rng = check_random_state(random_state)
        t0 = time.perf_counter()
        first = posterior.sample(1, random_state=rng)[0]
        n_x, n_z, n_a = first.n_x, first.n_z, problem.n_actions
        theta = np.zeros((n_x, 1 if group_blind else n_z, n_a))
        m1, m2 = np.zeros_like(theta), np.zeros_like(theta)
        start = self.steps - max(1, round(self.average * self.steps))
        mean_rows = np.zeros((n_x, n_z, n_a))
        for t in range(1, self.steps + 1):
            worlds = posterior.sample(self.batch, random_state=rng)
            p_xz = np.stack([w.p_xz for w in worlds])
            p_y = np.stack([w.p_y for w in worlds])
            e = np.exp(theta - theta.max(axis=-1, keepdims=True))
            pi = e / e.sum(axis=-1, keepdims=True)
            rows = np.broadcast_to(pi, (n_x, n_z, n_a))
            _, g = scenario_gradient(rows, p_xz, p_y, problem, criterion, lam)
            if group_blind:
                g = g.sum(axis=1, keepdims=True)
            g = pi * (g - (pi * g).sum(axis=-1, keepdims=True))  # through the softmax
            m1 = 0.9 * m1 + 0.1 * g
            m2 = 0.999 * m2 + 0.001 * g * g
            step = (m1 / (1 - 0.9**t)) / (np.sqrt(m2 / (1 - 0.999**t)) + 1e-12)
            theta = theta + self.learning_rate * step  # ascent
            if t > start:
                e = np.exp(theta - theta.max(axis=-1, keepdims=True))
                mean_rows += np.broadcast_to(e / e.sum(axis=-1, keepdims=True), mean_rows.shape)
        rows = mean_rows / (self.steps - start)
        if not np.all(np.isfinite(rows)):
            raise FairdecideError("the stochastic gradient diverged (non-finite policy); "
                                  "lower learning_rate")
        policy = TabularPolicy(rows, x_labels=first.x_labels, group_labels=first.group_labels)
        # (the one draw read for the shapes is not counted: it never enters a step)
        return SGDResult(policy, time.perf_counter() - t0, self.steps,
                         self.steps * self.batch)
