"""Every public entry point, called with malformed input of each kind.

Each entry below is a valid call; the suite replaces one argument at a time by a malformed
value of its kind (NaN, inf, wrong type, wrong shape, empty, unknown label, out-of-range
size) and asserts one of two things:

- the call raises a FairdecideError (or ValueError / TypeError) whose message names the
  argument; any other exception (IndexError, AttributeError, ZeroDivisionError, ...) is an
  unclear error and fails;
- or, only where the entry declares the value acceptable, it returns, and nothing in the
  result is NaN or infinite.

A public name (``__all__`` of the package and its subpackages) that is neither an entry
nor exempt with a reason fails :func:`test_every_public_name_is_fuzzed`, so new public
functions join the suite.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import io
import math
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import fairdecide as fd
from fairdecide import assignment as asg
from fairdecide import evaluation as ev
from fairdecide import privacy as pv
from fairdecide import report as rp
from fairdecide.criteria import block_divergence, resolve_names
from fairdecide.datasets import (
    make_bail_problem,
    make_logged_bandit,
    make_tabular_problem,
    sample_logged_data,
)
from fairdecide.optimize import FairnessConstraint, Mixture, UtilityConstraint
from fairdecide.policies import CallablePolicy, IndividualPolicy, as_policy
from fairdecide.uncertainty.regions import Boxes, L1Balls

PROBLEM, WORLD = make_bail_problem()
CLS = fd.DecisionProblem.classification(2)
_, CWORLD = make_tabular_problem(3, 2, 2, 2, random_state=0)
DATA = sample_logged_data(PROBLEM, WORLD, 300, random_state=0)
CDATA = sample_logged_data(CLS, CWORLD, 300, random_state=0)
POLICY = fd.TabularPolicy.for_world(WORLD, [0.3, 0.7])
CPOLICY = fd.TabularPolicy.for_world(CWORLD, [0.5, 0.5])
POSTERIOR = fd.DirichletPosterior().fit(CDATA, CLS)
BELIEF = fd.Belief.from_posterior(POSTERIOR, n_scenarios=4, random_state=0)
GROUPS = ev.evaluate_policy_by_group(PROBLEM, DATA, POLICY)
BPROBLEM, BANDIT, TRUTH = make_logged_bandit(300, random_state=0)
FRAME = DATA.to_frame()
_RNG = np.random.RandomState(0)
EX = np.random.RandomState(1).normal(size=(60, 2))
EZ = np.array(["f", "m"] * 30, dtype=object)
EY = (EX[:, 0] > 0).astype(int)
EA = np.array([0, 1, 1, 0] * 15)
EP = np.full(60, 0.5)
SWORLD = fd.SampleWorld(_RNG.normal(size=(40, 2)), np.arange(40) % 2,
                        np.c_[np.linspace(0.1, 0.9, 40), np.linspace(0.9, 0.1, 40)])


SX = np.random.RandomState(2).normal(size=(30, 2))
SR = np.random.RandomState(3).dirichlet(np.ones(2), size=30)
SS, ST = np.arange(10), np.arange(15, 30)
NOISY = pv.release_counts(np.array([[5, 3], [2, 9]]), 1.0)
BUDGET = pv.PrivacyBudget(1.0, {"groups": 0.5, "cells": 0.5})
UNITS = pd.DataFrame({"z": [0, 1, 0, 1, 0, 1], "w": [1.0] * 6,
                      "p_0": [0.2, 0.4, 0.6, 0.8, 0.5, 0.3],
                      "p_1": [0.8, 0.6, 0.4, 0.2, 0.5, 0.7]})
LOG_CSV = Path(tempfile.mkdtemp()) / "log.csv"
FRAME.to_csv(LOG_CSV, index=False)
MARKET = fd.MatchingMarket([[0, 1], [1], [1, 0]], [[2, 0], [0, 1, 2]], [1, 1])
BAIL_UTILITY = {"detain": {"0": 0, "1": -1, "2": -2}, "release": {"0": 1, "1": 0, "2": -1}}


class _Opaque:
    """An object of no kind the library knows."""

    def __repr__(self) -> str:
        return "<opaque>"


# Malformed values of each kind of argument. Each is a factory, so that arrays are fresh.
KINDS: dict[str, dict[str, Callable[[Any], Any]]] = {
    "real": {
        "nan": lambda v: math.nan, "inf": lambda v: math.inf, "string": lambda v: "0.5",
        "list": lambda v: [v, v], "object": lambda v: _Opaque(), "bool": lambda v: True,
    },
    # a fairness tolerance: a real number, and negatives as a caller writes them (the
    # error shows the value as written: -1, not np.int64(-1) or a tuple made of it)
    "tolerance": {
        "nan": lambda v: math.nan, "string": lambda v: "0.5", "object": lambda v: _Opaque(),
        "bool": lambda v: True, "negative": lambda v: -1,
        "numpy negative": lambda v: np.int64(-1), "negative entry": lambda v: [v, -1],
    },
    "size": {
        "nan": lambda v: math.nan, "inf": lambda v: math.inf, "string": lambda v: str(v),
        "fraction": lambda v: v + 0.5, "negative": lambda v: -1, "zero": lambda v: 0,
        "list": lambda v: [v], "object": lambda v: _Opaque(),
    },
    "array": {
        "nan": lambda v: _poke(v, math.nan), "inf": lambda v: _poke(v, math.inf),
        "string": lambda v: "abc", "object": lambda v: _Opaque(),
        "shape": lambda v: np.ones((*np.shape(v), 2)), "empty": lambda v: [],
        "negative": lambda v: -np.abs(np.asarray(v, dtype=float)) - 1,
    },
    "object": {
        "string": lambda v: "abc", "array": lambda v: np.eye(2), "object": lambda v: _Opaque(),
        "frame": lambda v: FRAME, "number": lambda v: 3,
    },
    "labels": {  # a vector of labels (any hashable values)
        "nan": lambda v: _put(v, math.nan), "none": lambda v: _put(v, None),
        "inf": lambda v: _put(v, math.inf), "unhashable": lambda v: _put(v, [1]),
        "shape": lambda v: np.stack([v, v], axis=1), "empty": lambda v: [],
        "short": lambda v: v[:-1], "string": lambda v: "abc", "object": lambda v: _Opaque(),
    },
    "label": {"unknown": lambda v: "no such label", "object": lambda v: _Opaque(),
              "number": lambda v: 12345},
    "flag": {"string": lambda v: "no", "number": lambda v: 1, "object": lambda v: _Opaque()},
    "choice": {"unknown": lambda v: "no such choice", "number": lambda v: 3,
               "object": lambda v: _Opaque()},
}


def _bayes_fit(X: Any, z: Any, y: Any, problem: Any, a: Any) -> Any:
    """BayesianOutcomeModel.fit on a tiny sample (20 + 20 draws, one chain: cheap, and
    its warning that so few draws are unreliable is expected); its input checks run
    before sampling."""
    model = fd.models.BayesianOutcomeModel(draws=20, tune=20, chains=1)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "the posterior sample may be unreliable")
            return model.fit(X, z, y, problem, a=a, random_state=0)
    except ImportError:
        pytest.skip("pymc is not installed (the bayes extra)")


_BAYES: dict[str, Any] = {}


def _bayes_model() -> Any:
    """One fitted BayesianOutcomeModel, sampled on first use (not at import)."""
    if "model" not in _BAYES:
        _BAYES["model"] = _bayes_fit(BANDIT.X[:60], BANDIT.z[:60], BANDIT.y[:60],
                                     BPROBLEM, BANDIT.a[:60])
    return _BAYES["model"]


def _bayes_belief(n_scenarios: Any, X: Any, z: Any, aggregate: Any) -> Any:
    return fd.Belief.from_posterior(_bayes_model(), n_scenarios, 0, aggregate, X=X, z=z)


def _bayes_mean_world(X: Any, z: Any) -> Any:
    return _bayes_model().posterior_mean_world(X, z)


_FITTED: dict[str, Any] = {}


def _classifier() -> Any:
    if "clf" not in _FITTED:
        _FITTED["clf"] = fd.FairPolicyClassifier(random_state=0).fit(
            EX, EY, sensitive_features=EZ)
    return _FITTED["clf"]


def _decision_policy() -> Any:
    if "pol" not in _FITTED:
        _FITTED["pol"] = fd.FairDecisionPolicy(random_state=0).fit(
            EX, EY, actions=EA, sensitive_features=EZ, propensities=EP)
    return _FITTED["pol"]


def _classifier_fit(X: Any, y: Any, sensitive_features: Any, sample_weight: Any = None
                    ) -> Any:
    return fd.FairPolicyClassifier(random_state=0).fit(
        X, y, sensitive_features=sensitive_features, sample_weight=sample_weight)


def _classifier_params(epsilon: Any, n_scenarios: Any, policy: Any, uncertainty: Any,
                       criteria: Any, l2: Any, n_restarts: Any) -> Any:
    return fd.FairPolicyClassifier(
        epsilon=epsilon, n_scenarios=n_scenarios, policy=policy, uncertainty=uncertainty,
        criteria=criteria, l2=l2, n_restarts=n_restarts, random_state=0).fit(
        EX, EY, sensitive_features=EZ).result_


def _classifier_group_column(group_column: Any) -> Any:
    """The group read from a named column of a DataFrame X."""
    frame = pd.DataFrame({"a": EX[:, 0], "b": EX[:, 1], "g": EZ})
    return fd.FairPolicyClassifier(group_column=group_column, random_state=0).fit(
        frame, EY).result_


def _classifier_actions(actions: Any, utility: Any) -> Any:
    return fd.FairPolicyClassifier(actions=actions, utility=utility, random_state=0).fit(
        EX, EY, sensitive_features=EZ).result_


GX = np.random.RandomState(4).normal(size=(3000, 2))
GZ = np.array(["f", "m"] * 1500, dtype=object)
GY = (GX[:, 0] + (GZ == "m") > 0.5).astype(int)


def _guaranteed_fit(guarantee: Any, safety_fraction: Any) -> Any:
    """A fit that passes its safety test (3000 rows, a wide tolerance): the new
    parameters' malformed values are checked before anything is fitted."""
    return fd.FairPolicyClassifier(
        policy="score", epsilon=0.8, guarantee=guarantee, safety_fraction=safety_fraction,
        random_state=0).fit(GX, GY, sensitive_features=GZ).certificate_


