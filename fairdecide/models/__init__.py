"""Fitting theta from data: counts and maximum likelihood, Dirichlet posteriors, bootstrap,
and a Bayesian outcome model of individuals (pymc, imported only when it samples)."""

from fairdecide.data.tabular_counts import TabularCounts
from fairdecide.models.bayesian import BayesianOutcomeModel
from fairdecide.models.dirichlet import BootstrapPosterior, DirichletPosterior
from fairdecide.models.individuals import IndividualOutcomeModel

__all__ = ["BayesianOutcomeModel", "BootstrapPosterior", "DirichletPosterior",
           "IndividualOutcomeModel", "TabularCounts"]
