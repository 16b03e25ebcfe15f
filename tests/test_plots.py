"""The displays of fairdecide.plot: the numbers they compute against independent
computations, what they draw against those numbers, and their errors."""

from __future__ import annotations

from types import SimpleNamespace
from typing import ClassVar

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer, ErrorbarContainer
from sklearn.base import BaseEstimator
from sklearn.calibration import calibration_curve
from sklearn.linear_model import LogisticRegression

import fairdecide
from fairdecide import FairdecideError, Independence, TabularPolicy
from fairdecide.datasets import make_bail_problem
from fairdecide.plot import (
    GroupCalibrationDisplay,
    GroupRatesDisplay,
    ParetoFrontierDisplay,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def bail():
    problem, world = make_bail_problem()
    results = [fairdecide.optimize_policy(problem, world, Independence(), epsilon=e)
               for e in (0.0, 0.05, 0.1, 0.2)]
    return problem, world, results


@pytest.fixture(scope="module")
def sample():
    """300 people in three groups with a randomised two-action policy and binary y."""
    rng = np.random.default_rng(0)
    n = 300
    z = rng.choice(["a", "b", "c"], n)
    y = rng.integers(0, 2, n)
    p = rng.uniform(size=n)
    return pd.DataFrame({"z": z, "y": y, "p0": 1 - p, "p1": p})


def legend_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def tick_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels()]


def test_error_is_a_value_error():
    assert issubclass(FairdecideError, ValueError)


def test_import_does_not_import_matplotlib(fresh_imports):
    # a fresh interpreter after `import fairdecide.plot` (tests/conftest.py)
    loaded = fresh_imports["import fairdecide.plot"]
    assert "fairdecide.plot" in loaded
    assert not any(m.split(".")[0] == "matplotlib" for m in loaded)


# ---------------------------------------------------------------- Pareto frontier
def test_frontier_from_frontier_dict_draws_sorted_lines(bail):
    problem, world, _ = bail
    plug_in = fairdecide.pareto_frontier(problem, world, Independence(), [0.1, 0.0, 0.2])
    other = pd.DataFrame({"utility": [0.3, 0.1, 0.2], "deviation": [0.3, 0.0, 0.1]})
    display = ParetoFrontierDisplay.from_frontier({"plug-in": plug_in, "other": other},
                                                  criterion="independence").plot()
    ax = display.ax_
    assert len(ax.get_lines()) == 2 and set(display.lines_) == {"plug-in", "other"}
    expected = plug_in.sort_values("deviation")
    line = display.lines_["plug-in"]
    np.testing.assert_allclose(line.get_xdata(), expected["deviation"])
    np.testing.assert_allclose(line.get_ydata(), expected["utility"])
    assert line.get_marker() == "o"
    np.testing.assert_allclose(display.lines_["other"].get_xdata(), [0.0, 0.1, 0.3])
    np.testing.assert_allclose(display.lines_["other"].get_ydata(), [0.1, 0.2, 0.3])
    assert list(display.frontiers_["plug-in"]["epsilon"]) == [0.0, 0.1, 0.2]
    assert ax.get_xlabel() == "independence deviation"
    assert ax.get_ylabel() == "expected utility"
    assert legend_texts(ax) == ["plug-in", "other"]
    assert display.figure_ is ax.figure


def test_frontier_single_frame_name_and_default_labels():
    frame = pd.DataFrame({"utility": [0.1], "deviation": [0.0]})
    display = ParetoFrontierDisplay.from_frontier(frame).plot()
    assert legend_texts(display.ax_) == ["frontier"]
    assert display.ax_.get_xlabel() == "deviation"
    named = ParetoFrontierDisplay.from_frontier(frame, name="Bayes").plot()
    assert legend_texts(named.ax_) == ["Bayes"]


