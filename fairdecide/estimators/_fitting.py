"""The part both estimators share: parameters to criteria and trade-off, the world (or
belief) from the training rows, the optimisation, and the fitted policy's rows for new
individuals."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.preprocessing import StandardScaler

from fairdecide._common.validation import as_bool, as_int, as_real, check_random_state
from fairdecide.criteria import Criterion
from fairdecide.criteria.base import ByCriterion, as_criteria
from fairdecide.data.logged import LoggedData
from fairdecide.estimators import _flatten as flatten
from fairdecide.estimators._inputs import Cells, family_of
from fairdecide.estimators._labels import label_world, reads_outcome, with_labels
from fairdecide.exceptions import FairdecideError, NotCertifiedError
from fairdecide.optimize.program.tradeoff import tolerances
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.uncertainty.confidence import ConfidenceSet
from fairdecide.worlds.world import TabularWorld, World

__all__ = ["DEFAULT_EPSILON", "Fitted", "fit_policy", "tradeoff"]

DEFAULT_EPSILON = 0.05
#: Bins of each feature when n_bins="auto": few for raw features (their combinations are
#: the cells); for the one score of the "score" family (its cells are the bins) one bin
#: per SCORE_ROWS_PER_BIN training rows, within SCORE_BINS.
AUTO_BINS = {"tabular": 5, "softmax": 5}
SCORE_ROWS_PER_BIN = 150
SCORE_BINS = (20, 200)
#: Folds of the score family's cross-fitted scores when n_folds is not set: three fits
#: of the scorer, nearly all of the family's fit time (new rows get their mean).
SCORE_FOLDS = 3
UNCERTAINTY = ("plug-in", "mean", "worst", "certified")
#: The confidence set's delta under uncertainty="certified" (as the maximin's under "worst")
CERTIFIED_DELTA = 0.1
#: How far a bound over the band may exceed epsilon (the verification tolerance)
CERTIFIED_TOL = 1e-6


def band_guarantee(model: Any, policy: Any, problem: DecisionProblem, criteria: list,
                   refits: Any, weights: Any, trade: dict) -> Any:
    """The softmax family's certificate: its policy on the training individuals,
    certified over the band of ``refits``, the refits of the outcome model its maximin
    was fitted on (:meth:`ConfidenceSet.from_refits`; approximate). The maximin held
    epsilon in the refits, not over their band: a bound over the band above epsilon
    refuses the fit (NotCertifiedError), where the tabular family's program holds it."""
    from fairdecide.optimize.certify import certify_policy
    from fairdecide.policies.tabular import TabularPolicy

    cs = ConfidenceSet.from_refits(model, CERTIFIED_DELTA, weights=weights, refits=refits)
    rows = policy.proba(model.world(None, None, weights).units())  # (n, n_a)
    table = np.repeat(rows[:, None, :], cs.center.n_z, axis=1)  # cell i is individual i
    guarantee = certify_policy(TabularPolicy(table), cs, problem, criteria,
                               epsilon=trade.get("epsilon"))
    if "epsilon" in trade:
        eps = np.broadcast_to(np.asarray(trade["epsilon"], dtype=float), len(criteria))
        over = {n: (b, e) for (n, b), e in zip(guarantee.deviations.items(), eps,
                                                strict=True)
                if b is None or b > e + CERTIFIED_TOL}
        if over:
            what = "; ".join(f"{n}: not bounded over the band" if b is None else
                             f"{n}: bounded by {b:.4g} > epsilon {e:g}"
                             for n, (b, e) in over.items())
            raise NotCertifiedError(
                f"no policy certified: the softmax maximin held epsilon in its "
                f"{len(refits)} refits, but not over their band ({what}). Raise epsilon, "
                "give more rows, or use policy='tabular', whose program holds epsilon "
                "over the whole set", ByCriterion({n: b for n, (b, _) in over.items()}),
                max((b for b, _ in over.values() if b is not None), default=np.inf))
    return guarantee


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


