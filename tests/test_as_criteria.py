"""One as_criteria for every entry point: names, objects, sequences, and clear errors."""

from __future__ import annotations

import pytest

import fairdecide as fd
from fairdecide.criteria.base import NAMED, as_criteria
from fairdecide.criteria.conditional import ConditionalIndependence
from fairdecide.datasets import make_bail_problem
from fairdecide.exceptions import FairdecideError

PROBLEM, WORLD = make_bail_problem()


def test_names_are_the_presets():
    assert sorted(NAMED) == ["demographic_parity_difference", "equalized_odds_difference",
                             "independence", "separation", "sufficiency"]
    for name, preset in (("independence", fd.Independence), ("separation", fd.Separation),
                         ("sufficiency", fd.Sufficiency)):
        assert as_criteria(name) == [preset()]
    mixed = as_criteria(["separation", fd.Independence(measure="max")])
    assert mixed == [fd.Separation(), fd.Independence(measure="max")]
    assert as_criteria(None) == [] and as_criteria(()) == []


def test_optimize_policy_takes_a_name_as_it_takes_the_object():
    by_name = fd.optimize_policy(PROBLEM, WORLD, "independence", epsilon=0.02)
    by_object = fd.optimize_policy(PROBLEM, WORLD, fd.Independence(), epsilon=0.02)
    assert by_name.utility == by_object.utility
    assert by_name.deviations == by_object.deviations


@pytest.mark.parametrize(("criteria", "match"), [
    ("parity", r"criteria\[0\] is the unknown criterion name 'parity'; use one of"),
    (3, "criteria must be a criterion, a criterion name"),
    ([fd.Independence(), 3], r"criteria\[1\] must be a fairness criterion .*, got int"),
    ([None], r"criteria\[0\] must be a fairness criterion .*, got NoneType"),
])
def test_malformed_criteria(criteria, match):
    with pytest.raises(FairdecideError, match=match):
        as_criteria(criteria)
    with pytest.raises(FairdecideError, match=match):
        fd.optimize_policy(PROBLEM, WORLD, criteria, epsilon=0.02)


def test_a_kind_restricts_what_is_taken():
    assert as_criteria("separation", kind=ConditionalIndependence) == [fd.Separation()]
    with pytest.raises(FairdecideError, match=r"criteria\[0\] must be a group criterion"):
        as_criteria([fd.Lipschitz()], kind=ConditionalIndependence, what="a group criterion")