def test_frontier_from_result_uses_the_results_numbers(bail):
    _, _, results = bail
    display = ParetoFrontierDisplay.from_result(results[::-1], name="plug-in").plot()
    label = Independence().label
    assert display.criterion == label
    devs = np.array([r.deviations[label] for r in results])
    utils = np.array([r.utility for r in results])
    order = np.argsort(devs, kind="stable")
    line = display.lines_["plug-in"]
    np.testing.assert_allclose(line.get_xdata(), devs[order])
    np.testing.assert_allclose(line.get_ydata(), utils[order])
    assert display.ax_.get_xlabel() == f"{label} deviation"
    several = ParetoFrontierDisplay.from_result({"A": results[:2], "B": results[2:]}).plot()
    assert legend_texts(several.ax_) == ["A", "B"]


def test_frontier_add_points_before_and_after_plot():
    frame = pd.DataFrame({"utility": [0.1, 0.2], "deviation": [0.0, 0.1]})
    display = ParetoFrontierDisplay.from_frontier(frame, name="LP")
    display.add_points([0.15], [0.05], label="ExponentiatedGradient")
    display.plot()
    marks = display.markers_["ExponentiatedGradient"]
    assert marks.get_linestyle() == "None" and marks.get_marker() == "x"
    np.testing.assert_allclose(marks.get_xydata(), [[0.05, 0.15]])
    display.add_points([0.12, 0.18], [0.02, 0.09], label="ThresholdOptimizer", marker="+")
    assert len(display.ax_.get_lines()) == 3
    np.testing.assert_allclose(display.markers_["ThresholdOptimizer"].get_xdata(), [0.02, 0.09])
    assert legend_texts(display.ax_) == ["LP", "ExponentiatedGradient", "ThresholdOptimizer"]


def test_frontier_error_bars_from_se_columns_and_points():
    """Half-widths in deviation_se / utility_se are drawn as error bars around each point,
    in the colour of its line or markers; without them nothing extra is drawn."""
    frame = pd.DataFrame({"utility": [0.2, 0.1], "deviation": [0.1, 0.0],
                          "utility_se": [0.02, 0.01], "deviation_se": [0.005, 0.0]})
    plain = pd.DataFrame({"utility": [0.15], "deviation": [0.05]})
    display = ParetoFrontierDisplay.from_frontier({"mean": frame, "plain": plain})
    display.add_points([0.12], [0.02], label="TO", utility_se=0.03)
    display.plot()
    assert set(display.errorbars_) == {"mean", "TO"}
    *_, (xbars, ybars) = display.errorbars_["mean"].lines
    # sorted by deviation: (0.0, 0.1 +- 0.01), (0.1, 0.2 +- 0.02)
    np.testing.assert_allclose([s[:, 1] for s in ybars.get_segments()],
                               [[0.09, 0.11], [0.18, 0.22]])
    np.testing.assert_allclose([s[:, 0] for s in xbars.get_segments()],
                               [[0.0, 0.0], [0.095, 0.105]])
    assert matplotlib.colors.same_color(ybars.get_color()[0],
                                        display.lines_["mean"].get_color())
    (to_bars,) = display.errorbars_["TO"].lines[2]
    np.testing.assert_allclose(to_bars.get_segments()[0][:, 1], [0.09, 0.15])
    assert legend_texts(display.ax_) == ["mean", "plain", "TO"]
    with pytest.raises(FairdecideError, match="cannot be negative"):
        ParetoFrontierDisplay.from_frontier(frame.assign(utility_se=[-0.1, 0.0]))
    with pytest.raises(FairdecideError, match="one per point"):
        display.add_points([0.1, 0.2], [0.0, 0.1], label="x", deviation_se=[0.1, 0.1, 0.1])


class StandInPolicy(BaseEstimator):
    """Records its fits (in the class: clone copies parameters); its 'optimum' has
    utility 1 - (0.5 - epsilon)^2 at deviation epsilon."""

    fits: ClassVar[list] = []

    def __init__(self, epsilon=0.1):
        self.epsilon = epsilon

    def fit(self, X, y, sensitive_features=None):
        StandInPolicy.fits.append((self.epsilon, sensitive_features))
        self.result_ = SimpleNamespace(utility=1 - (0.5 - self.epsilon) ** 2,
                                       deviations={"independence": self.epsilon},
                                       status="optimal")
        return self