@dataclass
class Fitted:
    """A fitted policy and how to apply it to new rows."""

    result: Any
    family: str
    scaler: StandardScaler | None = None
    cells: Cells | None = None
    seen: np.ndarray | None = None       # (n_cells, n_groups): cell met in that group
    fallback: np.ndarray | None = None   # (n_groups, n_actions): P(a | z) of the policy
    scorer: Any = None                   # the score family's scorer (FoldMean)
    criteria: list[Criterion] = field(default_factory=list)  # the user's
    world: World | None = None           # interventions: the plug-in training world

    @property
    def n_iter(self) -> int:
        """Solver iterations reported in the result's statistics (at least 1)."""
        stats = self.result.stats
        return max(1, int(stats.get("iterations") or stats.get("solver_iterations") or 0))

    @property
    def reads_group(self) -> bool:
        policy = self.result.policy
        if self.family == "softmax":
            return bool(policy.include_z)
        return not policy.is_group_blind

    def action_proba(self, X: np.ndarray, z: np.ndarray | None, warn: bool = True
                     ) -> np.ndarray:
        """pi(. | x, z) of new rows (z codes, or None when the policy ignores them);
        ``warn``: about rows in cells never seen in training (not for the estimator's own
        rows: its training rows, its held-out safety rows)."""
        policy = self.result.policy
        if self.family == "softmax":
            return policy.action_proba(self.scaler.transform(X), z)
        if self.scorer is not None:
            X = score_features(self.scorer(X))
        cells = self.cells.codes(X, warn=warn)
        zc = np.zeros(len(X), dtype=np.intp) if z is None else z
        if self.scorer is not None:  # a bin unseen in a group: its nearest seen bin's rule
            cells[cells >= 0] = _nearest_seen(self.seen)[cells[cells >= 0], zc[cells >= 0]]
        known = cells >= 0
        known[known] = self.seen[cells[known], zc[known]]
        out = self.fallback[zc].copy()
        out[known] = policy.table[cells[known], zc[known]]
        return out


def _check_settings(est: Any, prediction: bool) -> tuple[str, str, int]:
    family = family_of(est, prediction)
    if est.uncertainty not in UNCERTAINTY:
        raise FairdecideError(
            f"uncertainty must be one of {UNCERTAINTY} (the plug-in model, the mean or "
            "worst case over a belief's scenarios, or the worst case over a confidence "
            f"set), got {est.uncertainty!r}")
    if est.uncertainty == "certified" and family == "score":
        raise FairdecideError(
            "uncertainty='certified' takes policy='tabular' (the worst case over a "
            "ConfidenceSet of the cells) or 'softmax' (the maximin over the outcome "
            "model's refits, certified over their band), got the 'score' family")
    n_scen = as_int(est.n_scenarios, "n_scenarios", minimum=2)
    if est.uncertainty == "certified" and family == "softmax" and (
            n_scen * CERTIFIED_DELTA < 1):
        raise FairdecideError(
            f"n_scenarios = {n_scen} refits cannot carry a band at delta "
            f"{CERTIFIED_DELTA}: uncertainty='certified' with policy='softmax' needs "
            f"n_scenarios >= {int(np.ceil(1 / CERTIFIED_DELTA))}")
    return family, est.uncertainty, n_scen