def _capacity_deviation(actions: Any) -> Any:
    """A capacity on ``actions`` measured on a policy: labels are checked against the
    problem's actions only here (any hashable value is a label when constructed)."""
    return fd.Capacity(actions, at_most=0.4).deviation(CPOLICY, CWORLD, CLS)


def _top_share_deviation(group: Any) -> Any:
    """A TopShare of ``group`` measured on a ranking: the label is checked against the
    candidates' groups only here (any hashable value is a label when constructed)."""
    return fd.TopShare(group, at_least=0.5).deviation(np.eye(4), [4, 3, 2, 1], RGROUPS)


RGROUPS = ["a", "b", "a", "b"]
RANKING = fd.optimize_ranking([0.9, 0.5, 0.4, 0.1], RGROUPS, fd.ExposureParity(),
                              epsilon=0.1, k=2, formulation="counts")
RANKING_EXPOSURE = fd.optimize_ranking([0.9, 0.5, 0.4, 0.1], RGROUPS, fd.ExposureParity(),
                                       epsilon=0.1, k=2)
RANKING_LOTTERY = RANKING_EXPOSURE.lottery


def _poke(value: Any, bad: float) -> np.ndarray:
    arr = np.array(value, dtype=float)
    arr.reshape(-1)[0] = bad
    return arr


def _put(value: Any, bad: Any) -> np.ndarray:
    arr = np.array(value, dtype=object)
    arr[0] = bad
    return arr


@dataclass
class Entry:
    """A valid call of a public entry point and the kinds of its arguments."""

    name: str
    func: Callable[..., Any]
    kwargs: dict[str, Any]
    kinds: dict[str, str]
    accepts: dict[str, set[str]] = field(default_factory=dict)  # values that are fine
    names: dict[str, tuple[str, ...]] = field(default_factory=dict)  # how errors name it

    def call(self, **override: Any) -> Any:
        return self.func(**{**self.kwargs, **override})