def test_frontier_from_estimator_fits_clones():
    StandInPolicy.fits.clear()
    est = StandInPolicy()
    X, y, z = np.zeros((4, 1)), [0, 1, 0, 1], ["a", "a", "b", "b"]
    display = ParetoFrontierDisplay.from_estimator(est, X, y, epsilons=[0.2, 0.0, 0.1],
                                                   sensitive_features=z).plot()
    assert not hasattr(est, "result_") and est.epsilon == 0.1
    assert [f[0] for f in StandInPolicy.fits] == [0.2, 0.0, 0.1]
    assert all(f[1] is z for f in StandInPolicy.fits)
    frame = display.frontiers_["StandInPolicy"]
    np.testing.assert_allclose(frame["epsilon"], [0.0, 0.1, 0.2])
    np.testing.assert_allclose(frame["utility"], 1 - (0.5 - frame["epsilon"]) ** 2)
    line = display.lines_["StandInPolicy"]
    np.testing.assert_allclose(line.get_xdata(), [0.0, 0.1, 0.2])
    assert display.ax_.get_xlabel() == "independence deviation"
    with pytest.raises(FairdecideError, match="param 'lam' is not a parameter"):
        ParetoFrontierDisplay.from_estimator(est, X, y, epsilons=[0.1], param="lam")
    with pytest.raises(FairdecideError, match="epsilons"):
        ParetoFrontierDisplay.from_estimator(est, X, y, epsilons=[])


def test_frontier_from_estimator_with_fair_policy_classifier():
    FairPolicyClassifier = getattr(fairdecide, "FairPolicyClassifier", None)
    if FairPolicyClassifier is None:
        pytest.skip("fairdecide.FairPolicyClassifier is not available yet")
    rng = np.random.default_rng(1)
    n = 200
    z = rng.integers(0, 2, n)
    X = np.column_stack([rng.integers(0, 3, n), rng.integers(0, 2, n)])
    y = (rng.uniform(size=n) < 0.3 + 0.2 * X[:, 0] / 2 + 0.1 * z).astype(int)
    est = FairPolicyClassifier(policy="tabular", epsilon=0.05)
    display = ParetoFrontierDisplay.from_estimator(est, X, y, epsilons=[0.0, 0.05, 0.2],
                                                   sensitive_features=z).plot()
    frame = display.frontiers_["FairPolicyClassifier"]
    assert len(frame) == 3
    for eps, dev in zip(frame["epsilon"], frame["deviation"], strict=True):
        assert dev <= eps + 1e-6
    assert frame.sort_values("epsilon")["utility"].is_monotonic_increasing
    np.testing.assert_allclose(display.lines_["FairPolicyClassifier"].get_ydata(),
                               frame["utility"])


@pytest.mark.parametrize(("make", "match"), [
    (lambda: ParetoFrontierDisplay.from_frontier({}), "frontiers is empty"),
    (lambda: ParetoFrontierDisplay.from_frontier(pd.DataFrame({"utility": [0.1]})),
     r"frontiers\['frontier'\] has no column\(s\) \['deviation'\]"),
    (lambda: ParetoFrontierDisplay.from_frontier(
        pd.DataFrame({"utility": [np.nan], "deviation": [0.0]})), "NaN"),
    (lambda: ParetoFrontierDisplay.from_frontier(
        pd.DataFrame({"utility": [], "deviation": []})), "no rows"),
    (lambda: ParetoFrontierDisplay.from_frontier([1, 2]), "frontiers must be a DataFrame"),
    (lambda: ParetoFrontierDisplay.from_frontier(
        {"a": pd.DataFrame({"utility": [0.1], "deviation": [0.0]})}, name="x"), "name"),
    (lambda: ParetoFrontierDisplay.from_result([]), "results is empty"),
    (lambda: ParetoFrontierDisplay.from_result([1.0]), r"results\[0\] must be an Optimize"),
    (lambda: ParetoFrontierDisplay.from_result(
        [SimpleNamespace(utility=0.1, deviations={"a": 0.1, "b": 0.2})]), "criterion="),
    (lambda: ParetoFrontierDisplay.from_result(
        [SimpleNamespace(utility=0.1, deviations={"a": 0.1})], criterion="b"),
     "criterion 'b'"),
])
def test_frontier_errors(make, match):
    with pytest.raises(FairdecideError, match=match):
        make()


