"""The softmax family's strategies: pi(a | x, z) = softmax(W phi(x, z)) on standardised
features, optimised by the gradient route in the outcome model's world of the training
rows (or the world of their labels), in a belief of the model's bootstrap refits, or in
those refits and then certified over their band."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
from sklearn.preprocessing import StandardScaler

from fairdecide._common.validation import as_int, as_real
from fairdecide.criteria.base import ByCriterion
from fairdecide.estimators._labels import label_world, reads_outcome, with_labels
from fairdecide.estimators._rules import SoftmaxRule
from fairdecide.estimators._strategy import CERTIFIED_DELTA, FitStrategy, Training
from fairdecide.exceptions import FairdecideError, NotCertifiedError
from fairdecide.models.individuals import IndividualOutcomeModel
from fairdecide.optimize.api import optimize_policy
from fairdecide.optimize.certify import certify_policy
from fairdecide.optimize.guarantee import Guarantee
from fairdecide.optimize.result import OptimizeResult
from fairdecide.policies.softmax import LinearSoftmaxPolicy
from fairdecide.policies.tabular import TabularPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.uncertainty.confidence import ConfidenceSet

__all__ = ["SoftmaxBand", "SoftmaxPlugIn", "SoftmaxRefits", "band_guarantee"]

#: How far a bound over the band may exceed epsilon (the verification tolerance)
CERTIFIED_TOL = 1e-6


class Estimated(NamedTuple):
    """What the policy is optimised in (``world``), the fitted outcome model and its
    refits behind it (None where not fitted), and the plug-in training world of an
    intervention (``world_deviations`` reads it; None in a prediction problem)."""

    world: Any
    model: IndividualOutcomeModel | None = None
    refits: Belief | None = None
    plug: Any = None


def outcome_model(job: Training, Xs: np.ndarray) -> IndividualOutcomeModel:
    """``outcome_model`` fitted on the standardised features (one per action in an
    intervention), weighted by ``outcome_weight`` if given, else ``sample_weight``."""
    est = job.est
    weight = job.sample_weight if job.outcome_weight is None else job.outcome_weight
    return IndividualOutcomeModel(est.outcome_model, job.action_encoding,
                                  n_folds=est.n_folds).fit(
        Xs, job.z, job.y, job.problem, job.a, random_state=job.seed, sample_weight=weight)


@dataclass(frozen=True, kw_only=True)
class SoftmaxFit(FitStrategy):
    """The family's one fit; a strategy says what it is optimised in (:meth:`estimate`)
    and what it certifies afterwards (:meth:`certify`)."""

    family: ClassVar[str] = "softmax"

    def estimate(self, job: Training, Xs: np.ndarray) -> Estimated:
        """The world (or belief) the policy is optimised in."""
        raise NotImplementedError

    def certify(self, job: Training, result: OptimizeResult, found: Estimated
                ) -> OptimizeResult:
        """The result as optimised: nothing is certified beyond it."""
        return result

    def fit(self, job: Training) -> SoftmaxRule:
        est = job.est
        scaler = StandardScaler().fit(job.X)
        found = self.estimate(job, scaler.transform(job.X))
        pol = LinearSoftmaxPolicy(include_z=not est.group_blind, l2=as_real(
            est.l2, "l2", low=0.0))
        result = optimize_policy(job.problem, found.world, job.criteria, policy=pol,
                                 n_restarts=as_int(est.n_restarts, "n_restarts", minimum=1),
                                 random_state=job.seed, max_iter=est.max_iter, **job.trade)
        return SoftmaxRule(self.certify(job, result, found), criteria=job.criteria,
                           world=found.plug, scaler=scaler)


@dataclass(frozen=True, kw_only=True)
class SoftmaxPlugIn(SoftmaxFit):
    """The outcome model plugged in as if known; in a prediction problem under a
    criterion given y, the training rows with their labels instead (``_labels.py``)."""

    def estimate(self, job: Training, Xs: np.ndarray) -> Estimated:
        if job.intervention:  # the outcome model per action
            model = outcome_model(job, Xs)
            plug = model.world(None, None, job.sample_weight)
            return Estimated(plug, model, plug=plug)
        if any(map(reads_outcome, job.criteria)):  # computed on the labelled rows
            return Estimated(label_world(Xs, job.z, job.y, job.n_groups,
                                         job.problem.n_outcomes, job.sample_weight))
        # independence reads no label: the model's world
        return Estimated(outcome_model(job, Xs).world(None, None, job.sample_weight))


@dataclass(frozen=True, kw_only=True)
class SoftmaxRefits(SoftmaxFit):
    """A belief of ``n_scenarios`` bootstrap refits of the outcome model, aggregated by
    ``aggregate`` ("mean" or "worst"); with ``labelled`` the labelled training rows
    are one more scenario of a prediction problem's worst case."""

    aggregate: str
    labelled: bool = False

    def estimate(self, job: Training, Xs: np.ndarray) -> Estimated:
        model = outcome_model(job, Xs)
        refits = Belief.from_refits(model, job.n_scenarios, job.seed, self.aggregate,
                                    job.sample_weight)
        if job.intervention:
            return Estimated(refits, model, refits, model.world(None, None,
                                                                job.sample_weight))
        if not self.labelled:
            return Estimated(refits, model, refits)
        labels = label_world(Xs, job.z, job.y, job.n_groups, job.problem.n_outcomes,
                             job.sample_weight)
        return Estimated(with_labels(refits, labels, self.aggregate), model, refits)


@dataclass(frozen=True, kw_only=True)
class SoftmaxBand(SoftmaxRefits):
    """The maximin over the refits (as "worst"), then certified over their band
    (:func:`band_guarantee`): a bound over the band above epsilon refuses the fit."""

    def check_scenarios(self, n_scenarios: int) -> None:
        if n_scenarios * CERTIFIED_DELTA < 1:
            raise FairdecideError(
                f"n_scenarios = {n_scenarios} refits cannot carry a band at delta "
                f"{CERTIFIED_DELTA}: uncertainty={self.uncertainty!r} with "
                f"policy='softmax' needs n_scenarios >= {int(np.ceil(1 / CERTIFIED_DELTA))}")

    def certify(self, job: Training, result: OptimizeResult, found: Estimated
                ) -> OptimizeResult:
        return dataclasses.replace(result, guarantee=band_guarantee(
            found.model, result.policy, job.problem, job.criteria, found.refits.worlds,
            job.sample_weight, job.trade))


def band_guarantee(model: IndividualOutcomeModel, policy: LinearSoftmaxPolicy,
                   problem: DecisionProblem, criteria: list, refits: Any, weights: Any,
                   trade: dict) -> Guarantee:
    """The softmax family's certificate: its policy on the training individuals,
    certified over the band of ``refits``, the refits of the outcome model its maximin
    was fitted on (:meth:`ConfidenceSet.from_refits`; approximate). The maximin held
    epsilon in the refits, not over their band: a bound over the band above epsilon
    refuses the fit (NotCertifiedError), where the tabular family's program holds it."""
    cs = ConfidenceSet.from_refits(model, CERTIFIED_DELTA, weights=weights, refits=refits)
    rows = policy.proba(model.world(None, None, weights).units())  # (n, n_a)
    table = np.repeat(rows[:, None, :], cs.center.n_z, axis=1)  # cell i is individual i
    guarantee = certify_policy(problem, cs, TabularPolicy(table), criteria,
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
