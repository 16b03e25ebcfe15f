"""No silent NaN or infinity from the evaluation functions; arguments checked by name."""

import warnings

import numpy as np
import pytest

import fairdecide as fd
from fairdecide import FairdecideError, Independence, Separation, TabularPolicy
from fairdecide.datasets import make_bail_problem, sample_logged_data
from fairdecide.evaluation import (
    GroupValues,
    ValueEstimate,
    audit,
    estimate_deviation,
    evaluate_policy,
    evaluate_policy_by_group,
    evaluate_under_belief,
    log_marginal_likelihoods,
)

SEP = fd.Separation().label  # the criterion's name with its measure

PROBLEM, WORLD = make_bail_problem()
DATA = sample_logged_data(PROBLEM, WORLD, 400, random_state=0)
POLICY = TabularPolicy.constant(5, 2, [0.5, 0.5])


def _with_propensity(value):
    data = DATA.subset(np.arange(DATA.n))
    prop = data.propensity.copy()
    prop[0] = value
    data.propensity = prop
    return data


@pytest.mark.parametrize("estimator", ["ips", "snips", "dr"])
def test_subnormal_propensity_overflows_loudly(estimator):
    # The data containers may refuse such propensities themselves; either way the
    # error says that the weights overflow.
    try:
        data = _with_propensity(5e-324)
    except FairdecideError as exc:
        assert "overflow" in str(exc)
        return
    with pytest.raises(FairdecideError, match="overflow"):
        evaluate_policy(PROBLEM, data, POLICY, estimator)
    with pytest.raises(FairdecideError, match="overflow"):
        estimate_deviation(PROBLEM, data, criterion=Independence(), policy=POLICY,
                           n_boot=10)


@pytest.mark.parametrize("name", ["ips", "snips", "dr"])
def test_estimators_refuse_overflowing_weights_themselves(name):
    from fairdecide.evaluation.offpolicy import METHODS
    from fairdecide.evaluation.ope import OffPolicyInputs

    n = 5
    prop = np.full(n, 0.5)
    prop[2] = 5e-324
    inputs = OffPolicyInputs(np.ones(n), np.zeros(n, int), np.tile([0.5, 0.5], (n, 1)),
                             prop, np.zeros((n, 2)))
    with pytest.raises(FairdecideError, match="importance weights overflow: row 2"):
        METHODS[name]().estimate(inputs)


@pytest.mark.parametrize("estimator", ["ips", "snips", "dr"])
def test_tiny_propensity_warns_of_overlap_and_stays_finite(estimator):
    try:
        data = _with_propensity(1e-300)
    except FairdecideError:
        return
    with pytest.warns(UserWarning, match="poor overlap"):
        est = evaluate_policy(PROBLEM, data, POLICY, estimator)
    assert np.isfinite(est.value) and np.isfinite(est.std_error)
    assert est.ess == pytest.approx(1.0, abs=0.01)  # one row carries all the weight


def test_non_finite_value_is_an_error_not_a_result():
    from fairdecide.evaluation.ope import InverseProbability, OffPolicyInputs

    n = 4
    inputs = OffPolicyInputs(np.ones(n), np.zeros(n, int), np.tile([1.0, 0.0], (n, 1)),
                             np.full(n, 1e-308))
    with pytest.raises(FairdecideError, match="not a finite number"):
        InverseProbability().estimate(inputs)


def test_results_are_finite_on_ordinary_data():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for estimator in ("ips", "snips", "dr", "dm"):
            est = evaluate_policy(PROBLEM, DATA, POLICY, estimator, random_state=0)
            assert np.isfinite([est.value, est.std_error, *est.confidence_interval()]).all()


@pytest.mark.parametrize("level", [2, 0, 1, float("nan"), "0.9", [0.9]])
def test_levels_are_checked(level):
    res = GroupValues(ValueEstimate(0.5, 0.01, "ips", 2),
                      {0: ValueEstimate(0.4, 0.1, "ips", 1),
                       1: ValueEstimate(0.6, 0.1, "ips", 1)})
    with pytest.raises(FairdecideError, match="level"):
        res.gaps(level=level)
    with pytest.raises(FairdecideError, match="level"):
        res.overall.confidence_interval(level)
    with pytest.raises(FairdecideError, match="level"):
        estimate_deviation(PROBLEM, DATA, Independence(), level=level, n_boot=10)
    with pytest.raises(FairdecideError, match="level"):
        audit(DATA, PROBLEM, level=level, n_boot=10, n_draws=10)