def test_frontier_add_points_errors():
    display = ParetoFrontierDisplay.from_frontier(
        pd.DataFrame({"utility": [0.1], "deviation": [0.0]}), name="LP")
    with pytest.raises(FairdecideError, match="equally long"):
        display.add_points([0.1, 0.2], [0.0], label="x")
    with pytest.raises(FairdecideError, match="already used"):
        display.add_points([0.1], [0.0], label="LP")
    with pytest.raises(FairdecideError, match="utilities contains NaN"):
        display.add_points([np.nan], [0.0], label="y")


# ---------------------------------------------------------------- group rates
def bar_heights(container) -> np.ndarray:
    return np.array([patch.get_height() for patch in container])


def bar_centres(container) -> np.ndarray:
    return np.array([patch.get_x() + patch.get_width() / 2 for patch in container])


def error_segments(container) -> np.ndarray:
    """(lower, upper) of each error bar drawn with a bar container, shape (n_bars, 2)."""
    (segments,) = container.errorbar.lines[2]
    return np.array([[seg[0][1], seg[1][1]] for seg in segments.get_segments()])


def test_rates_action_match_groupby_and_bars(sample):
    display = GroupRatesDisplay.from_predictions(
        sample["y"], sample[["p0", "p1"]], sample["z"], action_labels=["deny", "grant"],
        n_boot=100, random_state=0)
    rates = display.rates_
    expected = sample.groupby("z")[["p0", "p1"]].mean()
    for group in ("a", "b", "c"):
        got = rates[rates["group"] == group]
        assert list(got["action"]) == ["deny", "grant"]
        np.testing.assert_allclose(got["rate"], expected.loc[group], rtol=1e-12)
        assert set(got["n"]) == {int((sample["z"] == group).sum())}
    assert np.all((rates["lower"] <= rates["rate"]) & (rates["rate"] <= rates["upper"]))
    assert np.all(rates["upper"] > rates["lower"])
    display.plot()
    ax = display.ax_
    assert len(ax.containers) == 6  # a bar container and its error bars per group
    assert set(display.containers_) == {"a", "b", "c"}
    for k, group in enumerate(("a", "b", "c")):
        bars = display.containers_[group]
        assert isinstance(bars, BarContainer)
        got = rates[rates["group"] == group]
        np.testing.assert_allclose(bar_heights(bars), got["rate"])
        np.testing.assert_allclose(bar_centres(bars), np.arange(2) + (k - 1) * 0.8 / 3)
        np.testing.assert_allclose(error_segments(bars), got[["lower", "upper"]])
        assert bars.patches[0].get_facecolor() == matplotlib.colors.to_rgba(f"C{k}")
    assert tick_texts(ax) == ["deny", "grant"]
    assert ax.get_ylabel() == "P(a | z)" and ax.get_xlabel() == "action"
    assert legend_texts(ax) == ["a", "b", "c"]


def test_rates_action_given_outcome_match_groupby(sample):
    display = GroupRatesDisplay.from_predictions(
        sample["y"], sample[["p0", "p1"]].to_numpy(), sample["z"],
        kind="action_given_outcome", n_boot=50, random_state=0).plot()
    expected = sample.groupby(["z", "y"])[["p0", "p1"]].mean()
    counts = sample.groupby(["z", "y"]).size()
    rates = display.rates_
    for row in rates.itertuples():
        assert row.rate == pytest.approx(expected.loc[(row.group, row.outcome)].iloc[row.action])
        assert row.n == counts.loc[(row.group, row.outcome)]
        assert row.lower <= row.rate <= row.upper
    assert tick_texts(display.ax_) == ["0 | 0", "1 | 0", "0 | 1", "1 | 1"]
    assert display.ax_.get_ylabel() == "P(a | y, z)"
    np.testing.assert_allclose(bar_heights(display.containers_["b"]),
                               rates[rates["group"] == "b"]["rate"])


