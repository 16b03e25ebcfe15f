"""A fairness criterion written outside the package: parity of expected utility.

The decision maker's expected utility within each group, E[U | z], should not depend on
the group:

    F = sum_z |E[U | z] - E[U]|,   E[U | z] = sum_{a,y} P(z, a, y) U(a, y) / P(z).

P(z) does not depend on the policy, so F is linear in it: the criterion declares itself
linear, reads the group marginal, and writes one absolute-value row per group. The
optimiser then solves it exactly, and verifies the result on the decision table, like
every built-in criterion.

Run: python examples/custom_criterion.py
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import fairdecide as fd
from fairdecide.datasets import make_bail_problem


@dataclass(frozen=True)
class UtilityParity(fd.Criterion):
    """F = sum_z |E[U | z] - E[U]|."""

    @property
    def label(self) -> str:
        return "utility parity"

    def capabilities(self, problem: fd.DecisionProblem) -> fd.Capabilities:
        return fd.Capabilities(reads="marginal", linear=True, program=True)

    def deviation_from_table(self, table: fd.DecisionTable, problem: fd.DecisionProblem
                             ) -> float:
        M = table.group_marginal()  # P(z, a, y)
        by_group = np.einsum("zay,ay->z", M, problem.utility) / M.sum(axis=(1, 2))
        return float(np.abs(by_group - table.utility(problem.utility)).sum())

    def add_rows(self, block, how) -> None:
        # Row z over the marginal columns (z', a, y): U(a, y) / P(z) [z' = z] - U(a, y).
        M = block.marginal
        n_z = M.shape[0]
        U = block.problem.utility.reshape(-1)
        p_z = M.sum(axis=(1, 2))
        D = -np.tile(U, (n_z, n_z))
        for z in range(n_z):
            D[z, z * U.size:(z + 1) * U.size] += U / p_z[z]
        block.add_abs_epigraph(D, np.zeros(n_z), block.m_cols, np.ones(n_z), "sum")


def main() -> None:
    problem, world = make_bail_problem()
    crit = UtilityParity()
    print("The bail problem (detain or release; U(a, y) = a - y, y = new offences) under\n"
          "utility parity F = sum_z |E[U | z] - E[U]|, 0 when the decision maker's expected\n"
          "utility is the same in both groups (group A, group B). Independence is only\n"
          "reported (not constrained): equal utility across groups is not equal treatment.\n")
    free = fd.optimize_policy(problem, world)
    print(f"unconstrained: utility {free.utility:.4f}, "
          f"{crit.label} {crit.deviation(free.policy, world, problem):.4f}")
    for eps in (0.1, 0.05, 0.0):
        res = fd.optimize_policy(problem, world, [crit, fd.Independence()],
                                 epsilon=[eps, np.inf])
        print(f"{crit.label} <= {eps:<4}: utility {res.utility:.4f}, "
              f"{crit.label} {res.deviations[crit.label]:.4f}, "
              f"independence {res.deviations['independence']:.4f} ({res.status}, "
              f"verified: {res.verification.passed})")


if __name__ == "__main__":
    main()
