"""Fitting theta from data: Dirichlet posteriors, bootstrap, an outcome model of
individuals, and a Bayesian outcome model of them (pymc, imported only when it samples).
The counts and maximum likelihood of a tabular problem are data
(:class:`fairdecide.data.TabularCounts`)."""

import warnings

from fairdecide.data.tabular_counts import TabularCounts as _TabularCounts
from fairdecide.models.bayesian import BayesianOutcomeModel
from fairdecide.models.dirichlet import BootstrapPosterior, DirichletPosterior
from fairdecide.models.individuals import IndividualOutcomeModel

__all__ = ["BayesianOutcomeModel", "BootstrapPosterior", "DirichletPosterior",
           "IndividualOutcomeModel"]


def __getattr__(name: str) -> type:
    if name == "TabularCounts":  # where it was until issue 52: one release, then gone
        warnings.warn("fairdecide.models.TabularCounts is deprecated: use "
                      "fairdecide.data.TabularCounts", DeprecationWarning, stacklevel=2)
        return _TabularCounts
    raise AttributeError(f"module 'fairdecide.models' has no attribute {name!r}")