def test_rates_outcome_given_action_match_weighted_groupby(sample):
    display = GroupRatesDisplay.from_predictions(
        sample["y"], sample[["p0", "p1"]], sample["z"], kind="outcome_given_action",
        n_boot=50, random_state=0).plot()
    rates = display.rates_
    for row in rates.itertuples():
        rows = sample[sample["z"] == row.group]
        w = rows[f"p{row.action}"]
        assert row.rate == pytest.approx((w * (rows["y"] == row.outcome)).sum() / w.sum())
        assert row.denominator == pytest.approx(w.sum())
    assert tick_texts(display.ax_) == ["0 | 0", "1 | 0", "0 | 1", "1 | 1"]
    assert display.ax_.get_ylabel() == "P(y | a, z)"
    assert display.ax_.get_xlabel() == "outcome | action"


def test_rates_of_decided_labels_are_crosstab_shares():
    z = ["m", "m", "m", "f", "f", "f", "f"]
    a = ["yes", "no", "yes", "no", "no", "yes", "no"]
    display = GroupRatesDisplay.from_predictions(None, a, z, n_boot=0)
    expected = pd.crosstab(pd.Series(z, name="z"), pd.Series(a, name="a"), normalize="index")
    for row in display.rates_.itertuples():
        assert row.rate == pytest.approx(expected.loc[row.group, row.action])
    assert display.rates_["lower"].isna().all() and display.level is None
    display.plot()
    assert display.containers_["f"].errorbar is None  # no intervals, no error bars
    assert tick_texts(display.ax_) == ["no", "yes"]


def test_rates_bootstrap_is_seeded_and_matches_binomial_width():
    rng = np.random.default_rng(3)
    n = 400
    z = np.repeat(["a", "b"], n)
    decided = (rng.uniform(size=2 * n) < np.repeat([0.3, 0.6], n)).astype(int)

    def run(seed, level=0.95):
        return GroupRatesDisplay.from_predictions(None, decided, z, level=level,
                                                  n_boot=200, random_state=seed).rates_

    first, again = run(0), run(0)
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["lower"], run(1)["lower"])
    # Within groups: the interval of a share p of n rows is about p +- 1.96 sqrt(p(1-p)/n)
    half = (first["upper"] - first["lower"]) / 2
    normal = 1.96 * np.sqrt(first["rate"] * (1 - first["rate"]) / n)
    np.testing.assert_allclose(half, normal, rtol=0.25)
    narrow = run(0, level=0.5)
    assert np.all(narrow["upper"] - narrow["lower"] < first["upper"] - first["lower"])


def test_rates_empty_cells_are_missing_with_a_warning():
    y = [0, 0, 1, 0, 0, 0]
    z = ["a", "a", "a", "b", "b", "b"]
    a = ["no", "yes", "yes", "no", "no", "no"]
    with pytest.warns(UserWarning, match=r"group 'b', action 'yes'.*missing \(NaN\)"):
        display = GroupRatesDisplay.from_predictions(y, a, z, kind="outcome_given_action",
                                                     n_boot=0)
    rates = display.rates_
    gone = rates[(rates["group"] == "b") & (rates["action"] == "yes")]
    assert len(gone) == 2 and gone[["rate", "lower", "upper"]].isna().all().all()
    assert list(gone["n"]) == [0, 0] and list(gone["denominator"]) == [0.0, 0.0]
    display.plot()
    assert len(display.containers_["b"]) == 2  # only the two cells with data
    assert [t.get_text() for t in display.missing_texts_] == ["n/a", "n/a"]
    np.testing.assert_allclose([t.get_position()[0] for t in display.missing_texts_],
                               [2.2, 3.2])


def test_rates_points_style(sample):
    display = GroupRatesDisplay.from_predictions(
        sample["y"], sample[["p0", "p1"]], sample["z"], n_boot=20, random_state=0)
    display.plot(style="point")
    container = display.containers_["c"]
    assert isinstance(container, ErrorbarContainer)
    got = display.rates_[display.rates_["group"] == "c"]
    np.testing.assert_allclose(container.lines[0].get_ydata(), got["rate"])


