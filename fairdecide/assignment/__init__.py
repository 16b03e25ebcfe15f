"""Decisions about many people at once: lotteries over assignments (rankings, cohorts,
matchings) whose marginals are a fractional solution."""

from fairdecide.assignment.birkhoff import (
    BirkhoffDecomposition,
    birkhoff_decomposition,
    complete_doubly_stochastic,
)
from fairdecide.assignment.matching_lp import fair_matching, rank_utility
from fairdecide.assignment.result import MatchingResult
from fairdecide.assignment.stable import MatchingMarket, blocking_pairs, deferred_acceptance

__all__ = ["BirkhoffDecomposition", "MatchingMarket", "MatchingResult",
           "birkhoff_decomposition", "blocking_pairs", "complete_doubly_stochastic",
           "deferred_acceptance", "fair_matching", "rank_utility"]
