"""Silent wrong answers and unclear errors found by an adversarial review of issue 8,
each now an error or a warning that says what is wrong."""

import re
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

import fairdecide as fd
from fairdecide.datasets import make_bail_problem, make_tabular_problem, sample_logged_data
from fairdecide.evaluation import (
    InverseProbability,
    audit,
    estimate_deviation,
    evaluate_policy,
    evaluate_policy_by_group,
)

PROBLEM, WORLD = make_bail_problem()
BEST = fd.optimize_policy(PROBLEM, WORLD).policy
RELEASE_ALL = fd.TabularPolicy.for_world(WORLD, [0.0, 1.0])


def test_belief_of_relabelled_worlds_is_refused():
    # the same world with its cells listed in the other order: pairing cells by position
    # gave an "optimal", verified policy that was not optimal
    same = fd.TabularWorld(WORLD.p_xz[::-1], WORLD.p_y[::-1],
                           x_labels=WORLD.x_labels[::-1], group_labels=WORLD.group_labels)
    with pytest.raises(fd.FairdecideError, match=r"worlds\[1\] has other units, labels"):
        fd.Belief((WORLD, same))


@pytest.mark.parametrize("call", [
    lambda d: estimate_deviation(PROBLEM, d, fd.Independence(), BEST, n_boot=20,
                                 random_state=0),
    lambda d: evaluate_policy(PROBLEM, d, BEST, "snips"),
    lambda d: evaluate_policy(PROBLEM, d, BEST, "ips"),
    lambda d: evaluate_policy(PROBLEM, d, BEST, "bayes", n_draws=10, random_state=0),
])
def test_never_logged_decisions_are_flagged(call):
    data = sample_logged_data(PROBLEM, WORLD, 1000, policy=RELEASE_ALL, random_state=0)
    # independently: every detention the candidate would make was never logged
    missing = BEST.proba(data.units())[:, 0].mean()
    assert missing > 0.05
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(data)
    messages = [str(w.message) for w in caught if "never logged" in str(w.message)]
    assert messages, "no warning about decisions the logs never saw"
    share = float(re.search(r"puts ([0-9.]+)%", messages[0]).group(1)) / 100
    assert share == pytest.approx(missing, abs=5e-4)
    assert "['detain'] never logged at all" in messages[0]


def test_supported_policy_is_not_flagged():
    data = sample_logged_data(PROBLEM, WORLD, 1000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate_policy(PROBLEM, data, BEST, "ips")


def test_one_group_is_refused_where_fairness_compares_groups():
    data = sample_logged_data(PROBLEM, WORLD, 500, random_state=0)
    frame = data.to_frame()
    frame = frame[frame["z"] == "group A"]
    one = fd.LoggedData(frame["x"], frame["z"], frame["y"], frame["a"],
                        propensity=frame["propensity"])
    with pytest.raises(fd.FairdecideError, match="only one group"):
        audit(one, PROBLEM, n_boot=20, n_draws=20)
    with pytest.raises(fd.FairdecideError, match="only one group"):
        estimate_deviation(PROBLEM, one, fd.Separation(), n_boot=20)
    with pytest.warns(UserWarning, match="have no rows"):
        values = evaluate_policy_by_group(PROBLEM, data.subset(data.z == 0), BEST, "ips")
    with pytest.raises(fd.FairdecideError, match="gaps need at least two groups"):
        values.gaps()


@pytest.mark.parametrize(("call", "match"), [
    (lambda: fd.optimize_policy(PROBLEM, WORLD, fd.Sufficiency(), epsilon=0.05, tol=10),
     "tol must be at most 0.01"),
    (lambda: fd.DecisionProblem(np.eye(2), "False"),
     "outcome_depends_on_action must be True or False, got str"),
    (lambda: fd.optimize_policy(PROBLEM, WORLD, group_blind="no"),
     "group_blind must be True or False"),
    (lambda: make_tabular_problem(outcome_depends_on_action="no"),
     "outcome_depends_on_action must be True or False"),
    (lambda: evaluate_policy(PROBLEM, sample_logged_data(PROBLEM, WORLD, 200, random_state=0),
                             BEST, "dr", outcome_model=LinearRegression()),
     "outcome_model must be a scikit-learn classifier"),
    (lambda: evaluate_policy(PROBLEM, sample_logged_data(PROBLEM, WORLD, 200, random_state=0),
                             BEST, "ips", random_state=-1),
     r"random_state must be an integer in \[0, 2\*\*32 - 1\]"),
    (lambda: InverseProbability(clip=0.5), r"clip \(a cap on importance weights, >= 1\)"),
    (lambda: fd.TabularWorld(WORLD.p_xz, WORLD.p_y, x_labels=["a", "b", "c", "d", "d"]),
     "x_labels must be distinct"),
    (lambda: fd.pareto_frontier(PROBLEM, WORLD, fd.Independence(), epsilons=[]),
     "epsilons must be a non-empty sequence"),
])
def test_accepted_nonsense_is_refused(call, match):
    with pytest.raises(fd.FairdecideError, match=match):
        call()


def test_known_propensities_need_no_folds():
    # two rows with known propensities: IPS needs no cross-fitting, so n_folds is moot
    data = sample_logged_data(PROBLEM, WORLD, 50, random_state=0).subset([0, 1])
    est = evaluate_policy(PROBLEM, data, BEST, "ips")
    a, y = data.action_codes(PROBLEM), data.outcome_codes(PROBLEM)
    want = np.mean(BEST.proba(data.units())[[0, 1], a] / data.propensity
                   * PROBLEM.utility[a, y])
    assert est.value == pytest.approx(want)


def test_direct_method_warns_when_its_influence_weights_explode():
    # DM's standard error uses the importance weights of its efficient influence function
    data = sample_logged_data(PROBLEM, WORLD, 500, random_state=0)
    frame = data.to_frame()
    p = frame["propensity"].to_numpy().copy()
    taken = BEST.proba(data.units())[np.arange(data.n), data.action_codes(PROBLEM)]
    p[np.argmax(taken > 0)] = 1e-200  # a row the evaluated policy would also decide
    tiny = fd.LoggedData(frame["x"], frame["z"], frame["y"], frame["a"], propensity=p)
    with pytest.warns(UserWarning, match="poor overlap"):
        evaluate_policy(PROBLEM, tiny, BEST, "dm")


def test_audit_warns_when_draws_strata_are_empty():
    # group A is always released: (group A, detain) has no rows, so sufficiency's
    # posterior columns there are the prior's (posterior mean 1.6 against a true 0.32)
    table = np.zeros((5, 2, 2))
    table[:, 0, :] = [0.0, 1.0]
    table[:, 1, :] = [0.5, 0.5]
    logging = fd.TabularPolicy(table, x_labels=WORLD.x_labels, group_labels=WORLD.group_labels)
    data = sample_logged_data(PROBLEM, WORLD, 2000, policy=logging, random_state=0)
    with pytest.warns(UserWarning, match=r"sufficiency, TV summed vs pooled: 1 "
                                         r"\(group, action\) strata have no "
                                         r"logged rows, e.g. group 'group A' with action "
                                         r"'detain'"):
        audit(data, PROBLEM, n_boot=20, n_draws=20, random_state=0)