def test_rates_from_result_are_the_exact_rates(bail):
    problem, world, results = bail
    result = results[1]
    pi = result.policy.table
    M = np.einsum("xz,xza,xzay->zay", world.p_xz, pi, world.p_y)
    p_az = M.sum(axis=2) / M.sum(axis=(1, 2))[:, None]
    p_a_yz = M / M.sum(axis=1, keepdims=True)
    p_y_az = M / M.sum(axis=2, keepdims=True)
    for kind, truth in (("action", p_az), ("action_given_outcome", p_a_yz),
                        ("outcome_given_action", p_y_az)):
        display = GroupRatesDisplay.from_result(result, world, problem, kind=kind).plot()
        rates = display.rates_
        assert list(dict.fromkeys(rates["group"])) == list(world.group_labels)
        for row in rates.itertuples():
            z = world.group_labels.index(row.group)
            a = problem.action_labels.index(row.action)
            idx = (z, a) if kind == "action" else (
                z, a, problem.outcome_labels.index(row.outcome))
            assert row.rate == pytest.approx(truth[idx], abs=1e-12)
        assert (rates["lower"] == rates["rate"]).all() and (rates["upper"] == rates["rate"]).all()
        assert rates["n"].isna().all()
        assert legend_texts(display.ax_) == ["group A", "group B"]
    # independence at 0.05: the release rates are within the tolerance of each other
    release = GroupRatesDisplay.from_result(result, world, problem).rates_
    gap = np.ptp(release[release["action"] == "release"]["rate"])
    assert gap <= 0.05 + 1e-6


def test_rates_from_result_action_never_taken_is_missing(bail):
    problem, world, _ = bail
    release_all = SimpleNamespace(policy=TabularPolicy.for_world(world, [0.0, 1.0]))
    with pytest.warns(UserWarning, match="action 'detain'"):
        display = GroupRatesDisplay.from_result(release_all, world, problem,
                                                kind="outcome_given_action")
    detain = display.rates_[display.rates_["action"] == "detain"]
    assert detain["rate"].isna().all() and len(detain) == 6


class StandInDecider(BaseEstimator):
    """Not a classifier: an action_proba that needs the groups, and action_labels_."""

    def fit(self, X, y):
        self.action_labels_ = ("wait", "act")
        return self

    def action_proba(self, X, *, sensitive_features):
        p = np.where(np.asarray(sensitive_features) == "a", 0.2, 0.7)
        return np.column_stack([1 - p, p])


def test_rates_from_estimator_picks_method_and_labels(sample):
    X = sample[["p1"]].to_numpy()
    clf = LogisticRegression().fit(X, sample["y"])
    display = GroupRatesDisplay.from_estimator(clf, X, sample["y"],
                                               sensitive_features=sample["z"], n_boot=0)
    direct = GroupRatesDisplay.from_predictions(sample["y"], clf.predict_proba(X),
                                                sample["z"], n_boot=0)
    np.testing.assert_allclose(display.rates_["rate"], direct.rates_["rate"])
    decider = StandInDecider().fit(X, sample["y"])
    display = GroupRatesDisplay.from_estimator(decider, X, None,
                                               sensitive_features=sample["z"], n_boot=0)
    got = display.rates_.set_index(["group", "action"])["rate"]
    assert got[("a", "act")] == pytest.approx(0.2) and got[("b", "act")] == pytest.approx(0.7)
    with pytest.raises(FairdecideError, match="no action_proba method"):
        GroupRatesDisplay.from_estimator(clf, X, None, sensitive_features=sample["z"],
                                         response_method="action_proba")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"y": [0, 1], "action_proba": [[1, 0], [0, 1], [1, 0]], "sensitive_features": [0, 1, 1]},
     "y has 2 rows, action_proba has 3 rows, sensitive_features has 3 rows"),
    ({"action_proba": [[np.nan, 1], [0, 1]]}, "action_proba contains NaN"),
    ({"action_proba": [[0.5, 0.6], [0, 1]]}, "action_proba row 0 is not on the simplex"),
    ({"action_proba": [[-0.5, 1.5], [0, 1]]}, "action_proba row 0 is not on the simplex"),
    ({"action_proba": [0.3, 0.9]}, "np.column_stack"),
    ({"action_proba": [[1.0], [1.0]]}, r"action_proba must have shape \(n, n_actions >= 2\)"),
    ({"kind": "parity"}, "kind must be one of"),
    ({"kind": "action_given_outcome", "y": None}, "y is required"),
    ({"sensitive_features": [0, None]}, "sensitive_features has a missing value"),
    ({"y": [0, 2], "outcome_labels": [0, 1]},
     r"y contains the label 2 \(row 1\) that is not among outcome_labels"),
    ({"action_labels": ["a", "b", "c"]}, "action_labels has 3 labels"),
    ({"level": 1.0}, "level must be"),
    ({"n_boot": -1}, "n_boot"),
    ({"random_state": "seed"}, "random_state"),
])
def test_rates_errors(kwargs, match):
    args = {"y": [0, 1], "action_proba": [[1, 0], [0, 1]], "sensitive_features": [0, 1]}
    args.update(kwargs)
    with pytest.raises(FairdecideError, match=match):
        GroupRatesDisplay.from_predictions(args.pop("y"), args.pop("action_proba"),
                                           args.pop("sensitive_features"), **args)


