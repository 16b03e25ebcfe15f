"""Fair bail decisions on the synthetic bail problem: the three trade-offs.

Run with ``python examples/bail_tradeoffs.py``. Needs no data.
"""

import pandas as pd

import fairdecide as fd
from fairdecide.datasets import make_bail_problem, sample_logged_data

problem, world = make_bail_problem()
print(problem)
print("Detain or release a defendant of risk level x (risk 0 .. risk 4) in group z (group A,\n"
      "group B); y = new offences (0, 1, 2 = two or more). U(a, y) = a - y with a = 1 for\n"
      "release: the utility U is the expected value per defendant. The true world is known.\n"
      "A deviation F sums |P(t | c, z) - P(t | c)| over groups z, conditioning values c and\n"
      "target values t: 0 when the criterion holds; it is not a probability and can exceed 1.\n")

# 1. The world is known: maximise utility, then add fairness.
best = fd.optimize_policy(problem, world)
print(best.summary(), "\n")

parity = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.05)
print(parity.summary(), "\n")
release = pd.concat(
    {name: res.policy.to_frame(problem.action_labels)["release"].unstack("group")
     for name, res in (("unconstrained", best), ("independence <= 0.05", parity))}, axis=1)
print("Probability of release by risk level and group (detention has the rest):")
print(release.round(3).to_string(), "\n")

# The three trade-offs of the book on the same criterion, F = separation.
print("The book's three trade-offs with F = separation deviation (lam weights F against U;\n"
      "epsilon bounds F; utility_slack allows U to fall that far below the optimum U*):")
crit = fd.Separation()
for kw in ({"lam": 0.2}, {"epsilon": 0.1}, {"utility_slack": 0.01}):
    res = fd.optimize_policy(problem, world, crit, **kw)
    print(f"  {res.tradeoff:55s} U = {res.utility:.4f}  F = {res.deviations['separation']:.4f}"
          f"  ({res.status})")

# Utility against tolerance: the price of fairness.
print("\nThe price of fairness: the best utility U whose deviation is at most epsilon "
      f"(unconstrained U* = {best.utility:.4f}):")
print("epsilon  U(independence)  U(separation)")
for eps in (0.0, 0.05, 0.1, 0.2, 0.4):
    u_ind = fd.optimize_policy(problem, world, fd.Independence(), epsilon=eps).utility
    u_sep = fd.optimize_policy(problem, world, fd.Separation(), epsilon=eps).utility
    print(f"{eps:7.2f}  {u_ind:15.4f}  {u_sep:13.4f}")

# 2. The world is unknown: learn it from logged decisions (maximum likelihood).
data = sample_logged_data(problem, world, 5000, random_state=0)
learned = fd.TabularWorld.from_data(data, problem, smoothing=0.5)
plug_in = fd.optimize_policy(problem, learned, fd.Independence(), epsilon=0.05)
print("\nThe plug-in policy: optimised in the world learned from 5000 logged decisions\n"
      f"(there: utility {plug_in.utility:.4f}, independence "
      f"{plug_in.deviations['independence']:.4f}), evaluated in the true world:")
print(f"  utility {fd.expected_utility(problem, world, plug_in.policy):.4f} "
      f"(the true optimum under the same constraint: {parity.utility:.4f}), independence "
      f"{fd.Independence().deviation(plug_in.policy, world, problem):.4f}")
print("Its independence in the true world, term by term: P(action | group) (p_group)\n"
      "against the pooled P(action) (p_pooled); the deviation is the sum of |difference|\n"
      "(weight 1; mass = P(group)):")
print(fd.Independence().breakdown(plug_in.policy, world, problem).round(4)
      .to_string(index=False))
