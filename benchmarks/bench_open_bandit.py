"""Real logs evaluated against the truth: the Open Bandit Dataset (issue 40, item 7).

ZOZOTOWN logged the same week of November 2019 twice: 10,000 impressions under a uniform
random policy and 10,000 under Bernoulli Thompson sampling (BTS), 80 items x 3 positions,
with true propensities. The BTS policy's click rate is estimated from the random log
alone by every estimator of ``fairdecide.evaluation.evaluate_policy``, overall and per
``user_feature_0`` group, and compared with what BTS achieved: its own log's click rate
(the ground truth, itself a binomial estimate with a standard error).

The evaluation policy. The BTS propensities are not fixed per (item, position) in this
sample (BTS updated its posterior during the week), so the BTS policy is read off its
own log as action frequencies: per position and day (the main policy; it follows BTS's
drift) and, as a sensitivity check, per position over the whole week. Neither reads the
user: BTS chose items per position whoever looked (checked below: item frequencies do not
differ between the two large user groups, chi-square per position).

Coverage is counted two ways, against the truth's point value (does the 95% interval
contain it?) and allowing for the truth's own noise (is |estimate - truth| within 1.96
combined standard errors?). Two bootstrap protocols (their statement is printed with the
results): A resamples the random log's rows (the truth and the policy fixed); B resamples
both logs independently (the truth and the policy recomputed from each BTS resample).

"bayes" is the library's default Bayesian estimate for a tabular policy (exact Dirichlet
posterior per cell, each prior of mass 0.5 * K centred on its action's pooled outcome
frequencies); "bayes-bb" is the same call with the policy given as a function of the
logged features, which takes the Bayesian bootstrap of the pooled cell model.

Open Bandit Pipeline's own DM, IPS, SNIPS and DR are run on the same inputs in the same
run where ``obp`` imports (it needs torch): ``pip install torch==2.13.0`` (a CPU wheel)
then ``pip install --no-deps sb-obp`` (its declared pins, numpy < 2 and pandas < 3, would
downgrade this environment; the estimators run without them). Otherwise that part is
skipped with the reason printed.

Usage::

    FAIRDECIDE_DATA=../shared/data python benchmarks/bench_open_bandit.py \
        --out benchmarks/results/open_bandit.txt          # 200 resamples per protocol
    python benchmarks/bench_open_bandit.py --quick --out /tmp/obd.txt   # seconds (CI)
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from _provenance import provenance
from scipy import stats

from fairdecide import TabularWorld
from fairdecide.datasets import load_open_bandit
from fairdecide.evaluation import evaluate_policy, evaluate_policy_by_group
from fairdecide.exceptions import FairdecideError

FEATURES = {"position x day": ["position", "day"], "position (week)": ["position"]}
MAIN = "position x day"
WEIGHTING = ("dm", "ips", "snips", "dr")
Z95 = float(stats.norm.ppf(0.975))


def group_names(obd) -> dict:
    """user_feature_0 values named A, B, C by their number of BTS impressions."""
    sizes = obd.bts["user_feature_0"].value_counts()
    return {label: "ABC"[i] for i, label in enumerate(sizes.index)}


def on_features(policy, data):
    """``policy`` (group-blind, tabular) as a function of the features
    ``BanditData.from_logged(data)`` gives (one-hot cell, then one-hot group): passed so,
    ``evaluate_policy(..., "bayes")`` takes its Bayesian-bootstrap route."""
    rows = np.array([policy.x_labels.index(c) for c in data.x_labels])
    table = policy.table[rows, 0]
    n_x = data.n_x
    return lambda X: table[np.argmax(X[:, :n_x], axis=1)]


def estimate_all(data, policy, problem, names: dict, *, bayes_draws: int | None,
                 seed: int = 0, groups: bool = True) -> dict:
    """{(estimator, group): ValueEstimate}: dm, ips, snips, dr by evaluate_policy_by_group
    (group "all" is its overall value); bayes and bayes-bb by evaluate_policy on all rows
    and on each group's rows (``bayes_draws`` None: no Bayesian estimates), or the
    error's message where the estimator refuses the rows."""
    out = {}
    for est in WEIGHTING:
        res = evaluate_policy_by_group(problem, data, policy, est, random_state=seed)
        out[est, "all"] = res.overall
        if groups:
            for g, value in res.groups.items():
                out[est, names[g]] = value
    if bayes_draws is None:
        return out
    parts = [("all", data)]
    if groups:
        parts += [(names[label], data.subset(np.flatnonzero(data.z == g)))
                  for g, label in enumerate(data.group_labels) if np.any(data.z == g)]
    for group, part in parts:
        for name, pol in (("bayes", policy), ("bayes-bb", on_features(policy, part))):
            try:
                out[name, group] = evaluate_policy(problem, part, pol, "bayes",
                                                   n_draws=bayes_draws, random_state=seed)
            except FairdecideError as exc:  # e.g. items never shown to a small group
                out[name, group] = str(exc)
    return out