def _entries() -> list[Entry]:
    E = Entry
    U = PROBLEM.utility
    counts = np.ones((2, 2, 2))
    return [
        # ---------------------------------------------------------------- the model
        E("DecisionProblem", fd.DecisionProblem,
          {"utility": U, "outcome_depends_on_action": True},
          {"utility": "array", "outcome_depends_on_action": "flag"},
          accepts={"utility": {"negative"}}),
        E("DecisionProblem.classification", fd.DecisionProblem.classification,
          {"n_classes": 3}, {"n_classes": "size"}),
        E("TabularWorld", fd.TabularWorld, {"p_xz": WORLD.p_xz, "p_y": WORLD.p_y},
          {"p_xz": "array", "p_y": "array"}),
        E("TabularWorld.from_data", fd.TabularWorld.from_data,
          {"data": DATA, "problem": PROBLEM, "smoothing": 0.5},
          {"data": "object", "problem": "object", "smoothing": "real"}),
        E("LoggedData", fd.LoggedData,
          {"x": DATA.to_frame()["x"].to_numpy(), "z": FRAME["z"].to_numpy(),
           "y": FRAME["y"].to_numpy(), "a": FRAME["a"].to_numpy(),
           "propensity": FRAME["propensity"].to_numpy()},
          {"x": "labels", "z": "labels", "y": "labels", "a": "labels",
           "propensity": "array"}),
        E("LoggedData.from_frame", fd.LoggedData.from_frame,
          {"df": FRAME, "features": ["x"], "group": "z", "outcome": "y", "action": "a",
           "propensity": "propensity"},
          {"df": "object", "features": "label", "group": "label", "outcome": "label",
           "action": "label", "propensity": "label"},
          accepts={"df": {"frame"}}),  # FRAME is the valid frame itself
        E("LoggedCounts.from_frame", fd.LoggedCounts.from_frame,
          {"df": FRAME, "features": ["x"], "group": "z", "outcome": "y", "action": "a",
           "propensity": "propensity"},
          {"df": "object", "features": "label", "group": "label", "outcome": "label",
           "action": "label", "propensity": "label"},
          accepts={"df": {"frame"}}),
        E("LoggedCounts.from_data", fd.LoggedCounts.from_data, {"data": DATA},
          {"data": "object"}),
        E("LoggedCounts", fd.LoggedCounts,
          {"x": [0, 1, 1], "z": [0, 0, 1], "y": [1, 0, 1], "counts": [3, 1, 2],
           "a": [1, 0, 1], "x_labels": ["lo", "hi"], "group_labels": ["f", "m"],
           "outcome_labels": [0, 1], "action_labels": ["no", "yes"]},
          {"x": "array", "z": "array", "y": "array", "counts": "array", "a": "array"}),
        E("BanditData", fd.BanditData,
          {"X": BANDIT.X, "z": BANDIT.z, "a": BANDIT.a, "y": BANDIT.y,
           "propensity": BANDIT.propensity},
          {"X": "array", "z": "array", "a": "array", "y": "array", "propensity": "array"},
          accepts={"X": {"negative"}}),
        E("SampleWorld", fd.SampleWorld,
          {"X": [[0.1], [0.9], [0.2], [0.8]], "z": np.array(["a", "a", "b", "b"]),
           "p_y": [[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.6, 0.4]],
           "weights": [1.0, 2.0, 1.0, 1.0]},
          {"X": "array", "z": "labels", "p_y": "array", "weights": "array"},
          accepts={"X": {"negative"}}),
        E("IndividualPolicy", IndividualPolicy,
          {"table": [[0.2, 0.8], [1.0, 0.0]], "features": [[0.0], [1.0]]},
          {"table": "array", "features": "array"}, accepts={"features": {"negative"}}),
        E("LinearSoftmaxPolicy", fd.LinearSoftmaxPolicy,
          {"include_z": True, "fit_intercept": True, "coef": np.zeros((2, 4)),
           "n_groups": 2, "l2": 1e-6},
          {"include_z": "flag", "fit_intercept": "flag", "coef": "array",
           "n_groups": "size", "l2": "real"}, accepts={"coef": {"negative"}}),
        E("LinearSoftmaxPolicy.action_proba",
          fd.LinearSoftmaxPolicy(True, True, np.ones((2, 4)), n_groups=2).action_proba,
          {"X": [[0.5], [1.0]], "z": [0, 1]}, {"X": "array", "z": "array"},
          accepts={"X": {"negative"}}),
        E("Units", fd.Units, {"group": [0, 1, 1], "n_groups": 2, "cell": [0, 0, 1],
                              "n_cells": 2},
          {"group": "array", "n_groups": "size", "cell": "array", "n_cells": "size"}),
        # ---------------------------------------------------------------- policies
        E("TabularPolicy", fd.TabularPolicy, {"table": POLICY.table}, {"table": "array"}),
        E("TabularPolicy.constant", fd.TabularPolicy.constant,
          {"n_x": 3, "n_z": 2, "proba": [0.5, 0.5]},
          {"n_x": "size", "n_z": "size", "proba": "array"}),
        E("TabularPolicy.group_blind", fd.TabularPolicy.group_blind,
          {"table": [[0.2, 0.8], [1.0, 0.0]], "n_z": 2},
          {"table": "array", "n_z": "size"}),
        E("TabularPolicy.from_data", fd.TabularPolicy.from_data,
          {"data": DATA, "problem": PROBLEM, "smoothing": 0.5},
          {"data": "object", "problem": "object", "smoothing": "real"}),
        E("TabularPolicy.for_world", fd.TabularPolicy.for_world,
          {"world": WORLD, "proba": [0.5, 0.5]}, {"world": "object", "proba": "array"}),
        E("TabularPolicy.action_proba", POLICY.action_proba, {"x": [0, 4], "z": [1, 0]},
          {"x": "array", "z": "array"}),
        E("as_policy", as_policy, {"obj": POLICY, "problem": PROBLEM},
          {"obj": "object", "problem": "object"}, names={"obj": ("policy",)}),
        E("CallablePolicy", CallablePolicy,
          {"function": lambda X: np.full((len(X), 2), 0.5), "n_actions": 2},
          {"function": "object", "n_actions": "size"}),
        # ---------------------------------------------------------------- criteria
        E("Independence", fd.Independence, {"measure": "tv", "reference": "pairwise"},
          {"measure": "choice", "reference": "choice"}),
        E("MeritOrder", fd.MeritOrder, {"merit": [0.0, 2.0, 1.0], "actions": None},
          {"merit": "array"}, accepts={"merit": {"negative"}}),  # any real order
        E("MeritOrder.deviation", fd.MeritOrder(merit=[0.0, 2.0, 1.0]).deviation,
          {"policy": CPOLICY, "world": CWORLD, "problem": CLS},
          {"policy": "object", "world": "object", "problem": "object"}),
        E("Capacity", fd.Capacity,
          {"actions": 1, "at_most": 0.4, "at_least": 0.1, "per_group": True},
          {"at_most": "real", "at_least": "real", "per_group": "flag"}),
        E("Capacity(actions)", _capacity_deviation, {"actions": 1}, {"actions": "label"}),
        E("Capacity.deviation", fd.Capacity(1, at_most=0.4).deviation,
          {"policy": CPOLICY, "world": CWORLD, "problem": CLS},
          {"policy": "object", "world": "object", "problem": "object"}),
        E("sample_cohort", fd.sample_cohort,
          {"p": [0.2, 0.8, 0.5, 0.5], "k": 2, "random_state": 0},
          {"p": "array", "k": "size"}),
        E("birkhoff_decomposition", asg.birkhoff_decomposition,
          {"P": [[0.5, 0.5], [0.5, 0.5]], "tol": 1e-9}, {"P": "array", "tol": "real"}),
        E("BirkhoffDecomposition.sample",
          asg.birkhoff_decomposition([[0.5, 0.5], [0.5, 0.5]]).sample,
          {"size": 3, "random_state": 0}, {"size": "size"}),
        E("MatchingMarket", fd.MatchingMarket,
          {"candidate_prefs": [[0, 1], [1], [1, 0]], "programme_prefs": [[2, 0], [0, 1, 2]],
           "capacities": [1, 1]},
          {"candidate_prefs": "object", "programme_prefs": "object", "capacities": "array"}),
        E("deferred_acceptance", fd.deferred_acceptance,
          {"market": MARKET, "proposing": "programmes"},
          {"market": "object", "proposing": "choice"}),
        E("blocking_pairs", fd.blocking_pairs, {"market": MARKET, "assignment": [1, -1, 0]},
          {"market": "object", "assignment": "array"}),
        E("rank_utility", asg.rank_utility, {"market": MARKET}, {"market": "object"}),
        E("optimize_matching", fd.optimize_matching,
          {"market": MARKET, "utility": np.ones((3, 2)), "group": ["a", "b", "a"],
           "rate_gap": 1.0, "programme_gap": 1.0, "min_share": {"a": 0.0},
           "stability": False, "time_limit": 60.0},
          {"market": "object", "utility": "array", "group": "labels", "rate_gap": "real",
           "programme_gap": "real", "min_share": "object", "stability": "flag",
           "time_limit": "real"},
          accepts={"utility": {"negative"}}),
        E("MatchingResult.sample", fd.optimize_matching(MARKET, stability=False).sample,
          {"size": 3, "random_state": 0}, {"size": "size"}),
        E("complete_doubly_stochastic", asg.complete_doubly_stochastic,
          {"P": [[0.5], [0.25]]}, {"P": "array"}),
        # ---------------------------------------------------------------- rankings
        E("optimize_ranking", fd.optimize_ranking,
          {"merits": [0.9, 0.5, 0.4, 0.1], "group": RGROUPS,
           "criteria": fd.ExposureParity(), "epsilon": 0.1, "positions": [1, 0.5, 0.5, 0.2],
           "k": 4, "formulation": None, "tol": 1e-6},
          {"merits": "array", "group": "labels", "criteria": "object", "epsilon": "real",
           "positions": "array", "k": "size", "formulation": "choice", "tol": "real"},
          accepts={"merits": {"negative"}}),  # any real merits
        E("ExposureParity.deviation", fd.ExposureParity().deviation,
          {"P": np.eye(4), "merits": [4, 3, 2, 1], "group": RGROUPS, "positions": None},
          {"P": "array", "merits": "array", "group": "labels"},
          accepts={"merits": {"negative"}}),
        E("MeritExposure.deviation", fd.MeritExposure().deviation,
          {"P": np.eye(4), "merits": [4, 3, 2, 1], "group": RGROUPS,
           "positions": [1, 0.5, 0.5, 0.2]},
          {"P": "array", "merits": "array", "group": "labels", "positions": "array"}),
        E("TopShare", fd.TopShare,
          {"group": "b", "at_least": 0.5, "top": 2, "every_prefix": True},
          {"at_least": "real", "top": "size", "every_prefix": "flag"}),
        E("TopShare(minimum)", fd.TopShare, {"group": "b", "minimum": [0, 1, 1]},
          {"minimum": "array"}),
        E("TopShare(group)", _top_share_deviation, {"group": "b"}, {"group": "label"}),
        E("RankingLipschitz", fd.RankingLipschitz,
          {"constant": 2.0, "pairs": [[0, 1]], "distances": [0.1], "max_distance": 0.5},
          {"constant": "real", "pairs": "array", "distances": "array",
           "max_distance": "real"}),
        E("RankingResult.sample", RANKING.sample, {"size": 3, "random_state": 0},
          {"size": "size"}),
        E("RankingResult.meritocracy", RANKING.meritocracy,
          {"worths": [4, 3, 2, 1], "top_k": 1, "unconstrained": False, "tol": 1e-9},
          {"worths": "array", "top_k": "size", "unconstrained": "flag", "tol": "real"},
          accepts={"worths": {"negative"}}),
        E("RankingResult.selection_probability", RANKING.selection_probability,
          {"top_k": 2}, {"top_k": "size"}),
        E("optimize_ranking(exposure)", fd.optimize_ranking,
          {"merits": [0.9, 0.5, 0.4, 0.1], "group": RGROUPS,
           "criteria": [fd.ExposureParity(), fd.MeritExposure()], "epsilon": [0.1, 5.0],
           "positions": [1, 0.5, 0.2], "formulation": "exposure", "tol": 1e-6},
          {"merits": "array", "group": "labels", "epsilon": "array", "positions": "array",
           "formulation": "choice", "tol": "real"}),
        E("RankingResult.sample(lottery)", RANKING_EXPOSURE.sample,
          {"size": 3, "random_state": 0}, {"size": "size"}),
        E("RankingResult.selection_probability(lottery)",
          RANKING_EXPOSURE.selection_probability, {"top_k": 2}, {"top_k": "size"}),
        E("RankingLottery.sample", RANKING_LOTTERY.sample, {"size": 3, "random_state": 0},
          {"size": "size"}),
        E("RankingLottery.selection_probability", RANKING_LOTTERY.selection_probability,
          {"top_k": 2}, {"top_k": "size"}),
        E("Separation", fd.Separation, {"measure": "kl", "outcomes": None},
          {"measure": "choice"}),
        E("Sufficiency", fd.Sufficiency, {"measure": "max"}, {"measure": "choice"}),
        E("ConditionalIndependence", fd.ConditionalIndependence,
          {"target": "action", "given": "outcome", "weighting": "uniform"},
          {"target": "choice", "given": "choice", "weighting": "choice"}),
        E("Lipschitz", fd.Lipschitz, {"metric": "euclidean", "constant": 0.5,
                                      "n_neighbors": 3},
          {"metric": "choice", "constant": "real", "n_neighbors": "size"}),
        E("Lipschitz(weighted)", fd.Lipschitz,
          {"metric": "weighted", "weights": [1.0, 2.0], "constant": 0.5},
          {"weights": "array"}),
        E("Lipschitz(pairs)", fd.Lipschitz, {"pairs": [[0, 1], [2, 3]], "constant": 0.5},
          {"pairs": "array"}),
        E("Lipschitz.deviation", fd.Lipschitz(constant=0.5).deviation,
          {"policy": IndividualPolicy(np.full((40, 2), 0.5), SWORLD.X), "world": SWORLD,
           "problem": CLS},
          {"policy": "object", "world": "object", "problem": "object"}),
        E("optimize_policy(Lipschitz)", fd.optimize_policy,
          {"problem": CLS, "world": SWORLD, "criteria": fd.Lipschitz(constant=0.5),
           "epsilon": 0.0},
          {"world": "object", "epsilon": "real", "criteria": "object"},
          accepts={"epsilon": {"inf"}}),
        E("parity", fd.parity, {"rows": SR, "S": SS, "T": ST, "weights": np.ones(30)},
          {"rows": "array", "S": "array", "T": "array", "weights": "array"}),
        E("worst_case_bias", fd.worst_case_bias,
          {"X": SX, "S": SS, "T": ST, "constant": 0.5, "metric": "euclidean",
           "n_actions": 3, "weights_rows": np.ones(30)},
          {"X": "array", "S": "array", "T": "array", "constant": "real", "metric": "choice",
           "n_actions": "size", "weights_rows": "array"},
          accepts={"X": {"negative"}}),  # features may be negative
        E("worst_case_bias(weighted)", fd.worst_case_bias,
          {"X": SX, "S": SS, "T": ST, "constant": 0.5, "metric": "weighted",
           "weights": [1.0, 2.0]}, {"weights": "array"}),
        E("meritocracy", fd.meritocracy,
          {"decisions_or_rows": SR, "worths": SX[:, 0], "action": 1, "tol": 1e-9,
           "max_pairs": 5},
          {"decisions_or_rows": "array", "worths": "array", "action": "size", "tol": "real",
           "max_pairs": "size"},
          # worths may be negative; action 0 is an action; max_pairs=0 lists none
          accepts={"worths": {"negative"}, "action": {"zero"}, "max_pairs": {"zero"}}),
        E("meritocracy(decisions)", fd.meritocracy,
          {"decisions_or_rows": (SX[:, 1] > 0).astype(int), "worths": SX[:, 0]},
          {"decisions_or_rows": "array"}),
        E("Criterion.deviation", fd.Independence().deviation,
          {"policy": POLICY, "world": WORLD, "problem": PROBLEM},
          {"policy": "object", "world": "object", "problem": "object"}),
        E("block_divergence", block_divergence,
          {"p_group": [[0.2, 0.8]], "p_pool": [0.5, 0.5], "measure": "tv"},
          {"p_group": "array", "p_pool": "array", "measure": "choice"}),
        E("resolve_names", resolve_names, {"criteria": [fd.Independence()]},
          {"criteria": "object"}),
        # ---------------------------------------------------------------- optimiser
        E("optimize_policy", fd.optimize_policy,
          {"problem": PROBLEM, "world": WORLD, "criteria": fd.Independence(),
           "epsilon": 0.05, "tol": 1e-6, "max_iter": 50, "group_blind": False,
           "progress": None, "capacity": fd.Capacity("release", at_most=0.5)},
          {"problem": "object", "world": "object", "criteria": "object",
           "epsilon": "tolerance", "tol": "real", "max_iter": "size", "group_blind": "flag",
           "progress": "object", "capacity": "object"}),
        E("optimize_policy(tradeoff=)", fd.optimize_policy,
          {"problem": PROBLEM, "world": WORLD, "criteria": fd.Independence(),
           "tradeoff": FairnessConstraint((0.05,))},
          {"tradeoff": "object"}),
        E("Mixture", Mixture, {"lam": 0.5}, {"lam": "real"}),
        E("FairnessConstraint", lambda epsilon: fd.optimize_policy(
            PROBLEM, WORLD, [fd.Independence(), fd.Separation()],
            tradeoff=FairnessConstraint(epsilon)), {"epsilon": [0.05, 0.1]},
          {"epsilon": "array"}, accepts={"epsilon": {"inf"}}),  # inf: no constraint
        E("FairnessConstraint(chance_delta)", FairnessConstraint,
          {"epsilon": [0.05], "chance_delta": 0.1}, {"chance_delta": "real"}),
        E("UtilityConstraint", UtilityConstraint, {"slack": 0.05, "chance_delta": 0.1},
          {"slack": "real", "chance_delta": "real"}),
        E("optimize_policy(lam)", fd.optimize_policy,
          {"problem": PROBLEM, "world": WORLD, "criteria": fd.Separation(), "lam": 0.5},
          {"lam": "real"}),
        E("optimize_policy(utility_slack)", fd.optimize_policy,
          {"problem": PROBLEM, "world": WORLD, "criteria": fd.Separation(),
           "utility_slack": 0.01},
          {"utility_slack": "real"}),
        E("optimize_policy(policy=LinearSoftmaxPolicy)", fd.optimize_policy,
          {"problem": CLS, "world": SWORLD, "criteria": fd.Independence(), "epsilon": 0.05,
           "policy": fd.LinearSoftmaxPolicy(include_z=True), "n_restarts": 1,
           "random_state": 0, "max_iter": 30},
          {"world": "object", "epsilon": "real", "policy": "object", "n_restarts": "size",
           "random_state": "real", "max_iter": "size"},
          accepts={"epsilon": {"inf"}}),
        E("pareto_frontier", fd.pareto_frontier,
          {"problem": PROBLEM, "world": WORLD, "criterion": fd.Independence(),
           "n_points": 3},
          {"problem": "object", "world": "object", "criterion": "object",
           "n_points": "size"}),
        E("decision_table", fd.decision_table,
          {"policy": POLICY, "world": WORLD, "problem": PROBLEM},
          {"policy": "object", "world": "object", "problem": "object"}),
        E("expected_utility", fd.expected_utility,
          {"policy": POLICY, "world": WORLD, "problem": PROBLEM},
          {"policy": "object", "world": "object", "problem": "object"}),
        E("scenario_values", fd.scenario_values,
          {"policy": CPOLICY, "worlds": BELIEF.worlds, "problem": CLS,
           "criteria": [fd.Independence()]},
          {"policy": "object", "worlds": "object", "problem": "object",
           "criteria": "object"}),
        # ---------------------------------------------------------------- beliefs
        E("Belief", fd.Belief, {"worlds": BELIEF.worlds, "weights": np.ones(4)},
          {"worlds": "object", "weights": "array"}),
        E("Belief.plug_in", fd.Belief.plug_in, {"world": WORLD}, {"world": "object"}),
        E("Belief.from_posterior", fd.Belief.from_posterior,
          {"posterior": POSTERIOR, "n_scenarios": 3, "random_state": 0},
          {"posterior": "object", "n_scenarios": "size", "random_state": "object"},
          accepts={"random_state": {"number"}}),  # 3 is a seed
        E("Belief.from_bootstrap", fd.Belief.from_bootstrap,
          {"data": CDATA, "problem": CLS, "n_scenarios": 3, "smoothing": 0.5},
          {"data": "object", "problem": "object", "n_scenarios": "size",
           "smoothing": "real"}),
        E("Belief.highest_density_draws", fd.Belief.highest_density_draws,
          {"posterior": POSTERIOR, "delta": 0.1, "n_scenarios": 4, "random_state": 0},
          {"posterior": "object", "delta": "real", "n_scenarios": "size"}),
        E("ConfidenceSet.from_data", fd.ConfidenceSet.from_data,
          {"data": CDATA, "problem": CLS, "delta": 0.1, "population": None,
           "outcomes": "auto", "pooled": False},
          {"data": "object", "problem": "object", "delta": "real",
           "population": "array", "outcomes": "choice", "pooled": "flag"},
          accepts={"population": {"none"}}),
        E("ConfidenceSet.from_posterior", fd.ConfidenceSet.from_posterior,
          {"posterior": POSTERIOR, "delta": 0.1, "population": None, "n_draws": 500,
           "random_state": 0},
          {"posterior": "object", "delta": "real", "population": "array",
           "n_draws": "size", "random_state": "object"},
          accepts={"population": {"none"}, "random_state": {"number"}}),
        E("ConfidenceSet", fd.ConfidenceSet,
          {"center": CWORLD, "outcomes": L1Balls(CWORLD.p_y,
                                                 np.full(CWORLD.p_y.shape[:-1], 0.2)),
           "group_radius": 0.1, "cell_radius": [0.2, 0.3], "delta": 0.1},
          {"center": "object", "outcomes": "object", "group_radius": "real",
           "cell_radius": "array", "delta": "real"}),
        E("L1Balls", L1Balls,
          {"center": CWORLD.p_y, "radius": np.full(CWORLD.p_y.shape[:-1], 0.2)},
          {"center": "array", "radius": "array"}),
        E("Boxes", Boxes,
          {"lo": np.clip(CWORLD.p_y - 0.1, 0, 1), "hi": np.clip(CWORLD.p_y + 0.1, 0, 1)},
          {"lo": "array", "hi": "array"}),
        E("optimize_policy (ConfidenceSet)", lambda world, epsilon: fd.optimize_policy(
            CLS, world, fd.Independence(), epsilon=epsilon),
          {"world": fd.ConfidenceSet.from_data(CDATA, CLS, population=CWORLD),
           "epsilon": 0.1}, {"world": "object", "epsilon": "real"},
          accepts={"epsilon": {"inf"}}),  # inf switches the tolerance off
        E("optimize_policy (pooled ConfidenceSet)", lambda world, group_blind:
          fd.optimize_policy(CLS, world, group_blind=group_blind),
          {"world": fd.ConfidenceSet.from_data(CDATA, CLS, pooled=True),
           "group_blind": True}, {"world": "object", "group_blind": "flag"}),
        E("certify_policy", fd.certify_policy,
          {"policy": fd.TabularPolicy.constant(CWORLD.n_x, CWORLD.n_z, [0.5, 0.5]),
           "confidence": fd.ConfidenceSet.from_data(CDATA, CLS, population=CWORLD),
           "problem": CLS, "criteria": fd.Independence()},
          {"policy": "object", "confidence": "object", "problem": "object",
           "criteria": "object"}),
        E("optimize_held_out", fd.optimize_held_out,
          {"problem": CLS, "data": CDATA, "criteria": fd.Independence(), "epsilon": 0.1,
           "delta": 0.1, "safety_fraction": 0.6, "group_blind": False, "random_state": 0},
          {"problem": "object", "data": "object", "criteria": "object",
           "epsilon": "tolerance", "delta": "real", "safety_fraction": "real",
           "group_blind": "flag", "random_state": "object"},
          accepts={"random_state": {"number"}}),
        E("rows_needed", fd.rows_needed,
          {"problem": CLS, "data": CDATA, "criteria": fd.Independence(), "epsilon": 0.5,
           "delta": 0.1, "safety_fraction": 0.6, "group_blind": False, "n_sims": 1,
           "max_rows": 150,
           "world": None, "random_state": 0},
          {"problem": "object", "data": "object", "criteria": "object",
           "epsilon": "tolerance", "delta": "real", "safety_fraction": "real",
           "group_blind": "flag", "n_sims": "size", "max_rows": "size", "world": "object",
           "random_state": "object"},
          accepts={"random_state": {"number"}}),
        E("DirichletPosterior", lambda prior, factorization: fd.DirichletPosterior(
            prior, factorization).fit(CDATA, CLS),
          {"prior": 0.5, "factorization": "joint"},
          {"prior": "real", "factorization": "choice"}),
        E("DirichletPosterior.fit", fd.DirichletPosterior().fit,
          {"data": CDATA, "problem": CLS}, {"data": "object", "problem": "object"}),
        E("DirichletPosterior.sample", POSTERIOR.sample, {"n": 2, "random_state": 0},
          {"n": "size", "random_state": "object"}, accepts={"random_state": {"number"}}),
        E("BootstrapPosterior", lambda smoothing: fd.BootstrapPosterior(smoothing).fit(
            CDATA, CLS), {"smoothing": 0.5}, {"smoothing": "real"}),
        E("IndividualOutcomeModel", fd.models.IndividualOutcomeModel,
          {"classifier": None, "action_encoding": "separate", "n_folds": 3},
          {"classifier": "object", "action_encoding": "choice", "n_folds": "size"}),
        E("IndividualOutcomeModel.fit", fd.models.IndividualOutcomeModel().fit,
          {"X": BANDIT.X, "z": BANDIT.z, "y": BANDIT.y, "problem": BPROBLEM, "a": BANDIT.a},
          {"X": "array", "z": "labels", "y": "labels", "problem": "object", "a": "labels"},
          accepts={"X": {"negative"}}),
        E("BayesianOutcomeModel", fd.models.BayesianOutcomeModel,
          {"prior_scale": 2.5, "action_encoding": "feature", "draws": 20, "tune": 20,
           "chains": 1},
          {"prior_scale": "real", "action_encoding": "choice", "draws": "size",
           "tune": "size", "chains": "size"}, accepts={"tune": {"zero"}}),
        E("BayesianOutcomeModel.fit", _bayes_fit,
          {"X": BANDIT.X[:60], "z": BANDIT.z[:60], "y": BANDIT.y[:60], "problem": BPROBLEM,
           "a": BANDIT.a[:60]},
          {"X": "array", "z": "labels", "y": "labels", "problem": "object", "a": "labels"},
          accepts={"X": {"negative"}}),
        E("BayesianOutcomeModel.belief", _bayes_belief,
          {"n_scenarios": 3, "X": BANDIT.X[:5], "z": BANDIT.z[:5], "aggregate": "worst"},
          {"n_scenarios": "size", "X": "array", "z": "labels", "aggregate": "choice"},
          accepts={"X": {"negative"}}),
        E("BayesianOutcomeModel.posterior_mean_world", _bayes_mean_world,
          {"X": BANDIT.X[:5], "z": BANDIT.z[:5]}, {"X": "array", "z": "labels"},
          accepts={"X": {"negative"}}),
        E("Belief.from_refits", fd.Belief.from_refits,
          {"model": fd.models.IndividualOutcomeModel().fit(BANDIT.X, BANDIT.z, BANDIT.y,
                                                           BPROBLEM, a=BANDIT.a),
           "n_scenarios": 2, "random_state": 0},
          {"model": "object", "n_scenarios": "size"}),
        E("ConfidenceSet.from_refits", fd.ConfidenceSet.from_refits,
          {"model": fd.models.IndividualOutcomeModel().fit(BANDIT.X[:80], BANDIT.z[:80],
                                                           BANDIT.y[:80], BPROBLEM,
                                                           a=BANDIT.a[:80]),
           "delta": 0.2, "n_refits": 10, "random_state": 0, "refits": None},
          {"model": "object", "delta": "real", "n_refits": "size",
           "random_state": "object", "refits": "object"},
          accepts={"random_state": {"number"}}),
        E("TabularCounts.from_data", fd.data.TabularCounts.from_data,
          {"data": CDATA, "problem": CLS}, {"data": "object", "problem": "object"}),
        E("evaluate_under_belief", fd.evaluate_under_belief,
          {"policy": CPOLICY, "belief": BELIEF, "problem": CLS,
           "criteria": fd.Independence()},
          {"policy": "object", "belief": "object", "problem": "object",
           "criteria": "object"}),
        E("BeliefEvaluation.summary",
          fd.evaluate_under_belief(CLS, BELIEF, CPOLICY).summary,
          {"quantiles": [0.1, 0.9]}, {"quantiles": "array"}),
        # ---------------------------------------------------------------- evaluation
        E("evaluate_policy", ev.evaluate_policy,
          {"data": DATA, "policy": POLICY, "problem": PROBLEM, "method": "dr",
           "n_folds": 3},
          {"data": "object", "policy": "object", "problem": "object",
           "method": "choice", "n_folds": "size"}),
        E("evaluate_policy(bootstrap)", ev.evaluate_policy,
          {"data": DATA, "policy": POLICY, "problem": PROBLEM, "method": "ips",
           "interval": "bootstrap", "n_boot": 20},
          {"interval": "choice", "n_boot": "size"}),
        E("evaluate_policy_by_group", ev.evaluate_policy_by_group,
          {"data": DATA, "policy": POLICY, "problem": PROBLEM, "method": "ips"},
          {"data": "object", "policy": "object", "problem": "object",
           "method": "choice"}),
        E("GroupValues.gaps", GROUPS.gaps, {"level": 0.9}, {"level": "real"}),
        E("ValueEstimate.confidence_interval", GROUPS.overall.confidence_interval,
          {"level": 0.9}, {"level": "real"}),
        E("estimate_deviation", ev.estimate_deviation,
          {"data": DATA, "problem": PROBLEM, "criterion": fd.Independence(),
           "n_boot": 20, "level": 0.9},
          {"data": "object", "problem": "object", "criterion": "object",
           "n_boot": "size", "level": "real"}),
        E("audit", ev.audit,
          {"data": DATA, "problem": PROBLEM, "n_boot": 20, "n_draws": 20,
           "prior": 1.0, "level": 0.9},
          {"data": "object", "problem": "object", "n_boot": "size",
           "n_draws": "size", "prior": "real", "level": "real"}),
        E("log_marginal_likelihoods", ev.log_marginal_likelihoods,
          {"N": counts, "alpha": 1.0}, {"N": "array", "alpha": "real"}),
        E("OffPolicyInputs", ev.OffPolicyInputs,
          {"reward": [1.0, 0.0], "action": [0, 1], "target": [[0.5, 0.5], [0.2, 0.8]],
           "propensity": [0.5, 0.5]},
          {"reward": "array", "action": "array", "target": "array",
           "propensity": "array"}, accepts={"reward": {"negative"}}),
        E("InverseProbability", lambda clip: ev.InverseProbability(clip),
          {"clip": 10.0}, {"clip": "real"}),
        E("CellFrequencies.fit", lambda X, y: ev.CellFrequencies().fit(X, y),
          {"X": [[0.0], [1.0], [1.0]], "y": [0, 1, 1]}, {"X": "array", "y": "array"}),
        # ---------------------------------------------------------------- datasets
        E("make_tabular_problem", make_tabular_problem,
          {"n_x": 3, "n_z": 2, "n_actions": 2, "n_outcomes": 2, "concentration": 1.0},
          {"n_x": "size", "n_z": "size", "n_actions": "size", "n_outcomes": "size",
           "concentration": "real"}),
        E("sample_logged_data", sample_logged_data,
          {"world": WORLD, "problem": PROBLEM, "n": 20, "policy": POLICY},
          {"world": "object", "problem": "object", "n": "size", "policy": "object"}),
        E("make_logged_bandit", make_logged_bandit,
          {"n": 50, "n_features": 2, "n_actions": 2, "random_state": 0},
          {"n": "size", "n_features": "size", "n_actions": "size"}),
        E("LoggedBanditTruth.value", TRUTH.value,
          {"policy": TRUTH.nearby_policy(), "n_draws": 1000},
          {"policy": "object", "n_draws": "size"}),
        # ---------------------------------------------------------------- estimators
        E("FairPolicyClassifier.fit", _classifier_fit,
          {"X": EX, "y": EY, "sensitive_features": EZ, "sample_weight": np.ones(60)},
          {"X": "array", "y": "labels", "sensitive_features": "labels",
           "sample_weight": "array"},
          # two columns of sensitive features are valid: their combinations are the groups
          accepts={"X": {"negative"}, "sensitive_features": {"shape"}},
          names={"y": ("X or y", "class", "label")}),
        E("FairPolicyClassifier(params)", _classifier_params,
          {"epsilon": 0.05, "n_scenarios": 4, "policy": "softmax", "uncertainty": "plug-in",
           "criteria": "independence", "l2": 1e-4, "n_restarts": 1},
          {"epsilon": "real", "n_scenarios": "size", "policy": "choice", "uncertainty": "choice",
           "criteria": "choice", "l2": "real", "n_restarts": "size"},
          # inf switches the criterion off, as in optimize_policy
          accepts={"epsilon": {"inf"}}),
        # the score family adds its order constraint to the criteria: a bad epsilon is
        # still reported as the caller wrote it
        E("FairPolicyClassifier(score)", lambda epsilon: fd.FairPolicyClassifier(
            policy="score", epsilon=epsilon, random_state=0).fit(
            EX, EY, sensitive_features=EZ).result_, {"epsilon": 0.05},
          {"epsilon": "tolerance"}),
        E("FairDecisionPolicy(epsilon)", lambda epsilon: fd.FairDecisionPolicy(
            epsilon=epsilon, random_state=0).fit(
            EX, EY, actions=EA, sensitive_features=EZ, propensities=EP).result_,
          {"epsilon": 0.05}, {"epsilon": "tolerance"}),
        E("FairPolicyClassifier(group_column)", _classifier_group_column,
          {"group_column": "g"}, {"group_column": "choice"}),
        E("FairPolicyClassifier(actions)", _classifier_actions,
          {"actions": np.array(["deny", "refer", "approve"], dtype=object),
           "utility": np.array([[0.8, 0.0], [0.6, 0.6], [0.0, 1.0]])},
          {"actions": "labels", "utility": "array"},
          # a utility may be negative (costs)
          accepts={"utility": {"negative"}}),
        E("FairPolicyClassifier(guarantee)", _guaranteed_fit,
          {"guarantee": 0.05, "safety_fraction": 0.4},
          {"guarantee": "real", "safety_fraction": "real"}),
        E("certify_held_out", ev.certify_held_out,
          {"estimator": _classifier(), "X": EX, "y": EY, "sensitive_features": EZ,
           "epsilon": 0.5, "criteria": "separation", "delta": 0.1},
          {"estimator": "object", "X": "array", "y": "labels",
           "sensitive_features": "labels", "epsilon": "real", "criteria": "choice",
           "delta": "real"},
          accepts={"X": {"negative"}}, names={"y": ("X or y", "class", "label")}),
        E("FairPolicyClassifier.predict_proba",
          lambda X, sensitive_features: _classifier().predict_proba(
              X, sensitive_features=sensitive_features),
          {"X": EX, "sensitive_features": EZ},
          {"X": "array", "sensitive_features": "labels"}, accepts={"X": {"negative"}}),
        E("FairPolicyClassifier.score",
          lambda X, y, sensitive_features: _classifier().score(
              X, y, sensitive_features=sensitive_features),
          {"X": EX, "y": EY, "sensitive_features": EZ},
          {"X": "array", "y": "labels", "sensitive_features": "labels"},
          accepts={"X": {"negative"}}),
        E("FairDecisionPolicy.fit",
          lambda X, y, actions, sensitive_features, propensities:
          fd.FairDecisionPolicy(random_state=0).fit(
              X, y, actions=actions, sensitive_features=sensitive_features,
              propensities=propensities),
          {"X": EX, "y": EY, "actions": EA, "sensitive_features": EZ, "propensities": EP},
          {"X": "array", "y": "labels", "actions": "labels", "sensitive_features": "labels",
           "propensities": "array"},
          accepts={"X": {"negative"}, "sensitive_features": {"shape"}},
          names={"y": ("X or y", "outcome")}),
        E("FairDecisionPolicy.predict_proba",
          lambda X, sensitive_features: _decision_policy().predict_proba(
              X, sensitive_features=sensitive_features),
          {"X": EX, "sensitive_features": EZ},
          {"X": "array", "sensitive_features": "labels"}, accepts={"X": {"negative"}}),
        E("FairDecisionPolicy.evaluate",
          lambda X, y, actions, propensities, level, n_boot: _decision_policy().evaluate(
              X, y, actions=actions, sensitive_features=EZ, propensities=propensities,
              level=level, n_boot=n_boot),
          {"X": EX, "y": EY, "actions": EA, "propensities": EP, "level": 0.9, "n_boot": 20},
          {"X": "array", "y": "labels", "actions": "labels", "propensities": "array",
           "level": "real", "n_boot": "size"}, accepts={"X": {"negative"}}),
        E("make_fairness_scorer",
          lambda criterion, X, y, sensitive_features: fd.make_fairness_scorer(criterion)(
              _classifier(), X, y, sensitive_features=sensitive_features),
          {"criterion": "independence", "X": EX, "y": EY, "sensitive_features": EZ},
          {"criterion": "choice", "X": "array", "y": "labels",
           "sensitive_features": "labels"},
          accepts={"X": {"negative"}}),
        E("make_utility_scorer",
          lambda utility, X, y: fd.make_utility_scorer(utility)(
              _classifier(), X, y, sensitive_features=EZ),
          {"utility": np.eye(2), "X": EX, "y": EY},
          {"utility": "array", "X": "array", "y": "labels"},
          accepts={"X": {"negative"}, "utility": {"negative"}}),
        E("best_utility_within", lambda bound: fd.best_utility_within(bound)(
            {"mean_test_utility": [0.9, 0.8], "mean_test_fairness": [-0.2, -0.01]}),
          {"bound": 0.05}, {"bound": "real"}),
        # ---------------------------------------------------------------- distributed
        # (optimize_distributed, deprecated, calls optimize_policy(FrameWorld) below)
        E("FrameWorld", fd.FrameWorld,
          {"units": UNITS, "problem": CLS, "group": "z", "weight": "w"},
          {"units": "object", "problem": "object", "group": "label", "weight": "label"}),
        # optimize_policy's door to the distributed solver, with the settings it refuses
        E("optimize_policy(FrameWorld)", fd.optimize_policy,
          {"problem": CLS, "world": fd.FrameWorld(UNITS, CLS), "criteria": fd.Independence(),
           "epsilon": 0.05, "tol": 1e-6, "max_iter": 50, "group_blind": False,
           "solver": None, "policy": None, "n_restarts": None, "progress": None,
           "capacity": fd.Capacity(1, at_most=0.9)},
          {"problem": "object", "criteria": "object", "epsilon": "real", "tol": "real",
           "max_iter": "size", "group_blind": "flag", "solver": "choice", "policy": "object",
           "n_restarts": "object", "progress": "object", "capacity": "object"},
          accepts={"epsilon": {"inf", "list"}}),
        E("outcome_columns", fd.optimize.outcome_columns, {"problem": CLS},
          {"problem": "object"}),
        E("FrameWorld.part_units", fd.FrameWorld(UNITS, CLS).part_units,
          {"part": UNITS, "index": 0}, {"part": "object", "index": "size"},
          accepts={"index": {"zero"}}),
        # ---------------------------------------------------------------- privacy
        E("PrivacyBudget", pv.PrivacyBudget,
          {"epsilon": 1.0, "shares": {"groups": 0.5, "cells": 0.5}},
          {"epsilon": "real", "shares": "object"}),
        E("PrivacyBudget.even", pv.PrivacyBudget.even,
          {"epsilon": 1.0, "names": ["groups", "cells"]},
          {"epsilon": "real", "names": "labels"}, accepts={"names": {"short"}}),
        E("PrivacyBudget.epsilon_of", BUDGET.epsilon_of, {"name": "groups"},
          {"name": "label"}),
        E("release_counts", pv.release_counts,
          {"counts": np.array([[5, 3], [2, 9]]), "epsilon": 1.0, "mechanism": "geometric"},
          {"counts": "array", "epsilon": "real", "mechanism": "choice"},
          accepts={"counts": {"shape"}}),
        E("NoisyCounts", pv.NoisyCounts,
          {"values": [[4, -1], [2, 9]], "epsilon": 1.0, "mechanism": "geometric"},
          {"values": "array", "epsilon": "real", "mechanism": "choice"},
          accepts={"values": {"negative", "shape"}}),
        E("NoisyCounts.from_dict", pv.NoisyCounts.from_dict, {"record": NOISY.to_dict()},
          {"record": "object"}),
        E("noise_variance", pv.noise_variance, {"epsilon": 1.0, "mechanism": "laplace"},
          {"epsilon": "real", "mechanism": "choice"}),
        E("rate_interval", pv.rate_interval,
          {"successes": [3, 40], "totals": [10, 100], "level": 0.95},
          {"successes": "array", "totals": "array", "level": "real"}),
        E("rate_interval(noisy)", pv.rate_interval,
          {"successes": [3.2, -1.5], "totals": [9.1, 4.0], "level": 0.9,
           "noise": (8.0, 8.0)},
          {"successes": "array", "totals": "array", "level": "real", "noise": "object"},
          accepts={"successes": {"negative"}, "totals": {"negative"}}),
        E("replicate_releases", pv.replicate_releases,
          {"noisy": NOISY, "n_draws": 20, "random_state": 0},
          {"noisy": "object", "n_draws": "size"}),
        E("suppress_small_cells", pv.suppress_small_cells,
          {"counts": [[0, 3], [12, 40]], "threshold": 10},
          {"counts": "array", "threshold": "size"}, accepts={"counts": {"shape", "empty"}}),
        # ---------------------------------------------------------------- the report
        E("ProgressBar", fd.optimize.ProgressBar, {"stream": io.StringIO(), "interval": 0.5},
          {"stream": "object", "interval": "real"}),
        E("audit_report", rp.audit_report,
          {"data": FRAME, "group": "z", "action": "a", "outcome": "y", "features": ["x"],
           "utility": BAIL_UTILITY, "kind": "intervention", "criterion": "independence",
           "epsilon": 0.05, "level": 0.9, "n_boot": 50, "min_cell": 1, "dp_epsilon": 1.0,
           "accept_rare_labels": False},
          {"data": "object", "group": "label", "action": "label", "outcome": "label",
           "features": "label", "utility": "object", "kind": "choice",
           "criterion": "choice", "epsilon": "real", "level": "real", "n_boot": "size",
           "min_cell": "size", "dp_epsilon": "real", "accept_rare_labels": "flag"},
          accepts={"data": {"frame"}}),
        E("read_table", rp.read_table, {"path": LOG_CSV}, {"path": "object"},
          names={"path": ("file", "abc")}),
        E("parse_utility", rp.parse_utility,
          {"spec": '{"a": {"0": 1, "1": 0}, "b": {"0": 0, "1": 1}}',
           "action_labels": ["a", "b"], "outcome_labels": [0, 1]},
          {"spec": "object"}, names={"spec": ("utility",)}),
        E("prepare_data", rp.prepare_data,
          {"df": FRAME, "group": "z", "action": "a", "outcome": "y", "features": ["x"],
           "max_levels": 8, "accept_rare_labels": False},
          {"df": "object", "group": "label", "action": "label", "outcome": "label",
           "features": "label", "max_levels": "size", "accept_rare_labels": "flag"},
          accepts={"df": {"frame"}}),
        E("find_dataset", fd.datasets.find_dataset,
          {"name": "compas", "data_home": "/nonexistent", "download": False},
          {"name": "label", "data_home": "object"}, names={"name": ("data set",)}),
    ]


