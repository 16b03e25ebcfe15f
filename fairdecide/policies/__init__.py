"""Decision policies pi(a | u): the Policy protocol, tabular policies, adapters."""

from fairdecide.policies.adapters import CallablePolicy, ClassifierPolicy, as_policy
from fairdecide.policies.base import ParametricPolicy, Policy
from fairdecide.policies.tabular import TabularPolicy

__all__ = [
    "CallablePolicy",
    "ClassifierPolicy",
    "ParametricPolicy",
    "Policy",
    "TabularPolicy",
    "as_policy",
]
