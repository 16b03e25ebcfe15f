"""Synthetic decision problems whose true world is known."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairdecide._common.deprecation import old_order
from fairdecide._common.validation import as_int, as_real, check_instance, check_random_state
from fairdecide.data.logged import LoggedData
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import as_object_vector
from fairdecide.policies import TabularPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.world import TabularWorld

__all__ = ["make_bail_problem", "make_tabular_problem", "sample_logged_data"]


def make_bail_problem() -> tuple[DecisionProblem, TabularWorld]:
    """The bail example: detain or release, with utility U(a, y) = a - y.

    A defendant with risk level x (0 = lowest .. 4 = highest) and group z in {0, 1} is
    detained (a = 0) or released (a = 1). The outcome y is the number of new offences
    (0, 1, or 2 meaning "two or more"); a detained defendant commits none. Releasing is
    worth 1 and each offence costs 1, so U(a, y) = a - y: release pays off exactly when
    the expected number of offences is below one. The groups differ in their risk
    distribution P(x | z) and slightly in P(y | x, z), so independence, separation and
    sufficiency all bind.

    Returns
    -------
    problem : DecisionProblem
        Intervention problem (the outcome depends on the action).
    world : TabularWorld
        The true world, with p_y of shape (5, 2, 2, 3).

    Examples
    --------
    >>> from fairdecide.datasets import make_bail_problem
    >>> problem, world = make_bail_problem()
    >>> problem.utility
    array([[ 0., -1., -2.],
           [ 1.,  0., -1.]])
    """
    actions = ("detain", "release")
    outcomes = (0, 1, 2)
    utility = np.array([[a - y for y in outcomes] for a in (0, 1)], dtype=float)
    problem = DecisionProblem(utility, outcome_depends_on_action=True,
                              action_labels=actions, outcome_labels=outcomes)
    p_x_given_z = np.array([[0.30, 0.10], [0.30, 0.15], [0.20, 0.25], [0.12, 0.25],
                            [0.08, 0.25]])
    p_z = np.array([0.6, 0.4])
    p_xz = p_x_given_z * p_z
    # P(y | release, x, z): one / two-or-more offences.
    one = np.array([[0.10, 0.12], [0.20, 0.22], [0.30, 0.28], [0.35, 0.36], [0.30, 0.34]])
    two = np.array([[0.02, 0.01], [0.08, 0.05], [0.20, 0.15], [0.35, 0.34], [0.55, 0.45]])
    p_y = np.zeros((5, 2, 2, 3))
    p_y[:, :, 0, 0] = 1.0  # detained: no offence
    p_y[:, :, 1, 1] = one
    p_y[:, :, 1, 2] = two
    p_y[:, :, 1, 0] = 1.0 - one - two
    world = TabularWorld(p_xz, p_y, x_labels=[f"risk {i}" for i in range(5)],
                         group_labels=["group A", "group B"])
    return problem, world


def make_tabular_problem(
    n_x: int = 10,
    n_z: int = 2,
    n_actions: int = 2,
    n_outcomes: int = 2,
    *,
    outcome_depends_on_action: bool = False,
    concentration: float = 1.0,
    random_state: Any = None,
) -> tuple[DecisionProblem, TabularWorld]:
    """A random tabular problem with known truth.

    P(x, z) and each P(y | [a,] x, z) are drawn from symmetric Dirichlet distributions
    with the given ``concentration``; the utility has U[a, y] = 1 on a diagonal
    (a == y mod n_outcomes) and uniform(-1, 1) noise scaled by 0.5 elsewhere.

    Examples
    --------
    >>> from fairdecide.datasets import make_tabular_problem
    >>> problem, world = make_tabular_problem(n_x=4, n_z=3, random_state=0)
    >>> world.p_xz.shape, world.p_y.shape
    ((4, 3), (4, 3, 2))
    """
    n_x, n_z = as_int(n_x, "n_x", minimum=1), as_int(n_z, "n_z", minimum=1)
    n_actions = as_int(n_actions, "n_actions", minimum=2)
    n_outcomes = as_int(n_outcomes, "n_outcomes", minimum=2)
    concentration = as_real(concentration, "concentration", low=0, low_open=True)
    rng = check_random_state(random_state)
    p_xz = rng.dirichlet(np.full(n_x * n_z, concentration)).reshape(n_x, n_z)
    p_xz = 0.9 * p_xz + 0.1 / (n_x * n_z)  # every group has mass
    shape = (n_x, n_z, n_actions) if outcome_depends_on_action else (n_x, n_z)
    p_y = rng.dirichlet(np.full(n_outcomes, concentration), size=shape)
    utility = 0.5 * rng.uniform(-1, 1, size=(n_actions, n_outcomes))
    for a in range(n_actions):
        utility[a, a % n_outcomes] = 1.0
    problem = DecisionProblem(utility, outcome_depends_on_action=outcome_depends_on_action)
    return problem, TabularWorld(p_xz, p_y)


def sample_logged_data(
    problem: DecisionProblem,
    world: TabularWorld,
    n: int,
    policy: TabularPolicy | None = None,
    random_state: Any = None,
) -> LoggedData:
    """Draw ``n`` individuals from ``world``, act with ``policy`` (default: uniform), and
    observe outcomes. The logged propensities are recorded.

    The problem comes first, then the world, as everywhere (and as
    :func:`make_bail_problem` returns them); the order ``(world, problem, n, policy)`` of
    earlier releases still works, with a DeprecationWarning.

    Examples
    --------
    >>> from fairdecide.datasets import make_bail_problem, sample_logged_data
    >>> problem, world = make_bail_problem()
    >>> sample_logged_data(problem, world, 100, random_state=0)
    LoggedData(n=100, cells=5, groups=2, actions=2, outcomes=3)
    """
    problem, world = old_order("sample_logged_data", (problem, world), ("problem", "world"),
                               ("world", "problem"), DecisionProblem)
    check_instance(world, "world", TabularWorld, "a TabularWorld")
    check_instance(problem, "problem", DecisionProblem, "a DecisionProblem")
    world.check_problem(problem)
    n = as_int(n, "n", minimum=1)
    rng = check_random_state(random_state)
    if policy is None:
        policy = TabularPolicy.for_world(world, np.full(problem.n_actions,
                                                        1.0 / problem.n_actions))
    check_instance(policy, "policy", TabularPolicy, "a TabularPolicy (the logging policy)")
    if policy.n_actions != problem.n_actions:
        raise FairdecideError(
            f"policy has {policy.n_actions} actions but the problem has {problem.n_actions}")
    rows = policy.proba(world.units()).reshape(world.n_x, world.n_z, problem.n_actions)
    cell = rng.choice(world.n_x * world.n_z, size=n, p=world.p_xz.reshape(-1))
    x, z = np.divmod(cell, world.n_z)
    u = rng.random_sample(n)[:, None]
    a = np.minimum((rows[x, z].cumsum(axis=1) < u).sum(axis=1), problem.n_actions - 1)
    p_y = world.outcome_table(problem.n_actions)[x, z, a]
    y = (p_y.cumsum(axis=1) < rng.random_sample(int(n))[:, None]).sum(axis=1)
    y = np.minimum(y, problem.n_outcomes - 1)
    return LoggedData(
        x=as_object_vector(world.x_labels)[x],
        z=as_object_vector(world.group_labels)[z],
        y=as_object_vector(problem.outcome_labels)[y],
        a=as_object_vector(problem.action_labels)[a],
        propensity=rows[x, z, a],
        x_labels=world.x_labels,
        group_labels=world.group_labels,
        action_labels=problem.action_labels,
        outcome_labels=problem.outcome_labels,
    )