ENTRIES = {e.name: e for e in _entries()}

# Public names that are not entry points of their own, and why.
EXEMPT = {
    "FairdecideError": "an exception",
    "Guarantee": "a result container built by optimize_policy over a ConfidenceSet and by "
                 "certify_policy (both fuzzed)",
    "RateInterval": "a result container built by rate_interval (fuzzed)",
    "RowsNeeded": "a result container built by rows_needed (fuzzed)",
    "SMALL_CELL_THRESHOLD": "a constant", "MECHANISMS": "a constant",
    "AuditReport": "a result container built by audit_report (fuzzed)",
    "VertexMixturePolicy": "the policy optimize_policy returns for a FrameWorld (fuzzed); "
                           "tests/test_distributed.py gives its constructor and "
                           "frame_proba bad input",
    "Progress": "a record the solvers' loops build",
    "reporting": "checks its callback as optimize_policy(progress=) does, which calls it "
                 "(fuzzed)",
    "InfeasibleToleranceError": "an exception", "NotCertifiedError": "an exception",
    "HeldOutGuarantee": "a result container built by certify_held_out (fuzzed)",
    "SolverError": "an exception", "VerificationError": "an exception",
    "DataNotFoundError": "an exception", "PriceWarning": "a warning class",
    "Criterion": "abstract base class", "Policy": "abstract base class",
    "World": "abstract base class", "ParametricPolicy": "abstract base class",
    "Tradeoff": "abstract base class", "OutcomeRegions": "abstract base class",
    "SetKind": "a record of what a set is (its four instances are the library's own)",
    "MatchingResult": "a result container built by optimize_matching (fuzzed); its sample is "
                      "fuzzed",
    "BirkhoffDecomposition": "a result container built by birkhoff_decomposition "
                             "(fuzzed); its sample is fuzzed",
    "RankingLottery": "a result container built by optimize_ranking's exposure program "
                      "(fuzzed); its sample and selection_probability are fuzzed",
    "Capabilities": "a declaration criteria return, built by criterion authors",
    "DecisionTable": "built by decision_table (fuzzed) and DecisionTable.from_marginal",
    "OptimizeResult": "a result container built by optimize_policy",
    "Verification": "a result container built by the verifier",
    "BeliefEvaluation": "a result container; its summary is fuzzed",
    "DeviationEstimate": "a result container built by estimate_deviation",
    "ValueEstimate": "a result container; its confidence_interval is fuzzed",
    "GroupValues": "a result container; its gaps is fuzzed",
    "LinearizedConditionals": "internal rows of a linearised criterion",
    "MEASURES": "a constant",
    "MaxUtility": "the internal trade-off of a utility-only solve (no arguments)",
    "DirectMethod": "no arguments", "OnPolicy": "no arguments",
    "DoublyRobust": "clip as InverseProbability",
    "SelfNormalized": "clip as InverseProbability",
    "ClassifierPolicy": "built by as_policy (fuzzed) from a classifier",
    "TabularCounts": "built by TabularCounts.from_data (fuzzed)",
    "LoggedBanditTruth": "built by make_logged_bandit; its value is fuzzed",
    "load_compas": "reads find_dataset (fuzzed); tests/test_datasets.py",
    "load_adult": "reads find_dataset (fuzzed); tests/test_datasets.py",
    "load_german": "reads find_dataset (fuzzed); tests/test_datasets.py",
    "load_open_bandit": "no valid call without the data; tests/test_open_bandit.py gives "
                        "it bad arguments and absent, changed and out-of-range files",
    "OpenBanditData": "a container built by load_open_bandit; tests/test_open_bandit.py "
                      "gives it and its methods bad input",
    "make_bail_problem": "no arguments",
    "BanditData.from_logged": "internal conversion",
    "FairPolicyClassifier": "fuzzed through fit (with its parameters), predict_proba, score",
    "FairDecisionPolicy": "fuzzed through fit, predict_proba and evaluate",
    "all_estimators": "no arguments",
    "ParetoFrontierDisplay": "tests/test_plots.py calls each constructor with bad input",
    "GroupRatesDisplay": "tests/test_plots.py calls each constructor with bad input",
    "GroupCalibrationDisplay": "tests/test_plots.py calls each constructor with bad input",
}

