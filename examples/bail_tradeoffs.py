"""Fair bail decisions on the synthetic bail problem: the three trade-offs.

Run with ``python examples/bail_tradeoffs.py``. Needs no data.
"""

import numpy as np

import fairdecide as fd
from fairdecide.datasets import make_bail_problem, sample_logged_data

problem, world = make_bail_problem()
print(problem)

# 1. The world is known: maximise utility, then add fairness.
best = fd.optimize_policy(problem, world)
print(best.summary(), "\n")

parity = fd.optimize_policy(problem, world, fd.Independence(), epsilon=0.05)
print(parity.summary(), "\n")
print("release probability by risk level and group:")
print(np.round(parity.policy.table[:, :, 1], 3), "\n")

# The three trade-offs of the book on the same criterion.
crit = fd.Separation()
for kw in ({"lam": 0.2}, {"epsilon": 0.1}, {"utility_slack": 0.01}):
    res = fd.optimize_policy(problem, world, crit, **kw)
    print(f"{res.tradeoff:55s} U = {res.utility:.4f}  F = {res.deviations['separation']:.4f}"
          f"  ({res.status})")

# Utility against tolerance: the price of fairness.
print("\nepsilon  U(independence)  U(separation)")
for eps in (0.0, 0.05, 0.1, 0.2, 0.4):
    u_ind = fd.optimize_policy(problem, world, fd.Independence(), epsilon=eps).utility
    u_sep = fd.optimize_policy(problem, world, fd.Separation(), epsilon=eps).utility
    print(f"{eps:7.2f}  {u_ind:15.4f}  {u_sep:13.4f}")

# 2. The world is unknown: learn it from logged decisions (maximum likelihood).
data = sample_logged_data(world, problem, 5000, random_state=0)
learned = fd.TabularWorld.from_data(data, problem, smoothing=0.5)
plug_in = fd.optimize_policy(problem, learned, fd.Independence(), epsilon=0.05)
print("\nplug-in policy (learned from 5000 logged decisions), evaluated in the true world:")
print(f"  utility {fd.expected_utility(plug_in.policy, world, problem):.4f} "
      f"(optimum {parity.utility:.4f}), independence "
      f"{fd.Independence().deviation(plug_in.policy, world, problem):.4f}")
print(fd.Independence().breakdown(plug_in.policy, world, problem))
