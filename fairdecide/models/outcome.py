"""Outcome and logging models: fitted, cross-fitted and per action.

The off-policy estimators need P(y | x, a) (outcome models) and pi_0(a | x) (logging
models) out of fold; these helpers fit any scikit-learn classifier and return class
probabilities over the problem's full numbering. The defaults (:func:`default_model`):
on tabular data the saturated cell model :class:`CellFrequencies` (one distribution per
cell (x, z), smoothed toward the pooled frequencies), which is consistent whatever the
logging policy and outcomes do per cell; on numeric features logistic regression.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

from fairdecide._common.validation import as_code_array, as_float_array, as_real
from fairdecide.data.units import Units
from fairdecide.exceptions import FairdecideError
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.world import World

if TYPE_CHECKING:
    from fairdecide.data.logged import BanditData

__all__ = ["CellFrequencies", "cross_fit", "cross_fit_proba", "default_classifier",
           "default_model", "fit_classes", "fit_predict", "model_inputs", "outcome_values"]


def default_classifier() -> Any:
    """Logistic regression, the default outcome and logging model."""
    return LogisticRegression(max_iter=1000)


class CellFrequencies(ClassifierMixin, BaseEstimator):
    """The saturated model of a discrete cell: smoothed class frequencies per cell.

    With counts n(c, k) of class k in cell c (weighted by ``sample_weight``), the pooled
    frequencies p(k) = (n(k) + 1/2) / (n + K/2) and prior mass s K (s = ``smoothing``)::

        P(k | c) = (n(c, k) + s K p(k)) / (n(c) + s K)

    so a cell never seen in training gets the pooled frequencies. ``X`` holds the cell
    index in its first column. It declares ``reads_cells``: passed as an
    ``outcome_model`` or ``logging_model`` to the evaluation functions on tabular data
    (LoggedData), it is fitted on the cell (x, z) of each row, not on the one-hot
    features other classifiers see. It is the default nuisance model there.

    Parameters
    ----------
    n_cells : int, optional
        Number of cells; default: one more than the largest cell index seen in ``fit``
        (a cell index beyond the table at ``predict_proba`` gets the pooled frequencies).
    n_classes : int, optional
        Number of classes; default: one more than the largest class seen in ``fit``.
    smoothing : float, default=0.5

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide.models.outcome import CellFrequencies
    >>> m = CellFrequencies(n_cells=2, n_classes=2).fit([[0], [0], [0], [1]], [1, 1, 0, 0])
    >>> m.predict_proba([[0]]).round(3)
    array([[0.4, 0.6]])
    """

    #: Reads the cell index of a unit, not its features (see the class docstring).
    reads_cells = True

    def __init__(self, n_cells: int | None = None, n_classes: int | None = None,
                 smoothing: float = 0.5) -> None:
        self.n_cells = n_cells
        self.n_classes = n_classes
        self.smoothing = smoothing

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> CellFrequencies:
        """Count the classes per cell; returns self."""
        X = as_float_array(X, "X", ndim=2)
        big = np.iinfo(np.intp).max
        cells = as_code_array(X[:, 0], "X (its first column: cell indices)", big, "cell")
        y = as_code_array(y, "y", big, "class")
        if len(y) != len(cells) or len(y) == 0:
            raise FairdecideError(f"X and y must have the same positive number of rows, "
                                  f"got {len(cells)} and {len(y)}")
        as_real(self.smoothing, "smoothing", low=0)
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        k = max(int(self.n_classes or 0), int(y.max(initial=-1)) + 1, 2)
        size = max(int(self.n_cells or 0), int(cells.max(initial=-1)) + 1, 1)
        counts = np.bincount(cells * k + y, weights=w, minlength=size * k).reshape(-1, k)
        pooled = (counts.sum(axis=0) + 0.5) / (counts.sum() + 0.5 * k)
        prior = float(self.smoothing) * k
        self.table_ = np.vstack([
            (counts + prior * pooled) / (counts.sum(axis=1, keepdims=True) + prior),
            pooled])  # the last row: cells beyond the table
        self.classes_ = np.arange(k)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """P(class | cell) of each row, shape (n, n_classes)."""
        cells = np.asarray(X)[:, 0].astype(int)
        return self.table_[np.minimum(cells, len(self.table_) - 1)]


def default_model(units: Units, features: np.ndarray, n_classes: int
                  ) -> tuple[Any, np.ndarray]:
    """The default nuisance model and the inputs it reads: the saturated cell model on
    the cell index (x, z) when the units have cells, else logistic regression on the
    features."""
    if units.cell is None:
        return default_classifier(), features
    return (CellFrequencies(units.n_cells * units.n_groups, n_classes),
            units.cell_group[:, None].astype(float))


def model_inputs(model: Any, units: Units, features: np.ndarray, n_classes: int
                 ) -> tuple[Any, np.ndarray]:
    """A nuisance model and what it reads: :func:`default_model` for None; the cell
    index for a model that declares ``reads_cells`` (on units with cells), else the
    numeric features."""
    if model is None:
        return default_model(units, features, n_classes)
    if getattr(model, "reads_cells", False):
        if units.cell is None:
            raise FairdecideError(
                f"{type(model).__name__} reads the cell of each row, but these data have "
                "numeric features and no cells; use a classifier of the features")
        return model, units.cell_group[:, None].astype(float)
    return model, features


class FittedClasses:
    """A classifier fitted on X -> y (or the one class y had), called on new rows for
    their probabilities over all ``n_classes`` classes, shape (len(X_new), n_classes).
    Picklable, like the estimators that hold it."""

    def __init__(self, fitted: Any, only_class: int | None, n_classes: int) -> None:
        self.fitted, self.only_class, self.n_classes = fitted, only_class, n_classes

    def __call__(self, X_new: np.ndarray) -> np.ndarray:
        out = np.zeros((X_new.shape[0], self.n_classes))
        if self.fitted is None:
            out[:, self.only_class] = 1.0
        else:
            out[:, self.fitted.classes_] = self.fitted.predict_proba(X_new)
        return out


def fit_classes(model: Any, X: np.ndarray, y: np.ndarray, n_classes: int,
                sample_weight: np.ndarray | None = None) -> FittedClasses:
    """A clone of ``model`` fitted on X -> y (a point mass when y has one class), the
    ``sample_weight`` going to a Pipeline's last step (its estimator)."""
    from sklearn.pipeline import Pipeline

    classes = np.unique(y)
    if len(classes) == 1:
        return FittedClasses(None, int(classes[0]), n_classes)
    key = (f"{model.steps[-1][0]}__sample_weight" if isinstance(model, Pipeline)
           else "sample_weight")
    fit_args = {} if sample_weight is None else {key: sample_weight}
    return FittedClasses(clone(model).fit(X, y, **fit_args), None, n_classes)


