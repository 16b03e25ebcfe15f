"""Decisions about many people at once: lotteries over assignments (rankings, cohorts,
matchings) whose marginals are a fractional solution.

:func:`optimize_ranking` finds the stochastic ranking (a matrix of position
probabilities) of highest expected utility under the exposure and top-share criteria of
:mod:`fairdecide.assignment.exposure` and the smoothness of
:mod:`fairdecide.assignment.smoothness`; its result samples deterministic rankings
through the Birkhoff-von Neumann decomposition (:func:`birkhoff_decomposition`).
"""

from fairdecide.assignment.birkhoff import (
    BirkhoffDecomposition,
    birkhoff_decomposition,
    complete_doubly_stochastic,
)
from fairdecide.assignment.exposure import ExposureParity, MeritExposure, TopShare
from fairdecide.assignment.matching_lp import fair_matching, rank_utility
from fairdecide.assignment.ranking import optimize_ranking
from fairdecide.assignment.ranking_result import RankingResult
from fairdecide.assignment.result import MatchingResult
from fairdecide.assignment.smoothness import RankingLipschitz
from fairdecide.assignment.stable import MatchingMarket, blocking_pairs, deferred_acceptance

__all__ = [
    "BirkhoffDecomposition",
    "ExposureParity",
    "MatchingMarket",
    "MatchingResult",
    "MeritExposure",
    "RankingLipschitz",
    "RankingResult",
    "TopShare",
    "birkhoff_decomposition",
    "blocking_pairs",
    "complete_doubly_stochastic",
    "deferred_acceptance",
    "fair_matching",
    "optimize_ranking",
    "rank_utility",
]
