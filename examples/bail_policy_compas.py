"""A fair bail policy learned from logged decisions: FairDecisionPolicy on COMPAS.

Run with ``FAIRDECIDE_DATA=/path/to/data python examples/bail_policy_compas.py`` (a
folder holding compas-scores-two-years.csv[.gz]); without it the file is downloaded
into the cache (and its checksum verified).

The book's bail problem: detain (a = 0) or release (a = 1); release is worth 1 and a
crime costs 2, so U(a, y) = a - 2 y with y = 1 when a released defendant reoffends
within two years; a detained defendant commits none (y = 0). The group is race
(African-American or Caucasian, as in the other COMPAS examples).

COMPAS did not decide bail, and the data record every defendant's two-year outcome. To
have logged decisions we simulate a judge who mostly follows the COMPAS decile score:
release with probability 0.85 below 5 and 0.25 from 5 up, recorded as propensities. The
log then shows each outcome only after release, as a real log would; a deterministic
rule ("detain from 5 up") would not do, since its log never shows what releasing a
high-score defendant brings, and no policy that does so could be evaluated. Because the
data do hold every outcome, the true value of any policy on the test rows can be
computed as well, which checks the off-policy estimates.
"""

import time

import numpy as np
import pandas as pd

import fairdecide as fd
from fairdecide.datasets import load_compas

t_start = time.perf_counter()
df = load_compas()
df = df[df["race"].isin(["African-American", "Caucasian"])].reset_index(drop=True)
juvenile = df[["juv_fel_count", "juv_misd_count", "juv_other_count"]].sum(axis=1) > 0
X = pd.DataFrame({
    "age": df["age"], "log(1 + priors)": np.log1p(df["priors_count"]),
    "felony charge": (df["c_charge_degree"] == "F").astype(float),
    "juvenile record": juvenile.astype(float), "male": (df["sex"] == "Male").astype(float),
    "decile score": df["decile_score"].astype(float)})
z = df["race"].to_numpy()
reoffends = df["two_year_recid"].to_numpy()  # what each would do if released

# ---------------------------------------------------------------- the logged decisions
rng = np.random.RandomState(0)
p_release = np.where(df["decile_score"] >= 5, 0.25, 0.85)  # the simulated judge
a = (rng.random_sample(len(df)) < p_release).astype(int)   # 1 = release
propensity = np.where(a == 1, p_release, 1 - p_release)    # pi_0(a_i | x_i)
y = np.where(a == 1, reoffends, 0)                          # the outcome the log shows
U = np.array([[0.0, -2.0],    # detain: y = 0 always (no crime)
              [1.0, -1.0]])   # release: 1, or 1 - 2 after a reoffence
order = rng.permutation(len(df))
train, test = order[: len(df) // 2], order[len(df) // 2:]
print(f"{len(df)} defendants: {len(train)} to learn from, {len(test)} to evaluate on.\n"
      f"Features: {', '.join(X)}.\nLogged: {a.mean():.1%} released; "
      f"{y[a == 1].mean():.1%} of those released reoffended.\nU = {U.tolist()} "
      "(rows detain, release; columns y = 0, 1).")

# ---------------------------------------------------------------- two policies
EPSILON = 0.05
policies = {}
for name, criteria, epsilon in (("unconstrained", None, None),
                                (f"independence <= {EPSILON}", "independence", EPSILON)):
    t0 = time.perf_counter()
    pol = fd.FairDecisionPolicy(utility=U, criteria=criteria, epsilon=epsilon,
                                max_iter=500, random_state=0)
    pol.fit(X.iloc[train], y[train], actions=a[train], sensitive_features=z[train],
            propensities=propensity[train])
    policies[name] = pol
    print(f"\n{name}: fitted in {time.perf_counter() - t0:.1f} s; in the estimated world "
          f"of the training rows\n{pol.result_.summary()}")

# ---------------------------------------------------------------- evaluation on test
X_te, y_te, a_te, z_te = X.iloc[test], y[test], a[test], z[test]
groups = ("African-American", "Caucasian")
rows = []
for name, pol in policies.items():
    t0 = time.perf_counter()
    table = pol.evaluate(X_te, y_te, actions=a_te, sensitive_features=z_te,
                         propensities=propensity[test], method="dr")
    print(f"\n{name}: evaluate() on the {len(test)} test rows (doubly robust value, "
          f"bias-corrected\ndeviation; 95% intervals; {time.perf_counter() - t0:.1f} s):")
    print(table.round(4).to_string())
    value = table.iloc[0]
    release = pol.predict_proba(X_te, sensitive_features=z_te)[:, 1]
    rates = [release[z_te == g].mean() for g in groups]
    rows.append({"policy": name, "value": f"{value['estimate']:.4f}",
                 "95% interval": f"[{value['lower']:.4f}, {value['upper']:.4f}]",
                 "true value": np.mean(release * (U[1, 0] + (U[1, 1] - U[1, 0])
                                                  * reoffends[test])),
                 "release AA": rates[0], "release C": rates[1],
                 "independence": 2 * abs(rates[0] - rates[1])})

# The logged decisions: on-policy, their value is the mean realised utility.
realised = U[a_te, y_te]
half = 1.96 * realised.std(ddof=1) / np.sqrt(len(test))
rates = [p_release[test][z_te == g].mean() for g in groups]
rows.append({"policy": "logged (simulated judge)", "value": f"{realised.mean():.4f}",
             "95% interval": f"[{realised.mean() - half:.4f}, {realised.mean() + half:.4f}]",
             "true value": np.mean(p_release[test] * (1 - 2 * reoffends[test])),
             "release AA": rates[0], "release C": rates[1],
             "independence": 2 * abs(rates[0] - rates[1])})
summary = pd.DataFrame(rows).round(4)
print("\nOn the test rows. value: the doubly robust estimate (for the logged decisions "
      "their mean\nrealised utility). true value, release rates and independence = 2 |release "
      "AA - release C|\nuse what the data hold beyond a log: every outcome, and the "
      "policies' probabilities.")
print(summary.to_string(index=False))

free, fair, logged = rows
print(f"""
In plain words: the simulated judge released {logged['release AA']:.0%} of African-American and \
{logged['release C']:.0%} of
Caucasian defendants and earned {logged['value']} per defendant. The policy learned under
independence <= {EPSILON} releases {fair['release AA']:.0%} and {fair['release C']:.0%}; \
its estimated value, {fair['value']} {fair['95% interval']},
lies above the judge's whole interval (the two barely touch; the true values, \
{fair['true value']:.4f}
against {logged['true value']:.4f}, confirm the gain). The unconstrained policy would earn \
{free['true value']:.4f} but release
at rates {100 * free['independence'] / 2:.0f} percentage points apart: fairness costs \
{free['true value'] - fair['true value']:.4f} per defendant here (true values).
evaluate() estimates the deviation from the logged rows by importance weighting, hence
its wide interval; independence reads only the policy's release rates, which the last
column computes exactly from its probabilities.""")
print(f"\nTotal run time {time.perf_counter() - t_start:.0f} s.")
