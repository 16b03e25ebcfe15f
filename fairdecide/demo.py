"""The main job: compare unconstrained and fairness-constrained policies on one problem.

``fairdecide demo`` prints :func:`run_demo`'s report: what the problem is (decision,
utility, groups, cells), what each fairness deviation measures, the utility and every
deviation of the unconstrained and the constrained optimal policies, and the decision
table of one fair policy (the probability of each action in each cell and group).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairdecide.criteria import Independence, Separation, Sufficiency
from fairdecide.data.logged import LoggedData
from fairdecide.datasets import DataNotFoundError, load_compas, make_bail_problem
from fairdecide.datasets.real import FILES
from fairdecide.exceptions import FairdecideError
from fairdecide.optimize import optimize_policy
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.world import TabularWorld

__all__ = [
    "CRITERIA", "DemoCase", "bail_case", "compare_policies", "compas_case", "policy_table",
    "run_demo", "solve_policies",
]

#: The criteria the demo constrains, by name.
CRITERIA = {"independence": Independence(), "separation": Separation(),
            "sufficiency": Sufficiency()}

_MEANINGS = (
    "Fairness deviations (0 = the criterion holds exactly). Each compares, for every group z\n"
    "and conditioning value c, the distribution of a target t within the group with the\n"
    "pooled one: F = sum_c sum_z sum_t |P(t | c, z) - P(t | c)| (total variation).\n"
    "  independence  t = action,  no c         every group gets each action at the same rate\n"
    "  separation    t = action,  c = outcome  same action rates among people with the same\n"
    "                                          outcome (equalised odds)\n"
    "  sufficiency   t = outcome, c = action   same outcome rates among people given the same\n"
    "                                          action (calibration)\n"
    "A deviation is a sum of absolute differences, not a probability: it can exceed 1 (each\n"
    "pair of group and conditioning value adds up to 2)."
)
_STATUS = (
    "status: optimal = global optimum (one linear program); locally optimal = best found by\n"
    "successive linearisation (the criterion is not convex in the policy). verified: utility\n"
    "and deviations recomputed from the decision table, independently of the solver."
)


@dataclass(frozen=True)
class DemoCase:
    """A named problem and world to compare policies on.

    Parameters
    ----------
    title : str
        One line naming the problem.
    problem : DecisionProblem
    world : TabularWorld
        The world the policies are optimised and evaluated in.
    description : str, optional
        Lines explaining the decision, the outcome and what the utility means.
    cell_names : tuple of str, optional
        Names of the features that make up a cell (the levels of its label).
    """

    title: str
    problem: DecisionProblem
    world: TabularWorld
    description: str = ""
    cell_names: tuple[str, ...] = ()


def compas_case(data_home: str | None = None, *, download: bool = False) -> DemoCase:
    """COMPAS two-year recidivism as a prediction problem with accuracy as utility.

    x = (age category, charge degree, prior offences 0, 1, 2, 3+), z = race (African-
    American or Caucasian), y = two_year_recid; the action flags a person as low or high
    risk. The world is the maximum-likelihood estimate from all such rows.
    """
    df = load_compas(data_home, download=download)
    df = df[df["race"].isin(["African-American", "Caucasian"])].copy()
    df["priors"] = df["priors_count"].clip(upper=3).astype(str).replace({"3": "3+"})
    df["age"] = df["age_cat"].map({"Less than 25": "<25", "25 - 45": "25-45",
                                   "Greater than 45": ">45"})
    df["charge"] = df["c_charge_degree"].map({"F": "felony", "M": "misdemeanor"})
    data = LoggedData.from_frame(df, features=["age", "charge", "priors"], group="race",
                                 outcome="two_year_recid")
    problem = DecisionProblem(np.eye(2), outcome_depends_on_action=False,
                              action_labels=["low risk", "high risk"], outcome_labels=[0, 1])
    world = TabularWorld.from_data(data, problem)
    description = (
        "Decision: flag each person as low or high risk; outcome y = 1 if they reoffended\n"
        "within two years. Utility U(a, y) = 1 when the flag matches the outcome, else 0, so\n"
        "the utility below is the share of people flagged correctly (accuracy).\n"
        "The world P(x, z), P(y | x, z) is estimated from the same rows: in-sample figures."
    )
    return DemoCase(
        f"COMPAS two-year recidivism (ProPublica, Broward County): {data.n} people, "
        f"{data.n_x} cells x {data.n_z} groups",
        problem, world, description, ("age", "charge", "priors"),
    )


def bail_case() -> DemoCase:
    """The synthetic bail problem (embedded, needs no data)."""
    problem, world = make_bail_problem()
    description = (
        "Decision: detain or release a defendant; outcome y = new offences (0, 1, 2 = two or\n"
        "more; none if detained). Utility U(a, y) = a - y (a = 1 for release): release is\n"
        "worth 1 and each offence costs 1, so the utility below is the expected value per\n"
        "defendant. The world is known (synthetic), so every figure is exact."
    )
    return DemoCase(
        "Synthetic bail problem (embedded; needs no data)", problem, world, description,
        ("risk level",),
    )


def solve_policies(case: DemoCase, epsilon: float = 0.05) -> dict:
    """The unconstrained optimal policy and the optimal policy under each criterion.

    Parameters
    ----------
    case : DemoCase
    epsilon : float, default=0.05
        Tolerance on each criterion of :data:`CRITERIA`.

    Returns
    -------
    dict of str to OptimizeResult
        ``"unconstrained"`` and ``"<criterion> <= <epsilon>"`` for each criterion.
    """
    runs = {"unconstrained": optimize_policy(case.problem, case.world)}
    for name, crit in CRITERIA.items():
        runs[f"{name} <= {epsilon:g}"] = optimize_policy(case.problem, case.world, crit,
                                                         epsilon=epsilon)
    return runs


def compare_policies(case: DemoCase, epsilon: float = 0.05, runs: dict | None = None
                     ) -> pd.DataFrame:
    """Utility and every deviation of the unconstrained and constrained optimal policies.

    Parameters
    ----------
    case : DemoCase
    epsilon : float, default=0.05
    runs : dict, optional
        The results of :func:`solve_policies` (computed when omitted).

    Returns
    -------
    DataFrame
        One row per policy: ``utility``, each criterion's deviation (recomputed from
        the decision table), ``status`` and ``verified``.
    """
    runs = solve_policies(case, epsilon) if runs is None else runs
    rows = []
    for name, res in runs.items():
        row = {"policy": name, "utility": res.utility}
        for cname, crit in CRITERIA.items():
            row[cname] = crit.deviation(res.policy, case.world, case.problem)
        row["status"] = res.status
        row["verified"] = "yes" if res.verification and res.verification.passed else "no"
        rows.append(row)
    return pd.DataFrame(rows).set_index("policy")


def _cell_index(case: DemoCase) -> pd.Index:
    labels = list(case.world.x_labels)
    if labels and all(isinstance(lab, tuple) for lab in labels):
        names = case.cell_names if len(case.cell_names) == len(labels[0]) else None
        return pd.MultiIndex.from_tuples(labels, names=names)
    return pd.Index(labels, name=case.cell_names[0] if len(case.cell_names) == 1 else "cell")


def policy_table(policy, case: DemoCase, reference=None) -> pd.DataFrame:
    """A tabular policy's decisions, readable.

    Parameters
    ----------
    policy : TabularPolicy
        A policy over the cells and groups of ``case.world``.
    case : DemoCase
    reference : TabularPolicy, optional
        A policy to compare with (the demo passes the unconstrained optimum).

    Returns
    -------
    DataFrame
        One row per cell (indexed by the cell labels, one level per feature); per group
        (the first column level) the cell's ``share`` of the group, the probability
        ``P(action)`` of each action (of the second action only when there are two: the
        first has the rest) and, with a ``reference``, the action it takes there
        (``unconstrained``; "mixed" if it randomises).
    """
    table = np.asarray(policy.table)
    ref = None if reference is None else np.asarray(reference.table)
    p_xz = case.world.p_xz
    share = p_xz / p_xz.sum(axis=0, keepdims=True)
    actions = [str(a) for a in case.problem.action_labels]
    shown = [1] if len(actions) == 2 else range(len(actions))
    cols = {}
    for z, group in enumerate(case.world.group_labels):
        cols[(group, "share")] = share[:, z]
        for a in shown:
            cols[(group, f"P({actions[a]})")] = table[:, z, a]
        if ref is not None:
            cols[(group, "unconstrained")] = [
                actions[int(np.argmax(row))] if np.max(row) > 1 - 1e-6 else "mixed"
                for row in ref[:, z]
            ]
    frame = pd.DataFrame(cols, index=_cell_index(case))
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame


def _format(frame: pd.DataFrame, digits: int = 4) -> str:
    """The whole frame as text: never truncated with '...' whatever the terminal."""
    return frame.to_string(float_format=lambda v: f"{v:.{digits}f}")


def _require_compas_in(data_home: str) -> None:
    """Fail unless the folder named with --data-home holds the COMPAS file."""
    spec = FILES["compas"]
    folder = Path(data_home)
    if any((folder / name).is_file() for name in (spec.filename, spec.filename + ".gz")):
        return
    what = "does not exist" if not folder.exists() else "holds no COMPAS data"
    raise DataNotFoundError(
        f"--data-home {data_home} {what}: expected {spec.filename} or {spec.filename}.gz "
        f"in it. Download it from {spec.url} into that folder, or run `fairdecide demo` "
        "without --data-home for the embedded synthetic problem"
    )


def _choose_case(data_home: str | None, synthetic: bool) -> tuple[DemoCase, str]:
    if synthetic:
        return bail_case(), ""
    if data_home is not None:
        _require_compas_in(data_home)
        return compas_case(data_home), ""
    env = os.environ.get("FAIRDECIDE_DATA")
    try:
        return compas_case(env), ""
    except DataNotFoundError:
        where = f"FAIRDECIDE_DATA={env} holds no" if env else "no local copy of"
        return bail_case(), (
            f"(COMPAS not found locally: {where} {FILES['compas'].filename}[.gz]; pass "
            "--data-home FOLDER or set FAIRDECIDE_DATA to run on it)\n\n"
        )


def _groups_line(case: DemoCase) -> str:
    p_z = case.world.p_xz.sum(axis=0)
    groups = ", ".join(f"{g} ({p:.0%} of people)"
                       for g, p in zip(case.world.group_labels, p_z, strict=True))
    if len(case.cell_names) > 1:
        cells = " x ".join(case.cell_names)
    else:
        cells = ", ".join(str(c) for c in case.world.x_labels)
    return f"Groups z: {groups}.\nCells x ({case.world.n_x}): {cells}."


def run_demo(data_home: str | None = None, epsilon: float = 0.05,
             synthetic: bool = False, show: str = "separation") -> str:
    """The demo report as text.

    Parameters
    ----------
    data_home : str, optional
        Folder that must hold ``compas-scores-two-years.csv[.gz]``. Without it, COMPAS is
        used when found through ``$FAIRDECIDE_DATA`` or the download cache, else the
        embedded synthetic bail problem (offline, no data needed).
    epsilon : float, default=0.05
        Tolerance of the constrained policies.
    synthetic : bool, default=False
        Use the synthetic bail problem even when COMPAS is found.
    show : {"independence", "separation", "sufficiency"}, default="separation"
        Which constrained policy's decision table to print.

    Raises
    ------
    DataNotFoundError
        ``data_home`` is given but does not hold the COMPAS file.
    FairdecideError
        A data file found is corrupted, or an argument is invalid.
    """
    if show not in CRITERIA:
        raise FairdecideError(f"show must be one of {sorted(CRITERIA)}, got {show!r}")
    case, note = _choose_case(data_home, synthetic)
    runs = solve_policies(case, epsilon)
    table = compare_policies(case, epsilon, runs)
    best = table.loc["unconstrained", "utility"]
    loss = ", ".join(f"{name.split(' <=')[0]} {best - table.loc[name, 'utility']:.4f}"
                     for name in table.index[1:])
    shown = f"{show} <= {epsilon:g}"
    actions = [str(a) for a in case.problem.action_labels]
    what = (f"the probability P({actions[1]}) (P({actions[0]}) is the rest)"
            if len(actions) == 2 else "the probability of each action")
    return (
        f"{note}{case.title}\n{case.description}\n{_groups_line(case)}\n\n{_MEANINGS}\n\n"
        f"Optimal policies, unconstrained and with each deviation at most {epsilon:g}:\n"
        f"{_format(table)}\n{_STATUS}\n\n"
        f"Utility lost for fairness (unconstrained minus constrained):\n  {loss}\n\n"
        f"Decisions of the policy '{shown}': {what}\n"
        "in each cell, by group. share = the cell's share of its group; unconstrained = the\n"
        "action the unconstrained optimum takes there ('mixed' if it randomises).\n"
        f"{_format(policy_table(runs[shown].policy, case, runs['unconstrained'].policy), 2)}\n"
    )


if __name__ == "__main__":  # pragma: no cover
    print(run_demo())
