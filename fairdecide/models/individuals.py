"""Outcome models of individuals: P(y | a, x) by maximum likelihood with any scikit-learn
probabilistic classifier, as a SampleWorld, and bootstrap refits as a Belief.

Two encodings of the action in interventions (the user chooses):

- ``"separate"``: one classifier per action, fitted on the rows that took it (the
  outcome under each action may depend on the features in its own way);
- ``"feature"``: one classifier on the features and the one-hot action (shares strength
  across actions; its form decides how the action interacts with the features).

In prediction problems the outcome does not depend on the action and one classifier is
fitted on all rows. ``n_folds`` cross-fits: each individual's probabilities then come from
a model that did not see it (honest for evaluation; the plug-in world otherwise
overfits).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide._common.defaults import N_SCENARIOS
from fairdecide._common.validation import (
    as_float_array,
    as_int,
    check_instance,
    check_random_state,
)
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels
from fairdecide.models.outcome import (
    check_model,
    cross_fit_proba,
    default_classifier,
    fit_classes,
    fit_predict,
)
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.sample import SampleWorld

__all__ = ["IndividualOutcomeModel"]

ENCODINGS = ("separate", "feature")


class IndividualOutcomeModel:
    """P(y | a, x) of individuals, fitted by maximum likelihood.

    Parameters
    ----------
    classifier : scikit-learn classifier, optional
        Any estimator with ``fit`` and ``predict_proba`` (cloned for every fit). Default:
        logistic regression.
    action_encoding : {"separate", "feature"}, default="separate"
        One classifier per action, or one with the one-hot action as extra features.
    n_folds : int, optional
        Cross-fit with this many folds (>= 2) when predicting for the training rows.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import DecisionProblem, Independence, optimize_policy
    >>> from fairdecide.models import IndividualOutcomeModel
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 2)); z = rng.randint(2, size=200)
    >>> y = (rng.random_sample(200) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    >>> problem = DecisionProblem.classification(2)
    >>> world = IndividualOutcomeModel().fit(X, z, y, problem).world()
    >>> world
    SampleWorld(n=200, features=2, groups=2, outcomes=2, P(y|i))
    >>> optimize_policy(problem, world, Independence(), epsilon=0.02).status
    'optimal'
    """

    def __init__(self, classifier: Any = None, action_encoding: str = "separate",
                 n_folds: int | None = None) -> None:
        check_model(classifier, "classifier", world_ok=False)
        if action_encoding not in ENCODINGS:
            raise FairdecideError(
                f"action_encoding must be one of {ENCODINGS}, got {action_encoding!r}")
        self.classifier = default_classifier() if classifier is None else classifier
        self.action_encoding = action_encoding
        self.n_folds = None if n_folds is None else as_int(n_folds, "n_folds", minimum=2)

    def fit(self, X: Any, z: Any, y: Any, problem: DecisionProblem, a: Any = None,
            random_state: Any = None, sample_weight: Any = None) -> IndividualOutcomeModel:
        """Fit the outcome model on the training individuals: features ``X``, groups
        ``z``, outcome labels ``y`` and, in interventions, the logged action labels ``a``
        (checked against ``problem``), with ``sample_weight`` (non-negative, one per row)
        passed to the classifiers' ``fit``; returns self.

        The classifiers fitted on every row (``models_``: one, or one per action) give
        :meth:`world` of new individuals and, without ``n_folds``, of the training ones;
        with ``n_folds`` the training rows' probabilities are cross-fitted, and
        :meth:`bootstrap_worlds` refits on each resample."""
        X, z_codes, labels, y_codes, a_codes = check_training_rows(X, z, y, problem, a)
        self.problem_, self.X_, self.z_, self.group_labels_ = problem, X, z_codes, labels
        self.y_, self.a_ = y_codes, a_codes
        self.w_ = None if sample_weight is None else check_sample_weight(sample_weight, len(X))
        self.rng_ = check_random_state(random_state)
        n_y, w = problem.n_outcomes, self.w_
        if a_codes is None:
            self.models_ = [fit_classes(self.classifier, X, y_codes, n_y, w)]
        elif self.action_encoding == "separate":
            check_action_counts(a_codes, problem)
            self.models_ = [fit_classes(self.classifier, X[a_codes == k], y_codes[a_codes == k],
                                        n_y, None if w is None else w[a_codes == k])
                            for k in range(problem.n_actions)]
        else:
            check_action_counts(a_codes, problem)
            self.models_ = [fit_classes(self.classifier, self._design(X, a_codes), y_codes,
                                        n_y, w)]
        return self

    def _fitted_proba(self, X_new: np.ndarray) -> np.ndarray:
        """P(y | a, x) of ``X_new`` from the classifiers fitted on every row, shape
        (n_new, n_a, n_y) in interventions, (n_new, n_y) in predictions."""
        if self.a_ is None:
            return self.models_[0](X_new)
        if self.action_encoding == "separate":
            return np.stack([m(X_new) for m in self.models_], axis=1)
        n_a = self.problem_.n_actions
        stacked = np.vstack([self._design(X_new, k) for k in range(n_a)])
        return self.models_[0](stacked).reshape(n_a, len(X_new), -1).transpose(1, 0, 2)

    def _design(self, X: np.ndarray, a: int | np.ndarray) -> np.ndarray:
        n_a = self.problem_.n_actions
        onehot = np.zeros((len(X), n_a))
        onehot[np.arange(len(X)), a] = 1.0
        return np.hstack([X, onehot])

    def _proba(self, X: np.ndarray, y: np.ndarray, a: np.ndarray | None,
               X_new: np.ndarray, honest: bool, w: np.ndarray | None = None) -> np.ndarray:
        """P(y | a, x) of X_new, shape (n_new, n_a, n_y) or (n_new, n_y); cross-fitted
        on the training rows when ``honest``."""
        problem, n_y = self.problem_, self.problem_.n_outcomes
        model = self.classifier
        folds = self.n_folds if honest else None

        def fitted(Xf: np.ndarray, target: np.ndarray, Xp: np.ndarray,
                   rows: np.ndarray | None = None) -> np.ndarray:
            if folds is None:
                keep = slice(None) if rows is None else rows
                return fit_predict(model, Xf[keep], target[keep], Xp, n_y,
                                   None if w is None else w[keep])
            return cross_fit_proba(model, Xf, target, n_y, folds, self.rng_, fit_rows=rows,
                                   sample_weight=w)

        if a is None:
            return fitted(X, y, X_new)
        n_a = problem.n_actions
        check_action_counts(a, problem)
        if self.action_encoding == "separate":
            return np.stack([fitted(X, y, X_new, a == k) for k in range(n_a)], axis=1)
        # one model of (x, one-hot a), fitted once (per fold) and asked under every action
        under = [self._design(X_new, k) for k in range(n_a)]
        return _feature_proba(model, self._design(X, a), y, under, n_y, folds, self.rng_, w)

    def world(self, X: Any = None, z: Any = None, weights: Any = None) -> SampleWorld:
        """The fitted world of the training individuals (cross-fitted if ``n_folds``), or
        of new individuals ``X``, ``z`` (group labels)."""
        if not hasattr(self, "X_"):
            raise FairdecideError("call fit(X, z, y, problem, a) first")
        if X is None:
            p_y = (self._fitted_proba(self.X_) if self.n_folds is None else
                   self._proba(self.X_, self.y_, self.a_, self.X_, honest=True, w=self.w_))
            return SampleWorld.from_codes(self.X_, self.z_, p_y, weights,
                                          group_labels=self.group_labels_)
        X = as_float_array(X, "X", ndim=(1, 2))
        X = X[:, None] if X.ndim == 1 else X
        if z is None:
            raise FairdecideError("z (the groups of the new individuals) is needed with X")
        return SampleWorld(X, z, self._fitted_proba(X), weights,
                           group_labels=self.group_labels_)

    def bootstrap_worlds(self, n_scenarios: int = N_SCENARIOS, random_state: Any = None,
                         weights: Any = None) -> list[SampleWorld]:
        """Refits on ``n_scenarios`` bootstrap resamples of the rows, each predicting for
        the training individuals (weighted by ``weights``, default 1/n each): the
        scenarios of a belief (the cheap approximate posterior;
        :meth:`Belief.from_refits <fairdecide.Belief.from_refits>`)."""
        if not hasattr(self, "X_"):
            raise FairdecideError("call fit(X, z, y, problem, a) first")
        n_scenarios = as_int(n_scenarios, "n_scenarios", minimum=1)
        rng = check_random_state(random_state)
        n = len(self.X_)
        worlds = []
        for _ in range(n_scenarios):
            idx = rng.randint(0, n, size=n)
            a = None if self.a_ is None else self.a_[idx]
            w = None if self.w_ is None else self.w_[idx]
            p_y = self._proba(self.X_[idx], self.y_[idx], a, self.X_, honest=False, w=w)
            worlds.append(SampleWorld.from_codes(self.X_, self.z_, p_y, weights,
                                                 group_labels=self.group_labels_))
        return worlds


def check_training_rows(X: Any, z: Any, y: Any, problem: DecisionProblem, a: Any = None
                        ) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray, np.ndarray | None]:
    """The checked training individuals of an outcome model: features ``X`` as a finite
    (n, d) float array, group codes and labels of ``z``, outcome codes of ``y`` and, in
    interventions, action codes of ``a`` (labels checked against ``problem``; None in
    prediction problems). Raises a FairdecideError naming the argument at fault."""
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    X = as_float_array(X, "X", ndim=(1, 2))
    X = X[:, None] if X.ndim == 1 else X
    n = len(X)
    z_codes, labels = Labels.factorize(z, "z")
    y_idx, y_lab = Labels.factorize(y, "y")
    y_codes = problem.outcome_codes(list(y_lab), name="y")[y_idx]
    if len(z_codes) != n or len(y_codes) != n:
        raise FairdecideError(
            f"X has {n} rows but z has {len(z_codes)} and y {len(y_codes)}")
    if not problem.outcome_depends_on_action:
        return X, z_codes, labels, y_codes, None
    if a is None:
        raise FairdecideError(
            "a (the logged actions) is needed: in an intervention the outcome "
            "depends on the action")
    a_idx, a_lab = Labels.factorize(a, "a")
    a_codes = problem.action_codes(list(a_lab), name="a")[a_idx]
    if len(a_codes) != n:
        raise FairdecideError(f"X has {n} rows but a has {len(a_codes)}")
    return X, z_codes, labels, y_codes, a_codes


def check_sample_weight(sample_weight: Any, n: int) -> np.ndarray:
    """``sample_weight`` as n finite non-negative floats, not all zero."""
    w = as_float_array(sample_weight, "sample_weight", ndim=1)
    if w.shape != (n,):
        raise FairdecideError(
            f"sample_weight must hold one weight per row ({n}), got shape {w.shape}")
    if np.any(w < 0) or w.sum() <= 0:
        raise FairdecideError("sample_weight must be non-negative and not all zero")
    return w.copy()


def check_action_counts(a: np.ndarray, problem: DecisionProblem, minimum: int = 2) -> None:
    """Raise unless every action of ``problem`` was logged at least ``minimum`` times in
    the action codes ``a`` (the outcomes under a rarer one cannot be modelled)."""
    counts = np.bincount(a, minlength=problem.n_actions)
    rare = np.flatnonzero(counts < minimum)
    if rare.size:
        k = rare[0]
        raise FairdecideError(
            f"action {problem.action_labels[k]!r} was logged {int(counts[k])} "
            "times: too few to model the outcomes under it")


def _feature_proba(model: Any, design: np.ndarray, y: np.ndarray, under: list[np.ndarray],
                   n_y: int, folds: int | None, rng: np.random.RandomState,
                   w: np.ndarray | None = None) -> np.ndarray:
    """P(y | x, a=k) of the rows of ``under[k]``, shape (n, n_a, n_y), from one model on
    ``design``: fitted once, or once per fold with each row predicted out of fold."""
    n, n_a = len(under[0]), len(under)

    def predict(train: np.ndarray | slice, rows: np.ndarray | slice) -> np.ndarray:
        stacked = np.vstack([u[rows] for u in under])
        p = fit_predict(model, design[train], y[train], stacked, n_y,
                        None if w is None else w[train])
        return p.reshape(n_a, -1, n_y).transpose(1, 0, 2)

    if folds is None:
        return predict(slice(None), slice(None))
    from sklearn.model_selection import KFold

    out = np.zeros((n, n_a, n_y))
    for train, test in KFold(folds, shuffle=True, random_state=rng.randint(2**31 - 1)
                             ).split(design):
        out[test] = predict(train, test)
    return out