def fit_policy(est: Any, problem: DecisionProblem, X: np.ndarray, z: np.ndarray,
               n_groups: int, y: np.ndarray, a: np.ndarray | None,
               sample_weight: np.ndarray | None, outcome_weight: np.ndarray | None = None,
               action_encoding: str = "separate") -> Fitted:
    """Build the world (or belief) of the training rows as the estimator's parameters
    say, optimise, and return the fitted policy. ``z``, ``y`` and ``a`` are codes;
    ``sample_weight`` weighs the rows in the population and in the outcome model,
    ``outcome_weight`` (if given instead) only in the softmax family's outcome model (the
    tabular cell model is saturated and needs none)."""
    from fairdecide.optimize.api import optimize_policy

    family, uncertainty, n_scen = _check_settings(est, a is None)
    criteria = user = as_criteria(est.criteria)
    trade = tradeoff(est, criteria)
    rng = check_random_state(est.random_state)
    seed = rng.randint(2**31 - 1)
    if family == "softmax":
        from fairdecide.models.individuals import IndividualOutcomeModel
        from fairdecide.policies.softmax import LinearSoftmaxPolicy

        scaler = StandardScaler().fit(X)
        Xs = scaler.transform(X)

        def fitted_model() -> IndividualOutcomeModel:
            return IndividualOutcomeModel(est.outcome_model, action_encoding,
                                          n_folds=est.n_folds).fit(
                Xs, z, y, problem, a, random_state=seed,
                sample_weight=sample_weight if outcome_weight is None else outcome_weight)

        plug, model, refits = None, None, None
        # certified: the maximin over the refits, then certified over their band
        mode = "worst" if uncertainty == "certified" else uncertainty
        if a is not None:  # an intervention: the outcome model per action
            model = fitted_model()
            plug = model.world(None, None, sample_weight)
            if mode != "plug-in":
                refits = Belief.from_refits(model, n_scen, seed, mode, sample_weight)
            world = plug if refits is None else refits
        elif mode == "plug-in" and any(map(reads_outcome, user)):
            # a criterion given y: computed on the labelled rows (_labels.py)
            world = label_world(Xs, z, y, n_groups, problem.n_outcomes, sample_weight)
        elif mode == "plug-in":  # independence reads no label: the model's world
            world = fitted_model().world(None, None, sample_weight)
        else:
            model = fitted_model()
            refits = Belief.from_refits(model, n_scen, seed, mode, sample_weight)
            world = with_labels(refits, label_world(Xs, z, y, n_groups, problem.n_outcomes,
                                                    sample_weight), mode)
        pol = LinearSoftmaxPolicy(include_z=not est.group_blind, l2=as_real(
            est.l2, "l2", low=0.0))
        result = optimize_policy(problem, world, criteria, policy=pol,
                                 n_restarts=as_int(est.n_restarts, "n_restarts", minimum=1),
                                 random_state=seed, max_iter=est.max_iter, **trade)
        if uncertainty == "certified":
            result = dataclasses.replace(result, guarantee=band_guarantee(
                model, result.policy, problem, user, refits.worlds, sample_weight, trade))
        return Fitted(result, family, scaler=scaler, criteria=user, world=plug)
    if sample_weight is not None and uncertainty != "plug-in":
        raise FairdecideError(
            f"sample_weight with policy={family!r} and uncertainty={uncertainty!r} is not "
            "supported: the Dirichlet posterior counts rows; use uncertainty='plug-in' "
            "(weighted counts), policy='softmax', or repeat rows")
    scorer, seen_as = None, None
    if family == "score":
        if a is not None:
            raise FairdecideError(
                "policy='score' decides from a classifier's score of the outcome: it is for "
                "prediction problems (FairPolicyClassifier); use 'softmax' or 'tabular'")
        scorer, X, seen_as = _cross_fitted_scores(est, X, y, problem.n_outcomes, seed,
                                                  sample_weight)
    n_bins = auto_bins(family, X.shape[0]) if est.n_bins == "auto" else est.n_bins
    cells = Cells(as_int(n_bins, "n_bins", minimum=2), ordered=family == "score").fit(
        X if seen_as is None else np.vstack([X, seen_as]))
    x = cells.codes(X, warn=False)
    n_x = len(cells.labels_)
    # the score order, with a tolerance or without criteria (not under lam or slack)
    order = (_merit_order(problem, n_x) if family == "score" and as_bool(
        est.monotone, "monotone") and ("epsilon" in trade or not criteria) else None)
    flat = (uncertainty == "plug-in" and not est.group_blind
            and flatten.applies(problem, criteria, order))
    if order is not None:  # held exactly, beside the criteria's tolerance
        eps = tolerances(trade["epsilon"], len(criteria)) if criteria else ()
        trade = {"epsilon": (*eps, 0.0)}
        criteria = [*criteria, order]

    def logged(cells_of_rows: np.ndarray) -> LoggedData:
        return LoggedData(x=cells_of_rows, z=z, y=y, a=a, x_labels=range(n_x),
                          group_labels=range(n_groups),
                          outcome_labels=range(problem.n_outcomes),
                          action_labels=None if a is None else range(problem.n_actions))

    data = logged(x)
    plug = (TabularWorld.from_data(data, problem, weights=sample_weight)
            if uncertainty == "plug-in" or a is not None else None)
    if uncertainty == "plug-in":
        world = plug
    elif uncertainty == "certified":  # result_.guarantee says what holds at 1 - delta
        # a group-blind policy reads P(y | x) only: one interval per cell, from all its
        # rows (unless a criterion reads each group's outcomes)
        pooled = bool(est.group_blind) and all(
            c.capabilities(problem).outcome_free for c in criteria)
        world = ConfidenceSet.from_data(data, problem, delta=CERTIFIED_DELTA, pooled=pooled)
    else:
        world = _tabular_belief(data, problem, n_scen, seed, uncertainty)
    if seen_as is not None or uncertainty == "worst":
        # the rows in the cells predict puts them in: one more scenario (with_labels)
        x_seen = x if seen_as is None else cells.codes(seen_as, warn=False)
        world = with_labels(world, TabularWorld.from_data(
            logged(x_seen), problem, weights=sample_weight), uncertainty)
    rows_x, rows_z, rows_w = ((x, z, sample_weight) if seen_as is None else (
        np.r_[x, x_seen], np.r_[z, z], None if sample_weight is None
        else np.r_[sample_weight, sample_weight]))
    result = optimize_policy(problem, world, criteria, group_blind=bool(est.group_blind),
                             max_iter=est.max_iter, **trade)
    if flat:  # the face's flattest policy (estimators/_flatten.py)
        result = flatten.flatten(result, world, problem, criteria, trade["epsilon"],
                                 up=order.actions[-1])
    counts = np.zeros((n_x, n_groups))
    np.add.at(counts, (rows_x, rows_z), 1.0 if rows_w is None else rows_w)
    p_x_given_z = counts / counts.sum(axis=0, keepdims=True)
    fallback = np.einsum("xz,xza->za", p_x_given_z, result.policy.table)
    return Fitted(result, family, cells=cells, seen=counts > 0, fallback=fallback,
                  scorer=scorer, criteria=user, world=None if a is None else plug)


