"""Figures of fair decisions: Pareto frontiers of the plug-in, Bayesian and maximin
policies, group rates of optimal policies, and calibration by group of a fair classifier.

Run with ``python examples/pareto_frontier_plot.py``; needs no data, and matplotlib
(``pip install "fairdecide[plot]"``). The PNG files go to the folder named by the
environment variable FAIRDECIDE_FIGURES (default: the current directory).

On make_bail_problem (detain or release; U(a, y) = a - y, y = new offences; the true
world is known) we log 2000 decisions taken at random, fit a Dirichlet posterior to
them, and trace the frontier U*(epsilon) = max E[U] subject to independence <= epsilon
for three treatments of the unknown world: the plug-in (maximum-likelihood) world, the
Bayesian mean over 32 posterior draws, and the worst case over a 90% confidence set of
them; the true world's frontier is drawn for reference. Each frontier is measured in
its own world or belief, so the Bayes and maximin curves are posterior means and worst
cases, not true values; the crosses show what the plug-in policies really do.
"""

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import fairdecide as fd
from fairdecide.datasets import make_bail_problem, sample_logged_data
from fairdecide.plot import (
    GroupCalibrationDisplay,
    GroupRatesDisplay,
    ParetoFrontierDisplay,
)

out = Path(os.environ.get("FAIRDECIDE_FIGURES", "."))
out.mkdir(parents=True, exist_ok=True)
DPI = 100


def save(figure, name):
    path = out / name
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(figure)
    print(f"saved {path}")


# ---------------------------------------------------------------- 1. frontiers
problem, world = make_bail_problem()
data = sample_logged_data(problem, world, 2000, random_state=0)
plug_in = fd.TabularWorld.from_data(data, problem, smoothing=0.5)
posterior = fd.DirichletPosterior(prior=1.0).fit(data, problem)
bayes = fd.Belief.from_posterior(posterior, 32, random_state=0)
maximin = fd.Belief.highest_density_draws(posterior, delta=0.1, n_scenarios=32, random_state=0)
independence = fd.Independence()
epsilons = [0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3]
frontiers = {name: fd.pareto_frontier(problem, w, independence, epsilons)
             for name, w in (("true world", world), ("plug-in", plug_in),
                             ("Bayes (mean)", bayes), ("maximin (worst)", maximin))}
print("Frontiers of the bail problem under independence, each in its own world or belief "
      "(2000 logged\ndecisions; utility = expected value per defendant):")
table = frontiers["true world"][["epsilon"]].copy()
for name, frame in frontiers.items():
    table[name] = frame["utility"].round(4)
print(table.to_string(index=False))

plugin_results = [fd.optimize_policy(problem, plug_in, independence, epsilon=e)
                  for e in epsilons]
true_u = [fd.expected_utility(problem, world, r.policy) for r in plugin_results]
true_dev = [independence.deviation(r.policy, world, problem) for r in plugin_results]
print("\nThe plug-in policies in the true world (what they really deliver):")
for e, u, d in zip(epsilons, true_u, true_dev, strict=True):
    print(f"  epsilon {e:4.2f}: utility {u:.4f}, independence {d:.4f}")

display = ParetoFrontierDisplay.from_frontier(frontiers, criterion="independence")
display.add_points(true_u, true_dev, label="plug-in policies, true world")
fig, ax = plt.subplots(figsize=(6.4, 4.4))
display.plot(ax=ax)
ax.set_title("Bail: utility against independence (2000 logged decisions)")
save(fig, "pareto_frontier.png")

# ---------------------------------------------------------------- 2. group rates
free = fd.optimize_policy(problem, plug_in)
fair = plugin_results[epsilons.index(0.05)]
fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.4), sharey=True)
print("\nP(release | group) in the true world, plug-in policies:")
for ax, (name, res) in zip(axes, (("unconstrained", free),
                                  ("independence <= 0.05", fair)), strict=True):
    rates = GroupRatesDisplay.from_result(res, world, problem, kind="action").plot(ax=ax)
    ax.set_title(name)
    release = rates.rates_[rates.rates_["action"] == "release"]
    print(f"  {name:21s} " + ", ".join(
        f"{g}: {r:.4f}" for g, r in zip(release["group"], release["rate"], strict=True)))
save(fig, "group_rates.png")

# ---------------------------------------------------------------- 3. calibration
rng = np.random.RandomState(0)
n = 2000
g = rng.randint(2, size=n)
z = np.array(["group A", "group B"])[g]
X = np.c_[rng.normal(size=n) + g, rng.normal(size=n)]
y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n) > 0.5).astype(int)
fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.6), sharey=True)
for ax, (name, crit, eps) in zip(axes, (("unconstrained", None, None),
                                        ("independence <= 0.02", "independence", 0.02)),
                                 strict=True):
    clf = fd.FairPolicyClassifier(criteria=crit, epsilon=eps, random_state=0)
    clf.fit(X, y, sensitive_features=z)
    GroupCalibrationDisplay.from_estimator(clf, X, y, sensitive_features=z,
                                           n_bins=5).plot(ax=ax)
    ax.set_title(f"FairPolicyClassifier, {name}", fontsize="medium")
save(fig, "group_calibration.png")
print("(the classifier's P(decide 1) read as a prediction of y, by group: under "
      "independence the\ngroups' curves part, since equal decision rates need different "
      "thresholds)")

# ---------------------------------------------------------------- predict vs the policy
tab = fd.FairPolicyClassifier(policy="tabular", epsilon=0.02).fit(X, y, sensitive_features=z)
p = tab.predict_proba(X, sensitive_features=z)[:, 1]
hard = tab.predict(X, sensitive_features=z)


def dp(v):
    return abs(v[g == 0].mean() - v[g == 1].mean())


print(f"\nA tabular FairPolicyClassifier, independence <= 0.02 (a DP difference <= 0.01), "
      f"on the same\n{n} people: in-sample DP difference of the randomised policy "
      f"(predict_proba) {dp(p):.4f},\nof its argmax (predict) {dp(hard.astype(float)):.4f}; "
      f"accuracy {tab.score(X, y, sensitive_features=z):.4f} against "
      f"{np.mean(hard == y):.4f}.")
