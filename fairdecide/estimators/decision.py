"""FairDecisionPolicy: a fair decision policy for interventions (bail, loans) learned from
logged decisions, with off-policy evaluation of what it would do."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from fairdecide._common.defaults import N_SCENARIOS
from fairdecide._common.deprecation import DEPRECATED, renamed
from fairdecide._common.validation import as_bool, as_float_array, as_propensity, as_real
from fairdecide.criteria.base import as_criteria
from fairdecide.data.logged import BanditData
from fairdecide.estimators._fitting import fit_policy
from fairdecide.estimators._inputs import fit_groups, predict_groups, split_features
from fairdecide.estimators._labels import world_deviations
from fairdecide.evaluation import estimate_deviation, evaluate_policy
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels, as_object_vector
from fairdecide.models.outcome import default_classifier
from fairdecide.policies.base import draw_rows
from fairdecide.problem import DecisionProblem

__all__ = ["FairDecisionPolicy"]


class FairDecisionPolicy(BaseEstimator):
    """A fair policy for interventions, learned from logged decisions.

    In an intervention the outcome follows the action (release -> crime or not). From
    logged rows (features, group, logged action a_i, outcome y_i) ``fit`` estimates
    P(y | a, x) (one outcome model per action, or per cell for ``policy="tabular"``) and
    optimises::

        max_pi  sum_i w_i sum_a pi(a | x_i, z_i) sum_y P(y | a, x_i) U(a, y)

    under the fairness trade-off, like :class:`FairPolicyClassifier`. ``decide`` samples
    actions, ``action_proba`` gives pi(a | x, z), ``evaluate`` estimates the policy's
    value and deviations off-policy from (other) logged rows, with intervals.

    Parameters
    ----------
    utility : array-like of shape (n_actions, n_outcomes), optional
        U[a, y], actions and outcomes in sorted order of their labels (``action_labels_``,
        ``outcome_labels_``). Default: the outcome is the reward, U(a, y) = y (numeric
        outcome labels).
    action_encoding : {"separate", "feature"}, default="separate"
        One outcome classifier per action, or one with the one-hot action as a feature.
    policy, criteria, epsilon, lam, utility_slack, uncertainty, n_scenarios, outcome_model,
    n_folds, group_blind, group_column, n_bins, l2, n_restarts, max_iter, random_state
        As for :class:`FairPolicyClassifier`.
    sensitive_feature : str, optional
        Deprecated: the old name of ``group_column``, kept one release (``fit`` warns).

    Attributes
    ----------
    action_labels_, outcome_labels_, group_labels_ : tuple
    problem_ : DecisionProblem
    result_ : OptimizeResult
        The verified optimum in the estimated world of the training rows.
    deviation_ : dict
        Each criterion's deviation of the policy's training predictions in its plug-in
        training world, J[i, a, y] = w_i pi(a | x_i, z_i) P(y | a, x_i), P(y | a, x) the
        fitted outcome model (softmax) or the outcome frequencies of the cell's rows that
        took a (tabular): a row's outcome under another action than its logged one was
        never observed. Independence reads no outcome, so its value is exact on the
        training rows; ``evaluate`` estimates every deviation off-policy on logged rows.
    n_features_in_, feature_names_in_

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import FairDecisionPolicy
    >>> rng = np.random.RandomState(0)
    >>> n = 600
    >>> z = rng.randint(2, size=n); X = rng.normal(size=(n, 1)) + z[:, None]
    >>> a = rng.randint(2, size=n)                      # logged: release (1) at random
    >>> crime = rng.random_sample(n) < 1 / (1 + np.exp(-X[:, 0]))
    >>> y = np.where(a == 1, np.where(crime, -1.0, 1.0), 0.0)  # reward of each row
    >>> pol = FairDecisionPolicy(epsilon=0.05, random_state=0)
    >>> pol = pol.fit(X, y, actions=a, sensitive_features=z, propensities=np.full(n, 0.5))
    >>> bool(pol.result_.deviations["independence"] <= 0.05 + 1e-6)
    True
    >>> pol.predict(X[:3], sensitive_features=z[:3]).shape
    (3,)
    """

    #: an intervention: "auto" is the softmax family (estimators/_inputs.py)
    _prediction = False

    def __init__(self, *, utility: Any = None, policy: str = "softmax",
                 criteria: Any = "independence", epsilon: float | str | None = "auto",
                 lam: float | None = None, utility_slack: float | None = None,
                 uncertainty: str = "plug-in", n_scenarios: int = N_SCENARIOS,
                 outcome_model: Any = None, action_encoding: str = "separate",
                 n_folds: int | None = None,
                 group_blind: bool = False, group_column: str | None = None,
                 n_bins: int | str = "auto", l2: float = 1e-5, n_restarts: int = 1,
                 max_iter: int = 500, random_state: Any = None,
                 sensitive_feature: str | None = None) -> None:
        self.utility = utility
        self.policy = policy
        self.criteria = criteria
        self.epsilon = epsilon
        self.lam = lam
        self.utility_slack = utility_slack
        self.uncertainty = uncertainty
        self.n_scenarios = n_scenarios
        self.outcome_model = outcome_model
        self.action_encoding = action_encoding
        self.n_folds = n_folds
        self.group_blind = group_blind
        self.group_column = group_column
        self.n_bins = n_bins
        self.l2 = l2
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.random_state = random_state
        self.sensitive_feature = sensitive_feature  # deprecated: group_column

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    def fit(self, X: Any, y: Any, *, actions: Any = None, sensitive_features: Any = None,
            propensities: Any = None) -> FairDecisionPolicy:
        """Learn the outcome model from logged rows and optimise the policy; returns self.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n, n_features)
            Sparse X (OneHotEncoder's default output) goes to the score family's
            scorer as it is; the softmax and tabular families read it densely (up to
            50 million entries).
        y : array-like of shape (n,)
            The outcome observed after the logged action.
        actions : array-like of shape (n,)
            The logged action of each row (required; a keyword so that it routes as
            metadata: ``set_fit_request(actions=True)``).
        sensitive_features : array-like of shape (n,) or (n, k), optional
        propensities : array-like of shape (n,), optional
            pi_0(a_i | x_i) of the logging policy. When given, the softmax family's
            outcome models are fitted with weights 1 / pi_0 (each then targets the whole
            population, not only those who received that action); the tabular cell model
            is saturated and needs none.
        """
        X, z_raw, y = split_features(self, X, sensitive_features, reset=True, y=y)
        if actions is None:
            raise FairdecideError(
                "actions (the logged decision of each row) is required: "
                "fit(X, y, actions=...); in a Pipeline route it with "
                "set_fit_request(actions=True)")
        n = len(X)
        if n < 2:
            raise FairdecideError("fit needs at least 2 samples, got 1 sample")
        a, self.action_labels_ = Labels.factorize(actions, "actions")
        y_codes, self.outcome_labels_ = Labels.factorize(y, "y")
        if len(a) != n:
            raise FairdecideError(f"actions has {len(a)} entries but X has {n} rows")
        if len(self.action_labels_) < 2:
            raise FairdecideError(
                f"actions has one distinct value {self.action_labels_[0]!r}: the data say "
                "nothing about the other actions; log at least two")
        z, self.group_labels_ = fit_groups(z_raw, n, self.criteria)
        w = None
        if propensities is not None:
            p = as_propensity(propensities, "propensities")
            if p.shape != (n,):
                raise FairdecideError(f"propensities must hold {n} values, got {p.shape}")
            w = 1.0 / p
        self.problem_ = DecisionProblem(self._utility(), outcome_depends_on_action=True,
                                        action_labels=range(len(self.action_labels_)),
                                        outcome_labels=range(len(self.outcome_labels_)))
        self._rule = fit_policy(self, self.problem_, X, z, len(self.group_labels_), y_codes,
                                a, None, outcome_weight=w,
                                action_encoding=self.action_encoding)
        self.result_ = self._rule.result
        self.n_iter_ = self._rule.n_iter
        self.deviation_ = world_deviations(self._rule, self.problem_)
        return self

    def _utility(self) -> np.ndarray:
        n_a, n_y = len(self.action_labels_), len(self.outcome_labels_)
        if self.utility is None:
            try:
                rewards = np.array([float(v) for v in self.outcome_labels_])
            except (TypeError, ValueError):
                raise FairdecideError(
                    f"the outcomes {list(self.outcome_labels_)} are not numbers, so they "
                    "cannot be the reward: give utility=U[a, y]") from None
            return np.tile(rewards, (n_a, 1))
        u = as_float_array(self.utility, "utility", ndim=2)
        if u.shape != (n_a, n_y):
            raise FairdecideError(
                f"utility must have shape (n_actions, n_outcomes) = ({n_a}, {n_y}) for actions "
                f"{list(self.action_labels_)} and outcomes {list(self.outcome_labels_)}, got "
                f"{u.shape}")
        return u

    def _rows(self, X: Any, sensitive_features: Any, groups_needed: bool = False
              ) -> tuple[np.ndarray, np.ndarray | None]:
        check_is_fitted(self, "result_")
        X, z_raw, _ = split_features(self, X, sensitive_features, reset=False)
        needed = groups_needed or self._rule.reads_group
        return X, predict_groups(z_raw, len(X), self.group_labels_, needed)

    def predict_proba(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """pi(a | x, z) for each row, shape (n, n_actions), actions in the order of
        ``action_labels_``; ``sensitive_features`` as for
        :meth:`FairPolicyClassifier.predict_proba`."""
        X, z = self._rows(X, sensitive_features)
        return self._rule.action_proba(X, z)

    def predict(self, X: Any, *, sensitive_features: Any = None,
                randomized: bool = False) -> np.ndarray:
        """The action of each row: the policy's most probable one or, with
        ``randomized=True``, one drawn from it (seeded by ``random_state``: the same
        draws on every call), as :meth:`FairPolicyClassifier.predict` does."""
        p = self.predict_proba(X, sensitive_features=sensitive_features)
        idx = (draw_rows(p, self.random_state) if as_bool(randomized, "randomized")
               else np.argmax(p, axis=1))
        labels = self.action_labels_
        if any(isinstance(v, tuple) for v in labels):  # kept whole, as objects
            return as_object_vector(labels)[idx]
        return np.asarray(list(labels))[idx]  # numbers stay numbers, as classes_ do

    def evaluate(self, X: Any, y: Any, *, actions: Any, sensitive_features: Any = None,
                 propensities: Any = None, method: str = "dr", level: float = 0.95,
                 n_boot: int = 200, estimator: Any = DEPRECATED) -> pd.DataFrame:
        """Off-policy estimates of this policy's value and deviations from logged rows.

        The value by :func:`fairdecide.evaluation.evaluate_policy` (``method``: "dr",
        "ips", "snips" or "dm"; cross-fitted nuisances; ``estimator=`` is its deprecated
        name), each criterion's deviation by
        :func:`fairdecide.evaluation.estimate_deviation` (importance-weighted,
        bias-corrected, bootstrap interval). Without ``propensities`` the logging policy
        is estimated (logistic regression, cross-fitted). Use rows not used in ``fit``
        for honest estimates.

        Returns
        -------
        DataFrame
            One row per quantity ("value", then each criterion's deviation), columns
            ``estimate``, ``lower``, ``upper``.
        """
        method = renamed("FairDecisionPolicy.evaluate", "estimator", estimator, "method",
                         method, "dr")
        level = as_real(level, "level", 0, 1, low_open=True, high_open=True)
        # the groups are needed to estimate deviations even when the policy ignores them
        X, zc = self._rows(X, sensitive_features, groups_needed=True)
        n, n_z = len(X), len(self.group_labels_)
        a = self._codes(actions, self.action_labels_, "actions", n)
        y = self._codes(y, self.outcome_labels_, "y", n)
        p = None if propensities is None else as_propensity(propensities, "propensities")
        if p is not None and p.shape != (n,):
            raise FairdecideError(f"propensities must hold {n} values, got {p.shape}")
        features = np.hstack([X, np.eye(n_z)[zc]])
        data = BanditData(features, zc, a, y, p)
        rule, k = self._rule, X.shape[1]

        def target(F: np.ndarray) -> np.ndarray:
            zz = np.argmax(F[:, k:], axis=1) if rule.reads_group else None
            return rule.action_proba(F[:, :k], zz)

        logging = default_classifier() if p is None else None
        value = evaluate_policy(self.problem_, data, target, method,
                                logging_model=logging, random_state=self.random_state)
        lo, hi = value.confidence_interval(level)
        rows = {f"value ({value.method})": (value.value, lo, hi)}
        for crit in as_criteria(self.criteria):
            est = estimate_deviation(self.problem_, data, crit, target, n_boot=n_boot,
                                     level=level, logging_model=logging,
                                     random_state=self.random_state)
            rows[f"{crit.label} deviation"] = (est.value, est.low, est.high)
        return pd.DataFrame.from_dict(rows, orient="index",
                                      columns=["estimate", "lower", "upper"])

    @staticmethod
    def _codes(values: Any, labels: tuple, name: str, n: int) -> np.ndarray:
        codes, _ = Labels.factorize(values, name, labels)
        if len(codes) != n:
            raise FairdecideError(f"{name} has {len(codes)} entries but X has {n} rows")
        return codes
