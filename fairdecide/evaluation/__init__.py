"""Evaluation of policies: under a belief about the world."""

from fairdecide.evaluation.belief import BeliefEvaluation, evaluate_under_belief

__all__ = ["BeliefEvaluation", "evaluate_under_belief"]
