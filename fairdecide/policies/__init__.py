"""Decision policies pi(a | u): the Policy protocol, tabular policies, adapters, and
cohorts of exactly k drawn from selection probabilities."""

from fairdecide.policies.adapters import CallablePolicy, ClassifierPolicy, as_policy
from fairdecide.policies.base import ParametricPolicy, Policy, sample_cohort
from fairdecide.policies.individual import IndividualPolicy
from fairdecide.policies.mixture import VertexMixturePolicy
from fairdecide.policies.softmax import LinearSoftmaxPolicy
from fairdecide.policies.tabular import TabularPolicy

__all__ = [
    "CallablePolicy",
    "ClassifierPolicy",
    "IndividualPolicy",
    "LinearSoftmaxPolicy",
    "ParametricPolicy",
    "Policy",
    "TabularPolicy",
    "VertexMixturePolicy",
    "as_policy",
    "sample_cohort",
]
