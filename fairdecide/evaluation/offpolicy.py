"""evaluate_policy: off-policy value of a candidate policy from logged decisions."""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from fairdecide._common.defaults import N_DRAWS
from fairdecide._common.deprecation import DEPRECATED, old_order, renamed
from fairdecide._common.validation import as_int, as_real, check_instance, check_random_state
from fairdecide.data.counts import LoggedCounts
from fairdecide.data.logged import BanditData, LoggedData
from fairdecide.data.units import Units
from fairdecide.evaluation.counted import prepare_counts
from fairdecide.evaluation.logged import is_logged, logged_inputs, warn_summary
from fairdecide.evaluation.ope import (
    DirectMethod,
    DoublyRobust,
    FullInformation,
    InverseProbability,
    OffPolicyInputs,
    SelfNormalized,
    ValueEstimate,
)
from fairdecide.evaluation.support import warn_unsupported
from fairdecide.exceptions import FairdecideError
from fairdecide.models.outcome import (
    check_model,
    cross_fit_proba,
    fit_predict,
    model_inputs,
    outcome_values,
)
from fairdecide.policies.adapters import as_policy, check_rows
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.table import expected_utility

__all__ = ["BanditData", "evaluate_policy"]

#: The off-policy methods by name (``method=``)
METHODS = {"dm": DirectMethod, "ips": InverseProbability, "snips": SelfNormalized,
              "dr": DoublyRobust, "full": FullInformation}

def _units(data: Any, bandit: BanditData) -> Units:
    """What a policy may read of the logged individuals: cell codes (tabular data) and
    numeric features (one-hot cell and group for tabular data)."""
    if isinstance(data, LoggedData):
        return replace(data.units(), features=bandit.X)
    return bandit.units()