PUBLIC_MODULES = ["fairdecide", "fairdecide.evaluation", "fairdecide.datasets",
                  "fairdecide.optimize", "fairdecide.models", "fairdecide.criteria",
                  "fairdecide.policies", "fairdecide.estimators", "fairdecide.plot",
                  "fairdecide.privacy", "fairdecide.report", "fairdecide.assignment",
                  "fairdecide.data", "fairdecide.worlds", "fairdecide.uncertainty",
                  "fairdecide.smoothness"]


@pytest.fixture(autouse=True)
def _no_data_anywhere(monkeypatch, tmp_path):
    """find_dataset looks in $FAIRDECIDE_DATA and the cache too: make both empty, so its
    valid call (download=False) is the same error on every machine."""
    monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)
    monkeypatch.setenv("FAIRDECIDE_CACHE", str(tmp_path))


def test_every_public_name_is_fuzzed():
    covered = {name.split("(")[0].split(".")[0] for name in ENTRIES} | {
        name.split("(")[0] for name in ENTRIES}
    missing = []
    for module in PUBLIC_MODULES:
        for name in importlib.import_module(module).__all__:
            if name not in covered and name not in EXEMPT:
                missing.append(f"{module}.{name}")
    assert not missing, f"public names with no fuzz entry (add one, or exempt it): {missing}"


