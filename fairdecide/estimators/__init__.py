"""scikit-learn estimators: fair classifiers and fair decision policies, their scorers,
and the registry the common checks discover them from."""

from fairdecide.estimators.checks import EXPECTED_FAILED_CHECKS, all_estimators
from fairdecide.estimators.classifier import FairPolicyClassifier
from fairdecide.estimators.decision import FairDecisionPolicy
from fairdecide.estimators.scoring import (
    best_utility_within,
    make_fairness_scorer,
    make_utility_scorer,
)

__all__ = [
    "EXPECTED_FAILED_CHECKS",
    "FairDecisionPolicy",
    "FairPolicyClassifier",
    "all_estimators",
    "best_utility_within",
    "make_fairness_scorer",
    "make_utility_scorer",
]
