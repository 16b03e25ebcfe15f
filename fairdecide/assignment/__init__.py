"""Decisions about many people at once: lotteries over assignments (rankings, cohorts,
matchings) whose marginals are a fractional solution."""

from fairdecide.assignment.birkhoff import (
    BirkhoffDecomposition,
    birkhoff_decomposition,
    complete_doubly_stochastic,
)

__all__ = ["BirkhoffDecomposition", "birkhoff_decomposition", "complete_doubly_stochastic"]