def test_rates_plot_errors():
    display = GroupRatesDisplay.from_predictions(None, [0, 1], ["a", "b"], n_boot=0)
    with pytest.raises(FairdecideError, match="ax must be a matplotlib Axes"):
        display.plot(ax="left")
    with pytest.raises(FairdecideError, match="style must be one of"):
        display.plot(style="pie")


# ---------------------------------------------------------------- calibration
@pytest.fixture(scope="module")
def scores():
    """Group b's outcomes are rarer than its scores say: miscalibrated there."""
    rng = np.random.default_rng(5)
    n = 400
    z = np.repeat(["a", "b"], n // 2)
    p = rng.uniform(size=n)
    truth = np.where(z == "a", p, 0.6 * p)
    y = (rng.uniform(size=n) < truth).astype(int)
    return y, p, z


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibration_matches_sklearn_per_group(scores, strategy):
    y, p, z = scores
    display = GroupCalibrationDisplay.from_predictions(y, p, z, n_bins=5,
                                                       strategy=strategy).plot()
    curves = display.curves_
    for group in ("a", "b"):
        rows = z == group
        frac, mean = calibration_curve(y[rows], p[rows], n_bins=5, strategy=strategy)
        got = curves[curves["group"] == group]
        np.testing.assert_allclose(got["mean_predicted"], mean)
        np.testing.assert_allclose(got["fraction_positive"], frac)
        assert got["n"].sum() == rows.sum()
        line = display.lines_[group]
        np.testing.assert_allclose(line.get_xdata(), mean)
        np.testing.assert_allclose(line.get_ydata(), frac)
    ax = display.ax_
    assert len(ax.get_lines()) == 3
    np.testing.assert_allclose(display.diagonal_.get_xydata(), [[0, 0], [1, 1]])
    assert ax.get_xlabel() == "mean predicted probability"
    assert ax.get_ylabel() == "observed frequency"
    assert legend_texts(ax) == ["perfectly calibrated", "a", "b"]
    b = curves[curves["group"] == "b"]
    assert (b["fraction_positive"] < b["mean_predicted"]).sum() >= 4  # b is over-predicted


def test_calibration_two_columns_and_string_labels(scores):
    y, p, z = scores
    labels = np.where(y == 1, "reoffend", "none")
    proba = np.column_stack([1 - p, p])  # sorted labels: "none", "reoffend"
    display = GroupCalibrationDisplay.from_predictions(labels, proba, z, n_bins=4,
                                                       pos_label="reoffend")
    direct = GroupCalibrationDisplay.from_predictions(y, p, z, n_bins=4)
    pd.testing.assert_frame_equal(display.curves_, direct.curves_)
    flipped = GroupCalibrationDisplay.from_predictions(labels, proba[:, ::-1], z, n_bins=4,
                                                       pos_label="none")
    np.testing.assert_allclose(flipped.curves_["n"].sum(), len(y))
    assert display.pos_label == "reoffend"


def test_calibration_from_estimator(scores):
    y, p, z = scores
    X = np.column_stack([p, z == "b"]).astype(float)
    clf = LogisticRegression().fit(X, y)
    display = GroupCalibrationDisplay.from_estimator(clf, X, y, sensitive_features=z,
                                                     n_bins=5)
    direct = GroupCalibrationDisplay.from_predictions(y, clf.predict_proba(X)[:, 1], z,
                                                      n_bins=5)
    pd.testing.assert_frame_equal(display.curves_, direct.curves_)


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    (([0, 1, 2], [0.1, 0.2, 0.3], [0, 0, 1]), {}, "binary outcome"),
    ((["x", "y"], [0.1, 0.2], [0, 1]), {}, "pos_label="),
    (([0, 1], [0.1, 1.2], [0, 1]), {}, r"proba must hold probabilities in \[0, 1\]"),
    (([0, 1], [0.1, np.nan], [0, 1]), {}, "proba contains NaN"),
    (([0, 1, 1], [0.1, 0.2], [0, 1, 1]), {}, "y has 3 rows, proba has 2 rows"),
    (([0, 1], [0.1, 0.2], [0, 1]), {"strategy": "kmeans"}, "strategy must be one of"),
    (([0, 1], [0.1, 0.2], [0, 1]), {"n_bins": 0}, "n_bins"),
])
def test_calibration_errors(args, kwargs, match):
    with pytest.raises(FairdecideError, match=match):
        GroupCalibrationDisplay.from_predictions(*args, **kwargs)