def test_belief_summary_quantiles_are_checked():
    ev = evaluate_under_belief(PROBLEM, WORLD, POLICY, Independence())
    for bad in ([np.nan], [1.5], "a", [[0.5]]):
        with pytest.raises(FairdecideError, match="quantiles"):
            ev.summary(bad)
    assert ev.summary([0.5]).shape == (2, 5)


def test_log_marginal_likelihoods_refuse_bad_counts_and_alpha():
    good = np.full((2, 2, 2), 3.0)
    for bad in (np.full((2, 2, 2), np.nan), -good, np.ones((2, 2))):
        with pytest.raises(FairdecideError, match="N "):
            log_marginal_likelihoods(bad)
    for alpha in (0, -1, np.nan, np.inf, "1"):
        with pytest.raises(FairdecideError, match="alpha"):
            log_marginal_likelihoods(good, alpha)


@pytest.mark.parametrize("name, value", [
    ("n_boot", "5"), ("n_boot", 2.5), ("n_boot", 5), ("n_boot", np.nan),
    ("n_draws", 0), ("n_draws", "10"), ("prior", 0), ("prior", np.nan),
    ("prior", "1"),
])
def test_audit_arguments_are_named(name, value):
    kwargs = {"n_boot": 10, "n_draws": 10, name: value}
    with pytest.raises(FairdecideError, match=name):
        audit(DATA, PROBLEM, **kwargs)


@pytest.mark.parametrize("kwargs, name", [
    ({"n_folds": 10_000}, "n_folds"), ({"n_folds": "5"}, "n_folds"),
    ({"n_folds": 1}, "n_folds"), ({"interval": "bootstrap", "n_boot": "5"}, "n_boot"),
    ({"interval": ["normal"]}, "interval"),
    ({"method": "bayes", "n_draws": np.nan}, "n_draws"),
    ({"method": "bayes", "n_draws": 0}, "n_draws"),
    ({"method": "bayes", "prior": "a"}, "prior"),
    ({"method": "bayes", "prior": 0}, "prior"),
])
def test_evaluate_policy_arguments_are_named(kwargs, name):
    with pytest.raises(FairdecideError, match=name):
        evaluate_policy(PROBLEM, DATA, POLICY, **kwargs)


def test_too_many_folds_for_an_action_names_n_folds():
    with pytest.raises(FairdecideError, match="n_folds"):
        evaluate_policy(PROBLEM, DATA, POLICY, "dr", n_folds=300)


def test_wrong_object_types_name_the_argument():
    frame = DATA.to_frame()
    calls = {
        "data": [lambda: evaluate_policy(PROBLEM, frame, POLICY),
                 lambda: evaluate_policy(PROBLEM, frame, POLICY, "bayes"),
                 lambda: evaluate_policy_by_group(PROBLEM, frame, POLICY),
                 lambda: estimate_deviation(PROBLEM, frame, Independence()),
                 lambda: audit(frame, PROBLEM)],
        "problem": [lambda: evaluate_policy(np.eye(2), DATA, POLICY),
                    lambda: evaluate_policy_by_group(np.eye(2), DATA, POLICY),
                    lambda: estimate_deviation(np.eye(2), DATA, Independence()),
                    lambda: audit(DATA, np.eye(2)),
                    lambda: evaluate_under_belief(np.eye(2), WORLD, POLICY)],
        "policy": [lambda: evaluate_policy(PROBLEM, DATA, np.eye(2)),
                   lambda: estimate_deviation(PROBLEM, DATA, Independence(), np.eye(2)),
                   lambda: evaluate_under_belief(PROBLEM, WORLD, np.eye(2))],
        "criterion": [lambda: estimate_deviation(PROBLEM, DATA, np.eye(2))],
        "criteria": [lambda: audit(DATA, PROBLEM, [np.eye(2)])],
        "belief": [lambda: evaluate_under_belief(PROBLEM, np.eye(2), POLICY)],
    }
    for name, fns in calls.items():
        for fn in fns:
            with pytest.raises(FairdecideError, match=name):
                fn()


def test_one_criterion_is_accepted_by_audit():
    table = audit(DATA, PROBLEM, Separation(), n_boot=10, n_draws=10, random_state=0)
    assert list(table["criterion"]) == [SEP]


def test_a_group_of_one_row_is_an_error_not_a_nan_standard_error():
    rows = np.r_[np.flatnonzero(DATA.z == 0), np.flatnonzero(DATA.z == 1)[:1]]
    data = DATA.subset(rows)
    with pytest.raises(FairdecideError, match=r"group 'group B': .*at least 2 rows"):
        evaluate_policy_by_group(PROBLEM, data, POLICY, "ips")
