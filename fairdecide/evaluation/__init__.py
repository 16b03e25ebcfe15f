"""Evaluation of policies: under a belief about the world, and off-policy from logs."""

from fairdecide.evaluation.belief import BeliefEvaluation, evaluate_under_belief
from fairdecide.evaluation.offpolicy import BanditData, evaluate_policy
from fairdecide.evaluation.ope import (
    DirectMethod,
    DoublyRobust,
    InverseProbability,
    OffPolicyInputs,
    SelfNormalized,
    ValueEstimate,
)

__all__ = [
    "BanditData",
    "BeliefEvaluation",
    "DirectMethod",
    "DoublyRobust",
    "InverseProbability",
    "OffPolicyInputs",
    "SelfNormalized",
    "ValueEstimate",
    "evaluate_policy",
    "evaluate_under_belief",
]
