"""The score family's score: a classifier's cross-fitted probabilities of the outcome,
what of them is binned, and the order of the actions along it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import issparse
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairdecide._common.validation import as_int
from fairdecide.criteria import Criterion, MeritOrder
from fairdecide.models.outcome import cross_fit, default_classifier
from fairdecide.problem import DecisionProblem

__all__ = ["SCORE_FOLDS", "FoldMean", "cross_fitted_scores", "merit_order", "score_features"]

#: Folds of the score family's cross-fitted scores when n_folds is not set: three fits
#: of the scorer, nearly all of the family's fit time (new rows get their mean).
SCORE_FOLDS = 3


def score_features(proba: np.ndarray) -> np.ndarray:
    """What the score family bins: P(y = 1 | x) with two classes; with more, the most
    probable class and its probability."""
    proba = np.asarray(proba, dtype=float)
    if proba.shape[1] == 2:
        return proba[:, 1:]
    return np.column_stack([np.argmax(proba, axis=1), proba.max(axis=1)])


@dataclass
class FoldMean:
    """The mean of the fold fits' class probabilities: the score of a new row."""

    fits: list[Any]

    def __call__(self, X: Any) -> np.ndarray:
        return np.mean([fit(X) for fit in self.fits], axis=0)


def cross_fitted_scores(est: Any, X: np.ndarray, y: np.ndarray, n_classes: int,
                        seed: int, sample_weight: np.ndarray | None = None
                        ) -> tuple[FoldMean, np.ndarray, np.ndarray]:
    """Each training row's score from a fit of the scorer (``outcome_model``, default
    logistic regression on standardised features) that did not see it (``n_folds``
    folds, default SCORE_FOLDS): the bins' outcome frequencies are then honest, as they
    will be for new rows. New rows are scored by the mean of the fold fits' probabilities
    (:class:`FoldMean`), so no fit on every row is needed (a fourth fit of the scorer was
    a quarter of the family's fit time). Returns the scorer, the out-of-fold scores and
    the training rows' scores by the scorer (the bins a prediction puts them in)."""
    sparse = issparse(X)  # scaled without centring, which would densify it
    model = (make_pipeline(StandardScaler(with_mean=not sparse), default_classifier())
             if est.outcome_model is None else est.outcome_model)
    folds = SCORE_FOLDS if est.n_folds is None else as_int(est.n_folds, "n_folds", minimum=2)
    rare = np.bincount(y, minlength=n_classes).min() < folds  # a class too rare to stratify
    split = (KFold if rare else StratifiedKFold)(folds, shuffle=True, random_state=seed)
    proba, fits = cross_fit(model, X, y, n_classes, split.split(X, y),
                            sample_weight=sample_weight)
    scorer = FoldMean(fits)
    return scorer, score_features(proba), score_features(scorer(X))


def merit_order(problem: DecisionProblem, n_bins: int) -> Criterion | None:
    """The score family's monotonicity: with two classes, the actions are ordered by
    how much their utility gains from the positive outcome, s(a) = U(a, 1) - U(a, 0)
    (the slope of a's expected utility in P(y = 1)), and each group's rule may not
    move a higher bin towards actions of lower slope (MeritOrder over the bins). The
    unconstrained optimum has that order, so it only keeps the program from fitting the
    noise of the bins' outcome rates. None when two actions have the same slope (no
    order), or with more classes (their bins are not ordered by one score)."""
    u = problem.utility
    if u.shape[1] != 2:
        return None
    slope = u[:, 1] - u[:, 0]
    if len(np.unique(slope)) < len(slope):
        return None
    order = tuple(int(a) for a in np.argsort(slope))
    return MeritOrder(merit=np.arange(n_bins, dtype=float), actions=order, name="score order")


def nearest_seen(seen: np.ndarray) -> np.ndarray:
    """For each (bin, group), the nearest bin (in score order; the lower on a tie) seen
    with that group in training: score bins are ordered, so a bin a small group never
    reached takes its neighbour's rule, not the group's average (which would break the
    rule's order in the score)."""
    n_bins, n_groups = seen.shape
    out = np.tile(np.arange(n_bins)[:, None], (1, n_groups))
    for g in range(n_groups):
        have = np.flatnonzero(seen[:, g])
        if len(have):
            pos = np.searchsorted(have, np.arange(n_bins)).clip(1, len(have)) - 1
            up = np.minimum(pos + 1, len(have) - 1)
            lower, upper = have[pos], have[up]
            bins = np.arange(n_bins)
            out[:, g] = np.where(np.abs(upper - bins) < np.abs(bins - lower), upper, lower)
    return out
