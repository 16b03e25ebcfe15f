"""The tabular and score families' strategies: one free row of the policy per cell of
the discretised features (tabular) or per bin of a classifier's cross-fitted score
(score) and group, solved as one linear program over the cells' world: their counts
plugged in, a Dirichlet posterior's draws (their mean or their worst case), or a
confidence set of the cells (its worst case, certified)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fairdecide._common.validation import as_bool, as_int
from fairdecide.criteria import Criterion
from fairdecide.data.logged import LoggedData
from fairdecide.estimators import _flatten as flatten
from fairdecide.estimators._inputs import Cells
from fairdecide.estimators._labels import with_labels
from fairdecide.estimators._rules import CellRule, ScoreRule
from fairdecide.estimators._scores import FoldMean, cross_fitted_scores, merit_order
from fairdecide.estimators._strategy import CERTIFIED_DELTA, FitStrategy, Training
from fairdecide.models.dirichlet import DirichletPosterior
from fairdecide.optimize.api import optimize_policy
from fairdecide.optimize.program.tradeoff import tolerances
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.uncertainty.confidence import ConfidenceSet
from fairdecide.worlds.world import TabularWorld

__all__ = ["CellFit", "ScoreFit", "certified_set", "plug_in", "posterior_mean",
           "posterior_worst"]

#: Bins of each raw feature when n_bins="auto" (their combinations are the cells)
TABULAR_BINS = 5
#: The score's bins when n_bins="auto" (its bins are the cells): one per
#: SCORE_ROWS_PER_BIN training rows, within SCORE_BINS.
SCORE_ROWS_PER_BIN = 150
SCORE_BINS = (20, 200)

#: A cells' world from the training rows' cells (``data``), the training job and the
#: criteria the program holds
Estimate = Callable[[LoggedData, Training, list[Criterion]], Any]


def plug_in(data: LoggedData, job: Training, criteria: list[Criterion]) -> TabularWorld:
    """The cells' weighted counts: P(x, z) and P(y | [a,] x, z) as frequencies."""
    return TabularWorld.from_data(data, job.problem, weights=job.sample_weight)


def posterior_mean(data: LoggedData, job: Training, criteria: list[Criterion]) -> Belief:
    """``n_scenarios`` exact draws of the cells' Dirichlet posterior (prior 0.5), their
    mean (the Bayesian decision)."""
    posterior = DirichletPosterior().fit(data, job.problem)
    return Belief.from_posterior(posterior, job.n_scenarios, job.seed)


def posterior_worst(data: LoggedData, job: Training, criteria: list[Criterion]) -> Belief:
    """The most probable 1 - CERTIFIED_DELTA of ``n_scenarios`` posterior draws, their
    worst case. Prior 1: with concentrations below one the densest draws are the
    extreme ones, not the central ones (Belief.confidence_set)."""
    posterior = DirichletPosterior(prior=1.0).fit(data, job.problem)
    return Belief.highest_density_draws(posterior, CERTIFIED_DELTA, job.n_scenarios,
                                        job.seed)


def certified_set(data: LoggedData, job: Training, criteria: list[Criterion]
                  ) -> ConfidenceSet:
    """The cells' ConfidenceSet at delta CERTIFIED_DELTA. A group-blind policy reads
    P(y | x) only: one interval per cell, from all its rows (``pooled``), unless a
    criterion reads each group's outcomes."""
    pooled = bool(job.est.group_blind) and all(
        c.capabilities(job.problem).outcome_free for c in criteria)
    return ConfidenceSet.from_data(data, job.problem, delta=CERTIFIED_DELTA, pooled=pooled)


