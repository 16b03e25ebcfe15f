"""Fairness criteria: the Criterion protocol, the conditional-independence criteria,
Lipschitz (individual) fairness, meritocratic order and capacity."""

from fairdecide.criteria.base import Capabilities, Criterion, resolve_names
from fairdecide.criteria.capacity import Capacity
from fairdecide.criteria.conditional import ConditionalIndependence, LinearizedConditionals
from fairdecide.criteria.divergences import MEASURES, block_divergence
from fairdecide.criteria.lipschitz import Lipschitz
from fairdecide.criteria.merit_order import MeritOrder
from fairdecide.criteria.presets import Independence, Separation, Sufficiency

__all__ = [
    "MEASURES",
    "Capabilities",
    "Capacity",
    "ConditionalIndependence",
    "Criterion",
    "Independence",
    "LinearizedConditionals",
    "Lipschitz",
    "MeritOrder",
    "Separation",
    "Sufficiency",
    "block_divergence",
    "resolve_names",
]
