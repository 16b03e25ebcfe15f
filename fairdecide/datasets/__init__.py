"""Data sets: synthetic problems with known truth, and public fairness data."""

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
    "find_dataset",
    "load_adult",
    "load_compas",
    "load_german",
    "make_bail_problem",
    "make_tabular_problem",
    "sample_logged_data",
]
