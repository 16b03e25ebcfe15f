"""Words as exact as the numbers (issue 51, finding 1): a deviation is named with its
measure and reference, by one function, at every door; the short name still looks it up
where it is unambiguous. (The audit's summary, which the command line prints, names the
fair alternative's criterion so: tests/test_report.py.)"""

from __future__ import annotations

import pytest

import fairdecide as fd
from fairdecide.criteria.base import ByCriterion, resolve_names, short_name
from fairdecide.datasets import make_bail_problem, make_tabular_problem, sample_logged_data
from fairdecide.evaluation import estimate_deviation

PROBLEM, WORLD = make_bail_problem()
GAP = fd.Separation(measure="max", reference="pairwise")


@pytest.mark.parametrize(("crit", "label"), [
    (fd.Independence(), "independence, TV summed vs pooled"),
    (fd.Separation(), "separation, TV summed vs pooled"),
    (fd.Sufficiency(), "sufficiency, TV summed vs pooled"),
    (fd.Separation(measure="kl"), "separation, KL vs pooled"),
    (fd.Separation(measure="max"), "separation, largest gap vs pooled"),
    (fd.Separation(reference="pairwise"), "separation, TV summed over pairs"),
    (GAP, "separation, largest pairwise gap"),
    (fd.Independence(weighting="group"), "independence, TV summed vs pooled, weighted by P(z)"),
    (fd.Separation(outcomes=[1]), "separation[y=1], TV summed vs pooled"),
    (fd.Separation(name="mine"), "mine"),
])
def test_a_criterion_is_named_with_its_measure_and_reference(crit, label):
    assert crit.label == label
    assert short_name(label) == crit.short_label


def test_two_measures_of_one_criterion_get_two_names_not_a_number():
    # b19dcbc named the second 'separation#2', and both printed as "separation"
    problem, truth = make_tabular_problem(4, 2, 2, 2, random_state=1)
    data = sample_logged_data(problem, truth, 600, random_state=1)
    cs = fd.ConfidenceSet.from_data(data, problem, delta=0.1, population=truth)
    always = fd.TabularPolicy.constant(4, 2, [0.0, 1.0])
    g = fd.certify_policy(problem, cs, always, [GAP, fd.Separation()])
    assert list(g.deviations) == ["separation, largest pairwise gap",
                                  "separation, TV summed vs pooled"]
    assert resolve_names([fd.Separation(), fd.Separation()]) == [
        "separation, TV summed vs pooled", "separation, TV summed vs pooled#2"]


def test_a_short_name_looks_up_only_where_it_is_unambiguous():
    both = fd.optimize_policy(PROBLEM, WORLD, [fd.Separation(), GAP], epsilon=[0.2, 0.1])
    assert both.deviations[GAP] == both.deviations["separation, largest pairwise gap"]
    with pytest.raises(KeyError, match="'separation' names 2 criteria here"):
        both.deviations["separation"]
    assert "separation" not in both.deviations and both.deviations.get("separation") is None
    one = fd.optimize_policy(PROBLEM, WORLD, fd.Independence(), epsilon=0.05)
    assert one.deviations["independence"] == one.deviations[fd.Independence().label]
    assert isinstance(one.deviations, ByCriterion) and "independence" in one.deviations


def test_the_sum_and_the_largest_gap_read_apart_in_a_summary():
    res = fd.optimize_policy(PROBLEM, WORLD, [fd.Separation(), GAP], epsilon=[0.05, 1.0])
    text = res.summary()
    tv, gap = res.deviations[fd.Separation()], res.deviations[GAP]
    assert f"separation, TV summed vs pooled: {tv:.6g}" in text
    assert f"separation, largest pairwise gap: {gap:.6g}" in text
    assert "separation, TV summed vs pooled <= 0.05" in res.tradeoff


def test_one_name_at_every_door():
    crit = fd.Separation()
    data = sample_logged_data(PROBLEM, WORLD, 2000, random_state=0)
    res = fd.optimize_policy(PROBLEM, WORLD, crit, epsilon=0.1)
    front = fd.pareto_frontier(PROBLEM, WORLD, crit, [0.1, 0.2])
    est = estimate_deviation(PROBLEM, data, crit, n_boot=20, random_state=0)
    table = fd.evaluation.audit(data, PROBLEM, [crit], n_boot=20, n_draws=50,
                                random_state=0)
    ev = fd.evaluate_under_belief(PROBLEM, fd.Belief.plug_in(WORLD), res.policy, crit)
    assert list(res.deviations) == [crit.label]
    assert front.attrs["criterion"] == crit.label
    assert est.criterion == crit.label and list(table["criterion"]) == [crit.label]
    assert crit.label in ev.values.columns


def test_a_tolerance_reads_in_one_convention():
    assert GAP.tolerance_text(0.05) == ("separation at most 0.05 as the largest gap between "
                                        "two groups' rates of an action given the outcome")
    assert fd.Independence().tolerance_text(0.1) == (
        "independence at most 0.1 as the total variation between each group's distribution "
        "of actions and the pooled one, summed over groups")
    problem, truth = make_tabular_problem(4, 2, 2, 2, random_state=1)
    data = sample_logged_data(problem, truth, 600, random_state=1)
    cs = fd.ConfidenceSet.from_data(data, problem, delta=0.1, population=truth)
    res = fd.optimize_policy(problem, cs, GAP, epsilon=0.3)
    (bound,) = res.guarantee.deviations.values()
    assert (f"its separation is at most {bound:.4g} as the largest gap between two groups' "
            "rates of an action given the outcome") in res.explain()
