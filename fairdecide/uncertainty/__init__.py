"""The unknown world: beliefs (weighted scenarios, aggregated by their mean or worst
case) and confidence sets (worlds holding the truth with probability 1 - delta: their
balls, credible regions and refit bands)."""

from fairdecide.uncertainty.beliefs import Belief
from fairdecide.uncertainty.confidence import ConfidenceSet
from fairdecide.uncertainty.kinds import SetKind
from fairdecide.uncertainty.regions import Boxes, L1Balls, OutcomeRegions

__all__ = ["Belief", "Boxes", "ConfidenceSet", "L1Balls", "OutcomeRegions", "SetKind"]
