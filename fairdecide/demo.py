"""The main job: compare unconstrained and fairness-constrained policies on one problem."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pandas as pd

from fairdecide.criteria import Independence, Separation, Sufficiency
from fairdecide.data import LoggedData
from fairdecide.datasets import DataNotFoundError, load_compas, make_bail_problem
from fairdecide.optimize import optimize_policy
from fairdecide.problem import DecisionProblem
from fairdecide.world import TabularWorld

__all__ = ["DemoCase", "bail_case", "compare_policies", "compas_case", "run_demo"]


@dataclass(frozen=True)
class DemoCase:
    """A named problem and world to compare policies on."""

    title: str
    problem: DecisionProblem
    world: TabularWorld


def compas_case(data_home: str | None = None, *, download: bool = False) -> DemoCase:
    """COMPAS two-year recidivism as a prediction problem with accuracy as utility.

    x = (age category, charge degree, prior offences clipped at 3), z = race (African-
    American or Caucasian), y = two_year_recid; the world is the maximum-likelihood
    estimate from all such rows.
    """
    df = load_compas(data_home, download=download)
    df = df[df["race"].isin(["African-American", "Caucasian"])].copy()
    df["priors"] = df["priors_count"].clip(upper=3)
    data = LoggedData.from_frame(
        df, features=["age_cat", "c_charge_degree", "priors"], group="race",
        outcome="two_year_recid",
    )
    problem = DecisionProblem.classification(2, labels=[0, 1])
    world = TabularWorld.from_data(data, problem)
    return DemoCase(
        f"COMPAS two-year recidivism: predict reoffending (accuracy), {data.n} people, "
        f"{data.n_x} cells x {data.n_z} groups",
        problem, world,
    )


def bail_case() -> DemoCase:
    """The synthetic bail problem (embedded, needs no data)."""
    problem, world = make_bail_problem()
    return DemoCase(
        "Synthetic bail problem: detain or release, U(a, y) = a - y (y = new offences)",
        problem, world,
    )


def compare_policies(case: DemoCase, epsilon: float = 0.05) -> pd.DataFrame:
    """Utility and every deviation of the unconstrained and constrained optimal policies."""
    crits = {"independence": Independence(), "separation": Separation(),
             "sufficiency": Sufficiency()}
    runs = {
        "unconstrained": optimize_policy(case.problem, case.world),
        f"independence <= {epsilon:g}": optimize_policy(
            case.problem, case.world, crits["independence"], epsilon=epsilon),
        f"separation <= {epsilon:g}": optimize_policy(
            case.problem, case.world, crits["separation"], epsilon=epsilon),
        f"sufficiency <= {epsilon:g}": optimize_policy(
            case.problem, case.world, crits["sufficiency"], epsilon=epsilon),
    }
    rows = []
    for name, res in runs.items():
        row = {"policy": name, "utility": res.utility}
        for cname, crit in crits.items():
            row[cname] = crit.deviation(res.policy, case.world, case.problem)
        row["status"] = res.status
        row["verified"] = "yes" if res.verification and res.verification.passed else "no"
        rows.append(row)
    return pd.DataFrame(rows).set_index("policy")


def run_demo(data_home: str | None = None, epsilon: float = 0.05,
             synthetic: bool = False) -> str:
    """The demo report as text: COMPAS when a local copy is found, else the bail problem."""
    case, note = None, ""
    if not synthetic:
        try:
            case = compas_case(data_home or os.environ.get("FAIRDECIDE_DATA"))
        except DataNotFoundError:
            note = ("(COMPAS not found locally: set FAIRDECIDE_DATA to a folder holding "
                    "compas-scores-two-years.csv[.gz] to run on it)\n")
    if case is None:
        case = bail_case()
    table = compare_policies(case, epsilon)
    with pd.option_context("display.width", 120, "display.float_format", "{:.4f}".format):
        body = table.to_string()
    return (
        f"{note}{case.title}\n"
        f"Deviations: total-variation F = sum_c sum_z ||P(. | c, z) - P(. | c)||_1; "
        f"every row is recomputed from the decision table.\n\n{body}\n"
        f"\nLoss of utility for fairness: "
        + ", ".join(
            f"{name} {table.loc['unconstrained', 'utility'] - table.loc[name, 'utility']:.4f}"
            for name in table.index[1:]
        )
        + "\n"
    )


if __name__ == "__main__":  # pragma: no cover
    print(run_demo())
