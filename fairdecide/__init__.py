"""fairdecide: decisions about people that are good for the decision maker and fair.

The core objects: a :class:`DecisionProblem` (actions, outcomes, utility), a world
(:class:`TabularWorld`, known or estimated from :class:`LoggedData`), a policy
(:class:`TabularPolicy`), fairness criteria (:class:`Independence`,
:class:`Separation`, :class:`Sufficiency`) and :func:`optimize_policy`.

The data model (problems, data, worlds, policies, criteria, beliefs) is imported with the
package; the optimiser, posteriors and evaluation (which need scipy.optimize,
scikit-learn or scipy.stats) are imported on first use, so ``import fairdecide`` stays
fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from fairdecide._common.meta import __version__ as __version__
from fairdecide.criteria import (
    Capabilities,
    Capacity,
    ConditionalIndependence,
    Criterion,
    Independence,
    Lipschitz,
    MeritOrder,
    Separation,
    Sufficiency,
)
from fairdecide.criteria.values import scenario_values
from fairdecide.data.counts import LoggedCounts
from fairdecide.data.logged import BanditData, LoggedData
from fairdecide.data.units import Units
from fairdecide.exceptions import (
    FairdecideError,
    InfeasibleToleranceError,
    NotCertifiedError,
    PriceWarning,
    SolverError,
    VerificationError,
)
from fairdecide.policies import LinearSoftmaxPolicy, Policy, TabularPolicy, sample_cohort
from fairdecide.problem import DecisionProblem

# eager, not lazy: a lazy name equal to its submodule's is replaced by the submodule as
# soon as anything imports ``fairdecide.smoothness.meritocracy`` (fd.meritocracy was then the
# module, not the function)
from fairdecide.smoothness.meritocracy import meritocracy
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.uncertainty.confidence import ConfidenceSet
from fairdecide.worlds.sample import SampleWorld
from fairdecide.worlds.table import DecisionTable, decision_table, expected_utility
from fairdecide.worlds.world import TabularWorld, World

if TYPE_CHECKING:
    from fairdecide.assignment.exposure import ExposureParity, MeritExposure, TopShare
    from fairdecide.assignment.matching_lp import optimize_matching
    from fairdecide.assignment.ranking import optimize_ranking
    from fairdecide.assignment.ranking_result import RankingResult
    from fairdecide.assignment.result import MatchingResult
    from fairdecide.assignment.smoothness import RankingLipschitz
    from fairdecide.assignment.stable import MatchingMarket, blocking_pairs, deferred_acceptance
    from fairdecide.estimators import (
        FairDecisionPolicy,
        FairPolicyClassifier,
        best_utility_within,
        make_fairness_scorer,
        make_utility_scorer,
    )
    from fairdecide.evaluation.belief import BeliefEvaluation, evaluate_under_belief
    from fairdecide.models.dirichlet import BootstrapPosterior, DirichletPosterior
    from fairdecide.optimize.api import optimize_policy
    from fairdecide.optimize.certify import certify_policy
    from fairdecide.optimize.frontier import pareto_frontier
    from fairdecide.optimize.guarantee import Guarantee
    from fairdecide.optimize.held_out import optimize_held_out
    from fairdecide.optimize.result import OptimizeResult
    from fairdecide.optimize.rows_needed import RowsNeeded, rows_needed
    from fairdecide.worlds.frame import FrameWorld


_LAZY = {
    "ExposureParity": "fairdecide.assignment.exposure",
    "MeritExposure": "fairdecide.assignment.exposure",
    "TopShare": "fairdecide.assignment.exposure",
    "RankingLipschitz": "fairdecide.assignment.smoothness",
    "RankingResult": "fairdecide.assignment.ranking_result",
    "optimize_ranking": "fairdecide.assignment.ranking",
    "OptimizeResult": "fairdecide.optimize.result",
    "optimize_policy": "fairdecide.optimize.api",
    "pareto_frontier": "fairdecide.optimize.frontier",
    "Guarantee": "fairdecide.optimize.guarantee",
    "certify_policy": "fairdecide.optimize.certify",
    "optimize_held_out": "fairdecide.optimize.held_out",
    "rows_needed": "fairdecide.optimize.rows_needed",
    "RowsNeeded": "fairdecide.optimize.rows_needed",
    "BeliefEvaluation": "fairdecide.evaluation.belief",
    "evaluate_under_belief": "fairdecide.evaluation.belief",
    "BootstrapPosterior": "fairdecide.models.dirichlet",
    "FairDecisionPolicy": "fairdecide.estimators",
    "FairPolicyClassifier": "fairdecide.estimators",
    "best_utility_within": "fairdecide.estimators",
    "make_fairness_scorer": "fairdecide.estimators",
    "make_utility_scorer": "fairdecide.estimators",
    "DirichletPosterior": "fairdecide.models.dirichlet",
    "FrameWorld": "fairdecide.worlds.frame",
    "parity": "fairdecide.smoothness.parity",
    "MatchingMarket": "fairdecide.assignment.stable",
    "MatchingResult": "fairdecide.assignment.result",
    "blocking_pairs": "fairdecide.assignment.stable",
    "deferred_acceptance": "fairdecide.assignment.stable",
    "optimize_matching": "fairdecide.assignment.matching_lp",
    "worst_case_bias": "fairdecide.smoothness.parity",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fairdecide' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "BanditData",
    "Belief",
    "BeliefEvaluation",
    "BootstrapPosterior",
    "Capabilities",
    "Capacity",
    "ConditionalIndependence",
    "ConfidenceSet",
    "Criterion",
    "DecisionProblem",
    "DecisionTable",
    "DirichletPosterior",
    "ExposureParity",
    "FairDecisionPolicy",
    "FairPolicyClassifier",
    "FairdecideError",
    "FrameWorld",
    "Guarantee",
    "Independence",
    "InfeasibleToleranceError",
    "LinearSoftmaxPolicy",
    "Lipschitz",
    "LoggedCounts",
    "LoggedData",
    "MatchingMarket",
    "MatchingResult",
    "MeritExposure",
    "MeritOrder",
    "NotCertifiedError",
    "OptimizeResult",
    "Policy",
    "PriceWarning",
    "RankingLipschitz",
    "RankingResult",
    "RowsNeeded",
    "SampleWorld",
    "Separation",
    "SolverError",
    "Sufficiency",
    "TabularPolicy",
    "TabularWorld",
    "TopShare",
    "Units",
    "VerificationError",
    "World",
    "best_utility_within",
    "blocking_pairs",
    "certify_policy",
    "decision_table",
    "deferred_acceptance",
    "evaluate_under_belief",
    "expected_utility",
    "make_fairness_scorer",
    "make_utility_scorer",
    "meritocracy",
    "optimize_held_out",
    "optimize_matching",
    "optimize_policy",
    "optimize_ranking",
    "pareto_frontier",
    "parity",
    "rows_needed",
    "sample_cohort",
    "scenario_values",
    "worst_case_bias",
]