def _non_finite(value: Any, depth: int = 0) -> str | None:
    """Where a NaN or infinity hides in a result, or None."""
    if depth > 4 or value is None or isinstance(value, str | bool):
        return None
    if isinstance(value, int | float | np.number):
        return None if np.isfinite(value) else repr(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" and not np.all(np.isfinite(value)):
            return f"array of shape {value.shape}"
        return None
    if isinstance(value, pd.DataFrame | pd.Series):
        if isinstance(value, pd.DataFrame) and "suppressed" in value:
            # a suppressed entry is NaN by design, and says so in its row
            value = value[~value["suppressed"].astype(bool)]
        num = value.select_dtypes("number") if isinstance(value, pd.DataFrame) else (
            value if value.dtype.kind in "fc" else None)
        if num is not None and not np.all(np.isfinite(num.to_numpy(dtype=float))):
            return "a DataFrame cell"
        return None
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, list | tuple):
        items = list(value)[:50]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif hasattr(value, "__dict__") and type(value).__module__.startswith("fairdecide"):
        items = list(vars(value).values())
    else:
        return None
    for item in items:
        found = _non_finite(item, depth + 1)
        if found:
            return found
    return None


@pytest.mark.parametrize("name", list(ENTRIES))
def test_valid_call_is_finite(name):
    entry = ENTRIES[name]
    if name == "find_dataset":
        with pytest.raises(fd.FairdecideError, match="compas"):
            entry.call()
        return
    result = entry.call()
    assert _non_finite(result) is None, f"{name} returned a non-finite value"


