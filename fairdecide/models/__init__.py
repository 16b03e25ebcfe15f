"""Fitting theta from data: counts and maximum likelihood for tabular worlds."""

from fairdecide.models.counts import TabularCounts

__all__ = ["TabularCounts"]