def _cell_frequencies(units: Units, bandit: BanditData, reward: np.ndarray,
                      n_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """In-sample action frequencies per cell (x, z) at the logged actions, and the mean
    reward of every (cell, action) (zero where an action was never logged in a cell)."""
    cells = units.cell_group
    counts = np.zeros((units.n_cells * units.n_groups, n_actions))
    np.add.at(counts, (cells, bandit.a), 1.0)
    sums = np.zeros_like(counts)
    np.add.at(sums, (cells, bandit.a), reward)
    propensity = (counts / counts.sum(axis=1, keepdims=True))[cells, bandit.a]
    return propensity, (sums / np.maximum(counts, 1.0))[cells]


def _target_probabilities(policy: Any, units: Units, problem: DecisionProblem
                          ) -> np.ndarray:
    probs = as_policy(policy, problem).proba(units)
    return check_rows(probs, units.n, problem.n_actions)


def evaluate_policy(
    problem: DecisionProblem,
    data: LoggedData | BanditData,
    policy: Any,
    method: str | Any = "auto",
    *,
    outcome_model: Any = None,
    logging_model: Any = None,
    n_folds: int = 5,
    interval: str = "normal",
    n_boot: int = 200,
    n_draws: int = N_DRAWS,
    prior: float = 0.5,
    random_state: Any = None,
    estimator: Any = DEPRECATED,
) -> ValueEstimate:
    """Off-policy value of ``policy`` from logged decisions.

    Parameters
    ----------
    problem : DecisionProblem
        The reward of row i is U(a_i, y_i).
    data : LoggedData (tabular), LoggedCounts or BanditData (numeric features)
    policy : "logged", TabularPolicy, fitted classifier with ``predict_proba`` over
        actions, or a callable ``f(X) -> (n, n_actions)`` of action probabilities.
        ``"logged"``: the logged decisions themselves, what was actually done; their
        value is the on-policy mean of U(a_i, y_i) over the rows
        (:class:`~fairdecide.evaluation.ope.OnPolicy`, ``method="auto"`` only), the
        number ``fairdecide audit`` reports for "the logged decisions". It is not the
        value of ``TabularPolicy.from_data(data, problem)``, which re-draws the decisions
        at random with each cell's action rates: the logged decisions may have used more
        than the cells (a score, an interview). Evaluating a policy estimated that way
        warns when its value differs from the logged decisions' by more than
        :data:`SUMMARY_GAP_SE` standard errors of the difference, naming both.
    method : {"auto", "dr", "dm", "ips", "snips", "full", "bayes"} or an off-policy method
        The method of evaluation: a name, or one of the estimator objects of
        :mod:`fairdecide.evaluation.ope` (e.g. ``InverseProbability(clip=10)``).
        "auto": "full" in prediction problems (the outcome is observed whatever the
        action, so the candidate's utility is known on every row), else "dr"; for
        ``policy="logged"``, the on-policy mean. "bayes":
        the posterior of the model-based value: exact Dirichlet posterior draws of the
        world for tabular data and policies (``prior``: each P(y | a, x, z) has a prior
        of mass prior * K centred on its action's outcome frequencies pooled over the
        cells, ``DirichletPosterior(prior_mean="pooled")``, the saturated cell model's
        shrinkage; a uniform centre outweighed 38 clicks in 10,000 rows of the Open
        Bandit sample, 0.148 against a click rate of 0.0042), else a Bayesian bootstrap
        with the outcome model refitted under Dirichlet(1, ..., 1) row weights
        (``n_draws`` draws); its interval is the credible interval.
    outcome_model : classifier or World, optional
        For dm and dr: a scikit-learn classifier of y from the features (one per action
        when the outcome depends on it), cross-fitted over ``n_folds``. Default: on
        tabular LoggedData the saturated cell model (smoothed outcome frequencies per
        cell (x, z) and action, :class:`~fairdecide.models.outcome.CellFrequencies`),
        consistent whatever the outcomes do per cell; on numeric features logistic
        regression. A known world (e.g. a TabularWorld) is used as is.
    logging_model : classifier, optional
        Estimates pi_0(a | x) (cross-fitted) when the data carry no propensities.
        Default: on LoggedData the smoothed action frequencies per cell (x, z); on
        numeric features logistic regression (uncalibrated).
    n_folds : int, default=5
        Cross-fitting folds, from 2 up to the number of rows (and of rows per logged
        action for per-action outcome models).
    interval : {"normal", "bootstrap"}, default="normal"
        The kind of interval (its level is ``confidence_interval(level)``'s):
        influence-function normal intervals, or percentile intervals from ``n_boot``
        bootstrap resamples of the rows (nuisance models kept). The bootstrap costs
        ``n_boot`` evaluations of the estimator on n resampled rows, O(n_boot n): about
        0.35 s per replicate at one million rows (70 s for the default 200); the normal
        interval costs nothing extra.
    n_boot : int, default=200
        Bootstrap replicates (>= 10) for ``interval="bootstrap"``.
    n_draws : int, default=1000
        Posterior draws (>= 10) for ``method="bayes"`` (the package's one default,
        :data:`fairdecide._common.defaults.N_DRAWS`). Without a tabular policy the Bayesian
        bootstrap refits the outcome model per draw: O(n_draws n), so pass fewer there
        to trade precision for time.
    prior : float, default=0.5
        Dirichlet concentration (> 0) of the exact tabular posterior (``"bayes"``): the
        prior's mass in each conditional is prior * K (K outcomes).
    estimator : deprecated
        The earlier name of ``method``; it warns. (So does the earlier order
        ``(data, policy, problem, method)``.)

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
    >>> data = sample_logged_data(problem, world, 4000, random_state=0)
    >>> release = TabularPolicy.constant(5, 2, [0.0, 1.0])
    >>> est = evaluate_policy(problem, data, release, "ips")
    >>> lo, hi = est.confidence_interval()
    >>> bool(lo < 0.3724 < hi)  # the true value of releasing everyone is 0.3724
    True

    What was actually done: the mean utility of the logged decisions.

    >>> logged = evaluate_policy(problem, data, "logged")
    >>> codes = data.action_codes(problem), data.outcome_codes(problem)
    >>> bool(logged.value == problem.utility[codes].mean()), logged.method
    (True, 'on-policy')
    """
    problem, data, policy, method = old_order(
        "evaluate_policy", (problem, data, policy, method),
        ("problem", "data", "policy", "method"), ("data", "policy", "problem", "method"),
        DecisionProblem)
    method = renamed("evaluate_policy", "estimator", estimator, "method", method, "auto")
    if not isinstance(interval, str) or interval not in ("normal", "bootstrap"):
        raise FairdecideError(f"interval must be 'normal' or 'bootstrap', got {interval!r}")
    if isinstance(method, str) and method == "bayes" and not is_logged(policy):
        if interval != "normal":
            raise FairdecideError("the Bayesian estimate has its own (credible) interval; "
                                  "interval='bootstrap' does not apply to it")
        result = _bayes(data, policy, problem, outcome_model,
                        as_int(n_draws, "n_draws", minimum=10),
                        as_real(prior, "prior", low=0, low_open=True),
                        check_random_state(random_state))
        warn_summary(data, policy, problem, result)
        return result
    inputs, _, est = _prepare(data, policy, problem, method, outcome_model,
                              logging_model, n_folds, random_state)
    result = est.estimate(inputs)
    if interval == "bootstrap":
        n_boot = as_int(n_boot, "n_boot", minimum=10)
        rng = check_random_state(random_state)
        draws = np.empty(n_boot)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for b in range(n_boot):
                try:
                    draws[b] = est.estimate(_resample(inputs, rng)).value
                except FairdecideError:  # e.g. a resample with all weights zero
                    draws[b] = np.nan
        if np.isnan(draws).mean() > 0.05:
            raise FairdecideError(
                "more than 5% of bootstrap resamples could not be estimated (too little "
                "overlap); use interval='normal' or a model-based method (method='dm' "
                "or 'dr')")
        draws = draws[~np.isnan(draws)]
        result = replace(result, draws=draws, interval="bootstrap",
                         std_error=float(draws.std(ddof=1)))
    warn_summary(data, policy, problem, result)
    return result


def _resample(inp: OffPolicyInputs, rng: np.random.RandomState) -> OffPolicyInputs:
    """A bootstrap resample of the rows: drawn rows, or (weighted atoms) multinomial
    counts of the atoms, the same distribution at a cost that does not grow with n."""
    if inp.weight is not None:
        c = inp.weight
        return replace(inp, weight=rng.multinomial(inp.n_rows, c / c.sum()).astype(float))
    idx = rng.randint(0, inp.n, size=inp.n)
    return OffPolicyInputs(
        inp.reward[idx], inp.action[idx], inp.target[idx],
        None if inp.propensity is None else inp.propensity[idx],
        None if inp.q is None else inp.q[idx])


def _bayes(data: Any, policy: Any, problem: DecisionProblem, outcome_model: Any,
           n_draws: int, prior: float, rng: np.random.RandomState) -> ValueEstimate:
    """Posterior of the model-based value (see evaluate_policy)."""
    from fairdecide.models import DirichletPosterior  # heavy: scikit-learn, at first use

    check_instance(data, "data", (LoggedData, LoggedCounts, BanditData),
                   "LoggedData, LoggedCounts or BanditData")
    pol = as_policy(policy, problem)
    if isinstance(data, LoggedCounts) and "features" in pol.reads:
        raise FairdecideError("policy: on LoggedCounts only tabular policies (of the cells "
                              "and groups) can be evaluated")
    if isinstance(data, LoggedData | LoggedCounts) and "features" not in pol.reads:
        if data.a is not None:
            warn_unsupported(data, problem, pol.proba(data.units()))
        post = DirichletPosterior(prior, "joint", allow_empty_groups=True,
                                  prior_mean="pooled").fit(data, problem)
        draws = np.array([expected_utility(problem, w, pol)
                          for w in post.sample(n_draws, random_state=rng)])
        name = "bayes (Dirichlet)"
    else:
        bandit = data if isinstance(data, BanditData) else BanditData.from_logged(data, problem)
        units = _units(data, bandit)
        target = _target_probabilities(pol, units, problem)
        warn_unsupported(data, problem, target)
        # the saturated cell model on tabular data by default
        model, X = model_inputs(outcome_model, units, bandit.X, problem.n_outcomes)
        U = problem.utility
        draws = np.empty(n_draws)
        for k in range(n_draws):
            g = rng.dirichlet(np.ones(bandit.n)) * bandit.n
            q = np.zeros((bandit.n, problem.n_actions))
            if problem.outcome_depends_on_action:
                for a in range(problem.n_actions):
                    rows = bandit.a == a
                    if rows.sum() < 2:
                        raise FairdecideError(
                            f"action {problem.action_labels[a]!r} was logged "
                            f"{int(rows.sum())} times: too few to model its outcomes")
                    q[:, a] = fit_predict(model, X[rows], bandit.y[rows], X,
                                           problem.n_outcomes, g[rows]) @ U[a]
            else:
                q = fit_predict(model, X, bandit.y, X, problem.n_outcomes, g) @ U.T
            draws[k] = float(g @ np.einsum("na,na->n", target, q) / bandit.n)
        name = "bayes (Bayesian bootstrap)"
    return ValueEstimate(float(draws.mean()), float(draws.std(ddof=1)), name,
                         data.n, draws=draws, interval="posterior")


def _prepare(data: Any, policy: Any, problem: DecisionProblem, method: Any,
             outcome_model: Any, logging_model: Any, n_folds: int, random_state: Any
             ) -> tuple[OffPolicyInputs, np.ndarray, Any]:
    """Validate, compute the policy's probabilities, the propensities and the cross-fitted
    outcome values: the method's inputs, the data as BanditData and the method (an
    estimator object of :mod:`fairdecide.evaluation.ope`)."""
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    check_instance(data, "data", (LoggedData, LoggedCounts, BanditData),
                   "LoggedData, LoggedCounts or BanditData")
    check_model(outcome_model, "outcome_model", world_ok=True)
    check_model(logging_model, "logging_model", world_ok=False)
    if is_logged(policy):
        if not (isinstance(method, str) and method == "auto"):
            raise FairdecideError(
                f"method={getattr(method, 'name', method)!r} with policy="
                "'logged': the logged decisions' value is the mean of U(a_i, y_i) over "
                "the logged rows, observed, not estimated (no weights and no model); "
                "leave method='auto'")
        return logged_inputs(data, problem)
    if isinstance(method, str) and method == "auto":
        method = "dr" if problem.outcome_depends_on_action else "full"
    if isinstance(method, str):
        if method not in METHODS:
            raise FairdecideError(
                f"method must be one of {sorted([*METHODS, 'auto', 'bayes'])} or an "
                f"estimator object such as InverseProbability(clip=10), got {method!r}")
        est = METHODS[method]()
    elif callable(getattr(method, "estimate", None)):
        est = method
    else:
        raise FairdecideError(
            f"method must be one of {sorted([*METHODS, 'auto', 'bayes'])} or an "
            f"estimator object with an estimate method, got {type(method).__name__}")
    n_folds = as_int(n_folds, "n_folds", minimum=2)
    if isinstance(data, LoggedCounts):  # atoms weighted by their counts
        inputs = prepare_counts(data, policy, problem, est, outcome_model, logging_model)
        if not isinstance(est, FullInformation):
            warn_unsupported(data, problem, inputs.target)
        return inputs, data, est
    if isinstance(data, LoggedData) and data.a is None:
        if not (method == "full" or isinstance(method, FullInformation)):
            raise FairdecideError(
                "the data have no logged actions: only the full-information estimate of a "
                "prediction problem (method='full' or 'auto') works without them")
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

    def check_folds() -> None:  # only where a model is cross-fitted
        if n_folds > bandit.n:
            raise FairdecideError(
                f"n_folds must be at most the number of rows ({bandit.n}), got {n_folds}: "
                "the nuisance models are cross-fitted")

    rng = check_random_state(random_state)
    units = _units(data, bandit)
    target = _target_probabilities(policy, units, problem)
    reward = problem.utility[bandit.a, bandit.y]
    propensity = bandit.propensity
    needs_w = not isinstance(est, DirectMethod | FullInformation)
    q = None
    cells_in_sample = (propensity is None and logging_model is None
                       and isinstance(data, LoggedData)
                       and isinstance(est, InverseProbability | SelfNormalized))
    if cells_in_sample:
        # Tabular data, weighting estimators: the saturated per-cell action frequencies
        # of these rows (efficient), with the cell-mean rewards for the influence function.
        propensity, q = _cell_frequencies(units, bandit, reward, problem.n_actions)
    elif propensity is None and (needs_w or logging_model is not None):
        model, X = model_inputs(logging_model, units, bandit.X, problem.n_actions)
        check_folds()
        p_all = cross_fit_proba(model, X, bandit.a, problem.n_actions, n_folds, rng)
        propensity = p_all[np.arange(bandit.n), bandit.a]
        if np.any(propensity <= 0):
            raise FairdecideError(
                "the estimated logging policy gives probability zero to some logged "
                "actions; use a smoother logging_model or known propensities")
    if isinstance(est, FullInformation):
        if problem.outcome_depends_on_action:
            raise FairdecideError(
                "the full-information estimate needs a prediction problem (an outcome that "
                "does not depend on the action); use 'dr'")
        q = problem.utility[:, bandit.y].T  # U(a, y_i) for every action
    elif isinstance(est, DirectMethod | DoublyRobust):
        check_folds()
        q = outcome_values(outcome_model, units, bandit, problem, n_folds, rng)
    taken = target[np.arange(bandit.n), bandit.a]
    if propensity is not None and needs_w and np.all(taken == 0):
        raise FairdecideError(
            "the evaluated policy never takes any logged action: the data say nothing "
            "about it (no overlap). Use a model-based method (method='dm')")
    if not isinstance(est, FullInformation):
        warn_unsupported(data, problem, target)
    return OffPolicyInputs(reward, bandit.a, target, propensity, q), bandit, est
