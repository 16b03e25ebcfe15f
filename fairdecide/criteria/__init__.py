"""Fairness criteria: the Criterion protocol and the conditional-independence criteria."""

from fairdecide.criteria.base import Capabilities, Criterion, resolve_names
from fairdecide.criteria.conditional import ConditionalIndependence, LinearizedConditionals
from fairdecide.criteria.divergences import MEASURES, block_divergence
from fairdecide.criteria.presets import Independence, Separation, Sufficiency

__all__ = [
    "MEASURES",
    "Capabilities",
    "ConditionalIndependence",
    "Criterion",
    "Independence",
    "LinearizedConditionals",
    "Separation",
    "Sufficiency",
    "block_divergence",
    "resolve_names",
]
