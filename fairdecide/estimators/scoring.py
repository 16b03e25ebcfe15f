"""Scorers for model selection of fair classifiers, and the refit rule "best utility
within a fairness bound".

Both scorers read the (randomised) classifier's action probabilities on the validation
rows, so they score the policy itself, not its thresholded predictions:

- utility: (1/n) sum_i sum_a pi(a | x_i, z_i) U(a, y_i) (expected accuracy by default);
- fairness: the criterion's deviation of the empirical joint
  M[z, a, y] = (1/n) sum_i pi(a | x_i, z_i) [z_i = z] [y_i = y], returned negated (so
  that greater is better, as scikit-learn scorers are; ``best_utility_within`` undoes it).

The groups come from the ``sensitive_features`` metadata (routed by GridSearchCV when
scikit-learn's metadata routing is enabled: these scorers request it) or from a column of
the raw X (``group_column=``; ``sensitive_feature=``, its old name, warns one release).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.metadata_routing import MetadataRequest

from fairdecide._common.validation import as_float_array, as_real
from fairdecide.criteria.base import as_criteria
from fairdecide.estimators._inputs import group_column as column_of
from fairdecide.estimators._labels import label_deviations
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels
from fairdecide.problem import DecisionProblem

__all__ = ["best_utility_within", "make_fairness_scorer", "make_utility_scorer"]


class _PolicyScorer:
    """scorer(estimator, X, y, sensitive_features=None) on action probabilities."""

    def __init__(self, kind: str, criterion: Any, utility: Any,
                 group_column: str | None) -> None:
        self.kind, self.criterion, self.utility = kind, criterion, utility
        self.group_column = group_column

    def get_metadata_routing(self) -> MetadataRequest:
        request = MetadataRequest(owner=type(self).__name__)
        if self.group_column is None:
            request.score.add_request(param="sensitive_features", alias=True)
        return request

    def _groups(self, X: Any, sensitive_features: Any) -> Any:
        if self.group_column is None:
            return sensitive_features
        if not isinstance(X, pd.DataFrame) or self.group_column not in X.columns:
            raise FairdecideError(
                f"the scorer's group_column={self.group_column!r} must be a column "
                "of the DataFrame X given to the search")
        return X[self.group_column].to_numpy(dtype=object)

    def __call__(self, estimator: Any, X: Any, y: Any, sensitive_features: Any = None
                 ) -> float:
        z = self._groups(X, sensitive_features)
        kwargs = {} if sensitive_features is None else {
            "sensitive_features": sensitive_features}
        p = as_float_array(estimator.predict_proba(X, **kwargs), "predict_proba", ndim=2)
        classes = list(np.asarray(estimator.classes_).tolist())
        y_codes, _ = Labels.factorize(np.asarray(y, dtype=object), "y", classes)
        n, n_a = p.shape
        k = len(classes)  # the decisions are the classes unless the estimator has actions_
        if len(y_codes) != n:
            raise FairdecideError(f"y has {len(y_codes)} labels but X has {n} rows")
        if self.kind == "utility":
            u = np.eye(k) if self.utility is None else as_float_array(
                self.utility, "utility", ndim=2)
            if u.shape != (n_a, k):
                raise FairdecideError(
                    f"utility must have shape (n_actions, n_classes) = ({n_a}, {k}) for "
                    f"predict_proba's {n_a} columns and classes {classes}, got {u.shape}")
            return float(np.mean(np.einsum("na,an->n", p, u[:, y_codes])))
        if z is None:
            raise FairdecideError(
                "the fairness scorer needs the groups: pass sensitive_features to the search's "
                "fit with metadata routing enabled (sklearn.set_config("
                "enable_metadata_routing=True)), or give the scorer group_column=")
        z_codes, labels = Labels.factorize(z, "sensitive_features")
        if len(z_codes) != n:
            raise FairdecideError(f"sensitive_features has {len(z_codes)} rows, X has {n}")
        problem = DecisionProblem(np.zeros((n_a, k)), outcome_depends_on_action=False)
        return -label_deviations([self.criterion], problem, p, y_codes, z_codes,
                                 len(labels))[self.criterion.label]

    def __repr__(self) -> str:
        what = "utility" if self.kind == "utility" else f"-{self.criterion.label} deviation"
        return f"fairdecide scorer({what})"


def make_utility_scorer(utility: Any = None, *, group_column: str | None = None,
                        sensitive_feature: str | None = None) -> Callable[..., float]:
    """A scorer of expected utility per row of a classifier's randomised decisions,
    (1/n) sum_i sum_a pi(a | x_i, z_i) U(a, y_i); ``utility`` U[a, y], actions in the
    order of ``predict_proba``'s columns (``FairPolicyClassifier``'s ``actions_``; the
    classes by default) and outcomes in that of ``classes_`` (default: the identity,
    expected accuracy). ``group_column``: the column of the raw X holding the group,
    for an estimator that reads it there (else the ``sensitive_features`` metadata);
    ``sensitive_feature`` is its old name (deprecated, one release).

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import FairPolicyClassifier, make_utility_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 2)); z = rng.randint(2, size=200)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = FairPolicyClassifier(random_state=0).fit(X, y, sensitive_features=z)
    >>> score = make_utility_scorer()(clf, X, y, sensitive_features=z)
    >>> bool(abs(score - clf.score(X, y, sensitive_features=z)) < 1e-12)
    True
    """
    return _PolicyScorer("utility", None, utility, column_of(group_column,
                                                             sensitive_feature))


def make_fairness_scorer(criterion: Any = "independence", *,
                         group_column: str | None = None,
                         sensitive_feature: str | None = None) -> Callable[..., float]:
    """A scorer of minus a criterion's deviation on the validation rows (greater is
    better); ``criterion`` a name or a Criterion object, as for FairPolicyClassifier;
    ``group_column`` (``sensitive_feature``, deprecated) as for
    :func:`make_utility_scorer`.

    The deviation is that of the empirical joint of the validation rows and the policy's
    probabilities (module docstring): on the training rows, exactly the fitted
    classifier's ``deviation_``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import FairPolicyClassifier, make_fairness_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 2)); z = rng.randint(2, size=200)
    >>> y = (X[:, 0] + z > 0.5).astype(int)
    >>> clf = FairPolicyClassifier(policy="softmax", epsilon=0.02, random_state=0).fit(
    ...     X, y, sensitive_features=z)
    >>> dev = -make_fairness_scorer("independence")(clf, X, y, sensitive_features=z)
    >>> bool(abs(dev - clf.result_.deviations["independence"]) < 1e-6)
    True
    """
    crits = as_criteria(criterion, "criterion")
    if len(crits) != 1:
        raise FairdecideError(
            f"criterion must be one criterion (a name or Criterion), got {criterion!r}")
    return _PolicyScorer("fairness", crits[0], None, column_of(group_column,
                                                               sensitive_feature))


def best_utility_within(bound: float, *, utility: str = "utility",
                        fairness: str = "fairness", every_fold: bool = False
                        ) -> Callable[[dict], int]:
    """A ``refit`` rule for GridSearchCV with ``scoring={utility: make_utility_scorer(),
    fairness: make_fairness_scorer(...)}``: the candidate of highest mean validation
    utility among those whose mean validation deviation (or, with ``every_fold``, every
    fold's) is at most ``bound``. When no candidate meets the bound, the one of least
    deviation is chosen, with a warning naming its deviation.

    Examples
    --------
    >>> rule = best_utility_within(0.05)
    >>> rule({"mean_test_utility": [0.9, 0.8, 0.7], "mean_test_fairness": [-0.2, -0.04, -0.01],
    ...       "params": [{}, {}, {}]})
    1
    """
    bound = as_real(bound, "bound", low=0.0)

    def refit(cv_results: dict) -> int:
        for key in (f"mean_test_{utility}", f"mean_test_{fairness}"):
            if key not in cv_results:
                raise FairdecideError(
                    f"cv_results_ has no {key!r}: name the scorers {utility!r} and "
                    f"{fairness!r} in scoring={{...}}, or pass utility=/fairness=")
        u = np.asarray(cv_results[f"mean_test_{utility}"], dtype=float)
        dev = -np.asarray(cv_results[f"mean_test_{fairness}"], dtype=float)
        if every_fold:
            splits = [k for k in cv_results if k.startswith("split")
                      and k.endswith(f"_test_{fairness}")]
            worst = -np.min([np.asarray(cv_results[k], float) for k in splits], axis=0)
            dev = np.maximum(dev, worst)
        if not (np.isfinite(u) & np.isfinite(dev)).any():
            raise FairdecideError(
                "every candidate's validation utility or deviation is NaN: the scorers "
                "failed (see scikit-learn's 'Scoring failed' warnings). In a Pipeline whose "
                "policy reads the group, request it at predict time too: "
                "set_predict_proba_request(sensitive_features=True)")
        ok = np.isfinite(u) & np.isfinite(dev) & (dev <= bound)
        if not ok.any():
            best = int(np.nanargmin(np.where(np.isfinite(dev), dev, np.inf)))
            warnings.warn(
                f"no candidate has validation deviation <= {bound}; chose the least, "
                f"{dev[best]:.4g} (index {best})", UserWarning, stacklevel=2)
            return best
        return int(np.flatnonzero(ok)[np.argmax(u[ok])])

    return refit
