"""Evaluation of policies: under a belief about the world, and off-policy from logs."""

from fairdecide.data.logged import BanditData
from fairdecide.evaluation.audit import (
    DeviationEstimate,
    audit,
    estimate_deviation,
    log_marginal_likelihoods,
)
from fairdecide.evaluation.belief import BeliefEvaluation, evaluate_under_belief
from fairdecide.evaluation.certify import DeviationCertificate, certify
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
    "DeviationCertificate",
    "DeviationEstimate",
    "DirectMethod",
    "DoublyRobust",
    "GroupValues",
    "InverseProbability",
    "OffPolicyInputs",
    "OnPolicy",
    "SelfNormalized",
    "ValueEstimate",
    "audit",
    "certify",
    "estimate_deviation",
    "evaluate_policy",
    "evaluate_policy_by_group",
    "evaluate_under_belief",
    "log_marginal_likelihoods",
]