def fit_predict(model: Any, X: np.ndarray, y: np.ndarray, X_new: np.ndarray,
                n_classes: int, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Class probabilities (len(X_new), n_classes) of ``model`` fitted on X -> y (a point
    mass when y has one class)."""
    return fit_classes(model, X, y, n_classes, sample_weight)(X_new)


def cross_fit_proba(model: Any, X: np.ndarray, target: np.ndarray, n_classes: int,
                     n_folds: int, rng: np.random.RandomState,
                     fit_rows: np.ndarray | None = None,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Out-of-fold class probabilities (n, n_classes) of ``model`` fitted on X -> target,
    for every row; only the training rows in ``fit_rows`` (a mask) are fitted on, with
    their ``sample_weight`` if given."""
    folds = KFold(n_folds, shuffle=True, random_state=rng.randint(2**31 - 1))
    return cross_fit(model, X, target, n_classes, folds.split(X), fit_rows,
                     sample_weight)[0]


def cross_fit(model: Any, X: Any, target: np.ndarray, n_classes: int, splits: Any,
              fit_rows: np.ndarray | None = None,
              sample_weight: np.ndarray | None = None
              ) -> tuple[np.ndarray, list[FittedClasses]]:
    """The cross-fitting loop: for each (train, test) split, ``model`` fitted on the
    train rows (those in ``fit_rows`` only, with their ``sample_weight``) predicts the
    test rows. Returns the out-of-fold probabilities (n, n_classes) and the fold fits."""
    out = np.zeros((len(target), n_classes))
    fits = []
    for train, test in splits:
        if fit_rows is not None:
            train = train[fit_rows[train]]
        fits.append(fit_classes(model, X[train], target[train], n_classes,
                                None if sample_weight is None else sample_weight[train]))
        out[test] = fits[-1](X[test])
    return out, fits


def check_model(model: Any, name: str, world_ok: bool) -> None:
    """Raise unless ``model`` is None, a scikit-learn classifier (``fit`` and
    ``predict_proba``) or, where ``world_ok``, a known World."""
    if model is None or (world_ok and isinstance(model, World)):
        return
    if not (callable(getattr(model, "fit", None))
            and callable(getattr(model, "predict_proba", None))):
        what = "a scikit-learn classifier (with fit and predict_proba)"
        if world_ok:
            what += " or a World"
        raise FairdecideError(
            f"{name} must be {what}, got {type(model).__name__}; a regressor has no "
            "predict_proba")


def outcome_values(outcome_model: Any, units: Units, bandit: BanditData,
                   problem: DecisionProblem, n_folds: int, rng: np.random.RandomState
                   ) -> np.ndarray:
    """q(x_i, a) = sum_y P(y | x_i, a) U(a, y), shape (n, n_actions), cross-fitted (one
    model per action in interventions); a known World (``outcome_model``) gives
    P(y | a, .) of the ``units`` directly; None: :func:`default_model`."""
    U = problem.utility
    n_a, n_y = problem.n_actions, problem.n_outcomes
    if isinstance(outcome_model, World):
        return np.einsum("nay,ay->na", outcome_model.outcome_proba(units, problem), U)
    model, X = model_inputs(outcome_model, units, bandit.X, n_y)
    if not problem.outcome_depends_on_action:
        p = cross_fit_proba(model, X, bandit.y, n_y, n_folds, rng)
        return p @ U.T
    q = np.zeros((bandit.n, n_a))
    for a in range(n_a):
        rows = bandit.a == a
        if rows.sum() < n_folds:
            raise FairdecideError(
                f"action {problem.action_labels[a]!r} was logged {int(rows.sum())} times, "
                f"fewer than n_folds={n_folds}: too few to cross-fit its outcome model; use "
                "fewer folds or method='ips' or 'snips'")
        # Fit on the rows that took action a, predict for everyone (out of fold).
        p = cross_fit_proba(model, X, bandit.y, n_y, n_folds, rng, fit_rows=rows)
        q[:, a] = p @ U[a]
    return q
