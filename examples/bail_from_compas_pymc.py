"""Bail decisions from logged COMPAS data with a Bayesian outcome model (pymc).

Run with ``FAIRDECIDE_DATA=/path/to/data python examples/bail_from_compas_pymc.py`` (a
folder holding compas-scores-two-years.csv[.gz]). Needs pymc (``pip install
"fairdecide[bayes]"``); without pymc or the data it says so and exits. About a minute
or two on a laptop.

Steps: a Bayesian multinomial-logistic model of reoffending given five features is
sampled with NUTS on half of the defendants; 20 posterior draws become the scenarios of
a belief about those defendants; a group-blind linear-softmax policy
pi(release | x) = softmax(W (x, 1)) is optimised under separation <= epsilon, for the
posterior mean of the trade-off's value ("mean") and for its worst scenario ("worst");
every policy then decides for the other half, where its utility and separation are
computed from the observed outcomes.
"""

import importlib.util
import sys
import time

import numpy as np
import pandas as pd

import fairdecide as fd
from fairdecide.datasets import DataNotFoundError, load_compas, make_bail_problem
from fairdecide.models import BayesianOutcomeModel

try:
    df = load_compas(download=False)
except DataNotFoundError:
    print("This example needs the COMPAS data, compas-scores-two-years.csv[.gz], which is "
          "not in\n$FAIRDECIDE_DATA or the download cache: set FAIRDECIDE_DATA to a folder "
          "holding it, or run\nfairdecide.datasets.load_compas() once to download it. "
          "Nothing else to do here.")
    sys.exit(0)
if importlib.util.find_spec("pymc") is None:
    print('This example samples a posterior with pymc, which is not installed: '
          'pip install "fairdecide[bayes]". Nothing else to do here.')
    sys.exit(0)

# ---------------------------------------------------------------- the decision problem
bail, _ = make_bail_problem()
U = bail.utility  # U(a, y) = a - y: release (a = 1) is worth 1, each offence costs 1
problem = fd.DecisionProblem(
    [[U[0, 0], U[0, 0]],   # detain: no offence, whatever the person would have done
     [U[1, 0], U[1, 2]]],  # release: 1 without a reoffence, 1 - 2 with one
    outcome_depends_on_action=False, action_labels=bail.action_labels,
    outcome_labels=[0, 1])
print(f"""The bail problem of make_bail_problem: detain or release; release is worth 1 and
each offence costs 1, U(a, y) = a - y, and a detained defendant commits none. COMPAS
records whether each defendant reoffended within two years of release (y = 1), not how
often; a reoffence costs 2 here, make_bail_problem's costliest outcome (at a cost of 1,
release would pay for everyone: 1 - P(reoffend) >= 0). So y is what the person would do
if released, the outcome does not depend on the action (a prediction problem), and
U = {problem.utility.tolist()} (rows detain, release; columns y = 0, 1): release
pays off exactly when P(reoffend | x) < 1/2.""")

# ---------------------------------------------------------------- data
df = df[df["race"].isin(["African-American", "Caucasian"])].reset_index(drop=True)
juvenile = df[["juv_fel_count", "juv_misd_count", "juv_other_count"]].sum(axis=1) > 0
features = pd.DataFrame({
    "age": df["age"], "log(1 + priors)": np.log1p(df["priors_count"]),
    "felony charge": (df["c_charge_degree"] == "F").astype(float),
    "juvenile record": juvenile.astype(float), "male": (df["sex"] == "Male").astype(float)})
