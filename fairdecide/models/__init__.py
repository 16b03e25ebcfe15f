"""Fitting theta from data: counts and maximum likelihood, Dirichlet posteriors, bootstrap."""

from fairdecide.models.counts import TabularCounts
from fairdecide.models.dirichlet import BootstrapPosterior, DirichletPosterior
from fairdecide.models.individuals import IndividualOutcomeModel

__all__ = ["BootstrapPosterior", "DirichletPosterior", "IndividualOutcomeModel",
           "TabularCounts"]