@dataclass(frozen=True, kw_only=True)
class CellFit(FitStrategy):
    """The tabular family: cells of the features' quantile bins; ``estimate`` builds
    the cells' world, ``labelled`` adds the labelled training rows (in the cells a
    prediction puts them in) as one more scenario of a worst case, ``flattens`` returns
    the flattest of the optimal policies where :mod:`._flatten` applies."""

    family: ClassVar[str] = "tabular"
    #: cells of a score, cut midway between its values (Cells(ordered=True))
    ordered: ClassVar[bool] = False

    estimate: Estimate
    labelled: bool = False
    flattens: bool = False

    def auto_bins(self, n_rows: int) -> int:
        """Bins per feature when n_bins="auto"."""
        return TABULAR_BINS

    def features(self, job: Training) -> tuple[np.ndarray, FoldMean | None,
                                               np.ndarray | None]:
        """What the cells cut, the scorer that made it (None: the raw features) and the
        cut the training rows get at predict time (None: the same)."""
        return job.X, None, None

    def order(self, job: Training, n_cells: int) -> Criterion | None:
        """A criterion of the cells' order held exactly beside the user's (None)."""
        return None

    def rule(self, scorer: FoldMean | None, **fields: Any) -> CellRule:
        """The fitted rule (``scorer``: the one :meth:`features` made, None here)."""
        return CellRule(**fields)

    def fit(self, job: Training) -> CellRule:
        est, problem, z, weights = job.est, job.problem, job.z, job.sample_weight
        X, scorer, seen_as = self.features(job)
        n_bins = self.auto_bins(X.shape[0]) if est.n_bins == "auto" else est.n_bins
        cells = Cells(as_int(n_bins, "n_bins", minimum=2), ordered=self.ordered).fit(
            X if seen_as is None else np.vstack([X, seen_as]))
        x = cells.codes(X, warn=False)
        n_x = len(cells.labels_)
        criteria, trade = job.criteria, job.trade
        order = self.order(job, n_x)
        flat = (self.flattens and not est.group_blind
                and flatten.applies(problem, criteria, order))
        if order is not None:  # held exactly, beside the criteria's tolerance
            eps = tolerances(trade["epsilon"], len(criteria)) if criteria else ()
            trade = {"epsilon": (*eps, 0.0)}
            criteria = [*criteria, order]

        def logged(cells_of_rows: np.ndarray) -> LoggedData:
            return LoggedData(x=cells_of_rows, z=z, y=job.y, a=job.a, x_labels=range(n_x),
                              group_labels=range(job.n_groups),
                              outcome_labels=range(problem.n_outcomes),
                              action_labels=None if job.a is None
                              else range(problem.n_actions))

        data = logged(x)
        world = self.estimate(data, job, criteria)
        x_seen = x if seen_as is None else cells.codes(seen_as, warn=False)
        if self.labelled:  # the rows in the cells predict puts them in (with_labels)
            world = with_labels(world, TabularWorld.from_data(
                logged(x_seen), problem, weights=weights), self.uncertainty)
        result = optimize_policy(problem, world, criteria, group_blind=bool(est.group_blind),
                                 max_iter=est.max_iter, **trade)
        if flat:  # the face's flattest policy (estimators/_flatten.py)
            result = flatten.flatten(result, world, problem, criteria, trade["epsilon"],
                                     up=order.actions[-1])
        rows_x, rows_z, rows_w = ((x, z, weights) if seen_as is None else (
            np.r_[x, x_seen], np.r_[z, z], None if weights is None
            else np.r_[weights, weights]))
        counts = np.zeros((n_x, job.n_groups))
        np.add.at(counts, (rows_x, rows_z), 1.0 if rows_w is None else rows_w)
        p_x_given_z = counts / counts.sum(axis=0, keepdims=True)
        fallback = np.einsum("xz,xza->za", p_x_given_z, result.policy.table)
        # an intervention's deviation_ reads the plug-in world of the training cells
        plug = plug_in(data, job, criteria) if job.intervention else None
        return self.rule(scorer, result=result, criteria=job.criteria, world=plug,
                         cells=cells, seen=counts > 0, fallback=fallback)


@dataclass(frozen=True, kw_only=True)
class ScoreFit(CellFit):
    """The score family: the cells are bins of a classifier's cross-fitted score of the
    outcome (prediction problems only); with ``monotone``, each group's rule is held in
    the score's order (:func:`merit_order`)."""

    family: ClassVar[str] = "score"
    no_interventions: ClassVar[str | None] = (
        "decides from a classifier's score of the outcome")
    ordered: ClassVar[bool] = True

    def auto_bins(self, n_rows: int) -> int:
        return int(np.clip(n_rows // SCORE_ROWS_PER_BIN, *SCORE_BINS))

    def features(self, job: Training) -> tuple[np.ndarray, FoldMean, np.ndarray]:
        scorer, scores, seen_as = cross_fitted_scores(
            job.est, job.X, job.y, job.problem.n_outcomes, job.seed, job.sample_weight)
        return scores, scorer, seen_as

    def order(self, job: Training, n_cells: int) -> Criterion | None:
        # with a tolerance or without criteria (not under lam or slack)
        if as_bool(job.est.monotone, "monotone") and (
                "epsilon" in job.trade or not job.criteria):
            return merit_order(job.problem, n_cells)
        return None

    def rule(self, scorer: FoldMean | None, **fields: Any) -> ScoreRule:
        return ScoreRule(scorer=scorer, **fields)
