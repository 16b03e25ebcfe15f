"""evaluate_policy: off-policy value of a candidate policy from logged decisions."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold
from sklearn.utils import check_random_state

from fairdecide._validation import as_code_array, as_float_array, check_same_length
from fairdecide.data import LoggedData
from fairdecide.evaluation.ope import (
    DirectMethod,
    DoublyRobust,
    FullInformation,
    InverseProbability,
    OffPolicyInputs,
    SelfNormalized,
    ValueEstimate,
)
from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem
from fairdecide.world import TabularWorld

__all__ = ["BanditData", "GroupValues", "evaluate_policy", "evaluate_policy_by_group"]

ESTIMATORS = {"dm": DirectMethod, "ips": InverseProbability, "snips": SelfNormalized,
              "dr": DoublyRobust, "full": FullInformation}


@dataclass(frozen=True)
class BanditData:
    """Logged decisions with continuous (or any numeric) features.

    Attributes
    ----------
    X : ndarray of shape (n, n_features)
        What the policies see (include the group column if they may use it).
    z : ndarray of int, shape (n,)
        Group codes.
    a : ndarray of int, shape (n,)
        Logged action codes (the problem's numbering).
    y : ndarray of int, shape (n,)
        Outcome codes (the problem's numbering).
    propensity : ndarray of shape (n,), optional
        pi_0(a_i | x_i), if the logging probabilities are known.
    """

    X: np.ndarray
    z: np.ndarray
    a: np.ndarray
    y: np.ndarray
    propensity: np.ndarray | None = None

    def __post_init__(self) -> None:
        X = as_float_array(self.X, "X", ndim=(1, 2))
        if X.ndim == 1:
            X = X[:, None]
        z = as_code_array(self.z, "z", int(np.max(self.z)) + 1 if len(self.z) else 1, "group")
        a = as_code_array(self.a, "a", int(np.max(self.a)) + 1 if len(self.a) else 1, "action")
        y = as_code_array(self.y, "y", int(np.max(self.y)) + 1 if len(self.y) else 1, "outcome")
        p = None if self.propensity is None else as_float_array(
            self.propensity, "propensity", ndim=1)
        n = check_same_length(X=X, z=z, a=a, y=y, propensity=p)
        if n == 0:
            raise FairdecideError("BanditData needs at least one row")
        for name, val in (("X", X), ("z", z), ("a", a), ("y", y), ("propensity", p)):
            object.__setattr__(self, name, val)

    @property
    def n(self) -> int:
        return len(self.a)

    @classmethod
    def from_logged(cls, data: LoggedData, problem: DecisionProblem,
                    actions_required: bool = True) -> BanditData:
        """Tabular LoggedData as features: one-hot cell and one-hot group. Without logged
        actions (allowed only when ``actions_required`` is False, for full-information
        estimates in prediction problems) the action codes are placeholders (zeros)."""
        a = data.action_codes(problem)
        if a is None:
            if actions_required:
                raise FairdecideError("off-policy evaluation needs the logged actions (a)")
            a = np.zeros(data.n, dtype=int)
        X = np.hstack([np.eye(data.n_x)[data.x], np.eye(data.n_z)[data.z]])
        return cls(X, data.z, a, data.outcome_codes(problem), data.propensity)


def _target_probabilities(policy: Any, data: Any, bandit: BanditData,
                          problem: DecisionProblem) -> np.ndarray:
    n_a = problem.n_actions
    if hasattr(policy, "table") and hasattr(policy, "action_proba"):
        if not isinstance(data, LoggedData):
            raise FairdecideError("a TabularPolicy needs tabular LoggedData to act on")
        probs = policy.action_proba(data.x, data.z)
    elif hasattr(policy, "predict_proba"):
        raw = np.asarray(policy.predict_proba(bandit.X), dtype=float)
        classes = list(getattr(policy, "classes_", range(raw.shape[1])))
        try:  # classes are the problem's action labels ...
            cols = problem.action_codes(classes, name="the classifier's classes_")
        except FairdecideError:  # ... or action codes
            cols = []
            for c in classes:
                try:
                    code = int(c)
                except (TypeError, ValueError):
                    code = -1
                if not 0 <= code < n_a:
                    raise FairdecideError(
                        f"the classifier's class {c!r} is neither an action label of the "
                        f"problem {list(problem.action_labels)} nor an action code "
                        f"0..{n_a - 1}") from None
                cols.append(code)
        probs = np.zeros((bandit.n, n_a))
        for j, c in enumerate(cols):
            probs[:, c] = raw[:, j]
    elif callable(policy):
        probs = np.asarray(policy(bandit.X), dtype=float)
    else:
        raise FairdecideError(
            "policy must be a TabularPolicy, a fitted classifier with predict_proba, or a "
            f"callable returning action probabilities; got {type(policy).__name__}")
    if probs.shape != (bandit.n, n_a):
        raise FairdecideError(
            f"the policy gave probabilities of shape {probs.shape}; expected "
            f"({bandit.n}, {n_a}) (one column per action of the problem)")
    if not np.all(np.isfinite(probs)) or np.any(probs < -1e-9) or not np.allclose(
            probs.sum(axis=1), 1.0, atol=1e-6):
        raise FairdecideError("the policy's action probabilities must be rows on the simplex")
    return np.clip(probs, 0.0, None)


def _fit_predict(model: Any, X: np.ndarray, y: np.ndarray, X_new: np.ndarray,
                 n_classes: int, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Class probabilities (len(X_new), n_classes) of ``model`` fitted on X -> y (a point
    mass when y has one class)."""
    out = np.zeros((len(X_new), n_classes))
    classes = np.unique(y)
    if len(classes) == 1:
        out[:, classes[0]] = 1.0
        return out
    fit_args = {} if sample_weight is None else {"sample_weight": sample_weight}
    fitted = clone(model).fit(X, y, **fit_args)
    out[:, fitted.classes_] = fitted.predict_proba(X_new)
    return out


def _cross_fit_proba(model: Any, X: np.ndarray, target: np.ndarray, n_classes: int,
                     n_folds: int, rng: np.random.RandomState,
                     fit_rows: np.ndarray | None = None) -> np.ndarray:
    """Out-of-fold class probabilities (n, n_classes) of ``model`` fitted on X -> target,
    for every row; only the training rows in ``fit_rows`` (a mask) are fitted on."""
    out = np.zeros((len(target), n_classes))
    folds = KFold(n_folds, shuffle=True, random_state=rng.randint(2**31 - 1))
    for train, test in folds.split(X):
        if fit_rows is not None:
            train = train[fit_rows[train]]
        out[test] = _fit_predict(model, X[train], target[train], X[test], n_classes)
    return out


def _outcome_values(outcome_model: Any, data: Any, bandit: BanditData,
                    problem: DecisionProblem, n_folds: int, rng: np.random.RandomState
                    ) -> np.ndarray:
    """q(x_i, a) = sum_y P(y | x_i, a) U(a, y), shape (n, n_actions), cross-fitted."""
    U = problem.utility
    n_a, n_y = problem.n_actions, problem.n_outcomes
    if isinstance(outcome_model, TabularWorld):
        if not isinstance(data, LoggedData):
            raise FairdecideError("a TabularWorld outcome model needs tabular LoggedData")
        p_y = outcome_model.outcome_table(n_a)[data.x, data.z]  # (n, a, y)
        return np.einsum("nay,ay->na", p_y, U)
    model = LogisticRegression(max_iter=1000) if outcome_model is None else outcome_model
    if not problem.outcome_depends_on_action:
        p = _cross_fit_proba(model, bandit.X, bandit.y, n_y, n_folds, rng)
        return p @ U.T
    q = np.zeros((bandit.n, n_a))
    for a in range(n_a):
        rows = bandit.a == a
        if rows.sum() < n_folds:
            raise FairdecideError(
                f"action {problem.action_labels[a]!r} was logged {int(rows.sum())} times: too "
                "few to fit its outcome model; use estimator='ips' or 'snips'")
        # Fit on the rows that took action a, predict for everyone (out of fold).
        p = _cross_fit_proba(model, bandit.X, bandit.y, n_y, n_folds, rng, fit_rows=rows)
        q[:, a] = p @ U[a]
    return q


def evaluate_policy(
    data: LoggedData | BanditData,
    policy: Any,
    problem: DecisionProblem,
    estimator: str | Any = "auto",
    *,
    outcome_model: Any = None,
    logging_model: Any = None,
    n_folds: int = 5,
    interval: str = "normal",
    n_boot: int = 200,
    n_samples: int = 200,
    prior: float = 0.5,
    random_state: Any = None,
) -> ValueEstimate:
    """Off-policy value of ``policy`` from logged decisions.

    Parameters
    ----------
    data : LoggedData (tabular) or BanditData (numeric features)
    policy : TabularPolicy, fitted classifier with ``predict_proba`` over actions, or a
        callable ``f(X) -> (n, n_actions)`` of action probabilities.
    problem : DecisionProblem
        The reward of row i is U(a_i, y_i).
    estimator : {"auto", "dr", "dm", "ips", "snips", "full", "bayes"} or an estimator object
        See :mod:`fairdecide.evaluation.ope` (e.g. ``InverseProbability(clip=10)``).
        "auto": "full" in prediction problems (the outcome is observed whatever the
        action, so the candidate's utility is known on every row), else "dr". "bayes":
        the posterior of the model-based value: exact Dirichlet posterior draws of the
        world for tabular data and policies (``prior``), else a Bayesian bootstrap with
        the outcome model refitted under Dirichlet(1, ..., 1) row weights
        (``n_samples`` draws); its interval is the credible interval.
    outcome_model : classifier or TabularWorld, optional
        For dm and dr: a scikit-learn classifier of y from the features (one per action
        when the outcome depends on it), cross-fitted over ``n_folds``; default logistic
        regression. A known TabularWorld is used as is.
    logging_model : classifier, optional
        Estimates pi_0(a | x) (cross-fitted, uncalibrated) when the data carry no
        propensities; default logistic regression.
    interval : {"normal", "bootstrap"}, default="normal"
        Influence-function normal intervals, or percentile intervals from ``n_boot``
        bootstrap resamples of the rows (nuisance models kept).

    Returns
    -------
    ValueEstimate
        ``value``, ``std_error``, ``confidence_interval(level)``, ``ess``, ``max_weight``.

    Examples
    --------
    >>> from fairdecide import TabularPolicy
    >>> from fairdecide.datasets import make_bail_problem, sample_logged_data
    >>> from fairdecide.evaluation import evaluate_policy
    >>> problem, world = make_bail_problem()
    >>> data = sample_logged_data(world, problem, 4000, random_state=0)
    >>> release = TabularPolicy.constant(5, 2, [0.0, 1.0])
    >>> est = evaluate_policy(data, release, problem, "ips")
    >>> lo, hi = est.confidence_interval()
    >>> bool(lo < 0.3724 < hi)  # the true value of releasing everyone is 0.3724
    True
    """
    if interval not in ("normal", "bootstrap"):
        raise FairdecideError(f"interval must be 'normal' or 'bootstrap', got {interval!r}")
    if estimator == "bayes":
        if interval != "normal":
            raise FairdecideError("the Bayesian estimate has its own (credible) interval; "
                                  "interval='bootstrap' does not apply to it")
        return _bayes(data, policy, problem, outcome_model, int(n_samples), prior,
                      check_random_state(random_state))
    inputs, _, est = _prepare(data, policy, problem, estimator, outcome_model,
                              logging_model, n_folds, random_state)
    result = est.estimate(inputs)
    if interval == "bootstrap":
        if int(n_boot) != n_boot or n_boot < 10:
            raise FairdecideError(f"n_boot must be an integer >= 10, got {n_boot!r}")
        rng = check_random_state(random_state)
        draws = np.empty(int(n_boot))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for b in range(int(n_boot)):
                idx = rng.randint(0, inputs.n, size=inputs.n)
                try:
                    draws[b] = est.estimate(_rows(inputs, idx)).value
                except FairdecideError:  # e.g. a resample with all weights zero
                    draws[b] = np.nan
        if np.isnan(draws).mean() > 0.05:
            raise FairdecideError(
                "more than 5% of bootstrap resamples could not be estimated (too little "
                "overlap); use interval='normal' or a model-based estimator")
        draws = draws[~np.isnan(draws)]
        result = replace(result, draws=draws, interval="bootstrap",
                         std_error=float(draws.std(ddof=1)))
    return result


def _rows(inp: OffPolicyInputs, idx: np.ndarray) -> OffPolicyInputs:
    return OffPolicyInputs(
        inp.reward[idx], inp.action[idx], inp.target[idx],
        None if inp.propensity is None else inp.propensity[idx],
        None if inp.q is None else inp.q[idx])


def _bayes(data: Any, policy: Any, problem: DecisionProblem, outcome_model: Any,
           n_samples: int, prior: float, rng: np.random.RandomState) -> ValueEstimate:
    """Posterior of the model-based value (see evaluate_policy)."""
    from fairdecide.models import DirichletPosterior
    from fairdecide.world import expected_utility

    if n_samples < 10:
        raise FairdecideError(f"n_samples must be >= 10, got {n_samples!r}")
    if isinstance(data, LoggedData) and hasattr(policy, "table"):
        post = DirichletPosterior(prior, "joint", allow_empty_groups=True).fit(data, problem)
        draws = np.array([expected_utility(policy, w, problem)
                          for w in post.sample(n_samples, random_state=rng)])
        name = "bayes (Dirichlet)"
    else:
        bandit = data if isinstance(data, BanditData) else BanditData.from_logged(data, problem)
        target = _target_probabilities(policy, data, bandit, problem)
        model = LogisticRegression(max_iter=1000) if outcome_model is None else outcome_model
        U = problem.utility
        draws = np.empty(n_samples)
        for k in range(n_samples):
            g = rng.dirichlet(np.ones(bandit.n)) * bandit.n
            q = np.zeros((bandit.n, problem.n_actions))
            if problem.outcome_depends_on_action:
                for a in range(problem.n_actions):
                    rows = bandit.a == a
                    if rows.sum() < 2:
                        raise FairdecideError(
                            f"action {problem.action_labels[a]!r} was logged "
                            f"{int(rows.sum())} times: too few to model its outcomes")
                    q[:, a] = _fit_predict(model, bandit.X[rows], bandit.y[rows], bandit.X,
                                           problem.n_outcomes, g[rows]) @ U[a]
            else:
                q = _fit_predict(model, bandit.X, bandit.y, bandit.X, problem.n_outcomes,
                                 g) @ U.T
            draws[k] = float(g @ np.einsum("na,na->n", target, q) / bandit.n)
        name = "bayes (Bayesian bootstrap)"
    return ValueEstimate(float(draws.mean()), float(draws.std(ddof=1)), name,
                         data.n, draws=draws, interval="posterior")


def _prepare(data: Any, policy: Any, problem: DecisionProblem, estimator: Any,
             outcome_model: Any, logging_model: Any, n_folds: int, random_state: Any
             ) -> tuple[OffPolicyInputs, np.ndarray, Any]:
    """Validate, compute the policy's probabilities, the propensities and the cross-fitted
    outcome values: the estimator's inputs, the data as BanditData and the estimator."""
    if not isinstance(problem, DecisionProblem):
        raise FairdecideError(f"problem must be a DecisionProblem, got {type(problem).__name__}")
    if estimator == "auto":
        estimator = "dr" if problem.outcome_depends_on_action else "full"
    if isinstance(data, LoggedData) and data.a is None:
        if not (estimator == "full" or isinstance(estimator, FullInformation)):
            raise FairdecideError(
                "the data have no logged actions: only the full-information estimate of a "
                "prediction problem (estimator='full' or 'auto') works without them")
        bandit = BanditData.from_logged(data, problem, actions_required=False)
    elif isinstance(data, LoggedData):
        bandit = BanditData.from_logged(data, problem)
    elif isinstance(data, BanditData):
        bandit = data
    else:
        raise FairdecideError(
            f"data must be LoggedData or BanditData, got {type(data).__name__}")
    if int(bandit.a.max()) >= problem.n_actions or int(bandit.y.max()) >= problem.n_outcomes:
        raise FairdecideError("logged action or outcome codes exceed the problem's")
    if isinstance(estimator, str):
        if estimator not in ESTIMATORS:
            raise FairdecideError(
                f"estimator must be one of {sorted([*ESTIMATORS, 'auto', 'bayes'])} or an "
                f"estimator object, got {estimator!r}")
        est = ESTIMATORS[estimator]()
    else:
        est = estimator
    if int(n_folds) != n_folds or n_folds < 2:
        raise FairdecideError(f"n_folds must be an integer >= 2, got {n_folds!r}")
    rng = check_random_state(random_state)
    target = _target_probabilities(policy, data, bandit, problem)
    reward = problem.utility[bandit.a, bandit.y]
    propensity = bandit.propensity
    needs_w = not isinstance(est, DirectMethod | FullInformation)
    if propensity is None and (needs_w or logging_model is not None):
        model = LogisticRegression(max_iter=1000) if logging_model is None else logging_model
        p_all = _cross_fit_proba(model, bandit.X, bandit.a, problem.n_actions, int(n_folds),
                                 rng)
        propensity = p_all[np.arange(bandit.n), bandit.a]
        if np.any(propensity <= 0):
            raise FairdecideError(
                "the estimated logging policy gives probability zero to some logged "
                "actions; use a smoother logging_model or known propensities")
    q = None
    if isinstance(est, FullInformation):
        if problem.outcome_depends_on_action:
            raise FairdecideError(
                "the full-information estimate needs a prediction problem (an outcome that "
                "does not depend on the action); use 'dr'")
        q = problem.utility[:, bandit.y].T  # U(a, y_i) for every action
    elif isinstance(est, DirectMethod | DoublyRobust):
        q = _outcome_values(outcome_model, data, bandit, problem, int(n_folds), rng)
    taken = target[np.arange(bandit.n), bandit.a]
    if propensity is not None and needs_w and np.all(taken == 0):
        raise FairdecideError(
            "the evaluated policy never takes any logged action: the data say nothing "
            "about it (no overlap). Use a model-based estimator (dm)")
    return OffPolicyInputs(reward, bandit.a, target, propensity, q), bandit, est


@dataclass(frozen=True)
class GroupValues:
    """A policy's estimated value overall and within each group, with the gaps.

    Attributes
    ----------
    overall : ValueEstimate
    groups : dict
        Group code -> ValueEstimate of E[U | z] (the estimator applied to that group's
        rows; nuisance models are fitted on all rows, cross-fitted).
    """

    overall: ValueEstimate
    groups: dict

    def gaps(self, level: float = 0.95) -> pd.DataFrame:
        """Every group's value minus the first group's, with standard errors (rows of
        different groups are disjoint: variances add) and normal intervals."""
        z = float(stats.norm.ppf(0.5 + level / 2))
        keys = sorted(self.groups)
        ref = self.groups[keys[0]]
        rows = []
        for g in keys[1:]:
            est = self.groups[g]
            gap = est.value - ref.value
            se = float(np.hypot(est.std_error, ref.std_error))
            rows.append({"group": g, "reference": keys[0], "gap": gap, "std_error": se,
                         "low": gap - z * se, "high": gap + z * se})
        return pd.DataFrame(rows)


def evaluate_policy_by_group(
    data: LoggedData | BanditData, policy: Any, problem: DecisionProblem,
    estimator: str | Any = "auto", *, outcome_model: Any = None, logging_model: Any = None,
    n_folds: int = 5, random_state: Any = None,
) -> GroupValues:
    """Value of ``policy`` overall and per group (see :func:`evaluate_policy` for the
    arguments), with :meth:`GroupValues.gaps` between groups.

    Examples
    --------
    >>> from fairdecide import TabularPolicy
    >>> from fairdecide.datasets import make_bail_problem, sample_logged_data
    >>> from fairdecide.evaluation import evaluate_policy_by_group
    >>> problem, world = make_bail_problem()
    >>> data = sample_logged_data(world, problem, 4000, random_state=0)
    >>> res = evaluate_policy_by_group(data, TabularPolicy.constant(5, 2, [0, 1]), problem,
    ...                                "ips")
    >>> sorted(res.groups), list(res.gaps().columns)[:3]
    ([0, 1], ['group', 'reference', 'gap'])
    """
    inputs, bandit, est = _prepare(data, policy, problem, estimator, outcome_model,
                                   logging_model, n_folds, random_state)
    z = bandit.z
    if isinstance(data, LoggedData):
        empty = [data.group_labels[g] for g in range(data.n_z) if not np.any(z == g)]
        if empty:
            warnings.warn(f"group(s) {empty} have no rows: their value cannot be estimated "
                          "and they are left out", stacklevel=2)
    groups = {}
    for g in np.unique(z):
        rows = z == g
        sub = OffPolicyInputs(
            inputs.reward[rows], inputs.action[rows], inputs.target[rows],
            None if inputs.propensity is None else inputs.propensity[rows],
            None if inputs.q is None else inputs.q[rows])
        groups[int(g)] = est.estimate(sub)
    return GroupValues(est.estimate(inputs), groups)


