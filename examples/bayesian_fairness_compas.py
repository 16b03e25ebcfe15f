"""Bayesian fairness on COMPAS: plug-in, Bayesian, bootstrap and maximin policies.

One hold-out run of the experiment of Dimitrakakis et al., "Bayesian Fairness" (AAAI
2019), solved exactly as linear programs. The full protocol (10 runs, and the
semi-synthetic study) is ``benchmarks/bench_bayesian_fairness.py``.

Run with ``FAIRDECIDE_DATA=/path/to/data python examples/bayesian_fairness_compas.py``.
"""

import numpy as np

import fairdecide as fd
from fairdecide.experiments import bayesian_fairness as bf

data, problem = bf.compas_data()
order = np.random.default_rng(0).permutation(data.n)
train, test = data.subset(order[:6000]), data.subset(order[6000:])
print(f"{data}; training on {train.n}, evaluating on the posterior mean of {test.n}")
print(
    f"x = {data.n_x} observed combinations of age, charge degree, juvenile and prior counts;\n"
    f"z = sex x race ({data.n_z} groups); y = reoffended within two years. The policies\n"
    "predict y from x only (group-blind). U = accuracy; F = balance, separation with each\n"
    "group's term weighted by P(z | y): sum_y sum_z P(z | y) sum_a |P(a | y, z) - P(a | y)|;\n"
    "the objective is the papers' T = U - lambda F, solved as the library's (1 - lam) U - lam F\n"
    "with lam = lambda / (1 + lambda). Beliefs about the world after the training rows:\n"
    "plug-in = the posterior mean world; Bayes = the mean over 32 posterior draws;\n"
    "bootstrap = the mean over 32 bootstrap worlds; maximin = the worst of the densest 90%\n"
    f"of 32 draws. Each policy's T is then measured in the world estimated from the other\n"
    f"{test.n} people (the posterior mean), beside the best constant prediction (balance 0)."
)
# Small groups can be absent from the 1214 test rows: their prior speaks for them.
test_world = fd.DirichletPosterior(0.5, "papers", allow_empty_groups=True).fit(
    test, problem).mean_world()

# The belief about the world after seeing the training data.
posterior = fd.DirichletPosterior(prior=0.5, factorization="papers").fit(train, problem)
beliefs = {
    "plug-in": fd.Belief.plug_in(posterior.mean_world()),
    "Bayes": fd.Belief.from_posterior(posterior, n_scenarios=32, random_state=1),
    "bootstrap": fd.Belief.from_bootstrap(train, problem, 32, smoothing=0.5,
                                          factorization="papers", random_state=2),
    "maximin": fd.Belief.highest_density_draws(posterior, delta=0.1, n_scenarios=32,
                                               random_state=3),
}
balance = bf.balance()
majority = np.bincount(train.outcome_codes(problem), minlength=2).argmax()
constant = fd.TabularPolicy.for_world(test_world, np.eye(2)[majority])
for lam in bf.LAMS:  # the library's mixture weight; the papers' lambda = lam / (1 - lam)
    print(f"\nT = U - {bf.papers_lambda(lam):g} F (balance, P(z|y)-weighted; lam = "
          f"{lam:.3g}), group-blind policies:")
    for name, belief in beliefs.items():
        res = fd.optimize_policy(problem, belief, balance, lam=lam, group_blind=True)
        T, U, F = bf.objective_value(res.policy, test_world, problem, lam)
        print(f"  {name:9s} test T = {T:.4f} (accuracy {U:.4f}, balance {F:.4f}); "
              f"solved in {res.stats['solve_seconds']:.2f} s")
    T, U, F = bf.objective_value(constant, test_world, problem, lam)
    print(f"  {'constant':9s} test T = {T:.4f} (accuracy {U:.4f}, balance {F:.4f}): "
          f"predicts y = {majority} for everyone")
print("\nOne random split: differences of a hundredth in T between methods change from split\n"
      "to split (10 splits: benchmarks/results/bayesian_fairness.txt). A balance of 0 with\n"
      "the constant's accuracy means the optimum is the constant prediction itself.")

# How uncertain is the Bayes policy's fairness? Its balance across posterior draws:
res = fd.optimize_policy(problem, beliefs["Bayes"], balance, lam=bf.lam_of(0.5),
                         group_blind=True)
print("\nThe Bayes policy for lambda = 0.5 (lam = 1/3): its utility (accuracy) and balance\n"
      "across the 32 posterior draws it was optimised on; the spread is the uncertainty\n"
      "about the world:")
print(fd.evaluate_under_belief(problem, beliefs["Bayes"], res.policy, balance)
      .summary().round(4).to_string())
# A chance constraint: balance above 0.05 with posterior probability at most 10% (CVaR).
chance = fd.optimize_policy(problem, beliefs["Bayes"], balance, epsilon=0.05,
                            chance_delta=0.1, group_blind=True)
print(f"\nmax accuracy s.t. CVaR_0.9(balance) <= 0.05: {chance.utility:.4f}\n"
      "(the mean accuracy over the draws, with the mean balance of the worst 10% of draws\n"
      "at most 0.05: fair with high posterior probability, not just on average)")