# ---------------------------------------------------------------- shared
def test_every_display_saves_a_png(tmp_path, bail, sample, scores):
    _, _, results = bail
    displays = [
        ParetoFrontierDisplay.from_result(results),
        GroupRatesDisplay.from_predictions(sample["y"], sample[["p0", "p1"]], sample["z"],
                                           kind="action_given_outcome", n_boot=20,
                                           random_state=0),
        GroupCalibrationDisplay.from_predictions(*scores),
    ]
    for k, display in enumerate(displays):
        path = tmp_path / f"x{k}.png"
        display.plot().figure_.savefig(path)
        assert path.stat().st_size > 1000


def test_plot_draws_onto_a_given_axes(sample):
    figure, (left, right) = plt.subplots(1, 2)
    rates = GroupRatesDisplay.from_predictions(None, sample[["p0", "p1"]], sample["z"],
                                               n_boot=0).plot(ax=left)
    frame = pd.DataFrame({"utility": [0.1, 0.2], "deviation": [0.0, 0.1]})
    front = ParetoFrontierDisplay.from_frontier(frame).plot(ax=right)
    assert rates.ax_ is left and front.ax_ is right
    assert rates.figure_ is figure and front.figure_ is figure


def test_from_result_and_from_estimator_errors(bail):
    problem, world, results = bail
    with pytest.raises(FairdecideError, match="result must be an OptimizeResult"):
        GroupRatesDisplay.from_result(object(), world, problem)
    with pytest.raises(FairdecideError, match="problem must be a DecisionProblem"):
        GroupRatesDisplay.from_result(results[0], problem, world)
    X = np.arange(9, dtype=float).reshape(-1, 1)
    three = LogisticRegression().fit(X, [0, 0, 0, 1, 1, 1, 2, 2, 2])
    with pytest.raises(FairdecideError, match="binary classifier"):
        GroupCalibrationDisplay.from_estimator(three, X, np.zeros(9), sensitive_features=X[:, 0])


def test_displays_built_directly_check_their_table():
    with pytest.raises(FairdecideError, match=r"rates has no column\(s\) \['outcome'\]"):
        GroupRatesDisplay(pd.DataFrame(columns=["group", "action", "rate", "lower", "upper"]),
                          kind="outcome_given_action")
    with pytest.raises(FairdecideError, match="rates has no rows"):
        GroupRatesDisplay(pd.DataFrame(columns=["group", "action", "rate", "lower", "upper"]))
    with pytest.raises(FairdecideError, match="curves has no rows"):
        GroupCalibrationDisplay(pd.DataFrame(columns=["group", "mean_predicted",
                                                      "fraction_positive"]))
