"""Decisions about many people at once: lotteries over assignments (rankings, cohorts,
matchings) whose marginals are a fractional solution.

:func:`optimize_ranking` finds the stochastic ranking (a matrix of position
probabilities) of highest expected utility under the exposure and top-share criteria of
:mod:`fairdecide.assignment.exposure` and the smoothness of
:mod:`fairdecide.assignment.smoothness`; its result samples deterministic rankings
through the Birkhoff-von Neumann decomposition (:func:`birkhoff_decomposition`), or,
under exposure criteria alone, through the few rankings its program returns
(:class:`RankingLottery`).
:func:`optimize_matching` finds the randomised matching of candidates to programmes with
capacities (a fractional matching, stable in expectation where asked) of highest
expected utility under group criteria, beside :func:`deferred_acceptance`'s stable
matching; its result samples integral matchings with the same marginals.
"""

from fairdecide.assignment.birkhoff import (
    BirkhoffDecomposition,
    birkhoff_decomposition,
    complete_doubly_stochastic,
)
from fairdecide.assignment.exposure import ExposureParity, MeritExposure, TopShare
from fairdecide.assignment.lottery import RankingLottery
from fairdecide.assignment.matching_lp import optimize_matching, rank_utility
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
    "RankingLottery",
    "RankingResult",
    "TopShare",
    "birkhoff_decomposition",
    "blocking_pairs",
    "complete_doubly_stochastic",
    "deferred_acceptance",
    "optimize_matching",
    "optimize_ranking",
    "rank_utility",
]
