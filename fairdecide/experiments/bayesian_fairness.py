"""The COMPAS experiment of "Bayesian Fairness" (Dimitrakakis, Liu, Parkes, Radanovic,
AAAI 2019) and "Approximate Inference for the Bayesian Fairness Framework"
(Athanasopoulos et al., EWAF 2023), solved exactly.

Setting: COMPAS two-year data; x = the observed combination of age category, charge
degree and juvenile felony, juvenile misdemeanour, juvenile other and prior counts (each
clipped at 2); z = sex x race (12 groups); y = two_year_recid; two actions (predict
reoffending or not); the policy sees x only (group-blind); utility = accuracy; fairness =
balance (separation) with the P(z | y)-weighted L1 measure; objective
T = U - lambda F, optimised as the mixture (1 - m) U - m F with m = lambda / (1 + lambda).
The model is the papers' P(x) P(y | x) P(z | y, x) with Dirichlet(0.5) priors.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._tables import result_table
from fairdecide._validation import check_random_state
from fairdecide.beliefs import Belief
from fairdecide.criteria import Separation
from fairdecide.data import LoggedData
from fairdecide.datasets import load_compas, sample_logged_data
from fairdecide.models import DirichletPosterior
from fairdecide.optimize import optimize_policy
from fairdecide.policies import TabularPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.values import scenario_values
from fairdecide.world import TabularWorld

__all__ = [
    "PUBLISHED",
    "balance",
    "compas_data",
    "fit_policies",
    "holdout_experiment",
    "objective_value",
    "semi_synthetic_experiment",
]

FEATURES = ["age_cat", "c_charge_degree", "juv_fel_count", "juv_misd_count",
            "juv_other_count", "priors_count"]
PRIOR = 0.5
FACTORIZATION = "papers"
# Values reported at 6000 training points (gradient methods), by lambda.
PUBLISHED = {1.0: {"Bayes": 0.516, "bootstrap": 0.510, "plug-in": 0.465},
             0.5: {"bootstrap": 0.531, "plug-in": 0.524},
             0.0: {"all methods": 0.641}}


def balance() -> Separation:
    """Balance: separation with the P(z | y)-weighted L1 measure."""
    return Separation(weighting="group", name="balance")


def compas_data(data_home: Any = None, *, download: bool = True
                ) -> tuple[LoggedData, DecisionProblem]:
    """The 7214 COMPAS rows as LoggedData (cells over all rows) and the accuracy problem."""
    df = load_compas(data_home, download=download)
    for col in FEATURES[2:]:
        df[col] = df[col].clip(upper=2)
    df["group"] = df["sex"] + " / " + df["race"]
    data = LoggedData.from_frame(df, features=FEATURES, group="group",
                                 outcome="two_year_recid")
    return data, DecisionProblem.classification(2, labels=[0, 1])


def objective_value(policy: TabularPolicy, world: TabularWorld, problem: DecisionProblem,
                    lam: float) -> tuple[float, float, float]:
    """(T, U, F) of ``policy`` in ``world``: T = U - lambda F with the balance measure."""
    U, F = scenario_values(policy, [world], problem, [balance()])
    return float(U[0] - lam * F[0, 0]), float(U[0]), float(F[0, 0])


@dataclass(frozen=True)
class Fitted:
    policy: TabularPolicy
    seconds: float


def fit_policies(
    train: LoggedData, problem: DecisionProblem, lam: float, *, n_samples: int = 32,
    delta: float = 0.1, random_state: Any = None, methods: tuple[str, ...] = (
        "plug-in", "Bayes", "bootstrap", "maximin", "constant"),
) -> dict[str, Fitted]:
    """The exact optimal group-blind policy of each method for T = U - lam F."""
    rng = check_random_state(random_state)
    # Small training samples can miss small groups: the prior speaks for them.
    post = DirichletPosterior(PRIOR, FACTORIZATION, allow_empty_groups=True).fit(train, problem)
    m = lam / (1.0 + lam)
    out: dict[str, Fitted] = {}

    def solve(belief: Belief) -> Fitted:
        t0 = time.perf_counter()
        res = optimize_policy(problem, belief, balance(), lam=m, group_blind=True)
        return Fitted(res.policy, time.perf_counter() - t0)

    for method in methods:
        seed = rng.randint(2**31 - 1)
        if method == "plug-in":
            out[method] = solve(Belief.plug_in(post.mean_world()))
        elif method == "Bayes":
            out[method] = solve(Belief.from_posterior(post, n_samples, random_state=seed))
        elif method == "bootstrap":
            out[method] = solve(Belief.from_bootstrap(
                train, problem, n_samples, smoothing=PRIOR, factorization=FACTORIZATION,
                random_state=seed, allow_empty_groups=True))
        elif method == "maximin":
            out[method] = solve(Belief.confidence_set(post, delta, n_samples,
                                                      random_state=seed))
        elif method == "constant":
            majority = np.bincount(train.outcome_codes(problem), minlength=2).argmax()
            out[method] = Fitted(TabularPolicy.constant(
                train.n_x, train.n_z, np.eye(problem.n_actions)[majority]), 0.0)
        else:
            raise ValueError(f"unknown method {method!r}")
    return out


def holdout_experiment(data: LoggedData, problem: DecisionProblem, *, lams=(0.0, 0.5, 1.0),
                       runs: int = 10, n_train: int = 6000, n_samples: int = 32,
                       seed: int = 0) -> pd.DataFrame:
    """Train on the first ``n_train`` rows of a random order, evaluate T on the
    posterior-mean world of the rest; one row per (run, lambda, method)."""
    rows = []
    for run in range(runs):
        order = np.random.default_rng(seed + run).permutation(data.n)
        train, test = data.subset(order[:n_train]), data.subset(order[n_train:])
        test_world = DirichletPosterior(PRIOR, FACTORIZATION, allow_empty_groups=True).fit(
            test, problem).mean_world()
        for lam in lams:
            fitted = fit_policies(train, problem, lam, n_samples=n_samples,
                                  random_state=seed + 1000 * run + int(10 * lam))
            for method, fit in fitted.items():
                T, U, F = objective_value(fit.policy, test_world, problem, lam)
                rows.append({"run": run, "lambda": lam, "method": method, "T": T,
                             "utility": U, "balance": F, "seconds": fit.seconds})
    return result_table(rows)


def semi_synthetic_experiment(data: LoggedData, problem: DecisionProblem, *,
                              sizes=(100, 300, 1000, 3000, 6000), lams=(0.0, 0.5, 1.0),
                              runs: int = 20, n_samples: int = 32, seed: int = 0
                              ) -> pd.DataFrame:
    """Truth = posterior-mean world of all rows; train on ``n`` draws from it; evaluate
    exactly on the truth. Methods: plug-in, Bayes, maximin, constant and the oracle."""
    truth = DirichletPosterior(PRIOR, FACTORIZATION).fit(data, problem).mean_world()
    oracle = {lam: optimize_policy(problem, truth, balance(), lam=lam / (1 + lam),
                                   group_blind=True).policy for lam in lams}
    rows = []
    for n in sizes:
        for run in range(runs):
            train = sample_logged_data(truth, problem, n,
                                       random_state=seed + 7919 * run + n)
            for lam in lams:
                fitted = fit_policies(train, problem, lam, n_samples=n_samples,
                                      random_state=seed + run,
                                      methods=("plug-in", "Bayes", "maximin", "constant"))
                fitted["oracle"] = Fitted(oracle[lam], 0.0)
                for method, fit in fitted.items():
                    T, U, F = objective_value(fit.policy, truth, problem, lam)
                    rows.append({"n": n, "run": run, "lambda": lam, "method": method,
                                 "T": T, "utility": U, "balance": F,
                                 "seconds": fit.seconds})
    return result_table(rows)