def truth_table(obd, names: dict) -> pd.DataFrame:
    t = obd.on_policy_value("bts")
    t["group"] = [g if g == "all" else names[g] for g in t["group"]]
    return t.set_index("group")


def judge(value: float, low: float, high: float, se: float, truth: float,
          truth_se: float) -> dict:
    """Does the interval cover the truth's point value; how many combined standard
    errors apart are they, and is that within 1.96."""
    z = (value - truth) / np.hypot(se, truth_se) if np.hypot(se, truth_se) > 0 else (
        0.0 if value == truth else np.inf)
    return {"covers": bool(low <= truth <= high), "z": float(z),
            "within": bool(abs(z) <= Z95)}


def full_sample(obd, problem, names, truth, bayes_draws, out):
    """Every estimator on the whole random log, for both evaluation policies."""
    rows, refused = [], []
    for policy_name, features in FEATURES.items():
        data = obd.logged_data("random", features)
        policy = obd.logged_policy("bts", features)
        main = policy_name == MAIN
        t0 = time.perf_counter()
        est = estimate_all(data, policy, problem, names, groups=main,
                           bayes_draws=bayes_draws if main else None)
        seconds = time.perf_counter() - t0
        for (name, group), e in est.items():
            if isinstance(e, str):
                refused.append(f"  {policy_name} / {name} / group {group}: {e}")
                continue
            low, high = e.confidence_interval(0.95)
            rows.append({"policy": policy_name, "estimator": name, "group": group,
                         "value": e.value, "se": e.std_error, "low": low, "high": high,
                         "truth": truth.loc[group, "value"],
                         **judge(e.value, low, high, e.std_error, truth.loc[group, "value"],
                                 truth.loc[group, "std_error"])})
        out.append(f"({policy_name}: {len(est)} estimates in {seconds:.1f} s)")
    if refused:
        out.append("estimates the library refused (no number):\n" + "\n".join(refused))
    return pd.DataFrame(rows)


def bootstrap(obd, problem, names, truth, full, reps, bayes_draws, seed, both):
    """Protocol A (``both`` False): resample the random log; B: both logs."""
    features = FEATURES[MAIN]
    data = obd.logged_data("random", features)
    policy = obd.logged_policy("bts", features)
    rng = np.random.RandomState(seed)
    rows = []
    for b in range(reps):
        if b % 20 == 0 and reps >= 20:  # progress of a long run
            print(f"protocol {'B' if both else 'A'}: resample {b} of {reps}", file=sys.stderr)
        sub = data.subset(rng.randint(0, data.n, data.n))
        t_b = truth
        pol = policy
        if both:
            obd_b = replace(obd, bts=obd.bts.iloc[rng.randint(0, len(obd.bts), len(obd.bts))])
            pol = obd_b.logged_policy("bts", features)
            t_b = truth_table(obd_b, names)
        est = estimate_all(sub, pol, problem, names, seed=b,
                           bayes_draws=None if both else bayes_draws)
        for (name, group), e in est.items():
            if isinstance(e, str) or (name.startswith("bayes") and group != "all"):
                continue  # Bayesian estimates in the bootstrap: overall only (cost)
            low, high = e.confidence_interval(0.95)
            ref = full.loc[(name, group), "value"]
            rows.append({"rep": b, "estimator": name, "group": group, "value": e.value,
                         "se": e.std_error, "own": bool(low <= ref <= high),
                         **judge(e.value, low, high, e.std_error, t_b.loc[group, "value"],
                                 t_b.loc[group, "std_error"])})
    df = pd.DataFrame(rows)
    summary = df.groupby(["estimator", "group"], sort=False).agg(
        reps=("rep", "size"), mean=("value", "mean"), sd=("value", "std"),
        mean_se=("se", "mean"), covers_truth=("covers", "mean"),
        within_combined=("within", "mean"), covers_own=("own", "mean"))
    summary.insert(2, "bias", summary["mean"] - [truth.loc[g, "value"]
                                                  for _, g in summary.index])
    return summary


