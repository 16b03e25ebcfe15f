"""The unknown world: beliefs (weighted scenarios, aggregated by their mean or worst
case) and confidence sets (worlds holding the truth with probability 1 - delta: their
balls, credible regions and refit bands)."""

from fairdecide.uncertainty.beliefs import Belief
from fairdecide.uncertainty.confidence import ConfidenceSet

__all__ = ["Belief", "ConfidenceSet"]
