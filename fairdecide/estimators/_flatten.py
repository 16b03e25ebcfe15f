"""The flattest of the score family's optimal policies: the same group rates, estimated
from the most rows.

Under criteria that read only the group marginal (independence, separation, sufficiency,
the pairwise differences) and a utility U(a, y) of a prediction problem, a policy
pi(a | bin, z) enters utility and every deviation only through its group rates

    r(z, y) = sum_b n(b, z, y) pi(a_up | b, z) / sum_b n(b, z, y),

n the training world's mass of (bin, group, outcome) and a_up the action that gains from
the positive outcome. Every policy with the LP optimum's rates is then optimal too, and
the simplex method returns one vertex of that face, chosen by the bins' counts: often a
rule that jumps between levels at bins where few people of a small group sit, whose rates
in new data drift from the training ones. Of the face's policies monotone in the score,
:func:`flatten` returns one of least spread, max_b pi - min_b pi, per group (one small LP
each): a threshold rule mixed with a constant rule, the form ThresholdOptimizer's and
error-parity's randomised rules take. Its rates are averages over wide ranges of
scores, so they are estimated from more rows (the variance of a rate's estimate is
Var(pi | z, y) / n(z, y), least for the flattest rule). Where the optimum is a plain
threshold (a point on the group's ROC curve, as under demographic parity) no other
monotone policy has its rates and nothing changes.

benchmarks/results/frontier.txt measures the family with it on Adult, COMPAS and
German credit; docs/benchmarks.md quotes the figures beside the simplex vertex's.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from fairdecide.criteria import Criterion
from fairdecide.exceptions import VerificationError
from fairdecide.optimize.engine.highs_model import HighsModel
from fairdecide.optimize.program.shorthand import make_tradeoff
from fairdecide.optimize.result import OptimizeResult
from fairdecide.optimize.verify import verify_solution
from fairdecide.policies import TabularPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief

#: Utility and deviations of the flattened policy may differ from the vertex's by solver
#: rounding only; beyond this the vertex is kept.
AGREEMENT = 1e-9


def applies(problem: DecisionProblem, criteria: list[Criterion], order: Criterion | None
            ) -> bool:
    """Two actions, a prediction problem, the score order held, and criteria that read
    only the group marginal."""
    return (order is not None and problem.n_actions == 2
            and not problem.outcome_depends_on_action
            and all(c.capabilities(problem).reads == "marginal" for c in criteria))


def flatten(result: OptimizeResult, belief: Belief, problem: DecisionProblem,
            criteria: list[Criterion], epsilon: tuple[float, ...], up: int,
            tol: float = 1e-7) -> OptimizeResult:
    """The optimum ``result`` (over the bins of the belief's tabular worlds, bins in
    score order, ``up`` the action whose probability may not fall as the score rises)
    replaced by the flattest policy with the same group rates in every world, verified
    on the worlds' decision tables; ``result`` itself if a group's LP fails or the
    recomputed utility or a deviation moves by more than AGREEMENT."""
    table = result.policy.table
    n_z = table.shape[1]
    # n(b, z, y) of each world, side by side on the outcome axis: the rates of every
    # world are kept
    mass = np.concatenate([w.p_xz[:, :, None] * w.p_y for w in belief.worlds], axis=2)
    new = table.copy()
    for z in range(n_z):
        pi = _flattest(mass[:, z, :], table[:, z, up])
        if pi is None:
            return result
        new[:, z, up] = pi
        new[:, z, 1 - up] = 1.0 - pi
    policy = TabularPolicy(new)
    names = list(result.deviations)
    tradeoff = make_tradeoff(len(criteria), None, epsilon, None)
    try:
        v = verify_solution(policy, belief, problem, criteria, names, tradeoff, None, 0.0,
                            tol, tol)
    except VerificationError:  # its rates, kept to HiGHS's tolerance, broke a bound
        return result
    if (abs(v.utility - result.utility) > AGREEMENT
            or any(v.deviations[n] > result.deviations[n] + AGREEMENT for n in names)):
        return result
    F = np.array([v.scenario_deviations[n] for n in names]).reshape(len(names), -1)
    return dataclasses.replace(
        result, policy=policy, utility=v.utility, deviations=v.deviations,
        objective=float(tradeoff.objective(v.scenario_utilities, F, belief)),
        verification=v, stats={**result.stats, "flattened": True})


def _flattest(mass: np.ndarray, pi: np.ndarray) -> np.ndarray | None:
    """min pi_top - pi_bottom over pi in [0, 1]^B non-decreasing, with the rates of
    ``pi`` for each outcome kept (rows scaled to rates); None if HiGHS fails."""
    n_b = mass.shape[0]
    total = mass.sum(axis=0)
    keep = total > 0  # an outcome the group never has sets no rate
    A_eq = sp.csr_matrix((mass[:, keep] / total[keep]).T)
    b_eq = A_eq @ pi
    # pi_b - pi_{b+1} <= 0
    A_ub = sp.diags([np.ones(n_b - 1), -np.ones(n_b - 1)], [0, 1], shape=(n_b - 1, n_b))
    c = np.zeros(n_b)
    c[-1], c[0] = 1.0, -1.0
    model = HighsModel.from_rows(c, np.zeros(n_b), np.ones(n_b), sp.csr_matrix(A_ub),
                                 np.zeros(n_b - 1), A_eq, b_eq)
    ok, _ = model.solve()
    if not ok:
        return None
    return np.clip(model.values(), 0.0, 1.0)