def obp_part(obd, problem, features, seed, out) -> None:
    """OBP's DM, IPS, SNIPS, DR on the inputs ours take, beside ours, in this run."""
    try:
        from obp import ope
        from obp.version import __version__ as obp_version
    except Exception as exc:  # any import failure (obp, torch, their pins): skip, say why
        out.append(f"Open Bandit Pipeline: skipped, `from obp import ope` failed "
                   f"({type(exc).__name__}: {exc}). To run it: pip install torch==2.13.0 "
                   "&& pip install --no-deps sb-obp")
        return
    from sklearn.linear_model import LogisticRegression

    data = obd.logged_data("random", features)
    policy = obd.logged_policy("bts", features)
    log = obd.random
    n = data.n
    pos = log["position"].to_numpy() - 1
    action = data.action_codes(problem)
    reward = log["click"].to_numpy().astype(float)
    pscore = log["propensity_score"].to_numpy()
    # The evaluation policy at every position of each row's day: (n, 80, 3).
    index = {c: i for i, c in enumerate(policy.x_labels)}
    other = [f for f in features if f != "position"]
    keys = log[other].itertuples(index=False, name=None) if other else [()] * n
    keys = list(keys)
    cells = np.array([[index[(k + 1, *key) if other else k + 1] for k in range(3)]
                      for key in keys])
    action_dist = np.transpose(policy.table[cells, 0], (0, 2, 1))
    # One outcome model for both libraries: the maximum-likelihood world of the random log
    # (per cell, group and item), P(click | item, cell, group), at every position.
    world = TabularWorld.from_data(data, problem)
    x_of = {c: i for i, c in enumerate(data.x_labels)}
    wcells = np.array([[x_of[(k + 1, *key) if other else k + 1] for k in range(3)]
                       for key in keys])
    q_world = np.transpose(world.p_y[wcells, data.z[:, None], :, 1], (0, 2, 1))
    # OBP's own regression: logistic per position on one-hot group and day + one-hot item.
    context = np.column_stack([np.eye(data.n_z)[data.z],
                               np.eye(7)[log["day"].to_numpy()]])
    t0 = time.perf_counter()
    q_obp = ope.RegressionModel(n_actions=problem.n_actions, len_list=3,
                                base_model=LogisticRegression(max_iter=1000)).fit_predict(
        context=context, action=action, reward=reward, pscore=pscore, position=pos,
        n_folds=3, random_state=seed)
    fit_s = time.perf_counter() - t0
    common = {"reward": reward, "action": action, "position": pos, "pscore": pscore,
              "action_dist": action_dist}
    obp_est = {
        "dm": (ope.DirectMethod(), {"position": pos, "action_dist": action_dist}),
        "ips": (ope.InverseProbabilityWeighting(), common),
        "snips": (ope.SelfNormalizedInverseProbabilityWeighting(), common),
        "dr": (ope.DoublyRobust(), common),
    }
    rows = []
    for name, (estimator, kwargs) in obp_est.items():
        for q_name, q in ([("world", q_world), ("obp-lr", q_obp)] if name in ("dm", "dr")
                          else [("-", None)]):
            kw = dict(kwargs)
            if q is not None:
                kw["estimated_rewards_by_reg_model"] = q
            t0 = time.perf_counter()
            v = float(estimator.estimate_policy_value(**kw))
            sec = time.perf_counter() - t0
            ci = estimator.estimate_interval(**kw, alpha=0.05, n_bootstrap_samples=1000,
                                             random_state=seed)
            lo, hi = (ci[k] for k in ci if "lower" in k), (ci[k] for k in ci if "upper" in k)
            row = {"estimator": name, "q": q_name, "obp": v, "obp_low": next(lo),
                   "obp_high": next(hi), "obp_s": sec}
            if q_name != "obp-lr":
                t0 = time.perf_counter()
                ours = evaluate_policy(problem, data, policy, name, random_state=seed,
                                       outcome_model=world if q is not None else None)
                row["ours_s"] = time.perf_counter() - t0
                lo2, hi2 = ours.confidence_interval(0.95)
                row.update({"ours": ours.value, "ours_low": lo2, "ours_high": hi2,
                            "abs_diff": abs(ours.value - v)})
            rows.append(row)
    table = pd.DataFrame(rows)
    truth = obd.on_policy_value("bts")["value"].iloc[0]
    table["obp_covers"] = (table["obp_low"] <= truth) & (truth <= table["obp_high"])
    table["ours_covers"] = [None if pd.isna(lo) else bool(lo <= truth <= hi)
                            for lo, hi in zip(table["ours_low"], table["ours_high"],
                                              strict=True)]
    out += [
        f"Open Bandit Pipeline {obp_version} on the same inputs (policy {MAIN}): rewards, "
        "items, positions, propensities and the evaluation policy's probabilities at every "
        "position (n, 80, 3); for DM and DR the same outcome model q: the random log's "
        "maximum-likelihood world (per cell, group and item; ours takes it as "
        "outcome_model=world, not cross-fitted). Ours: normal 95% intervals; OBP: "
        "percentile bootstrap (1000 resamples of its per-row terms). obp-lr: OBP's own "
        f"RegressionModel (logistic per position on one-hot group, day and item, 3 folds; "
        f"fit {fit_s:.1f} s), no fairdecide counterpart.",
        table.to_string(index=False, float_format=lambda v: f"{v:.6g}", na_rep="-"),
        f"largest |ours - OBP| on identical inputs: {table['abs_diff'].max():.2e}; "
        f"covers: the interval holds the truth's point value {truth:.5f}",
    ]