CASES = [(name, arg, bad) for name, entry in ENTRIES.items()
         for arg, kind in entry.kinds.items() for bad in KINDS[kind]]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("name", "arg", "bad"), CASES,
                         ids=[f"{n}-{a}-{b}" for n, a, b in CASES])
def test_malformed_argument(name, arg, bad):
    entry = ENTRIES[name]
    value = KINDS[entry.kinds[arg]][bad](entry.kwargs.get(arg))
    try:
        result = entry.call(**{arg: value})
    except (fd.FairdecideError, ValueError, TypeError) as exc:
        message = str(exc)
        names = (arg, *entry.names.get(arg, ()))
        assert any(n in message for n in names), (
            f"{name}({arg}={bad}) raised an error that does not name {arg!r}: {message}")
        if entry.kinds[arg] == "tolerance" and bad in ("negative", "numpy negative"):
            # the value as the caller wrote it
            assert message.endswith("; got -1"), message
        return
    assert bad in entry.accepts.get(arg, set()), (
        f"{name} accepted {arg}={bad} ({value!r:.60}) without an error")
    assert _non_finite(result) is None, (
        f"{name}({arg}={bad}) returned a non-finite value: {_non_finite(result)}")


def test_signatures_match_entries():
    # an entry naming an argument the function does not take would test nothing
    for entry in ENTRIES.values():
        try:
            params = inspect.signature(entry.func).parameters
        except (TypeError, ValueError):
            continue
        unknown = set(entry.kinds) - set(params)
        assert not unknown, f"{entry.name}: no parameters {unknown}"


