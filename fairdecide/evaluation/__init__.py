"""Evaluation of policies: under a belief about the world, and off-policy from logs."""

from fairdecide._common.deprecation import deprecated_attribute
from fairdecide.data.logged import BanditData
from fairdecide.evaluation.audit import (
    DeviationEstimate,
    audit,
    estimate_deviation,
    log_marginal_likelihoods,
)
from fairdecide.evaluation.belief import BeliefEvaluation, evaluate_under_belief
from fairdecide.evaluation.certify import HeldOutGuarantee, certify_held_out
from fairdecide.evaluation.certify import certify as certify  # deprecated (below)
from fairdecide.evaluation.groups import GroupValues, evaluate_policy_by_group
from fairdecide.evaluation.offpolicy import evaluate_policy
from fairdecide.evaluation.ope import (
    DirectMethod,
    DoublyRobust,
    InverseProbability,
    OffPolicyInputs,
    OnPolicy,
    SelfNormalized,
    ValueEstimate,
)
from fairdecide.models.outcome import CellFrequencies

__all__ = [
    "BanditData",
    "BeliefEvaluation",
    "CellFrequencies",
    "DeviationEstimate",
    "DirectMethod",
    "DoublyRobust",
    "GroupValues",
    "HeldOutGuarantee",
    "InverseProbability",
    "OffPolicyInputs",
    "OnPolicy",
    "SelfNormalized",
    "ValueEstimate",
    "audit",
    "certify_held_out",
    "estimate_deviation",
    "evaluate_policy",
    "evaluate_policy_by_group",
    "evaluate_under_belief",
    "log_marginal_likelihoods",
]

# ``certify`` (bound above, outside __all__) is the deprecated name of certify_held_out:
# calling it warns. Bound by name, not through __getattr__, because the submodule
# ``certify`` would otherwise answer for it.
__getattr__ = deprecated_attribute("fairdecide.evaluation", {
    "DeviationCertificate": ("HeldOutGuarantee", lambda: HeldOutGuarantee)})
