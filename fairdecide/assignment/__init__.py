"""Decisions about many people at once: rankings and top-k selections.

:func:`optimize_ranking` finds the stochastic ranking (a matrix of position
probabilities) of highest expected utility under the exposure and top-share criteria of
:mod:`fairdecide.assignment.exposure`; its result samples deterministic rankings through
the Birkhoff-von Neumann decomposition.
"""

from fairdecide.assignment.exposure import (
    ExposureParity,
    MeritExposure,
    TopShare,
)
from fairdecide.assignment.ranking import optimize_ranking
from fairdecide.assignment.ranking_result import RankingResult
from fairdecide.assignment.smoothness import RankingLipschitz

__all__ = [
    "ExposureParity",
    "MeritExposure",
    "RankingLipschitz",
    "RankingResult",
    "TopShare",
    "optimize_ranking",
]