def test_private_noise_that_leaves_nothing_to_divide_by_is_flagged_not_silent(monkeypatch):
    # The noise of numpy's seed 825 (the sampler before OpenDP, whose noise cannot be
    # seeded), replayed through the release's seam: the noisy totals of two of group B's
    # cells leave nothing to divide by (CI met such a draw once with unseeded noise).
    # Their entries are NaN, flagged suppressed, and nothing else is non-finite.
    rng = np.random.RandomState(825)

    def replay(table, epsilon, mechanism):
        p = -math.expm1(-epsilon)
        noise = rng.geometric(p, table.shape).astype(np.int64) - rng.geometric(p, table.shape)
        return table.astype(np.int64) + noise

    monkeypatch.setattr("fairdecide.privacy.mechanisms.opendp_release", replay)
    report = rp.audit_report(**ENTRIES["audit_report"].kwargs)
    table = report.rates["P(a | y, z)"]
    hidden = table["suppressed"].to_numpy(dtype=bool)
    assert hidden.any()
    assert table.loc[hidden, ["low", "high"]].isna().all().all()
    assert np.isfinite(table.loc[~hidden, ["low", "high"]].to_numpy(dtype=float)).all()
    assert _non_finite(report) is None


def test_public_names_survive_importing_every_submodule(fresh_imports):
    # importing a submodule binds it on its package; a public name spelt like its
    # submodule (fd.meritocracy) must still be the function afterwards: a fresh
    # interpreter that imported every submodule (tests/conftest.py) lists them
    modules = fresh_imports["public names that are modules"]
    assert set(PUBLIC_MODULES) <= set(modules)
    bad = [f"{m}.{n}" for m in PUBLIC_MODULES for n in modules[m]]
    assert bad == []


# ---------------------------------------------------------------- fairness without a utility
# Entry points whose utility and kind became optional (issue 23, item 6): the fairness
# parts need neither. Added to ENTRIES here, after the parametrised lists above were built,
# so they get their own parametrised tests below (test_signatures_match_entries reads
# ENTRIES when it runs, so it checks them too).
NO_UTILITY = {e.name: e for e in [
    Entry("audit(no problem)", ev.audit,
          {"data": DATA, "n_boot": 20, "n_draws": 20, "prior": 1.0, "level": 0.9},
          {"data": "object", "n_boot": "size", "n_draws": "size", "prior": "real",
           "level": "real"}),
    # bail actions (detain, release) are not its outcomes: no default utility or kind,
    # so this valid call is the fairness-only report; a utility or kind given alone is
    # still checked
    Entry("audit_report(no utility)", rp.audit_report,
          {"data": FRAME, "group": "z", "action": "a", "outcome": "y", "features": ["x"],
           "level": 0.9, "n_boot": 50, "min_cell": 1, "dp_epsilon": 1.0},
          {"data": "object", "group": "label", "action": "label", "outcome": "label",
           "features": "label", "utility": "object", "kind": "choice", "level": "real",
           "n_boot": "size", "min_cell": "size", "dp_epsilon": "real"},
          accepts={"data": {"frame"}}),
]}
ENTRIES.update(NO_UTILITY)
NO_UTILITY_CASES = [(name, arg, bad) for name, entry in NO_UTILITY.items()
                    for arg, kind in entry.kinds.items() for bad in KINDS[kind]]


@pytest.mark.parametrize("name", list(NO_UTILITY))
def test_valid_call_without_a_utility_is_finite(name):
    test_valid_call_is_finite(name)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("name", "arg", "bad"), NO_UTILITY_CASES,
                         ids=[f"{n}-{a}-{b}" for n, a, b in NO_UTILITY_CASES])
def test_malformed_argument_without_a_utility(name, arg, bad):
    test_malformed_argument(name, arg, bad)