def _nearest_seen(seen: np.ndarray) -> np.ndarray:
    """For each (bin, group), the nearest bin (in score order; the lower on a tie) seen
    with that group in training: score bins are ordered, so a bin a small group never
    reached takes its neighbour's rule, not the group's average (which would break the
    rule's order in the score)."""
    n_bins, n_groups = seen.shape
    out = np.tile(np.arange(n_bins)[:, None], (1, n_groups))
    for g in range(n_groups):
        have = np.flatnonzero(seen[:, g])
        if len(have):
            pos = np.searchsorted(have, np.arange(n_bins)).clip(1, len(have)) - 1
            up = np.minimum(pos + 1, len(have) - 1)
            lower, upper = have[pos], have[up]
            bins = np.arange(n_bins)
            out[:, g] = np.where(np.abs(upper - bins) < np.abs(bins - lower), upper, lower)
    return out


def auto_bins(family: str, n_rows: int) -> int:
    """Bins per feature when n_bins="auto" (see AUTO_BINS, SCORE_ROWS_PER_BIN)."""
    if family != "score":
        return AUTO_BINS[family]
    return int(np.clip(n_rows // SCORE_ROWS_PER_BIN, *SCORE_BINS))


def score_features(proba: np.ndarray) -> np.ndarray:
    """What the score family bins: P(y = 1 | x) with two classes; with more, the most
    probable class and its probability."""
    proba = np.asarray(proba, dtype=float)
    if proba.shape[1] == 2:
        return proba[:, 1:]
    return np.column_stack([np.argmax(proba, axis=1), proba.max(axis=1)])


def _cross_fitted_scores(est: Any, X: np.ndarray, y: np.ndarray, n_classes: int,
                         seed: int, sample_weight: np.ndarray | None = None
                         ) -> tuple[Any, np.ndarray, np.ndarray]:
    """Each training row's score from a fit of the scorer (``outcome_model``, default
    logistic regression on standardised features) that did not see it (``n_folds``
    folds, default SCORE_FOLDS): the bins' outcome frequencies are then honest, as they
    will be for new rows. New rows are scored by the mean of the fold fits' probabilities
    (:class:`FoldMean`), so no fit on every row is needed (a fourth fit of the scorer was
    a quarter of the family's fit time). Returns the scorer, the out-of-fold scores and
    the training rows' scores by the scorer (the bins a prediction puts them in)."""
    from scipy.sparse import issparse
    from sklearn.model_selection import KFold, StratifiedKFold
    from sklearn.pipeline import make_pipeline

    from fairdecide.models.outcome import cross_fit, default_classifier

    sparse = issparse(X)  # scaled without centring, which would densify it
    model = (make_pipeline(StandardScaler(with_mean=not sparse), default_classifier())
             if est.outcome_model is None else est.outcome_model)
    folds = SCORE_FOLDS if est.n_folds is None else as_int(est.n_folds, "n_folds", minimum=2)
    rare = np.bincount(y, minlength=n_classes).min() < folds  # a class too rare to stratify
    split = (KFold if rare else StratifiedKFold)(folds, shuffle=True, random_state=seed)
    proba, fits = cross_fit(model, X, y, n_classes, split.split(X, y),
                            sample_weight=sample_weight)
    scorer = FoldMean(fits)
    return scorer, score_features(proba), score_features(scorer(X))


@dataclass
class FoldMean:
    """The mean of the fold fits' class probabilities: the score of a new row."""

    fits: list[Any]

    def __call__(self, X: Any) -> np.ndarray:
        return np.mean([fit(X) for fit in self.fits], axis=0)


def _merit_order(problem: DecisionProblem, n_bins: int) -> Criterion | None:
    """The score family's monotonicity: with two classes, the actions are ordered by
    how much their utility gains from the positive outcome, s(a) = U(a, 1) - U(a, 0)
    (the slope of a's expected utility in P(y = 1)), and each group's rule may not
    move a higher bin towards actions of lower slope (MeritOrder over the bins). The
    unconstrained optimum has that order, so it only keeps the program from fitting the
    noise of the bins' outcome rates. None when two actions have the same slope (no
    order), or with more classes (their bins are not ordered by one score)."""
    from fairdecide.criteria import MeritOrder

    u = problem.utility
    if u.shape[1] != 2:
        return None
    slope = u[:, 1] - u[:, 0]
    if len(np.unique(slope)) < len(slope):
        return None
    order = tuple(int(a) for a in np.argsort(slope))
    return MeritOrder(merit=np.arange(n_bins, dtype=float), actions=order, name="score order")


def _tabular_belief(data: LoggedData, problem: DecisionProblem, n: int, seed: int,
                    aggregate: str) -> Belief:
    from fairdecide.models.dirichlet import DirichletPosterior

    if aggregate == "mean":
        return Belief.from_posterior(DirichletPosterior().fit(data, problem), n, seed)
    # prior 1: with concentrations below one the densest draws are the extreme ones, not
    # the central ones (Belief.confidence_set)
    posterior = DirichletPosterior(prior=1.0).fit(data, problem)
    return Belief.confidence_set(posterior, 0.1, n, seed)
