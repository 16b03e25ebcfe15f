"""Fairness criteria: conditional independence of action, outcome and group."""

from fairdecide.criteria.base import ConditionalIndependence, LinearizedConditionals
from fairdecide.criteria.divergences import MEASURES, block_divergence
from fairdecide.criteria.presets import Independence, Separation, Sufficiency

__all__ = [
    "MEASURES",
    "ConditionalIndependence",
    "Independence",
    "LinearizedConditionals",
    "Separation",
    "Sufficiency",
    "block_divergence",
]