y, z = df["two_year_recid"].to_numpy(), df["race"].to_numpy()
order = np.random.RandomState(0).permutation(len(df))
train, test = order[: len(df) // 2], order[len(df) // 2:]
mu, sd = features.iloc[train].mean(), features.iloc[train].std()
X = ((features - mu) / sd).to_numpy()  # standardised: the prior means the same for each
print(f"\n{len(df)} defendants (African-American or Caucasian; z = race, which neither "
      f"the outcome model\nnor the policy reads): {len(train)} to fit and optimise on, "
      f"{len(test)} held out.\nFeatures: {', '.join(features)}.")

# ---------------------------------------------------------------- the posterior
t0 = time.perf_counter()
model = BayesianOutcomeModel(prior_scale=2.5, draws=500, tune=500, chains=2)
model.fit(X[train], z[train], y[train], problem, random_state=0)
draws = model.coef_draws_[:, :, 1]  # logit P(reoffend) coefficients, (1000, 6)
print(f"\nNUTS, 2 chains x (500 tuning + 500 kept draws), {time.perf_counter() - t0:.0f} s; "
      f"max r-hat {model.rhat_max_:.3f}, min ESS {model.ess_min_:.0f}, "
      f"{model.n_divergent_} divergences.\nPosterior of logit P(reoffend | x) "
      "(standardised features):")
print(pd.DataFrame({"mean": draws.mean(axis=0), "sd": draws.std(axis=0)},
                   index=[*features, "intercept"]).round(3).to_string())

# ---------------------------------------------------------------- policies
held_out = fd.SampleWorld(X[test], z[test], np.eye(2)[y[test]])  # observed outcomes
separation = fd.Separation()
rows, results, free = [], [], {}
for aggregate in ("mean", "worst"):
    belief = model.belief(n_scenarios=20, aggregate=aggregate, random_state=1)
    for eps in (None, 0.1, 0.05):
        res = fd.optimize_policy(problem, belief, [] if eps is None else separation,
                                 epsilon=eps, policy=fd.LinearSoftmaxPolicy(),
                                 random_state=0, n_restarts=1)
        release = res.policy.action_proba(X[test])[:, 1]
        rates = {g: release[z[test] == g].mean() for g in ("African-American", "Caucasian")}
        f_train = (separation.deviation(res.policy, w, problem) for w in belief.worlds)
        rows.append({
            "belief": aggregate, "bound": "-" if eps is None else f"separation <= {eps}",
            "U (belief)": res.utility,
            "F (belief)": belief.combine_deviation(list(f_train)),
            "U held out": fd.expected_utility(problem, held_out, res.policy),
            "F held out": separation.deviation(res.policy, held_out, problem),
            "release AA": rates["African-American"], "release C": rates["Caucasian"]})
        results.append((aggregate, eps, res))
    free[aggregate] = fd.optimize_policy(problem, belief, separation, epsilon=0.05).utility

print("\nGroup-blind linear-softmax policies (U = expected utility per defendant, F = "
      "separation deviation;\n'belief' columns: mean or worst over the 20 posterior "
      "draws for the training half;\n'held out': from the observed outcomes of the "
      "other half; release AA / C: mean P(release)\nof the held-out African-American / "
      "Caucasian defendants):")
print(pd.DataFrame(rows).round(4).to_string(index=False))
classes = pd.crosstab(z[test], y[test]).to_numpy()
print(f"""
Separation asks for equal release rates across races among those who would reoffend and
among those who would not: F = sum_y sum_z sum_a |P(a | y, z) - P(a | y)|, 0 when it
holds; not a probability (it can exceed 1). Bounding it costs utility. "worst" plans for
the least favourable of the 20 draws, so its belief values are lower by construction;
held out, the two kinds of policy do about equally well. The held-out F differs from the
bound by sampling error (its race-outcome classes hold {classes.min()} to {classes.max()} people).
The best any policy can do for the training defendants under separation <= 0.05, one free
row per person (so it can act on race through the individual), is U = {free["mean"]:.4f}
(mean) and {free["worst"]:.4f} (worst): the price of deciding from five features alone.""")
for aggregate, eps, res in results:
    print(f"\n--- belief {aggregate}, " + ("no bound:" if eps is None
                                           else f"separation <= {eps}:"))
    print(res.summary())