def bayes_note(obd, features) -> str:
    """How little data each (cell, group, item) has, and why the centre of "bayes"'s
    prior matters there."""
    data = obd.logged_data("random", features)
    counts = np.zeros((data.n_x, data.n_z, 80))
    np.add.at(counts, (data.x, data.z, data.a), 1)
    seen = counts[counts > 0]
    k = float(np.median(seen))
    return (f"bayes: a Dirichlet posterior per (cell, group, item), its prior of mass 1 "
            "centred on the item's click rate pooled over the cells (itself shrunk towards the "
            "rate over all items): "
            f"{int((counts == 0).sum())} of {counts.size} such cells have no random-log row "
            f"and the others a median of {k:.0f} rows, so the prior's centre decides the "
            "estimate (centred on 0.5, as before issue 40, it read 0.148 against a click "
            "rate near 0.004). bayes-bb is the pooled cell model's Bayesian bootstrap, as "
            "dm")


def data_facts(obd, names) -> list[str]:
    """What the data are, and the checks behind the choice of evaluation policy."""
    r, b = obd.random, obd.bts
    pair = b.groupby(["item_id", "position"])["propensity_score"]
    distinct = pair.nunique()
    top = b.groupby(["item_id", "position"]).size().idxmax()
    top_p = pair.get_group(top)
    lines = [
        f"random log: {len(r)} impressions, {r['click'].sum()} clicks, propensity 1/80 on "
        f"every row: {bool(np.allclose(r['propensity_score'], 1 / 80))}; BTS log: "
        f"{len(b)} impressions, {b['click'].sum()} clicks; both {r['timestamp'].min():%Y-%m-%d}"
        f" to {r['timestamp'].max():%Y-%m-%d} (UTC)",
        f"BTS propensities per (item, position): {int((distinct > 1).sum())} of "
        f"{len(distinct)} pairs take more than one value (up to {int(distinct.max())}); the "
        f"most logged pair, item {top[0]} at position {top[1]} ({len(top_p)} rows), ranges "
        f"{top_p.min():.4f} to {top_p.max():.4f}: not a fixed policy, so it is read off "
        "the log as action frequencies",
    ]
    big = [g for g, n in names.items() if n in "AB"]
    ps = []
    for p in (1, 2, 3):
        s = b[(b["position"] == p) & b["user_feature_0"].isin(big)]
        ps.append(stats.chi2_contingency(pd.crosstab(s["item_id"],
                                                     s["user_feature_0"]))[1])
    lines.append("BTS does not read the user: item frequencies of groups A and B, "
                 "chi-square p per position " + ", ".join(f"{p:.2f}" for p in ps))
    daily = pd.crosstab(b["day"], b["item_id"] == top[0], normalize="index")[True]
    lines.append(f"BTS drifts: item {top[0]}'s share of the day's impressions, days 0-6: "
                 + " ".join(f"{v:.3f}" for v in daily))
    lines.append("groups (user_feature_0): " + "; ".join(
        f"{n} = {g[:8]}... ({int((b['user_feature_0'] == g).sum())} BTS, "
        f"{int((r['user_feature_0'] == g).sum())} random rows)" for g, n in names.items()))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="2 resamples per protocol, 20 posterior draws (CI)")
    parser.add_argument("--reps", type=int, default=None, help="resamples per protocol")
    parser.add_argument("--draws", type=int, default=None,
                        help="posterior draws of the Bayesian estimates")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).parent / "results" / "open_bandit.txt")
    args = parser.parse_args()
    reps = args.reps if args.reps is not None else (2 if args.quick else 200)
    draws = args.draws if args.draws is not None else (20 if args.quick else 200)
    boot_draws = min(draws, 100)
    warnings.simplefilter("ignore")  # overlap warnings: the effective sample sizes are
    # printed by the estimates' own columns where they matter

    start = time.perf_counter()
    obd = load_open_bandit(args.data_home)
    problem = obd.problem
    names = group_names(obd)
    truth = truth_table(obd, names)
    out = provenance("Open Bandit Dataset: BTS's click rate estimated from the random log "
                     "against BTS's own log", "bench_open_bandit.py",
                     f"; {reps} resamples per protocol, {draws} posterior draws "
                     f"({boot_draws} in the resamples)")
    out += ["", "## The data", *data_facts(obd, names), "",
            "## The truth: the BTS log's own click rate (binomial standard error)",
            truth.to_string(float_format=lambda v: f"{v:.5f}"), ""]

    out.append("## Estimates on the whole random log (95% intervals; covers: the interval "
               "holds the truth's point value; z: (estimate - truth) / sqrt(se^2 + "
               "truth_se^2); within: |z| <= 1.96)")
    full = full_sample(obd, problem, names, truth, draws, out)
    out.append(full.to_string(index=False, float_format=lambda v: f"{v:.5f}"))
    misses = full[~full["covers"]]
    out.append(f"intervals that miss the truth's point value: {len(misses)} of {len(full)}"
               + "".join(f"\n  {r.policy} / {r.estimator} / group {r.group}: [{r.low:.5f}, "
                         f"{r.high:.5f}] vs {r.truth:.5f}, z {r.z:+.2f}"
                         for r in misses.itertuples()))
    out.append(f"differences beyond 1.96 combined se: {int((~full['within']).sum())} of "
               f"{len(full)}")
    out.append(bayes_note(obd, FEATURES[MAIN]))
    out.append("")

    full_main = full[full["policy"] == MAIN].set_index(["estimator", "group"])
    for label, both in (("A", False), ("B", True)):
        t0 = time.perf_counter()
        summary = bootstrap(obd, problem, names, truth, full_main, reps, boot_draws,
                            args.seed + (1 if both else 0), both)
        what = ("the random log's rows resampled with replacement (10,000 each), the "
                "truth and the policy fixed; every estimator re-run on each resample, "
                "Bayesian ones overall only" if not both else
                "both logs resampled independently; the policy (BTS frequencies per "
                "position and day) and the truth recomputed from each BTS resample, and "
                "coverage counted against that resample's truth; dm, ips, snips, dr")
        out += [f"## Bootstrap protocol {label}: {what} ({reps} resamples, "
                f"{time.perf_counter() - t0:.0f} s)",
                "bias: mean estimate minus the (full-sample) truth; sd: of the estimates; "
                "mean_se: mean reported standard error; covers_truth: share of 95% intervals "
                "holding the truth's point value; within_combined: share with |estimate - "
                "truth| <= 1.96 sqrt(se^2 + truth_se^2); covers_own: share holding the "
                "estimator's own whole-log value (the interval's calibration)",
                summary.to_string(float_format=lambda v: f"{v:.5f}"), ""]

    obp_part(obd, problem, FEATURES[MAIN], args.seed, out)
    out.append(f"\ntotal {time.perf_counter() - start:.0f} s")
    text = "\n".join(out) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
