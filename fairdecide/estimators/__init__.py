"""scikit-learn estimators: fair classifiers and fair decision policies, their scorers,
and the registry the common checks discover them from (the checks each estimator is
expected to fail, a test constant, stay in :mod:`fairdecide.estimators.checks`)."""

from fairdecide.estimators.checks import all_estimators
from fairdecide.estimators.classifier import FairPolicyClassifier
from fairdecide.estimators.decision import FairDecisionPolicy
from fairdecide.estimators.scoring import (
    best_utility_within,
    make_fairness_scorer,
    make_utility_scorer,
)

__all__ = [
    "FairDecisionPolicy",
    "FairPolicyClassifier",
    "all_estimators",
    "best_utility_within",
    "make_fairness_scorer",
    "make_utility_scorer",
]
