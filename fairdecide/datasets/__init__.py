"""Data sets: synthetic problems with known truth, public fairness data, and the Open
Bandit Dataset's logs with true propensities."""

from fairdecide.datasets.bandit import LoggedBanditTruth, make_logged_bandit
from fairdecide.datasets.open_bandit import OpenBanditData, load_open_bandit
from fairdecide.datasets.real import (
    DataNotFoundError,
    find_dataset,
    load_adult,
    load_compas,
    load_german,
)
from fairdecide.datasets.synthetic import (
    make_bail_problem,
    make_tabular_problem,
    sample_logged_data,
)

__all__ = [
    "DataNotFoundError",
    "LoggedBanditTruth",
    "OpenBanditData",
    "find_dataset",
    "load_adult",
    "load_compas",
    "load_german",
    "load_open_bandit",
    "make_bail_problem",
    "make_logged_bandit",
    "make_tabular_problem",
    "sample_logged_data",
]
