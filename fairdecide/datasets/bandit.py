"""A synthetic logged bandit with continuous features and a known value for any policy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit, softmax

from fairdecide._common.deprecation import DEPRECATED, renamed
from fairdecide._common.validation import as_int, as_real, check_instance, check_random_state
from fairdecide.data.logged import BanditData
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.adapters import check_rows
from fairdecide.problem import DecisionProblem

__all__ = ["LoggedBanditTruth", "make_logged_bandit"]


@dataclass(frozen=True, eq=False)
class SoftmaxRule:
    """The policy X -> softmax(X @ coef) row by row, as a picklable callable.

    Parameters
    ----------
    coef : ndarray of shape (n_columns_of_X, n_actions)
    """

    coef: np.ndarray

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Action probabilities, shape (n, n_actions)."""
        return softmax(X @ self.coef, axis=1)


@dataclass(frozen=True)
class LoggedBanditTruth:
    """The generating process of :func:`make_logged_bandit`.

    Features x ~ N(0, I_d); group z ~ Bernoulli(sigmoid(x_0)); the policies see
    X = [x, z]. Logging policy pi_0(a | X) = softmax(X @ logging_coef)_a (it uses the
    group). Outcome y in {0, 1} with P(y = 1 | x, a) = sigmoid(x @ outcome_coef[a] +
    outcome_intercept[a]) (logistic per action, so a per-action logistic outcome model
    is well specified).
    """

    logging_coef: np.ndarray  # (d + 1, n_actions)
    outcome_coef: np.ndarray  # (n_actions, d)
    outcome_intercept: np.ndarray  # (n_actions,)
    utility: np.ndarray

    @property
    def n_features(self) -> int:
        return self.outcome_coef.shape[1]

    def draw_features(self, n: int, random_state: Any = None, *, rng: Any = DEPRECATED
                      ) -> tuple[np.ndarray, np.ndarray]:
        """``n`` individuals' features X = [x, z] (n, d + 1) and groups z (n,).

        ``rng`` is the deprecated name of ``random_state`` (it warns)."""
        random_state = renamed("LoggedBanditTruth.draw_features", "rng", rng,
                               "random_state", random_state)
        rng = check_random_state(random_state)
        n = as_int(n, "n", minimum=1)
        x = rng.standard_normal((n, self.n_features))
        z = (rng.random_sample(n) < expit(x[:, 0])).astype(int)
        return np.column_stack([x, z]), z

    def logging_proba(self, X: np.ndarray) -> np.ndarray:
        return SoftmaxRule(self.logging_coef)(X)

    def nearby_policy(self, scale: float = 0.4, random_state: Any = 1, *,
                      seed: Any = DEPRECATED) -> SoftmaxRule:
        """A candidate policy softmax(X @ W) with W the logging coefficients plus
        N(0, scale^2) noise drawn with ``random_state``: overlap with the logging policy
        shrinks as ``scale`` grows. A :class:`SoftmaxRule`, so it pickles (for process
        pools and caches). ``seed`` is the deprecated name of ``random_state`` (it
        warns)."""
        random_state = renamed("LoggedBanditTruth.nearby_policy", "seed", seed,
                               "random_state", random_state, 1)
        scale = as_real(scale, "scale", low=0.0)
        W = self.logging_coef + scale * check_random_state(random_state).standard_normal(
            self.logging_coef.shape)
        return SoftmaxRule(W)

    def expected_utility(self, X: np.ndarray) -> np.ndarray:
        """q(x, a) = E[U(a, y) | x, a], shape (n, n_actions)."""
        p1 = expit(X[:, : self.n_features] @ self.outcome_coef.T + self.outcome_intercept)
        return (1 - p1) * self.utility[:, 0] + p1 * self.utility[:, 1]

    def value(self, policy: Callable[[np.ndarray], np.ndarray], n_draws: int = 1_000_000,
              random_state: Any = 12345, group: int | None = None, *,
              n_mc: Any = DEPRECATED) -> float:
        """The policy's value, integrated over a fresh sample of ``n_draws`` individuals
        with the exact conditional expectations (Monte Carlo error about 3e-4 /
        sqrt(n_draws / 1e6)); restricted to one ``group`` (a group code) if given.
        ``n_mc`` is the deprecated name of ``n_draws`` (it warns)."""
        n_draws = renamed("LoggedBanditTruth.value", "n_mc", n_mc, "n_draws", n_draws,
                          1_000_000)
        if not callable(policy):
            raise FairdecideError(
                "policy must be a callable f(X) -> (n, n_actions) action probabilities, got "
                f"{type(policy).__name__}")
        n_draws = as_int(n_draws, "n_draws", minimum=1)
        X, z = self.draw_features(n_draws, random_state)
        probs = check_rows(policy(X), n_draws, self.utility.shape[0])
        vals = np.einsum("na,na->n", probs, self.expected_utility(X))
        if group is not None:
            vals = vals[z == group]
        return float(vals.mean())


def make_logged_bandit(
    n: int, *, n_features: int = 3, n_actions: int = 2, random_state: Any = None,
    truth: LoggedBanditTruth | None = None,
) -> tuple[DecisionProblem, Any, LoggedBanditTruth]:
    """Logged decisions from a known process (see :class:`LoggedBanditTruth`).

    The problem: actions 0..n_actions-1, outcome y in {0, 1} (1 good), utility
    U(a, y) = y - 0.1 a (acting costs). Returns the problem, a BanditData with the true
    logging propensities, and the truth (pass ``truth`` to draw more data from the same
    process).

    Examples
    --------
    >>> from fairdecide.datasets import make_logged_bandit
    >>> problem, data, truth = make_logged_bandit(500, random_state=0)
    >>> data.X.shape, round(truth.value(lambda X: truth.logging_proba(X), 10_000), 2)
    ((500, 4), 0.42)
    """
    n = as_int(n, "n", minimum=1)
    n_features = as_int(n_features, "n_features", minimum=1)
    n_actions = as_int(n_actions, "n_actions", minimum=2)
    if truth is not None:
        check_instance(truth, "truth", LoggedBanditTruth, "a LoggedBanditTruth")
    rng = check_random_state(random_state)
    if truth is None:
        spec = np.random.RandomState(2024 + n_features * 10 + n_actions)
        logging_coef = 0.6 * spec.standard_normal((n_features + 1, n_actions))
        logging_coef[-1] = np.linspace(-0.8, 0.8, n_actions)  # the group matters
        utility = np.array([[0.0 - 0.1 * a, 1.0 - 0.1 * a] for a in range(n_actions)])
        truth = LoggedBanditTruth(
            logging_coef=logging_coef,
            outcome_coef=spec.standard_normal((n_actions, n_features)),
            outcome_intercept=0.3 * spec.standard_normal(n_actions),
            utility=utility,
        )
    X, z = truth.draw_features(int(n), rng)
    p0 = truth.logging_proba(X)
    a = (p0.cumsum(axis=1) < rng.random_sample(int(n))[:, None]).sum(axis=1)
    a = np.minimum(a, p0.shape[1] - 1)
    q1 = expit(X[:, : truth.n_features] @ truth.outcome_coef.T + truth.outcome_intercept)
    y = (rng.random_sample(int(n)) < q1[np.arange(int(n)), a]).astype(int)
    problem = DecisionProblem(truth.utility, outcome_depends_on_action=True)
    data = BanditData(X, z, a, y, p0[np.arange(int(n)), a])
    return problem, data, truth
