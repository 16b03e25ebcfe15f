"""The part both estimators share: their parameters to criteria and trade-off, the one
strategy that fits (chosen once from the policy family and the ``uncertainty``), and the
fitted rule it returns.

Each (family, uncertainty) is one strategy (``_strategy.py``), declared below in
:data:`STRATEGIES`:

=============  =======================  =========================  ================  ===========
uncertainty    softmax                  tabular                    score             guarantee
=============  =======================  =========================  ================  ===========
"plug-in"      SoftmaxPlugIn            CellFit(plug_in)           ScoreFit(same)    none
"mean"         SoftmaxRefits("mean")    CellFit(posterior_mean)    ScoreFit(same)    none
"worst"        SoftmaxRefits("worst")   CellFit(posterior_worst)   ScoreFit(same)    none
"certified"    (deprecated alias)       CellFit(certified_set)     -                 exact
"refit-band"   SoftmaxBand              -                          -                 approximate
=============  =======================  =========================  ================  ===========

"certified" holds every tolerance over a confidence set inside the program (exact);
"refit-band" fits the maximin over the refits and certifies it afterwards over their
band (approximate), so the two have two names. "certified" with the softmax family was
the band's name until this release: it still works, with a DeprecationWarning.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from fairdecide._common.validation import as_int, check_random_state
from fairdecide.criteria import Criterion
from fairdecide.criteria.base import as_criteria
from fairdecide.estimators._cells import (
    CellFit,
    ScoreFit,
    certified_set,
    plug_in,
    posterior_mean,
    posterior_worst,
)
from fairdecide.estimators._inputs import family_of
from fairdecide.estimators._rules import Fitted
from fairdecide.estimators._softmax import SoftmaxBand, SoftmaxPlugIn, SoftmaxRefits
from fairdecide.estimators._strategy import FitStrategy, Training
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize.program.tradeoff import tolerances
from fairdecide.problem import DecisionProblem

__all__ = ["DEFAULT_EPSILON", "STRATEGIES", "UNCERTAINTY", "fit_policy", "strategy_for",
           "tradeoff"]

DEFAULT_EPSILON = 0.05

_NOTHING = "nothing: result_.guarantee is None"
_POSTERIOR = "the Dirichlet posterior counts rows"


def _one_each(*strategies: FitStrategy) -> dict[tuple[str, str], FitStrategy]:
    """The strategies by (family, uncertainty); two for one pair is a mistake here."""
    out: dict[tuple[str, str], FitStrategy] = {}
    for s in strategies:
        if (s.family, s.uncertainty) in out:
            raise RuntimeError(f"two strategies for {(s.family, s.uncertainty)}")
        out[s.family, s.uncertainty] = s
    return out


#: Every strategy, one per (family, uncertainty)
STRATEGIES: dict[tuple[str, str], FitStrategy] = _one_each(
    SoftmaxPlugIn(
        uncertainty="plug-in", world_kind="SampleWorld",
        summary="the outcome model plugged in as if known",
        certifies=f"{_NOTHING}; epsilon holds in the outcome model's world of the "
                  "training rows (on their labels under a criterion given y)"),
    SoftmaxRefits(
        uncertainty="mean", aggregate="mean", world_kind="Belief",
        summary="the mean over bootstrap refits of the outcome model",
        certifies=f"{_NOTHING}; epsilon bounds the refits' mean deviation"),
    SoftmaxRefits(
        uncertainty="worst", aggregate="worst", labelled=True, world_kind="Belief",
        summary="the worst case over bootstrap refits of the outcome model",
        certifies=f"{_NOTHING}; epsilon holds in every refit and on the labelled rows"),
    SoftmaxBand(
        uncertainty="refit-band", aggregate="worst", labelled=True, world_kind="Belief",
        guarantee="approximate",
        summary="the maximin over bootstrap refits of the outcome model, certified over "
                "their band",
        certifies="with probability about 0.9 (a bootstrap approximation), over the band "
                  "of the refits for the training people: the value at least "
                  "result_.guarantee.value and each deviation at most its bound, every "
                  "bound at most epsilon (or the fit is refused)"),
    CellFit(
        uncertainty="plug-in", estimate=plug_in, world_kind="TabularWorld",
        summary="the cells' frequencies plugged in as if known",
        certifies=f"{_NOTHING}; epsilon holds in the cells' estimated world"),
    CellFit(
        uncertainty="mean", estimate=posterior_mean, world_kind="Belief",
        no_weights=_POSTERIOR, summary="the mean over Dirichlet posterior draws of the cells",
        certifies=f"{_NOTHING}; epsilon bounds the draws' mean deviation"),
    CellFit(
        uncertainty="worst", estimate=posterior_worst, labelled=True, world_kind="Belief",
        no_weights=_POSTERIOR,
        summary="the worst case over the most probable 90% of Dirichlet posterior draws",
        certifies=f"{_NOTHING}; epsilon holds in every kept draw and on the labelled rows"),
    CellFit(
        uncertainty="certified", estimate=certified_set, world_kind="ConfidenceSet",
        guarantee="exact", no_weights="the confidence set's intervals count rows",
        summary="the worst case over a ConfidenceSet of the cells",
        certifies="with probability at least 0.9, over the ConfidenceSet of the cells: the "
                  "value at least result_.guarantee.value and each deviation at most its "
                  "bound, every bound at most epsilon (held inside the program)"),
    ScoreFit(
        uncertainty="plug-in", estimate=plug_in, labelled=True, flattens=True,
        world_kind="Belief", summary="the bins' frequencies plugged in as if known",
        certifies=f"{_NOTHING}; epsilon holds in the out-of-fold scores' bins and on the "
                  "labelled rows"),
    ScoreFit(
        uncertainty="mean", estimate=posterior_mean, world_kind="Belief",
        no_weights=_POSTERIOR, summary="the mean over Dirichlet posterior draws of the bins",
        certifies=f"{_NOTHING}; epsilon bounds the draws' mean deviation"),
    ScoreFit(
        uncertainty="worst", estimate=posterior_worst, labelled=True, world_kind="Belief",
        no_weights=_POSTERIOR,
        summary="the worst case over the most probable 90% of Dirichlet posterior draws",
        certifies=f"{_NOTHING}; epsilon holds in every kept draw and on the labelled rows"),
)

#: Every uncertainty= value some family takes (tests/test_strategies.py checks the two agree)
UNCERTAINTY = ("plug-in", "mean", "worst", "certified", "refit-band")

#: Old (family, uncertainty) names, kept one release with a DeprecationWarning: the new
#: value, and why the name changed
DEPRECATED_UNCERTAINTY: dict[tuple[str, str], tuple[str, str]] = {
    ("softmax", "certified"): (
        "refit-band",
        "the same fit (the maximin over the outcome model's refits, certified "
        "approximately over their bootstrap band); 'certified' is the tabular family's "
        "worst case over a ConfidenceSet, whose bounds hold exactly"),
}


def strategy_for(family: str, uncertainty: Any, intervention: bool) -> FitStrategy:
    """The one strategy of a policy family and an ``uncertainty`` value, for a
    prediction problem or an ``intervention``; an error naming the valid values when
    there is none."""
    if not isinstance(uncertainty, str) or uncertainty not in UNCERTAINTY:
        raise FairdecideError(
            f"uncertainty must be one of {UNCERTAINTY} (the plug-in model, the mean or "
            "worst case over a belief's scenarios, the worst case over a confidence set "
            "of the cells, or the maximin over the outcome model's refits certified over "
            f"their band), got {uncertainty!r}")
    if (family, uncertainty) in DEPRECATED_UNCERTAINTY:
        new, why = DEPRECATED_UNCERTAINTY[family, uncertainty]
        warnings.warn(
            f"uncertainty={uncertainty!r} with policy={family!r} is deprecated and will be "
            f"removed in the next release: use uncertainty={new!r}, {why}",
            DeprecationWarning, stacklevel=4)
        uncertainty = new
    strategy = STRATEGIES.get((family, uncertainty))
    if strategy is None:
        takes = [u for f, u in STRATEGIES if f == family]
        elsewhere = " and ".join(f"policy={s.family!r} ({s.summary})"
                                 for s in STRATEGIES.values() if s.uncertainty == uncertainty)
        certify = " or ".join(f"policy={s.family!r} with uncertainty={s.uncertainty!r}"
                              for s in STRATEGIES.values() if s.guarantee is not None)
        raise FairdecideError(
            f"uncertainty={uncertainty!r} is not a treatment of the {family!r} family, which "
            f"takes {', '.join(map(repr, takes))}; {uncertainty!r} is for {elsewhere}. "
            f"A policy with a guarantee: {certify}")
    if intervention and strategy.no_interventions is not None:
        raise FairdecideError(
            f"policy={family!r} {strategy.no_interventions}: it is for prediction problems "
            "(FairPolicyClassifier); use 'softmax' or 'tabular'")
    return strategy


def tradeoff(estimator: Any, criteria: list[Criterion]) -> dict[str, Any]:
    """The one trade-off set among lam, epsilon and utility_slack. ``epsilon="auto"``
    (the estimators' default) is DEFAULT_EPSILON unless lam or utility_slack is set;
    without criteria there is no trade-off."""
    eps = estimator.epsilon
    others = {k: getattr(estimator, k) for k in ("lam", "utility_slack")
              if getattr(estimator, k) is not None}
    if isinstance(eps, str) and eps == "auto":
        eps = None if others or not criteria else DEFAULT_EPSILON
    elif eps is not None:  # checked as the user wrote it, before any criterion is added
        tolerances(eps, len(criteria) or None, also=(
            f"; or 'auto' ({DEFAULT_EPSILON} unless lam or utility_slack is set), or None"))
    given = others if eps is None else {"epsilon": eps, **others}
    if len(given) > 1:
        raise FairdecideError(
            f"set one of lam, epsilon and utility_slack, got {sorted(given)}; set the "
            "others to None")
    if criteria and not given:
        raise FairdecideError(
            "no trade-off is set: give epsilon (or leave it 'auto', 0.05), lam or "
            "utility_slack, or criteria=None for no fairness criterion")
    return given if criteria else {}


def fit_policy(est: Any, problem: DecisionProblem, X: np.ndarray, z: np.ndarray,
               n_groups: int, y: np.ndarray, a: np.ndarray | None,
               sample_weight: np.ndarray | None, outcome_weight: np.ndarray | None = None,
               action_encoding: str = "separate") -> Fitted:
    """Fit the estimator's policy by its one strategy (:func:`strategy_for`) and return
    the fitted rule. ``z``, ``y`` and ``a`` are codes (``a`` None in a prediction
    problem); ``sample_weight`` weighs the rows in the population and in the outcome
    model, ``outcome_weight`` (if given instead) only in the softmax family's outcome
    model (the tabular cell model is saturated and needs none)."""
    strategy = strategy_for(family_of(est, a is None), est.uncertainty, a is not None)
    n_scenarios = as_int(est.n_scenarios, "n_scenarios", minimum=2)
    strategy.check_scenarios(n_scenarios)
    criteria = as_criteria(est.criteria)
    trade = tradeoff(est, criteria)
    if sample_weight is not None and strategy.no_weights is not None:
        raise FairdecideError(
            f"sample_weight with policy={strategy.family!r} and "
            f"uncertainty={strategy.uncertainty!r} is not supported: "
            f"{strategy.no_weights}; use uncertainty='plug-in' (weighted counts), "
            "policy='softmax', or repeat rows")
    seed = check_random_state(est.random_state).randint(2**31 - 1)
    return strategy.fit(Training(
        est, problem, X, z, n_groups, y, a, sample_weight, outcome_weight, action_encoding,
        criteria, trade, seed, n_scenarios))
